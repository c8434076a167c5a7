// libcupel for C#: decides which scored candidates (tokens, relevance score,
// kind) fit a language model's token budget, through libcupel's C ABI.
//
// Plain DllImport with explicit marshalling (UTF-8 strings encoded here,
// arrays pinned for the call), one SafeHandle per native handle, exceptions
// carrying the library's status and message. Compiles with Mono's mcs and
// with the .NET SDK (netstandard2.0); needs libcupel.so (or cupel.dll /
// libcupel.dylib) where the runtime's loader finds it, e.g. LD_LIBRARY_PATH.
//
// Threads: Items, Budget and Slicer are read-only while slicing and may be
// shared by many threads at once; a Report or Stream belongs to one thread
// at a time. Using a handle after Dispose throws ObjectDisposedException.

using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace Cupel
{
    /// <summary>Status codes of the C ABI; the numbers never change.</summary>
    public enum Status
    {
        Ok = 0,
        NullPointer = 1,
        InvalidArgument = 2,
        BufferTooSmall = 3,
        Scarcity = 4,
        Unsupported = 5,
        Capacity = 6,
        Internal = 7,
    }

    /// <summary>What a count slicer does when too few items of a kind exist.</summary>
    public enum Scarcity
    {
        /// <summary>Take what exists and record a shortfall in the Report.</summary>
        Degrade = 0,
        /// <summary>Fail the slice call with Status.Scarcity.</summary>
        Error = 1,
    }

    /// <summary>What every libcupel error carries: the status.</summary>
    public interface ICupelError
    {
        Status Status { get; }
        string NativeMessage { get; }
    }

    /// <summary>A caller mistake (CUPEL_ERROR_INVALID_ARGUMENT or
    /// CUPEL_ERROR_NULL_POINTER): an ArgumentException, with the status and
    /// the library's message naming the argument.</summary>
    public class CupelArgumentException : ArgumentException, ICupelError
    {
        public Status Status { get; private set; }
        public string NativeMessage { get; private set; }

        public CupelArgumentException(Status status, string message)
            : base(Native.StatusName((int)status) + ": " + message)
        {
            Status = status;
            NativeMessage = message;
        }
    }

    /// <summary>A failed libcupel call that is not a caller mistake (buffer,
    /// scarcity, unsupported, capacity, internal): its status and the
    /// library's message.</summary>
    public class CupelException : Exception, ICupelError
    {
        public Status Status { get; private set; }
        public string NativeMessage { get; private set; }

        public CupelException(Status status, string message)
            : base(Native.StatusName((int)status) + ": " + message)
        {
            Status = status;
            NativeMessage = message;
        }
    }

    /// <summary>One QuotaSlice entry: percentages of the target for a kind.</summary>
    public struct Quota
    {
        public string Kind;
        public double RequirePercent;
        public double CapPercent;

        public Quota(string kind, double requirePercent, double capPercent)
        {
            Kind = kind;
            RequirePercent = requirePercent;
            CapPercent = capPercent;
        }
    }

    /// <summary>One count entry: at least Require, at most Cap items of Kind
    /// (Require &lt;= Cap; a Cap of 0 excludes the kind).</summary>
    public struct CountQuota
    {
        public string Kind;
        public uint Require;
        public uint Cap;

        public CountQuota(string kind, uint require, uint cap)
        {
            Kind = kind;
            Require = require;
            Cap = cap;
        }
    }

    /// <summary>A count requirement that could not be met (Scarcity.Degrade).</summary>
    public struct Shortfall
    {
        public string Kind;
        public uint Required;
        public uint Satisfied;

        public override string ToString()
        {
            return Kind + ": " + Satisfied + " of " + Required;
        }
    }

    /// <summary>Library-wide information.</summary>
    public static class Library
    {
        /// <summary>The library version, e.g. "0.1.0".</summary>
        public static string Version { get { return Native.Utf8(Native.cupel_version()); } }

        /// <summary>The ABI version (CUPEL_ABI_VERSION).</summary>
        public static uint AbiVersion { get { return Native.cupel_abi_version(); } }

        /// <summary>Native handles created and not yet freed in this process
        /// (for leak checks: finalizers free what was never disposed).</summary>
        public static long LiveHandles { get { return (long)Native.cupel_live_handles(); } }

        /// <summary>The fixed name of a status, e.g. "CUPEL_ERROR_CAPACITY".</summary>
        public static string StatusName(Status status) { return Native.StatusName((int)status); }
    }

    // ---- handles ---------------------------------------------------------------

    public sealed class ItemsHandle : SafeHandle
    {
        public ItemsHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.cupel_items_free(handle); return true; }
    }

    public sealed class BudgetHandle : SafeHandle
    {
        public BudgetHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.cupel_budget_free(handle); return true; }
    }

    public sealed class SlicerHandle : SafeHandle
    {
        public SlicerHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.cupel_slicer_free(handle); return true; }
    }

    public sealed class ReportHandle : SafeHandle
    {
        public ReportHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.cupel_report_free(handle); return true; }
    }

    public sealed class StreamHandle : SafeHandle
    {
        public StreamHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.cupel_stream_free(handle); return true; }
    }

    /// <summary>The scored candidates; an item's index is its push order.</summary>
    public sealed class Items : IDisposable
    {
        internal readonly ItemsHandle Handle;

        public Items()
        {
            Native.Check(Native.cupel_items_new(out Handle));
        }

        /// <summary>Adds one item; a null kind means the default, "Message".</summary>
        public void Push(long tokens, double score, string kind = null)
        {
            Native.Check(Native.cupel_items_push(Native.Live(Handle, this), tokens, score, Native.Utf8Z(kind)));
        }

        /// <summary>Adds tokens.Length items at once, all or nothing. kinds may be
        /// null (all default) or hold one entry per item (null = default).</summary>
        public void PushMany(long[] tokens, double[] scores, string[] kinds = null)
        {
            if (tokens == null || scores == null)
                throw new ArgumentNullException(tokens == null ? "tokens" : "scores");
            if (scores.Length != tokens.Length || (kinds != null && kinds.Length != tokens.Length))
                throw new CupelArgumentException(Status.InvalidArgument, string.Format(
                    "PushMany: {0} tokens, {1} scores and {2} kinds; the lengths must agree",
                    tokens.Length, scores.Length, kinds == null ? 0 : kinds.Length));
            // The kinds packed in one UTF-8 buffer (null: the default kind):
            // one array to marshal, not a native string per item. The packed
            // form cannot carry "" (an error) or an embedded NUL: those go as
            // an array of strings, so the library names the bad entry.
            int length = 0;
            var packed = kinds == null ? null : Native.Packed(kinds, out length);
            if (kinds == null || packed != null)
            {
                Native.Check(Native.cupel_items_push_many_packed(Native.Live(Handle, this), (UIntPtr)tokens.Length,
                    tokens, scores, packed, (UIntPtr)length));
                return;
            }
            using (var strings = new NativeStrings())
            {
                var kindPtrs = new IntPtr[kinds.Length];
                for (int i = 0; i < kinds.Length; i++) kindPtrs[i] = strings.Get(kinds[i]);
                Native.Check(Native.cupel_items_push_many(Native.Live(Handle, this), (UIntPtr)tokens.Length,
                    tokens, scores, kindPtrs));
            }
        }

        /// <summary>Puts item index in keep-together group group (0: none). Items
        /// that share a non-zero group are selected all together or not at all
        /// and placed next to each other in push order (README "Groups").</summary>
        public void SetGroup(int index, ulong group)
        {
            if (index < 0)
                throw new CupelArgumentException(Status.InvalidArgument, "SetGroup: index " + index + " is negative");
            Native.Check(Native.cupel_items_set_group(Native.Live(Handle, this), (UIntPtr)index, group));
        }

        /// <summary>Sets the groups of items first .. first + groups.Length - 1
        /// in one call, all or nothing.</summary>
        public void SetGroups(int first, ulong[] groups)
        {
            if (groups == null) throw new ArgumentNullException("groups");
            if (first < 0)
                throw new CupelArgumentException(Status.InvalidArgument, "SetGroups: first " + first + " is negative");
            Native.Check(Native.cupel_items_set_groups(Native.Live(Handle, this), (UIntPtr)first,
                (UIntPtr)groups.Length, groups));
        }

        // ---- item attributes (single and bulk: one native call per column) ----

        public void SetContent(int index, string content)
        {
            Native.Check(Native.cupel_items_set_content(Native.Live(Handle, this), Native.Index(index), Native.Utf8Z(content)));
        }
        public void SetTimestamp(int index, long unixMillis)
        {
            Native.Check(Native.cupel_items_set_timestamp(Native.Live(Handle, this), Native.Index(index), unixMillis));
        }
        public void SetPriority(int index, long priority)
        {
            Native.Check(Native.cupel_items_set_priority(Native.Live(Handle, this), Native.Index(index), priority));
        }
        public void SetPinned(int index, bool pinned)
        {
            Native.Check(Native.cupel_items_set_pinned(Native.Live(Handle, this), Native.Index(index), pinned ? (byte)1 : (byte)0));
        }
        public void SetRelevanceHint(int index, double hint)
        {
            Native.Check(Native.cupel_items_set_relevance_hint(Native.Live(Handle, this), Native.Index(index), hint));
        }
        public void SetSource(int index, string source)
        {
            Native.Check(Native.cupel_items_set_source(Native.Live(Handle, this), Native.Index(index), Native.Utf8Z(source)));
        }
        public void AddTag(int index, string tag)
        {
            Native.Check(Native.cupel_items_add_tag(Native.Live(Handle, this), Native.Index(index), Native.Utf8Z(tag)));
        }
        public void SetMetadata(int index, string key, string value)
        {
            Native.Check(Native.cupel_items_set_metadata(Native.Live(Handle, this), Native.Index(index), Native.Utf8Z(key), Native.Utf8Z(value)));
        }
        /// <summary>Contents of items first .. first + contents.Length - 1; a null
        /// element leaves that item's content as it is.</summary>
        public void SetContents(int first, string[] contents)
        {
            if (contents == null) throw new ArgumentNullException("contents");
            int length;
            var packed = Native.Packed(contents, out length);
            if (packed != null)
            {
                Native.Check(Native.cupel_items_set_contents_packed(Native.Live(Handle, this), Native.Index(first),
                    (UIntPtr)contents.Length, packed, (UIntPtr)length));
                return;
            }
            using (var strings = new NativeStrings())
            {
                var p = new IntPtr[contents.Length];
                for (int i = 0; i < p.Length; i++) p[i] = strings.Get(contents[i]);
                Native.Check(Native.cupel_items_set_contents(Native.Live(Handle, this), Native.Index(first), (UIntPtr)p.Length, p));
            }
        }
        public void SetTimestamps(int first, long[] unixMillis)
        {
            if (unixMillis == null) throw new ArgumentNullException("unixMillis");
            Native.Check(Native.cupel_items_set_timestamps(Native.Live(Handle, this), Native.Index(first), (UIntPtr)unixMillis.Length, unixMillis));
        }
        public void SetPriorities(int first, long[] priorities)
        {
            if (priorities == null) throw new ArgumentNullException("priorities");
            Native.Check(Native.cupel_items_set_priorities(Native.Live(Handle, this), Native.Index(first), (UIntPtr)priorities.Length, priorities));
        }
        public void SetPinnedMany(int first, bool[] pinned)
        {
            if (pinned == null) throw new ArgumentNullException("pinned");
            var b = Native.Bytes(pinned.Length);
            for (int i = 0; i < pinned.Length; i++) b[i] = pinned[i] ? (byte)1 : (byte)0;
            Native.Check(Native.cupel_items_set_pinned_many(Native.Live(Handle, this), Native.Index(first), (UIntPtr)pinned.Length, b));
        }
        public void SetRelevanceHints(int first, double[] hints)
        {
            if (hints == null) throw new ArgumentNullException("hints");
            Native.Check(Native.cupel_items_set_relevance_hints(Native.Live(Handle, this), Native.Index(first), (UIntPtr)hints.Length, hints));
        }

        /// <summary>The number of items.</summary>
        public int Count { get { return (int)Native.cupel_items_len(Native.Live(Handle, this)); } }

        /// <summary>Removes every item.</summary>
        public void Clear() { Native.cupel_items_clear(Native.Live(Handle, this)); }

        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>A token budget: hard ceiling (max) and the slicers' goal (target).</summary>
    public sealed class Budget : IDisposable
    {
        internal readonly BudgetHandle Handle;

        public Budget(long maxTokens, long targetTokens)
        {
            Native.Check(Native.cupel_budget_new(maxTokens, targetTokens, out Handle));
        }

        public void SetOutputReserve(long tokens)
        {
            Native.Check(Native.cupel_budget_set_output_reserve(Native.Live(Handle, this), tokens));
        }

        public void SetSafetyMargin(double percent)
        {
            Native.Check(Native.cupel_budget_set_safety_margin(Native.Live(Handle, this), percent));
        }

        public void Reserve(string kind, long tokens)
        {
            Native.Check(Native.cupel_budget_reserve(Native.Live(Handle, this), Native.Utf8Z(kind), tokens));
        }

        /// <summary>The (max, target) a slice call with pinnedTokens would use.</summary>
        public void Effective(long pinnedTokens, out long maxTokens, out long targetTokens)
        {
            Native.Check(Native.cupel_budget_effective(Native.Live(Handle, this), pinnedTokens,
                out maxTokens, out targetTokens));
        }

        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>A configured slicing strategy.</summary>
    public sealed class Slicer : IDisposable
    {
        /// <summary>The KnapsackSlice default bucket size of the spec.</summary>
        public const long DefaultBucketSize = 100;

        internal readonly SlicerHandle Handle;

        private Slicer(SlicerHandle handle) { Handle = handle; }

        /// <summary>GreedySlice: value density order, greedy fill.</summary>
        public static Slicer Greedy()
        {
            SlicerHandle h;
            Native.Check(Native.cupel_slicer_new_greedy(out h));
            return new Slicer(h);
        }

        /// <summary>KnapsackSlice with tokens discretised in buckets of bucketSize.</summary>
        public static Slicer Knapsack(long bucketSize = DefaultBucketSize)
        {
            SlicerHandle h;
            Native.Check(Native.cupel_slicer_new_knapsack(bucketSize, out h));
            return new Slicer(h);
        }

        /// <summary>QuotaSlice over inner (which it copies).</summary>
        public static Slicer Quota(Slicer inner, Quota[] quotas)
        {
            if (quotas == null) throw new ArgumentNullException("quotas");
            using (var strings = new NativeStrings())
            {
                var q = new Native.NativeQuota[quotas.Length];
                for (int i = 0; i < quotas.Length; i++)
                    q[i] = new Native.NativeQuota
                    {
                        Kind = strings.Get(quotas[i].Kind),
                        RequirePercent = quotas[i].RequirePercent,
                        CapPercent = quotas[i].CapPercent,
                    };
                SlicerHandle h;
                Native.Check(Native.cupel_slicer_new_quota(Native.LiveOrNull(inner), q, (UIntPtr)q.Length, out h));
                return new Slicer(h);
            }
        }

        /// <summary>CountQuotaSlice over inner (not a KnapsackSlice: use
        /// CountConstrainedKnapsack).</summary>
        public static Slicer CountQuota(Slicer inner, CountQuota[] entries, Scarcity scarcity)
        {
            using (var strings = new NativeStrings())
            {
                var e = Native.CountEntries(strings, entries);
                SlicerHandle h;
                Native.Check(Native.cupel_slicer_new_count_quota(Native.LiveOrNull(inner), e, (UIntPtr)e.Length,
                    (int)scarcity, out h));
                return new Slicer(h);
            }
        }

        /// <summary>CountConstrainedKnapsackSlice.</summary>
        public static Slicer CountConstrainedKnapsack(long bucketSize, CountQuota[] entries, Scarcity scarcity)
        {
            using (var strings = new NativeStrings())
            {
                var e = Native.CountEntries(strings, entries);
                SlicerHandle h;
                Native.Check(Native.cupel_slicer_new_count_constrained_knapsack(bucketSize, e, (UIntPtr)e.Length,
                    (int)scarcity, out h));
                return new Slicer(h);
            }
        }

        /// <summary>Bound on the working memory of one slice call (default 1 GiB);
        /// over it a call fails with Status.Capacity.</summary>
        public ulong MemoryLimit
        {
            get { return (ulong)Native.cupel_slicer_memory_limit(Native.Live(Handle, this)); }
            set { Native.Check(Native.cupel_slicer_set_memory_limit(Native.Live(Handle, this), (UIntPtr)value)); }
        }

        /// <summary>Runs the Sort and Slice stages: the chosen item indices in
        /// the slicer's order. report may be null.</summary>
        public int[] Slice(Items items, Budget budget, long pinnedTokens = 0, Report report = null)
        {
            if (items == null) throw new ArgumentNullException("items");
            if (budget == null) throw new ArgumentNullException("budget");
            var buf = Native.IndexBuffer(items.Count);
            UIntPtr n;
            Native.Check(Native.cupel_slice(Native.Live(Handle, this), Native.Live(items.Handle, items),
                Native.Live(budget.Handle, budget), pinnedTokens, buf, (UIntPtr)buf.Length, out n,
                report == null ? Native.NoReport : Native.Live(report.Handle, report)));
            return Native.Ints(buf, n);
        }

        /// <summary>Items selected with the full budget but not with the budget
        /// reduced by slackTokens.</summary>
        public int[] MarginalItems(Items items, Budget budget, long pinnedTokens, long slackTokens)
        {
            if (items == null) throw new ArgumentNullException("items");
            if (budget == null) throw new ArgumentNullException("budget");
            var buf = Native.IndexBuffer(items.Count);
            UIntPtr n;
            Native.Check(Native.cupel_marginal_items(Native.Live(Handle, this), Native.Live(items.Handle, items),
                Native.Live(budget.Handle, budget), pinnedTokens, slackTokens, buf, (UIntPtr)buf.Length, out n));
            return Native.Ints(buf, n);
        }

        /// <summary>The smallest target (up to searchCeiling) at which item
        /// targetIndex is selected; null when it is not selected even at
        /// searchCeiling.</summary>
        public long? FindMinBudget(Items items, long pinnedTokens, int targetIndex, long searchCeiling)
        {
            if (items == null) throw new ArgumentNullException("items");
            if (targetIndex < 0)
                throw new CupelArgumentException(Status.InvalidArgument,
                    "FindMinBudget: targetIndex is " + targetIndex + "; it must be >= 0");
            long tokens;
            Native.Check(Native.cupel_find_min_budget(Native.Live(Handle, this), Native.Live(items.Handle, items),
                pinnedTokens, (UIntPtr)targetIndex, searchCeiling, out tokens));
            return tokens < 0 ? (long?)null : tokens;
        }

        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>What a slice call did besides the selection.</summary>
    public sealed class Report : IDisposable
    {
        internal readonly ReportHandle Handle;

        public Report() { Native.Check(Native.cupel_report_new(out Handle)); }

        public long EffectiveMaxTokens { get { return Native.cupel_report_effective_max_tokens(Native.Live(Handle, this)); } }
        public long EffectiveTargetTokens { get { return Native.cupel_report_effective_target_tokens(Native.Live(Handle, this)); } }
        public long SelectedTokens { get { return Native.cupel_report_selected_tokens(Native.Live(Handle, this)); } }

        /// <summary>Count requirements the last call could not meet.</summary>
        public Shortfall[] Shortfalls
        {
            get
            {
                var h = Native.Live(Handle, this);
                var n = (int)Native.cupel_report_shortfall_count(h);
                var result = new Shortfall[n];
                for (int i = 0; i < n; i++)
                {
                    IntPtr kind;
                    uint req, sat;
                    Native.Check(Native.cupel_report_shortfall(h, (UIntPtr)i, out kind, out req, out sat));
                    result[i] = new Shortfall { Kind = Native.Utf8(kind), Required = req, Satisfied = sat };
                }
                return result;
            }
        }

        /// <summary>Included items in placed order.</summary>
        public Decision[] Included { get { return List(true); } }

        /// <summary>Excluded items, score descending.</summary>
        public Decision[] Excluded { get { return List(false); } }

        public long TotalCandidates { get { return Native.cupel_report_total_candidates(Native.Live(Handle, this)); } }
        public long TotalTokensConsidered { get { return Native.cupel_report_total_tokens_considered(Native.Live(Handle, this)); } }
        /// <summary>Tokens the placed items exceed the target by under
        /// Overflow.Proceed (the spec's OverflowEvent); 0 otherwise.</summary>
        public long TokensOverBudget { get { return Native.cupel_report_tokens_over_budget(Native.Live(Handle, this)); } }

        /// <summary>The specification's SelectionReport JSON; items: the list the run saw.</summary>
        public string Json(Items items)
        {
            var h = Native.Live(Handle, this);
            UIntPtr n;
            var st = Native.cupel_report_json(h, Native.Live(items.Handle, items), null, UIntPtr.Zero, out n);
            if (st != Status.BufferTooSmall) Native.Check(st);
            var buf = new byte[(int)n + 1];
            Native.Check(Native.cupel_report_json(h, items.Handle, buf, (UIntPtr)buf.Length, out n));
            return Encoding.UTF8.GetString(buf, 0, (int)n);
        }

        private Decision[] List(bool included)
        {
            var h = Native.Live(Handle, this);
            int n = (int)(included ? Native.cupel_report_included_count(h) : Native.cupel_report_excluded_count(h));
            var result = new Decision[n];
            for (int i = 0; i < n; i++)
            {
                Native.NativeDecision d;
                Native.Check(included ? Native.cupel_report_included(h, (UIntPtr)i, out d) : Native.cupel_report_excluded(h, (UIntPtr)i, out d));
                result[i] = new Decision
                {
                    Index = (int)d.ItemIndex,
                    Score = d.Score,
                    Reason = (Reason)d.Reason,
                    ItemTokens = d.ItemTokens,
                    AvailableTokens = d.AvailableTokens,
                    Related = d.RelatedIndex == UIntPtr.Subtract(UIntPtr.Zero, 1) ? (int?)null : (int)d.RelatedIndex,
                    Group = d.Group,
                    GroupTokens = d.GroupTokens,
                };
            }
            return result;
        }

        /// <summary>Items a count cap excluded in the last call.</summary>
        public int[] CapExcluded
        {
            get
            {
                var h = Native.Live(Handle, this);
                var n = (int)Native.cupel_report_cap_excluded_count(h);
                var result = new int[n];
                for (int i = 0; i < n; i++)
                {
                    UIntPtr idx;
                    Native.Check(Native.cupel_report_cap_excluded(h, (UIntPtr)i, out idx));
                    result[i] = (int)idx;
                }
                return result;
            }
        }

        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>Selects items as they arrive, batch by batch, up to a target.</summary>
    public sealed class Stream : IDisposable
    {
        internal readonly StreamHandle Handle;
        private int pushed;

        /// <summary>batchSize 0 means the default (32).</summary>
        public Stream(long targetTokens, int batchSize = 0)
        {
            if (batchSize < 0)
                throw new CupelArgumentException(Status.InvalidArgument, "batchSize is " + batchSize + "; it must be >= 0");
            Native.Check(Native.cupel_stream_new(targetTokens, (UIntPtr)batchSize, out Handle));
        }

        /// <summary>Offers the next item; true once the budget is spent.</summary>
        public bool Push(long tokens, double score)
        {
            byte full;
            Native.Check(Native.cupel_stream_push(Native.Live(Handle, this), tokens, score, out full));
            pushed++;
            return full != 0;
        }

        /// <summary>Offers the next item as a member of keep-together group group
        /// (0: none, as Push). A group's members come one after another and are
        /// taken all or none; a group that already ended throws.</summary>
        public bool PushGrouped(long tokens, double score, ulong group)
        {
            byte full;
            Native.Check(Native.cupel_stream_push_grouped(Native.Live(Handle, this), tokens, score, group, out full));
            pushed++;
            return full != 0;
        }

        /// <summary>Decides the last batch; the taken indices in the order taken.</summary>
        public int[] Finish()
        {
            var buf = Native.IndexBuffer(pushed);
            UIntPtr n;
            Native.Check(Native.cupel_stream_finish(Native.Live(Handle, this), buf, (UIntPtr)buf.Length, out n));
            return Native.Ints(buf, n);
        }

        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>NUL-terminated UTF-8 copies of strings in native memory, one per
    /// distinct string, freed on Dispose.</summary>
    internal sealed class NativeStrings : IDisposable
    {
        private readonly Dictionary<string, IntPtr> map = new Dictionary<string, IntPtr>();

        public IntPtr Get(string s)
        {
            if (s == null) return IntPtr.Zero;
            IntPtr p;
            if (map.TryGetValue(s, out p)) return p;
            var bytes = Native.Utf8Z(s);
            p = Marshal.AllocHGlobal(bytes.Length);
            Marshal.Copy(bytes, 0, p, bytes.Length);
            map[s] = p;
            return p;
        }

        public void Dispose()
        {
            foreach (var p in map.Values) Marshal.FreeHGlobal(p);
            map.Clear();
        }
    }

    internal static class Native
    {
        /// <summary>The native library's name: "cupel" (libcupel.so, cupel.dll,
        /// libcupel.dylib). iOS links it statically: build with
        /// CUPEL_STATIC_LINK (Unity: UNITY_IOS) to use "__Internal".</summary>
#if CUPEL_STATIC_LINK || UNITY_IOS
        internal const string Lib = "__Internal";
#else
        internal const string Lib = "cupel";
#endif

        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeQuota
        {
            public IntPtr Kind;
            public double RequirePercent;
            public double CapPercent;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeCountQuota
        {
            public IntPtr Kind;
            public uint Require;
            public uint Cap;
        }

        /// <summary>cupel_decision (blittable).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeDecision
        {
            public UIntPtr ItemIndex;
            public double Score;
            public int Reason;
            public long ItemTokens;
            public long AvailableTokens;
            public UIntPtr RelatedIndex;
            public ulong Group;
            public long GroupTokens;
        }

        /// <summary>cupel_kind_weight / cupel_tag_weight.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeWeight
        {
            public IntPtr Name;
            public double Weight;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeDecayWindow
        {
            public double MaxAgeSecs;
            public double Score;
        }

        /// <summary>Strings back to back, each NUL-terminated UTF-8 (null as
        /// ""), or null when the packed form cannot carry them as they are: it
        /// reads "" as absent. (An embedded NUL splits a string in two, which
        /// the library refuses: the count no longer matches.) ASCII columns,
        /// the common case, are copied char by char in one pass into the
        /// first `length` bytes of this thread's scratch buffer; any other
        /// character sends the column through one join and one UTF-8
        /// encoding (a new array).</summary>
        internal static byte[] Packed(string[] strings, out int length)
        {
            int size = strings.Length;
            foreach (var s in strings)
            {
                if (s == null) continue;
                if (s.Length == 0) { length = 0; return null; }
                size += s.Length;
            }
            var bytes = Bytes(size);
            int at = 0;
            foreach (var s in strings)
            {
                if (s != null)
                {
                    foreach (char c in s)
                    {
                        if (c >= 0x80)
                        {
                            var utf8 = Encoding.UTF8.GetBytes(string.Join("\0", strings) + "\0");
                            length = utf8.Length;
                            return utf8;
                        }
                        bytes[at++] = (byte)c;
                    }
                }
                bytes[at++] = 0;
            }
            length = size;
            return bytes;
        }

        // Per-thread buffers the library reads from or writes into during one
        // call (it copies what it keeps; results are copied out before the
        // call returns), so a bulk call allocates no large arrays. Each
        // thread keeps its largest.
        [ThreadStatic] static byte[] scratchBytes;
        [ThreadStatic] static UIntPtr[] scratchIndices;

        /// <summary>A scratch byte buffer of at least n bytes (contents
        /// undefined).</summary>
        internal static byte[] Bytes(int n)
        {
            if (scratchBytes == null || scratchBytes.Length < n) scratchBytes = new byte[Math.Max(n, 256)];
            return scratchBytes;
        }

        /// <summary>A scratch index buffer of at least max(n, 1) entries.</summary>
        internal static UIntPtr[] IndexBuffer(int n)
        {
            if (scratchIndices == null || scratchIndices.Length < n) scratchIndices = new UIntPtr[Math.Max(n, 64)];
            return scratchIndices;
        }

        internal static UIntPtr Index(int i)
        {
            if (i < 0) throw new CupelArgumentException(Status.InvalidArgument, "index " + i + " is negative");
            return (UIntPtr)i;
        }

        internal static readonly ReportHandle NoReport = new ReportHandle();

        internal static void Check(Status st)
        {
            if (st != Status.Ok)
            {
                // Same thread as the failed call: the message is the call's own.
                string message = Utf8(cupel_last_error());
                if (st == Status.InvalidArgument || st == Status.NullPointer)
                    throw new CupelArgumentException(st, message);
                throw new CupelException(st, message);
            }
        }

        internal static T Live<T>(T handle, object owner) where T : SafeHandle
        {
            if (handle.IsClosed) throw new ObjectDisposedException(owner.GetType().Name);
            return handle;
        }

        internal static SlicerHandle LiveOrNull(Slicer s)
        {
            return s == null ? new SlicerHandle() : Live(s.Handle, s);
        }

        internal static string StatusName(int status) { return Utf8(cupel_status_str(status)); }

        internal static byte[] Utf8Z(string s)
        {
            if (s == null) return null;
            var n = Encoding.UTF8.GetByteCount(s);
            var bytes = new byte[n + 1];
            Encoding.UTF8.GetBytes(s, 0, s.Length, bytes, 0);
            return bytes;
        }

        internal static string Utf8(IntPtr p)
        {
            if (p == IntPtr.Zero) return "";
            int len = 0;
            while (Marshal.ReadByte(p, len) != 0) len++;
            var bytes = new byte[len];
            Marshal.Copy(p, bytes, 0, len);
            return Encoding.UTF8.GetString(bytes);
        }

        internal static int[] Ints(UIntPtr[] buf, UIntPtr n)
        {
            var result = new int[(int)n];
            for (int i = 0; i < result.Length; i++) result[i] = (int)buf[i];
            return result;
        }

        internal static NativeCountQuota[] CountEntries(NativeStrings strings, CountQuota[] entries)
        {
            if (entries == null) throw new ArgumentNullException("entries");
            var e = new NativeCountQuota[entries.Length];
            for (int i = 0; i < entries.Length; i++)
                e[i] = new NativeCountQuota { Kind = strings.Get(entries[i].Kind), Require = entries[i].Require, Cap = entries[i].Cap };
            return e;
        }

        [DllImport(Lib)] internal static extern IntPtr cupel_last_error();
        [DllImport(Lib)] internal static extern IntPtr cupel_status_str(int status);
        [DllImport(Lib)] internal static extern IntPtr cupel_version();
        [DllImport(Lib)] internal static extern uint cupel_abi_version();
        [DllImport(Lib)] internal static extern UIntPtr cupel_live_handles();

        [DllImport(Lib)] internal static extern Status cupel_items_new(out ItemsHandle items);
        [DllImport(Lib)] internal static extern void cupel_items_free(IntPtr items);
        [DllImport(Lib)] internal static extern Status cupel_items_push(ItemsHandle items, long tokens, double score, byte[] kind);
        [DllImport(Lib)] internal static extern Status cupel_items_push_many(ItemsHandle items, UIntPtr count, long[] tokens, double[] scores, IntPtr[] kinds);
        [DllImport(Lib)] internal static extern UIntPtr cupel_items_len(ItemsHandle items);
        [DllImport(Lib)] internal static extern Status cupel_items_set_group(ItemsHandle items, UIntPtr index, ulong group);
        [DllImport(Lib)] internal static extern Status cupel_items_set_groups(ItemsHandle items, UIntPtr first, UIntPtr count, ulong[] groups);
        [DllImport(Lib)] internal static extern void cupel_items_clear(ItemsHandle items);

        [DllImport(Lib)] internal static extern Status cupel_budget_new(long maxTokens, long targetTokens, out BudgetHandle budget);
        [DllImport(Lib)] internal static extern void cupel_budget_free(IntPtr budget);
        [DllImport(Lib)] internal static extern Status cupel_budget_set_output_reserve(BudgetHandle budget, long tokens);
        [DllImport(Lib)] internal static extern Status cupel_budget_set_safety_margin(BudgetHandle budget, double percent);
        [DllImport(Lib)] internal static extern Status cupel_budget_reserve(BudgetHandle budget, byte[] kind, long tokens);
        [DllImport(Lib)] internal static extern Status cupel_budget_effective(BudgetHandle budget, long pinned, out long maxTokens, out long targetTokens);

        [DllImport(Lib)] internal static extern Status cupel_slicer_new_greedy(out SlicerHandle slicer);
        [DllImport(Lib)] internal static extern Status cupel_slicer_new_knapsack(long bucketSize, out SlicerHandle slicer);
        [DllImport(Lib)] internal static extern Status cupel_slicer_new_quota(SlicerHandle inner, NativeQuota[] quotas, UIntPtr count, out SlicerHandle slicer);
        [DllImport(Lib)] internal static extern Status cupel_slicer_new_count_quota(SlicerHandle inner, NativeCountQuota[] entries, UIntPtr count, int scarcity, out SlicerHandle slicer);
        [DllImport(Lib)] internal static extern Status cupel_slicer_new_count_constrained_knapsack(long bucketSize, NativeCountQuota[] entries, UIntPtr count, int scarcity, out SlicerHandle slicer);
        [DllImport(Lib)] internal static extern Status cupel_slicer_set_memory_limit(SlicerHandle slicer, UIntPtr bytes);
        [DllImport(Lib)] internal static extern UIntPtr cupel_slicer_memory_limit(SlicerHandle slicer);
        [DllImport(Lib)] internal static extern void cupel_slicer_free(IntPtr slicer);

        [DllImport(Lib)] internal static extern Status cupel_report_new(out ReportHandle report);
        [DllImport(Lib)] internal static extern void cupel_report_free(IntPtr report);
        [DllImport(Lib)] internal static extern long cupel_report_effective_max_tokens(ReportHandle report);
        [DllImport(Lib)] internal static extern long cupel_report_effective_target_tokens(ReportHandle report);
        [DllImport(Lib)] internal static extern long cupel_report_selected_tokens(ReportHandle report);
        [DllImport(Lib)] internal static extern UIntPtr cupel_report_shortfall_count(ReportHandle report);
        [DllImport(Lib)] internal static extern Status cupel_report_shortfall(ReportHandle report, UIntPtr i, out IntPtr kind, out uint required, out uint satisfied);
        [DllImport(Lib)] internal static extern UIntPtr cupel_report_cap_excluded_count(ReportHandle report);
        [DllImport(Lib)] internal static extern Status cupel_report_cap_excluded(ReportHandle report, UIntPtr i, out UIntPtr itemIndex);

        [DllImport(Lib)] internal static extern Status cupel_slice(SlicerHandle slicer, ItemsHandle items, BudgetHandle budget, long pinned, [Out] UIntPtr[] outIndices, UIntPtr capacity, out UIntPtr outLen, ReportHandle report);
        [DllImport(Lib)] internal static extern Status cupel_marginal_items(SlicerHandle slicer, ItemsHandle items, BudgetHandle budget, long pinned, long slack, [Out] UIntPtr[] outIndices, UIntPtr capacity, out UIntPtr outLen);
        [DllImport(Lib)] internal static extern Status cupel_find_min_budget(SlicerHandle slicer, ItemsHandle items, long pinned, UIntPtr targetIndex, long ceiling, out long outTokens);

        [DllImport(Lib)] internal static extern Status cupel_stream_new(long targetTokens, UIntPtr batchSize, out StreamHandle stream);
        [DllImport(Lib)] internal static extern void cupel_stream_free(IntPtr stream);
        [DllImport(Lib)] internal static extern Status cupel_stream_push(StreamHandle stream, long tokens, double score, out byte full);
        [DllImport(Lib)] internal static extern Status cupel_stream_push_grouped(StreamHandle stream, long tokens, double score, ulong group, out byte full);
        [DllImport(Lib)] internal static extern Status cupel_stream_finish(StreamHandle stream, [Out] UIntPtr[] outIndices, UIntPtr capacity, out UIntPtr outLen);

        [DllImport(Lib)] internal static extern Status cupel_items_set_content(ItemsHandle items, UIntPtr index, byte[] content);
        [DllImport(Lib)] internal static extern Status cupel_items_set_timestamp(ItemsHandle items, UIntPtr index, long unixMillis);
        [DllImport(Lib)] internal static extern Status cupel_items_set_priority(ItemsHandle items, UIntPtr index, long priority);
        [DllImport(Lib)] internal static extern Status cupel_items_set_pinned(ItemsHandle items, UIntPtr index, byte pinned);
        [DllImport(Lib)] internal static extern Status cupel_items_set_relevance_hint(ItemsHandle items, UIntPtr index, double hint);
        [DllImport(Lib)] internal static extern Status cupel_items_set_source(ItemsHandle items, UIntPtr index, byte[] source);
        [DllImport(Lib)] internal static extern Status cupel_items_add_tag(ItemsHandle items, UIntPtr index, byte[] tag);
        [DllImport(Lib)] internal static extern Status cupel_items_set_metadata(ItemsHandle items, UIntPtr index, byte[] key, byte[] value);
        [DllImport(Lib)] internal static extern Status cupel_items_set_contents(ItemsHandle items, UIntPtr first, UIntPtr count, IntPtr[] contents);
        [DllImport(Lib)] internal static extern Status cupel_items_set_contents_packed(ItemsHandle items, UIntPtr first, UIntPtr count, byte[] contents, UIntPtr length);
        [DllImport(Lib)] internal static extern Status cupel_items_push_many_packed(ItemsHandle items, UIntPtr count, long[] tokens, double[] scores, byte[] kinds, UIntPtr kindsLength);
        [DllImport(Lib)] internal static extern Status cupel_items_set_timestamps(ItemsHandle items, UIntPtr first, UIntPtr count, long[] values);
        [DllImport(Lib)] internal static extern Status cupel_items_set_priorities(ItemsHandle items, UIntPtr first, UIntPtr count, long[] values);
        [DllImport(Lib)] internal static extern Status cupel_items_set_pinned_many(ItemsHandle items, UIntPtr first, UIntPtr count, byte[] values);
        [DllImport(Lib)] internal static extern Status cupel_items_set_relevance_hints(ItemsHandle items, UIntPtr first, UIntPtr count, double[] values);

        [DllImport(Lib)] internal static extern Status cupel_scorer_new_given(out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_recency(out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_priority(out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_frequency(out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_reflexive(out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_kind(NativeWeight[] weights, UIntPtr count, out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_tag(NativeWeight[] weights, UIntPtr count, out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_composite(IntPtr[] children, double[] weights, UIntPtr count, out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_scaled(ScorerHandle inner, out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_metadata_trust(double defaultScore, out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_metadata_key(byte[] key, byte[] value, double boost, out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_new_decay(int curve, double durationSecs, NativeDecayWindow[] windows, UIntPtr windowCount, long referenceUnixMillis, double nullTimestampScore, out ScorerHandle scorer);
        [DllImport(Lib)] internal static extern void cupel_scorer_free(IntPtr scorer);
        [DllImport(Lib)] internal static extern Status cupel_scorer_score(ScorerHandle scorer, ItemsHandle items, [Out] double[] outScores, UIntPtr capacity, out UIntPtr outLen);

        [DllImport(Lib)] internal static extern Status cupel_placer_new_chronological(out PlacerHandle placer);
        [DllImport(Lib)] internal static extern Status cupel_placer_new_u_shaped(out PlacerHandle placer);
        [DllImport(Lib)] internal static extern Status cupel_placer_place(PlacerHandle placer, ItemsHandle items, UIntPtr[] indices, double[] scores, UIntPtr count, [Out] UIntPtr[] outIndices, UIntPtr capacity, out UIntPtr outLen);
        [DllImport(Lib)] internal static extern void cupel_placer_free(IntPtr placer);

        [DllImport(Lib)] internal static extern Status cupel_pipeline_new(IntPtr scorer, SlicerHandle slicer, IntPtr placer, out PipelineHandle pipeline);
        [DllImport(Lib)] internal static extern Status cupel_pipeline_set_deduplication(PipelineHandle pipeline, byte enabled);
        [DllImport(Lib)] internal static extern Status cupel_pipeline_set_overflow(PipelineHandle pipeline, int strategy);
        [DllImport(Lib)] internal static extern void cupel_pipeline_free(IntPtr pipeline);
        [DllImport(Lib)] internal static extern Status cupel_pipeline_run(PipelineHandle pipeline, ItemsHandle items, BudgetHandle budget, [Out] UIntPtr[] outIndices, UIntPtr capacity, out UIntPtr outLen, ReportHandle report);

        [DllImport(Lib)] internal static extern UIntPtr cupel_report_included_count(ReportHandle report);
        [DllImport(Lib)] internal static extern Status cupel_report_included(ReportHandle report, UIntPtr i, out NativeDecision decision);
        [DllImport(Lib)] internal static extern UIntPtr cupel_report_excluded_count(ReportHandle report);
        [DllImport(Lib)] internal static extern Status cupel_report_excluded(ReportHandle report, UIntPtr i, out NativeDecision decision);
        [DllImport(Lib)] internal static extern long cupel_report_total_candidates(ReportHandle report);
        [DllImport(Lib)] internal static extern long cupel_report_total_tokens_considered(ReportHandle report);
        [DllImport(Lib)] internal static extern long cupel_report_tokens_over_budget(ReportHandle report);
        [DllImport(Lib)] internal static extern Status cupel_report_json(ReportHandle report, ItemsHandle items, [Out] byte[] buf, UIntPtr capacity, out UIntPtr outLen);
    }

    // ---- the pipeline ----------------------------------------------------------

    /// <summary>Why an item was included or excluded; the numbers are the C ABI's.</summary>
    public enum Reason
    {
        Scored = 0,
        Pinned = 1,
        ZeroToken = 2,
        BudgetExceeded = 10,
        ScoredTooLow = 11,
        Deduplicated = 12,
        QuotaCapExceeded = 13,
        QuotaRequireDisplaced = 14,
        NegativeTokens = 15,
        PinnedOverride = 16,
        Filtered = 17,
        CountCapExceeded = 18,
    }

    /// <summary>What the pipeline does when the selection exceeds the target.</summary>
    public enum Overflow { Throw = 0, Truncate = 1, Proceed = 2 }

    /// <summary>The DecayScorer's curves.</summary>
    public enum DecayCurve { Exponential = 0, Step = 1, Window = 2 }

    /// <summary>One item's fate in a report.</summary>
    public struct Decision
    {
        public int Index;
        public double Score;
        public Reason Reason;
        public long ItemTokens;
        /// <summary>BudgetExceeded: the tokens that were left.</summary>
        public long AvailableTokens;
        /// <summary>Deduplicated: the item kept; PinnedOverride: the pinned item.</summary>
        public int? Related;
        /// <summary>The keep-together group, 0 when none.</summary>
        public ulong Group;
        /// <summary>The tokens the decision was made on (the group's, or the item's).</summary>
        public long GroupTokens;

        public override string ToString() { return "#" + Index + " " + Reason; }
    }

    public sealed class ScorerHandle : SafeHandle
    {
        public ScorerHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.cupel_scorer_free(handle); return true; }
    }

    public sealed class PlacerHandle : SafeHandle
    {
        public PlacerHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.cupel_placer_free(handle); return true; }
    }

    public sealed class PipelineHandle : SafeHandle
    {
        public PipelineHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.cupel_pipeline_free(handle); return true; }
    }

    /// <summary>A scorer (the Score stage). Composite and scaled scorers copy
    /// their children, which may be disposed right after.</summary>
    public sealed class Scorer : IDisposable
    {
        internal readonly ScorerHandle Handle;

        private Scorer(ScorerHandle h) { Handle = h; }

        private delegate Status Create(out ScorerHandle h);

        private static Scorer Make(Create create)
        {
            ScorerHandle h;
            Native.Check(create(out h));
            return new Scorer(h);
        }

        public static Scorer Given() { return Make(Native.cupel_scorer_new_given); }
        public static Scorer Recency() { return Make(Native.cupel_scorer_new_recency); }
        public static Scorer Priority() { return Make(Native.cupel_scorer_new_priority); }
        public static Scorer Frequency() { return Make(Native.cupel_scorer_new_frequency); }
        public static Scorer Reflexive() { return Make(Native.cupel_scorer_new_reflexive); }

        private static Native.NativeWeight[] Weights(IDictionary<string, double> weights, NativeStrings strings)
        {
            var keys = new List<string>(weights.Keys);
            keys.Sort(StringComparer.Ordinal);
            var w = new Native.NativeWeight[keys.Count];
            for (int i = 0; i < w.Length; i++) w[i] = new Native.NativeWeight { Name = strings.Get(keys[i]), Weight = weights[keys[i]] };
            return w;
        }

        /// <summary>Kind weights; null: the specification's defaults.</summary>
        public static Scorer Kind(IDictionary<string, double> weights = null)
        {
            using (var strings = new NativeStrings())
            {
                var w = weights == null ? null : Weights(weights, strings);
                ScorerHandle h;
                Native.Check(Native.cupel_scorer_new_kind(w, (UIntPtr)(w == null ? 0 : w.Length), out h));
                return new Scorer(h);
            }
        }

        public static Scorer Tag(IDictionary<string, double> weights)
        {
            if (weights == null) throw new ArgumentNullException("weights");
            using (var strings = new NativeStrings())
            {
                var w = Weights(weights, strings);
                ScorerHandle h;
                Native.Check(Native.cupel_scorer_new_tag(w, (UIntPtr)w.Length, out h));
                return new Scorer(h);
            }
        }

        /// <summary>The weighted mean of (scorer, weight) parts.</summary>
        public static Scorer Composite(params KeyValuePair<Scorer, double>[] parts)
        {
            if (parts == null) throw new ArgumentNullException("parts");
            var kids = new IntPtr[parts.Length];
            var w = new double[parts.Length];
            var added = new bool[parts.Length];
            try
            {
                for (int i = 0; i < parts.Length; i++)
                {
                    parts[i].Key.Handle.DangerousAddRef(ref added[i]);
                    kids[i] = parts[i].Key.Handle.DangerousGetHandle();
                    w[i] = parts[i].Value;
                }
                ScorerHandle h;
                Native.Check(Native.cupel_scorer_new_composite(kids, w, (UIntPtr)kids.Length, out h));
                return new Scorer(h);
            }
            finally
            {
                for (int i = 0; i < parts.Length; i++)
                    if (added[i]) parts[i].Key.Handle.DangerousRelease();
            }
        }

        public static Scorer Scaled(Scorer inner)
        {
            ScorerHandle h;
            Native.Check(Native.cupel_scorer_new_scaled(Native.Live(inner.Handle, inner), out h));
            return new Scorer(h);
        }

        public static Scorer MetadataTrust(double defaultScore = 0.5)
        {
            ScorerHandle h;
            Native.Check(Native.cupel_scorer_new_metadata_trust(defaultScore, out h));
            return new Scorer(h);
        }

        public static Scorer MetadataKey(string key, string value, double boost)
        {
            ScorerHandle h;
            Native.Check(Native.cupel_scorer_new_metadata_key(Native.Utf8Z(key), Native.Utf8Z(value), boost, out h));
            return new Scorer(h);
        }

        /// <summary>windows: (max age in seconds, score), youngest first (step curve).</summary>
        public static Scorer Decay(DecayCurve curve, double durationSecs, KeyValuePair<double, double>[] windows,
                                   long referenceUnixMillis, double nullTimestampScore = 0.5)
        {
            var w = new Native.NativeDecayWindow[windows == null ? 0 : windows.Length];
            for (int i = 0; i < w.Length; i++) w[i] = new Native.NativeDecayWindow { MaxAgeSecs = windows[i].Key, Score = windows[i].Value };
            ScorerHandle h;
            Native.Check(Native.cupel_scorer_new_decay((int)curve, durationSecs, w.Length == 0 ? null : w, (UIntPtr)w.Length,
                referenceUnixMillis, nullTimestampScore, out h));
            return new Scorer(h);
        }

        /// <summary>The score of every item, by index.</summary>
        public double[] Score(Items items)
        {
            var buf = new double[Math.Max(items.Count, 1)];
            UIntPtr n;
            Native.Check(Native.cupel_scorer_score(Native.Live(Handle, this), Native.Live(items.Handle, items), buf, (UIntPtr)items.Count, out n));
            var result = new double[(int)n];
            Array.Copy(buf, result, result.Length);
            return result;
        }

        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>A placer: the final order.</summary>
    public sealed class Placer : IDisposable
    {
        internal readonly PlacerHandle Handle;

        private Placer(PlacerHandle h) { Handle = h; }

        public static Placer Chronological()
        {
            PlacerHandle h;
            Native.Check(Native.cupel_placer_new_chronological(out h));
            return new Placer(h);
        }

        public static Placer UShaped()
        {
            PlacerHandle h;
            Native.Check(Native.cupel_placer_new_u_shaped(out h));
            return new Placer(h);
        }

        /// <summary>The Place stage on its own: the item indices, with their
        /// scores (one each), in placed order.</summary>
        public int[] Place(Items items, int[] indices, double[] scores)
        {
            if (items == null) throw new ArgumentNullException("items");
            if (indices == null) throw new ArgumentNullException("indices");
            if (scores == null) throw new ArgumentNullException("scores");
            if (indices.Length != scores.Length)
                throw new CupelArgumentException(Status.InvalidArgument, "Place: " + indices.Length + " indices and " +
                    scores.Length + " scores; one score per index");
            var idx = new UIntPtr[Math.Max(indices.Length, 1)];
            for (int i = 0; i < indices.Length; i++)
            {
                if (indices[i] < 0)
                    throw new CupelArgumentException(Status.InvalidArgument, "Place: indices[" + i + "] is " + indices[i] + ", negative");
                idx[i] = (UIntPtr)indices[i];
            }
            var buf = Native.IndexBuffer(indices.Length);
            UIntPtr n;
            Native.Check(Native.cupel_placer_place(Native.Live(Handle, this), Native.Live(items.Handle, items), idx,
                scores.Length == 0 ? new double[1] : scores, (UIntPtr)indices.Length, buf, (UIntPtr)buf.Length, out n));
            return Native.Ints(buf, n);
        }

        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>The whole pipeline; keeps copies of its scorer, slicer and placer.</summary>
    public sealed class Pipeline : IDisposable
    {
        internal readonly PipelineHandle Handle;

        /// <summary>scorer null: the pushed scores; placer null: the slicer's order.</summary>
        public Pipeline(Scorer scorer, Slicer slicer, Placer placer, bool deduplication = true, Overflow overflow = Overflow.Throw)
        {
            if (slicer == null) throw new ArgumentNullException("slicer");
            bool s = false, p = false;
            try
            {
                if (scorer != null) scorer.Handle.DangerousAddRef(ref s);
                if (placer != null) placer.Handle.DangerousAddRef(ref p);
                Native.Check(Native.cupel_pipeline_new(
                    scorer == null ? IntPtr.Zero : scorer.Handle.DangerousGetHandle(),
                    Native.Live(slicer.Handle, slicer),
                    placer == null ? IntPtr.Zero : placer.Handle.DangerousGetHandle(),
                    out Handle));
            }
            finally
            {
                if (s) scorer.Handle.DangerousRelease();
                if (p) placer.Handle.DangerousRelease();
            }
            Native.Check(Native.cupel_pipeline_set_deduplication(Handle, deduplication ? (byte)1 : (byte)0));
            Native.Check(Native.cupel_pipeline_set_overflow(Handle, (int)overflow));
        }

        /// <summary>All six stages: the placed item indices; every decision in
        /// report (may be null).</summary>
        public int[] Run(Items items, Budget budget, Report report = null)
        {
            var buf = Native.IndexBuffer(items.Count);
            UIntPtr n;
            Native.Check(Native.cupel_pipeline_run(Native.Live(Handle, this), Native.Live(items.Handle, items),
                Native.Live(budget.Handle, budget), buf, (UIntPtr)items.Count, out n,
                report == null ? Native.NoReport : Native.Live(report.Handle, report)));
            return Native.Ints(buf, n);
        }

        public void Dispose() { Handle.Dispose(); }
    }
}
