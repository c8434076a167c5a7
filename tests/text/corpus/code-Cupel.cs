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
//
// Arguments: a null reference where an object is needed throws
// ArgumentNullException, a negative or too large index
// ArgumentOutOfRangeException, any other bad value CupelArgumentException
// (an ArgumentException); ParamName is always the C# parameter, and the
// message names it too. A failed call changes nothing.

using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace Cupel
{
    /// <summary>Status codes of the C ABI; the numbers never change.</summary>
    public enum Status
    {
        /// <summary>CUPEL_OK: success.</summary>
        Ok = 0,
        /// <summary>CUPEL_ERROR_NULL_POINTER: a required argument was null.</summary>
        NullPointer = 1,
        /// <summary>CUPEL_ERROR_INVALID_ARGUMENT: a value outside its domain.</summary>
        InvalidArgument = 2,
        /// <summary>CUPEL_ERROR_BUFFER_TOO_SMALL (the binding sizes its buffers: not seen).</summary>
        BufferTooSmall = 3,
        /// <summary>CUPEL_ERROR_SCARCITY: a count requirement could not be met under Scarcity.Error.</summary>
        Scarcity = 4,
        /// <summary>CUPEL_ERROR_UNSUPPORTED: the operation is not defined for this slicer.</summary>
        Unsupported = 5,
        /// <summary>CUPEL_ERROR_CAPACITY: the work would exceed the slicer's memory limit.</summary>
        Capacity = 6,
        /// <summary>CUPEL_ERROR_INTERNAL: a bug caught at the boundary.</summary>
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

    /// <summary>What the library's own exceptions carry: the status and the
    /// library's message as it wrote it.</summary>
    public interface ICupelError
    {
        /// <summary>The status of the failed call.</summary>
        Status Status { get; }
        /// <summary>The library's message (C spelling of argument names), or
        /// the binding's own when the binding refused the call itself.</summary>
        string NativeMessage { get; }
    }

    /// <summary>A bad argument value (CUPEL_ERROR_INVALID_ARGUMENT): an
    /// ArgumentException whose ParamName is the C# parameter and whose
    /// message names it. Null arguments throw ArgumentNullException and
    /// indices out of range ArgumentOutOfRangeException instead.</summary>
    public class CupelArgumentException : ArgumentException, ICupelError
    {
        /// <summary>The status, Status.InvalidArgument.</summary>
        public Status Status { get; private set; }
        /// <summary>The library's message as it wrote it.</summary>
        public string NativeMessage { get; private set; }

        /// <summary>An error with a status and a message, about no one parameter.</summary>
        public CupelArgumentException(Status status, string message)
            : this(status, message, null, message)
        {
        }

        /// <summary>An error about parameter paramName (may be null); message
        /// is what the exception says, nativeMessage what the library said.</summary>
        public CupelArgumentException(Status status, string message, string paramName, string nativeMessage)
            : base(Native.StatusName((int)status) + ": " + message, paramName)
        {
            Status = status;
            NativeMessage = nativeMessage;
        }
    }

    /// <summary>A failed libcupel call that is not a caller mistake (buffer,
    /// scarcity, unsupported, capacity, internal): its status and the
    /// library's message.</summary>
    public class CupelException : Exception, ICupelError
    {
        /// <summary>The status of the failed call.</summary>
        public Status Status { get; private set; }
        /// <summary>The library's message.</summary>
        public string NativeMessage { get; private set; }

        /// <summary>An error with a status and the library's message.</summary>
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
        /// <summary>The kind the entry applies to.</summary>
        public string Kind;
        /// <summary>At least this percentage of the target goes to the kind.</summary>
        public double RequirePercent;
        /// <summary>At most this percentage of the target goes to the kind.</summary>
        public double CapPercent;

        /// <summary>An entry for kind.</summary>
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
        /// <summary>The kind the entry applies to.</summary>
        public string Kind;
        /// <summary>The least number of items of the kind.</summary>
        public uint Require;
        /// <summary>The most items of the kind.</summary>
        public uint Cap;

        /// <summary>An entry for kind.</summary>
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
        /// <summary>The kind, as the count entry spelled it.</summary>
        public string Kind;
        /// <summary>The count the entry required.</summary>
        public uint Required;
        /// <summary>The count that could be satisfied.</summary>
        public uint Satisfied;

        /// <summary>"Kind: Satisfied of Required".</summary>
        public override string ToString()
        {
            return Kind + ": " + Satisfied + " of " + Required;
        }
    }

    /// <summary>Library-wide information.</summary>
    public static class Library
    {
        /// <summary>The library version, e.g. "0.2.0".</summary>
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

    /// <summary>Owns one native cupel_items (freed by cupel_items_free).</summary>
    public sealed class ItemsHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public ItemsHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native list is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>Frees the native list.</summary>
        protected override bool ReleaseHandle() { Native.cupel_items_free(handle); return true; }
    }

    /// <summary>Owns one native cupel_budget (freed by cupel_budget_free).</summary>
    public sealed class BudgetHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public BudgetHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native budget is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>Frees the native budget.</summary>
        protected override bool ReleaseHandle() { Native.cupel_budget_free(handle); return true; }
    }

    /// <summary>Owns one native cupel_slicer (freed by cupel_slicer_free).</summary>
    public sealed class SlicerHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public SlicerHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native slicer is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>Frees the native slicer.</summary>
        protected override bool ReleaseHandle() { Native.cupel_slicer_free(handle); return true; }
    }

    /// <summary>Owns one native cupel_report (freed by cupel_report_free).</summary>
    public sealed class ReportHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public ReportHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native report is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>Frees the native report.</summary>
        protected override bool ReleaseHandle() { Native.cupel_report_free(handle); return true; }
    }

    /// <summary>Owns one native cupel_stream (freed by cupel_stream_free).</summary>
    public sealed class StreamHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public StreamHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native stream is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>Frees the native stream.</summary>
        protected override bool ReleaseHandle() { Native.cupel_stream_free(handle); return true; }
    }

    /// <summary>One item read back from a list (<c>items[index]</c>): a copy
    /// of its attributes when it was read, unaffected by later changes.</summary>
    public sealed class Item
    {
        /// <summary>The item's index in its list (push order, from 0).</summary>
        public int Index { get; internal set; }
        /// <summary>The token count, as pushed.</summary>
        public long Tokens { get; internal set; }
        /// <summary>The score, as pushed (the scorers' scores are in a Report).</summary>
        public double Score { get; internal set; }
        /// <summary>The kind, as the list first spelled it (kinds compare with
        /// ASCII case folding); "Message" by default.</summary>
        public string Kind { get; internal set; }
        /// <summary>The content, or null when it was never set.</summary>
        public string Content { get; internal set; }
        /// <summary>The source, "Chat" unless set.</summary>
        public string Source { get; internal set; }
        /// <summary>The timestamp in UTC milliseconds since the Unix epoch, or
        /// null when it has none.</summary>
        public long? Timestamp { get; internal set; }
        /// <summary>The priority, or null when it has none.</summary>
        public long? Priority { get; internal set; }
        /// <summary>The relevance hint, or null when it has none.</summary>
        public double? RelevanceHint { get; internal set; }
        /// <summary>Whether the item is pinned.</summary>
        public bool Pinned { get; internal set; }
        /// <summary>The keep-together group, 0 when none.</summary>
        public ulong Group { get; internal set; }
        /// <summary>The tags in the order added (duplicates kept).</summary>
        public IReadOnlyList<string> Tags { get; internal set; }
        /// <summary>The metadata entries, one per key, in the order the keys
        /// were first set.</summary>
        public IReadOnlyList<KeyValuePair<string, string>> Metadata { get; internal set; }

        internal Item() { }

        /// <summary>"#index tokens tokens, score score, kind".</summary>
        public override string ToString()
        {
            return "#" + Index + " " + Tokens + " tokens, score " + Score + ", " + Kind;
        }
    }

    /// <summary>The scored candidates; an item's index is its push order.</summary>
    public sealed class Items : IDisposable
    {
        internal readonly ItemsHandle Handle;

        static readonly Args PushArgs = new Args("tokens", "score", "kind");
        static readonly Args PushManyArgs = new Args("tokens", "scores", "kinds", "count=tokens");
        static readonly Args GroupArgs = new Args("index#", "group");
        static readonly Args GroupsArgs = new Args("first#", "count=groups#", "groups");
        static readonly Args ContentArgs = new Args("index#", "content");
        static readonly Args TimestampArgs = new Args("index#", "unix_millis");
        static readonly Args PriorityArgs = new Args("index#", "priority");
        static readonly Args PinnedArgs = new Args("index#", "pinned");
        static readonly Args HintArgs = new Args("index#", "hint");
        static readonly Args SourceArgs = new Args("index#", "source");
        static readonly Args TagArgs = new Args("index#", "tag");
        static readonly Args MetadataArgs = new Args("index#", "key", "value");
        static readonly Args ContentsArgs = new Args("first#", "count=contents#", "contents");
        static readonly Args TimestampsArgs = new Args("first#", "count=unixMillis#", "unix_millis");
        static readonly Args PrioritiesArgs = new Args("first#", "count=priorities#", "priorities");
        static readonly Args PinnedManyArgs = new Args("first#", "count=pinned#", "pinned");
        static readonly Args HintsArgs = new Args("first#", "count=hints#", "hints");
        static readonly Args ReadArgs = new Args("index#");

        /// <summary>An empty list.</summary>
        public Items()
        {
            Native.Check(Native.cupel_items_new(out Handle));
        }

        /// <summary>Adds one item; a null kind means the default, "Message".</summary>
        public void Push(long tokens, double score, string kind = null)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_items_push(h, tokens, score, Native.Utf8Z(kind, "kind")), PushArgs);
        }

        /// <summary>Adds tokens.Length items at once, all or nothing. kinds may be
        /// null (all default) or hold one entry per item (null = default).</summary>
        public void PushMany(long[] tokens, double[] scores, string[] kinds = null)
        {
            var h = Native.Live(Handle, this);
            if (tokens == null) throw Native.Null("tokens");
            if (scores == null) throw Native.Null("scores");
            if (scores.Length != tokens.Length || (kinds != null && kinds.Length != tokens.Length))
                throw new CupelArgumentException(Status.InvalidArgument, string.Format(
                    "PushMany: {0} tokens, {1} scores and {2} kinds; the lengths must agree",
                    tokens.Length, scores.Length, kinds == null ? 0 : kinds.Length),
                    scores.Length != tokens.Length ? "scores" : "kinds", null);
            // The kinds packed in one UTF-8 buffer (null: the default kind):
            // one array to marshal, not a native string per item. The packed
            // form cannot carry "" (an error) or an embedded NUL: those go as
            // an array of strings, so the library names the bad entry.
            int length = 0;
            var packed = kinds == null ? null : Native.Packed(kinds, "kinds", out length);
            if (kinds == null || packed != null)
            {
                Native.Check(Native.cupel_items_push_many_packed(h, (UIntPtr)tokens.Length,
                    tokens, scores, packed, (UIntPtr)length), PushManyArgs);
                return;
            }
            using (var strings = new NativeStrings())
            {
                var kindPtrs = new IntPtr[kinds.Length];
                for (int i = 0; i < kinds.Length; i++) kindPtrs[i] = strings.Get(kinds[i], "kinds", i);
                Native.Check(Native.cupel_items_push_many(h, (UIntPtr)tokens.Length,
                    tokens, scores, kindPtrs), PushManyArgs);
            }
        }

        /// <summary>Puts item index in keep-together group group (0: none). Items
        /// that share a non-zero group are selected all together or not at all
        /// and placed next to each other in push order (README "Groups").</summary>
        public void SetGroup(int index, ulong group)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_items_set_group(h, Native.Index(index, "index"), group), GroupArgs);
        }

        /// <summary>Sets the groups of items first .. first + groups.Length - 1
        /// in one call, all or nothing.</summary>
        public void SetGroups(int first, ulong[] groups)
        {
            var h = Native.Live(Handle, this);
            if (groups == null) throw Native.Null("groups");
            Native.Check(Native.cupel_items_set_groups(h, Native.Index(first, "first"),
                (UIntPtr)groups.Length, groups), GroupsArgs);
        }

        // ---- item attributes (single and bulk: one native call per column) ----

        /// <summary>Sets item index's content (non-empty; deduplication
        /// compares contents).</summary>
        public void SetContent(int index, string content)
        {
            var h = Native.Live(Handle, this);
            var ix = Native.Index(index, "index");
            Native.Check(Native.cupel_items_set_content(h, ix, Native.Utf8Z(content, "content")), ContentArgs);
        }

        /// <summary>Sets item index's timestamp, UTC milliseconds since the
        /// Unix epoch (negative allowed).</summary>
        public void SetTimestamp(int index, long unixMillis)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_items_set_timestamp(h, Native.Index(index, "index"), unixMillis), TimestampArgs);
        }

        /// <summary>Sets item index's priority.</summary>
        public void SetPriority(int index, long priority)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_items_set_priority(h, Native.Index(index, "index"), priority), PriorityArgs);
        }

        /// <summary>Pins item index (always included, its tokens taken off the
        /// budget first) or unpins it.</summary>
        public void SetPinned(int index, bool pinned)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_items_set_pinned(h, Native.Index(index, "index"), pinned ? (byte)1 : (byte)0), PinnedArgs);
        }

        /// <summary>Sets item index's relevance hint.</summary>
        public void SetRelevanceHint(int index, double hint)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_items_set_relevance_hint(h, Native.Index(index, "index"), hint), HintArgs);
        }

        /// <summary>Sets item index's source ("Chat" unless set).</summary>
        public void SetSource(int index, string source)
        {
            var h = Native.Live(Handle, this);
            var ix = Native.Index(index, "index");
            Native.Check(Native.cupel_items_set_source(h, ix, Native.Utf8Z(source, "source")), SourceArgs);
        }

        /// <summary>Adds a tag to item index.</summary>
        public void AddTag(int index, string tag)
        {
            var h = Native.Live(Handle, this);
            var ix = Native.Index(index, "index");
            Native.Check(Native.cupel_items_add_tag(h, ix, Native.Utf8Z(tag, "tag")), TagArgs);
        }

        /// <summary>Sets item index's metadata entry key to value (setting a
        /// key again replaces its value).</summary>
        public void SetMetadata(int index, string key, string value)
        {
            var h = Native.Live(Handle, this);
            var ix = Native.Index(index, "index");
            Native.Check(Native.cupel_items_set_metadata(h, ix, Native.Utf8Z(key, "key"), Native.Utf8Z(value, "value")),
                MetadataArgs);
        }

        /// <summary>Contents of items first .. first + contents.Length - 1; a null
        /// element leaves that item's content as it is.</summary>
        public void SetContents(int first, string[] contents)
        {
            var h = Native.Live(Handle, this);
            if (contents == null) throw Native.Null("contents");
            var at = Native.Index(first, "first");
            int length;
            var packed = Native.Packed(contents, "contents", out length);
            if (packed != null)
            {
                Native.Check(Native.cupel_items_set_contents_packed(h, at, (UIntPtr)contents.Length, packed,
                    (UIntPtr)length), ContentsArgs);
                return;
            }
            using (var strings = new NativeStrings())
            {
                var p = new IntPtr[contents.Length];
                for (int i = 0; i < p.Length; i++) p[i] = strings.Get(contents[i], "contents", i);
                Native.Check(Native.cupel_items_set_contents(h, at, (UIntPtr)p.Length, p), ContentsArgs);
            }
        }

        /// <summary>Timestamps (UTC milliseconds) of items first ..
        /// first + unixMillis.Length - 1, all or nothing.</summary>
        public void SetTimestamps(int first, long[] unixMillis)
        {
            var h = Native.Live(Handle, this);
            if (unixMillis == null) throw Native.Null("unixMillis");
            Native.Check(Native.cupel_items_set_timestamps(h, Native.Index(first, "first"), (UIntPtr)unixMillis.Length,
                unixMillis), TimestampsArgs);
        }

        /// <summary>Priorities of items first .. first + priorities.Length - 1,
        /// all or nothing.</summary>
        public void SetPriorities(int first, long[] priorities)
        {
            var h = Native.Live(Handle, this);
            if (priorities == null) throw Native.Null("priorities");
            Native.Check(Native.cupel_items_set_priorities(h, Native.Index(first, "first"), (UIntPtr)priorities.Length,
                priorities), PrioritiesArgs);
        }

        /// <summary>Pinned flags of items first .. first + pinned.Length - 1,
        /// all or nothing.</summary>
        public void SetPinnedMany(int first, bool[] pinned)
        {
            var h = Native.Live(Handle, this);
            if (pinned == null) throw Native.Null("pinned");
            var at = Native.Index(first, "first");
            var b = Native.Bytes(pinned.Length);
            for (int i = 0; i < pinned.Length; i++) b[i] = pinned[i] ? (byte)1 : (byte)0;
            Native.Check(Native.cupel_items_set_pinned_many(h, at, (UIntPtr)pinned.Length, b), PinnedManyArgs);
        }

        /// <summary>Relevance hints of items first .. first + hints.Length - 1,
        /// all or nothing.</summary>
        public void SetRelevanceHints(int first, double[] hints)
        {
            var h = Native.Live(Handle, this);
            if (hints == null) throw Native.Null("hints");
            Native.Check(Native.cupel_items_set_relevance_hints(h, Native.Index(first, "first"), (UIntPtr)hints.Length,
                hints), HintsArgs);
        }

        /// <summary>Item index read back, every attribute (a copy). An index
        /// outside 0 .. Count - 1 throws ArgumentOutOfRangeException.</summary>
        public Item this[int index]
        {
            get
            {
                var h = Native.Live(Handle, this);
                var ix = Native.Index(index, "index");
                var a = ReadArgs;
                long tokens, ts, priority;
                double score, hint;
                byte hasTs, hasPriority, hasHint, pinned;
                ulong group;
                IntPtr p;
                UIntPtr n;
                var item = new Item { Index = index };
                Native.Check(Native.cupel_items_tokens(h, ix, out tokens), a);
                item.Tokens = tokens;
                Native.Check(Native.cupel_items_score(h, ix, out score), a);
                item.Score = score;
                Native.Check(Native.cupel_items_kind(h, ix, out p, out n), a);
                item.Kind = Native.Utf8(p, n);
                Native.Check(Native.cupel_items_content(h, ix, out p, out n), a);
                item.Content = p == IntPtr.Zero ? null : Native.Utf8(p, n);
                Native.Check(Native.cupel_items_source(h, ix, out p, out n), a);
                item.Source = Native.Utf8(p, n);
                Native.Check(Native.cupel_items_timestamp(h, ix, out hasTs, out ts), a);
                item.Timestamp = hasTs != 0 ? ts : (long?)null;
                Native.Check(Native.cupel_items_priority(h, ix, out hasPriority, out priority), a);
                item.Priority = hasPriority != 0 ? priority : (long?)null;
                Native.Check(Native.cupel_items_relevance_hint(h, ix, out hasHint, out hint), a);
                item.RelevanceHint = hasHint != 0 ? hint : (double?)null;
                Native.Check(Native.cupel_items_pinned(h, ix, out pinned), a);
                item.Pinned = pinned != 0;
                Native.Check(Native.cupel_items_group(h, ix, out group), a);
                item.Group = group;
                Native.Check(Native.cupel_items_tag_count(h, ix, out n), a);
                var tags = new string[(int)n];
                for (int t = 0; t < tags.Length; t++)
                {
                    Native.Check(Native.cupel_items_tag(h, ix, (UIntPtr)t, out p, out n), a);
                    tags[t] = Native.Utf8(p, n);
                }
                item.Tags = tags;
                Native.Check(Native.cupel_items_metadata_count(h, ix, out n), a);
                var metadata = new KeyValuePair<string, string>[(int)n];
                for (int m = 0; m < metadata.Length; m++)
                {
                    IntPtr v;
                    UIntPtr vn;
                    Native.Check(Native.cupel_items_metadata_entry(h, ix, (UIntPtr)m, out p, out n, out v, out vn), a);
                    metadata[m] = new KeyValuePair<string, string>(Native.Utf8(p, n), Native.Utf8(v, vn));
                }
                item.Metadata = metadata;
                return item;
            }
        }

        /// <summary>The number of items.</summary>
        public int Count { get { return (int)Native.cupel_items_len(Native.Live(Handle, this)); } }

        /// <summary>Removes every item.</summary>
        public void Clear() { Native.cupel_items_clear(Native.Live(Handle, this)); }

        /// <summary>Frees the native list; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>A token budget: hard ceiling (max) and the slicers' goal (target).</summary>
    public sealed class Budget : IDisposable
    {
        internal readonly BudgetHandle Handle;

        static readonly Args NewArgs = new Args("max_tokens", "target_tokens");
        static readonly Args ReserveOutputArgs = new Args("output_reserve=tokens", "tokens");
        static readonly Args MarginArgs = new Args("percent");
        static readonly Args ReserveArgs = new Args("kind", "tokens");
        static readonly Args EffectiveArgs = new Args("pinned_tokens");

        /// <summary>A budget of maxTokens (&gt;= 0) with the goal targetTokens
        /// (0 .. maxTokens).</summary>
        public Budget(long maxTokens, long targetTokens)
        {
            Native.Check(Native.cupel_budget_new(maxTokens, targetTokens, out Handle), NewArgs);
        }

        /// <summary>Tokens kept back for the model's output (&gt;= 0).</summary>
        public void SetOutputReserve(long tokens)
        {
            Native.Check(Native.cupel_budget_set_output_reserve(Native.Live(Handle, this), tokens), ReserveOutputArgs);
        }

        /// <summary>A safety margin, percent (finite, 0 .. 100) of the budget left unused.</summary>
        public void SetSafetyMargin(double percent)
        {
            Native.Check(Native.cupel_budget_set_safety_margin(Native.Live(Handle, this), percent), MarginArgs);
        }

        /// <summary>Reserves tokens for kind (setting a kind again replaces its
        /// reservation).</summary>
        public void Reserve(string kind, long tokens)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_budget_reserve(h, Native.Utf8Z(kind, "kind"), tokens), ReserveArgs);
        }

        /// <summary>The (max, target) a slice call with pinnedTokens would use.</summary>
        public void Effective(long pinnedTokens, out long maxTokens, out long targetTokens)
        {
            Native.Check(Native.cupel_budget_effective(Native.Live(Ha