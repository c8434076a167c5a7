// Tests of policies as data, presets, policy sensitivity, report analytics,
// tracing and the one-call path (Policies.cs); run with CupelTests.cs.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Runtime.Serialization;
using System.Runtime.Serialization.Json;
using System.Text;
using System.Threading;
using Cupel;

static partial class CupelTests
{
    // ---- shared data ---------------------------------------------------------

    const string RecencyPolicy = "{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"slicerType\":\"greedy\",\"placerType\":\"chronological\"}";

    // The contract's fixture: tokens 100/200/50, scores 0.9/0.5/0.1, kinds
    // Message/Document/ToolOutput, contents alpha/beta/gamma, timestamps 1000/2000/3000.
    static Items Fixture()
    {
        var it = new Items();
        it.PushMany(new long[] { 100, 200, 50 }, new[] { 0.9, 0.5, 0.1 }, new[] { "Message", "Document", "ToolOutput" });
        it.SetContents(0, new[] { "alpha", "beta", "gamma" });
        it.SetTimestamps(0, new long[] { 1000, 2000, 3000 });
        return it;
    }

    static Pipeline RecencyPipeline()
    {
        using (var r = Scorer.Recency())
        using (var g = Slicer.Greedy())
        using (var c = Placer.Chronological())
            return new Pipeline(r, g, c);
    }

    static KeyValuePair<string, Pipeline> Pair(string label, Pipeline p) { return new KeyValuePair<string, Pipeline>(label, p); }

    [DataContract]
    sealed class PolicyDoc
    {
        [DataMember(Name = "scorers")] public ScorerDoc[] Scorers;
        [DataMember(Name = "slicerType")] public string SlicerType;
        [DataMember(Name = "placerType")] public string PlacerType;
        [DataMember(Name = "knapsackBucketSize")] public long? KnapsackBucketSize;
        [DataMember(Name = "deduplicationEnabled")] public bool DeduplicationEnabled;
        [DataMember(Name = "overflowStrategy")] public string OverflowStrategy;
        [DataMember(Name = "name")] public string Name;
        [DataMember(Name = "tokenizer")] public string Tokenizer;
    }

    [DataContract]
    sealed class ScorerDoc
    {
        [DataMember(Name = "type")] public string Type;
        [DataMember(Name = "weight")] public double Weight;
    }

    static PolicyDoc ReadPolicy(string json)
    {
        using (var s = new MemoryStream(Encoding.UTF8.GetBytes(json)))
            return (PolicyDoc)new DataContractJsonSerializer(typeof(PolicyDoc)).ReadObject(s);
    }

    // ---- policies as JSON ----------------------------------------------------

    static void PolicyJson()
    {
        const string doc = "{\"scorers\":[{\"type\":\"recency\",\"weight\":3},{\"type\":\"kind\",\"weight\":1}]," +
            "\"slicerType\":\"knapsack\",\"knapsackBucketSize\":10,\"placerType\":\"uShaped\",\"name\":\"mine\"}";
        using (var it = Fixture())
        using (var b = new Budget(300, 250))
        using (var p = Pipeline.FromJson(doc))
        {
            var text = p.ToJson();
            var read = ReadPolicy(text);
            True(read.SlicerType == "knapsack" && read.KnapsackBucketSize == 10 && read.PlacerType == "uShaped" &&
                read.Name == "mine" && read.DeduplicationEnabled && read.OverflowStrategy == "throw", "settings written: " + text);
            Equal(read.Scorers.Select(s => s.Type + " " + s.Weight), "recency 3", "kind 1");
            using (var back = Pipeline.FromJson(text))
            {
                True(back.ToJson() == text, "written, read and written again: the same text");
                Equal(back.Run(it, b), p.Run(it, b));
            }
            // The same pipeline built by hand selects the same.
            using (var rec = Scorer.Recency())
            using (var kind = Scorer.Kind())
            using (var comp = Scorer.Composite(new KeyValuePair<Scorer, double>(rec, 3), new KeyValuePair<Scorer, double>(kind, 1)))
            using (var ks = Slicer.Knapsack(10))
            using (var u = Placer.UShaped())
            using (var hand = new Pipeline(comp, ks, u))
                Equal(hand.Run(it, b), p.Run(it, b));
        }
        // Whitespace, unknown keys and case-insensitive enum values are fine.
        using (var p = Pipeline.FromJson("  {\"scorers\":[{\"type\":\"RECENCY\",\"weight\":1}],\"extra\":[1,2]} "))
            True(ReadPolicy(p.ToJson()).Scorers[0].Type == "recency", "enum values are case-insensitive");

        ThrowsArg<ArgumentNullException>(() => Pipeline.FromJson(null), "json", "json is null");
        ThrowsArg<ArgumentException>(() => Pipeline.FromJson(""), "json", "json is empty");
        ThrowsArg<ArgumentException>(() => Pipeline.FromJson("null"), "json", "json $");
        ThrowsArg<ArgumentException>(() => Pipeline.FromJson("{\"scorers\":"), "json", "malformed JSON at line 1 column");
        ThrowsArg<ArgumentException>(() => Pipeline.FromJson("{\"scorers\":[{\"type\":\"recency\",\"weight\":-1}]}"), "json",
            "json $.scorers[0].weight: must be positive and finite (got -1)");
        ThrowsArg<ArgumentException>(() => Pipeline.FromJson("{\"scorers\":[{\"type\":\"nope\",\"weight\":1}]}"), "json",
            "recency");
        ThrowsArg<ArgumentException>(() => Pipeline.FromJson("{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"knapsackBucketSize\":5}"),
            "json", "$.knapsackBucketSize: only valid when slicerType is");
        ThrowsArg<ArgumentException>(() => Pipeline.FromJson("{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"quotas\":" +
            "[{\"kind\":\"Message\",\"minPercent\":80,\"maxPercent\":20}]}"), "json", "$.quotas[0]: minPercent 80 exceeds maxPercent 20");
        ThrowsArg<ArgumentException>(() => Pipeline.FromJson("{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"name\":\"\uD800\"}"),
            "json", "lone surrogate");
        var e = ThrowsArg<ArgumentException>(() => Pipeline.FromJson("[]"), "json", "json $");
        True(((CupelArgumentException)e).Status == Status.InvalidArgument, "InvalidArgument");

        // A pipeline that cannot be written without loss: Unsupported.
        using (var g = Slicer.Greedy())
        using (var cq = Slicer.CountQuota(g, new[] { new CountQuota("Message", 0, 1) }, Scarcity.Degrade))
        using (var q = Slicer.Quota(cq, new[] { new Quota("Message", 0, 50) }))
        using (var p = new Pipeline(null, q, null))
            Throws(() => p.ToJson(), Status.Unsupported, "");

        // A pipeline without a scorer is written as one "given" entry.
        using (var g = Slicer.Greedy())
        using (var p = new Pipeline(null, g, null))
            True(ReadPolicy(p.ToJson()).Scorers.Single().Type == "given", "no scorer: given");

        var disposed = RecencyPipeline();
        disposed.Dispose();
        ThrowsArg<ObjectDisposedException>(() => disposed.ToJson(), "pipeline", "disposed");
        ThrowsArg<ArgumentNullException>(() => ((Pipeline)null).ToJson(), "pipeline", "pipeline is null");
    }

    static void BudgetJson()
    {
        using (var b = Budget.FromJson("{\"maxTokens\":1000,\"targetTokens\":800,\"outputReserve\":100," +
            "\"reservedSlots\":{\"Message\":50},\"estimationSafetyMarginPercent\":5}"))
        {
            var text = b.ToJson();
            True(text.Contains("\"maxTokens\": 1000") && text.Contains("\"targetTokens\": 800") &&
                text.Contains("\"outputReserve\": 100") && text.Contains("\"message\": 50"), "every field written: " + text);
            using (var back = Budget.FromJson(text))
                True(back.ToJson() == text, "round trip");
            long max, target;
            b.Effective(0, out max, out target);
            using (var hand = new Budget(1000, 800))
            {
                hand.SetOutputReserve(100);
                hand.Reserve("Message", 50);
                hand.SetSafetyMargin(5);
                long hmax, htarget;
                hand.Effective(0, out hmax, out htarget);
                True(max == hmax && target == htarget, "the same effective budget as built by hand");
                True(hand.ToJson() == text, "the same document as built by hand");
            }
        }
        ThrowsArg<ArgumentNullException>(() => Budget.FromJson(null), "json", "json is null");
        ThrowsArg<ArgumentException>(() => Budget.FromJson(""), "json", "json");
        ThrowsArg<ArgumentException>(() => Budget.FromJson("{\"targetTokens\":1}"), "json", "json $.maxTokens");
        ThrowsArg<ArgumentException>(() => Budget.FromJson("{\"maxTokens\":100,\"targetTokens\":250}"), "json",
            "json $.targetTokens: 250 exceeds maxTokens 100");
        ThrowsArg<ArgumentException>(() => Budget.FromJson("{\"maxTokens\":-1,\"targetTokens\":0}"), "json", "json $");
        ThrowsArg<ArgumentException>(() => Budget.FromJson("{\"maxTokens\":10,\"targetTokens\":5,\"outputReserve\":-1}"), "json",
            "json $.outputReserve");
        ThrowsArg<ArgumentException>(() => Budget.FromJson("{\"maxTokens\":1.5,\"targetTokens\":1}"), "json",
            "json $.maxTokens: expected an integer");
        var disposed = new Budget(1, 1);
        disposed.Dispose();
        ThrowsArg<ObjectDisposedException>(() => disposed.ToJson(), "budget", "disposed");
        ThrowsArg<ArgumentNullException>(() => ((Budget)null).ToJson(), "budget", "budget is null");
    }

    // docs/policies.md's preset table.
    static readonly string[][] PresetTable = {
        new[] { "Chat", "recency 3, kind 1", "greedy", "chronological" },
        new[] { "CodeReview", "kind 2, priority 2, recency 1", "greedy", "chronological" },
        new[] { "Rag", "reflexive 3, kind 1", "greedy", "uShaped" },
        new[] { "DocumentQa", "kind 2, reflexive 2, priority 1", "knapsack", "uShaped" },
        new[] { "ToolUse", "kind 2, recency 2, priority 1", "greedy", "chronological" },
        new[] { "LongRunning", "recency 3, frequency 1, kind 1", "greedy", "chronological" },
        new[] { "Debugging", "priority 3, kind 2, recency 1", "greedy", "chronological" },
        new[] { "AgentLoop", "recency 3, kind 2, reflexive 1", "greedy", "chronological" },
    };

    static void Presets()
    {
        Equal(Pipeline.PresetNames, PresetTable.Select(row => row[0]).ToArray());
        foreach (var row in PresetTable)
        {
            using (var p = Pipeline.Preset(row[0]))
            {
                var doc = ReadPolicy(p.ToJson());
                var scorers = string.Join(", ", doc.Scorers.Select(s => s.Type + " " + s.Weight));
                True(scorers == row[1], row[0] + ": scorers " + scorers + ", not " + row[1]);
                True(doc.SlicerType == row[2] && doc.PlacerType == row[3], row[0] + ": " + doc.SlicerType + ", " + doc.PlacerType);
                True(doc.Name == row[0] && doc.DeduplicationEnabled && doc.OverflowStrategy == "throw", row[0] + ": name and defaults");
                if (row[2] == "knapsack") True(doc.KnapsackBucketSize == 100, "bucket 100");
            }
            using (var lower = Pipeline.Preset(row[0].ToLowerInvariant()))
            using (var upper = Pipeline.Preset(row[0].ToUpperInvariant()))
                True(lower.ToJson() == upper.ToJson(), "names are case-insensitive");
        }
        using (var p = Pipeline.Preset("AgentLoop"))
            True(ReadPolicy(p.ToJson()).Tokenizer == "o200k_base", "AgentLoop counts with o200k_base");
        // Chat is recency 3 + kind 1, greedy, chronological: as built by hand.
        using (var it = Fixture())
        using (var b = new Budget(300, 250))
        using (var chat = Pipeline.Preset("Chat"))
        using (var rec = Scorer.Recency())
        using (var kind = Scorer.Kind())
        using (var comp = Scorer.Composite(new KeyValuePair<Scorer, double>(rec, 3), new KeyValuePair<Scorer, double>(kind, 1)))
        using (var g = Slicer.Greedy())
        using (var c = Placer.Chronological())
        using (var hand = new Pipeline(comp, g, c))
            Equal(chat.Run(it, b), hand.Run(it, b));
        ThrowsArg<ArgumentException>(() => Pipeline.Preset("Nope"), "name", "the presets are Chat, CodeReview");
        ThrowsArg<ArgumentException>(() => Pipeline.Preset(""), "name", "name");
        ThrowsArg<ArgumentNullException>(() => Pipeline.Preset(null), "name", "name is null");
    }

    // ---- policy sensitivity --------------------------------------------------

    static void Sensitivity()
    {
        // Two items with the same content: two diffs, by index.
        using (var it = new Items())
        using (var b = new Budget(100, 100))
        using (var rec = Scorer.Recency())
        using (var g = Slicer.Greedy())
        using (var c = Placer.Chronological())
        using (var recency = new Pipeline(rec, g, c, deduplication: false))
        using (var given = new Pipeline(null, g, c, deduplication: false))
        {
            it.PushMany(new long[] { 60, 60, 40 }, new[] { 0.9, 0.8, 0.1 }, new[] { "Message", "Message", "Message" });
            it.SetContents(0, new[] { "same", "same", "other" });
            it.SetTimestamps(0, new long[] { 1, 2, 3 });
            var s = PolicySensitivity.Compare(new[] { Pair("given", given), Pair("recency", recency) }, it, b);
            Equal(s.Variants.Select(v => v.Label), "given", "recency");
            // given: 0 (0.9) then 2 fits; recency: 2 (newest), 1.
            Equal(s.Variants[0].Report.Included.Select(e => e.Content), "same", "other");
            Equal(s.Variants[1].Report.Included.Select(e => e.Content), "same", "other");
            Equal(s.Diffs.Select(d => d.Index), 0, 1);
            Equal(s.Diffs.Select(d => d.Content), "same", "same");
            True(s.Diffs[0].IncludedBy("given") && !s.Diffs[0].IncludedBy("recency"), "item 0: given only");
            True(!s.Diffs[1].IncludedBy("given") && s.Diffs[1].IncludedBy("recency"), "item 1: recency only");
            Equal(s.Diffs[0].Statuses.Select(x => x.ToString()), "given Included", "recency Excluded");
            var excluded = s.Variants[0].Report.Excluded.Single();
            True(excluded.Reason == Reason.BudgetExceeded && excluded.ReasonName == "BudgetExceeded" && excluded.Tokens == 60 &&
                excluded.Kind == "Message" && excluded.Timestamp.Value.ToUnixTimeMilliseconds() == 2, "excluded entry " + excluded);
            True(s.Variants[0].Report.TotalCandidates == 3 && s.Variants[0].Report.TotalTokensConsidered == 160, "totals");
            True(Math.Abs(s.Variants[0].Report.BudgetUtilization - 1.0) < 1e-12 && s.Variants[0].Report.KindDiversity == 1 &&
                s.Variants[0].Report.TimestampCoverage == 1.0, "analytics of a variant");
            True(s.Json.StartsWith("{") && s.Json.Contains("\"diffs\""), "the library's JSON");
            // A dictionary or any sequence of pairs; identical policies: no diffs.
            using (var again = new Pipeline(rec, g, c, deduplication: false))
                True(PolicySensitivity.Compare(new Dictionary<string, Pipeline> { { "x", recency }, { "y", again } }, it, b)
                    .Diffs.Count == 0, "the same policy twice: no diffs");

            ThrowsArg<ArgumentException>(() => PolicySensitivity.Compare(new[] { Pair("a", recency) }, it, b), "variants",
                "at least two variants");
            ThrowsArg<ArgumentException>(() => PolicySensitivity.Compare(new KeyValuePair<string, Pipeline>[0], it, b), "variants",
                "at least two variants");
            ThrowsArg<ArgumentNullException>(() => PolicySensitivity.Compare(null, it, b), "variants", "variants is null");
            ThrowsArg<ArgumentNullException>(() => PolicySensitivity.Compare(new[] { Pair(null, recency), Pair("b", given) }, it, b),
                "variants", "variants[0].Key");
            ThrowsArg<ArgumentNullException>(() => PolicySensitivity.Compare(new[] { Pair("a", recency), Pair("b", null) }, it, b),
                "variants", "variants[1].Value");
            ThrowsArg<ArgumentException>(() => PolicySensitivity.Compare(new[] { Pair("a", recency), Pair("\uDC00", given) }, it, b),
                "variants", "variants[1].Key");
            ThrowsArg<ArgumentNullException>(() => PolicySensitivity.Compare(new[] { Pair("a", recency), Pair("b", given) }, null, b),
                "items", "items is null");
            ThrowsArg<ArgumentNullException>(() => PolicySensitivity.Compare(new[] { Pair("a", recency), Pair("b", given) }, it, null),
                "budget", "budget is null");
            var gone = RecencyPipeline();
            gone.Dispose();
            ThrowsArg<ObjectDisposedException>(() => PolicySensitivity.Compare(new[] { Pair("a", recency), Pair("b", gone) }, it, b),
                "variants", "disposed");
            // A variant whose run fails fails the call, naming it.
            it.SetPinnedMany(0, new[] { true, true, false });
            Throws(() => PolicySensitivity.Compare(new[] { Pair("a", recency), Pair("b", given) }, it, b), Status.InvalidArgument,
                "variant 0 (\"a\") failed: the pinned items need 120 tokens");
        }
        // Many items: the buffer grows as the library asks.
        using (var it = new Items())
        using (var b = new Budget(5000, 5000))
        using (var recency = RecencyPipeline())
        using (var kind = Pipeline.Preset("Chat"))
        {
            var n = 400;
            it.PushMany(Enumerable.Repeat(20L, n).ToArray(), Enumerable.Repeat(0.5, n).ToArray(),
                Enumerable.Range(0, n).Select(i => i % 3 == 0 ? "Document" : "Message").ToArray());
            it.SetContents(0, Enumerable.Range(0, n).Select(i => new string('x', 3000) + i).ToArray());
            it.SetTimestamps(0, Enumerable.Range(0, n).Select(i => (long)i).ToArray());
            var s = PolicySensitivity.Compare(new[] { Pair("recency", recency), Pair("chat", kind) }, it, b);
            True(s.Variants.All(v => v.Report.Included.Count == 250), "250 included by each");
            True(s.Json.Length > 2 * 400 * 3000, "the whole text");
        }
    }

    // ---- analytics -----------------------------------------------------------

    static void Analytics()
    {
        using (var it = Fixture())
        using (var p = RecencyPipeline())
        using (var r = new Report())
        {
            // Before any run: all 0.
            True(r.BudgetUtilization == 0 && r.KindDiversity(it) == 0 && r.TimestampCoverage(it) == 0, "an empty report: 0");
            using (var b = new Budget(300, 250))
                p.Run(it, b, r);
            True(Math.Abs(r.BudgetUtilization - 250.0 / 300) < 1e-12, "utilization " + r.BudgetUtilization);
            True(r.KindDiversity(it) == 2 && r.TimestampCoverage(it) == 1.0, "2 kinds, all timestamped");
            True(r.Json(it).Contains("\"analytics\":{\"budgetUtilization\":0.8333333333333334,\"kindDiversity\":2," +
                "\"timestampCoverage\":1.0}"), "the JSON's analytics: " + r.Json(it));
            // A zero budget: utilization 0, not NaN.
            using (var zero = new Budget(0, 0))
                p.Run(it, zero, r);
            True(r.BudgetUtilization == 0 && r.KindDiversity(it) == 0 && r.TimestampCoverage(it) == 0, "zero budget: 0");
            ThrowsArg<ArgumentNullException>(() => r.KindDiversity(null), "items", "items is null");
            ThrowsArg<ArgumentNullException>(() => r.TimestampCoverage(null), "items", "items is null");
            // A list that does not hold the report's items.
            using (var b = new Budget(300, 250))
                p.Run(it, b, r);
            using (var few = new Items())
            {
                ThrowsArg<ArgumentException>(() => r.KindDiversity(few), "items", "items");
                ThrowsArg<ArgumentException>(() => r.TimestampCoverage(few), "items", "items");
            }
        }
        // Kinds compare case-insensitively; items without timestamps count as uncovered.
        using (var it = new Items())
        using (var g = Slicer.Greedy())
        using (var p = new Pipeline(null, g, null))
        using (var b = new Budget(1000, 1000))
        using (var r = new Report())
        {
            it.PushMany(new long[] { 10, 10, 10, 10 }, new[] { 0.5, 0.5, 0.5, 0.5 }, new[] { "Message", "message", "MESSAGE", "Tool" });
            it.SetContents(0, new[] { "a", "b", "c", "d" });
            it.SetTimestamp(0, 5);
            p.Run(it, b, r);
            True(r.KindDiversity(it) == 2, "kinds as they compare: " + r.KindDiversity(it));
            True(r.TimestampCoverage(it) == 0.25, "one of four timestamped");
            True(Math.Abs(r.BudgetUtilization - 0.04) < 1e-12, "40 of 1000");
        }
    }

    // ---- tracing -------------------------------------------------------------

    static List<TraceEvent> Traced(TraceLevel level)
    {
        var events = new List<TraceEvent>();
        using (var it = Fixture())
        using (var b = new Budget(300, 250))
        using (var p = RecencyPipeline())
        {
            p.SetTrace(level, events.Add);
            Equal(p.Run(it, b), 1, 2);
        }
        return events;
    }

    static void TraceLevels()
    {
        True(Traced(TraceLevel.Stages).Count == 6, "6 events at Stages");
        True(Traced(TraceLevel.Exclusions).Count == 7, "7 events at Exclusions");
        var full = Traced(TraceLevel.Full);
        True(full.Count == 9, "9 events at Full");
        Equal(full.Select(e => e.Name), "cupel.stage.classify", "cupel.stage.score", "cupel.stage.deduplicate",
            "cupel.stage.slice", "cupel.exclusion", "cupel.stage.place", "cupel.item.included", "cupel.item.included",
            "cupel.pipeline");
        Equal(full.Select(e => e.Kind), TraceKind.Stage, TraceKind.Stage, TraceKind.Stage, TraceKind.Stage,
            TraceKind.Exclusion, TraceKind.Stage, TraceKind.Included, TraceKind.Included, TraceKind.Pipeline);
        Equal(full.Select(e => e.Stage), "classify", "score", "deduplicate", "slice", "slice", "place", "place", "place", null);
        True(full.All(e => e.Verbosity == "Full"), "verbosity Full");
        True(Traced(TraceLevel.Stages).All(e => e.Verbosity == "StageOnly"), "verbosity StageOnly");

        var slice = full[3];
        True(slice.ItemCountIn == 3 && slice.ItemCountOut == 2 && slice.ExclusionCount == 1 && slice.Item == null &&
            slice.Reason == null && slice.ReasonName == null && slice.ItemKind == null, "the slice span: " + slice);
        True(slice.DurationNanos >= 0 && slice.StartUnixNanos > 1500000000L * 1000000000L, "a start after 2017");
        True(slice.Start.Year >= 2017 && slice.Duration >= TimeSpan.Zero, "as DateTimeOffset and TimeSpan");
        var exclusion = full[4];
        True(exclusion.Item == 0 && exclusion.Reason == Reason.BudgetExceeded && exclusion.ReasonName == "BudgetExceeded" &&
            exclusion.ItemKind == "Message" && exclusion.Tokens == 100 && exclusion.DurationNanos == 0, "the exclusion: " + exclusion);
        var included = full.Where(e => e.Kind == TraceKind.Included).ToList();
        Equal(included.Select(e => e.Item.Value), 1, 2);
        Equal(included.Select(e => e.ItemKind), "Document", "ToolOutput");
        Equal(included.Select(e => e.Tokens), 200L, 50L);
        True(included[1].Score == 1.0 && included[0].Score == 0.5, "included scores");
        var pipeline = full[8];
        True(pipeline.MaxTokens == 300 && pipeline.ItemCountIn == 3 && pipeline.ItemCountOut == 2 &&
            pipeline.ExclusionCount == 1 && pipeline.Stage == null && pipeline.Item == null, "the pipeline span: " + pipeline);
        True(pipeline.StartUnixNanos <= slice.StartUnixNanos, "the pipeline span starts first");
    }

    static void TraceSwitches()
    {
        using (var it = Fixture())
        using (var b = new Budget(300, 250))
        using (var p = RecencyPipeline())
        {
            int n = 0;
            p.SetTrace(TraceLevel.Stages, e => n++);
            p.Run(it, b);
            True(n == 6, "traced");
            p.SetTrace(TraceLevel.Full, null);
            p.Run(it, b);
            True(n == 6, "off");
            // A later SetTrace replaces the handler and its level.
            int m = 0;
            p.SetTrace(TraceLevel.Stages, e => n++);
            p.SetTrace(TraceLevel.Exclusions, e => m++);
            p.Run(it, b);
            True(n == 6 && m == 7, "replaced");
            // A failed run sends nothing.
            it.SetPinnedMany(0, new[] { true, true, false });
            Throws(() => p.Run(it, b), Status.Overflow, "");
            True(m == 7, "a failed run sends nothing");
            ThrowsArg<ArgumentException>(() => p.SetTrace((TraceLevel)3, e => { }), "level", "level is 3");
            p.SetTrace(TraceLevel.Full, null);
        }
        ThrowsArg<ArgumentNullException>(() => ((Pipeline)null).SetTrace(TraceLevel.Stages, e => { }), "pipeline", "pipeline is null");
        var gone = RecencyPipeline();
        gone.Dispose();
        ThrowsArg<ObjectDisposedException>(() => gone.SetTrace(TraceLevel.Stages, e => { }), "pipeline", "disposed");
    }

    sealed class HandlerFailure : Exception
    {
        public HandlerFailure(string m) : base(m) { }
    }

    static void TraceHandlerExceptions()
    {
        using (var it = Fixture())
        using (var b = new Budget(300, 250))
        using (var p = RecencyPipeline())
        {
            int calls = 0;
            p.SetTrace(TraceLevel.Full, e =>
            {
                calls++;
                if (e.Name == "cupel.stage.score") throw new HandlerFailure("from the handler");
            });
            try
            {
                p.Run(it, b);
                throw new Exception("the handler's exception was not thrown");
            }
            catch (HandlerFailure e)
            {
                True(e.Message == "from the handler", "the handler's own exception");
                True(e.StackTrace.Contains("TraceHandlerExceptions"), "its own stack trace: " + e.StackTrace);
            }
            True(calls == 2, "the run's remaining events are skipped: " + calls + " calls");
            // The pipeline still works, and the next run starts afresh.
            calls = 0;
            p.SetTrace(TraceLevel.Full, e => calls++);
            Equal(p.Run(it, b), 1, 2);
            True(calls == 9, "every event of the next run");
            // A handler must not call into the pipeline it traces.
            Exception inner = null;
            p.SetTrace(TraceLevel.Stages, e =>
            {
                try
                {
                    p.SetTrace(TraceLevel.Stages, null);
                }
                catch (Exception x)
                {
                    inner = x;
                    throw;
                }
            });
            try
            {
                p.Run(it, b);
                throw new Exception("no InvalidOperationException");
            }
            catch (InvalidOperationException)
            {
            }
            True(inner is InvalidOperationException, "SetTrace from the handler refused");
            p.SetTrace(TraceLevel.Stages, e => p.Run(it, b));
            try
            {
                p.Run(it, b);
                throw new Exception("no InvalidOperationException");
            }
            catch (InvalidOperationException)
            {
            }
            // Another pipeline may run in the handler (its own trace too).
            using (var other = RecencyPipeline())
            {
                int nested = 0, outer = 0;
                other.SetTrace(TraceLevel.Stages, e => nested++);
                p.SetTrace(TraceLevel.Stages, e =>
                {
                    outer++;
                    if (e.Kind == TraceKind.Pipeline) other.Run(it, b);
                });
                p.Run(it, b);
                True(outer == 6 && nested == 6, "nested traced runs: " + outer + ", " + nested);
                // A nested run's handler failing is the nested run's: the outer run goes on.
                other.SetTrace(TraceLevel.Stages, e => { throw new HandlerFailure("inner"); });
                outer = 0;
                bool caught = false;
                p.SetTrace(TraceLevel.Stages, e =>
                {
                    outer++;
                    if (e.Kind != TraceKind.Pipeline) return;
                    try
                    {
                        other.Run(it, b);
                    }
                    catch (HandlerFailure)
                    {
                        caught = true;
                    }
                });
                p.Run(it, b);
                True(caught && outer == 6, "the inner failure is the inner run's");
            }
        }
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static void TraceWithGarbage(Pipeline p, int[] counter)
    {
        // The handler (a closure) is referenced only by the pipeline.
        p.SetTrace(TraceLevel.Stages, e => Interlocked.Increment(ref counter[0]));
    }

    static void TraceLifetimes()
    {
        using (var it = Fixture())
        using (var b = new Budget(300, 250))
        {
            var counter = new int[1];
            var p = RecencyPipeline();
            TraceWithGarbage(p, counter);
            for (int i = 0; i < 3; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            p.Run(it, b);
            True(counter[0] == 6, "the handler survives collections while the pipeline holds it");
            // A session made now keeps the trace; one made before it was set has none.
            var traced = new Session(p);
            p.SetTrace(TraceLevel.Stages, null);
            using (var untraced = new Session(p))
            {
                untraced.Run(it, b);
                True(counter[0] == 6, "a session made without a trace sends nothing");
            }
            p.Dispose();
            for (int i = 0; i < 3; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            traced.Run(it, b);
            True(counter[0] == 12, "the session keeps its trace after its pipeline is disposed: " + counter[0]);
            traced.Dispose();

            // Many threads run one traced pipeline at once; each run's
            // handler exception is its own.
            using (var shared = RecencyPipeline())
            {
                var events = new int[1];
                shared.SetTrace(TraceLevel.Full, e =>
                {
                    Interlocked.Increment(ref events[0]);
                    if (e.Kind == TraceKind.Pipeline && Thread.CurrentThread.Name == "thrower") throw new HandlerFailure("mine");
                });
                var errors = new Exception[8];
                var threads = Enumerable.Range(0, 8).Select(t => new Thread(() =>
                {
                    try
                    {
                        for (int k = 0; k < 50; k++) shared.Run(it, b);
                    }
                    catch (Exception x)
                    {
                        errors[t] = x;
                    }
                }) { Name = t == 3 ? "thrower" : "runner" }).ToArray();
                foreach (var t in threads) t.Start();
                foreach (var t in threads) t.Join();
                for (int t = 0; t < 8; t++)
                    True(t == 3 ? errors[t] is HandlerFailure : errors[t] == null, "thread " + t + ": " + errors[t]);
                True(events[0] == 7 * 50 * 9 + 9, "every event of every run: " + events[0]);
            }
        }
    }

    static void TraceSessions()
    {
        using (var p = SessionPipeline())
        using (var it = Turn(3))
        using (var b = new Budget(1000, 1000))
        {
            var names = new List<string>();
            p.SetTrace(TraceLevel.Exclusions, e => names.Add(e.Name));
            using (var s = new Session(p))
            {
                s.Run(it, b);
                True(names.Count == 6 && names.Last() == "cupel.pipeline", "a session run traced: " + names.Count);
                s.Dispose();
            }
            // A handler exception in a session run is thrown by Run.
            p.SetTrace(TraceLevel.Stages, e => { throw new HandlerFailure("session"); });
            using (var s = new Session(p))
            {
                try
                {
                    s.Run(it, b);
                    throw new Exception("not thrown");
                }
                catch (HandlerFailure)
                {
                }
                // A session's handler must not call into the session.
                Session self = null;
                p.SetTrace(TraceLevel.Stages, e => self.Reset());
                self = new Session(p);
                try
                {
                    self.Run(it, b);
                    throw new Exception("not thrown");
                }
                catch (InvalidOperationException)
                {
                }
                self.Dispose();
            }
            // A traced pipeline in a sensitivity comparison sends its events.
            int count = 0;
            p.SetTrace(TraceLevel.Stages, e => count++);
            using (var other = RecencyPipeline())
                PolicySensitivity.Compare(new[] { Pair("a", p), Pair("b", other) }, it, b);
            True(count >= 6, "traced in a comparison");
        }
    }

    // ---- the one-call path ---------------------------------------------------

    // The long-hand pipeline on messages: pushed by hand, each attribute given
    // here by the test, and run; the messages it places.
    sealed class LongHand
    {
        public string[] Texts, Kinds;
        public ulong[] Groups;
        public bool[] Pinned;
        public long?[] Priorities;
        public double?[] Relevance;
        public double[] Scores;
        public string Tokenizer = "o200k_base";

        public int[] Run(Pipeline p, Budget b)
        {
            int n = Texts.Length;
            using (var tok = new Tokenizer(Tokenizer))
            using (var it = new Items())
            {
                var tokens = tok.CountMany(Texts);
                it.PushMany(tokens, Scores ?? Enumerable.Repeat(1.0, n).ToArray(), Kinds);
                it.SetContents(0, Texts);
                if (Groups != null) it.SetGroups(0, Groups);
                if (Pinned != null) it.SetPinnedMany(0, Pinned);
                it.SetTimestamps(0, Enumerable.Range(0, n).Select(i => (long)i).ToArray());
                for (int i = 0; i < n; i++)
                {
                    if (Priorities != null && Priorities[i].HasValue) it.SetPriority(i, Priorities[i].Value);
                    if (Relevance != null && Relevance[i].HasValue) it.SetRelevanceHint(i, Relevance[i].Value);
                }
                return p.Run(it, b);
            }
        }
    }

    static int[] IndicesOf(IList<Message> all, Message[] kept)
    {
        var result = new int[kept.Length];
        for (int k = 0; k < kept.Length; k++)
        {
            int at = -1;
            for (int i = 0; i < all.Count; i++)
                if (ReferenceEquals(all[i], kept[k])) at = i;
            True(at >= 0, "a kept message is one of the host's objects");
            result[k] = at;
        }
        return result;
    }

    static Pipeline ChatByHand()
    {
        using (var rec = Scorer.Recency())
        using (var kind = Scorer.Kind())
        using (var comp = Scorer.Composite(new KeyValuePair<Scorer, double>(rec, 3), new KeyValuePair<Scorer, double>(kind, 1)))
        using (var g = Slicer.Greedy())
        using (var c = Placer.Chronological())
            return new Pipeline(comp, g, c);
    }

    // An agent's conversation: a pinned system prompt, turns, a tool call
    // with its result, a message making two parallel calls and their two
    // results, and a document grouped with a note by name.
    static List<Message> AgentConversation()
    {
        return new List<Message> {
            new Message("You are a careful assistant. Answer briefly.", "SystemPrompt") { Pinned = true },
            new Message("Why does the login service return 500 since this morning?"),
            new Message("call: grep -rn refresh_token src/", "ToolCall") { ToolCallId = "c1" },
            new Message("src/auth.rs:88: let refresh_token = cache.get(user)?; // may be stale after the key rotation", "ToolOutput") { ToolCallId = "c1" },
            new Message("call: kubectl logs auth-7f9; call: kubectl get events", "ToolCall") { ToolCallIds = new[] { "c2", "c3" } },
            new Message("auth-7f9: error: token signature invalid (kid=2024-06) at 09:14:03", "ToolOutput") { ToolCallId = "c2" },
            new Message("events: auth-7f9 restarted 4 times; secret auth-keys updated 09:13", "ToolOutput") { ToolCallId = "c3" },
            new Message("Design note: keys rotate monthly; caches must be flushed on rotation.", "Document") { Group = "notes" },
            new Message("The rotation runbook lists the cache flush as step 3.", "Document") { Group = "notes" },
            new Message("The cache was not flushed after the key rotation at 09:13; flush it and restart auth."),
        };
    }

    static void SelectMatchesLongHand()
    {
        var conversation = AgentConversation();
        var texts = conversation.Select(m => m.Text).ToArray();
        var kinds = conversation.Select(m => m.Kind).ToArray();
        var groups = new ulong[] { 0, 0, 1, 1, 2, 2, 2, 3, 3, 0 };
        var pinned = conversation.Select(m => m.Pinned).ToArray();
        var longHand = new LongHand { Texts = texts, Kinds = kinds, Groups = groups, Pinned = pinned };
        True(Context.Groups(conversation.ToArray()).SequenceEqual(groups), "groups as the rules number them");
        using (var chat = ChatByHand())
        {
            foreach (var max in new long[] { 0, 12, 40, 60, 80, 100, 130, 1000 })
            {
                using (var b = new Budget(max, max))
                {
                    int[] want;
                    try
                    {
                        want = longHand.Run(chat, b);
                    }
                    catch (Exception e) when (e is ICupelError)
                    {
                        // The pinned prompt alone exceeds the smallest
                        // budgets: the same error, said of the messages.
                        var status = ((ICupelError)e).Status;
                        Throws(() => Context.Select(conversation, max), status, "the pinned messages need");
                        if (e is ArgumentException)
                            ThrowsArg<ArgumentException>(() => Context.Select(conversation, max), "messages", "pinned messages");
                        continue;
                    }
                    var kept = Context.Select(conversation, max);
                    Equal(IndicesOf(conversation, kept), want);
                    // A tool call is never kept without its results, nor the other way round.
                    var keptSet = new HashSet<int>(IndicesOf(conversation, kept));
                    foreach (var g in new ulong[] { 1, 2, 3 })
                    {
                        var members = Enumerable.Range(0, groups.Length).Where(i => groups[i] == g).ToList();
                        True(members.All(keptSet.Contains) || !members.Any(keptSet.Contains), "group " + g + " kept whole or not at all");
                    }
                }
            }
        }
        // Transitive: a call with two ids and both results, and a group name
        // that joins another message to one of them.
        var chain = new[] {
            new Message("a") { ToolCallIds = new[] { "x", "y" } },
            new Message("b") { Group = "g" },
            new Message("c") { ToolCallId = "y", Group = "g" },
            new Message("d") { ToolCallId = "x" },
            new Message("e"),
            new Message("f") { ToolCallId = "z" },
            new Message("g") { Group = "x" },
            new Message("h") { Group = "x" },
        };
        Equal(Context.Groups(chain), 1UL, 1UL, 1UL, 1UL, 0UL, 2UL, 3UL, 3UL);
    }

    static void SelectPolicies()
    {
        var conversation = AgentConversation();
        var texts = conversation.Select(m => m.Text).ToArray();
        var longHand = new LongHand {
            Texts = texts, Kinds = conversation.Select(m => m.Kind).ToArray(),
            Groups = new ulong[] { 0, 0, 1, 1, 2, 2, 2, 3, 3, 0 }, Pinned = conversation.Select(m => m.Pinned).ToArray(),
        };
        // A policy document (with a knapsack and U-shaped placement).
        const string doc = "{\"scorers\":[{\"type\":\"kind\",\"weight\":2},{\"type\":\"recency\",\"weight\":1}]," +
            "\"slicerType\":\"knapsack\",\"knapsackBucketSize\":5,\"placerType\":\"uShaped\"}";
        using (var p = Pipeline.FromJson(doc))
        using (var b = new Budget(90, 90))
            Equal(IndicesOf(conversation, Context.Select(conversation, 90, "  \n" + doc)), longHand.Run(p, b));
        // A pipeline object, used as it is (and left undisposed).
        using (var p = Pipeline.Preset("ToolUse"))
        using (var b = new Budget(70, 70))
        {
            Equal(IndicesOf(conversation, Context.Select(conversation, 70, p)), longHand.Run(p, b));
            True(p.ToJson().Length > 0, "the caller's pipeline is not disposed");
        }
        // A budget object: its output reserve counts.
        using (var p = Pipeline.Preset("Chat"))
        using (var b = new Budget(120, 100))
        {
            b.SetOutputReserve(30);
            Equal(IndicesOf(conversation, Context.Select(conversation, b)), longHand.Run(p, b));
            Equal(IndicesOf(conversation, Context.Select(conversation, b, p)), longHand.Run(p, b));
            Equal(IndicesOf(conversation, Context.Select(conversation, b, "chat")), longHand.Run(p, b));
        }
        // Every preset by name is that preset.
        foreach (var name in Pipeline.PresetNames)
            using (var p = Pipeline.Preset(name))
            using (var b = new Budget(100, 100))
                Equal(IndicesOf(conversation, Context.Select(conversation, 100, name)), longHand.Run(p, b));
    }

    static void SelectAttributes()
    {
        // Timestamps given (some missing), priorities, relevance hints,
        // pushed scores and keys, under policies that use them.
        var t0 = new DateTimeOffset(2025, 1, 1, 12, 0, 0, TimeSpan.Zero);
        var ms = new List<Message> {
            new Message("first question about the deploy") { Timestamp = t0, Priority = 1, Relevance = 0.2, Score = 0.3, Key = 11 },
            new Message("an older note that matters", "Document") { Timestamp = t0.AddMinutes(-30), Priority = 9, Relevance = 0.9, Score = 0.9, Key = 12 },
            new Message("no timestamp here") { Priority = 5, Score = 0.5 },
            new Message("the latest answer") { Timestamp = t0.AddMinutes(5), Relevance = 0.4, Score = 0.1, Key = 13 },
            new Message("a late tool result", "ToolOutput") { Timestamp = t0.AddMinutes(6), Priority = 2, Relevance = 0.8, Score = 0.7 },
        };
        var longHand = new LongHand {
            Texts = ms.Select(m => m.Text).ToArray(), Kinds = ms.Select(m => m.Kind).ToArray(),
            Priorities = ms.Select(m => m.Priority).ToArray(), Relevance = ms.Select(m => m.Relevance).ToArray(),
            Scores = ms.Select(m => m.Score).ToArray(),
        };
        foreach (var policy in new[] {
            "{\"scorers\":[{\"type\":\"priority\",\"weight\":1}]}",
            "{\"scorers\":[{\"type\":\"reflexive\",\"weight\":1}],\"placerType\":\"uShaped\"}",
            "{\"scorers\":[{\"type\":\"given\",\"weight\":1}],\"placerType\":\"none\"}",
            "{\"scorers\":[{\"type\":\"recency\",\"weight\":1}]}",
        })
        {
            using (var p = Pipeline.FromJson(policy))
            using (var b = new Budget(12, 12))
            using (var tok = new Tokenizer("o200k_base"))
            using (var it = new Items())
            {
                // Long-hand: timestamps as given, the one without none.
                it.PushMany(tok.CountMany(longHand.Texts), longHand.Scores, longHand.Kinds);
                it.SetContents(0, longHand.Texts);
                for (int i = 0; i < ms.Count; i++)
                {
                    if (ms[i].Timestamp.HasValue) it.SetTimestamp(i, ms[i].Timestamp.Value.ToUnixTimeMilliseconds());
                    if (ms[i].Priority.HasValue) it.SetPriority(i, ms[i].Priority.Value);
                    if (ms[i].Relevance.HasValue) it.SetRelevanceHint(i, ms[i].Relevance.Value);
                }
                it.SetKeys(0, new ulong[] { 11, 12, 0, 13, 0 });
                var want = p.Run(it, b);
                Equal(IndicesOf(ms, Context.Select(ms, 12, policy)), want);
            }
        }
        // No timestamps at all: message i at i, so chronological is the given
        // order and recency prefers the last.
        var plain = Enumerable.Range(0, 6).Select(i => new Message("message number " + i)).ToList();
        using (var p = RecencyPipeline())
            Equal(IndicesOf(plain, Context.Select(plain, 8, p)), 4, 5);
        Equal(IndicesOf(plain, Context.Select(plain, 100)), 0, 1, 2, 3, 4, 5);
        True(Context.Select(new Message[0], 100).Length == 0, "no messages: none kept");
        True(Context.Select(plain, 0).Length == 0, "a zero budget: none kept");
        // The host's own objects.
        var host = new[] { "system: be brief", "user: hi", "assistant: hello", "user: what is 2+2?" };
        var kept = Context.Select(host, s => new Message(s.Substring(s.IndexOf(':') + 2),
            s.StartsWith("system") ? "SystemPrompt" : "Message") { Pinned = s.StartsWith("system") }, 6);
        True(kept.Length > 0 && kept[0] == host[0] && kept.All(k => host.Contains(k)), "the host's objects: " + string.Join(" | ", kept));
    }

    static void SelectTokenizers()
    {
        // Texts that o200k_base counts lower than cl100k_base.
        var ms = new[] { new Message("日本語のテキストです。"), new Message("Привет, как дела?") };
        long o200k, cl100k;
        using (var o = new Tokenizer("o200k_base"))
        using (var c = new Tokenizer("cl100k_base"))
        {
            o200k = o.CountMany(ms.Select(m => m.Text).ToArray()).Sum();
            cl100k = c.CountMany(ms.Select(m => m.Text).ToArray()).Sum();
        }
        True(o200k < cl100k, o200k + " < " + cl100k);
        const string withCl100k = "{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"tokenizer\":\"cl100k_base\"}";
        True(Context.Select(ms, o200k).Length == 2, "o200k_base by default");
        True(Context.Select(ms, o200k, "Chat", "cl100k_base").Length == 1, "the argument's tokenizer");
        True(Context.Select(ms, o200k, withCl100k).Length == 1, "the policy's tokenizer");
        True(Context.Select(ms, o200k, withCl100k, "o200k_base").Length == 2, "the argument before the policy's");
        True(Context.Select(ms, cl100k, withCl100k).Length == 2, "cl100k_base's counts");
        using (var p = Pipeline.FromJson(withCl100k))
            True(Context.Select(ms, o200k, p).Length == 1, "a pipeline object's tokenizer");
        // A pipeline whose tokenizer came from a vocabulary file cannot name
        // it: the caller must.
        var vocab = new StringBuilder();
        for (int i = 0; i < 256; i++) vocab.Append(Convert.ToBase64String(new[] { (byte)i })).Append(' ').Append(i).Append('\n');
        using (var t = Tokenizer.FromTiktoken(Encoding.ASCII.GetBytes(vocab.ToString())))
        using (var p = RecencyPipeline())
        {
            p.SetTokenizer(t);
            ThrowsArg<ArgumentException>(() => Context.Select(ms, 100, p), "tokenizer", "name the tokenizer");
            True(Context.Select(ms, 100, p, "o200k_base").Length == 2, "named by the caller");
            p.SetTokenizer(null);
            True(Context.Select(ms, o200k, p).Length == 2, "none left: o200k_base");
        }
        // A pipeline the format cannot write (a QuotaSlice around a
        // CountQuotaSlice) with a built-in tokenizer: its name all the same.
        using (var g = Slicer.Greedy())
        using (var cq = Slicer.CountQuota(g, new[] { new CountQuota("Message", 0, 5) }, Scarcity.Degrade))
        using (var q = Slicer.Quota(cq, new[] { new Quota("Message", 0, 100) }))
        using (var p = new Pipeline(null, q, null))
        using (var c = new Tokenizer("cl100k_base"))
        {
            True(Context.Select(ms, o200k, p).Length == 2, "no tokenizer: o200k_base");
            p.SetTokenizer(c);
            Throws(() => p.ToJson(), Status.Unsupported, "");
            True(Context.Select(ms, o200k, p).Length == 1, "an unwritable pipeline's tokenizer");
        }
    }

    static void SelectDefaultsAndEmptyIds()
    {
        // No policy (left out, or null) is Chat: here Chat and AgentLoop differ.
        var mixed = new[] {
            new Message("a memory worth keeping", "Memory") { Relevance = 1 },
            new Message("an older plain message") { Relevance = 0 },
            new Message("a newer plain message") { Relevance = 0 },
        };
        True(!IndicesOf(mixed, Context.Select(mixed, 8, "AgentLoop")).SequenceEqual(IndicesOf(mixed, Context.Select(mixed, 8, "Chat"))),
            "Chat and AgentLoop differ");
        foreach (var max in new long[] { 0, 4, 8, 10, 14 })
        {
            var chat = IndicesOf(mixed, Context.Select(mixed, max, "Chat"));
            Equal(IndicesOf(mixed, Context.Select(mixed, max)), chat);
            Equal(IndicesOf(mixed, Context.Select(mixed, max, (string)null)), chat);
            Equal(IndicesOf(mixed, Context.Select(mixed, max, (Pipeline)null)), chat);
            Equal(IndicesOf(mixed, Context.Select(mixed, max, tokenizer: "o200k_base")), chat);
            using (var b = new Budget(max, max))
                Equal(IndicesOf(mixed, Context.Select(mixed, b, (Pipeline)null)), chat);
        }
        // Empty (or null) group names and ids are none; key 0 is none; an id
        // nobody shares is a group of one.
        var ms = new[] {
            new Message("a") { Group = "", Key = 0 },
            new Message("b") { ToolCallIds = new[] { "", null, "t" } },
            new Message("c") { ToolCallId = "t" },
            new Message("d") { ToolCallId = "", ToolCallIds = new string[] { null } },
            new Message("e") { ToolCallId = "lonely", Key = ulong.MaxValue },
            new Message("f") { Group = "t" },
        };
        Equal(Context.Groups(ms), 0UL, 1UL, 1UL, 0UL, 2UL, 3UL);
        True(Context.Select(ms, 100).Length == 6, "all kept");
    }

    static void SelectErrors()
    {
        var ok = new List<Message> { new Message("hello"), new Message("world") };
        ThrowsArg<ArgumentNullException>(() => Context.Select((IReadOnlyList<Message>)null, 10), "messages", "messages is null");
        ThrowsArg<ArgumentNullException>(() => Context.Select(new[] { new Message("a"), null }, 10), "messages", "messages[1] is null");
        ThrowsArg<ArgumentNullException>(() => Context.Select(new[] { new Message("a"), new Message(null) }, 10), "messages",
            "messages[1].Text is null");
        ThrowsArg<ArgumentException>(() => Context.Select(new[] { new Message("a"), new Message("") }, 10), "messages",
            "messages[1].Text is empty");
        ThrowsArg<ArgumentException>(() => Context.Select(new[] { new Message("a"), new Message("b\uD800") }, 10), "messages",
            "messages[1].Text is not valid UTF-16");
        ThrowsArg<ArgumentException>(() => Context.Select(new[] { new Message("a"), new Message("b", " ") }, 10), "messages",
            "messages[1].Kind");
        ThrowsArg<ArgumentException>(() => Context.Select(new[] { new Message("a") { Score = double.NaN } }, 10), "messages",
            "messages[0].Score is NaN");
        ThrowsArg<ArgumentException>(() => Context.Select(ok, -1), "maxTokens", "maxTokens is -1");
        ThrowsArg<ArgumentException>(() => Context.Select(ok, 10, "Nope"), "policy", "policy \"Nope\" is no preset");
        ThrowsArg<ArgumentException>(() => Context.Select(ok, 10, ""), "policy", "is no preset");
        ThrowsArg<ArgumentException>(() => Context.Select(ok, 10, "{\"scorers\":[]}"), "policy", "policy $.scorers");
        ThrowsArg<ArgumentException>(() => Context.Select(ok, 10, " {\"scorers\""), "policy", "malformed JSON");
        ThrowsArg<ArgumentException>(() => Context.Select(ok, 10, "Chat", "nope"), "tokenizer", "tokenizer \"nope\"");
        ThrowsArg<ArgumentNullException>(() => Context.Select(ok, (Budget)null), "budget", "budget is null");
        ThrowsArg<ArgumentNullException>(() => Context.Select<Message>(ok, null, 10), "describe", "describe is null");
        var gone = new Budget(10, 10);
        gone.Dispose();
        ThrowsArg<ObjectDisposedException>(() => Context.Select(ok, gone), "budget", "disposed");
        var dead = Pipeline.Preset("Chat");
        dead.Dispose();
        ThrowsArg<ObjectDisposedException>(() => Context.Select(ok, 10, dead), "policy", "disposed");
        // A failure leaves no handle behind.
        GC.Collect();
        GC.WaitForPendingFinalizers();
        long before = Library.LiveHandles;
        for (int i = 0; i < 20; i++)
        {
            try
            {
                Context.Select(new[] { new Message("a"), new Message("") }, 10);
            }
            catch (ArgumentException)
            {
            }
            Context.Select(ok, 10);
        }
        True(Library.LiveHandles <= before, "Select frees what it made");
    }

    static readonly KeyValuePair<string, Action>[] PolicyTests = {
        new KeyValuePair<string, Action>("PolicyJson", PolicyJson),
        new KeyValuePair<string, Action>("BudgetJson", BudgetJson),
        new KeyValuePair<string, Action>("Presets", Presets),
        new KeyValuePair<string, Action>("Sensitivity", Sensitivity),
        new KeyValuePair<string, Action>("Analytics", Analytics),
        new KeyValuePair<string, Action>("TraceLevels", TraceLevels),
        new KeyValuePair<string, Action>("TraceSwitches", TraceSwitches),
        new KeyValuePair<string, Action>("TraceHandlerExceptions", TraceHandlerExceptions),
        new KeyValuePair<string, Action>("TraceLifetimes", TraceLifetimes),
        new KeyValuePair<string, Action>("TraceSessions", TraceSessions),
        new KeyValuePair<string, Action>("SelectMatchesLongHand", SelectMatchesLongHand),
        new KeyValuePair<string, Action>("SelectPolicies", SelectPolicies),
        new KeyValuePair<string, Action>("SelectAttributes", SelectAttributes),
        new KeyValuePair<string, Action>("SelectTokenizers", SelectTokenizers),
        new KeyValuePair<string, Action>("SelectDefaultsAndEmptyIds", SelectDefaultsAndEmptyIds),
        new KeyValuePair<string, Action>("SelectErrors", SelectErrors),
    };
}
