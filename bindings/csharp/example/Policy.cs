// A policy kept as data: read from JSON (the .NET Cupel policy format, so a
// settings file written for a .NET host works here), run, and written back.
using System;
using Cupel;

static class PolicyExample
{
    static void Main()
    {
        const string policy = @"{
  ""name"": ""support"",
  ""scorers"": [
    { ""type"": ""recency"", ""weight"": 2 },
    { ""type"": ""kind"", ""weight"": 1, ""kindWeights"": { ""SystemPrompt"": 1, ""Document"": 0.8, ""Message"": 0.3 } }
  ],
  ""slicerType"": ""knapsack"",
  ""knapsackBucketSize"": 10,
  ""placerType"": ""chronological""
}";
        const string budgetJson = @"{ ""maxTokens"": 600, ""targetTokens"": 500, ""outputReserve"": 100 }";

        using (var pipeline = Pipeline.FromJson(policy))
        using (var budget = Budget.FromJson(budgetJson))
        using (var items = new Items())
        {
            items.PushMany(new long[] { 120, 300, 90, 150, 60 }, new[] { 1.0, 1.0, 1.0, 1.0, 1.0 },
                new[] { "SystemPrompt", "Document", "Message", "Document", "Message" });
            items.SetContents(0, new[] { "system", "design doc", "question", "runbook", "follow-up" });
            items.SetTimestamps(0, new long[] { 0, 1, 2, 3, 4 });
            Console.WriteLine("placed [" + string.Join(" ", pipeline.Run(items, budget)) + "]");

            // Every setting, written so that reading it back selects the same.
            Console.WriteLine(pipeline.ToJson());
            Console.WriteLine(budget.ToJson());
        }

        // A broken rule names its JSON path.
        try
        {
            Pipeline.FromJson(@"{ ""scorers"": [ { ""type"": ""recency"", ""weight"": -1 } ] }");
        }
        catch (CupelArgumentException e)
        {
            Console.WriteLine(e.Message.Split('\n')[0]);
        }
    }
}
