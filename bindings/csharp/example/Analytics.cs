// What a run spent: budget utilization, kind diversity, timestamp coverage.
using System;
using System.Globalization;
using Cupel;

static class AnalyticsExample
{
    static void Main()
    {
        using (var items = new Items())
        using (var budget = new Budget(1000, 800))
        using (var pipeline = Pipeline.Preset("Chat"))
        using (var report = new Report())
        {
            items.PushMany(new long[] { 200, 300, 250, 150 }, new[] { 1.0, 1.0, 1.0, 1.0 },
                new[] { "SystemPrompt", "Document", "Message", "message" });
            items.SetContents(0, new[] { "system", "doc", "question", "answer" });
            items.SetTimestamp(2, 1000);
            items.SetTimestamp(3, 2000);
            pipeline.Run(items, budget, report);

            Console.WriteLine("included " + report.SelectedTokens + " of " + report.EffectiveMaxTokens + " tokens");
            Console.WriteLine("budget utilization " + report.BudgetUtilization.ToString("0.00", CultureInfo.InvariantCulture));
            Console.WriteLine("kind diversity     " + report.KindDiversity(items));
            Console.WriteLine("timestamp coverage " + report.TimestampCoverage(items).ToString("0.00", CultureInfo.InvariantCulture));
        }
    }
}
