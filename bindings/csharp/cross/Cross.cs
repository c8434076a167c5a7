// Cross-binding check driver for the C# binding: reads the cases
// tests/common/cross.rs writes and prints one result line per case.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text;
using Cupel;

static class Cross
{
    static Queue<string> Split(string line) { return new Queue<string>(line.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries)); }
    static double F(Queue<string> t) { return double.Parse(t.Dequeue(), CultureInfo.InvariantCulture); }
    static long L(Queue<string> t) { return long.Parse(t.Dequeue(), CultureInfo.InvariantCulture); }

    static Scorer MakeScorer(Queue<string> t)
    {
        var name = t.Dequeue();
        switch (name)
        {
            case "recency": return Scorer.Recency();
            case "priority": return Scorer.Priority();
            case "frequency": return Scorer.Frequency();
            case "reflexive": return Scorer.Reflexive();
            case "given": return Scorer.Given();
            case "kind":
            case "tag":
            {
                var n = L(t);
                if (n < 0) return Scorer.Kind();
                var w = new Dictionary<string, double>();
                for (int i = 0; i < n; i++) { var k = t.Dequeue(); w[k] = F(t); }
                return name == "kind" ? Scorer.Kind(w) : Scorer.Tag(w);
            }
            case "composite":
            {
                var n = L(t);
                var parts = new KeyValuePair<Scorer, double>[n];
                for (int i = 0; i < n; i++) { var w = F(t); parts[i] = new KeyValuePair<Scorer, double>(MakeScorer(t), w); }
                var c = Scorer.Composite(parts);
                foreach (var p in parts) p.Key.Dispose();
                return c;
            }
            case "scaled":
            {
                using (var inner = MakeScorer(t)) return Scorer.Scaled(inner);
            }
            case "trust": return Scorer.MetadataTrust(F(t));
            case "key": { var k = t.Dequeue(); var v = t.Dequeue(); return Scorer.MetadataKey(k, v, F(t)); }
            default:
            {
                var curve = (DecayCurve)L(t);
                var duration = F(t);
                var nul = F(t);
                var reference = L(t);
                var n = L(t);
                var w = new KeyValuePair<double, double>[n];
                for (int i = 0; i < n; i++) { var a = F(t); w[i] = new KeyValuePair<double, double>(a, F(t)); }
                return Scorer.Decay(curve, duration, w, reference, nul);
            }
        }
    }

    static CountQuota[] Counts(Queue<string> t)
    {
        var e = new CountQuota[L(t)];
        for (int i = 0; i < e.Length; i++) { var k = t.Dequeue(); var r = (uint)L(t); e[i] = new CountQuota(k, r, (uint)L(t)); }
        return e;
    }

    static Slicer MakeSlicer(Queue<string> t)
    {
        var name = t.Dequeue();
        using (var g = Slicer.Greedy())
        {
            switch (name)
            {
                case "greedy": return Slicer.Greedy();
                case "knapsack": return Slicer.Knapsack(L(t));
                case "quota":
                {
                    var q = new Quota[L(t)];
                    for (int i = 0; i < q.Length; i++) { var k = t.Dequeue(); var r = F(t); q[i] = new Quota(k, r, F(t)); }
                    return Slicer.Quota(g, q);
                }
                case "countquota": return Slicer.CountQuota(g, Counts(t), Scarcity.Degrade);
                default: { var b = L(t); return Slicer.CountConstrainedKnapsack(b, Counts(t), Scarcity.Degrade); }
            }
        }
    }

    static int Main(string[] args)
    {
        var lines = File.ReadAllLines(args[0]);
        var output = new StringBuilder();
        for (int li = 0; li < lines.Length; li++)
        {
            if (lines[li] != "case") continue;
            var b = Split(lines[++li]); b.Dequeue();
            var st = Split(lines[++li]); st.Dequeue();
            var sl = Split(lines[++li]); sl.Dequeue();
            int n = int.Parse(lines[++li].Substring(6));
            using (var scorer = MakeScorer(st))
            using (var slicer = MakeSlicer(sl))
            using (var items = new Items())
            {
                for (int i = 0; i < n; i++)
                {
                    var t = Split(lines[++li]);
                    var tokens = L(t);
                    items.Push(tokens, 0, t.Dequeue());
                    if (t.Dequeue() == "1") items.SetPinned(i, true);
                    items.SetGroup(i, ulong.Parse(t.Dequeue()));
                    var ts = t.Dequeue(); if (ts != "-") items.SetTimestamp(i, long.Parse(ts));
                    var pr = t.Dequeue(); if (pr != "-") items.SetPriority(i, long.Parse(pr));
                    var hi = t.Dequeue(); if (hi != "-") items.SetRelevanceHint(i, double.Parse(hi, CultureInfo.InvariantCulture));
                    for (var k = L(t); k > 0; k--) items.AddTag(i, t.Dequeue());
                    for (var k = L(t); k > 0; k--) { var key = t.Dequeue(); items.SetMetadata(i, key, t.Dequeue()); }
                    var hex = t.Dequeue();
                    var bytes = new byte[hex.Length / 2];
                    for (int j = 0; j < bytes.Length; j++) bytes[j] = Convert.ToByte(hex.Substring(2 * j, 2), 16);
                    items.SetContent(i, Encoding.UTF8.GetString(bytes));
                }
                li++; // end
                var bv = b.ToArray();
                using (var budget = new Budget(long.Parse(bv[0]), long.Parse(bv[1])))
                using (var placer = bv[5] == "u" ? Placer.UShaped() : Placer.Chronological())
                using (var report = new Report())
                {
                    budget.SetOutputReserve(long.Parse(bv[2]));
                    using (var p = new Pipeline(scorer, slicer, placer, bv[3] == "1", (Overflow)int.Parse(bv[4])))
                    {
                        try
                        {
                            var placed = p.Run(items, budget, report);
                            output.Append('P');
                            foreach (var i in placed) output.Append(' ').Append(i);
                            output.Append("|I");
                            foreach (var d in report.Included) output.Append(' ').Append(d.Index).Append(':').Append((int)d.Reason);
                            output.Append("|E");
                            foreach (var d in report.Excluded) output.Append(' ').Append(d.Index).Append(':').Append((int)d.Reason);
                            output.Append('\n');
                        }
                        catch (Exception e) when (e is ICupelError)
                        {
                            output.Append("error ").Append((int)((ICupelError)e).Status).Append('\n');
                        }
                    }
                }
            }
        }
        Console.Write(output.ToString());
        return 0;
    }
}
