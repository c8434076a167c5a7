// Tests of the C# binding, run under Mono by ../test.sh. A tiny runner (no
// NUnit on a bare Mono install): each test is a method; the last line of
// output is "N passed, N failed" and the exit status is 1 on any failure.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using Cupel;

static partial class CupelTests
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

    // A refused argument: exactly exception class T (ArgumentException: also
    // CupelArgumentException, never one of the other two), ParamName param,
    // the first line of the message naming param and holding fragment.
    static T ThrowsArg<T>(Action a, string param, string fragment) where T : Exception
    {
        try
        {
            a();
        }
        catch (Exception e)
        {
            bool classOk = typeof(T) == typeof(ArgumentException)
                ? e is ArgumentException && !(e is ArgumentNullException) && !(e is ArgumentOutOfRangeException)
                : e.GetType() == typeof(T);
            if (!classOk) throw new Exception(e.GetType().Name + ", want " + typeof(T).Name + ": " + e.Message);
            var name = e is ArgumentException ? ((ArgumentException)e).ParamName : ((ObjectDisposedException)e).ObjectName;
            if (name != param) throw new Exception("names " + name + ", want " + param + ": " + e.Message);
            var first = e.Message.Split('\n')[0];
            if (!first.Contains(param)) throw new Exception("message '" + first + "' does not name " + param);
            if (!e.Message.Contains(fragment)) throw new Exception("message '" + e.Message + "' lacks '" + fragment + "'");
            return (T)e;
        }
        throw new Exception("expected " + typeof(T).Name + " for " + param + ", got success");
    }

    static Items MakeItems(long[] tokens, double[] scores, string[] kinds = null)
    {
        var it = new Items();
        it.PushMany(tokens, scores, kinds);
        return it;
    }

    static void Version()
    {
        True(Library.AbiVersion == 2, "ABI version 2");
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
            Throws(() => Slicer.Knapsack(0), Status.InvalidArgument, "bucketSize is 0");
            ThrowsArg<ArgumentException>(() => Slicer.Knapsack(0), "bucketSize", "bucketSize is 0");
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
        ThrowsArg<ArgumentNullException>(() => Slicer.Quota(null, new Quota[0]), "inner", "inner is null");
        ThrowsArg<ArgumentException>(() => Slicer.Quota(Slicer.Greedy(), new[] { new Quota("Message", 60, 50) }),
            "quotas", "RequirePercent 60 > CapPercent 50");
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
        Throws(() => new Budget(10, 20), Status.InvalidArgument, "targetTokens 20 > maxTokens 10");
        var native = ThrowsArg<CupelArgumentException>(() => new Budget(10, 20), "targetTokens", "targetTokens 20 > maxTokens 10");
        True(native.NativeMessage == "target_tokens 20 > max_tokens 10", "the library's own message: " + native.NativeMessage);
        ThrowsArg<ArgumentException>(() => b.SetOutputReserve(-1), "tokens", "tokens is -1");
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
            ThrowsArg<ArgumentOutOfRangeException>(() => u.Place(it, new[] { 1, -1 }, new[] { 0.5, 0.5 }), "indices", "indices[1] is -1");
            ThrowsArg<ArgumentOutOfRangeException>(() => u.Place(it, new[] { 99 }, new[] { 0.5 }), "indices", "indices[0] is 99");
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
        ThrowsArg<ArgumentOutOfRangeException>(() => g.FindMinBudget(it, 0, 9, 1000), "targetIndex", "targetIndex 9 is out of range");
        ThrowsArg<ArgumentOutOfRangeException>(() => g.FindMinBudget(it, 0, -1, 1000), "targetIndex", "targetIndex is -1");
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
        ThrowsArg<ArgumentOutOfRangeException>(() => it.SetGroup(3, 1), "index", "index 3 is out of range");
        ThrowsArg<ArgumentOutOfRangeException>(() => it.SetGroups(2, new ulong[] { 1, 1 }), "first", "past the end");
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

    static void ReadBack()
    {
        using (var it = new Items())
        {
            it.PushMany(new long[] { 100, 200, -3 }, new[] { 0.9, 0.5, 0.25 }, new[] { "Message", "document", null });
            it.Push(7, 0.125, "DOCUMENT"); // the list's first spelling wins
            // Item 0 untouched: every optional attribute absent.
            var bare = it[0];
            True(bare.Index == 0 && bare.Tokens == 100 && bare.Score == 0.9 && bare.Kind == "Message", "item 0: " + bare);
            True(bare.Content == null && bare.Timestamp == null && bare.Priority == null && bare.RelevanceHint == null,
                "absent content, timestamp, priority and hint read back as null");
            True(!bare.Pinned && bare.Group == 0 && bare.Source == "Chat", "not pinned, no group, source Chat");
            True(bare.Tags.Count == 0 && bare.Metadata.Count == 0, "no tags, no metadata");
            True(it[2].Tokens == -3 && it[2].Kind == "Message", "a null kind reads back as the default");
            True(it[3].Kind == "document" && it[3].Score == 0.125, "kinds read back as the list first spelled them: " + it[3].Kind);
            // Item 1 with everything set, text beyond ASCII included.
            it.SetContent(1, "caf\u00e9 \u4e2d \U0001F600");
            it.SetTimestamp(1, -5);
            it.SetPriority(1, 0);
            it.SetRelevanceHint(1, 0.75);
            it.SetPinned(1, true);
            it.SetGroup(1, ulong.MaxValue);
            it.SetSource(1, "Docs");
            it.AddTag(1, "b");
            it.AddTag(1, "a");
            it.AddTag(1, "b");
            it.SetMetadata(1, "z", "1");
            it.SetMetadata(1, "y", "2");
            it.SetMetadata(1, "z", "3"); // replaces, keeps its place
            var full = it[1];
            True(full.Content == "caf\u00e9 \u4e2d \U0001F600", "content round trip: " + full.Content);
            True(full.Timestamp == -5 && full.Priority == 0 && full.RelevanceHint == 0.75, "present zero and negative values");
            True(full.Pinned && full.Group == ulong.MaxValue && full.Source == "Docs", "pinned, group, source");
            Equal(full.Tags, "b", "a", "b");
            Equal(full.Metadata.Select(kv => kv.Key + "=" + kv.Value), "z=3", "y=2");
            // A copy: later changes do not reach an Item already read.
            it.SetContent(1, "changed");
            True(full.Content != "changed" && it[1].Content == "changed", "an Item is a snapshot");
            // Out of range, both ways, naming the index in the caller's terms.
            ThrowsArg<ArgumentOutOfRangeException>(() => { var x = it[4]; }, "index", "index 4 is out of range");
            ThrowsArg<ArgumentOutOfRangeException>(() => { var x = it[-1]; }, "index", "index is -1");
            ThrowsArg<ArgumentOutOfRangeException>(() => { var x = it[int.MaxValue]; }, "index", "2147483647");
            it.Dispose();
            try
            {
                var x = it[0];
                throw new Exception("read a disposed list");
            }
            catch (ObjectDisposedException e) { True(e.ObjectName == "Items", "names the Items: " + e.ObjectName); }
        }
    }

    static void ReasonNames()
    {
        // The enum is the binding's table of reasons: each member must be the
        // library's name of its number, and every number the library names
        // must be a member.
        foreach (Reason r in Enum.GetValues(typeof(Reason)))
            True(r.Name() == r.ToString(), (int)r + " is " + r.Name() + " in the library, " + r + " here");
        for (int code = -2; code < 100; code++)
        {
            var name = ((Reason)code).Name();
            True((name != "Unknown") == Enum.IsDefined(typeof(Reason), code), code + ": " + name);
        }
        True(((Reason)int.MinValue).Name() == "Unknown", "no reason: Unknown");
        True(Reason.BudgetExceeded.Name() == "BudgetExceeded" && Reason.CountCapExceeded.Name() == "CountCapExceeded" &&
            Reason.Deferred.Name() == "Deferred", "names");
        True(new Decision { Index = 4, Reason = Reason.Deduplicated }.ToString() == "#4 Deduplicated", "Decision.ToString");
    }

    // Every reference argument of the public API: null is an
    // ArgumentNullException naming it (never a NullReferenceException), and
    // the call changes nothing.
    static void NullArguments()
    {
        using (var it = MakeItems(new long[] { 10, 20 }, new[] { 0.5, 0.9 }))
        using (var b = new Budget(100, 100))
        using (var g = Slicer.Greedy())
        using (var sc = Scorer.Recency())
        using (var pl = Placer.Chronological())
        using (var p = new Pipeline(sc, g, pl))
        {
            var cases = new List<KeyValuePair<string, Action>> {
                Case("tokens", () => it.PushMany(null, new double[0])),
                Case("scores", () => it.PushMany(new long[0], null)),
                Case("groups", () => it.SetGroups(0, null)),
                Case("content", () => it.SetContent(0, null)),
                Case("source", () => it.SetSource(0, null)),
                Case("tag", () => it.AddTag(0, null)),
                Case("key", () => it.SetMetadata(0, null, "v")),
                Case("value", () => it.SetMetadata(0, "k", null)),
                Case("contents", () => it.SetContents(0, null)),
                Case("unixMillis", () => it.SetTimestamps(0, null)),
                Case("priorities", () => it.SetPriorities(0, null)),
                Case("pinned", () => it.SetPinnedMany(0, null)),
                Case("hints", () => it.SetRelevanceHints(0, null)),
                Case("kind", () => b.Reserve(null, 5)),
                Case("inner", () => Slicer.Quota(null, new Quota[0])),
                Case("quotas", () => Slicer.Quota(g, null)),
                Case("quotas", () => Slicer.Quota(g, new[] { new Quota(null, 0, 10) })),
                Case("inner", () => Slicer.CountQuota(null, new CountQuota[0], Scarcity.Degrade)),
                Case("entries", () => Slicer.CountQuota(g, null, Scarcity.Degrade)),
                Case("entries", () => Slicer.CountQuota(g, new[] { new CountQuota(null, 0, 1) }, Scarcity.Degrade)),
                Case("entries", () => Slicer.CountConstrainedKnapsack(10, null, Scarcity.Degrade)),
                Case("items", () => g.Slice(null, b)),
                Case("budget", () => g.Slice(it, null)),
                Case("items", () => g.MarginalItems(null, b, 0, 10)),
                Case("budget", () => g.MarginalItems(it, null, 0, 10)),
                Case("items", () => g.FindMinBudget(null, 0, 0, 100)),
                Case("items", () => new Report().Json(null)),
                Case("weights", () => Scorer.Tag(null)),
                Case("parts", () => Scorer.Composite(null)),
                Case("parts", () => Scorer.Composite(new KeyValuePair<Scorer, double>(sc, 1), new KeyValuePair<Scorer, double>(null, 1))),
                Case("inner", () => Scorer.Scaled(null)),
                Case("key", () => Scorer.MetadataKey(null, "v", 1)),
                Case("value", () => Scorer.MetadataKey("k", null, 1)),
                Case("items", () => sc.Score(null)),
                Case("items", () => pl.Place(null, new int[0], new double[0])),
                Case("indices", () => pl.Place(it, null, new double[0])),
                Case("scores", () => pl.Place(it, new int[0], null)),
                Case("slicer", () => new Pipeline(sc, null, pl)),
                Case("items", () => p.Run(null, b)),
                Case("budget", () => p.Run(it, null)),
            };
            foreach (var c in cases)
            {
                try
                {
                    ThrowsArg<ArgumentNullException>(c.Value, c.Key, c.Key);
                }
                catch (Exception e)
                {
                    throw new Exception("case " + cases.IndexOf(c) + ": " + e.Message);
                }
            }
            ThrowsArg<ArgumentNullException>(() => Scorer.Composite(new KeyValuePair<Scorer, double>(null, 1)), "parts", "parts[0].Key");
            True(it.Count == 2 && it[0].Content == null && it[0].Tags.Count == 0, "nothing changed");
            // null where null has a meaning
            it.Push(1, 0.5, null);
            using (var nulls = new Pipeline(null, g, null)) True(nulls.Run(it, b).Length == 3, "null scorer and placer");
            True(g.Slice(it, b, 0, null).Length == 3, "a null report");
            // null weights are the spec's defaults; an empty dictionary weights no kind.
            using (var defaults = Scorer.Kind(null))
            using (var none = Scorer.Kind(new Dictionary<string, double>()))
            {
                Equal(defaults.Score(it), 0.2, 0.2, 0.2);
                Equal(none.Score(it), 0.0, 0.0, 0.0);
            }
        }
    }

    static KeyValuePair<string, Action> Case(string param, Action a) { return new KeyValuePair<string, Action>(param, a); }

    // Strings with a lone surrogate cannot become UTF-8: refused, naming the
    // argument (.NET's default encoder would silently write U+FFFD).
    static void LoneSurrogates()
    {
        const string high = "a\uD800", low = "\uDC00b", reversed = "\uDC00\uD800";
        using (var it = MakeItems(new long[] { 10, 20 }, new[] { 0.5, 0.9 }))
        using (var b = new Budget(100, 100))
        using (var g = Slicer.Greedy())
        {
            var cases = new List<KeyValuePair<string, Action>> {
                Case("kind", () => it.Push(1, 0.5, high)),
                Case("kinds", () => it.PushMany(new long[] { 1, 2 }, new[] { 0.5, 0.5 }, new[] { "Message", low })),
                Case("kinds", () => it.PushMany(new long[] { 1, 2 }, new[] { 0.5, 0.5 }, new[] { "", reversed })),
                Case("content", () => it.SetContent(0, high)),
                Case("source", () => it.SetSource(0, low)),
                Case("tag", () => it.AddTag(0, reversed)),
                Case("key", () => it.SetMetadata(0, high, "v")),
                Case("value", () => it.SetMetadata(0, "k", low)),
                Case("contents", () => it.SetContents(0, new[] { "ok", high })),
                Case("contents", () => it.SetContents(0, new[] { "", high })),
                Case("kind", () => b.Reserve(high, 5)),
                Case("quotas", () => Slicer.Quota(g, new[] { new Quota(high, 0, 10) })),
                Case("entries", () => Slicer.CountQuota(g, new[] { new CountQuota(low, 0, 1) }, Scarcity.Degrade)),
                Case("weights", () => Scorer.Kind(new Dictionary<string, double> { { high, 1 } })),
                Case("weights", () => Scorer.Tag(new Dictionary<string, double> { { low, 1 } })),
                Case("key", () => Scorer.MetadataKey(high, "v", 1)),
                Case("value", () => Scorer.MetadataKey("k", low, 1)),
            };
            foreach (var c in cases)
            {
                try
                {
                    ThrowsArg<CupelArgumentException>(c.Value, c.Key, "lone surrogate");
                }
                catch (Exception e)
                {
                    throw new Exception("case " + cases.IndexOf(c) + ": " + e.Message);
                }
            }
            ThrowsArg<CupelArgumentException>(() => it.PushMany(new long[] { 1, 2 }, new[] { 0.5, 0.5 }, new[] { "Message", low }),
                "kinds", "kinds[1]");
            var item = it[0];
            True(it.Count == 2 && item.Content == null && item.Tags.Count == 0 && item.Metadata.Count == 0 && item.Source == "Chat",
                "nothing changed");
            // A surrogate pair is one character, and fine.
            it.SetContent(0, "\U0001F600");
            True(it[0].Content == "\U0001F600", "a pair round trips");
        }
    }

    // Negative indices are ArgumentOutOfRangeExceptions naming the argument
    // and the index, before anything reaches the library.
    static void NegativeIndices()
    {
        using (var it = MakeItems(new long[] { 10, 20 }, new[] { 0.5, 0.9 }))
        using (var g = Slicer.Greedy())
        using (var pl = Placer.Chronological())
        {
            var cases = new List<KeyValuePair<string, Action>> {
                Case("index", () => it.SetContent(-1, "x")),
                Case("index", () => it.SetTimestamp(-1, 5)),
                Case("index", () => it.SetPriority(-1, 5)),
                Case("index", () => it.SetPinned(-1, true)),
                Case("index", () => it.SetRelevanceHint(-1, 0.5)),
                Case("index", () => it.SetSource(-1, "x")),
                Case("index", () => it.AddTag(-1, "x")),
                Case("index", () => it.SetMetadata(-1, "k", "v")),
                Case("index", () => it.SetGroup(-1, 1)),
                Case("index", () => { var x = it[-1]; }),
                Case("first", () => it.SetGroups(-1, new ulong[] { 1 })),
                Case("first", () => it.SetContents(-1, new[] { "x" })),
                Case("first", () => it.SetTimestamps(-1, new long[] { 1 })),
                Case("first", () => it.SetPriorities(-1, new long[] { 1 })),
                Case("first", () => it.SetPinnedMany(-1, new[] { true })),
                Case("first", () => it.SetRelevanceHints(-1, new[] { 0.5 })),
                Case("targetIndex", () => g.FindMinBudget(it, 0, -1, 100)),
                Case("indices", () => pl.Place(it, new[] { 0, -1 }, new[] { 0.5, 0.5 })),
            };
            foreach (var c in cases)
            {
                try
                {
                    ThrowsArg<ArgumentOutOfRangeException>(c.Value, c.Key, "-1");
                }
                catch (Exception e)
                {
                    throw new Exception("case " + cases.IndexOf(c) + ": " + e.Message);
                }
            }
            var item = it[0];
            True(item.Content == null && item.Timestamp == null && item.Tags.Count == 0 && item.Group == 0, "nothing changed");
            // Past the end: the library's range check, the same class.
            ThrowsArg<ArgumentOutOfRangeException>(() => it.SetContent(2, "x"), "index", "index 2 is out of range");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.SetTimestamps(1, new long[] { 1, 2 }), "first", "past the end");
            ThrowsArg<ArgumentOutOfRangeException>(() => pl.Place(it, new[] { 0, 2 }, new[] { 0.5, 0.5 }), "indices", "indices[1] is 2");
        }
    }

    // A disposed argument is an ObjectDisposedException naming the argument;
    // a disposed receiver names its type.
    static void DisposedArguments()
    {
        using (var it = MakeItems(new long[] { 10, 20 }, new[] { 0.5, 0.9 }))
        using (var b = new Budget(100, 100))
        using (var g = Slicer.Greedy())
        using (var sc = Scorer.Recency())
        using (var pl = Placer.Chronological())
        using (var p = new Pipeline(sc, g, pl))
        {
            var gone = MakeItems(new long[] { 1 }, new[] { 0.5 });
            gone.Dispose();
            var goneBudget = new Budget(10, 10);
            goneBudget.Dispose();
            var goneSlicer = Slicer.Greedy();
            goneSlicer.Dispose();
            var goneScorer = Scorer.Priority();
            goneScorer.Dispose();
            var gonePlacer = Placer.UShaped();
            gonePlacer.Dispose();
            var goneReport = new Report();
            goneReport.Dispose();
            ThrowsArg<ObjectDisposedException>(() => p.Run(gone, b), "items", "items");
            ThrowsArg<ObjectDisposedException>(() => p.Run(it, goneBudget), "budget", "budget");
            ThrowsArg<ObjectDisposedException>(() => p.Run(it, b, goneReport), "report", "report");
            ThrowsArg<ObjectDisposedException>(() => g.Slice(gone, b), "items", "items");
            ThrowsArg<ObjectDisposedException>(() => new Pipeline(sc, goneSlicer, pl), "slicer", "slicer");
            ThrowsArg<ObjectDisposedException>(() => new Pipeline(goneScorer, g, pl), "scorer", "scorer");
            ThrowsArg<ObjectDisposedException>(() => new Pipeline(sc, g, gonePlacer), "placer", "placer");
            ThrowsArg<ObjectDisposedException>(() => Slicer.Quota(goneSlicer, new Quota[0]), "inner", "inner");
            ThrowsArg<ObjectDisposedException>(() => Scorer.Scaled(goneScorer), "inner", "inner");
            ThrowsArg<ObjectDisposedException>(() => Scorer.Composite(new KeyValuePair<Scorer, double>(sc, 1),
                new KeyValuePair<Scorer, double>(goneScorer, 1)), "parts", "parts[1].Key");
            ThrowsArg<ObjectDisposedException>(() => gone.Push(1, 0.5), "Items", "Items");
            ThrowsArg<ObjectDisposedException>(() => goneSlicer.Slice(it, b), "Slicer", "Slicer");
            p.Dispose();
            ThrowsArg<ObjectDisposedException>(() => p.Run(it, b), "Pipeline", "Pipeline");
            gone.Dispose(); // twice: a no-op
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

    // ---- text in: tokenizers -------------------------------------------------

    const string Sentence = "Hello, world! This is libcupel counting tokens.";
    const string Japanese = "日本語のテキスト";
    const string Emoji = "👋🌍 hello 👋🏽 emoji 🎉🎉🎉";

    // Texts in many scripts, emoji (pairs, modifiers, ZWJ sequences), code
    // and whitespace runs, for the round-trip properties.
    static readonly string[] Mixed = {
        Sentence, Japanese, Emoji, "",
        "Привет, мир! Это проверка токенизатора на русском языке.",
        "مرحبا بالعالم، هذا اختبار للعد الدقيق للرموز.",
        "नमस्ते दुनिया, यह एक परीक्षण है।",
        "👨‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters and 𠜎𠜱𠝹 rare CJK",
        "fn main() {\n    let x = vec![1, 2, 3];\n    println!(\"{:?}\", x);\n}\n",
        "   leading spaces\t\ttabs\r\n\r\nand CRLF   ",
        "한국어 텍스트와 English mixed 混合 テキスト 123456789 numbers",
        "a\0b with a NUL inside",
    };

    static void TokenizerCounts()
    {
        using (var o = new Tokenizer(Tokenizer.O200kBase))
        using (var c = new Tokenizer(Tokenizer.Cl100kBase))
        {
            True(o.Count("hello world") == 2, "hello world is 2 tokens");
            True(o.Count(Sentence) == 12, "the sentence is 12 tokens, got " + o.Count(Sentence));
            True(o.Count("") == 0, "the empty text is 0 tokens");
            True(o.Count(Japanese) == 6 && c.Count(Japanese) == 8, "日本語のテキスト: 6 in o200k, 8 in cl100k");
            True(o.Count("<|endoftext|>") == 7, "special tokens are ordinary text");
            True(o.Count("a\0b") == 3, "a NUL is text, not the end");
            Equal(o.CountMany(new[] { "hello world", Sentence, "", "a" }), 2L, 12L, 0L, 1L);
            Equal(o.CountMany(new string[0]));
            // A large batch (counted on two threads) equals one count per text.
            var texts = Enumerable.Range(0, 3000).Select(i => Mixed[i % Mixed.Length] + " #" + i).ToArray();
            var many = o.CountMany(texts);
            for (int i = 0; i < texts.Length; i++)
                if (many[i] != o.Count(texts[i])) throw new Exception("CountMany[" + i + "] " + many[i] + " != Count " + o.Count(texts[i]));
            True(c.CountMany(Mixed).SequenceEqual(Mixed.Select(c.Count)), "cl100k CountMany equals Count");
            True(o.Count(Emoji) != c.Count(Emoji) || o.Count(Japanese) != c.Count(Japanese), "two vocabularies");
        }
    }

    static void Cut(Tokenizer t, string text, long max, Keep keep, int head, int tail, long tokens)
    {
        var r = t.Truncate(text, max, keep);
        if (r.HeadEnd != head || r.TailStart != tail || r.Tokens != tokens)
            throw new Exception(keep + " " + max + " of \"" + text + "\": " + r + ", want [" + head + ", " + tail + ") " + tokens);
        True(r.Text == text.Substring(0, head) + text.Substring(tail), "the kept text is head + tail");
    }

    static bool SplitsPair(string s, int at)
    {
        return at > 0 && at < s.Length && char.IsHighSurrogate(s[at - 1]) && char.IsLowSurrogate(s[at]);
    }

    static void TokenizerTruncate()
    {
        using (var o = new Tokenizer(Tokenizer.O200kBase))
        {
            int n = Sentence.Length; // 47: ASCII, chars are bytes
            Cut(o, Sentence, 4, Keep.Head, 13, n, 4);       // "Hello, world!"
            Cut(o, Sentence, 3, Keep.Tail, 0, 30, 3);       // " counting tokens."
            Cut(o, Sentence, 5, Keep.BothEnds, 12, 39, 5);  // "Hello, world" + " tokens."
            Cut(o, Sentence, 12, Keep.Head, n, n, 12);      // fits: all of it
            Cut(o, Sentence, 1000, Keep.BothEnds, n, n, 12);
            Cut(o, Sentence, 0, Keep.Tail, 0, n, 0);        // nothing
            Cut(o, "", 5, Keep.BothEnds, 0, 0, 0);
            True(ReferenceEquals(o.Truncate(Sentence, 12, Keep.Head).Text, Sentence), "a text that fits comes back as it is");
            // Offsets in UTF-16 code units: 日本語のテキスト is 8 chars, 24 bytes.
            Cut(o, Japanese, 3, Keep.Head, 4, 8, 3);        // 日本語の
            Cut(o, Japanese, 3, Keep.Tail, 0, 4, 3);        // テキスト
            Cut(o, Japanese, 4, Keep.BothEnds, 3, 5, 4);    // 日本語 + キスト
            True(o.Truncate(Japanese, 4, Keep.BothEnds).Text == "日本語キスト", "日本語キスト");
            // Emoji are surrogate pairs: 👋 is 2 chars (4 bytes).
            Cut(o, Emoji, 5, Keep.BothEnds, 2, Emoji.Length - 2, 4);
            True(o.Truncate(Emoji, 5, Keep.BothEnds).Text == "👋🎉", "👋🎉");
            // Every budget, every keep, every text: the rules in C# units.
            foreach (var text in Mixed)
            {
                long total = o.Count(text);
                for (long max = 0; max <= total + 1; max++)
                    foreach (var keep in new[] { Keep.Head, Keep.Tail, Keep.BothEnds })
                    {
                        var r = o.Truncate(text, max, keep);
                        string head = text.Substring(0, r.HeadEnd), tail = text.Substring(r.TailStart);
                        string where = keep + " " + max + " of \"" + text + "\" (" + r + ")";
                        if (r.Text != head + tail) throw new Exception(where + ": the kept text is not head + tail");
                        if (SplitsPair(text, r.HeadEnd) || SplitsPair(text, r.TailStart)) throw new Exception(where + ": splits a surrogate pair");
                        if (r.Tokens > max) throw new Exception(where + ": over the budget");
                        if (r.Tokens != o.Count(head) + o.Count(tail)) throw new Exception(where + ": tokens are not head's + tail's");
                        if (max >= total && (r.HeadEnd != text.Length || r.TailStart != text.Length || r.Tokens != total))
                            throw new Exception(where + ": the text fits but was cut");
                        if (keep == Keep.Head && r.TailStart != text.Length) throw new Exception(where + ": Head keeps a tail");
                        if (keep == Keep.Tail && r.HeadEnd != 0 && max < total) throw new Exception(where + ": Tail keeps a head");
                        if (keep == Keep.BothEnds && max < total && o.Count(head) > (max + 1) / 2)
                            throw new Exception(where + ": the head has more than ceil(max / 2) tokens");
                    }
            }
            // A text cut to a budget is then pushed within it.
            var kept = o.Truncate(Sentence, 6, Keep.BothEnds);
            using (var items = new Items())
            {
                items.PushText(o, kept.Text, 0.5);
                True(items[0].Tokens <= 6 + 1, "the joined pieces count at most one more at the seam");
            }
        }
    }

    // A vocabulary in tiktoken's format: the 256 single bytes (ranks 0..255)
    // and the extra lines.
    static byte[] TinyVocab(string extra, int skip = -1)
    {
        var sb = new System.Text.StringBuilder();
        for (int b = 0; b < 256; b++)
            if (b != skip) sb.Append(Convert.ToBase64String(new[] { (byte)b })).Append(' ').Append(b).Append('\n');
        return System.Text.Encoding.ASCII.GetBytes(sb + extra);
    }

    static string B64(string s) { return Convert.ToBase64String(System.Text.Encoding.UTF8.GetBytes(s)); }

    static void TokenizerFromTiktoken()
    {
        var vocab = TinyVocab(B64("ab") + " 256\n" + B64("abc") + " 257\n" + B64("he") + " 258\n" + B64("ll") + " 259\n"
            + B64("hell") + " 260\n" + B64("hello") + " 261\n");
        using (var t = Tokenizer.FromTiktoken(vocab))
        {
            True(t.Count("abc abd") == 4, "abc | ' ', ab, d: 4, got " + t.Count("abc abd"));
            True(t.Count("hello") == 1 && t.Count("help") == 3, "hello is one token, help three");
            True(t.Count("日") == 3, "an unknown character is its three bytes");
            Equal(t.CountMany(new[] { "hello", "abc", "xyz" }), 1L, 1L, 3L);
            Cut(t, "hello abc", 2, Keep.Head, 6, 9, 2);   // "hello", " " (" abc" is " ", "abc")
            Cut(t, "hello abc", 1, Keep.Head, 5, 9, 1);   // "hello"
            Cut(t, "日本", 1, Keep.Head, 0, 2, 0);        // one byte of 日 is no character
            Cut(t, "日本", 3, Keep.Tail, 0, 1, 3);        // 本
        }
        // A pattern of its own (the general engine): one piece per character.
        using (var t = Tokenizer.FromTiktoken(vocab, "."))
            True(t.Count("abc") == 3 && t.Count("hello") == 5, "one piece per character");

        ThrowsArg<CupelArgumentException>(() => Tokenizer.FromTiktoken(vocab, "(unclosed"), "pattern", "unclosed group");
        ThrowsArg<CupelArgumentException>(() => Tokenizer.FromTiktoken(vocab, "a\uD800"), "pattern", "lone surrogate");
        // A malformed vocabulary names its line (the 256 byte lines come first).
        ThrowsArg<CupelArgumentException>(() => Tokenizer.FromTiktoken(TinyVocab(B64("ab") + " 256\nnot base64 at all 257\n")),
            "ranks", "line 258");
        ThrowsArg<CupelArgumentException>(() => Tokenizer.FromTiktoken(TinyVocab(B64("ab") + " 256\n" + B64("abc") + " 256\n")),
            "ranks", "line 258: rank 256 is already the rank of line 257");
        ThrowsArg<CupelArgumentException>(() => Tokenizer.FromTiktoken(TinyVocab("", 0x41)), "ranks", "single byte 0x41");
        ThrowsArg<CupelArgumentException>(() => Tokenizer.FromTiktoken(new byte[0]), "ranks", "no tokens");
        ThrowsArg<ArgumentNullException>(() => Tokenizer.FromTiktoken(null), "ranks", "ranks is null");
    }

    static void TokenizerErrors()
    {
        long live = Library.LiveHandles;
        var o = new Tokenizer("o200k_base");
        True(Library.LiveHandles == live + 1, "a tokenizer is a live handle");
        var e = ThrowsArg<CupelArgumentException>(() => new Tokenizer("gpt2"), "name", "\"gpt2\" is no known encoding");
        True(e.Message.Contains("\"o200k_base\" and \"cl100k_base\""), "the message lists the known ones: " + e.Message);
        True(e.Status == Status.InvalidArgument && e.NativeMessage.StartsWith("name \"gpt2\""), "status and native message");
        ThrowsArg<CupelArgumentException>(() => new Tokenizer(""), "name", "known ones");
        ThrowsArg<ArgumentNullException>(() => new Tokenizer(null), "name", "name");
        ThrowsArg<CupelArgumentException>(() => new Tokenizer("o200k\uDC00"), "name", "lone surrogate");

        ThrowsArg<ArgumentNullException>(() => o.Count(null), "text", "text is null");
        ThrowsArg<CupelArgumentException>(() => o.Count("ok \uD800 then"), "text", "lone surrogate U+D800 at char 3");
        ThrowsArg<ArgumentNullException>(() => o.CountMany(null), "texts", "texts is null");
        ThrowsArg<ArgumentNullException>(() => o.CountMany(new[] { "a", null }), "texts", "texts[1] is null");
        ThrowsArg<CupelArgumentException>(() => o.CountMany(new[] { "a", "b", "\uDC00" }), "texts", "texts[2]");
        ThrowsArg<ArgumentNullException>(() => o.Truncate(null, 3, Keep.Head), "text", "text is null");
        ThrowsArg<CupelArgumentException>(() => o.Truncate("\uD83D", 3, Keep.Head), "text", "lone surrogate");
        var neg = ThrowsArg<CupelArgumentException>(() => o.Truncate(Sentence, -1, Keep.Head), "maxTokens", "maxTokens is -1");
        True(neg.NativeMessage.Contains("max_tokens is -1"), "the library's words: " + neg.NativeMessage);
        ThrowsArg<CupelArgumentException>(() => o.Truncate(Sentence, long.MinValue, Keep.Tail), "maxTokens", "-9223372036854775808");
        ThrowsArg<CupelArgumentException>(() => o.Truncate(Sentence, 3, (Keep)7), "keep", "keep is 7; expected Keep.Head");

        o.Dispose();
        True(Library.LiveHandles == live, "Dispose frees it");
        ThrowsArg<ObjectDisposedException>(() => o.Count("a"), "Tokenizer", "disposed");
        ThrowsArg<ObjectDisposedException>(() => o.CountMany(new[] { "a" }), "Tokenizer", "disposed");
        ThrowsArg<ObjectDisposedException>(() => o.Truncate("a", 1, Keep.Head), "Tokenizer", "disposed");
        using (var items = new Items())
        {
            ThrowsArg<ObjectDisposedException>(() => items.PushText(o, "a", 0.5), "tokenizer", "the Tokenizer was disposed");
            ThrowsArg<ObjectDisposedException>(() => items.PushTexts(o, new[] { "a" }, new[] { 0.5 }), "tokenizer", "disposed");
            True(items.Count == 0, "nothing pushed");
        }
        o.Dispose(); // twice: a no-op
    }

    static void PushFromText()
    {
        using (var o = new Tokenizer("o200k_base"))
        using (var items = new Items())
        {
            items.PushText(o, Sentence, 0.9, "Document");
            items.PushText(o, Japanese, 0.5);
            items.PushText(o, Emoji, 0.25, "ToolOutput");
            items.PushText(o, "a\0b", 0.1);
            True(items.Count == 4, "four items");
            Item first = items[0], second = items[1], third = items[2], fourth = items[3];
            True(first.Tokens == 12 && first.Content == Sentence && first.Score == 0.9 && first.Kind == "Document", "the sentence: " + first);
            True(second.Tokens == 6 && second.Content == Japanese && second.Kind == "Message", "日本語のテキスト: " + second);
            True(third.Tokens == o.Count(Emoji) && third.Content == Emoji && third.Kind == "ToolOutput", "the emoji: " + third);
            True(fourth.Tokens == 3 && fourth.Content == "a\0b", "a NUL inside content");

            // Errors change nothing.
            ThrowsArg<CupelArgumentException>(() => items.PushText(o, "", 0.5), "text", "text is empty");
            ThrowsArg<ArgumentNullException>(() => items.PushText(o, null, 0.5), "text", "text is null");
            ThrowsArg<CupelArgumentException>(() => items.PushText(o, "x\uD800", 0.5), "text", "lone surrogate");
            ThrowsArg<CupelArgumentException>(() => items.PushText(o, "x", double.NaN), "score", "score is NaN");
            ThrowsArg<CupelArgumentException>(() => items.PushText(o, "x", 0.5, " "), "kind", "kind");
            ThrowsArg<ArgumentNullException>(() => items.PushText(null, "x", 0.5), "tokenizer", "tokenizer is null");
            True(items.Count == 4, "no item added by a failed PushText");

            // The bulk form, all or nothing.
            var texts = new[] { "hello world", "two words", "a" };
            ThrowsArg<CupelArgumentException>(() => items.PushTexts(o, new[] { "x", "", "y" }, new[] { 0.5, 0.5, 0.5 }),
                "texts", "texts[1] is empty");
            ThrowsArg<ArgumentNullException>(() => items.PushTexts(o, new[] { "x", null }, new[] { 0.5, 0.5 }), "texts", "texts[1] is null");
            ThrowsArg<CupelArgumentException>(() => items.PushTexts(o, new[] { "x", "\uDC00y" }, new[] { 0.5, 0.5 }), "texts", "texts[1]");
            ThrowsArg<CupelArgumentException>(() => items.PushTexts(o, texts, new[] { 0.5, 0.5, double.PositiveInfinity }),
                "scores", "scores[2]");
            ThrowsArg<CupelArgumentException>(() => items.PushTexts(o, texts, new[] { 0.5, 0.5, 0.5 }, new[] { "Document", "", null }),
                "kinds", "kinds[1]");
            ThrowsArg<CupelArgumentException>(() => items.PushTexts(o, texts, new[] { 0.5, 0.5 }), "scores", "lengths must agree");
            ThrowsArg<CupelArgumentException>(() => items.PushTexts(o, texts, new[] { 0.5, 0.5, 0.5 }, new[] { "a" }), "kinds", "lengths");
            ThrowsArg<ArgumentNullException>(() => items.PushTexts(o, null, new double[0]), "texts", "texts is null");
            ThrowsArg<ArgumentNullException>(() => items.PushTexts(o, texts, null), "scores", "scores is null");
            ThrowsArg<ArgumentNullException>(() => items.PushTexts(null, texts, new[] { 0.5, 0.5, 0.5 }), "tokenizer", "tokenizer is null");
            True(items.Count == 4, "no item added by a failed PushTexts");

            items.PushTexts(o, texts, new[] { 0.5, 0.25, 0.75 }, new[] { "Document", null, "ToolOutput" });
            items.PushTexts(o, new[] { Japanese, Emoji }, new[] { 0.1, 0.2 });
            items.PushTexts(o, new string[0], new double[0]);
            True(items.Count == 9, "five more items");
            var back = Enumerable.Range(4, 5).Select(i => items[i]).ToArray();
            Equal(back.Select(i => i.Tokens), 2L, 2L, 1L, 6L, o.Count(Emoji));
            Equal(back.Select(i => i.Content), "hello world", "two words", "a", Japanese, Emoji);
            Equal(back.Select(i => i.Kind), "Document", "Message", "ToolOutput", "Message", "Message");
            Equal(back.Select(i => i.Score), 0.5, 0.25, 0.75, 0.1, 0.2);

            // Strings in, a selection out: no token count written by hand.
            using (var g = Slicer.Greedy())
            using (var b = new Budget(20, 20))
            {
                var chosen = g.Slice(items, b);
                True(chosen.Sum(i => items[i].Tokens) <= 20 && chosen.Length > 0, "the chosen texts fit 20 tokens");
            }
        }
    }

    // One tokenizer, many threads: every count and cut is the single-threaded one.
    static void ConcurrentCounting()
    {
        using (var o = new Tokenizer("o200k_base"))
        {
            var texts = Enumerable.Range(0, 400).Select(i => Mixed[i % Mixed.Length] + new string('x', i % 7) + i).ToArray();
            var counts = texts.Select(o.Count).ToArray();
            var cuts = texts.Select(t => o.Truncate(t, 5, Keep.BothEnds).Text).ToArray();
            int failures = 0;
            var threads = Enumerable.Range(0, 8).Select(w => new Thread(() =>
            {
                for (int round = 0; round < 3; round++)
                {
                    for (int i = w; i < texts.Length; i += 3)
                        if (o.Count(texts[i]) != counts[i] || o.Truncate(texts[i], 5, Keep.BothEnds).Text != cuts[i])
                            Interlocked.Increment(ref failures);
                    if (!o.CountMany(texts).SequenceEqual(counts)) Interlocked.Increment(ref failures);
                }
            })).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());
            True(failures == 0, "every thread got the single-threaded result (" + failures + " differed)");
        }
    }

    // ---- items that shrink instead of vanish ------------------------------------

    static bool Near(double a, double b) { return Math.Abs(a - b) <= 1e-12; }

    /// <summary>Scenario S's document: 200 lines, 10890 bytes, 2800 o200k_base tokens.</summary>
    static string ShrinkDoc()
    {
        var sb = new System.Text.StringBuilder();
        for (int i = 0; i < 200; i++) sb.Append("Line " + i + ": the quick brown fox jumps over the lazy dog.\n");
        return sb.ToString();
    }

    /// <summary>Scenario S's items: a question, a tool output with a placeholder
    /// variant, a document pushed from text, truncatable keeping its head.</summary>
    static Items ShrinkItems(Tokenizer tok, string doc)
    {
        var it = new Items();
        it.Push(40, 0.9, "Message");
        it.SetContent(0, "What failed in the last build?");
        it.Push(9000, 0.8, "ToolOutput");
        it.SetContent(1, "(the build log)");
        True(it.AddVariant(1, 12, 0.1, "[output cleared: 9,000 tokens]") == 1, "the first variant is number 1");
        it.PushText(tok, doc, 0.6, "Document");
        it.SetTruncatable(2, Keep.Head, 50);
        return it;
    }

    // Scenario S through GreedySlice and KnapsackSlice (bucket size 1): the
    // tool output goes in as its placeholder, the document cut to what is left.
    static void ShrinkScenario()
    {
        var doc = ShrinkDoc();
        using (var tok = new Tokenizer(Tokenizer.O200kBase))
        using (var it = ShrinkItems(tok, doc))
        using (var b = new Budget(1000, 1000))
        {
            True(System.Text.Encoding.UTF8.GetByteCount(doc) == 10890 && tok.Count(doc) == 2800, "the document");
            var cases = new[] {
                new KeyValuePair<Slicer, int[]>(Slicer.Greedy(), new[] { 0, 1, 2 }),
                new KeyValuePair<Slicer, int[]>(Slicer.Knapsack(1), new[] { 1, 0, 2 }),
            };
            foreach (var c in cases)
            using (var slicer = c.Key)
            using (var p = new Pipeline(null, slicer, null))
            using (var r = new Report())
            {
                // Without a tokenizer the truncatable item cannot be cut.
                var e = ThrowsArg<CupelArgumentException>(() => p.Run(it, b, r), "items",
                    "item 2 is truncatable but the pipeline has no tokenizer to cut it with (Pipeline.SetTokenizer)");
                True(e.Status == Status.InvalidArgument && e.Message.Contains("item 2") && e.Message.Contains("tokenizer"),
                    "names item 2 and the tokenizer: " + e.Message);

                p.SetTokenizer(tok);
                Equal(p.Run(it, b, r), c.Value);
                var byIndex = r.Included.ToDictionary(d => d.Index);
                Equal(r.Included.Select(d => d.Index), c.Value);
                Equal(c.Value.Select(i => byIndex[i].Reason), c.Value.Select(i => new[] { Reason.Scored, Reason.Variant, Reason.Truncated }[i]).ToArray());
                var want = new[] {
                    new { Score = 0.9, Variant = 0, Tokens = 40L, Head = 30, Tail = 30, Text = "What failed in the last build?" },
                    new { Score = 0.8 * 0.1, Variant = 1, Tokens = 12L, Head = 15, Tail = 15, Text = "[output cleared: 9,000 tokens]" },
                    new { Score = 0.6 * 948 / 2800, Variant = 0, Tokens = 948L, Head = 3647, Tail = 10890, Text = doc.Substring(0, 3647) },
                };
                for (int i = 0; i < 3; i++)
                {
                    var d = byIndex[i];
                    var w = want[i];
                    True(Near(d.Score, w.Score) && d.Variant == w.Variant && d.AddedTokens == w.Tokens &&
                        d.HeadEndByte == w.Head && d.TailStartByte == w.Tail,
                        "item " + i + ": score " + d.Score + ", variant " + d.Variant + ", " + d.AddedTokens +
                        " tokens, cut (" + d.HeadEndByte + ", " + d.TailStartByte + ")");
                    True(d.Text(it) == w.Text, "item " + i + " sends " + (d.Text(it) ?? "null").Length + " chars");
                }
                True(byIndex[2].ItemTokens == 2800, "the document's ItemTokens stay its own");
                True(byIndex[1].Reason.Name() == "Variant" && byIndex[2].Reason.Name() == "Truncated", "reason names");
                True(r.Excluded.Length == 0 && r.SelectedTokens == 1000, "nothing excluded, 1000 tokens selected");

                // Removing the tokenizer makes the run fail again.
                p.SetTokenizer(null);
                ThrowsArg<CupelArgumentException>(() => p.Run(it, b, r), "items", "no tokenizer");
            }
            // The pipeline keeps its own reference: the tokenizer may go first.
            using (var g = Slicer.Greedy())
            using (var p = new Pipeline(null, g, null))
            using (var r = new Report())
            {
                var own = new Tokenizer(Tokenizer.O200kBase);
                p.SetTokenizer(own);
                own.Dispose();
                Equal(p.Run(it, b, r), 0, 1, 2);
                True(r.Included[2].Text(it) == doc.Substring(0, 3647), "cut with the disposed tokenizer's vocabulary");
                ThrowsArg<ObjectDisposedException>(() => p.SetTokenizer(own), "tokenizer", "tokenizer");
            }
        }
    }

    // The text a host sends for cuts of text that is not ASCII: the offsets are
    // UTF-8 byte offsets, and Text decodes the kept bytes to the right string.
    static void ShrinkTextOfCuts()
    {
        var text = string.Concat(Enumerable.Repeat("日本語のテキストを数えます。👋🏽 ", 40)) + "終わり";
        using (var tok = new Tokenizer(Tokenizer.O200kBase))
        {
            foreach (var keep in new[] { Keep.Head, Keep.Tail, Keep.BothEnds })
            using (var it = new Items())
            using (var g = Slicer.Greedy())
            using (var p = new Pipeline(null, g, null))
            using (var r = new Report())
            using (var b = new Budget(30, 30))
            {
                it.PushText(tok, text, 0.5, "Document");
                it.AddVariant(0, 500, 0.01, "unused"); // does not fit
                it.Push(0, 0.1); // a zero-token item without content
                it.SetTruncatable(0, keep, 1);
                p.SetTokenizer(tok);
                Equal(p.Run(it, b, r), 1, 0);
                var cut = tok.Truncate(text, 30, keep);
                var d = r.Included[1];
                var utf8 = System.Text.Encoding.UTF8;
                True(d.Reason == Reason.Truncated && d.Variant == 0 && d.AddedTokens == cut.Tokens, keep + ": " + d);
                True(d.HeadEndByte == utf8.GetByteCount(text.Substring(0, cut.HeadEnd)) &&
                     d.TailStartByte == utf8.GetByteCount(text.Substring(0, cut.TailStart)),
                    keep + ": byte offsets " + d.HeadEndByte + ", " + d.TailStartByte + " vs chars " + cut);
                True(d.Text(it) == cut.Text, keep + ": sends \"" + d.Text(it) + "\", want \"" + cut.Text + "\"");
                var z = r.Included[0];
                True(z.Reason == Reason.ZeroToken && z.HeadEndByte == 0 && z.TailStartByte == 0 && z.Text(it) == null,
                    "the zero-token item without content: " + z);
                foreach (var x in r.Excluded)
                    True(x.Variant == 0 && x.AddedTokens == 0 && x.HeadEndByte == 0 && x.TailStartByte == 0, "excluded " + x);
                // A decision that does not fit the list throws, never garbles.
                var bad = d;
                bad.HeadEndByte = 1; // inside 日
                ThrowsArg<CupelArgumentException>(() => bad.Text(it), "items", "HeadEndByte 1");
                bad.Index = 9;
                ThrowsArg<ArgumentOutOfRangeException>(() => bad.Text(it), "items", "item 9");
                ThrowsArg<ArgumentNullException>(() => d.Text(null), "items", "items is null");
            }
        }
    }

    // Variants and truncation read back through the indexer.
    static void ShrinkReadBack()
    {
        using (var it = MakeItems(new long[] { 100, 200 }, new[] { 0.5, 0.7 }))
        {
            True(it[0].Variants.Count == 0 && it[0].Truncatable == null, "none yet");
            True(it.AddVariant(1, 10, 0.5, "a summary") == 1, "number 1");
            True(it.AddVariant(1, new Variant(0, 1, "[gone]")) == 2, "number 2");
            True(it.AddVariant(1, 300, 0.25, "日本語 ✓ 👋🏽") == 3, "number 3");
            True(it.AddVariant(1, 4, 0.125) == 4, "number 4, without content");
            Equal(it[1].Variants, new Variant(10, 0.5, "a summary"), new Variant(0, 1, "[gone]"),
                new Variant(300, 0.25, "日本語 ✓ 👋🏽"), new Variant(4, 0.125, null));
            foreach (var keep in new[] { Keep.Tail, Keep.BothEnds, Keep.Head })
            {
                it.SetTruncatable(0, keep, 7);
                True(it[0].Truncatable.Equals(new Truncatable(keep, 7)), "truncatable " + it[0].Truncatable);
            }
            it.SetTruncatable(1, new Truncatable(Keep.Tail, 0));
            True(it[1].Truncatable.Value.Keep == Keep.Tail && it[1].Truncatable.Value.MinTokens == 0, "the struct overload");
            it.SetTruncatable(1, Keep.BothEnds); // min_tokens defaults to 0
            True(it[1].Truncatable.Equals(new Truncatable(Keep.BothEnds, 0)), "default minTokens");
            it.ClearTruncatable(0);
            it.ClearTruncatable(0); // a no-op
            True(it[0].Truncatable == null && it[0].Variants.Count == 0, "cleared");

            // Variants count in a plain Slice too: the item does not fit, its variant does.
            using (var small = MakeItems(new long[] { 500 }, new[] { 0.9 }))
            using (var g = Slicer.Greedy())
            using (var r = new Report())
            {
                small.AddVariant(0, 40, 0.5, "short");
                Equal(g.Slice(small, new Budget(100, 100), 0, r), 0);
                True(r.SelectedTokens == 40 && r.Included[0].Variant == 1 && r.Included[0].Text(small) == "short", "the variant");
            }
        }
    }

    // Every bad argument: the binding's exception class, naming the C# parameter;
    // nothing changes.
    static void ShrinkErrors()
    {
        using (var it = MakeItems(new long[] { 10, 20, 30 }, new[] { 0.1, 0.2, 0.3 }))
        {
            it.AddVariant(0, 1, 0.5, "kept");
            it.SetTruncatable(1, Keep.Tail, 2);
            Func<string> snapshot = () => string.Join(" | ", Enumerable.Range(0, it.Count).Select(i =>
                i + ": " + string.Join("; ", it[i].Variants) + " / " + it[i].Truncatable));
            var before = snapshot();
            ThrowsArg<ArgumentException>(() => it.AddVariant(0, 5, 0, "x"), "value", "value is 0 for a variant of item 0; it must be in (0, 1]");
            ThrowsArg<ArgumentException>(() => it.AddVariant(0, 5, 1.5, "x"), "value", "value is 1.5");
            ThrowsArg<ArgumentException>(() => it.AddVariant(0, 5, -0.5, "x"), "value", "value is -0.5");
            ThrowsArg<ArgumentException>(() => it.AddVariant(0, 5, double.NaN, "x"), "value", "value is NaN");
            ThrowsArg<ArgumentException>(() => it.AddVariant(0, 5, double.PositiveInfinity, "x"), "value", "value is inf");
            ThrowsArg<ArgumentException>(() => it.AddVariant(0, -1, 0.5, "x"), "tokens", "tokens is -1");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.AddVariant(3, 5, 0.5, "x"), "index", "index 3 is out of range");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.AddVariant(-1, 5, 0.5, "x"), "index", "index is -1");
            ThrowsArg<ArgumentException>(() => it.AddVariant(0, 5, 0.5, ""), "content", "content of a variant of item 0 is empty");
            ThrowsArg<ArgumentException>(() => it.AddVariant(0, 5, 0.5, "x\uD800"), "content", "lone surrogate");
            ThrowsArg<ArgumentException>(() => it.SetTruncatable(0, (Keep)7, 1), "keep", "keep is 7");
            ThrowsArg<ArgumentException>(() => it.SetTruncatable(0, Keep.Head, -1), "minTokens", "minTokens");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.SetTruncatable(3, Keep.Head, 1), "index", "index 3 is out of range");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.SetTruncatable(-2, Keep.Head, 1), "index", "-2");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.ClearTruncatable(3), "index", "index 3");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.ClearTruncatable(-1), "index", "-1");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.Truncate(4), "count", "count 4 is more than the 3 items the list holds");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.Truncate(-1), "count", "count is -1");
            True(snapshot() == before && it.Count == 3, "a failed call changed the items: " + snapshot());

            // The 256th variant is refused; the 255 stay.
            for (int k = 0; k < 255; k++) it.AddVariant(2, k, 0.5, "v" + k);
            ThrowsArg<ArgumentException>(() => it.AddVariant(2, 1, 0.5, "one too many"), "index", "item 2 has 255 variants already");
            True(it[2].Variants.Count == 255, "255 variants");

            // null and disposed lists (extension methods: the list is the items parameter).
            Items none = null;
            ThrowsArg<ArgumentNullException>(() => none.AddVariant(0, 1, 0.5, "x"), "items", "items is null");
            ThrowsArg<ArgumentNullException>(() => none.SetTruncatable(0, Keep.Head, 1), "items", "items is null");
            ThrowsArg<ArgumentNullException>(() => none.ClearTruncatable(0), "items", "items is null");
            var gone = MakeItems(new long[] { 1 }, new[] { 0.5 });
            gone.Dispose();
            ThrowsArg<ObjectDisposedException>(() => gone.AddVariant(0, 1, 0.5, "x"), "items", "disposed");
            ThrowsArg<ObjectDisposedException>(() => gone.SetTruncatable(0, Keep.Head, 1), "items", "disposed");
            ThrowsArg<ObjectDisposedException>(() => gone.ClearTruncatable(0), "items", "disposed");
            ThrowsArg<ObjectDisposedException>(() => gone.Truncate(0), "Items", "disposed");

            using (var g = Slicer.Greedy())
            using (var b = new Budget(100, 100))
            using (var tok = new Tokenizer(Tokenizer.O200kBase))
            {
                var p = new Pipeline(null, g, null);
                var goneTok = new Tokenizer(Tokenizer.O200kBase);
                goneTok.Dispose();
                ThrowsArg<ObjectDisposedException>(() => p.SetTokenizer(goneTok), "tokenizer", "disposed");
                // A truncatable item without content: the run names it.
                p.SetTokenizer(tok);
                ThrowsArg<CupelArgumentException>(() => p.Run(it, b), "items",
                    "item 1 is truncatable but has no content to cut (Items.SetContent)");
                p.Dispose();
                ThrowsArg<ObjectDisposedException>(() => p.SetTokenizer(tok), "Pipeline", "disposed");
            }
        }
    }

    // Truncate undoes pushes: the items from count on go with every attribute,
    // and kinds only they used are forgotten.
    static void ItemsTruncate()
    {
        using (var it = MakeItems(new long[] { 10, 20, 30 }, new[] { 0.5, 0.6, 0.7 }, new[] { "Message", "ToolOutput", "Document" }))
        {
            it.SetContents(0, new[] { "one", "two", "three" });
            it.AddTag(1, "t");
            it.AddVariant(1, 2, 0.5, "2");
            it.SetTruncatable(1, Keep.Head, 1);
            var keep = it[0].ToString() + it[0].Content;
            it.Truncate(3); // a no-op
            True(it.Count == 3, "Truncate(Count) keeps all");
            it.Truncate(1);
            True(it.Count == 1 && it[0].ToString() + it[0].Content == keep, "one item left, unchanged");
            ThrowsArg<ArgumentOutOfRangeException>(() => { var x = it[1]; }, "index", "index 1 is out of range");
            // Pushed again, index 1 is a new item: nothing of the old one is left,
            // and its kind is spelled as this push spells it.
            it.Push(5, 0.1, "TOOLOUTPUT");
            var fresh = it[1];
            True(fresh.Kind == "TOOLOUTPUT" && fresh.Content == null && fresh.Tags.Count == 0 && fresh.Variants.Count == 0 &&
                fresh.Truncatable == null, "item 1 after a new push: " + fresh);
            it.Truncate(0);
            True(it.Count == 0, "Truncate(0) empties the list");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.Truncate(1), "count", "count 1 is more than the 0 items");
        }
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


    // ---- sessions ----------------------------------------------------------

    // A conversation of n messages of 100 tokens, keyed 1..n, oldest first,
    // every one scored 0.5.
    static Items Turn(int n)
    {
        var it = new Items();
        for (int i = 0; i < n; i++) AddMessage(it, (ulong)(i + 1), 100, 0.5);
        return it;
    }

    // Appends message key (timestamp key, content "message key").
    static void AddMessage(Items it, ulong key, long tokens, double score)
    {
        int i = it.Count;
        it.Push(tokens, score, "Message");
        it.SetContent(i, "message " + key);
        it.SetTimestamp(i, (long)key);
        it.SetKey(i, key);
    }

    static Pipeline SessionPipeline()
    {
        using (var g = Slicer.Greedy())
        using (var chrono = Placer.Chronological())
            return new Pipeline(null, g, chrono);
    }

    // Breakpoints: at most 4, strictly ascending, none at 0 or past the output.
    static void CheckBreakpoints(Breakpoint[] bps, int outputLength)
    {
        True(bps.Length <= Session.MaxBreakpoints, bps.Length + " breakpoints");
        for (int i = 0; i < bps.Length; i++)
        {
            True(bps[i].Items > 0 && bps[i].Items <= outputLength && bps[i].Tokens >= 0 &&
                Enum.IsDefined(typeof(BreakpointMark), bps[i].Mark), "breakpoint " + bps[i]);
            if (i > 0)
                True(bps[i].Items > bps[i - 1].Items && bps[i].Tokens >= bps[i - 1].Tokens,
                    "ascending: " + string.Join("; ", bps));
        }
    }

    // One turn: its output, action and stable prefix.
    static void ExpectTurn(Session s, Items it, Budget b, int[] want, SessionAction action, int items, long tokens)
    {
        var got = s.Run(it, b);
        Equal(got, want);
        True(s.LastAction == action && s.StablePrefix.Equals(new StablePrefix(items, tokens)),
            "action " + s.LastAction + ", stable " + s.StablePrefix + "; want " + action + ", " + items + " items (" +
            tokens + " tokens)");
        CheckBreakpoints(s.Breakpoints, got.Length);
    }

    // The turns of a conversation: first, the same list again, a new message,
    // a volatile one; reset.
    static void SessionTurns()
    {
        using (var p = SessionPipeline())
        using (var s = new Session(p))
        using (var b = new Budget(1000, 1000))
        using (var it = Turn(4))
        {
            True(s.LastAction == SessionAction.First && s.StablePrefix.Equals(new StablePrefix(0, 0)) &&
                s.Breakpoints.Length == 0, "before any run");
            True(s.Slack == 0.2, "default slack " + s.Slack);
            var fresh = p.Run(it, b);
            Equal(fresh, 0, 1, 2, 3);
            // The first run is the pipeline's output; nothing is stable yet.
            ExpectTurn(s, it, b, fresh, SessionAction.First, 0, 0);
            Equal(s.Breakpoints, new Breakpoint(4, 400, BreakpointMark.End));
            // The same list again: the whole output is stable.
            ExpectTurn(s, it, b, fresh, SessionAction.Append, 4, 400);
            // A new message that fits goes last; the old output is the prefix.
            AddMessage(it, 5, 100, 0.5);
            ExpectTurn(s, it, b, new[] { 0, 1, 2, 3, 4 }, SessionAction.Append, 4, 400);
            // A volatile item is placed last, although it is the oldest.
            it.Push(50, 0.5, "Document");
            it.SetContent(5, "open file");
            it.SetTimestamp(5, 0);
            it.SetKey(5, 6);
            it.SetVolatile(5, true);
            True(p.Run(it, b)[0] == 5, "the pipeline places the oldest item first");
            ExpectTurn(s, it, b, new[] { 0, 1, 2, 3, 4, 5 }, SessionAction.Append, 5, 500);
            var bps = s.Breakpoints;
            True(bps[bps.Length - 1].Equals(new Breakpoint(5, 500, BreakpointMark.End)),
                "the end mark is after the last non-volatile item: " + string.Join("; ", bps));
            // Reset: the next run is a first run again.
            s.Reset();
            True(s.LastAction == SessionAction.First && s.StablePrefix.Items == 0 && s.Breakpoints.Length == 0,
                "after a reset");
            ExpectTurn(s, it, b, new[] { 0, 1, 2, 3, 4, 5 }, SessionAction.First, 0, 0);
            // The same list again: the unchanged volatile item is stable too.
            ExpectTurn(s, it, b, new[] { 0, 1, 2, 3, 4, 5 }, SessionAction.Append, 6, 550);
            True(s.Slack == 0.2, "the slack stays after a reset");
        }
    }

    // A volatile item goes last in a first run too.
    static void SessionVolatileFirstRun()
    {
        using (var p = SessionPipeline())
        using (var s = new Session(p))
        using (var b = new Budget(1000, 1000))
        using (var it = Turn(3))
        {
            it.SetVolatile(0, true);
            Equal(p.Run(it, b), 0, 1, 2);
            ExpectTurn(s, it, b, new[] { 1, 2, 0 }, SessionAction.First, 0, 0);
        }
    }

    // A list that outgrows the budget makes the session compact within
    // (1 - slack) of the target, keeping a prefix of the previous output.
    static void SessionCompacts()
    {
        using (var p = SessionPipeline())
        using (var s = new Session(p))
        using (var b = new Budget(1000, 1000))
        using (var it = Turn(10))
        using (var r = new Report())
        {
            ExpectTurn(s, it, b, Enumerable.Range(0, 10).ToArray(), SessionAction.First, 0, 0);
            AddMessage(it, 11, 100, 0.9);
            var got = s.Run(it, b, r);
            True(s.LastAction == SessionAction.Compact, "compacts: " + s.LastAction);
            True(r.SelectedTokens <= 800, "at slack 0.2 at most 800 of 1000 tokens: " + r.SelectedTokens);
            var prefix = s.StablePrefix;
            True(prefix.Items <= got.Length && prefix.Tokens == 100L * prefix.Items &&
                got.Take(prefix.Items).SequenceEqual(Enumerable.Range(0, prefix.Items)), "stable prefix " + prefix);
            True(got.Contains(10), "the new best-scored message is in: " + string.Join(" ", got));
            CheckBreakpoints(s.Breakpoints, got.Length);
        }
    }

    // Duplicate keys fail naming both items and the word key; the failed run
    // changes nothing: the session goes on as one that never saw it.
    static void SessionDuplicateKeys()
    {
        using (var p = SessionPipeline())
        using (var clean = new Session(p))
        using (var failed = new Session(p))
        using (var b = new Budget(1000, 1000))
        using (var it = Turn(3))
        using (var dup = Turn(4))
        using (var r = new Report())
        {
            foreach (var s in new[] { clean, failed })
            {
                ExpectTurn(s, it, b, new[] { 0, 1, 2 }, SessionAction.First, 0, 0);
                ExpectTurn(s, it, b, new[] { 0, 1, 2 }, SessionAction.Append, 3, 300);
            }
            dup.SetKey(3, 1);
            var e = ThrowsArg<ArgumentException>(() => failed.Run(dup, b, r), "items", "items 0 and 3");
            True(e.Message.Contains("key") && e is CupelArgumentException &&
                ((CupelArgumentException)e).Status == Status.InvalidArgument, "names the key: " + e.Message);
            True(failed.LastAction == SessionAction.Append && failed.StablePrefix.Equals(new StablePrefix(3, 300)) &&
                failed.Breakpoints.SequenceEqual(clean.Breakpoints), "the failed run changed the session");
            Equal(p.Run(dup, b), 0, 1, 2, 3); // the pipeline ignores keys
            AddMessage(it, 4, 100, 0.5);
            foreach (var s in new[] { clean, failed })
                ExpectTurn(s, it, b, new[] { 0, 1, 2, 3 }, SessionAction.Append, 3, 300);
            Equal(failed.Breakpoints, clean.Breakpoints);
        }
    }

    // The slack is in [0, 1); a bad one throws and changes nothing.
    static void SessionSlack()
    {
        using (var p = SessionPipeline())
        using (var s = new Session(p))
        {
            foreach (var bad in new[] { 1, -0.1, double.NaN, double.PositiveInfinity, 1.5 })
            {
                var e = ThrowsArg<ArgumentException>(() => s.Slack = bad, "value", "the slack must be in [0, 1)");
                True(e is CupelArgumentException && ((CupelArgumentException)e).NativeMessage.Contains("fraction"),
                    "the library's message names fraction: " + e.Message);
                True(s.Slack == 0.2, "Slack = " + bad + " failed but the slack is " + s.Slack);
            }
            foreach (var good in new[] { 0, 0.35, 0.999 })
            {
                s.Slack = good;
                True(s.Slack == good, "slack " + s.Slack + ", set " + good);
            }
        }
    }

    // A session keeps its own copy of the pipeline.
    static void SessionOutlivesItsPipeline()
    {
        using (var b = new Budget(300, 250))
        using (var it = Turn(3))
        {
            var p = SessionPipeline();
            var want = p.Run(it, b);
            True(want.Length == 2, "the pipeline's output " + string.Join(" ", want));
            using (var s = new Session(p))
            {
                p.Dispose();
                ThrowsArg<ObjectDisposedException>(() => new Session(p), "pipeline", "pipeline");
                ExpectTurn(s, it, b, want, SessionAction.First, 0, 0);
                ExpectTurn(s, it, b, want, SessionAction.Append, 2, 200);
            }
        }
    }

    // A session run's report: Deferred for an item the pipeline takes but the
    // session leaves out, and the JSON's "session" object.
    static void SessionReport()
    {
        using (var p = SessionPipeline())
        using (var s = new Session(p))
        using (var small = new Budget(300, 250))
        using (var large = new Budget(1000, 1000))
        using (var it = new Items())
        using (var r = new Report())
        {
            AddMessage(it, 1, 100, 0.9);
            AddMessage(it, 2, 100, 0.8);
            AddMessage(it, 3, 150, 0.1);
            ExpectTurn(s, it, small, new[] { 0, 1 }, SessionAction.First, 0, 0);
            // A larger budget: the pipeline would take item 2 now, but it was
            // in the last list and left out, so the session defers it.
            True(p.Run(it, large).Length == 3, "the pipeline takes all three");
            Equal(s.Run(it, large, r), 0, 1);
            True(s.LastAction == SessionAction.Append, "appends: " + s.LastAction);
            var ex = r.Excluded;
            True(ex.Length == 1 && ex[0].Index == 2 && ex[0].Reason == Reason.Deferred && ex[0].Reason.Name() == "Deferred",
                "excluded " + string.Join(", ", ex));
            Equal(r.Included.Select(d => d.Index), 0, 1);
            var json = r.Json(it);
            var bps = s.Breakpoints;
            True(bps.Length == 1, "one breakpoint: " + string.Join("; ", bps));
            foreach (var fragment in new[] {
                "\"session\":{", "\"action\":\"" + SessionAction.Append.Name() + "\"", "\"stablePrefixItems\":2",
                "\"stablePrefixTokens\":200",
                "\"breakpoints\":[{\"at\":\"" + bps[0].Mark.Name() + "\",\"items\":" + bps[0].Items + ",\"tokens\":" +
                    bps[0].Tokens + "}]",
                "\"reason\":\"Deferred\"" })
                True(json.Contains(fragment), "the JSON lacks " + fragment + ": " + json);
            // A pipeline run's report has no session object.
            p.Run(it, large, r);
            True(!r.Json(it).Contains("\"session\""), "a pipeline run's JSON has a session object");
        }
    }

    // Keys and volatile flags: set one by one or by column, read back.
    static void SessionItemIdentity()
    {
        using (var it = MakeItems(new long[] { 1, 2, 3 }, new[] { 0.5, 0.5, 0.5 }))
        {
            True(it[0].Key == 0 && !it[0].Volatile, "no key, not volatile by default");
            it.SetKey(0, ulong.MaxValue);
            it.SetVolatile(0, true);
            it.SetKey(2, 7);
            True(it[0].Key == ulong.MaxValue && it[0].Volatile && it[2].Key == 7 && !it[2].Volatile && it[1].Key == 0,
                "the setters read back");
            it.SetKeys(1, new ulong[] { 11, 12 });
            it.SetVolatileMany(0, new[] { false, true, true });
            Equal(Enumerable.Range(0, 3).Select(i => it[i].Key), ulong.MaxValue, 11UL, 12UL);
            Equal(Enumerable.Range(0, 3).Select(i => it[i].Volatile), false, true, true);
            it.SetKeys(3, new ulong[0]);
            it.SetVolatileMany(0, new bool[0]);
            // Out of range and null: nothing is set.
            ThrowsArg<ArgumentOutOfRangeException>(() => it.SetKey(3, 1), "index", "3");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.SetVolatile(-1, true), "index", "-1");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.SetKeys(2, new ulong[] { 5, 6 }), "first", "");
            ThrowsArg<ArgumentOutOfRangeException>(() => it.SetVolatileMany(-1, new[] { true }), "first", "-1");
            ThrowsArg<ArgumentNullException>(() => it.SetKeys(0, null), "keys", "keys");
            ThrowsArg<ArgumentNullException>(() => it.SetVolatileMany(0, null), "isVolatile", "isVolatile");
            True(it[2].Key == 12, "a failed SetKeys set a key");
            it.Dispose();
            ThrowsArg<ObjectDisposedException>(() => it.SetKey(0, 1), "Items", "Items");
            ThrowsArg<ObjectDisposedException>(() => it.SetVolatile(0, true), "Items", "Items");
        }
    }

    // Disposed and null: ObjectDisposedException naming the Session (or the
    // argument), ArgumentNullException for null arguments; Dispose twice is
    // a no-op.
    static void SessionDisposedAndNull()
    {
        using (var p = SessionPipeline())
        using (var it = Turn(2))
        using (var b = new Budget(1000, 1000))
        {
            var s = new Session(p);
            var goneReport = new Report();
            goneReport.Dispose();
            ThrowsArg<ObjectDisposedException>(() => s.Run(it, b, goneReport), "report", "report");
            ThrowsArg<ArgumentNullException>(() => s.Run(null, b), "items", "items");
            ThrowsArg<ArgumentNullException>(() => s.Run(it, null), "budget", "budget");
            ThrowsArg<ArgumentNullException>(() => new Session(null), "pipeline", "pipeline");
            True(s.LastAction == SessionAction.First, "the refused runs changed nothing");
            s.Dispose();
            s.Dispose();
            ThrowsArg<ObjectDisposedException>(() => s.Run(it, b), "Session", "Session");
            ThrowsArg<ObjectDisposedException>(() => s.Slack = 0.1, "Session", "Session");
            ThrowsArg<ObjectDisposedException>(() => { var x = s.Slack; }, "Session", "Session");
            ThrowsArg<ObjectDisposedException>(() => { var x = s.StablePrefix; }, "Session", "Session");
            ThrowsArg<ObjectDisposedException>(() => { var x = s.LastAction; }, "Session", "Session");
            ThrowsArg<ObjectDisposedException>(() => { var x = s.Breakpoints; }, "Session", "Session");
            ThrowsArg<ObjectDisposedException>(() => s.Reset(), "Session", "Session");
        }
    }

    // The names of actions and marks are the JSON report's; the numbers the C ABI's.
    static void SessionNames()
    {
        Equal(new[] { SessionAction.First, SessionAction.Append, SessionAction.Compact, (SessionAction)7 }.Select(a => a.Name()),
            "first", "append", "compact", "unknown");
        Equal(new[] { BreakpointMark.Pinned, BreakpointMark.Compaction, BreakpointMark.Stable, BreakpointMark.End }
            .Select(m => m.Name()), "pinned", "compaction", "stable", "end");
        Equal(new[] { (int)SessionAction.First, (int)SessionAction.Append, (int)SessionAction.Compact,
            (int)BreakpointMark.End }, 0, 1, 2, 3);
        True((int)Reason.Deferred == 19 && Reason.Deferred.Name() == "Deferred", "Reason.Deferred");
        True(new StablePrefix(2, 250).ToString() == "2 items (250 tokens)", "StablePrefix.ToString");
        True(new Breakpoint(1, 200, BreakpointMark.Pinned).ToString() == "pinned after 1 items (200 tokens)",
            "Breakpoint.ToString");
    }

    // Sessions dropped undisposed are freed by their finalizers.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static void ForgetSessions(Pipeline p, Items it, Budget b)
    {
        for (int i = 0; i < 100; i++) new Session(p).Run(it, b);
    }

    static void SessionFinalizers()
    {
        using (var p = SessionPipeline())
        using (var it = Turn(2))
        using (var b = new Budget(1000, 1000))
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            long before = Library.LiveHandles;
            ForgetSessions(p, it, b);
            for (int tries = 0; tries < 20 && Library.LiveHandles > before; tries++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            long left = Library.LiveHandles - before;
            // Mono's conservative stack scan may keep the last one alive.
            True(left <= 1, left + " of 100 forgotten sessions still live");
        }
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
            new KeyValuePair<string, Action>("ReadBack", ReadBack),
            new KeyValuePair<string, Action>("ReasonNames", ReasonNames),
            new KeyValuePair<string, Action>("NullArguments", NullArguments),
            new KeyValuePair<string, Action>("LoneSurrogates", LoneSurrogates),
            new KeyValuePair<string, Action>("NegativeIndices", NegativeIndices),
            new KeyValuePair<string, Action>("DisposedArguments", DisposedArguments),
            new KeyValuePair<string, Action>("ConcurrentSlicing", ConcurrentSlicing),
            new KeyValuePair<string, Action>("TokenizerCounts", TokenizerCounts),
            new KeyValuePair<string, Action>("TokenizerTruncate", TokenizerTruncate),
            new KeyValuePair<string, Action>("TokenizerFromTiktoken", TokenizerFromTiktoken),
            new KeyValuePair<string, Action>("TokenizerErrors", TokenizerErrors),
            new KeyValuePair<string, Action>("PushFromText", PushFromText),
            new KeyValuePair<string, Action>("ConcurrentCounting", ConcurrentCounting),
            new KeyValuePair<string, Action>("ShrinkScenario", ShrinkScenario),
            new KeyValuePair<string, Action>("ShrinkTextOfCuts", ShrinkTextOfCuts),
            new KeyValuePair<string, Action>("ShrinkReadBack", ShrinkReadBack),
            new KeyValuePair<string, Action>("ShrinkErrors", ShrinkErrors),
            new KeyValuePair<string, Action>("ItemsTruncate", ItemsTruncate),
            new KeyValuePair<string, Action>("SessionTurns", SessionTurns),
            new KeyValuePair<string, Action>("SessionVolatileFirstRun", SessionVolatileFirstRun),
            new KeyValuePair<string, Action>("SessionCompacts", SessionCompacts),
            new KeyValuePair<string, Action>("SessionDuplicateKeys", SessionDuplicateKeys),
            new KeyValuePair<string, Action>("SessionSlack", SessionSlack),
            new KeyValuePair<string, Action>("SessionOutlivesItsPipeline", SessionOutlivesItsPipeline),
            new KeyValuePair<string, Action>("SessionReport", SessionReport),
            new KeyValuePair<string, Action>("SessionItemIdentity", SessionItemIdentity),
            new KeyValuePair<string, Action>("SessionDisposedAndNull", SessionDisposedAndNull),
            new KeyValuePair<string, Action>("SessionNames", SessionNames),
            new KeyValuePair<string, Action>("SessionFinalizers", SessionFinalizers),
            new KeyValuePair<string, Action>("FinalizersFreeForgottenHandles", FinalizersFreeForgottenHandles),
        };
        tests.AddRange(PolicyTests);
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
