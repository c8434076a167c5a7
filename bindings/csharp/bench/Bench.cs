// The binding benchmark in C# (see bindings/bench/bench_c.c): push the items
// with the bulk setters and run the pipeline, median of 25.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using Cupel;

static class Bench
{
    static int Main(string[] args)
    {
        var lines = File.ReadAllLines(args[0]);
        int n = lines.Length;
        var tokens = new long[n]; var scores = new double[n]; var kinds = new string[n];
        var ts = new long[n]; var pinned = new bool[n]; var contents = new string[n];
        for (int i = 0; i < n; i++)
        {
            var f = lines[i].Split(' ');
            tokens[i] = long.Parse(f[0]); scores[i] = double.Parse(f[1], CultureInfo.InvariantCulture); kinds[i] = f[2];
            ts[i] = long.Parse(f[3]); pinned[i] = f[4] == "1"; contents[i] = f[5];
        }
        using (var recency = Scorer.Recency())
        using (var kind = Scorer.Kind())
        using (var blend = Scorer.Composite(new KeyValuePair<Scorer, double>(recency, 1), new KeyValuePair<Scorer, double>(kind, 1)))
        using (var greedy = Slicer.Greedy())
        using (var chrono = Placer.Chronological())
        using (var p = new Pipeline(blend, greedy, chrono, true, Overflow.Proceed))
        using (var budget = new Budget(200000, 128000))
        {
            var times = new double[25];
            int placed = 0;
            for (int r = 0; r < times.Length; r++)
            {
                var sw = Stopwatch.StartNew();
                using (var items = new Items())
                {
                    items.PushMany(tokens, scores, kinds);
                    items.SetContents(0, contents);
                    items.SetTimestamps(0, ts);
                    items.SetPinnedMany(0, pinned);
                    placed = p.Run(items, budget).Length;
                }
                times[r] = sw.Elapsed.TotalMilliseconds;
            }
            Array.Sort(times);
            Console.WriteLine("C#: " + times[12].ToString("F3", CultureInfo.InvariantCulture) + " ms (placed " + placed + ")");
        }
        return 0;
    }
}
