// The presets: the .NET Cupel presets and libcupel's AgentLoop, by name.
using System;
using Cupel;

static class PresetsExample
{
    static void Main()
    {
        using (var items = new Items())
        using (var budget = new Budget(400, 400))
        {
            items.PushMany(new long[] { 100, 150, 120, 80, 100 }, new[] { 1.0, 1.0, 1.0, 1.0, 1.0 },
                new[] { "SystemPrompt", "Document", "ToolOutput", "Message", "Message" });
            items.SetContents(0, new[] { "system", "spec", "test log", "question", "answer" });
            items.SetTimestamps(0, new long[] { 0, 1, 2, 3, 4 });
            items.SetPriorities(0, new long[] { 0, 1, 5, 2, 3 });
            items.SetRelevanceHints(0, new[] { 0.1, 0.9, 0.4, 0.6, 0.2 });

            foreach (string name in Pipeline.PresetNames)
                using (var preset = Pipeline.Preset(name))
                    Console.WriteLine(name.PadRight(12) + " placed [" + string.Join(" ", preset.Run(items, budget)) + "]");
        }
        try
        {
            Pipeline.Preset("Chatbot");
        }
        catch (CupelArgumentException e)
        {
            Console.WriteLine(e.Message.Split('\n')[0]);
        }
    }
}
