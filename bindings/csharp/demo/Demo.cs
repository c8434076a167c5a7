// The C demo's pipeline (examples/demo.c) in C#, on the same bundled data:
// 0.6 x the retriever's score + 0.25 x recency + 0.15 x kind weight,
// deduplication, GreedySlice, chronological placement, max 8192 tokens with
// 1024 kept for the answer and a 4096 target; tool calls and their outputs
// in keep-together groups. Prints the same "placed:" line as the C demo.
using System;
using System.Collections.Generic;
using System.IO;
using Cupel;

static class Demo
{
    static int Main(string[] args)
    {
        var lines = File.ReadAllLines(args.Length > 0 ? args[0] : "examples/data/rag_candidates.csv");
        int n = lines.Length - 1; // kind,tokens,score,timestamp,pinned,group,title
        var tokens = new long[n];
        var scores = new double[n];
        var kinds = new string[n];
        var titles = new string[n];
        var pinned = new bool[n];
        var groups = new ulong[n];
        var stamps = new List<KeyValuePair<int, long>>();
        for (int i = 0; i < n; i++)
        {
            var f = lines[i + 1].Split(new[] { ',' }, 7);
            kinds[i] = f[0];
            tokens[i] = long.Parse(f[1]);
            scores[i] = double.Parse(f[2], System.Globalization.CultureInfo.InvariantCulture);
            if (f[3].Length > 0) stamps.Add(new KeyValuePair<int, long>(i, long.Parse(f[3])));
            pinned[i] = f[4] == "1";
            groups[i] = ulong.Parse(f[5]);
            titles[i] = f[6];
        }
        using (var items = new Items())
        using (var given = Scorer.Given())
        using (var recency = Scorer.Recency())
        using (var kind = Scorer.Kind())
        using (var blend = Scorer.Composite(new KeyValuePair<Scorer, double>(given, 0.6),
                   new KeyValuePair<Scorer, double>(recency, 0.25), new KeyValuePair<Scorer, double>(kind, 0.15)))
        using (var greedy = Slicer.Greedy())
        using (var chrono = Placer.Chronological())
        using (var pipeline = new Pipeline(blend, greedy, chrono))
        using (var budget = new Budget(8192, 4096))
        using (var report = new Report())
        {
            items.PushMany(tokens, scores, kinds);
            items.SetContents(0, titles);
            foreach (var s in stamps) items.SetTimestamp(s.Key, s.Value);
            items.SetPinnedMany(0, pinned);
            items.SetGroups(0, groups);
            budget.SetOutputReserve(1024);
            var placed = pipeline.Run(items, budget, report);
            Console.WriteLine("placed: " + string.Join(" ", placed));
            Console.WriteLine(placed.Length + " of " + n + " items; " + report.Excluded.Length + " left out");
        }
        return 0;
    }
}
