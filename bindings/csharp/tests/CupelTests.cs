// Tests of the C# binding, run under Mono by ../test.sh. A tiny runner (no
// NUnit on a bare Mono install): each test is a method; the last line of
// output is "N passed, N failed" and the exit status is 1 on any failure.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using Cupel;

static class CupelTests
{
    static void Equal<T>(IEnumerable<T> got, params T[] want)
    {
        var g = got.ToArray();
        if (!g.SequenceEqual(want))
            throw new Exception("got [" + string.Join(", ", g) + "], want [" + string.Join(", ", want) + "]");
    }

    static void True(bool cond, string what)
    {
        if (!cond) throw new Exception("expected: " + what);
    }

    static void Throws(Action a, Status status, string fragment)
    {
        try
        {
            a();
        }
        catch (Exception e) when (e is ICupelError)
        {
            var err = (ICupelError)e;
            bool callerMistake = status == Status.InvalidArgument || status == Status.NullPointer;
            if (callerMistake != (e is ArgumentException))
                throw new Exception(e.GetType().Name + " for " + status + ": caller mistakes are ArgumentExceptions");
            if (err.Status != status) throw new Exception("status " + err.Status + ", want " + status + ": " + e.Message);
            if (!e.Message.Contains(fragment)) throw new Exception("message '" + e.Message + "' lacks '" + fragment + "'");
            return;
        }
        throw new Exception("expected " + status + ", got success");
    }

    static Items MakeItems(long[] tokens, double[] scores, string[] kinds = null)
    {
        var it = new Items();
        it.PushMany(tokens, scores, kinds);
        return it;
    }

    static void Version()
    {
        True(Library.AbiVersion == 1, "ABI version 1");
        True(Library.Version.Length > 0, "a version string");
        True(Library.StatusName(Status.Capacity) == "CUPEL_ERROR_CAPACITY", "status names");
    }

    static void GreedyDensity()
    {
        using (var it = MakeItems(new long[] { 400, 100, 100, 200 }, new[] { 0.9, 0.7, 0.5, 0.1 }))
        using (var g = Slicer.Greedy())
        using (var b = new Budget(300, 300))
        using (var r = new Report())
        {
            Equal(g.Slice(it, b, 0, r), 1, 2);
            True(r.SelectedTokens == 200 && r.EffectiveTargetTokens == 300, "report figures");
        }
    }

    static void KnapsackAndCapacity()
    {
        using (var it = MakeItems(new long[] { 250, 150, 150 }, new[] { 0.7, 0.5, 0.45 }))
        using (var k = Slicer.Knapsack(100))
        using (var huge = Slicer.Knapsack(1))
        {
            Equal(k.Slice(it, new Budget(300, 300)), 0);
            True(k.MemoryLimit == 1UL << 30, "default memory limit 1 GiB");
            huge.MemoryLimit = 1 << 20;
            Throws(() => huge.Slice(it, new Budget(1L << 40, 1L << 40)), Status.Capacity, "memory limit of 1048576 bytes");
            Throws(() => Slicer.Knapsack(0), Status.InvalidArgument, "bucket_size");
        }
    }

    static void Quotas()
    {
        var it = MakeItems(new long[] { 200, 200, 300, 300, 200 }, new[] { 0.9, 0.5, 0.8, 0.3, 0.7 },
            new[] { "SystemPrompt", "SystemPrompt", "Message", "Message", "Document" });
        var g = Slicer.Greedy();
        var q = Slicer.Quota(g, new[] { new Quota("SystemPrompt", 30, 50), new Quota("Message", 0, 40) });
        g.Dispose(); // the quota slicer keeps its own copy
        var r = new Report();
        Equal(q.Slice(it, new Budget(1000, 1000), 0, r), 0, 1, 2);
        True(r.SelectedTokens == 700, "700 tokens");
        Throws(() => Slicer.Quota(null, new Quota[0]), Status.NullPointer, "inner");
        Throws(() => Slicer.Quota(Slicer.Greedy(), new[] { new Quota("A", 60, 100), new Quota("B", 60, 100) }),
            Status.InvalidArgument, "");
    }

    static void CountQuotas()
    {
        var it = MakeItems(new long[] { 100, 100, 100, 100 }, new[] { 0.9, 0.7, 0.5, 0.4 },
            new[] { "tool", "tool", "tool", "tool" });
        var g = Slicer.Greedy();
        var r = new Report();
        var cq = Slicer.CountQuota(g, new[] { new CountQuota("tool", 2, 2) }, Scarcity.Degrade);
        Equal(cq.Slice(it, new Budget(1000, 1000), 0, r), 0, 1);
        Equal(r.CapExcluded, 2, 3);

        var one = MakeItems(new long[] { 100 }, new[] { 0.9 }, new[] { "tool" });
        var deg = Slicer.CountQuota(g, new[] { new CountQuota("TOOL", 3, 5), new CountQuota("Memory", 1, 2) }, Scarcity.Degrade);
        Equal(deg.Slice(one, new Budget(1000, 1000), 0, r), 0);
        Equal(r.Shortfalls.Select(s => s.ToString()), "TOOL: 1 of 3", "Memory: 0 of 1");
        var strict = Slicer.CountQuota(g, new[] { new CountQuota("TOOL", 3, 5) }, Scarcity.Error);
        Throws(() => strict.Slice(one, new Budget(1000, 1000)), Status.Scarcity, "kind \"TOOL\": 1 items available, require_count is 3");
        Throws(() => Slicer.CountQuota(Slicer.Knapsack(1), new CountQuota[0], Scarcity.Degrade), Status.Unsupported, "KnapsackSlice");
        Throws(() => Slicer.CountQuota(g, new CountQuota[0], (Scarcity)7), Status.InvalidArgument, "scarcity");
    }

    static void CountConstrainedKnapsack()
    {
        var it = MakeItems(new long[] { 100, 100, 50, 150, 200 }, new[] { 0.9, 0.7, 0.8, 0.6, 0.4 },
            new[] { "tool", "tool", "msg", "msg", "msg" });
        var cck = Slicer.CountConstrainedKnapsack(1, new[] { new CountQuota("tool", 2, 2) }, Scarcity.Degrade);
        Equal(cck.Slice(it, new Budget(1000, 1000)), 0, 1, 2, 3, 4);
    }

    static void BudgetRules()
    {
        var b = new Budget(1000, 800);
        b.SetOutputReserve(100);
        b.SetSafetyMargin(10);
        b.Reserve("System", 50);
        long max, target;
        b.Effective(0, out max, out target);
        True(max > 0 && target <= max && target <= 800, "effective budget in range");
        Throws(() => new Budget(10, 20), Status.InvalidArgument, "target_tokens 20 > max_tokens 10");
        Throws(() => b.SetSafetyMargin(double.NaN), Status.InvalidArgument, "NaN");
        Throws(() => b.Reserve(" ", 5), Status.InvalidArgument, "kind");
    }

    static void ItemErrorsAreAtomic()
    {
        var it = new Items();
        Throws(() => it.PushMany(new long[] { 1, 2, 3 }, new[] { 0.1, 0.2, double.NaN }), Status.InvalidArgument, "scores[2]");
        Throws(() => it.PushMany(new long[] { 1, 2 }, new[] { 0.1, 0.2 }, new[] { "a", "" }), Status.InvalidArgument, "kinds[1]");
        Throws(() => it.PushMany(new long[] { 1 }, new[] { 0.1, 0.2 }), Status.InvalidArgument, "lengths");
        True(it.Count == 0, "failed pushes add nothing");
        it.Push(5, 0.5, "Doc \u00e9\u4e2d"); // UTF-8 kinds
        True(it.Count == 1, "one item");
        it.Push(-1, 0.5); // accepted; never selected
        True(it.Count == 2, "a negative token count is accepted");
        it.Clear();
        True(it.Count == 0, "cleared");
    }

    static void PackedColumnsCarryUtf8()
    {
        // ASCII entries first, then others: the packer starts on its ASCII
        // path and must switch to UTF-8 for the whole column.
        using (var it = new Items())
        using (var kind = Scorer.Kind())
        using (var greedy = Slicer.Greedy())
        using (var chrono = Placer.Chronological())
        using (var p = new Pipeline(kind, greedy, chrono))
        using (var r = new Report())
        {
            it.PushMany(new long[] { 10, 10, 10 }, new[] { 0.5, 0.5, 0.5 }, new[] { "Message", "Doc \u00e9\u4e2d", null });
            it.SetContents(0, new[] { "plain", "caf\u00e9 \u4e2d \U0001F600", null });
            True(p.Run(it, new Budget(1000, 1000), r).Length == 3, "all three placed");
            var json = r.Json(it);
            True(json.Contains("\"kind\":\"Doc \u00e9\u4e2d\""), "non-ASCII kind: " + json);
            True(json.Contains("\"content\":\"caf\u00e9 \u4e2d \U0001F600\""), "non-ASCII content: " + json);
            True(json.Contains("\"content\":\"plain\""), "ASCII content: " + json);
            True(json.Split(new[] { "\"content\":" }, StringSplitOptions.None).Length == 3, "a null content stays unset: " + json);
        }
    }

    static void ScratchBuffersCarryNothingOver()
    {
        // Bulk calls reuse per-thread buffers: a small call after a large one
        // must see only its own columns and indices.
        using (var greedy = Slicer.Greedy())
        using (var p = new Pipeline(null, greedy, null, false))
        using (var budget = new Budget(1000, 1000))
        {
            for (int round = 0; round < 3; round++)
            {
                int n = 50;
                var tokens = new long[n]; var scores = new double[n]; var kinds = new string[n];
                var contents = new string[n]; var pinned = new bool[n];
                for (int i = 0; i < n; i++) { tokens[i] = 1; scores[i] = 0.5; kinds[i] = "Memory"; contents[i] = "old content " + i; pinned[i] = true; }
                using (var big = new Items())
                {
                    big.PushMany(tokens, scores, kinds);
                    big.SetContents(0, contents);
                    big.SetPinnedMany(0, pinned);
                    True(p.Run(big, budget).Length == n, "all 50 placed");
                }
                using (var small = new Items())
                using (var r = new Report())
                {
                    small.PushMany(new long[] { 10, 20 }, new[] { 0.9, 0.1 }, new[] { "Message", "Tool" });
                    small.SetContents(0, new[] { "a", null });
                    small.SetPinnedMany(0, new[] { false, true });
                    var placed = p.Run(small, budget, r);
                    True(placed.Length == 2, "two placed, not " + placed.Length);
                    foreach (var d in r.Included)
                        True((d.Reason == Reason.Pinned) == (d.Index == 1), "only item 1 pinned: item " + d.Index + " " + d.Reason);
                    var json = r.Json(small);
                    True(!json.Contains("Memory") && !json.Contains("old content"), "stale column: " + json);
                    True(json.Split(new[] { "\"content\":" }, StringSplitOptions.None).Length == 2, "one content: " + json);
                }
            }
        }
    }

    static void PlaceAndTokensOverBudget()
    {
        const long day = 86400000;
        using (var it = MakeItems(new long[] { 50, 100, 100, 100 }, new double[4]))
        using (var chrono = Placer.Chronological())
        using (var u = Placer.UShaped())
        {
            it.SetTimestamps(0, new[] { 0, day, 2 * day, 3 * day });
            it.SetPinned(0, true);
            // Timestamps 3, 1 and 0 days; scores 0.1, 0.9, 0.5.
            Equal(chrono.Place(it, new[] { 3, 1, 0 }, new[] { 0.1, 0.9, 0.5 }), 0, 1, 3);
            Equal(u.Place(it, new[] { 3, 1, 0 }, new[] { 0.1, 0.9, 0.5 }), 1, 3, 0);
            True(u.Place(it, new int[0], new double[0]).Length == 0, "nothing to place");
            Throws(() => u.Place(it, new[] { 1, 2 }, new[] { 0.5 }), Status.InvalidArgument, "2 indices and 1 scores");
            Throws(() => u.Place(it, new[] { -1 }, new[] { 0.5 }), Status.InvalidArgument, "indices[0] is -1");
            Throws(() => u.Place(it, new[] { 99 }, new[] { 0.5 }), Status.InvalidArgument, "99");
            using (var greedy = Slicer.Greedy())
            using (var p = new Pipeline(null, greedy, null, true, Overflow.Proceed))
            using (var r = new Report())
            {
                Equal(p.Run(it, new Budget(1000, 40), r), 0);
                True(r.TokensOverBudget == 10, "the pinned 50 over a target of 40: " + r.TokensOverBudget);
                p.Run(it, new Budget(1000, 1000), r);
                True(r.TokensOverBudget == 0, "within the target: " + r.TokensOverBudget);
            }
        }
    }

    static void DisposedHandlesThrow()
    {
        var it = MakeItems(new long[] { 1 }, new[] { 1.0 });
        it.Dispose();
        it.Dispose(); // idempotent
        try
        {
            Slicer.Greedy().Slice(it, new Budget(10, 10));
            throw new Exception("expected ObjectDisposedException");
        }
        catch (ObjectDisposedException) { }
    }

    static void Simulation()
    {
        var it = MakeItems(new long[] { 100, 100, 100 }, new[] { 0.9, 0.8, 0.7 });
        var g = Slicer.Greedy();
        var b = new Budget(300, 300);
        Equal(g.MarginalItems(it, b, 0, 100), 2);
        True(g.FindMinBudget(it, 0, 2, 1000) == 300, "min budget 300");
        True(g.FindMinBudget(it, 0, 2, 250) == null, "not reachable below 300: null");
        var q = Slicer.Quota(g, new[] { new Quota("Message", 0, 100) });
        Throws(() => q.MarginalItems(it, b, 0, 10), Status.Unsupported, "QuotaSlice");
        Throws(() => g.FindMinBudget(it, 0, 9, 1000), Status.InvalidArgument, "9");
    }

    static void Streams()
    {
        using (var s = new Cupel.Stream(250, 2))
        {
            s.Push(100, 0.2);
            s.Push(100, 0.9);
            s.Push(100, 0.5);
            s.Push(100, 0.6);
            s.Push(5, 1.0);
            Equal(s.Finish(), 1, 0, 4);
            Throws(() => s.Push(1, 1), Status.InvalidArgument, "finished");
        }
        using (var exact = new Cupel.Stream(100, 1))
            True(exact.Push(100, 0.5), "an exactly spent budget reports full");
    }

    static void Groups()
    {
        // A tool call (10, 0.9) and its result (200, 0.1) in group 7.
        var it = MakeItems(new long[] { 10, 200, 60 }, new[] { 0.9, 0.1, 0.5 });
        it.SetGroups(0, new ulong[] { 7, 7 });
        var g = Slicer.Greedy();
        Equal(g.Slice(it, new Budget(100, 100)), 2);
        Equal(g.Slice(it, new Budget(270, 270)), 2, 0, 1);
        it.SetGroup(1, 0); // ungrouped, the call alone fits
        Equal(g.Slice(it, new Budget(100, 100)), 0, 2);
        Throws(() => it.SetGroup(3, 1), Status.InvalidArgument, "index 3 is out of range");
        Throws(() => it.SetGroups(2, new ulong[] { 1, 1 }), Status.InvalidArgument, "past the end");
        using (var s = new Cupel.Stream(100, 2))
        {
            s.PushGrouped(30, 0.5, 5);
            s.PushGrouped(30, 0.5, 5);
            s.PushGrouped(50, 0.5, 0);
            s.PushGrouped(40, 0.5, 0);
            Throws(() => s.PushGrouped(1, 0.1, 5), Status.InvalidArgument, "which ended before item 4");
            Equal(s.Finish(), 0, 1, 3);
        }
    }

    static void PipelineAndReport()
    {
        const long day = 86400000;
        var it = MakeItems(new long[] { 50, 100, 100, 100, 100, -3, 5000 }, new double[7],
            new[] { "SystemPrompt", "Message", "Message", "ToolOutput", "Message", "Message", "Document" });
        it.SetContents(0, new[] { "You are helpful.", "hello", "how are you", "ls output", "hello", "broken", "a huge file" });
        it.SetTimestamps(0, new[] { 0, day, 2 * day, 3 * day, 4 * day });
        it.SetPinnedMany(0, new[] { true });
        it.SetPriority(3, 4);
        it.AddTag(3, "auth");
        it.SetMetadata(3, "cupel:trust", "0.9");
        it.SetSource(6, "Docs");
        using (var recency = Scorer.Recency())
        using (var kind = Scorer.Kind())
        using (var blend = Scorer.Composite(new KeyValuePair<Scorer, double>(recency, 2), new KeyValuePair<Scorer, double>(kind, 1)))
        using (var chrono = Placer.Chronological())
        using (var p = new Pipeline(blend, Slicer.Greedy(), chrono))
        using (var r = new Report())
        {
            var placed = p.Run(it, new Budget(1000, 300), r);
            True(placed.Length > 0 && placed[0] == 0, "the pinned, oldest item first");
            True(r.Included.Length == placed.Length && r.Included[0].Reason == Reason.Pinned, "included");
            var why = new Dictionary<int, Decision>();
            foreach (var d in r.Excluded) why[d.Index] = d;
            True(why[1].Reason == Reason.Deduplicated && why[1].Related == 4, "deduplicated against 4");
            True(why[5].Reason == Reason.NegativeTokens, "negative tokens");
            True(why[6].Reason == Reason.BudgetExceeded && why[6].ItemTokens == 5000, "over budget");
            True(r.TotalCandidates == 7, "7 candidates");
            True(r.Json(it).Contains("\"total_candidates\":7"), "json");
        }
        using (var plain = new Pipeline(null, Slicer.Greedy(), null, deduplication: false, overflow: Overflow.Throw))
            Throws(() => plain.Run(it, new Budget(40, 40)), Status.InvalidArgument, "pinned items need 50 tokens");
        var scorers = new[] { Scorer.Given(), Scorer.Priority(), Scorer.Frequency(), Scorer.Reflexive(),
            Scorer.Tag(new Dictionary<string, double> { { "auth", 1 } }), Scorer.MetadataTrust(), Scorer.MetadataKey("k", "v", 2),
            Scorer.Decay(DecayCurve.Step, 0, new[] { new KeyValuePair<double, double>(86400, 0.9) }, 5 * day) };
        foreach (var s in scorers)
        {
            True(s.Score(it).Length == 7, "a score per item");
            using (var scaled = Scorer.Scaled(s)) True(scaled.Score(it).Length == 7, "scaled");
            s.Dispose();
        }
        Throws(() => Scorer.MetadataKey("k", "v", 0), Status.InvalidArgument, "boost");
        // Groups in the pipeline: both members share the excluded group's reason and tokens.
        var pair = MakeItems(new long[] { 10, 200, 60 }, new[] { 0.9, 0.1, 0.5 });
        pair.SetGroups(0, new ulong[] { 7, 7 });
        using (var p = new Pipeline(null, Slicer.Greedy(), null))
        using (var r = new Report())
        {
            Equal(p.Run(pair, new Budget(100, 100), r), 2);
            foreach (var d in r.Excluded) True(d.Group == 7 && d.GroupTokens == 210 && d.Reason == Reason.BudgetExceeded, "group decision");
        }
    }

    static void ConcurrentSlicing()
    {
        const int n = 2000;
        var tokens = new long[n];
        var scores = new double[n];
        var kinds = new string[n];
        for (int i = 0; i < n; i++)
        {
            tokens[i] = 1 + (i * 7919) % 500;
            scores[i] = (i * 104729 % 1000) / 1000.0;
            kinds[i] = new[] { "Message", "Document", "tool" }[i % 3];
        }
        var it = MakeItems(tokens, scores, kinds);
        var b = new Budget(20000, 20000);
        var g = Slicer.Greedy();
        var slicers = new[] {
            g, Slicer.Knapsack(10), Slicer.Quota(g, new[] { new Quota("Document", 20, 50) }),
            Slicer.CountQuota(g, new[] { new CountQuota("tool", 5, 50) }, Scarcity.Degrade),
            Slicer.CountConstrainedKnapsack(10, new[] { new CountQuota("tool", 5, 50) }, Scarcity.Degrade),
        };
        var want = slicers.Select(s => s.Slice(it, b)).ToArray();
        int failures = 0;
        var threads = Enumerable.Range(0, 12).Select(w => new Thread(() =>
        {
            using (var r = new Report())
                for (int round = 0; round < 10; round++)
                {
                    int i = (w + round) % slicers.Length;
                    if (!slicers[i].Slice(it, b, 0, r).SequenceEqual(want[i])) Interlocked.Increment(ref failures);
                }
        })).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        True(failures == 0, "every thread got the single-threaded result (" + failures + " differed)");
    }

    // Drops handles undisposed; not inlined, so its frame is gone after.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static void ForgetHandles()
    {
        for (int i = 0; i < 300; i++)
        {
            var it = MakeItems(new long[] { 10, 20 }, new[] { 0.5, 0.9 }, new[] { "a", "b" });
            Equal(Slicer.Greedy().Slice(it, new Budget(100, 100)), 0, 1);
            if (i % 50 == 0) { GC.Collect(); GC.WaitForPendingFinalizers(); }
        }
    }

    static void FinalizersFreeForgottenHandles()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        long before = Library.LiveHandles;
        ForgetHandles();
        // 900 handles were dropped undisposed: the finalizers must free them.
        // Mono scans the stack conservatively, so a stale slot may keep the
        // last iteration's three alive; a missing finalizer leaves hundreds.
        for (int tries = 0; tries < 20 && Library.LiveHandles > before; tries++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        long left = Library.LiveHandles - before;
        True(left <= 3, left + " of 900 forgotten native handles still live");
    }

    static int Main()
    {
        var tests = new List<KeyValuePair<string, Action>> {
            new KeyValuePair<string, Action>("Version", Version),
            new KeyValuePair<string, Action>("GreedyDensity", GreedyDensity),
            new KeyValuePair<string, Action>("KnapsackAndCapacity", KnapsackAndCapacity),
            new KeyValuePair<string, Action>("Quotas", Quotas),
            new KeyValuePair<string, Action>("CountQuotas", CountQuotas),
            new KeyValuePair<string, Action>("CountConstrainedKnapsack", CountConstrainedKnapsack),
            new KeyValuePair<string, Action>("BudgetRules", BudgetRules),
            new KeyValuePair<string, Action>("ItemErrorsAreAtomic", ItemErrorsAreAtomic),
            new KeyValuePair<string, Action>("PackedColumnsCarryUtf8", PackedColumnsCarryUtf8),
            new KeyValuePair<string, Action>("ScratchBuffersCarryNothingOver", ScratchBuffersCarryNothingOver),
            new KeyValuePair<string, Action>("PlaceAndTokensOverBudget", PlaceAndTokensOverBudget),
            new KeyValuePair<string, Action>("DisposedHandlesThrow", DisposedHandlesThrow),
            new KeyValuePair<string, Action>("Simulation", Simulation),
            new KeyValuePair<string, Action>("Streams", Streams),
            new KeyValuePair<string, Action>("Groups", Groups),
            new KeyValuePair<string, Action>("PipelineAndReport", PipelineAndReport),
            new KeyValuePair<string, Action>("ConcurrentSlicing", ConcurrentSlicing),
            new KeyValuePair<string, Action>("FinalizersFreeForgottenHandles", FinalizersFreeForgottenHandles),
        };
        int passed = 0, failed = 0;
        foreach (var t in tests)
        {
            try
            {
                t.Value();
                passed++;
                Console.WriteLine("ok   " + t.Key);
            }
            catch (Exception e)
            {
                failed++;
                Console.WriteLine("FAIL " + t.Key + ": " + e.Message);
            }
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
