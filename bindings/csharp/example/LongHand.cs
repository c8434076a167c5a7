// The long-hand calls: items, a budget and slicers, chosen item by item.
using System;
using Cupel;

static class LongHand
{
    static void Main()
    {
        using (var items = new Items())
        using (var budget = new Budget(1000, 1000))
        using (var knapsack = Slicer.Knapsack(10))
        using (var report = new Report())
        {
            // tokens, relevance score and kind of each candidate
            items.PushMany(
                new long[] { 120, 400, 350, 80, 300, 60 },
                new[] { 0.95, 0.80, 0.75, 0.60, 0.40, 0.30 },
                new[] { "SystemPrompt", "Document", "Document", "Message", "ToolOutput", "Message" });
            items.SetContent(1, "the retrieved passage");

            int[] chosen = knapsack.Slice(items, budget, 0, report);
            Console.WriteLine("knapsack chose [" + string.Join(" ", chosen) + "] using "
                + report.SelectedTokens + " tokens");
            foreach (var d in report.Excluded)
                Console.WriteLine("  item " + d.Index + ": " + d.Reason.Name());

            // Any item reads back whole; absent attributes are null.
            Item item = items[1];
            Console.WriteLine("item 1: " + item.Tokens + " tokens, " + item.Kind + ", \"" + item.Content
                + "\", timestamp " + (item.Timestamp == null ? "none" : item.Timestamp.ToString()));

            // With 1500 tokens: at least one message, at most one document.
            using (var roomy = new Budget(1500, 1500))
            using (var greedy = Slicer.Greedy())
            using (var counted = Slicer.CountQuota(greedy, new[] {
                new CountQuota("Message", 1, 10), new CountQuota("Document", 0, 1) }, Scarcity.Degrade))
            {
                chosen = counted.Slice(items, roomy, 0, report);
                Console.WriteLine("count quota chose [" + string.Join(" ", chosen) + "] and capped out ["
                    + string.Join(" ", report.CapExcluded) + "]");
            }

            // Caller mistakes are ArgumentExceptions naming the C# parameter.
            try
            {
                new Budget(100, 200);
            }
            catch (CupelArgumentException e)
            {
                Console.WriteLine(e.Message);
            }
            try
            {
                items.SetContent(-1, "x");
            }
            catch (ArgumentOutOfRangeException e)
            {
                Console.WriteLine(e.GetType().Name + " for " + e.ParamName);
            }
        }
    }
}
