// libcupel for C#, part two: policies as data, presets, policy sensitivity,
// report analytics, tracing, and the one-call path (docs/policies.md).
//
// Built with Cupel.cs into one Cupel.dll (test.sh, pack.sh, Cupel.csproj);
// JSON the library writes is read with the framework's own
// DataContractJsonSerializer (System.Runtime.Serialization).
//
// Tracing: Pipeline.SetTrace(level, handler) hands the library one static
// callback and, as its user data, a weak GCHandle to the handler's holder,
// which the pipeline's SafeHandle (and every session made from it) keeps
// alive: nothing is collected while native code can call it, and nothing
// managed is kept alive by native code. An exception thrown by the handler
// never crosses the library: it is caught, the run's remaining events are
// skipped, and the run throws it (with its own stack trace) once the
// library has returned.

using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using System.Runtime.Serialization;
using System.Runtime.Serialization.Json;
using System.Text;
using System.Text.RegularExpressions;

namespace Cupel
{
    // ---- policies as JSON and presets -----------------------------------------

    public sealed partial class Pipeline
    {
        static readonly Args FromJsonArgs = new Args("json");
        static readonly Args PresetArgs = new Args("name");

        private Pipeline(PipelineHandle handle) { Handle = handle; }

        /// <summary>A pipeline read from a policy document (JSON): the .NET
        /// Cupel policy format (<c>scorers</c>, <c>slicerType</c>,
        /// <c>placerType</c>, <c>deduplicationEnabled</c>,
        /// <c>overflowStrategy</c>, <c>knapsackBucketSize</c>,
        /// <c>streamBatchSize</c>, <c>quotas</c>, <c>name</c>,
        /// <c>description</c>) and libcupel's extensions (docs/policies.md).
        /// A null json throws ArgumentNullException; an empty one, the text
        /// <c>null</c>, malformed JSON, a lone surrogate or a rule broken
        /// throws CupelArgumentException for json, its message giving the
        /// JSON path and the rule (<c>json $.scorers[0].weight: must be
        /// positive and finite (got -1)</c>).</summary>
        public static Pipeline FromJson(string json)
        {
            return new Pipeline(Policy.ReadPipeline(json, "json", FromJsonArgs));
        }

        /// <summary>A preset pipeline by name, matched ASCII
        /// case-insensitively: the .NET presets "Chat", "CodeReview", "Rag",
        /// "DocumentQa", "ToolUse", "LongRunning", "Debugging" and libcupel's
        /// "AgentLoop" (<see cref="PresetNames"/>; their scorers and weights:
        /// docs/policies.md). An unknown name throws CupelArgumentException
        /// listing the presets.</summary>
        public static Pipeline Preset(string name)
        {
            return new Pipeline(Policy.ReadPreset(name, "name", PresetArgs));
        }

        /// <summary>The names <see cref="Preset"/> knows, in the library's
        /// order.</summary>
        public static IReadOnlyList<string> PresetNames { get { return Policy.Names.Value; } }
    }

    public sealed partial class Budget
    {
        static readonly Args FromJsonArgs = new Args("json");

        private Budget(BudgetHandle handle) { Handle = handle; }

        /// <summary>A budget read from a budget document (JSON):
        /// <c>maxTokens</c> and <c>targetTokens</c> (required),
        /// <c>outputReserve</c>, <c>reservedSlots</c> (kind to tokens),
        /// <c>estimationSafetyMarginPercent</c>, validated as the constructor
        /// and setters validate. Errors as <see cref="Pipeline.FromJson"/>'s
        /// (<c>json $.targetTokens: ...</c>).</summary>
        public static Budget FromJson(string json)
        {
            int len;
            var bytes = Native.Text(json, "json", out len);
            BudgetHandle h;
            Native.Check(PolicyNative.cupel_budget_from_json(bytes, (UIntPtr)len, out h), FromJsonArgs);
            return new Budget(h);
        }
    }

    /// <summary>Writing pipelines and budgets as JSON, and tracing a
    /// pipeline's runs. Extension methods, so that a null receiver is an
    /// ArgumentNullException naming it, as for every other argument.</summary>
    public static class PolicyExtensions
    {
        static readonly Args PipelineArgs = new Args("pipeline");
        static readonly Args BudgetArgs = new Args("budget");
        static readonly Args TraceArgs = new Args("pipeline", "level");

        /// <summary>The pipeline as a policy document: every setting, keys in
        /// alphabetical order, such that <see cref="Pipeline.FromJson"/> of
        /// it selects exactly as this pipeline does. A pipeline that cannot
        /// be written without loss (a QuotaSlice around a count quota, a
        /// tokenizer from a vocabulary file) throws CupelException
        /// (Status.Unsupported).</summary>
        public static string ToJson(this Pipeline pipeline)
        {
            var h = Native.Arg(pipeline, "pipeline");
            return Policy.ReadText((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                PolicyNative.cupel_pipeline_to_json(h, buf, cap, out len), PipelineArgs);
        }

        /// <summary>The budget as a budget document: every field, reserved
        /// kinds lower-cased as they compare.</summary>
        public static string ToJson(this Budget budget)
        {
            var h = Native.Arg(budget, "budget");
            return Policy.ReadText((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                PolicyNative.cupel_budget_to_json(h, buf, cap, out len), BudgetArgs);
        }

        /// <summary>Traces the pipeline's runs: during each successful
        /// <see cref="Pipeline.Run"/> (and each run of a
        /// <see cref="Session"/> made from the pipeline afterwards, which
        /// keeps the handler set when it was made) handler gets one
        /// <see cref="TraceEvent"/> per stage span, exclusion and included
        /// item that level asks for, in order, on the running thread, with
        /// the <c>cupel.pipeline</c> span last. A failed run sends nothing.
        /// handler null turns tracing off (level is then ignored). The
        /// pipeline holds the handler until it is disposed or the trace is
        /// set again. The handler must not call into the pipeline it traces
        /// (InvalidOperationException) nor change the run's items or budget;
        /// if it throws, the run's remaining events are skipped and the run
        /// throws that exception (after the library has returned; the
        /// selection is dropped). Like <see cref="Pipeline.SetTokenizer"/>,
        /// not while another thread runs the pipeline.</summary>
        public static void SetTrace(this Pipeline pipeline, TraceLevel level, Action<TraceEvent> handler)
        {
            var h = Native.Arg(pipeline, "pipeline");
            if (handler == null)
            {
                Native.Check(PolicyNative.cupel_pipeline_set_trace(h, (int)level, IntPtr.Zero, IntPtr.Zero), TraceArgs);
                h.Trace = null;
                return;
            }
            var sink = new TraceSink(handler, level);
            Native.Check(PolicyNative.cupel_pipeline_set_trace(h, (int)level, Tracing.CallbackPointer, sink.Cookie),
                TraceArgs);
            h.Trace = sink;
        }
    }

    /// <summary>The shared machinery of policies as data.</summary>
    internal static class Policy
    {
        internal delegate Status TextCall(byte[] buf, UIntPtr capacity, out UIntPtr len);

        /// <summary>A text the library writes: asks its length, then writes
        /// it into a buffer of that size.</summary>
        internal static string ReadText(TextCall call, Args args)
        {
            UIntPtr n;
            var st = call(null, UIntPtr.Zero, out n);
            if (st != Status.BufferTooSmall) Native.Check(st, args);
            var buf = new byte[(int)n + 1];
            Native.Check(call(buf, (UIntPtr)buf.Length, out n), args);
            return Encoding.UTF8.GetString(buf, 0, (int)n);
        }

        /// <summary>A text the library makes afresh on each call, whose
        /// length may differ from one call to the next (policy sensitivity
        /// reruns the pipelines, and its reports hold their timings): one
        /// call into a buffer of `guess` bytes, and while that is too small
        /// another into one a quarter larger than the length it asked
        /// for.</summary>
        internal static string ReadFreshText(TextCall call, Args args, int guess)
        {
            var buf = new byte[guess];
            for (;;)
            {
                UIntPtr n;
                var st = call(buf, (UIntPtr)buf.Length, out n);
                if (st == Status.BufferTooSmall && (long)(ulong)n >= buf.Length)
                {
                    buf = new byte[(int)Math.Min(Native.MaxBytes, (long)(ulong)n + (long)(ulong)n / 4 + 1024)];
                    continue;
                }
                Native.Check(st, args);
                return Encoding.UTF8.GetString(buf, 0, (int)n);
            }
        }

        internal static PipelineHandle ReadPipeline(string json, string name, Args args)
        {
            int len;
            var bytes = Native.Text(json, name, out len);
            PipelineHandle h;
            Native.Check(PolicyNative.cupel_pipeline_from_json(bytes, (UIntPtr)len, out h), args);
            return h;
        }

        internal static PipelineHandle ReadPreset(string name, string param, Args args)
        {
            var n = Native.Utf8Z(name, param);
            if (n == null) throw Native.Null(param);
            PipelineHandle h;
            Native.Check(PolicyNative.cupel_pipeline_preset(n, out h), args);
            return h;
        }

        internal static readonly Lazy<IReadOnlyList<string>> Names = new Lazy<IReadOnlyList<string>>(() =>
        {
            int n = (int)PolicyNative.cupel_preset_count();
            var names = new string[n];
            for (int i = 0; i < n; i++) names[i] = Native.Utf8(PolicyNative.cupel_preset_name((UIntPtr)i));
            return Array.AsReadOnly(names);
        });

        /// <summary>JSON the library wrote, read into T with the framework's
        /// DataContractJsonSerializer.</summary>
        internal static T Parse<T>(string json) where T : class
        {
            var serializer = new DataContractJsonSerializer(typeof(T));
            using (var stream = new MemoryStream(Encoding.UTF8.GetBytes(json)))
                return (T)serializer.ReadObject(stream);
        }
    }

    // ---- policy sensitivity ----------------------------------------------------

    /// <summary>Several policies run on the same items and budget
    /// (<see cref="Compare"/>): each one's report, and every item some
    /// policy includes and another excludes.</summary>
    public sealed class PolicySensitivity
    {
        static readonly Args CompareArgs = new Args("pipelines=variants", "labels=variants",
            "count=variants.Count@variants", "items", "budget");

        /// <summary>The policies in the order given, each with its label and
        /// the report of its run.</summary>
        public IReadOnlyList<SensitivityVariant> Variants { get; private set; }

        /// <summary>Every item included by at least one policy and excluded
        /// by another, in push order. Items are told apart by push index,
        /// never by content: two items with the same text are two
        /// diffs.</summary>
        public IReadOnlyList<SensitivityDiff> Diffs { get; private set; }

        /// <summary>The library's JSON, as it wrote it:
        /// <c>{"variants": [{"label", "report"}], "diffs": [{"index",
        /// "content", "statuses": [{"label", "status"}]}]}</c>.</summary>
        public string Json { get; private set; }

        private PolicySensitivity() { }

        /// <summary>Runs every (label, pipeline) pair of variants (at least
        /// two) on items and budget. A null label or pipeline throws
        /// ArgumentNullException for variants, fewer than two variants
        /// CupelArgumentException for variants; a policy whose run fails
        /// fails the call, the message naming its position and label.
        /// Traced pipelines send their events; a handler's exception is
        /// thrown once the library has returned. The library makes the text
        /// afresh on each call: when it outgrows the buffer given (about
        /// 512 bytes per item and policy; long contents), the call is made
        /// again with a larger one, rerunning the pipelines (a traced one
        /// then sends its events again).</summary>
        public static PolicySensitivity Compare(IEnumerable<KeyValuePair<string, Pipeline>> variants, Items items,
                                                Budget budget)
        {
            if (variants == null) throw Native.Null("variants");
            var list = new List<KeyValuePair<string, Pipeline>>(variants);
            var handles = new PipelineHandle[list.Count];
            for (int k = 0; k < list.Count; k++)
            {
                if (list[k].Key == null)
                    throw new ArgumentNullException("variants", "variants[" + k + "].Key (the label) is null");
                if (list[k].Value == null)
                    throw new ArgumentNullException("variants", "variants[" + k + "].Value (the pipeline) is null");
                handles[k] = Native.Arg(list[k].Value, "variants[" + k + "].Value");
            }
            var it = Native.Arg(items, "items");
            var b = Native.Arg(budget, "budget");
            var pointers = new IntPtr[Math.Max(list.Count, 1)];
            var added = new bool[list.Count];
            string json;
            using (var strings = new NativeStrings())
            {
                var labels = new IntPtr[Math.Max(list.Count, 1)];
                for (int k = 0; k < list.Count; k++) labels[k] = strings.Get(list[k].Key, "variants[" + k + "].Key", -1);
                var scope = Tracing.Enter(null);
                try
                {
                    for (int k = 0; k < list.Count; k++)
                    {
                        handles[k].DangerousAddRef(ref added[k]);
                        pointers[k] = handles[k].DangerousGetHandle();
                    }
                    // Each call reruns the pipelines: size the buffer so
                    // that one call usually does (512 bytes per item and
                    // variant, for a report entry, and per item for a diff).
                    long guess = 4096 + 512L * (1 + list.Count) * Native.Len(it);
                    json = Policy.ReadFreshText((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                        PolicyNative.cupel_policy_sensitivity(pointers, labels, (UIntPtr)list.Count, it, b, buf, cap,
                            out len), CompareArgs, (int)Math.Min(guess, 1 << 24));
                }
                finally
                {
                    for (int k = 0; k < list.Count; k++)
                        if (added[k]) handles[k].DangerousRelease();
                    Tracing.Exit(scope);
                }
                GC.KeepAlive(handles);
                scope.Rethrow();
            }
            var dto = Policy.Parse<SensitivityDto>(json);
            var result = new PolicySensitivity { Json = json };
            var vs = new List<SensitivityVariant>();
            foreach (var v in dto.Variants ?? new VariantDto[0])
                vs.Add(new SensitivityVariant(v.Label, new SelectionReport(v.Report)));
            var ds = new List<SensitivityDiff>();
            foreach (var d in dto.Diffs ?? new DiffDto[0])
            {
                var statuses = new List<DiffStatus>();
                foreach (var s in d.Statuses ?? new StatusDto[0]) statuses.Add(new DiffStatus(s.Label, s.Status));
                ds.Add(new SensitivityDiff((int)d.Index, d.Content, statuses.AsReadOnly()));
            }
            result.Variants = vs.AsReadOnly();
            result.Diffs = ds.AsReadOnly();
            return result;
        }
    }

    /// <summary>One policy of a <see cref="PolicySensitivity"/>: its label
    /// and its run's report.</summary>
    public sealed class SensitivityVariant
    {
        /// <summary>The label it was given.</summary>
        public string Label { get; private set; }
        /// <summary>What its run did (the SelectionReport JSON, read).</summary>
        public SelectionReport Report { get; private set; }

        internal SensitivityVariant(string label, SelectionReport report)
        {
            Label = label;
            Report = report;
        }

        /// <summary>"label: n included, m excluded".</summary>
        public override string ToString()
        {
            return Label + ": " + Report.Included.Count + " included, " + Report.Excluded.Count + " excluded";
        }
    }

    /// <summary>An item that one policy includes and another excludes.</summary>
    public sealed class SensitivityDiff
    {
        /// <summary>The item's push index.</summary>
        public int Index { get; private set; }
        /// <summary>Its content, or null when it has none.</summary>
        public string Content { get; private set; }
        /// <summary>Its status under each policy, in the policies' order.</summary>
        public IReadOnlyList<DiffStatus> Statuses { get; private set; }

        internal SensitivityDiff(int index, string content, IReadOnlyList<DiffStatus> statuses)
        {
            Index = index;
            Content = content;
            Statuses = statuses;
        }

        /// <summary>Whether the policy labelled label includes the item
        /// (KeyNotFoundException for a label that is not there).</summary>
        public bool IncludedBy(string label)
        {
            foreach (var s in Statuses)
                if (s.Label == label) return s.Included;
            throw new KeyNotFoundException("no policy labelled \"" + label + "\"");
        }

        /// <summary>"#index: label Included, label Excluded".</summary>
        public override string ToString()
        {
            var parts = new List<string>();
            foreach (var s in Statuses) parts.Add(s.ToString());
            return "#" + Index + ": " + string.Join(", ", parts);
        }
    }

    /// <summary>An item's status under one policy.</summary>
    public struct DiffStatus
    {
        /// <summary>The policy's label.</summary>
        public string Label { get; private set; }
        /// <summary>"Included" or "Excluded", as the library writes it.</summary>
        public string Status { get; private set; }
        /// <summary>Whether the policy includes the item.</summary>
        public bool Included { get { return Status == "Included"; } }

        internal DiffStatus(string label, string status) : this()
        {
            Label = label;
            Status = status;
        }

        /// <summary>"label Status".</summary>
        public override string ToString() { return Label + " " + Status; }
    }

    /// <summary>A SelectionReport as the library writes it in JSON (the
    /// variants of a <see cref="PolicySensitivity"/>), read: the included
    /// items in placed order, the excluded ones, and the analytics.</summary>
    public sealed class SelectionReport
    {
        /// <summary>The included items, in placed order.</summary>
        public IReadOnlyList<ReportEntry> Included { get; private set; }
        /// <summary>The excluded items, as the report lists them (score
        /// descending).</summary>
        public IReadOnlyList<ReportEntry> Excluded { get; private set; }
        /// <summary>How many items the run saw.</summary>
        public long TotalCandidates { get; private set; }
        /// <summary>The tokens of every item the run saw.</summary>
        public long TotalTokensConsidered { get; private set; }
        /// <summary>The included tokens over the run's max tokens (0 when
        /// that is 0).</summary>
        public double BudgetUtilization { get; private set; }
        /// <summary>The number of distinct kinds included.</summary>
        public int KindDiversity { get; private set; }
        /// <summary>The share of included items with a timestamp (0 when
        /// none is included).</summary>
        public double TimestampCoverage { get; private set; }
        /// <summary>One row per quota constraint of the slicer, outermost
        /// first (empty without quotas).</summary>
        public IReadOnlyList<QuotaUse> Quotas { get; private set; }

        internal SelectionReport(ReportDto dto)
        {
            dto = dto ?? new ReportDto();
            Included = Entries(dto.Included);
            Excluded = Entries(dto.Excluded);
            TotalCandidates = dto.TotalCandidates;
            TotalTokensConsidered = dto.TotalTokensConsidered;
            var a = dto.Analytics ?? new AnalyticsDto();
            BudgetUtilization = a.BudgetUtilization;
            KindDiversity = (int)a.KindDiversity;
            TimestampCoverage = a.TimestampCoverage;
            var quotas = new List<QuotaUse>();
            foreach (var q in a.Quotas ?? new QuotaDto[0])
                quotas.Add(new QuotaUse(q.Kind, q.Mode, q.Require, q.Cap, q.Actual, q.Utilization));
            Quotas = quotas.AsReadOnly();
        }

        static IReadOnlyList<ReportEntry> Entries(EntryDto[] entries)
        {
            var list = new List<ReportEntry>();
            foreach (var e in entries ?? new EntryDto[0]) list.Add(new ReportEntry(e));
            return list.AsReadOnly();
        }
    }

    /// <summary>One item of a <see cref="SelectionReport"/>.</summary>
    public sealed class ReportEntry
    {
        /// <summary>The item's kind.</summary>
        public string Kind { get; private set; }
        /// <summary>The item's tokens.</summary>
        public long Tokens { get; private set; }
        /// <summary>The item's content, or null when it has none.</summary>
        public string Content { get; private set; }
        /// <summary>The item's timestamp, or null when it has none.</summary>
        public DateTimeOffset? Timestamp { get; private set; }
        /// <summary>The score the report gives it.</summary>
        public double Score { get; private set; }
        /// <summary>Why it was included or excluded, as the library names it
        /// ("Scored", "BudgetExceeded", ...: <see cref="ReasonExtensions.Name"/>).</summary>
        public string ReasonName { get; private set; }
        /// <summary>The reason as the enum (null for a name it does not
        /// have).</summary>
        public Reason? Reason { get; private set; }

        internal ReportEntry(EntryDto e)
        {
            var item = e.Item ?? new ItemDto();
            Kind = item.Kind;
            Tokens = item.Tokens;
            Content = item.Content;
            DateTimeOffset ts;
            if (item.Timestamp != null && DateTimeOffset.TryParse(item.Timestamp, CultureInfo.InvariantCulture,
                    DateTimeStyles.AssumeUniversal, out ts))
                Timestamp = ts;
            Score = e.Score;
            ReasonName = e.Reason == null ? null : e.Reason.Name;
            Reason r;
            if (ReasonName != null && Enum.TryParse(ReasonName, false, out r) && r.Name() == ReasonName) Reason = r;
        }

        /// <summary>"Kind tokens ReasonName".</summary>
        public override string ToString() { return Kind + " " + Tokens + " " + ReasonName; }
    }

    /// <summary>One quota constraint of a run (<see cref="SelectionReport.Quotas"/>).</summary>
    public sealed class QuotaUse
    {
        /// <summary>The kind it constrains.</summary>
        public string Kind { get; private set; }
        /// <summary>"percentage" or "count".</summary>
        public string Mode { get; private set; }
        /// <summary>What it requires (percent of the target, or items).</summary>
        public double Require { get; private set; }
        /// <summary>Its cap (percent of the target, or items).</summary>
        public double Cap { get; private set; }
        /// <summary>What the included unpinned items of the kind took.</summary>
        public double Actual { get; private set; }
        /// <summary>Actual over Cap, clamped to [0, 1] (0 when Cap is 0).</summary>
        public double Utilization { get; private set; }

        internal QuotaUse(string kind, string mode, double require, double cap, double actual, double utilization)
        {
            Kind = kind;
            Mode = mode;
            Require = require;
            Cap = cap;
            Actual = actual;
            Utilization = utilization;
        }
    }

    // The JSON shapes the library writes, for DataContractJsonSerializer.

    [DataContract]
    internal sealed class SensitivityDto
    {
        [DataMember(Name = "variants")] public VariantDto[] Variants;
        [DataMember(Name = "diffs")] public DiffDto[] Diffs;
    }

    [DataContract]
    internal sealed class VariantDto
    {
        [DataMember(Name = "label")] public string Label;
        [DataMember(Name = "report")] public ReportDto Report;
    }

    [DataContract]
    internal sealed class DiffDto
    {
        [DataMember(Name = "index")] public long Index;
        [DataMember(Name = "content")] public string Content;
        [DataMember(Name = "statuses")] public StatusDto[] Statuses;
    }

    [DataContract]
    internal sealed class StatusDto
    {
        [DataMember(Name = "label")] public string Label;
        [DataMember(Name = "status")] public string Status;
    }

    [DataContract]
    internal sealed class ReportDto
    {
        [DataMember(Name = "included")] public EntryDto[] Included;
        [DataMember(Name = "excluded")] public EntryDto[] Excluded;
        [DataMember(Name = "total_candidates")] public long TotalCandidates;
        [DataMember(Name = "total_tokens_considered")] public long TotalTokensConsidered;
        [DataMember(Name = "analytics")] public AnalyticsDto Analytics;
    }

    [DataContract]
    internal sealed class EntryDto
    {
        [DataMember(Name = "item")] public ItemDto Item;
        [DataMember(Name = "reason")] public ReasonDto Reason;
        [DataMember(Name = "score")] public double Score;
    }

    [DataContract]
    internal sealed class ItemDto
    {
        [DataMember(Name = "kind")] public string Kind;
        [DataMember(Name = "tokens")] public long Tokens;
        [DataMember(Name = "content")] public string Content;
        [DataMember(Name = "timestamp")] public string Timestamp;
    }

    [DataContract]
    internal sealed class ReasonDto
    {
        [DataMember(Name = "reason")] public string Name;
    }

    [DataContract]
    internal sealed class AnalyticsDto
    {
        [DataMember(Name = "budgetUtilization")] public double BudgetUtilization;
        [DataMember(Name = "kindDiversity")] public long KindDiversity;
        [DataMember(Name = "timestampCoverage")] public double TimestampCoverage;
        [DataMember(Name = "quotas")] public QuotaDto[] Quotas;
    }

    [DataContract]
    internal sealed class QuotaDto
    {
        [DataMember(Name = "kind")] public string Kind;
        [DataMember(Name = "mode")] public string Mode;
        [DataMember(Name = "require")] public double Require;
        [DataMember(Name = "cap")] public double Cap;
        [DataMember(Name = "actual")] public double Actual;
        [DataMember(Name = "utilization")] public double Utilization;
    }

    // ---- report analytics ------------------------------------------------------

    public sealed partial class Report
    {
        static readonly Args AnalyticsArgs = new Args("items");

        /// <summary>The included tokens (as they go into the context) over
        /// the run's max tokens; 0 when the max is 0 or nothing ran (the .NET
        /// and Rust peers give NaN there).</summary>
        public double BudgetUtilization
        {
            get
            {
                double d;
                Native.Check(PolicyNative.cupel_report_budget_utilization(Native.Live(Handle, this), out d));
                return d;
            }
        }

        /// <summary>The number of distinct kinds among the included items,
        /// compared as kinds are (ASCII case-insensitively); items: the list
        /// the run saw (one that does not hold the report's items throws
        /// CupelArgumentException).</summary>
        public int KindDiversity(Items items)
        {
            var h = Native.Live(Handle, this);
            var it = Native.Arg(items, "items");
            UIntPtr n;
            Native.Check(PolicyNative.cupel_report_kind_diversity(h, it, out n), AnalyticsArgs);
            return (int)n;
        }

        /// <summary>The share of included items that have a timestamp, in
        /// [0, 1]; 0 when none is included. items: the list the run
        /// saw.</summary>
        public double TimestampCoverage(Items items)
        {
            var h = Native.Live(Handle, this);
            var it = Native.Arg(items, "items");
            double d;
            Native.Check(PolicyNative.cupel_report_timestamp_coverage(h, it, out d), AnalyticsArgs);
            return d;
        }
    }

    // ---- tracing ---------------------------------------------------------------

    /// <summary>How much a trace carries (the C ABI's cupel_trace_level).</summary>
    public enum TraceLevel
    {
        /// <summary>One event per stage, and the pipeline's.</summary>
        Stages = 0,
        /// <summary>Also one per excluded item.</summary>
        Exclusions = 1,
        /// <summary>Also one per included item.</summary>
        Full = 2,
    }

    /// <summary>What a trace event is about (the C ABI's cupel_trace_kind).</summary>
    public enum TraceKind
    {
        /// <summary>The <c>cupel.pipeline</c> span, sent last, spanning the run.</summary>
        Pipeline = 0,
        /// <summary>A <c>cupel.stage.&lt;stage&gt;</c> span, a child of the pipeline's.</summary>
        Stage = 1,
        /// <summary>A <c>cupel.exclusion</c> event on its stage's span.</summary>
        Exclusion = 2,
        /// <summary>A <c>cupel.item.included</c> event on the place stage's span.</summary>
        Included = 3,
    }

    /// <summary>One span or event of a traced run, with what the Cupel
    /// specification's OpenTelemetry chapter puts on it (never content or
    /// metadata) and its start and duration, so that a host can make real
    /// spans from it. A copy: keep it as long as you like.</summary>
    public sealed class TraceEvent
    {
        /// <summary>What it is about.</summary>
        public TraceKind Kind { get; private set; }
        /// <summary>"cupel.pipeline", "cupel.stage.classify" (.score,
        /// .deduplicate, .slice, .place), "cupel.exclusion" or
        /// "cupel.item.included".</summary>
        public string Name { get; private set; }
        /// <summary>The stage, lowercase ("classify", ...); null for the
        /// pipeline.</summary>
        public string Stage { get; private set; }
        /// <summary>The tier, <c>cupel.verbosity</c>: "StageOnly",
        /// "StageAndExclusions" or "Full".</summary>
        public string Verbosity { get; private set; }
        /// <summary>Stage: the items in; pipeline: the items in.</summary>
        public int ItemCountIn { get; private set; }
        /// <summary>Stage: the items out; pipeline: the items included.</summary>
        public int ItemCountOut { get; private set; }
        /// <summary>Stage: its exclusions; pipeline: all exclusions.</summary>
        public int ExclusionCount { get; private set; }
        /// <summary>Exclusion, included: the item's push index; else null.</summary>
        public int? Item { get; private set; }
        /// <summary>Exclusion: why; else null.</summary>
        public Reason? Reason { get; private set; }
        /// <summary>Exclusion: the reason's name ("BudgetExceeded"); else null.</summary>
        public string ReasonName { get; private set; }
        /// <summary>Exclusion, included: the item's kind; else null.</summary>
        public string ItemKind { get; private set; }
        /// <summary>Exclusion: the item's tokens; included: the tokens it adds
        /// to the context; else 0.</summary>
        public long Tokens { get; private set; }
        /// <summary>Included: the item's score; else 0.</summary>
        public double Score { get; private set; }
        /// <summary>Pipeline: the budget's max tokens; else 0.</summary>
        public long MaxTokens { get; private set; }
        /// <summary>The start, nanoseconds since the Unix epoch.</summary>
        public long StartUnixNanos { get; private set; }
        /// <summary>The duration in nanoseconds (0 for events).</summary>
        public long DurationNanos { get; private set; }
        /// <summary>The start (to the 100 ns tick).</summary>
        public DateTimeOffset Start { get { return Epoch.AddTicks(StartUnixNanos / 100); } }
        /// <summary>The duration (to the 100 ns tick).</summary>
        public TimeSpan Duration { get { return TimeSpan.FromTicks(DurationNanos / 100); } }

        static readonly DateTimeOffset Epoch = new DateTimeOffset(1970, 1, 1, 0, 0, 0, TimeSpan.Zero);

        private TraceEvent() { }

        internal static TraceEvent From(ref PolicyNative.NativeTraceEvent e)
        {
            var kind = (TraceKind)e.Kind;
            bool itemEvent = kind == TraceKind.Exclusion || kind == TraceKind.Included;
            return new TraceEvent
            {
                Kind = kind,
                Name = Tracing.Static(e.Name),
                Stage = Tracing.Static(e.Stage),
                Verbosity = Tracing.Static(e.Verbosity),
                ItemCountIn = (int)(ulong)e.ItemCountIn,
                ItemCountOut = (int)(ulong)e.ItemCountOut,
                ExclusionCount = (int)(ulong)e.ExclusionCount,
                Item = itemEvent ? (int)(ulong)e.Item : (int?)null,
                Reason = kind == TraceKind.Exclusion && e.Reason >= 0 ? (Reason)e.Reason : (Reason?)null,
                ReasonName = Tracing.Static(e.ReasonName),
                ItemKind = itemEvent && e.ItemKind != IntPtr.Zero ? Native.Utf8(e.ItemKind, e.ItemKindLen) : null,
                Tokens = e.Tokens,
                Score = e.Score,
                MaxTokens = e.MaxTokens,
                StartUnixNanos = (long)e.StartUnixNanos,
                DurationNanos = (long)e.DurationNanos,
            };
        }

        /// <summary>"name" with its figures, e.g. "cupel.stage.slice 3 -&gt; 2
        /// (1 excluded)" or "cupel.exclusion #0 Message 100 tokens
        /// BudgetExceeded".</summary>
        public override string ToString()
        {
            switch (Kind)
            {
                case TraceKind.Exclusion:
                    return Name + " #" + Item + " " + ItemKind + " " + Tokens + " tokens " + ReasonName;
                case TraceKind.Included:
                    return Name + " #" + Item + " " + ItemKind + " " + Tokens + " tokens score " +
                        Score.ToString("R", CultureInfo.InvariantCulture);
                case TraceKind.Pipeline:
                    return Name + " " + ItemCountIn + " -> " + ItemCountOut + " (" + ExclusionCount +
                        " excluded), max " + MaxTokens + " tokens, " + Verbosity;
                default:
                    return Name + " " + ItemCountIn + " -> " + ItemCountOut + " (" + ExclusionCount + " excluded)";
            }
        }
    }

    /// <summary>Marks a method native code calls (Mono's AOT and IL2CPP look
    /// for the attribute by name).</summary>
    [AttributeUsage(AttributeTargets.Method)]
    internal sealed class MonoPInvokeCallbackAttribute : Attribute
    {
        public MonoPInvokeCallbackAttribute(Type type) { Type = type; }
        public Type Type { get; private set; }
    }

    /// <summary>A trace handler and its level, as a pipeline (and the
    /// sessions made from it) hold it. The library gets Cookie, a weak
    /// GCHandle to this object: alive as long as a handle holds the sink,
    /// freed by the finalizer once none does.</summary>
    internal sealed class TraceSink
    {
        internal readonly Action<TraceEvent> Handler;
        internal readonly TraceLevel Level;
        internal readonly IntPtr Cookie;
        readonly GCHandle self;

        internal TraceSink(Action<TraceEvent> handler, TraceLevel level)
        {
            Handler = handler;
            Level = level;
            self = GCHandle.Alloc(this, GCHandleType.Weak);
            Cookie = GCHandle.ToIntPtr(self);
        }

        ~TraceSink()
        {
            if (self.IsAllocated) self.Free();
        }
    }

    /// <summary>The callback the library calls, and what a traced run on
    /// this thread has caught.</summary>
    internal static class Tracing
    {
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void Callback(IntPtr userData, IntPtr traceEvent);

        // Held for the life of the process: the library may call it any time.
        static readonly Callback OnEventDelegate = OnEvent;
        internal static readonly IntPtr CallbackPointer = Marshal.GetFunctionPointerForDelegate<Callback>(OnEventDelegate);

        // Per thread, for the traced run in progress: the handle it runs (a
        // handler must not call into it) and the handler's exception.
        [ThreadStatic] static SafeHandle running;
        [ThreadStatic] static ExceptionDispatchInfo thrown;
        [ThreadStatic] static int depth;

        static readonly ConcurrentDictionary<IntPtr, string> Names = new ConcurrentDictionary<IntPtr, string>();

        /// <summary>A static NUL-terminated string of the library (decoded
        /// once); null for NULL.</summary>
        internal static string Static(IntPtr p)
        {
            if (p == IntPtr.Zero) return null;
            string s;
            if (!Names.TryGetValue(p, out s)) s = Names.GetOrAdd(p, Native.Utf8(p));
            return s;
        }

        [MonoPInvokeCallback(typeof(Callback))]
        static void OnEvent(IntPtr userData, IntPtr traceEvent)
        {
            // Nothing may unwind into the library: every exception stops here.
            try
            {
                if (depth == 0 || thrown != null) return;
                var sink = GCHandle.FromIntPtr(userData).Target as TraceSink;
                if (sink == null) return;
                var e = Marshal.PtrToStructure<PolicyNative.NativeTraceEvent>(traceEvent);
                sink.Handler(TraceEvent.From(ref e));
            }
            catch (Exception x)
            {
                if (thrown == null) thrown = ExceptionDispatchInfo.Capture(x);
            }
        }

        /// <summary>What one traced call saved of the thread's state, and
        /// what its handler threw.</summary>
        internal sealed class Scope
        {
            internal SafeHandle SavedRunning;
            internal ExceptionDispatchInfo SavedThrown;
            internal ExceptionDispatchInfo Thrown;

            /// <summary>Throws what the handler threw, if it did.</summary>
            internal void Rethrow()
            {
                if (Thrown != null) Thrown.Throw();
            }
        }

        /// <summary>Before a traced call: handle (may be null) is the one it
        /// runs.</summary>
        internal static Scope Enter(SafeHandle handle)
        {
            var scope = new Scope { SavedRunning = running, SavedThrown = thrown };
            running = handle;
            thrown = null;
            depth++;
            return scope;
        }

        /// <summary>After it (in a finally): the thread's state back as it
        /// was, the handler's exception in the scope.</summary>
        internal static void Exit(Scope scope)
        {
            depth--;
            scope.Thrown = thrown;
            running = scope.SavedRunning;
            thrown = scope.SavedThrown;
        }

        /// <summary>A handle a traced run on this thread is running throws
        /// InvalidOperationException (its handler called into it).</summary>
        internal static T Check<T>(T handle) where T : SafeHandle
        {
            if (handle != null && depth > 0 && ReferenceEquals(running, handle))
                throw new InvalidOperationException("a trace handler must not call into the pipeline or session " +
                    "whose run it traces");
            return handle;
        }

        /// <summary>Native.Live, and Check.</summary>
        internal static T Live<T>(T handle, object owner) where T : SafeHandle
        {
            return Check(Native.Live(handle, owner));
        }
    }

    internal static class PolicyNative
    {
        /// <summary>cupel_trace_event.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeTraceEvent
        {
            public int Kind;
            public IntPtr Name;
            public IntPtr Stage;
            public IntPtr Verbosity;
            public UIntPtr ItemCountIn;
            public UIntPtr ItemCountOut;
            public UIntPtr ExclusionCount;
            public UIntPtr Item;
            public int Reason;
            public IntPtr ReasonName;
            public IntPtr ItemKind;
            public UIntPtr ItemKindLen;
            public long Tokens;
            public double Score;
            public long MaxTokens;
            public ulong StartUnixNanos;
            public ulong DurationNanos;
        }

        [DllImport(Native.Lib)] internal static extern Status cupel_pipeline_from_json(byte[] json, UIntPtr len, out PipelineHandle pipeline);
        [DllImport(Native.Lib)] internal static extern Status cupel_pipeline_to_json(PipelineHandle pipeline, [Out] byte[] buf, UIntPtr capacity, out UIntPtr len);
        [DllImport(Native.Lib)] internal static extern Status cupel_budget_from_json(byte[] json, UIntPtr len, out BudgetHandle budget);
        [DllImport(Native.Lib)] internal static extern Status cupel_budget_to_json(BudgetHandle budget, [Out] byte[] buf, UIntPtr capacity, out UIntPtr len);
        [DllImport(Native.Lib)] internal static extern Status cupel_pipeline_preset(byte[] name, out PipelineHandle pipeline);
        [DllImport(Native.Lib)] internal static extern UIntPtr cupel_preset_count();
        [DllImport(Native.Lib)] internal static extern IntPtr cupel_preset_name(UIntPtr index);
        [DllImport(Native.Lib)] internal static extern IntPtr cupel_pipeline_tokenizer_name(PipelineHandle pipeline);
        [DllImport(Native.Lib)] internal static extern Status cupel_policy_sensitivity(IntPtr[] pipelines, IntPtr[] labels, UIntPtr count, ItemsHandle items, BudgetHandle budget, [Out] byte[] buf, UIntPtr capacity, out UIntPtr len);
        [DllImport(Native.Lib)] internal static extern Status cupel_report_budget_utilization(ReportHandle report, out double value);
        [DllImport(Native.Lib)] internal static extern Status cupel_report_kind_diversity(ReportHandle report, ItemsHandle items, out UIntPtr value);
        [DllImport(Native.Lib)] internal static extern Status cupel_report_timestamp_coverage(ReportHandle report, ItemsHandle items, out double value);
        [DllImport(Native.Lib)] internal static extern Status cupel_pipeline_set_trace(PipelineHandle pipeline, int level, IntPtr callback, IntPtr userData);
    }

    // ---- the one-call path -----------------------------------------------------

    /// <summary>One message of a conversation for <c>Context.Select</c>:
    /// its text and what the policy may use. A plain object: set what you
    /// need with an object initializer, <c>new Message("...", "ToolOutput")
    /// { ToolCallId = "call_1" }</c>.</summary>
    public sealed class Message
    {
        /// <summary>A message of text (non-empty) and kind (null:
        /// "Message").</summary>
        public Message(string text, string kind = "Message")
        {
            Text = text;
            Kind = kind ?? "Message";
            Score = 1.0;
        }

        /// <summary>The text (required, non-empty): its tokens are counted,
        /// and it is the item's content (deduplication compares it).</summary>
        public string Text { get; set; }
        /// <summary>The kind ("Message" by default; "SystemPrompt",
        /// "ToolCall", "ToolOutput", "Document", ... as the policy's kind
        /// weights name them); null means "Message".</summary>
        public string Kind { get; set; }
        /// <summary>Always included, its tokens taken off the budget first
        /// (a system prompt).</summary>
        public bool Pinned { get; set; }
        /// <summary>Messages with the same group are kept or dropped
        /// together (null or "": none).</summary>
        public string Group { get; set; }
        /// <summary>A tool result's id, or a single tool call's: the call and
        /// its result are kept or dropped together (null or "": none).</summary>
        public string ToolCallId { get; set; }
        /// <summary>The ids of a message that makes several tool calls: it is
        /// kept or dropped with all their results (null or "" elements are
        /// none).</summary>
        public IReadOnlyList<string> ToolCallIds { get; set; }
        /// <summary>An identity key for sessions (0: none).</summary>
        public ulong Key { get; set; }
        /// <summary>When it was written (kept to the millisecond); when no
        /// message has one, message i is taken as written at i
        /// milliseconds.</summary>
        public DateTimeOffset? Timestamp { get; set; }
        /// <summary>Its priority, for the <c>priority</c> scorer.</summary>
        public long? Priority { get; set; }
        /// <summary>Its future-relevance hint, for the <c>reflexive</c>
        /// scorer.</summary>
        public double? Relevance { get; set; }
        /// <summary>Its pushed score, for the <c>given</c> scorer (1.0 by
        /// default).</summary>
        public double Score { get; set; }

        /// <summary>"Kind: Text".</summary>
        public override string ToString() { return Kind + ": " + Text; }
    }

    /// <summary>The one-call path: hand a conversation's messages, a budget
    /// and a policy, get back the messages to send, in prompt order
    /// (docs/policies.md, "The one-call path").</summary>
    public static class Context
    {
        /// <summary>The messages that fit maxTokens (the target too) under
        /// policy, in the order the policy's placer gives: the same objects
        /// as passed. policy is a preset name (<see cref="Pipeline.PresetNames"/>)
        /// or a policy document (a string whose first non-blank character is
        /// '{'); null is "Chat". Tokens are counted with the tokenizer named
        /// by tokenizer, else the policy's, else "o200k_base". Messages that
        /// share a Group, a ToolCallId or one of their ToolCallIds (null and
        /// "" are none) are kept or dropped together (transitively). A bad message throws for messages, naming
        /// it (<c>messages[3].Text is empty</c>); a negative maxTokens a
        /// CupelArgumentException for maxTokens; a bad policy one for
        /// policy.</summary>
        public static Message[] Select(IReadOnlyList<Message> messages, long maxTokens, string policy = "Chat",
                                       string tokenizer = null)
        {
            return Core(messages, Identity, maxTokens, null, policy, null, tokenizer);
        }

        /// <summary>As the other overload, within budget (a Budget object: its
        /// target, reserves and margin).</summary>
        public static Message[] Select(IReadOnlyList<Message> messages, Budget budget, string policy = "Chat",
                                       string tokenizer = null)
        {
            if (budget == null) throw Native.Null("budget");
            return Core(messages, Identity, 0, budget, policy, null, tokenizer);
        }

        /// <summary>As the other overloads, with policy a pipeline (used as
        /// it is, not disposed; its trace handler sees the run; null is the
        /// "Chat" preset).</summary>
        public static Message[] Select(IReadOnlyList<Message> messages, long maxTokens, Pipeline policy,
                                       string tokenizer = null)
        {
            return Core(messages, Identity, maxTokens, null, null, policy, tokenizer);
        }

        /// <summary>As the other overloads, with a Budget object and a
        /// pipeline.</summary>
        public static Message[] Select(IReadOnlyList<Message> messages, Budget budget, Pipeline policy,
                                       string tokenizer = null)
        {
            if (budget == null) throw Native.Null("budget");
            return Core(messages, Identity, 0, budget, null, policy, tokenizer);
        }

        /// <summary>The host's own message objects that fit, in prompt
        /// order: describe gives each one's <see cref="Message"/> (called
        /// once per message, in order).</summary>
        public static T[] Select<T>(IReadOnlyList<T> messages, Func<T, Message> describe, long maxTokens,
                                    string policy = "Chat", string tokenizer = null)
        {
            if (describe == null) throw Native.Null("describe");
            return Core(messages, describe, maxTokens, null, policy, null, tokenizer);
        }

        /// <summary>The host's own message objects that fit budget.</summary>
        public static T[] Select<T>(IReadOnlyList<T> messages, Func<T, Message> describe, Budget budget,
                                    string policy = "Chat", string tokenizer = null)
        {
            if (describe == null) throw Native.Null("describe");
            if (budget == null) throw Native.Null("budget");
            return Core(messages, describe, 0, budget, policy, null, tokenizer);
        }

        /// <summary>The host's own message objects that fit maxTokens under a
        /// pipeline.</summary>
        public static T[] Select<T>(IReadOnlyList<T> messages, Func<T, Message> describe, long maxTokens,
                                    Pipeline policy, string tokenizer = null)
        {
            if (describe == null) throw Native.Null("describe");
            return Core(messages, describe, maxTokens, null, null, policy, tokenizer);
        }

        /// <summary>The host's own message objects that fit budget under a
        /// pipeline.</summary>
        public static T[] Select<T>(IReadOnlyList<T> messages, Func<T, Message> describe, Budget budget,
                                    Pipeline policy, string tokenizer = null)
        {
            if (describe == null) throw Native.Null("describe");
            if (budget == null) throw Native.Null("budget");
            return Core(messages, describe, 0, budget, null, policy, tokenizer);
        }

        static Message Identity(Message m) { return m; }

        static readonly Args BudgetArgs = new Args("max_tokens", "target_tokens=maxTokens");
        static readonly Args PolicyJsonArgs = new Args("json=policy");
        static readonly Args PolicyPresetArgs = new Args("name=policy");
        static readonly Args TokenizerArgs = new Args("name=tokenizer");
        static readonly Args MessagesArgs = new Args("messages");
        static readonly Args RunArgs = new Args("items=messages", "budget", "report");

        static T[] Core<T>(IReadOnlyList<T> messages, Func<T, Message> describe, long maxTokens, Budget budgetObject,
                           string policyText, Pipeline policyObject, string tokenizerName)
        {
            if (messages == null) throw Native.Null("messages");
            int n = messages.Count;
            var ms = new Message[n];
            for (int i = 0; i < n; i++)
            {
                var m = describe(messages[i]);
                if (m == null) throw new ArgumentNullException("messages", "messages[" + i + "] is null");
                if (m.Text == null) throw new ArgumentNullException("messages", "messages[" + i + "].Text is null");
                Native.CheckUtf16(m.Text, "messages[" + i + "].Text");
                if (m.Kind != null) Native.CheckUtf16(m.Kind, "messages[" + i + "].Kind");
                ms[i] = m;
            }

            Budget ownBudget = null;
            Pipeline ownPipeline = null;
            Tokenizer tokenizer = null;
            Items items = null;
            try
            {
                // The budget: an object, or maxTokens for both max and target.
                Budget budget = budgetObject;
                if (budget == null)
                {
                    BudgetHandle bh;
                    Native.Check(Native.cupel_budget_new(maxTokens, maxTokens, out bh), BudgetArgs);
                    budget = ownBudget = Budget.Wrap(bh);
                }
                else
                {
                    Native.Arg(budget, "budget");
                }

                // The policy: a pipeline, a policy document or a preset name;
                // none (null), the Chat preset.
                Pipeline pipeline = policyObject;
                if (pipeline == null)
                {
                    if (policyText == null) policyText = "Chat";
                    var trimmed = policyText.TrimStart();
                    var h = trimmed.Length > 0 && trimmed[0] == '{'
                        ? Policy.ReadPipeline(policyText, "policy", PolicyJsonArgs)
                        : Policy.ReadPreset(policyText, "policy", PolicyPresetArgs);
                    pipeline = ownPipeline = Pipeline.Wrap(h);
                }
                else
                {
                    Native.Arg(pipeline, "policy");
                }

                // Tokens: the tokenizer argument, else the policy's, else o200k_base.
                if (tokenizerName == null) tokenizerName = PolicyTokenizer(pipeline);
                var nameBytes = Native.Utf8Z(tokenizerName ?? Tokenizer.O200kBase, "tokenizer");
                TokenizerHandle th;
                Native.Check(Native.cupel_tokenizer_new(nameBytes, out th), TokenizerArgs);
                tokenizer = Tokenizer.Wrap(th);

                items = new Items();
                Push(items, tokenizer, ms);
                SetAttributes(items, ms);

                // What the run says of its items (pinned messages that
                // exceed the budget, say) is said of the messages.
                int[] placed = pipeline.RunNamed(items, budget, null, RunArgs);
                var result = new T[placed.Length];
                for (int k = 0; k < placed.Length; k++) result[k] = messages[placed[k]];
                return result;
            }
            finally
            {
                if (items != null) items.Dispose();
                if (tokenizer != null) tokenizer.Dispose();
                if (ownPipeline != null) ownPipeline.Dispose();
                if (ownBudget != null) ownBudget.Dispose();
            }
        }

        /// <summary>The name of the pipeline's built-in tokenizer, or null
        /// when it has none. One from a vocabulary file (SetTokenizer) has no
        /// name: the caller must pass the tokenizer.</summary>
        static string PolicyTokenizer(Pipeline pipeline)
        {
            var h = Native.Arg(pipeline, "policy");
            var name = PolicyNative.cupel_pipeline_tokenizer_name(h);
            GC.KeepAlive(pipeline);
            if (name != IntPtr.Zero) return Native.Utf8(name);
            if (pipeline.TokenizerGiven)
                throw new CupelArgumentException(Status.InvalidArgument, "tokenizer is null and the policy's " +
                    "tokenizer, loaded from a vocabulary file, has no name; name the tokenizer", "tokenizer", null);
            return null;
        }

        static readonly Regex Column = new Regex(@"\b(texts|kinds|scores)\[(\d+)\]", RegexOptions.CultureInvariant);

        /// <summary>The messages pushed as items of their texts' tokens; the
        /// library's "texts[3]" is "messages[3].Text" here.</summary>
        static void Push(Items items, Tokenizer tokenizer, Message[] ms)
        {
            int n = ms.Length;
            if (n == 0) return;
            var texts = new string[n];
            var scores = new double[n];
            for (int i = 0; i < n; i++)
            {
                texts[i] = ms[i].Text;
                scores[i] = ms[i].Score;
            }
            using (var strings = new NativeStrings())
            {
                var kinds = new IntPtr[n];
                for (int i = 0; i < n; i++) kinds[i] = strings.Get(ms[i].Kind ?? "Message", "messages", i);
                Status st;
                using (var packed = new Native.PackedTexts(texts, "messages"))
                    st = Native.cupel_items_push_texts(items.Handle, tokenizer.Handle, (UIntPtr)n, packed.Pointers,
                        packed.Lengths, scores, kinds);
                if (st == Status.Ok) return;
                var native = Native.Utf8(Native.cupel_last_error());
                var named = Column.Replace(native, m => "messages[" + m.Groups[2].Value + "]." +
                    (m.Groups[1].Value == "texts" ? "Text" : m.Groups[1].Value == "kinds" ? "Kind" : "Score"));
                throw MessagesArgs.Error(st, named);
            }
        }

        /// <summary>Groups, pinned flags, timestamps, priorities, relevance
        /// hints and keys, by docs/policies.md's rules.</summary>
        static void SetAttributes(Items items, Message[] ms)
        {
            int n = ms.Length;
            if (n == 0) return;
            var groups = GroupsOf(ms);
            if (Array.Exists(groups, g => g != 0)) items.SetGroups(0, groups);
            var pinned = new bool[n];
            bool anyPinned = false, anyTimestamp = false, anyKey = false;
            var keys = new ulong[n];
            for (int i = 0; i < n; i++)
            {
                pinned[i] = ms[i].Pinned;
                anyPinned |= pinned[i];
                anyTimestamp |= ms[i].Timestamp.HasValue;
                keys[i] = ms[i].Key;
                anyKey |= keys[i] != 0;
            }
            if (anyPinned) items.SetPinnedMany(0, pinned);
            if (!anyTimestamp)
            {
                var positions = new long[n];
                for (int i = 0; i < n; i++) positions[i] = i;
                items.SetTimestamps(0, positions);
            }
            for (int i = 0; i < n; i++)
            {
                var m = ms[i];
                if (m.Timestamp.HasValue) items.SetTimestamp(i, m.Timestamp.Value.ToUnixTimeMilliseconds());
                if (m.Priority.HasValue) items.SetPriority(i, m.Priority.Value);
                if (m.Relevance.HasValue)
                {
                    var st = Native.cupel_items_set_relevance_hint(items.Handle, (UIntPtr)i, m.Relevance.Value);
                    if (st != Status.Ok)
                        throw MessagesArgs.Error(st, "messages[" + i + "].Relevance: " +
                            Native.Utf8(Native.cupel_last_error()));
                }
            }
            if (anyKey) items.SetKeys(0, keys);
        }

        /// <summary>The keep-together groups Select gives messages (as
        /// <see cref="Items.SetGroups"/> takes them): messages that share a
        /// Group, or a tool call id (a ToolCallId or one of their
        /// ToolCallIds), are one group, transitively; groups are numbered 1,
        /// 2, ... in the order of their first message, and a message with
        /// none of these is in none (0). Group names and tool call ids are
        /// separate: a Group "x" and a ToolCallId "x" do not join. A null or
        /// "" group or id is none.</summary>
        public static ulong[] Groups(IReadOnlyList<Message> messages)
        {
            if (messages == null) throw Native.Null("messages");
            var ms = new Message[messages.Count];
            for (int i = 0; i < ms.Length; i++)
            {
                ms[i] = messages[i];
                if (ms[i] == null) throw new ArgumentNullException("messages", "messages[" + i + "] is null");
            }
            return GroupsOf(ms);
        }

        static ulong[] GroupsOf(Message[] ms)
        {
            int n = ms.Length;
            var parent = new int[n];
            var keyed = new bool[n];
            for (int i = 0; i < n; i++) parent[i] = i;
            var first = new Dictionary<string, int>(StringComparer.Ordinal);
            Func<int, int> find = null;
            find = x =>
            {
                while (parent[x] != x)
                {
                    parent[x] = parent[parent[x]];
                    x = parent[x];
                }
                return x;
            };
            Action<int, string> join = (i, key) =>
            {
                keyed[i] = true;
                int j;
                if (!first.TryGetValue(key, out j))
                {
                    first[key] = i;
                    return;
                }
                int a = find(i), b = find(j);
                if (a != b) parent[Math.Max(a, b)] = Math.Min(a, b);
            };
            for (int i = 0; i < n; i++)
            {
                var m = ms[i];
                // Group names and tool call ids are separate name spaces; null
                // and "" are none.
                if (!string.IsNullOrEmpty(m.Group)) join(i, "g:" + m.Group);
                if (!string.IsNullOrEmpty(m.ToolCallId)) join(i, "t:" + m.ToolCallId);
                if (m.ToolCallIds != null)
                    foreach (var id in m.ToolCallIds)
                        if (!string.IsNullOrEmpty(id)) join(i, "t:" + id);
            }
            var groups = new ulong[n];
            var number = new Dictionary<int, ulong>();
            ulong next = 1;
            for (int i = 0; i < n; i++)
            {
                if (!keyed[i]) continue;
                int root = find(i);
                ulong g;
                if (!number.TryGetValue(root, out g)) number[root] = g = next++;
                groups[i] = g;
            }
            return groups;
        }
    }

    public sealed partial class Pipeline
    {
        internal static Pipeline Wrap(PipelineHandle h) { return new Pipeline(h); }
    }

    public sealed partial class Budget
    {
        internal static Budget Wrap(BudgetHandle h) { return new Budget(h); }
    }
}
