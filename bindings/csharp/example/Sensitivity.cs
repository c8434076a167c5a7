// Which items a change of policy moves in or out: two policies on the same
// items and budget, each run's report, and the items they disagree on.
using System;
using System.Collections.Generic;
using Cupel;

static class SensitivityExample
{
    static void Main()
    {
        using (var items = new Items())
        using (var budget = new Budget(300, 300))
        using (var chat = Pipeline.Preset("Chat"))
        using (var rag = Pipeline.Preset("Rag"))
        {
            items.PushMany(new long[] { 100, 100, 100, 100 }, new[] { 1.0, 1.0, 1.0, 1.0 },
                new[] { "Document", "Document", "Message", "Message" });
            // Two copies of one text: deduplication keeps one, Chat the newer
            // and Rag the more relevant. By content the two policies agree;
            // items are matched by index, so the diffs show both copies.
            items.SetContents(0, new[] { "the runbook", "the runbook", "old question", "new question" });
            items.SetTimestamps(0, new long[] { 1, 2, 3, 4 });
            items.SetRelevanceHints(0, new[] { 0.9, 0.8, 0.1, 0.2 });

            var result = PolicySensitivity.Compare(new[] {
                new KeyValuePair<string, Pipeline>("chat", chat),
                new KeyValuePair<string, Pipeline>("rag", rag),
            }, items, budget);
            foreach (SensitivityVariant v in result.Variants)
            {
                var kept = new List<string>();
                foreach (ReportEntry e in v.Report.Included) kept.Add(e.Content);
                Console.WriteLine(v.Label + ": " + string.Join(", ", kept));
            }
            foreach (SensitivityDiff d in result.Diffs)
                Console.WriteLine("item " + d.Index + " (" + d.Content + "): " +
                    (d.IncludedBy("chat") ? "chat" : "rag") + " only");
        }
    }
}
