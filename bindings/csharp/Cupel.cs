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
// shared by many threads at once, and a Tokenizer is immutable; a Report,
// Stream or Session belongs to one thread at a time. Using a handle after
// Dispose throws ObjectDisposedException.
//
// Arguments: a null reference where an object is needed throws
// ArgumentNullException, a negative or too large index
// ArgumentOutOfRangeException, any other bad value CupelArgumentException
// (an ArgumentException); ParamName is always the C# parameter, and the
// message names it too. A failed call changes nothing.
//
// Items that shrink instead of vanish: Items.AddVariant, SetTruncatable and
// ClearTruncatable (extension methods, so that a null list is an
// ArgumentNullException as for every other argument), Item.Variants and
// Item.Truncatable, Pipeline.SetTokenizer, and each included Decision's
// Variant, AddedTokens, cut (UTF-8 byte offsets) and Text(items).
//
// Sessions (cache-stable selection across the turns of a conversation):
// Session (over a copy of a Pipeline) with Run, Slack, LastAction,
// StablePrefix, Breakpoints and Reset; items' identity keys and volatile
// flags (Items.SetKey, SetVolatile, SetKeys, SetVolatileMany; Item.Key and
// Item.Volatile); Reason.Deferred.
//
// Policies as data, presets, policy sensitivity, report analytics, tracing
// and the one-call path (Context.Select): Policies.cs, built with this file.

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
        /// <summary>CUPEL_ERROR_OVERFLOW: a pipeline run's selection exceeds
        /// the target and the overflow strategy is Overflow.Throw.</summary>
        Overflow = 8,
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
        /// <summary>The item's variants, variant v at [v - 1] (empty when it
        /// has none); see <c>items.AddVariant</c>.</summary>
        public IReadOnlyList<Variant> Variants { get; internal set; }
        /// <summary>How a pipeline run may cut the item, or null when it is
        /// not truncatable; see <c>items.SetTruncatable</c>.</summary>
        public Truncatable? Truncatable { get; internal set; }
        /// <summary>The identity key for sessions, 0 when none; see
        /// <see cref="Items.SetKey"/>.</summary>
        public ulong Key { get; internal set; }
        /// <summary>Whether the item is volatile (a session places it last);
        /// see <see cref="Items.SetVolatile"/>.</summary>
        public bool Volatile { get; internal set; }

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
        static readonly Args KeyArgs = new Args("index#", "key");
        static readonly Args VolatileArgs = new Args("index#", "is_volatile");
        static readonly Args KeysArgs = new Args("first#", "count=keys#", "keys");
        static readonly Args VolatileManyArgs = new Args("first#", "count=isVolatile#", "is_volatile");
        static readonly Args ReadArgs = new Args("index#");
        static readonly Args PushTextArgs = new Args("tokenizer", "text", "len=text", "score", "kind");
        static readonly Args PushTextsArgs = new Args("tokenizer", "texts", "lens=texts", "scores", "kinds",
            "count=texts");

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
            // one array to marshal, not a native string per item; an ASCII
            // column goes as the addresses of its strings in that buffer,
            // pinned (each distinct kind once: the library then checks a
            // repeat by its address alone). The packed form cannot carry ""
            // (an error): that goes as an array of native strings, so the
            // library names the bad entry; a NUL goes packed (refused).
            int length = 0;
            int[] at = null;
            var packed = kinds == null ? null : Native.Packed(kinds, "kinds", true, out length, out at);
            if (at != null)
            {
                Native.Check(Native.WithAddresses(packed, at, kinds.Length, p =>
                    Native.cupel_items_push_many(h, (UIntPtr)tokens.Length, tokens, scores, p)), PushManyArgs);
                return;
            }
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

        /// <summary>Adds one item made from text: its tokens are text's count
        /// with tokenizer, its content the text (non-empty), its score and kind
        /// as Push takes them (a null kind: "Message").</summary>
        public void PushText(Tokenizer tokenizer, string text, double score, string kind = null)
        {
            var h = Native.Live(Handle, this);
            var t = Native.Arg(tokenizer, "tokenizer");
            var k = Native.Utf8Z(kind, "kind");
            int len;
            var bytes = Native.Text(text, "text", out len);
            Native.Check(Native.cupel_items_push_text(h, t, bytes, (UIntPtr)len, score, k), PushTextArgs);
        }

        /// <summary>Adds texts.Length items made from texts at once, all or
        /// nothing: item i has content texts[i] (non-empty), tokens its count
        /// with tokenizer, score scores[i] and kind kinds[i] (kinds null, or a
        /// null element: "Message"). The texts are counted on up to two
        /// threads.</summary>
        public void PushTexts(Tokenizer tokenizer, string[] texts, double[] scores, string[] kinds = null)
        {
            var h = Native.Live(Handle, this);
            var t = Native.Arg(tokenizer, "tokenizer");
            if (texts == null) throw Native.Null("texts");
            if (scores == null) throw Native.Null("scores");
            if (scores.Length != texts.Length || (kinds != null && kinds.Length != texts.Length))
                throw new CupelArgumentException(Status.InvalidArgument, string.Format(
                    "PushTexts: {0} texts, {1} scores and {2} kinds; the lengths must agree",
                    texts.Length, scores.Length, kinds == null ? 0 : kinds.Length),
                    scores.Length != texts.Length ? "scores" : "kinds", null);
            if (texts.Length == 0) return;
            using (var strings = new NativeStrings())
            {
                IntPtr[] kindPtrs = null;
                if (kinds != null)
                {
                    kindPtrs = new IntPtr[kinds.Length];
                    for (int i = 0; i < kinds.Length; i++) kindPtrs[i] = strings.Get(kinds[i], "kinds", i);
                }
                using (var packed = new Native.PackedTexts(texts, "texts"))
                    Native.Check(Native.cupel_items_push_texts(h, t, (UIntPtr)texts.Length, packed.Pointers,
                        packed.Lengths, scores, kindPtrs), PushTextsArgs);
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
            int[] offsets;
            var packed = Native.Packed(contents, "contents", false, out length, out offsets);
            if (offsets != null)
            {
                Native.Check(Native.WithAddresses(packed, offsets, contents.Length, p =>
                    Native.cupel_items_set_contents(h, at, (UIntPtr)contents.Length, p)), ContentsArgs);
                return;
            }
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

        // ---- identity for sessions ----

        /// <summary>Gives item index an identity key for sessions: any non-zero
        /// number that names the same message, tool call or document from one
        /// turn's list to the next (0, the default, is no key). A keyed item
        /// is the same item as last turn when its key, tokens and content are
        /// the same; a keyless one when its kind, tokens and content are. Keys
        /// must be unique in a list for <see cref="Session.Run"/> (it throws
        /// CupelArgumentException naming both indices);
        /// <see cref="Pipeline.Run"/> ignores them.</summary>
        public void SetKey(int index, ulong key)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_items_set_key(h, Native.Index(index, "index"), key), KeyArgs);
        }

        /// <summary>Marks item index volatile (or not): expected to change
        /// every turn (the open file in an editor, this turn's retrieved
        /// documents). A session places every volatile item after every other
        /// item, so its changes never break the cached prefix. A group is
        /// volatile when any member is; an item with neither key nor content
        /// is treated as volatile. <see cref="Pipeline.Run"/> ignores it.</summary>
        public void SetVolatile(int index, bool isVolatile)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_items_set_volatile(h, Native.Index(index, "index"), isVolatile ? (byte)1 : (byte)0),
                VolatileArgs);
        }

        /// <summary>Keys of items first .. first + keys.Length - 1, all or
        /// nothing (duplicates are refused by <see cref="Session.Run"/>, not
        /// here).</summary>
        public void SetKeys(int first, ulong[] keys)
        {
            var h = Native.Live(Handle, this);
            if (keys == null) throw Native.Null("keys");
            Native.Check(Native.cupel_items_set_keys(h, Native.Index(first, "first"), (UIntPtr)keys.Length, keys),
                KeysArgs);
        }

        /// <summary>Volatile flags of items first .. first + isVolatile.Length - 1,
        /// all or nothing.</summary>
        public void SetVolatileMany(int first, bool[] isVolatile)
        {
            var h = Native.Live(Handle, this);
            if (isVolatile == null) throw Native.Null("isVolatile");
            var at = Native.Index(first, "first");
            var b = Native.Bytes(isVolatile.Length);
            for (int i = 0; i < isVolatile.Length; i++) b[i] = isVolatile[i] ? (byte)1 : (byte)0;
            Native.Check(Native.cupel_items_set_volatile_many(h, at, (UIntPtr)isVolatile.Length, b), VolatileManyArgs);
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
                Native.Check(Native.cupel_items_variant_count(h, ix, out n), a);
                var variants = new Variant[(int)n];
                for (int v = 0; v < variants.Length; v++)
                    variants[v] = Native.ReadVariant(h, ix, v + 1, a);
                item.Variants = variants;
                byte truncatable;
                int keep;
                long minTokens;
                Native.Check(Native.cupel_items_truncatable(h, ix, out truncatable, out keep, out minTokens), a);
                item.Truncatable = truncatable != 0 ? new Truncatable((Keep)keep, minTokens) : (Truncatable?)null;
                ulong key;
                byte isVolatile;
                Native.Check(Native.cupel_items_key(h, ix, out key), a);
                item.Key = key;
                Native.Check(Native.cupel_items_volatile(h, ix, out isVolatile), a);
                item.Volatile = isVolatile != 0;
                return item;
            }
        }

        /// <summary>The number of items.</summary>
        public int Count { get { return (int)Native.cupel_items_len(Native.Live(Handle, this)); } }

        /// <summary>Removes every item.</summary>
        public void Clear() { Native.cupel_items_clear(Native.Live(Handle, this)); }

        static readonly Args TruncateArgs = new Args("len=count#");

        /// <summary>Removes the items from index count on, with all their
        /// attributes (variants and truncation included), so that the list
        /// holds count items (0 &lt;= count &lt;= Count): it undoes the pushes
        /// made since the list held count items, e.g. when a later call of the
        /// caller's own fails. Kinds only the removed items used are forgotten
        /// (a kind's spelling is then as if they had never been pushed). A
        /// count outside 0 .. Count throws ArgumentOutOfRangeException, and
        /// nothing changes.</summary>
        public void Truncate(int count)
        {
            var h = Native.Live(Handle, this);
            Native.Check(Native.cupel_items_truncate(h, Native.Index(count, "count")), TruncateArgs);
        }

        /// <summary>Frees the native list; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>A token budget: hard ceiling (max) and the slicers' goal (target).</summary>
    public sealed partial class Budget : IDisposable
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
            Native.Check(Native.cupel_budget_effective(Native.Live(Handle, this), pinnedTokens,
                out maxTokens, out targetTokens), EffectiveArgs);
        }

        /// <summary>Frees the native budget; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>A configured slicing strategy.</summary>
    public sealed class Slicer : IDisposable
    {
        /// <summary>The KnapsackSlice default bucket size of the spec.</summary>
        public const long DefaultBucketSize = 100;

        internal readonly SlicerHandle Handle;

        static readonly Args KnapsackArgs = new Args("bucket_size");
        static readonly Args QuotaArgs = new Args("inner", "quotas", "count=quotas",
            "require_percent=RequirePercent@quotas", "cap_percent=CapPercent@quotas");
        static readonly Args CountQuotaArgs = new Args("inner", "entries", "count=entries",
            "require_count=Require@entries", "cap_count=Cap@entries", "scarcity");
        static readonly Args CountKnapsackArgs = new Args("bucket_size", "entries", "count=entries",
            "require_count=Require@entries", "cap_count=Cap@entries", "scarcity");
        static readonly Args MemoryArgs = new Args("bytes=value");
        static readonly Args SliceArgs = new Args("items", "budget", "pinned_tokens", "report");
        static readonly Args MarginalArgs = new Args("items", "budget", "pinned_tokens", "slack_tokens");
        static readonly Args MinBudgetArgs = new Args("items", "pinned_tokens", "target_index#", "search_ceiling");

        private Slicer(SlicerHandle handle) { Handle = handle; }

        /// <summary>GreedySlice: value density order, greedy fill.</summary>
        public static Slicer Greedy()
        {
            SlicerHandle h;
            Native.Check(Native.cupel_slicer_new_greedy(out h));
            return new Slicer(h);
        }

        /// <summary>KnapsackSlice with tokens discretised in buckets of bucketSize (&gt; 0).</summary>
        public static Slicer Knapsack(long bucketSize = DefaultBucketSize)
        {
            SlicerHandle h;
            Native.Check(Native.cupel_slicer_new_knapsack(bucketSize, out h), KnapsackArgs);
            return new Slicer(h);
        }

        /// <summary>QuotaSlice over inner (which it copies: inner may be
        /// disposed right after).</summary>
        public static Slicer Quota(Slicer inner, Quota[] quotas)
        {
            var innerHandle = Native.Arg(inner, "inner");
            if (quotas == null) throw Native.Null("quotas");
            using (var strings = new NativeStrings())
            {
                var q = new Native.NativeQuota[quotas.Length];
                for (int i = 0; i < quotas.Length; i++)
                    q[i] = new Native.NativeQuota
                    {
                        Kind = strings.Get(quotas[i].Kind, "quotas", i),
                        RequirePercent = quotas[i].RequirePercent,
                        CapPercent = quotas[i].CapPercent,
                    };
                SlicerHandle h;
                Native.Check(Native.cupel_slicer_new_quota(innerHandle, q, (UIntPtr)q.Length, out h), QuotaArgs);
                return new Slicer(h);
            }
        }

        /// <summary>CountQuotaSlice over inner (copied; not a KnapsackSlice: use
        /// CountConstrainedKnapsack).</summary>
        public static Slicer CountQuota(Slicer inner, CountQuota[] entries, Scarcity scarcity)
        {
            var innerHandle = Native.Arg(inner, "inner");
            using (var strings = new NativeStrings())
            {
                var e = Native.CountEntries(strings, entries);
                SlicerHandle h;
                Native.Check(Native.cupel_slicer_new_count_quota(innerHandle, e, (UIntPtr)e.Length,
                    (int)scarcity, out h), CountQuotaArgs);
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
                    (int)scarcity, out h), CountKnapsackArgs);
                return new Slicer(h);
            }
        }

        /// <summary>Bound on the working memory of one slice call (default 1 GiB);
        /// over it a call fails with Status.Capacity.</summary>
        public ulong MemoryLimit
        {
            get { return (ulong)Native.cupel_slicer_memory_limit(Native.Live(Handle, this)); }
            set { Native.Check(Native.cupel_slicer_set_memory_limit(Native.Live(Handle, this), (UIntPtr)value), MemoryArgs); }
        }

        /// <summary>Runs the Sort and Slice stages: the chosen item indices in
        /// the slicer's order. report may be null.</summary>
        public int[] Slice(Items items, Budget budget, long pinnedTokens = 0, Report report = null)
        {
            var self = Native.Live(Handle, this);
            var it = Native.Arg(items, "items");
            var b = Native.Arg(budget, "budget");
            var r = report == null ? Native.NoReport : Native.Arg(report, "report");
            var buf = Native.IndexBuffer(Native.Len(it));
            UIntPtr n;
            Native.Check(Native.cupel_slice(self, it, b, pinnedTokens, buf, (UIntPtr)buf.Length, out n, r), SliceArgs);
            return Native.Ints(buf, n);
        }

        /// <summary>Items selected with the full budget but not with the budget
        /// reduced by slackTokens.</summary>
        public int[] MarginalItems(Items items, Budget budget, long pinnedTokens, long slackTokens)
        {
            var self = Native.Live(Handle, this);
            var it = Native.Arg(items, "items");
            var b = Native.Arg(budget, "budget");
            var buf = Native.IndexBuffer(Native.Len(it));
            UIntPtr n;
            Native.Check(Native.cupel_marginal_items(self, it, b, pinnedTokens, slackTokens, buf, (UIntPtr)buf.Length,
                out n), MarginalArgs);
            return Native.Ints(buf, n);
        }

        /// <summary>The smallest target (up to searchCeiling) at which item
        /// targetIndex is selected; null when it is not selected even at
        /// searchCeiling.</summary>
        public long? FindMinBudget(Items items, long pinnedTokens, int targetIndex, long searchCeiling)
        {
            var self = Native.Live(Handle, this);
            var it = Native.Arg(items, "items");
            var target = Native.Index(targetIndex, "targetIndex");
            long tokens;
            Native.Check(Native.cupel_find_min_budget(self, it, pinnedTokens, target, searchCeiling, out tokens),
                MinBudgetArgs);
            return tokens < 0 ? (long?)null : tokens;
        }

        /// <summary>Frees the native slicer; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>What a slice call did besides the selection.</summary>
    public sealed partial class Report : IDisposable
    {
        internal readonly ReportHandle Handle;

        static readonly Args JsonArgs = new Args("items");

        /// <summary>An empty report, to pass to a slice or run call.</summary>
        public Report() { Native.Check(Native.cupel_report_new(out Handle)); }

        /// <summary>The effective max tokens of the call.</summary>
        public long EffectiveMaxTokens { get { return Native.cupel_report_effective_max_tokens(Native.Live(Handle, this)); } }
        /// <summary>The effective target tokens the slicer got.</summary>
        public long EffectiveTargetTokens { get { return Native.cupel_report_effective_target_tokens(Native.Live(Handle, this)); } }
        /// <summary>The sum of the selected items' tokens.</summary>
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

        /// <summary>Included items in placed order, each with the option chosen,
        /// the tokens it adds and its cut (Decision.Variant, AddedTokens,
        /// HeadEndByte, TailStartByte; Decision.Text gives the text to send).</summary>
        public Decision[] Included { get { return List(true); } }

        /// <summary>Excluded items, score descending.</summary>
        public Decision[] Excluded { get { return List(false); } }

        /// <summary>The number of items the call saw.</summary>
        public long TotalCandidates { get { return Native.cupel_report_total_candidates(Native.Live(Handle, this)); } }
        /// <summary>The tokens of every item the call saw.</summary>
        public long TotalTokensConsidered { get { return Native.cupel_report_total_tokens_considered(Native.Live(Handle, this)); } }
        /// <summary>Tokens the placed items exceed the target by under
        /// Overflow.Proceed (the spec's OverflowEvent); 0 otherwise.</summary>
        public long TokensOverBudget { get { return Native.cupel_report_tokens_over_budget(Native.Live(Handle, this)); } }

        /// <summary>The specification's SelectionReport JSON; items: the list the run saw.</summary>
        public string Json(Items items)
        {
            var h = Native.Live(Handle, this);
            var it = Native.Arg(items, "items");
            UIntPtr n;
            var st = Native.cupel_report_json(h, it, null, UIntPtr.Zero, out n);
            if (st != Status.BufferTooSmall) Native.Check(st, JsonArgs);
            var buf = new byte[(int)n + 1];
            Native.Check(Native.cupel_report_json(h, it, buf, (UIntPtr)buf.Length, out n), JsonArgs);
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
                if (included)
                {
                    UIntPtr variant, headEnd, tailStart;
                    long tokens;
                    Native.Check(Native.cupel_report_included_variant(h, (UIntPtr)i, out variant, out tokens));
                    Native.Check(Native.cupel_report_included_cut(h, (UIntPtr)i, out headEnd, out tailStart));
                    result[i].Variant = (int)variant;
                    result[i].AddedTokens = tokens;
                    result[i].HeadEndByte = (int)headEnd;
                    result[i].TailStartByte = (int)tailStart;
                }
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

        /// <summary>Frees the native report; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>Selects items as they arrive, batch by batch, up to a target.</summary>
    public sealed class Stream : IDisposable
    {
        internal readonly StreamHandle Handle;
        private int pushed;

        static readonly Args NewArgs = new Args("target_tokens", "batch_size");
        static readonly Args PushArgs = new Args("tokens", "score");
        static readonly Args GroupedArgs = new Args("tokens", "score", "group");

        /// <summary>batchSize 0 means the default (32).</summary>
        public Stream(long targetTokens, int batchSize = 0)
        {
            if (batchSize < 0)
                throw new CupelArgumentException(Status.InvalidArgument, "batchSize is " + batchSize + "; it must be >= 0",
                    "batchSize", null);
            Native.Check(Native.cupel_stream_new(targetTokens, (UIntPtr)batchSize, out Handle), NewArgs);
        }

        /// <summary>Offers the next item; true once the budget is spent.</summary>
        public bool Push(long tokens, double score)
        {
            byte full;
            Native.Check(Native.cupel_stream_push(Native.Live(Handle, this), tokens, score, out full), PushArgs);
            pushed++;
            return full != 0;
        }

        /// <summary>Offers the next item as a member of keep-together group group
        /// (0: none, as Push). A group's members come one after another and are
        /// taken all or none; a group that already ended throws.</summary>
        public bool PushGrouped(long tokens, double score, ulong group)
        {
            byte full;
            Native.Check(Native.cupel_stream_push_grouped(Native.Live(Handle, this), tokens, score, group, out full),
                GroupedArgs);
            pushed++;
            return full != 0;
        }

        /// <summary>Decides the last batch; the taken indices in the order taken.</summary>
        public int[] Finish()
        {
            var h = Native.Live(Handle, this);
            var buf = Native.IndexBuffer(pushed);
            UIntPtr n;
            Native.Check(Native.cupel_stream_finish(h, buf, (UIntPtr)buf.Length, out n));
            return Native.Ints(buf, n);
        }

        /// <summary>Frees the native stream; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    // ---- text in: tokenizers ---------------------------------------------------

    /// <summary>What <see cref="Tokenizer.Truncate"/> keeps of a text (the C
    /// ABI's cupel_keep; the numbers never change).</summary>
    public enum Keep
    {
        /// <summary>The beginning of the text.</summary>
        Head = 0,
        /// <summary>The end of the text.</summary>
        Tail = 1,
        /// <summary>The beginning and the end; the middle goes.</summary>
        BothEnds = 2,
    }

    /// <summary>Owns one native cupel_tokenizer (freed by cupel_tokenizer_free).</summary>
    public sealed class TokenizerHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public TokenizerHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native tokenizer is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>Frees the native tokenizer.</summary>
        protected override bool ReleaseHandle() { Native.cupel_tokenizer_free(handle); return true; }
    }

    /// <summary>What <see cref="Tokenizer.Truncate"/> kept of a text: the
    /// kept text is <c>text.Substring(0, HeadEnd) + text.Substring(TailStart)</c>,
    /// both offsets in UTF-16 code units (string indices, never inside a
    /// surrogate pair).</summary>
    public struct Truncation
    {
        /// <summary>The kept text: the head followed by the tail, with no
        /// marker between them (the whole text when it fits).</summary>
        public string Text { get; private set; }
        /// <summary>The head is the text's chars 0 .. HeadEnd - 1 (0 when only
        /// the tail is kept).</summary>
        public int HeadEnd { get; private set; }
        /// <summary>The tail is the text's chars from TailStart to its end
        /// (the text's length when only the head is kept).</summary>
        public int TailStart { get; private set; }
        /// <summary>The head's count plus the tail's, each counted on its
        /// own; never more than the maxTokens asked for.</summary>
        public long Tokens { get; private set; }

        internal Truncation(string text, int headEnd, int tailStart, long tokens)
        {
            HeadEnd = headEnd;
            TailStart = tailStart;
            Tokens = tokens;
            if (headEnd == text.Length) Text = text;
            else if (headEnd == 0) Text = text.Substring(tailStart);
            else Text = string.Concat(text.Substring(0, headEnd), text.Substring(tailStart));
        }

        /// <summary>"[HeadEnd, TailStart) cut, Tokens tokens".</summary>
        public override string ToString()
        {
            return "[" + HeadEnd + ", " + TailStart + ") cut, " + Tokens + " tokens";
        }
    }

    /// <summary>A tokenizer: a byte-level BPE vocabulary and its
    /// pre-tokenization pattern. Counts are exactly tiktoken's
    /// <c>encode_ordinary</c> for the same vocabulary (special tokens such as
    /// <c>&lt;|endoftext|&gt;</c> are ordinary text). Immutable once made:
    /// any number of threads may use one tokenizer at once. Texts go to the
    /// library as UTF-8; a string with a lone surrogate is refused
    /// (CupelArgumentException naming the argument), and offsets come back in
    /// UTF-16 code units.</summary>
    public sealed class Tokenizer : IDisposable
    {
        /// <summary>"o200k_base": GPT-4o, GPT-4.1, the o-series, GPT-5.</summary>
        public const string O200kBase = "o200k_base";
        /// <summary>"cl100k_base": GPT-4, GPT-3.5, text-embedding-3.</summary>
        public const string Cl100kBase = "cl100k_base";

        internal readonly TokenizerHandle Handle;

        static readonly Args NewArgs = new Args("name");
        static readonly Args TiktokenArgs = new Args("ranks", "ranks_len=ranks", "pattern") { Fallback = "ranks" };
        static readonly Args CountArgs = new Args("text", "len=text");
        static readonly Args CountManyArgs = new Args("texts", "lens=texts", "count=texts");
        static readonly Args TruncateArgs = new Args("text", "len=text", "max_tokens", "keep");

        private Tokenizer(TokenizerHandle handle) { Handle = handle; }

        internal static Tokenizer Wrap(TokenizerHandle handle) { return new Tokenizer(handle); }

        /// <summary>A tokenizer for a vocabulary built into the library:
        /// <see cref="O200kBase"/> or <see cref="Cl100kBase"/>. An unknown
        /// name throws CupelArgumentException whose message lists the known
        /// ones; a library built without its vocabularies throws
        /// CupelException (Status.Unsupported).</summary>
        public Tokenizer(string name)
        {
            Native.Check(Native.cupel_tokenizer_new(Native.Utf8Z(name, "name"), out Handle), NewArgs);
        }

        /// <summary>A tokenizer from any vocabulary in tiktoken's file format
        /// (the file's bytes: lines of <c>base64(token) rank</c>, as Llama 3
        /// and the OpenAI encodings ship them) with its pre-tokenization
        /// regular expression, as tiktoken writes it (null: o200k_base's).
        /// The library keeps its own copy of the bytes. A malformed line, a
        /// duplicate token or rank, or a missing single-byte token throws
        /// CupelArgumentException for ranks, its message naming the line; a
        /// pattern the library cannot compile, one for pattern.</summary>
        public static Tokenizer FromTiktoken(byte[] ranks, string pattern = null)
        {
            if (ranks == null) throw Native.Null("ranks");
            var p = Native.Utf8Z(pattern, "pattern");
            TokenizerHandle h;
            Native.Check(Native.cupel_tokenizer_from_tiktoken(ranks, (UIntPtr)ranks.Length, p, out h), TiktokenArgs);
            return new Tokenizer(h);
        }

        /// <summary>The number of tokens of text ("" has 0).</summary>
        public long Count(string text)
        {
            var h = Native.Live(Handle, this);
            int len;
            var bytes = Native.Text(text, "text", out len);
            long n;
            Native.Check(Native.cupel_tokenizer_count(h, bytes, (UIntPtr)len, out n), CountArgs);
            return n;
        }

        /// <summary>The counts of texts, in order, all or nothing (a null or
        /// lone-surrogate element throws, naming texts[i]). Large batches are
        /// counted on two threads.</summary>
        public long[] CountMany(string[] texts)
        {
            var h = Native.Live(Handle, this);
            if (texts == null) throw Native.Null("texts");
            var counts = new long[texts.Length];
            if (texts.Length == 0) return counts;
            using (var packed = new Native.PackedTexts(texts, "texts"))
                Native.Check(Native.cupel_tokenizer_count_many(h, (UIntPtr)texts.Length, packed.Pointers, packed.Lengths,
                    counts), CountManyArgs);
            return counts;
        }

        /// <summary>Cuts text to at most maxTokens (&gt;= 0) tokens, keeping its
        /// head, its tail or both ends, at token boundaries that are character
        /// boundaries (the rules are the C header's cupel_tokenizer_truncate:
        /// Keep.BothEnds gives the head ceil(maxTokens / 2) tokens, the tail
        /// what is left). A text that fits is kept whole; maxTokens 0 keeps
        /// nothing. The cost is about one count of the text.</summary>
        public Truncation Truncate(string text, long maxTokens, Keep keep)
        {
            var h = Native.Live(Handle, this);
            if (keep != Keep.Head && keep != Keep.Tail && keep != Keep.BothEnds)
                throw new CupelArgumentException(Status.InvalidArgument, "keep is " + (int)keep +
                    "; expected Keep.Head, Keep.Tail or Keep.BothEnds", "keep", null);
            int len;
            var bytes = Native.Text(text, "text", out len);
            UIntPtr headEnd, tailStart;
            long tokens;
            Native.Check(Native.cupel_tokenizer_truncate(h, bytes, (UIntPtr)len, maxTokens, (int)keep,
                out headEnd, out tailStart, out tokens), TruncateArgs);
            int head = Native.CharsBefore(text, (long)(ulong)headEnd, len);
            int tail = text.Length - Native.CharsAfter(text, len - (long)(ulong)tailStart, len);
            return new Truncation(text, head, tail, tokens);
        }

        /// <summary>Frees the native tokenizer; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    // ---- items that shrink instead of vanish -------------------------------------

    /// <summary>A smaller stand-in for an item (a summary, a digest, a
    /// placeholder such as "[output cleared]") that selection may take instead
    /// of the item: added by <c>items.AddVariant</c>, read
    /// back in <see cref="Item.Variants"/>. Variants are numbered 1, 2, ... in
    /// the order added; variant 0 is the item as pushed.</summary>
    public struct Variant : IEquatable<Variant>
    {
        /// <summary>What the variant adds to the context (&gt;= 0; may be more
        /// than the item's).</summary>
        public long Tokens { get; private set; }
        /// <summary>The share of the item's score it keeps, in (0, 1]: its
        /// score is the item's times Value.</summary>
        public double Value { get; private set; }
        /// <summary>Its text, what the host sends in the item's place; null
        /// when it has none.</summary>
        public string Content { get; private set; }

        /// <summary>A variant of those tokens, value and content (null: none).</summary>
        public Variant(long tokens, double value, string content = null) : this()
        {
            Tokens = tokens;
            Value = value;
            Content = content;
        }

        /// <summary>Whether other has the same tokens, value and content.</summary>
        public bool Equals(Variant other)
        {
            return Tokens == other.Tokens && Value.Equals(other.Value) && Content == other.Content;
        }

        /// <summary>Whether obj is an equal Variant.</summary>
        public override bool Equals(object obj) { return obj is Variant && Equals((Variant)obj); }

        /// <summary>A hash of the three fields.</summary>
        public override int GetHashCode()
        {
            return Tokens.GetHashCode() ^ (Value.GetHashCode() * 31) ^ (Content == null ? 0 : Content.GetHashCode());
        }

        /// <summary>"Tokens tokens, value Value: Content".</summary>
        public override string ToString()
        {
            return Tokens + " tokens, value " + Value.ToString(System.Globalization.CultureInfo.InvariantCulture) +
                (Content == null ? ", no content" : ": \"" + Content + "\"");
        }
    }

    /// <summary>How a pipeline run may cut an item down to fit
    /// (<c>items.SetTruncatable</c>; read back in
    /// <see cref="Item.Truncatable"/>).</summary>
    public struct Truncatable : IEquatable<Truncatable>
    {
        /// <summary>What a cut keeps: the head, the tail or both ends.</summary>
        public Keep Keep { get; private set; }
        /// <summary>The least a cut keeps (&gt;= 0): a cut that would keep
        /// fewer tokens is not made.</summary>
        public long MinTokens { get; private set; }

        /// <summary>Cut keeping keep, at least minTokens tokens.</summary>
        public Truncatable(Keep keep, long minTokens) : this()
        {
            Keep = keep;
            MinTokens = minTokens;
        }

        /// <summary>Whether other keeps the same and has the same MinTokens.</summary>
        public bool Equals(Truncatable other) { return Keep == other.Keep && MinTokens == other.MinTokens; }

        /// <summary>Whether obj is an equal Truncatable.</summary>
        public override bool Equals(object obj) { return obj is Truncatable && Equals((Truncatable)obj); }

        /// <summary>A hash of the two fields.</summary>
        public override int GetHashCode() { return ((int)Keep * 397) ^ MinTokens.GetHashCode(); }

        /// <summary>"Keep, at least MinTokens tokens".</summary>
        public override string ToString() { return Keep + ", at least " + MinTokens + " tokens"; }
    }

    /// <summary>Items that shrink instead of vanish: variants and truncation of
    /// an item list's items. Extension methods of <see cref="Items"/>, called
    /// as <c>items.AddVariant(...)</c>; as for LINQ's, a null list throws
    /// ArgumentNullException (and a disposed one ObjectDisposedException)
    /// naming items.</summary>
    public static class ShrinkExtensions
    {
        // A full item ("item 2 has 255 variants already") names no argument: it is the index's.
        static readonly Args VariantArgs = new Args("index#", "tokens", "value", "content") { Fallback = "index" };
        static readonly Args TruncatableArgs = new Args("index#", "keep", "min_tokens");
        static readonly Args ClearArgs = new Args("index#");

        /// <summary>Adds a variant to item index and returns its number (1 for
        /// the first): tokens (&gt;= 0; may be more than the item's) is what it
        /// adds to the context, value in (0, 1] the share of the item's score
        /// it keeps, content (not empty) its text or null for none. An item
        /// has at most 255 variants. Selection takes at most one option of an
        /// item (KnapsackSlice exactly, at its bucket granularity; GreedySlice
        /// greedily); a variant of an item pushed with 0 tokens, or of a
        /// pinned one, is never chosen; a grouped item's variant v gives its
        /// group an option in which every member with a variant v takes it.
        /// A run reports the choice in Decision.Variant (Reason.Variant). A
        /// bad value throws CupelArgumentException naming it (an index out of
        /// range ArgumentOutOfRangeException), and nothing changes.</summary>
        public static int AddVariant(this Items items, int index, long tokens, double value, string content = null)
        {
            var h = Native.Arg(items, "items");
            var ix = Native.Index(index, "index");
            var c = Native.Utf8Z(content, "content");
            Native.Check(Native.cupel_items_add_variant(h, ix, tokens, value, c), VariantArgs);
            UIntPtr n;
            Native.Check(Native.cupel_items_variant_count(h, ix, out n), ClearArgs);
            return (int)n;
        }

        /// <summary>Adds variant to item index (as the other overload) and
        /// returns its number.</summary>
        public static int AddVariant(this Items items, int index, Variant variant)
        {
            return AddVariant(items, index, variant.Tokens, variant.Value, variant.Content);
        }

        /// <summary>Makes item index truncatable: a pipeline run with a
        /// tokenizer (<see cref="Pipeline.SetTokenizer"/>) may include it cut
        /// down by <see cref="Tokenizer.Truncate"/>'s rules, keeping keep, to
        /// fill what the slicer left, its score scaled by the kept share of its
        /// tokens. After the slicer, while the tokens left reach the minTokens
        /// (&gt;= 0) of a truncatable item that was not selected, the one with
        /// the highest score per token (ties: push order) is cut to the tokens
        /// left, and included if what is kept still counts at least its
        /// minTokens. The item needs content and the pipeline a tokenizer (a
        /// run throws otherwise). A pinned item, a member of a group and an
        /// item a count cap excluded are never cut; Slicer.Slice never cuts. A
        /// run reports the cut in Decision.HeadEndByte and TailStartByte
        /// (Reason.Truncated).</summary>
        public static void SetTruncatable(this Items items, int index, Keep keep, long minTokens = 0)
        {
            var h = Native.Arg(items, "items");
            var ix = Native.Index(index, "index");
            if (keep != Keep.Head && keep != Keep.Tail && keep != Keep.BothEnds)
                throw new CupelArgumentException(Status.InvalidArgument, "keep is " + (int)keep +
                    "; expected Keep.Head, Keep.Tail or Keep.BothEnds", "keep", null);
            Native.Check(Native.cupel_items_set_truncatable(h, ix, (int)keep, minTokens), TruncatableArgs);
        }

        /// <summary>Makes item index truncatable as truncatable says (as the
        /// other overload).</summary>
        public static void SetTruncatable(this Items items, int index, Truncatable truncatable)
        {
            SetTruncatable(items, index, truncatable.Keep, truncatable.MinTokens);
        }

        /// <summary>Makes item index no longer truncatable (a no-op if it was
        /// not).</summary>
        public static void ClearTruncatable(this Items items, int index)
        {
            var h = Native.Arg(items, "items");
            Native.Check(Native.cupel_items_clear_truncatable(h, Native.Index(index, "index")), ClearArgs);
        }
    }

    /// <summary>NUL-terminated UTF-8 copies of strings in native memory, one per
    /// distinct string, freed on Dispose.</summary>
    internal sealed class NativeStrings : IDisposable
    {
        private readonly Dictionary<string, IntPtr> map = new Dictionary<string, IntPtr>();

        /// <summary>s in native memory (IntPtr.Zero for null); a lone
        /// surrogate throws, naming name[index].</summary>
        public IntPtr Get(string s, string name, int index)
        {
            if (s == null) return IntPtr.Zero;
            IntPtr p;
            if (map.TryGetValue(s, out p)) return p;
            var bytes = Native.Utf8Z(s, name, index);
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

    /// <summary>How one native function's arguments are named in C (as its
    /// messages spell them) and in C#: which C# parameter a failure is about,
    /// whether it is an index (out of range: ArgumentOutOfRangeException),
    /// and the message with the C# spelling.</summary>
    internal sealed class Args
    {
        private readonly string[] c, spelling, param;
        private readonly bool[] index;

        internal static readonly Args None = new Args();

        /// <summary>The parameter a message that names none of the
        /// arguments is about (null: none), e.g. the vocabulary's bytes for
        /// "line 2 of the vocabulary ...".</summary>
        internal string Fallback;

        /// <summary>Each spec is "c_name" (spelled in C# as its camelCase),
        /// "c_name=spelling" (spelled otherwise, the parameter of that name)
        /// or "c_name=Spelling@param" (a field of parameter param); a trailing
        /// '#' marks an index.</summary>
        internal Args(params string[] specs)
        {
            int n = specs.Length;
            c = new string[n];
            spelling = new string[n];
            param = new string[n];
            index = new bool[n];
            for (int i = 0; i < n; i++)
            {
                var s = specs[i];
                index[i] = s.EndsWith("#", StringComparison.Ordinal);
                if (index[i]) s = s.Substring(0, s.Length - 1);
                int eq = s.IndexOf('=');
                c[i] = eq < 0 ? s : s.Substring(0, eq);
                var rest = eq < 0 ? Camel(s) : s.Substring(eq + 1);
                int at = rest.IndexOf('@');
                spelling[i] = at < 0 ? rest : rest.Substring(0, at);
                param[i] = at < 0 ? rest : rest.Substring(at + 1);
            }
        }

        static string Camel(string snake)
        {
            var sb = new StringBuilder(snake.Length);
            bool up = false;
            foreach (var ch in snake)
            {
                if (ch == '_') { up = true; continue; }
                sb.Append(up ? char.ToUpperInvariant(ch) : ch);
                up = false;
            }
            return sb.ToString();
        }

        static bool IdentChar(char ch) { return ch == '_' || (ch < 0x80 && char.IsLetterOrDigit(ch)); }

        /// <summary>The exception for a failed call: the first argument the
        /// message names gives ParamName and the class; the C names of this
        /// call's arguments become their C# spelling (names with an
        /// underscore everywhere, others where they name the argument).</summary>
        internal Exception Error(Status st, string native)
        {
            if (st != Status.NullPointer && st != Status.InvalidArgument) return new CupelException(st, native);
            int hit = -1;
            var message = new StringBuilder(native.Length + 16);
            for (int i = 0; i < native.Length;)
            {
                if (!IdentChar(native[i]) || (i > 0 && IdentChar(native[i - 1])))
                {
                    message.Append(native[i++]);
                    continue;
                }
                int end = i;
                while (end < native.Length && IdentChar(native[end])) end++;
                var word = native.Substring(i, end - i);
                int k = Array.IndexOf(c, word);
                bool subject = k >= 0 && hit < 0;
                if (subject) hit = k;
                message.Append(k >= 0 && (subject || word.IndexOf('_') >= 0) ? spelling[k] : word);
                i = end;
            }
            string name = hit < 0 ? Fallback : param[hit];
            var text = message.ToString();
            if (name != null && !Native.HasWord(text, name)) text = name + ": " + text;
            if (st == Status.NullPointer) return new ArgumentNullException(name, text);
            if (hit >= 0 && index[hit]) return new ArgumentOutOfRangeException(name, text);
            return new CupelArgumentException(st, text, name, native);
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

        /// <summary>UTF-8 that throws on what it cannot encode (a lone
        /// surrogate) instead of writing U+FFFD.</summary>
        internal static readonly UTF8Encoding Strict = new UTF8Encoding(false, true);

        /// <summary>Strings back to back, each NUL-terminated UTF-8 (null as
        /// ""), or null when the packed form cannot carry them as they are: it
        /// reads "" as absent. (An embedded NUL splits a string in two, which
        /// the library refuses: the count no longer matches.) ASCII columns,
        /// the common case, are copied char by char in one pass into the
        /// first `length` bytes of this thread's scratch buffer; any other
        /// character sends the column through one check for lone surrogates
        /// (name[k] names the first), one join and one UTF-8 encoding (a new
        /// array).
        ///
        /// With `at` (not null only for an ASCII column without NUL, the case
        /// the native calls taking an array of strings read as the packed ones
        /// do): each string's offset in the buffer (-1 for null), in this
        /// thread's scratch offsets. share (a column of kinds, a few values
        /// many times over): a string equal to the last one of its length is
        /// not copied again, its offset is that one's (the buffer then holds
        /// fewer strings, and is for the array calls only).</summary>
        internal static byte[] Packed(string[] strings, string name, bool share, out int length, out int[] at)
        {
            at = null;
            int size = strings.Length;
            foreach (var s in strings)
            {
                if (s == null) continue;
                if (s.Length == 0) { length = 0; return null; }
                size += s.Length;
            }
            var bytes = Bytes(size);
            var offsets = Offsets(strings.Length);
            string[] seenString = null;
            int[] seenAt = null;
            if (share)
            {
                seenString = new string[SharedLengths];
                seenAt = new int[SharedLengths];
            }
            int end = 0;
            bool nul = false; // some string holds a NUL
            for (int k = 0; k < strings.Length; k++)
            {
                var s = strings[k];
                if (s == null)
                {
                    offsets[k] = -1;
                    bytes[end++] = 0;
                    continue;
                }
                int n = s.Length;
                if (share && n < SharedLengths)
                {
                    var last = seenString[n];
                    if (last != null && string.Equals(last, s))
                    {
                        offsets[k] = seenAt[n];
                        continue;
                    }
                    seenString[n] = s;
                    seenAt[n] = end;
                }
                offsets[k] = end;
                int seen = 0;
                // One test per string, not two per char: seen gets a bit
                // above 0x7F from a char >= 0x80 (c) or a NUL (c - 1 = -1).
                for (int i = 0; i < n; i++)
                {
                    int c = s[i];
                    seen |= c | (c - 1);
                    bytes[end + i] = (byte)c;
                }
                if ((seen & ~0x7F) != 0)
                {
                    for (int i = 0; i < n; i++)
                    {
                        if (s[i] < 0x80) continue;
                        for (int j = 0; j < strings.Length; j++)
                            if (strings[j] != null) CheckUtf16(strings[j], name, j);
                        var utf8 = Strict.GetBytes(string.Join("\0", strings) + "\0");
                        length = utf8.Length;
                        return utf8;
                    }
                    // A NUL: the packed call refuses the column, with every
                    // string in it.
                    if (share) return Packed(strings, name, false, out length, out at);
                    nul = true;
                }
                end += n;
                bytes[end++] = 0;
            }
            length = end;
            if (!nul) at = offsets;
            return bytes;
        }

        /// <summary>Calls call with the native addresses of the strings
        /// Packed put in packed at offsets at (IntPtr.Zero for -1), in this
        /// thread's scratch address array, packed pinned for the call. The
        /// calls taking an array of strings beat the packed ones: the library
        /// checks a kind it saw just before without a strlen or UTF-8 pass,
        /// where a packed call scans and checks every string.</summary>
        internal static Status WithAddresses(byte[] packed, int[] at, int n, Func<IntPtr[], Status> call)
        {
            var pin = GCHandle.Alloc(packed, GCHandleType.Pinned);
            try
            {
                long b = pin.AddrOfPinnedObject().ToInt64();
                var p = Addresses(n);
                for (int k = 0; k < n; k++) p[k] = at[k] < 0 ? IntPtr.Zero : new IntPtr(b + at[k]);
                return call(p);
            }
            finally
            {
                pin.Free();
            }
        }

        // Per-thread buffers the library reads from or writes into during one
        // call (it copies what it keeps; results are copied out before the
        // call returns), so a bulk call allocates no large arrays. Each
        // thread keeps its largest.
        [ThreadStatic] static byte[] scratchBytes;
        [ThreadStatic] static UIntPtr[] scratchIndices;
        [ThreadStatic] static int[] scratchOffsets;
        [ThreadStatic] static IntPtr[] scratchAddresses;

        /// <summary>Packed shares strings shorter than this.</summary>
        const int SharedLengths = 64;

        /// <summary>buf, replaced by a new array of max(n, least) entries
        /// when it is null or shorter than n.</summary>
        static T[] Scratch<T>(ref T[] buf, int n, int least)
        {
            if (buf == null || buf.Length < n) buf = new T[Math.Max(n, least)];
            return buf;
        }

        /// <summary>A scratch int buffer of at least n entries.</summary>
        internal static int[] Offsets(int n) => Scratch(ref scratchOffsets, n, 64);

        /// <summary>A scratch address buffer of at least n entries.</summary>
        internal static IntPtr[] Addresses(int n) => Scratch(ref scratchAddresses, n, 64);

        /// <summary>A scratch byte buffer of at least n bytes (contents
        /// undefined).</summary>
        internal static byte[] Bytes(int n) => Scratch(ref scratchBytes, n, 256);

        /// <summary>A scratch index buffer of at least max(n, 1) entries.</summary>
        internal static UIntPtr[] IndexBuffer(int n) => Scratch(ref scratchIndices, n, 64);

        /// <summary>A C# index as size_t; a negative one throws
        /// ArgumentOutOfRangeException naming name.</summary>
        internal static UIntPtr Index(int i, string name)
        {
            if (i < 0)
                throw new ArgumentOutOfRangeException(ParamOf(name), i, name + " is " + i + ": negative; indices start at 0");
            return (UIntPtr)i;
        }

        internal static readonly ReportHandle NoReport = new ReportHandle();

        /// <summary>The ArgumentNullException for parameter name.</summary>
        internal static ArgumentNullException Null(string name)
        {
            return new ArgumentNullException(ParamOf(name), name + " is null");
        }

        /// <summary>The parameter a name like "parts[2].Key" belongs to.</summary>
        internal static string ParamOf(string name)
        {
            int cut = name.IndexOfAny(new[] { '[', '.' });
            return cut < 0 ? name : name.Substring(0, cut);
        }

        /// <summary>Whether text holds word with no identifier character on
        /// either side.</summary>
        internal static bool HasWord(string text, string word)
        {
            for (int at = text.IndexOf(word, StringComparison.Ordinal); at >= 0;
                 at = text.IndexOf(word, at + 1, StringComparison.Ordinal))
            {
                bool before = at > 0 && (char.IsLetterOrDigit(text[at - 1]) || text[at - 1] == '_');
                int end = at + word.Length;
                bool after = end < text.Length && (char.IsLetterOrDigit(text[end]) || text[end] == '_');
                if (!before && !after) return true;
            }
            return false;
        }

        internal static void Check(Status st) { Check(st, Args.None); }

        /// <summary>Throws for a failed call: the message read on the same
        /// thread, right after it, is the call's own.</summary>
        internal static void Check(Status st, Args args)
        {
            if (st != Status.Ok) throw args.Error(st, Utf8(cupel_last_error()));
        }

        /// <summary>The receiver's handle; disposed, ObjectDisposedException
        /// naming its type.</summary>
        internal static T Live<T>(T handle, object owner) where T : SafeHandle
        {
            if (handle.IsClosed)
            {
                var type = owner.GetType().Name;
                throw new ObjectDisposedException(type, "this " + type + " was disposed");
            }
            return handle;
        }

        /// <summary>An argument's handle: null, ArgumentNullException; disposed,
        /// ObjectDisposedException; both naming the parameter name.</summary>
        static T ArgHandle<T>(object owner, T handle, string name) where T : SafeHandle
        {
            if (owner == null) throw Null(name);
            if (handle.IsClosed)
                throw new ObjectDisposedException(ParamOf(name), name + ": the " + owner.GetType().Name + " was disposed");
            return handle;
        }

        internal static ItemsHandle Arg(Items x, string name) { return ArgHandle(x, x == null ? null : x.Handle, name); }
        internal static BudgetHandle Arg(Budget x, string name) { return ArgHandle(x, x == null ? null : x.Handle, name); }
        internal static SlicerHandle Arg(Slicer x, string name) { return ArgHandle(x, x == null ? null : x.Handle, name); }
        internal static ReportHandle Arg(Report x, string name) { return ArgHandle(x, x == null ? null : x.Handle, name); }
        internal static ScorerHandle Arg(Scorer x, string name) { return ArgHandle(x, x == null ? null : x.Handle, name); }
        internal static PlacerHandle Arg(Placer x, string name) { return ArgHandle(x, x == null ? null : x.Handle, name); }
        internal static TokenizerHandle Arg(Tokenizer x, string name) { return ArgHandle(x, x == null ? null : x.Handle, name); }
        internal static PipelineHandle Arg(Pipeline x, string name) { return Tracing.Check(ArgHandle(x, x == null ? null : x.Handle, name)); }

        /// <summary>The length of a live list.</summary>
        internal static int Len(ItemsHandle items) { return (int)cupel_items_len(items); }

        internal static string StatusName(int status) { return Utf8(cupel_status_str(status)); }

        /// <summary>Throws CupelArgumentException naming name when s holds a
        /// lone surrogate (UTF-8 cannot carry it; .NET's default encoder would
        /// silently write U+FFFD instead).</summary>
        internal static void CheckUtf16(string s, string name, int element = -1)
        {
            for (int i = 0; i < s.Length; i++)
            {
                char ch = s[i];
                if (ch < 0xD800 || ch > 0xDFFF) continue;
                if (ch <= 0xDBFF && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]))
                {
                    i++;
                    continue;
                }
                var what = element < 0 ? name : name + "[" + element + "]";
                throw new CupelArgumentException(Status.InvalidArgument, string.Format(
                    "{0} is not valid UTF-16: a lone surrogate U+{1:X4} at char {2} (UTF-8 cannot encode it)",
                    what, (int)ch, i), ParamOf(name), null);
            }
        }

        /// <summary>The most bytes one .NET array holds.</summary>
        internal const long MaxBytes = 0x7FFFFFC7;

        /// <summary>The UTF-8 length of s in bytes; a lone surrogate throws
        /// CupelArgumentException naming name (or name[element]), as
        /// CheckUtf16 does, and so does a text too long for one array.</summary>
        internal static int Utf8Length(string s, string name, int element = -1)
        {
            long n = s.Length;
            for (int i = 0; i < s.Length; i++)
            {
                char ch = s[i];
                if (ch < 0x80) continue;
                if (ch < 0x800) { n += 1; continue; }
                if (ch < 0xD800 || ch > 0xDFFF) { n += 2; continue; }
                if (ch <= 0xDBFF && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]))
                {
                    n += 2; // two chars, four bytes
                    i++;
                    continue;
                }
                CheckUtf16(s, name, element); // throws: this is the first lone surrogate
            }
            if (n > MaxBytes) throw TooLong(element < 0 ? name : name + "[" + element + "]", n);
            return (int)n;
        }

        static CupelArgumentException TooLong(string what, long bytes)
        {
            return new CupelArgumentException(Status.InvalidArgument, string.Format(
                "{0} is {1} bytes of UTF-8; one call takes at most {2}", what, bytes, MaxBytes), ParamOf(what), null);
        }

        /// <summary>text as UTF-8 in the first len bytes of this thread's
        /// scratch buffer (not NUL-terminated: the library takes a length, so
        /// a '\0' is text like any other). Null throws ArgumentNullException,
        /// a lone surrogate CupelArgumentException, both naming name.</summary>
        internal static byte[] Text(string text, string name, out int len)
        {
            if (text == null) throw Null(name);
            len = Utf8Length(text, name);
            var bytes = Bytes(len);
            Strict.GetBytes(text, 0, text.Length, bytes, 0);
            return bytes;
        }

        /// <summary>Texts as UTF-8, back to back in this thread's scratch
        /// buffer, pinned until Dispose: Pointers[i] and Lengths[i] are text
        /// i's, as the library's (texts, lens) arrays take them. A null or
        /// lone-surrogate element throws, naming name[i].</summary>
        internal sealed class PackedTexts : IDisposable
        {
            internal readonly IntPtr[] Pointers;
            internal readonly UIntPtr[] Lengths;
            GCHandle pin;

            internal PackedTexts(string[] texts, string name)
            {
                var lens = new int[texts.Length];
                long total = 0;
                for (int i = 0; i < texts.Length; i++)
                {
                    if (texts[i] == null) throw Null(name + "[" + i + "]");
                    lens[i] = Utf8Length(texts[i], name, i);
                    total += lens[i];
                }
                if (total > MaxBytes) throw TooLong(name, total);
                var buf = Bytes((int)total);
                Pointers = new IntPtr[texts.Length];
                Lengths = new UIntPtr[texts.Length];
                pin = GCHandle.Alloc(buf, GCHandleType.Pinned);
                var start = pin.AddrOfPinnedObject();
                int at = 0;
                for (int i = 0; i < texts.Length; i++)
                {
                    Strict.GetBytes(texts[i], 0, texts[i].Length, buf, at);
                    Pointers[i] = IntPtr.Add(start, at);
                    Lengths[i] = (UIntPtr)lens[i];
                    at += lens[i];
                }
            }

            public void Dispose()
            {
                if (pin.IsAllocated) pin.Free();
            }
        }

        /// <summary>How many chars of s (valid UTF-16) its first `bytes` bytes
        /// of UTF-8 (of `total`) encode, counting forward from the start; the
        /// offset must be a character boundary.</summary>
        internal static int CharsBefore(string s, long bytes, int total)
        {
            if (bytes == total) return s.Length;
            long at = 0;
            int i = 0;
            while (at < bytes)
            {
                char ch = s[i];
                if (ch < 0x80) { at += 1; i += 1; }
                else if (ch < 0x800) { at += 2; i += 1; }
                else if (char.IsHighSurrogate(ch)) { at += 4; i += 2; }
                else { at += 3; i += 1; }
            }
            if (at != bytes) throw NotABoundary(bytes);
            return i;
        }

        /// <summary>How many chars of s (valid UTF-16) its last `bytes` bytes
        /// of UTF-8 (of `total`) encode, counting back from the end.</summary>
        internal static int CharsAfter(string s, long bytes, int total)
        {
            if (bytes == total) return s.Length;
            long at = 0;
            int i = s.Length;
            while (at < bytes)
            {
                char ch = s[i - 1];
                if (ch < 0x80) { at += 1; i -= 1; }
                else if (ch < 0x800) { at += 2; i -= 1; }
                else if (char.IsLowSurrogate(ch)) { at += 4; i -= 2; }
                else { at += 3; i -= 1; }
            }
            if (at != bytes) throw NotABoundary(total - bytes);
            return s.Length - i;
        }

        static CupelException NotABoundary(long offset)
        {
            return new CupelException(Status.Internal, "the library returned byte offset " + offset +
                ", inside a character");
        }

        /// <summary>s as NUL-terminated UTF-8 (null for null); a lone
        /// surrogate throws, naming name (or name[element]).</summary>
        internal static byte[] Utf8Z(string s, string name, int element = -1)
        {
            if (s == null) return null;
            CheckUtf16(s, name, element);
            var bytes = new byte[Strict.GetByteCount(s) + 1];
            Strict.GetBytes(s, 0, s.Length, bytes, 0);
            return bytes;
        }

        /// <summary>A NUL-terminated UTF-8 string ("" for NULL).</summary>
        internal static string Utf8(IntPtr p)
        {
            if (p == IntPtr.Zero) return "";
            int len = 0;
            while (Marshal.ReadByte(p, len) != 0) len++;
            var bytes = new byte[len];
            Marshal.Copy(p, bytes, 0, len);
            return Encoding.UTF8.GetString(bytes);
        }

        /// <summary>n bytes of UTF-8 at p ("" for NULL).</summary>
        internal static string Utf8(IntPtr p, UIntPtr n)
        {
            if (p == IntPtr.Zero) return "";
            var bytes = new byte[(int)n];
            Marshal.Copy(p, bytes, 0, bytes.Length);
            return Encoding.UTF8.GetString(bytes);
        }

        /// <summary>Variant v (from 1) of item ix, read back.</summary>
        internal static Variant ReadVariant(ItemsHandle h, UIntPtr ix, int v, Args args)
        {
            long tokens;
            double value;
            IntPtr p;
            UIntPtr n;
            Check(cupel_items_variant(h, ix, (UIntPtr)v, out tokens, out value, out p, out n), args);
            return new Variant(tokens, value, p == IntPtr.Zero ? null : Utf8(p, n));
        }

        internal static int[] Ints(UIntPtr[] buf, UIntPtr n)
        {
            var result = new int[(int)n];
            for (int i = 0; i < result.Length; i++) result[i] = (int)buf[i];
            return result;
        }

        internal static NativeCountQuota[] CountEntries(NativeStrings strings, CountQuota[] entries)
        {
            if (entries == null) throw Null("entries");
            var e = new NativeCountQuota[entries.Length];
            for (int i = 0; i < entries.Length; i++)
                e[i] = new NativeCountQuota { Kind = strings.Get(entries[i].Kind, "entries", i), Require = entries[i].Require, Cap = entries[i].Cap };
            return e;
        }

        [DllImport(Lib)] internal static extern IntPtr cupel_last_error();
        [DllImport(Lib)] internal static extern IntPtr cupel_status_str(int status);
        [DllImport(Lib)] internal static extern IntPtr cupel_version();
        [DllImport(Lib)] internal static extern uint cupel_abi_version();
        [DllImport(Lib)] internal static extern UIntPtr cupel_live_handles();
        [DllImport(Lib)] internal static extern IntPtr cupel_reason_str(int reason);

        [DllImport(Lib)] internal static extern Status cupel_items_new(out ItemsHandle items);
        [DllImport(Lib)] internal static extern void cupel_items_free(IntPtr items);
        [DllImport(Lib)] internal static extern Status cupel_items_push(ItemsHandle items, long tokens, double score, byte[] kind);
        [DllImport(Lib)] internal static extern Status cupel_items_push_many(ItemsHandle items, UIntPtr count, long[] tokens, double[] scores, IntPtr[] kinds);
        [DllImport(Lib)] internal static extern UIntPtr cupel_items_len(ItemsHandle items);
        [DllImport(Lib)] internal static extern Status cupel_items_set_group(ItemsHandle items, UIntPtr index, ulong group);
        [DllImport(Lib)] internal static extern Status cupel_items_set_groups(ItemsHandle items, UIntPtr first, UIntPtr count, ulong[] groups);
        [DllImport(Lib)] internal static extern void cupel_items_clear(ItemsHandle items);

        [DllImport(Lib)] internal static extern Status cupel_items_tokens(ItemsHandle items, UIntPtr index, out long tokens);
        [DllImport(Lib)] internal static extern Status cupel_items_score(ItemsHandle items, UIntPtr index, out double score);
        [DllImport(Lib)] internal static extern Status cupel_items_kind(ItemsHandle items, UIntPtr index, out IntPtr kind, out UIntPtr len);
        [DllImport(Lib)] internal static extern Status cupel_items_content(ItemsHandle items, UIntPtr index, out IntPtr content, out UIntPtr len);
        [DllImport(Lib)] internal static extern Status cupel_items_source(ItemsHandle items, UIntPtr index, out IntPtr source, out UIntPtr len);
        [DllImport(Lib)] internal static extern Status cupel_items_timestamp(ItemsHandle items, UIntPtr index, out byte present, out long unixMillis);
        [DllImport(Lib)] internal static extern Status cupel_items_priority(ItemsHandle items, UIntPtr index, out byte present, out long priority);
        [DllImport(Lib)] internal static extern Status cupel_items_relevance_hint(ItemsHandle items, UIntPtr index, out byte present, out double hint);
        [DllImport(Lib)] internal static extern Status cupel_items_pinned(ItemsHandle items, UIntPtr index, out byte pinned);
        [DllImport(Lib)] internal static extern Status cupel_items_group(ItemsHandle items, UIntPtr index, out ulong group);
        [DllImport(Lib)] internal static extern Status cupel_items_tag_count(ItemsHandle items, UIntPtr index, out UIntPtr count);
        [DllImport(Lib)] internal static extern Status cupel_items_tag(ItemsHandle items, UIntPtr index, UIntPtr tagIndex, out IntPtr tag, out UIntPtr len);
        [DllImport(Lib)] internal static extern Status cupel_items_metadata_count(ItemsHandle items, UIntPtr index, out UIntPtr count);
        [DllImport(Lib)] internal static extern Status cupel_items_metadata_entry(ItemsHandle items, UIntPtr index, UIntPtr entryIndex, out IntPtr key, out UIntPtr keyLen, out IntPtr value, out UIntPtr valueLen);

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

        [DllImport(Lib)] internal static extern Status cupel_tokenizer_new(byte[] name, out TokenizerHandle tokenizer);
        [DllImport(Lib)] internal static extern Status cupel_tokenizer_from_tiktoken(byte[] ranks, UIntPtr ranksLen, byte[] pattern, out TokenizerHandle tokenizer);
        [DllImport(Lib)] internal static extern void cupel_tokenizer_free(IntPtr tokenizer);
        [DllImport(Lib)] internal static extern Status cupel_tokenizer_count(TokenizerHandle tokenizer, byte[] text, UIntPtr len, out long tokens);
        [DllImport(Lib)] internal static extern Status cupel_tokenizer_count_many(TokenizerHandle tokenizer, UIntPtr count, IntPtr[] texts, UIntPtr[] lens, [Out] long[] tokens);
        [DllImport(Lib)] internal static extern Status cupel_tokenizer_truncate(TokenizerHandle tokenizer, byte[] text, UIntPtr len, long maxTokens, int keep, out UIntPtr headEnd, out UIntPtr tailStart, out long tokens);
        [DllImport(Lib)] internal static extern Status cupel_items_push_text(ItemsHandle items, TokenizerHandle tokenizer, byte[] text, UIntPtr len, double score, byte[] kind);
        [DllImport(Lib)] internal static extern Status cupel_items_truncate(ItemsHandle items, UIntPtr len);
        [DllImport(Lib)] internal static extern Status cupel_items_add_variant(ItemsHandle items, UIntPtr index, long tokens, double value, byte[] content);
        [DllImport(Lib)] internal static extern Status cupel_items_set_truncatable(ItemsHandle items, UIntPtr index, int keep, long minTokens);
        [DllImport(Lib)] internal static extern Status cupel_items_clear_truncatable(ItemsHandle items, UIntPtr index);
        [DllImport(Lib)] internal static extern Status cupel_items_variant_count(ItemsHandle items, UIntPtr index, out UIntPtr count);
        [DllImport(Lib)] internal static extern Status cupel_items_variant(ItemsHandle items, UIntPtr index, UIntPtr variant, out long tokens, out double value, out IntPtr content, out UIntPtr len);
        [DllImport(Lib)] internal static extern Status cupel_items_truncatable(ItemsHandle items, UIntPtr index, out byte truncatable, out int keep, out long minTokens);
        [DllImport(Lib)] internal static extern Status cupel_pipeline_set_tokenizer(PipelineHandle pipeline, IntPtr tokenizer);
        [DllImport(Lib)] internal static extern Status cupel_report_included_variant(ReportHandle report, UIntPtr i, out UIntPtr variant, out long tokens);
        [DllImport(Lib)] internal static extern Status cupel_report_included_cut(ReportHandle report, UIntPtr i, out UIntPtr headEnd, out UIntPtr tailStart);
        [DllImport(Lib)] internal static extern Status cupel_items_push_texts(ItemsHandle items, TokenizerHandle tokenizer, UIntPtr count, IntPtr[] texts, UIntPtr[] lens, double[] scores, IntPtr[] kinds);

        [DllImport(Lib)] internal static extern Status cupel_items_set_key(ItemsHandle items, UIntPtr index, ulong key);
        [DllImport(Lib)] internal static extern Status cupel_items_set_volatile(ItemsHandle items, UIntPtr index, byte isVolatile);
        [DllImport(Lib)] internal static extern Status cupel_items_set_keys(ItemsHandle items, UIntPtr first, UIntPtr count, ulong[] keys);
        [DllImport(Lib)] internal static extern Status cupel_items_set_volatile_many(ItemsHandle items, UIntPtr first, UIntPtr count, byte[] isVolatile);
        [DllImport(Lib)] internal static extern Status cupel_items_key(ItemsHandle items, UIntPtr index, out ulong key);
        [DllImport(Lib)] internal static extern Status cupel_items_volatile(ItemsHandle items, UIntPtr index, out byte isVolatile);
        [DllImport(Lib)] internal static extern Status cupel_session_new(PipelineHandle pipeline, out SessionHandle session);
        [DllImport(Lib)] internal static extern void cupel_session_free(IntPtr session);
        [DllImport(Lib)] internal static extern Status cupel_session_set_slack(SessionHandle session, double fraction);
        [DllImport(Lib)] internal static extern Status cupel_session_slack(SessionHandle session, out double fraction);
        [DllImport(Lib)] internal static extern Status cupel_session_run(SessionHandle session, ItemsHandle items, BudgetHandle budget, [Out] UIntPtr[] outIndices, UIntPtr capacity, out UIntPtr outLen, ReportHandle report);
        [DllImport(Lib)] internal static extern Status cupel_session_stable_prefix(SessionHandle session, out UIntPtr items, out long tokens);
        [DllImport(Lib)] internal static extern Status cupel_session_reset(SessionHandle session);
        [DllImport(Lib)] internal static extern Status cupel_session_last_action(SessionHandle session, out int action);
        [DllImport(Lib)] internal static extern Status cupel_session_breakpoints(SessionHandle session, [Out] NativeBreakpoint[] outBreakpoints, UIntPtr capacity, out UIntPtr outLen);

        /// <summary>cupel_breakpoint (blittable).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeBreakpoint
        {
            public UIntPtr Items;
            public long Tokens;
            public int Mark;
        }
    }

    // ---- the pipeline ----------------------------------------------------------

    /// <summary>Why an item was included or excluded; the numbers are the C
    /// ABI's, and <see cref="ReasonExtensions.Name"/> gives the library's name
    /// for one (a test checks that every member is named as the library names
    /// its number).</summary>
    public enum Reason
    {
        /// <summary>Included on its score.</summary>
        Scored = 0,
        /// <summary>Included because it is pinned.</summary>
        Pinned = 1,
        /// <summary>Included at no cost: it has zero tokens.</summary>
        ZeroToken = 2,
        /// <summary>Included as one of its variants
        /// (<see cref="Decision.Variant"/> says which).</summary>
        Variant = 3,
        /// <summary>Included cut down to fit what the slicer left
        /// (<see cref="Decision.HeadEndByte"/>, <see cref="Decision.TailStartByte"/>).</summary>
        Truncated = 4,
        /// <summary>Excluded: it did not fit the tokens that were left.</summary>
        BudgetExceeded = 10,
        /// <summary>Excluded: its score was too low (reserved by the spec).</summary>
        ScoredTooLow = 11,
        /// <summary>Excluded: a duplicate of another item's content.</summary>
        Deduplicated = 12,
        /// <summary>Excluded: its kind reached its quota cap.</summary>
        QuotaCapExceeded = 13,
        /// <summary>Excluded: displaced by another kind's quota requirement.</summary>
        QuotaRequireDisplaced = 14,
        /// <summary>Excluded: it has a negative token count.</summary>
        NegativeTokens = 15,
        /// <summary>Excluded: displaced by a pinned item.</summary>
        PinnedOverride = 16,
        /// <summary>Excluded by a filter (reserved by the spec).</summary>
        Filtered = 17,
        /// <summary>Excluded: its kind reached its count cap.</summary>
        CountCapExceeded = 18,
        /// <summary>Excluded by a session (<see cref="Session.Run"/>): the
        /// pipeline takes it, but the session keeps the prompt's cached prefix
        /// instead (an item it left out before stays out until the next
        /// compaction, and a compaction leaves its slack free).</summary>
        Deferred = 19,
    }

    /// <summary>Names of reasons, as the library (and its JSON report) spells them.</summary>
    public static class ReasonExtensions
    {
        /// <summary>The library's name of reason (cupel_reason_str), e.g.
        /// "BudgetExceeded"; "Unknown" for a number that is no reason.</summary>
        public static string Name(this Reason reason)
        {
            return Native.Utf8(Native.cupel_reason_str((int)reason));
        }
    }

    /// <summary>What the pipeline does when the selection exceeds the target.</summary>
    public enum Overflow
    {
        /// <summary>Fail the run (the default).</summary>
        Throw = 0,
        /// <summary>Drop items until the selection fits.</summary>
        Truncate = 1,
        /// <summary>Keep the selection; the report records the excess.</summary>
        Proceed = 2,
    }

    /// <summary>The DecayScorer's curves.</summary>
    public enum DecayCurve
    {
        /// <summary>Exponential decay with a half-life.</summary>
        Exponential = 0,
        /// <summary>Step windows: the score of the first window the age fits.</summary>
        Step = 1,
        /// <summary>One window: full score inside it, none outside.</summary>
        Window = 2,
    }

    /// <summary>One item's fate in a report.</summary>
    public struct Decision
    {
        /// <summary>The item's index (push order).</summary>
        public int Index;
        /// <summary>The score, as the SelectionReport defines it.</summary>
        public double Score;
        /// <summary>Why the item was included or excluded.</summary>
        public Reason Reason;
        /// <summary>The item's tokens.</summary>
        public long ItemTokens;
        /// <summary>BudgetExceeded: the tokens that were left.</summary>
        public long AvailableTokens;
        /// <summary>Deduplicated: the item kept; PinnedOverride: the pinned item.</summary>
        public int? Related;
        /// <summary>The keep-together group, 0 when none.</summary>
        public ulong Group;
        /// <summary>The tokens the decision was made on (the group's, or the item's).</summary>
        public long GroupTokens;
        /// <summary>Included: the option chosen, 0 for the item as pushed
        /// (also when it was cut), v for its variant v (Reason.Variant). 0 in
        /// Report.Excluded.</summary>
        public int Variant;
        /// <summary>Included: the tokens it adds to the context (the
        /// variant's, the cut's, or ItemTokens); Report.SelectedTokens sums
        /// them. 0 in Report.Excluded.</summary>
        public long AddedTokens;
        /// <summary>Included: the end of the kept head of the item's own
        /// content, a UTF-8 BYTE offset (not a string index): the host sends
        /// content bytes [0, HeadEndByte) then [TailStartByte, end).
        /// HeadEndByte = TailStartByte = the content's UTF-8 length when it was
        /// not cut, both 0 when it has no content. <see cref="Text"/> gives
        /// the text as a string.</summary>
        public int HeadEndByte;
        /// <summary>Included: the start of the kept tail of the item's own
        /// content, a UTF-8 byte offset (see <see cref="HeadEndByte"/>).</summary>
        public int TailStartByte;

        /// <summary>The text the host sends for this included decision of a run
        /// over items (the same list, unchanged since): variant Variant's
        /// content when Variant &gt; 0 (null when it has none), else the item's
        /// content cut as the run cut it, bytes [0, HeadEndByte) and
        /// [TailStartByte, end) of its UTF-8 decoded as one string (the whole
        /// content when it was not cut; null when it has none). A decision
        /// that does not fit the list throws ArgumentException for
        /// items.</summary>
        public string Text(Items items)
        {
            var h = Native.Arg(items, "items");
            if (Index < 0 || Index >= Native.Len(h))
                throw new ArgumentOutOfRangeException("items", "items: the decision's item " + Index +
                    " is not in the list of " + Native.Len(h) + " items");
            var ix = (UIntPtr)Index;
            if (Variant > 0)
            {
                UIntPtr count;
                Native.Check(Native.cupel_items_variant_count(h, ix, out count));
                if (Variant > (int)count)
                    throw new ArgumentOutOfRangeException("items", "items: item " + Index + " has " + count +
                        " variants, not variant " + Variant);
                return Native.ReadVariant(h, ix, Variant, Args.None).Content;
            }
            IntPtr p;
            UIntPtr n;
            Native.Check(Native.cupel_items_content(h, ix, out p, out n));
            if (p == IntPtr.Zero) return null;
            int len = (int)n;
            if (HeadEndByte == len && TailStartByte == len) return Native.Utf8(p, n);
            if (HeadEndByte < 0 || HeadEndByte > TailStartByte || TailStartByte > len)
                throw NotACut(len);
            var bytes = new byte[HeadEndByte + len - TailStartByte];
            Marshal.Copy(p, bytes, 0, HeadEndByte);
            Marshal.Copy(IntPtr.Add(p, TailStartByte), bytes, HeadEndByte, len - TailStartByte);
            try
            {
                return Native.Strict.GetString(bytes);
            }
            catch (DecoderFallbackException)
            {
                throw NotACut(len);
            }
        }

        CupelArgumentException NotACut(int len)
        {
            return new CupelArgumentException(Status.InvalidArgument, "items: HeadEndByte " + HeadEndByte +
                " and TailStartByte " + TailStartByte + " do not cut item " + Index + "'s " + len +
                "-byte content at character boundaries: the decision is not of a run over this list as it is",
                "items", null);
        }

        /// <summary>"#index ReasonName".</summary>
        public override string ToString() { return "#" + Index + " " + Reason.Name(); }
    }

    /// <summary>Owns one native cupel_scorer (freed by cupel_scorer_free).</summary>
    public sealed class ScorerHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public ScorerHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native scorer is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>Frees the native scorer.</summary>
        protected override bool ReleaseHandle() { Native.cupel_scorer_free(handle); return true; }
    }

    /// <summary>Owns one native cupel_placer (freed by cupel_placer_free).</summary>
    public sealed class PlacerHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public PlacerHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native placer is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>Frees the native placer.</summary>
        protected override bool ReleaseHandle() { Native.cupel_placer_free(handle); return true; }
    }

    /// <summary>Owns one native cupel_pipeline (freed by cupel_pipeline_free).</summary>
    public sealed class PipelineHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public PipelineHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native pipeline is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>The trace the native pipeline calls back (null: none),
        /// held as long as the handle: the callback's target stays alive.</summary>
        internal TraceSink Trace;
        /// <summary>Frees the native pipeline.</summary>
        protected override bool ReleaseHandle() { Native.cupel_pipeline_free(handle); return true; }
    }

    /// <summary>A scorer (the Score stage). Composite and scaled scorers copy
    /// their children, which may be disposed right after.</summary>
    public sealed class Scorer : IDisposable
    {
        internal readonly ScorerHandle Handle;

        static readonly Args WeightArgs = new Args("weights", "count=weights");
        static readonly Args CompositeArgs = new Args("children=parts", "weights=parts", "count=parts");
        static readonly Args ScaledArgs = new Args("inner");
        static readonly Args TrustArgs = new Args("default_score");
        static readonly Args KeyArgs = new Args("key", "value", "boost");
        static readonly Args DecayArgs = new Args("curve", "duration_secs", "windows", "window_count=windows",
            "reference_unix_millis", "null_timestamp_score");
        static readonly Args ScoreArgs = new Args("items");

        private Scorer(ScorerHandle h) { Handle = h; }

        private delegate Status Create(out ScorerHandle h);

        private static Scorer Make(Create create)
        {
            ScorerHandle h;
            Native.Check(create(out h));
            return new Scorer(h);
        }

        /// <summary>The scores pushed with the items.</summary>
        public static Scorer Given() { return Make(Native.cupel_scorer_new_given); }
        /// <summary>RecencyScorer: newer timestamps score higher.</summary>
        public static Scorer Recency() { return Make(Native.cupel_scorer_new_recency); }
        /// <summary>PriorityScorer: higher priorities score higher.</summary>
        public static Scorer Priority() { return Make(Native.cupel_scorer_new_priority); }
        /// <summary>FrequencyScorer: items sharing tags with many others score higher.</summary>
        public static Scorer Frequency() { return Make(Native.cupel_scorer_new_frequency); }
        /// <summary>ReflexiveScorer: the items' relevance hints.</summary>
        public static Scorer Reflexive() { return Make(Native.cupel_scorer_new_reflexive); }

        private static Native.NativeWeight[] Weights(IDictionary<string, double> weights, NativeStrings strings)
        {
            var keys = new List<string>(weights.Keys);
            keys.Sort(StringComparer.Ordinal);
            var w = new Native.NativeWeight[keys.Count];
            for (int i = 0; i < w.Length; i++)
                w[i] = new Native.NativeWeight { Name = strings.Get(keys[i], "weights", i), Weight = weights[keys[i]] };
            return w;
        }

        /// <summary>KindScorer with weights per kind (finite, &gt;= 0); null:
        /// the specification's defaults, an empty dictionary: no kind weighted
        /// (every score 0). Entries go to the library in ordinal key order
        /// (its messages count in that order).</summary>
        public static Scorer Kind(IDictionary<string, double> weights = null)
        {
            using (var strings = new NativeStrings())
            {
                var w = weights == null ? null : Weights(weights, strings);
                ScorerHandle h;
                Native.Check(Native.cupel_scorer_new_kind(w, (UIntPtr)(w == null ? 0 : w.Length), out h), WeightArgs);
                return new Scorer(h);
            }
        }

        /// <summary>TagScorer with weights per tag (finite, &gt;= 0), in
        /// ordinal key order as Kind.</summary>
        public static Scorer Tag(IDictionary<string, double> weights)
        {
            if (weights == null) throw Native.Null("weights");
            using (var strings = new NativeStrings())
            {
                var w = Weights(weights, strings);
                ScorerHandle h;
                Native.Check(Native.cupel_scorer_new_tag(w, (UIntPtr)w.Length, out h), WeightArgs);
                return new Scorer(h);
            }
        }

        /// <summary>The weighted mean of (scorer, weight) parts; weights finite
        /// and &gt; 0. The parts are copied: they may be disposed right after.</summary>
        public static Scorer Composite(params KeyValuePair<Scorer, double>[] parts)
        {
            if (parts == null) throw Native.Null("parts");
            var kids = new IntPtr[parts.Length];
            var w = new double[parts.Length];
            var added = new bool[parts.Length];
            try
            {
                for (int i = 0; i < parts.Length; i++)
                {
                    var child = Native.Arg(parts[i].Key, "parts[" + i + "].Key");
                    child.DangerousAddRef(ref added[i]);
                    kids[i] = child.DangerousGetHandle();
                    w[i] = parts[i].Value;
                }
                ScorerHandle h;
                Native.Check(Native.cupel_scorer_new_composite(kids, w, (UIntPtr)kids.Length, out h), CompositeArgs);
                return new Scorer(h);
            }
            finally
            {
                for (int i = 0; i < parts.Length; i++)
                    if (added[i]) parts[i].Key.Handle.DangerousRelease();
            }
        }

        /// <summary>inner's scores scaled to [0, 1] (inner is copied).</summary>
        public static Scorer Scaled(Scorer inner)
        {
            var innerHandle = Native.Arg(inner, "inner");
            ScorerHandle h;
            Native.Check(Native.cupel_scorer_new_scaled(innerHandle, out h), ScaledArgs);
            return new Scorer(h);
        }

        /// <summary>MetadataTrustScorer: the "cupel:trust" metadata value,
        /// defaultScore where it is missing.</summary>
        public static Scorer MetadataTrust(double defaultScore = 0.5)
        {
            ScorerHandle h;
            Native.Check(Native.cupel_scorer_new_metadata_trust(defaultScore, out h), TrustArgs);
            return new Scorer(h);
        }

        /// <summary>MetadataKeyScorer: boost (finite, &gt; 0) for items whose
        /// metadata key equals value.</summary>
        public static Scorer MetadataKey(string key, string value, double boost)
        {
            var k = Native.Utf8Z(key, "key");
            var v = Native.Utf8Z(value, "value");
            ScorerHandle h;
            Native.Check(Native.cupel_scorer_new_metadata_key(k, v, boost, out h), KeyArgs);
            return new Scorer(h);
        }

        /// <summary>DecayScorer. windows: (max age in seconds, score), youngest
        /// first (step curve); may be null for the other curves.</summary>
        public static Scorer Decay(DecayCurve curve, double durationSecs, KeyValuePair<double, double>[] windows,
                                   long referenceUnixMillis, double nullTimestampScore = 0.5)
        {
            var w = new Native.NativeDecayWindow[windows == null ? 0 : windows.Length];
            for (int i = 0; i < w.Length; i++) w[i] = new Native.NativeDecayWindow { MaxAgeSecs = windows[i].Key, Score = windows[i].Value };
            ScorerHandle h;
            Native.Check(Native.cupel_scorer_new_decay((int)curve, durationSecs, w.Length == 0 ? null : w, (UIntPtr)w.Length,
                referenceUnixMillis, nullTimestampScore, out h), DecayArgs);
            return new Scorer(h);
        }

        /// <summary>The score of every item, by index.</summary>
        public double[] Score(Items items)
        {
            var self = Native.Live(Handle, this);
            var it = Native.Arg(items, "items");
            int count = Native.Len(it);
            var buf = new double[Math.Max(count, 1)];
            UIntPtr n;
            Native.Check(Native.cupel_scorer_score(self, it, buf, (UIntPtr)count, out n), ScoreArgs);
            var result = new double[(int)n];
            Array.Copy(buf, result, result.Length);
            return result;
        }

        /// <summary>Frees the native scorer; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>A placer: the final order.</summary>
    public sealed class Placer : IDisposable
    {
        internal readonly PlacerHandle Handle;

        static readonly Args PlaceArgs = new Args("items", "indices#", "scores", "count=indices");

        private Placer(PlacerHandle h) { Handle = h; }

        /// <summary>ChronologicalPlacer: oldest first.</summary>
        public static Placer Chronological()
        {
            PlacerHandle h;
            Native.Check(Native.cupel_placer_new_chronological(out h));
            return new Placer(h);
        }

        /// <summary>UShapedPlacer: the best items at both ends.</summary>
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
            var self = Native.Live(Handle, this);
            var it = Native.Arg(items, "items");
            if (indices == null) throw Native.Null("indices");
            if (scores == null) throw Native.Null("scores");
            if (indices.Length != scores.Length)
                throw new CupelArgumentException(Status.InvalidArgument, "Place: " + indices.Length + " indices and " +
                    scores.Length + " scores; one score per index", "scores", null);
            var idx = new UIntPtr[Math.Max(indices.Length, 1)];
            for (int i = 0; i < indices.Length; i++)
                idx[i] = Native.Index(indices[i], "indices[" + i + "]");
            var buf = Native.IndexBuffer(indices.Length);
            UIntPtr n;
            Native.Check(Native.cupel_placer_place(self, it, idx, scores.Length == 0 ? new double[1] : scores,
                (UIntPtr)indices.Length, buf, (UIntPtr)buf.Length, out n), PlaceArgs);
            return Native.Ints(buf, n);
        }

        /// <summary>Frees the native placer; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>The whole pipeline; keeps copies of its scorer, slicer and placer.</summary>
    public sealed partial class Pipeline : IDisposable
    {
        internal readonly PipelineHandle Handle;

        static readonly Args NewArgs = new Args("scorer", "slicer", "placer");
        static readonly Args SetArgs = new Args("strategy=overflow", "enabled=deduplication");
        static readonly Args RunArgs = new Args("items", "budget", "report",
            "cupel_pipeline_set_tokenizer=Pipeline.SetTokenizer@items", "cupel_items_set_content=Items.SetContent@items");

        /// <summary>scorer null: the pushed scores; placer null: the slicer's
        /// order. The three are copied: they may be disposed right after.</summary>
        public Pipeline(Scorer scorer, Slicer slicer, Placer placer, bool deduplication = true, Overflow overflow = Overflow.Throw)
        {
            var sc = scorer == null ? null : Native.Arg(scorer, "scorer");
            var sl = Native.Arg(slicer, "slicer");
            var pl = placer == null ? null : Native.Arg(placer, "placer");
            bool s = false, p = false;
            try
            {
                if (sc != null) sc.DangerousAddRef(ref s);
                if (pl != null) pl.DangerousAddRef(ref p);
                Native.Check(Native.cupel_pipeline_new(
                    sc == null ? IntPtr.Zero : sc.DangerousGetHandle(), sl,
                    pl == null ? IntPtr.Zero : pl.DangerousGetHandle(),
                    out Handle), NewArgs);
            }
            finally
            {
                if (s) sc.DangerousRelease();
                if (p) pl.DangerousRelease();
            }
            Native.Check(Native.cupel_pipeline_set_deduplication(Handle, deduplication ? (byte)1 : (byte)0), SetArgs);
            Native.Check(Native.cupel_pipeline_set_overflow(Handle, (int)overflow), SetArgs);
        }

        static readonly Args TokenizerArgs = new Args("tokenizer");

        /// <summary>Whether SetTokenizer gave it a tokenizer (Context.Select:
        /// one from a vocabulary file has no name).</summary>
        internal bool TokenizerGiven;

        /// <summary>Gives the pipeline the tokenizer it cuts truncatable items
        /// with (<c>items.SetTruncatable</c>); null removes it.
        /// The pipeline keeps its own reference: tokenizer may be disposed
        /// right after. A run over a truncatable item without a tokenizer
        /// throws CupelArgumentException for items, naming the item.</summary>
        public void SetTokenizer(Tokenizer tokenizer)
        {
            var self = Tracing.Live(Handle, this);
            var t = tokenizer == null ? null : Native.Arg(tokenizer, "tokenizer");
            bool added = false;
            try
            {
                if (t != null) t.DangerousAddRef(ref added);
                Native.Check(Native.cupel_pipeline_set_tokenizer(self, t == null ? IntPtr.Zero : t.DangerousGetHandle()),
                    TokenizerArgs);
                TokenizerGiven = t != null;
            }
            finally
            {
                if (added) t.DangerousRelease();
            }
        }

        /// <summary>All six stages: the placed item indices; every decision in
        /// report (may be null). A truncatable item the pipeline cannot cut
        /// (no tokenizer, or no content) throws CupelArgumentException for
        /// items, naming the item.</summary>
        public int[] Run(Items items, Budget budget, Report report = null)
        {
            return RunNamed(items, budget, report, RunArgs);
        }

        /// <summary>Run, its errors named by args.</summary>
        internal int[] RunNamed(Items items, Budget budget, Report report, Args args)
        {
            var self = Tracing.Live(Handle, this);
            var it = Native.Arg(items, "items");
            var b = Native.Arg(budget, "budget");
            var r = report == null ? Native.NoReport : Native.Arg(report, "report");
            int count = Native.Len(it);
            var buf = Native.IndexBuffer(count);
            UIntPtr n;
            var sink = self.Trace;
            if (sink == null)
            {
                Native.Check(Native.cupel_pipeline_run(self, it, b, buf, (UIntPtr)count, out n, r), args);
                return Native.Ints(buf, n);
            }
            // Traced: the handler's exception, caught in the callback, is
            // thrown here once the library has returned.
            Status st;
            var scope = Tracing.Enter(self);
            try
            {
                st = Native.cupel_pipeline_run(self, it, b, buf, (UIntPtr)count, out n, r);
            }
            finally
            {
                Tracing.Exit(scope);
            }
            GC.KeepAlive(sink);
            Native.Check(st, args);
            var result = Native.Ints(buf, n);
            scope.Rethrow();
            return result;
        }

        /// <summary>Frees the native pipeline and drops its trace handler
        /// (sessions made from it keep theirs); a second call does nothing.</summary>
        public void Dispose()
        {
            Handle.Dispose();
            Handle.Trace = null;
        }
    }

    // ---- sessions --------------------------------------------------------------

    /// <summary>Which rule a session run took (<see cref="Session.LastAction"/>);
    /// the numbers are the C ABI's (cupel_session_action).</summary>
    public enum SessionAction
    {
        /// <summary>The first run, or the first after a reset (also before any
        /// run): the pipeline's selection, volatile items last.</summary>
        First = 0,
        /// <summary>The previous output kept in its order, new items added at
        /// its end.</summary>
        Append = 1,
        /// <summary>A fresh selection with room to spare (the slack), keeping
        /// what it could of the previous output's prefix.</summary>
        Compact = 2,
    }

    /// <summary>What a cache breakpoint marks (<see cref="Breakpoint.Mark"/>);
    /// the numbers are the C ABI's (cupel_breakpoint_mark).</summary>
    public enum BreakpointMark
    {
        /// <summary>After the leading pinned items (the system prompt, tool
        /// definitions).</summary>
        Pinned = 0,
        /// <summary>After the prefix the last compaction kept (it moves only
        /// when a compaction cuts earlier).</summary>
        Compaction = 1,
        /// <summary>After this run's stable prefix (<see cref="Session.StablePrefix"/>).</summary>
        Stable = 2,
        /// <summary>After the last non-volatile item: the prefix the next turn
        /// reuses when it appends, where a cache write pays off.</summary>
        End = 3,
    }

    /// <summary>Names of session actions and breakpoint marks, as the JSON
    /// report spells them.</summary>
    public static class SessionNames
    {
        /// <summary>"first", "append" or "compact" ("unknown" for another
        /// number).</summary>
        public static string Name(this SessionAction action)
        {
            switch (action)
            {
                case SessionAction.First: return "first";
                case SessionAction.Append: return "append";
                case SessionAction.Compact: return "compact";
            }
            return "unknown";
        }

        /// <summary>"pinned", "compaction", "stable" or "end" ("unknown" for
        /// another number).</summary>
        public static string Name(this BreakpointMark mark)
        {
            switch (mark)
            {
                case BreakpointMark.Pinned: return "pinned";
                case BreakpointMark.Compaction: return "compaction";
                case BreakpointMark.Stable: return "stable";
                case BreakpointMark.End: return "end";
            }
            return "unknown";
        }
    }

    /// <summary>The leading items of a session run's output that are unchanged
    /// since the run before it (<see cref="Session.StablePrefix"/>).</summary>
    public struct StablePrefix : IEquatable<StablePrefix>
    {
        /// <summary>How many leading items of the output.</summary>
        public int Items;
        /// <summary>Their tokens.</summary>
        public long Tokens;

        /// <summary>A prefix of items items and tokens tokens.</summary>
        public StablePrefix(int items, long tokens)
        {
            Items = items;
            Tokens = tokens;
        }

        /// <summary>Whether the two are the same prefix.</summary>
        public bool Equals(StablePrefix other) { return Items == other.Items && Tokens == other.Tokens; }

        /// <summary>Whether obj is the same prefix.</summary>
        public override bool Equals(object obj) { return obj is StablePrefix && Equals((StablePrefix)obj); }

        /// <summary>A hash of both fields.</summary>
        public override int GetHashCode() { return (Items * 397) ^ Tokens.GetHashCode(); }

        /// <summary>"items items (tokens tokens)".</summary>
        public override string ToString() { return Items + " items (" + Tokens + " tokens)"; }
    }

    /// <summary>One cache breakpoint of a session run: after the first Items
    /// items of its output, which add Tokens tokens.</summary>
    public struct Breakpoint : IEquatable<Breakpoint>
    {
        /// <summary>How many leading items of the output it follows (at least 1).</summary>
        public int Items;
        /// <summary>Their tokens.</summary>
        public long Tokens;
        /// <summary>What it marks.</summary>
        public BreakpointMark Mark;

        /// <summary>A breakpoint after items items (tokens tokens) marking mark.</summary>
        public Breakpoint(int items, long tokens, BreakpointMark mark)
        {
            Items = items;
            Tokens = tokens;
            Mark = mark;
        }

        /// <summary>Whether the two are the same breakpoint.</summary>
        public bool Equals(Breakpoint other)
        {
            return Items == other.Items && Tokens == other.Tokens && Mark == other.Mark;
        }

        /// <summary>Whether obj is the same breakpoint.</summary>
        public override bool Equals(object obj) { return obj is Breakpoint && Equals((Breakpoint)obj); }

        /// <summary>A hash of the fields.</summary>
        public override int GetHashCode() { return ((Items * 397) ^ Tokens.GetHashCode()) * 31 + (int)Mark; }

        /// <summary>"mark after items items (tokens tokens)".</summary>
        public override string ToString() { return Mark.Name() + " after " + Items + " items (" + Tokens + " tokens)"; }
    }

    /// <summary>Owns one native cupel_session (freed by cupel_session_free).</summary>
    public sealed class SessionHandle : SafeHandle
    {
        /// <summary>An empty handle, for the marshaller to fill.</summary>
        public SessionHandle() : base(IntPtr.Zero, true) { }
        /// <summary>Whether no native session is held.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        /// <summary>The trace the session's copy of its pipeline calls back
        /// (the pipeline's when the session was made; null: none).</summary>
        internal TraceSink Trace;
        /// <summary>Frees the native session.</summary>
        protected override bool ReleaseHandle() { Native.cupel_session_free(handle); return true; }
    }

    /// <summary>Gives the context for each turn of a conversation, changing the
    /// previous turn's prompt only at its end whenever it can, so that a model
    /// provider's prefix cache keeps serving it (the rules: the C header's
    /// cupel_session_new and docs/sessions.md). The first run is the
    /// pipeline's selection (volatile items last); later runs append new items
    /// after the previous output while everything fits, and otherwise compact
    /// once, with room to spare (<see cref="Slack"/>), keeping the longest
    /// prefix of the previous output that costs little score. Items are told
    /// apart from one run to the next by their key (<see cref="Items.SetKey"/>;
    /// else their kind, tokens and content), and volatile items
    /// (<see cref="Items.SetVolatile"/>) go last. A session keeps its own copy
    /// of the pipeline; it belongs to one thread at a time.</summary>
    public sealed class Session : IDisposable
    {
        internal readonly SessionHandle Handle;

        static readonly Args NewArgs = new Args("pipeline");
        static readonly Args SlackArgs = new Args("fraction=value");
        static readonly Args RunArgs = new Args("items", "budget", "report",
            "cupel_pipeline_set_tokenizer=Pipeline.SetTokenizer@items", "cupel_items_set_content=Items.SetContent@items");

        /// <summary>A session over a copy of pipeline (which may be disposed
        /// right after: the session keeps working), with the default slack,
        /// 0.2.</summary>
        public Session(Pipeline pipeline)
        {
            var p = Native.Arg(pipeline, "pipeline");
            Native.Check(Native.cupel_session_new(p, out Handle), NewArgs);
            // The native copy keeps the pipeline's trace: so does this handle.
            Handle.Trace = p.Trace;
        }

        /// <summary>The share of the effective target a compaction leaves free
        /// for the turns after it: its non-pinned, non-volatile items total at
        /// most floor((1 - Slack) x target). In [0, 1) (0.2 by default); a
        /// value outside it, or NaN, throws CupelArgumentException and the
        /// session is unchanged.</summary>
        public double Slack
        {
            get
            {
                double f;
                Native.Check(Native.cupel_session_slack(Native.Live(Handle, this), out f));
                return f;
            }
            set { Native.Check(Native.cupel_session_set_slack(Tracing.Live(Handle, this), value), SlackArgs); }
        }

        /// <summary>One turn: the context's item indices in prompt order, as
        /// <see cref="Pipeline.Run"/> gives them (report may be null), with
        /// every rule of the pipeline kept (budget, pinned items, groups,
        /// variants and truncation, overflow). The rule it took is
        /// <see cref="LastAction"/>, the prefix unchanged since the last run
        /// <see cref="StablePrefix"/>, where to put cache breakpoints
        /// <see cref="Breakpoints"/>. The report lists the output as included
        /// (in its order) and every other item with the pipeline's reason, or
        /// <see cref="Reason.Deferred"/> where the pipeline takes an item the
        /// session left out; its JSON has a top-level "session" object (action,
        /// stablePrefixItems, stablePrefixTokens, breakpoints). Two items with
        /// the same non-zero key throw CupelArgumentException for items, naming
        /// both indices. A failed run changes nothing: the next run behaves as
        /// if it never happened.</summary>
        public int[] Run(Items items, Budget budget, Report report = null)
        {
            var self = Tracing.Live(Handle, this);
            var it = Native.Arg(items, "items");
            var b = Native.Arg(budget, "budget");
            var r = report == null ? Native.NoReport : Native.Arg(report, "report");
            int count = Native.Len(it);
            var buf = Native.IndexBuffer(count);
            UIntPtr n;
            var sink = self.Trace;
            if (sink == null)
            {
                Native.Check(Native.cupel_session_run(self, it, b, buf, (UIntPtr)count, out n, r), RunArgs);
                return Native.Ints(buf, n);
            }
            Status st;
            var scope = Tracing.Enter(self);
            try
            {
                st = Native.cupel_session_run(self, it, b, buf, (UIntPtr)count, out n, r);
            }
            finally
            {
                Tracing.Exit(scope);
            }
            GC.KeepAlive(sink);
            Native.Check(st, RunArgs);
            var result = Native.Ints(buf, n);
            scope.Rethrow();
            return result;
        }

        /// <summary>The last run's stable prefix: how many leading items of its
        /// output, and their tokens, are identical (by identity and option) to
        /// the leading items of the run before it; where a host puts its cache
        /// breakpoint. 0 items and 0 tokens before any run, after a first run
        /// and after the first run that follows a reset.</summary>
        public StablePrefix StablePrefix
        {
            get
            {
                UIntPtr n;
                long tokens;
                Native.Check(Native.cupel_session_stable_prefix(Native.Live(Handle, this), out n, out tokens));
                return new StablePrefix((int)n, tokens);
            }
        }

        /// <summary>Which rule the last successful run took
        /// (<see cref="SessionAction.First"/> before any run and after a
        /// reset).</summary>
        public SessionAction LastAction
        {
            get
            {
                int a;
                Native.Check(Native.cupel_session_last_action(Native.Live(Handle, this), out a));
                return (SessionAction)a;
            }
        }

        /// <summary>The most breakpoints a run has (providers allow up to four
        /// per request).</summary>
        public const int MaxBreakpoints = 4;

        /// <summary>The last run's cache breakpoints, ascending and distinct, at
        /// most <see cref="MaxBreakpoints"/>: after the leading pinned items
        /// (Pinned), after the prefix the last compaction kept (Compaction),
        /// after the stable prefix (Stable) and after the last non-volatile
        /// item (End); a position at 0 items is left out, and where two fall
        /// together one is given, with the later mark of that list. Empty
        /// before any run.</summary>
        public Breakpoint[] Breakpoints
        {
            get
            {
                var self = Native.Live(Handle, this);
                var buf = new Native.NativeBreakpoint[MaxBreakpoints];
                UIntPtr n;
                var st = Native.cupel_session_breakpoints(self, buf, (UIntPtr)buf.Length, out n);
                if (st == Status.BufferTooSmall && (int)n > buf.Length)
                {
                    // A buffer of four always suffices; should a library ever
                    // need more, it says how many.
                    buf = new Native.NativeBreakpoint[(int)n];
                    st = Native.cupel_session_breakpoints(self, buf, (UIntPtr)buf.Length, out n);
                }
                Native.Check(st);
                var result = new Breakpoint[(int)n];
                for (int i = 0; i < result.Length; i++)
                    result[i] = new Breakpoint((int)buf[i].Items, buf[i].Tokens, (BreakpointMark)buf[i].Mark);
                return result;
            }
        }

        /// <summary>Forgets every run: the next run is a first run (its output
        /// is the pipeline's, its stable prefix 0). The slack stays.</summary>
        public void Reset() { Native.Check(Native.cupel_session_reset(Tracing.Live(Handle, this))); }

        /// <summary>Frees the native session; a second call does nothing.</summary>
        public void Dispose() { Handle.Dispose(); }
    }
}
