// The binding contract (tests/contract/contract.txt) run through the C#
// binding's public API: every row whose `where` names cs. The table's path
// is the environment variable CUPEL_CONTRACT, or tests/contract/contract.txt
// in the first directory above this program that has one.
//
// Prints "contract cs: N passed, M failed" and a "FAILED <id>: why" line per
// failure; exits 1 when a row fails, 2 when the table cannot be run at all
// (its @map line for cs differs from the classes below, a row is malformed).
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Text;
using Cupel;

static class Contract
{
    // ---- the error classes: must equal the table's `@map cs` line ----------

    static readonly string[] Categories = { "null", "type", "integer", "value", "range", "closed" };

    /// <summary>The exception class of each category; null where C# has none
    /// (the table's "-": a static type system refuses those calls).</summary>
    static readonly Dictionary<string, Type> Classes = new Dictionary<string, Type> {
        { "null", typeof(ArgumentNullException) },
        { "type", null },
        { "integer", null },
        { "value", typeof(ArgumentException) },
        { "range", typeof(ArgumentOutOfRangeException) },
        { "closed", typeof(ObjectDisposedException) },
    };

    // ---- the alias table: where C# names an argument otherwise -------------
    // Key "op arg"; every other argument is the table's name in camelCase
    // (max_tokens: maxTokens). A receiver (the handle a method is called on)
    // is named by its type, as ObjectDisposedException names it.

    static readonly Dictionary<string, string> Aliases = new Dictionary<string, string> {
        { "items.push items", "Items" },
        { "items.get items", "Items" },
        { "items.close items", "Items" },
        { "pipeline.run pipeline", "Pipeline" },
        { "stream.push stream", "Stream" },
        { "tokenizer.count tokenizer", "Tokenizer" },
        { "tokenizer.count_many tokenizer", "Tokenizer" },
        { "tokenizer.truncate tokenizer", "Tokenizer" },
        { "items.push_many score", "scores" },
        { "items.push_many kind", "kinds" },
        { "budget.set_output_reserve output_reserve", "tokens" },
        { "slicer.quota kind", "quotas" },
        { "slicer.quota require_percent", "quotas" },
        { "slicer.quota cap_percent", "quotas" },
        { "slicer.count_quota kind", "entries" },
        { "slicer.count_quota require_count", "entries" },
        { "slicer.count_quota cap_count", "entries" },
        { "scorer.kind kind", "weights" },
        { "scorer.kind weight", "weights" },
        { "scorer.composite children", "parts" },
        { "scorer.composite weights", "parts" },
        { "pipeline.set_tokenizer pipeline", "Pipeline" },
        // A run the pipeline cannot cut for is an ArgumentException for its
        // items (the truncatable item it names is theirs): Run has no
        // tokenizer parameter.
        { "pipeline.run_cut tokenizer", "items" },
        { "items.set_key items", "Items" },
        { "items.set_volatile items", "Items" },
        { "session.run session", "Session" },
        { "session.set_slack session", "Session" },
        // Session.Slack is a property: its setter's parameter is value.
        { "session.set_slack fraction", "value" },
        // Duplicate keys are an ArgumentException for the items (both
        // indices named): Run has no key parameter.
        { "session.run_keyed key", "items" },
        // PolicySensitivity.Compare takes one list of (label, pipeline)
        // pairs: too few is an ArgumentException for it.
        { "policy_sensitivity count", "variants" },
    };

    static readonly string[] Sentinels = { "18446744073709551615", "9223372036854775808", "9223372036854775807", "4294967295" };

    // A `closed` row's message (the binding's own first line) holds one of these words, in any case.
    static readonly string[] ClosedWords = { "closed", "disposed", "freed", "moved" };

    sealed class Row
    {
        public string Id, Op, Arg, Value, Expect, Where;
        public int Line;
    }

    /// <summary>A value this language cannot pass for an argument: the row
    /// is wrong for C#, a failure.</summary>
    sealed class Inexpressible : Exception
    {
        public Inexpressible(string why) : base(why) { }
    }

    /// <summary>The fixture of the table's header, built through the API.</summary>
    sealed class Fixture : IDisposable
    {
        public static readonly long[] Tokens = { 100, 200, 50 };
        public static readonly double[] Scores = { 0.9, 0.5, 0.1 };
        public static readonly string[] Kinds = { "Message", "Document", "ToolOutput" };
        public static readonly string[] Contents = { "alpha", "beta", "gamma" };
        public const string Sentence = "Hello, world! This is libcupel counting tokens.";
        public const string Policy = "{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"slicerType\":\"greedy\",\"placerType\":\"chronological\"}";
        public const string BudgetDoc = "{\"maxTokens\":300,\"targetTokens\":250}";

        /// <summary>The table's MESSAGES: the items as messages of the one-call path.</summary>
        public static List<Message> Messages()
        {
            var list = new List<Message>();
            for (int i = 0; i < 3; i++)
                list.Add(new Message(Contents[i], Kinds[i]) { Timestamp = DateTimeOffset.FromUnixTimeMilliseconds(1000L * (i + 1)) });
            return list;
        }

        public readonly Items Items = new Items();
        public readonly Budget Budget = new Budget(300, 250);
        public readonly Slicer Greedy = Slicer.Greedy();
        public readonly Scorer Recency = Scorer.Recency(), Priority = Scorer.Priority(), Kind = Scorer.Kind();
        public readonly Placer Chronological = Placer.Chronological();
        public readonly Pipeline Pipeline;
        /// <summary>A session over Pipeline, made before any op disposes a handle.</summary>
        public readonly Session Session;
        public readonly Cupel.Stream Stream = new Cupel.Stream(100, 0);
        public readonly Tokenizer Tokenizer = new Tokenizer("o200k_base");
        public readonly List<IDisposable> Made = new List<IDisposable>();

        public Fixture()
        {
            Items.PushMany(Tokens, Scores, Kinds);
            for (int i = 0; i < 3; i++)
            {
                Items.SetContent(i, Contents[i]);
                Items.SetTimestamp(i, 1000L * (i + 1));
            }
            Pipeline = new Pipeline(Recency, Greedy, Chronological);
            Session = new Session(Pipeline);
        }

        public T Keep<T>(T made) where T : IDisposable
        {
            Made.Add(made);
            return made;
        }

        public void Dispose()
        {
            foreach (var d in Made) d.Dispose();
            foreach (var d in new IDisposable[] { Tokenizer, Stream, Session, Pipeline, Chronological, Kind, Priority, Recency, Greedy, Budget, Items })
                d.Dispose();
        }
    }

    /// <summary>One row's call: the op's arguments with the row's value in
    /// place of its `arg`, and what the call returned.</summary>
    sealed class Call
    {
        readonly Row row;
        public readonly Fixture F = new Fixture();
        public bool ArgUsed;
        public string Result = "";
        public string CheckFailed;

        public Call(Row row) { this.row = row; }

        bool Mine(string arg)
        {
            if (row.Arg != arg) return false;
            ArgUsed = true;
            return true;
        }

        Inexpressible Cannot(string type) { return new Inexpressible("value " + row.Value + " is no " + type + " in C#"); }

        public long L(string arg, long dflt)
        {
            if (!Mine(arg)) return dflt;
            if (row.Value == "end") return 3;
            long v;
            if (!long.TryParse(row.Value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out v)) throw Cannot("long");
            return v;
        }

        public int I(string arg, int dflt)
        {
            long v = L(arg, dflt);
            if (v < int.MinValue || v > int.MaxValue) throw Cannot("int");
            return (int)v;
        }

        public uint U32(string arg, uint dflt)
        {
            long v = L(arg, dflt);
            if (v < 0 || v > uint.MaxValue) throw Cannot("uint");
            return (uint)v;
        }

        public ulong U64(string arg, ulong dflt)
        {
            if (!Mine(arg)) return dflt;
            ulong v;
            if (!ulong.TryParse(row.Value, NumberStyles.None, CultureInfo.InvariantCulture, out v)) throw Cannot("ulong");
            return v;
        }

        public double D(string arg, double dflt)
        {
            if (!Mine(arg)) return dflt;
            switch (row.Value)
            {
                case "nan": return double.NaN;
                case "inf": return double.PositiveInfinity;
                case "-inf": return double.NegativeInfinity;
            }
            double v;
            if (!double.TryParse(row.Value, NumberStyles.Float, CultureInfo.InvariantCulture, out v)) throw Cannot("double");
            return v;
        }

        public bool B(string arg, bool dflt)
        {
            if (!Mine(arg)) return dflt;
            if (row.Value == "true") return true;
            if (row.Value == "false") return false;
            throw Cannot("bool");
        }

        /// <summary>The table's named JSON texts (VALUES).</summary>
        static readonly Dictionary<string, string> JsonTexts = new Dictionary<string, string> {
            { "policy-null", "null" },
            { "policy-malformed", "{\"scorers\":" },
            { "policy-bad-weight", "{\"scorers\":[{\"type\":\"recency\",\"weight\":-1}]}" },
            { "policy-bad-type", "{\"scorers\":[{\"type\":\"nope\",\"weight\":1}]}" },
            { "budget-bad", "{\"maxTokens\":100,\"targetTokens\":250}" },
            { "budget-missing", "{\"targetTokens\":1}" },
        };

        /// <summary>A string: null, a lone surrogate for bad-utf8 (strings are
        /// UTF-16 here), one of the table's JSON texts, or the quoted text
        /// with \xHH escapes decoded.</summary>
        public string S(string arg, string dflt)
        {
            if (!Mine(arg)) return dflt;
            var v = row.Value;
            if (v == "null") return null;
            if (v == "bad-utf8") return "\uD800";
            string json;
            if (JsonTexts.TryGetValue(v, out json)) return json;
            if (v.Length < 2 || v[0] != '"' || v[v.Length - 1] != '"') throw Cannot("string");
            var sb = new StringBuilder();
            for (int i = 1; i < v.Length - 1; i++)
            {
                if (v[i] == '\\' && i + 3 < v.Length - 1 && v[i + 1] == 'x' && Uri.IsHexDigit(v[i + 2]) && Uri.IsHexDigit(v[i + 3]))
                {
                    sb.Append((char)Convert.ToInt32(v.Substring(i + 2, 2), 16));
                    i += 3;
                }
                else
                {
                    sb.Append(v[i]);
                }
            }
            return sb.ToString();
        }

        /// <summary>A handle: null, or the fixture's (disposed first for `closed`).</summary>
        public T H<T>(string arg, T handle) where T : class, IDisposable
        {
            if (!Mine(arg)) return handle;
            if (row.Value == "null") return null;
            if (row.Value == "closed")
            {
                handle.Dispose();
                return handle;
            }
            throw Cannot(typeof(T).Name);
        }

        /// <summary>keep: head, tail or both_ends (the table's spelling of
        /// Keep.Head, Keep.Tail, Keep.BothEnds), or a number cast to Keep.</summary>
        public Keep K(string arg, Keep dflt)
        {
            if (!Mine(arg)) return dflt;
            switch (row.Value)
            {
                case "head": return Keep.Head;
                case "tail": return Keep.Tail;
                case "both_ends": return Keep.BothEnds;
            }
            int v;
            if (!int.TryParse(row.Value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out v)) throw Cannot("Keep");
            return (Keep)v;
        }

        /// <summary>level: stages, exclusions or full (the table's spelling of
        /// TraceLevel.Stages, Exclusions, Full), or a number cast to TraceLevel.</summary>
        public TraceLevel T(string arg, TraceLevel dflt)
        {
            if (!Mine(arg)) return dflt;
            switch (row.Value)
            {
                case "stages": return TraceLevel.Stages;
                case "exclusions": return TraceLevel.Exclusions;
                case "full": return TraceLevel.Full;
            }
            int v;
            if (!int.TryParse(row.Value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out v)) throw Cannot("TraceLevel");
            return (TraceLevel)v;
        }

        /// <summary>Whether the row passes null for arg (any other value is
        /// not one this runner can pass).</summary>
        public bool IsNull(string arg)
        {
            if (!Mine(arg)) return false;
            if (row.Value == "null") return true;
            throw Cannot(arg);
        }

        /// <summary>How many items pipeline includes on the fixture's items
        /// and budget.</summary>
        public string Included(Pipeline pipeline, Budget budget)
        {
            return pipeline.Run(F.Items, budget).Length.ToString(CultureInfo.InvariantCulture);
        }

        /// <summary>A result list as the table writes it: [a,b,c].</summary>
        public void List<T>(IEnumerable<T> got) { Result = "[" + string.Join(",", got) + "]"; }

        public void Indices(int[] got) { List(got); }

        /// <summary>tokenizer.truncate: the kept text is the text's head and
        /// tail by the returned char offsets.</summary>
        public void Truncated(string text, Truncation t)
        {
            List(new long[] { t.HeadEnd, t.TailStart, t.Tokens });
            if (t.HeadEnd < 0 || t.HeadEnd > t.TailStart || t.TailStart > text.Length)
                CheckFailed = "offsets " + t + " outside the text";
            else if (t.Text != text.Substring(0, t.HeadEnd) + text.Substring(t.TailStart))
                CheckFailed = "the kept text \"" + t.Text + "\" is not the text's head and tail";
        }

        /// <summary>items.push_text: a fourth item with the text's tokens and content.</summary>
        public void PushedText(Items items, string text, long tokens)
        {
            if (items.Count != 4)
            {
                CheckFailed = items.Count + " items, not 4";
                return;
            }
            var item = items[3];
            if (item.Tokens != tokens || item.Content != text)
                CheckFailed = "item 3 reads back " + item.Tokens + " tokens and \"" + item.Content + "\"";
        }

        /// <summary>items.get: item `index` read back equals the fixture's.</summary>
        public void Get(Items items, int index)
        {
            var item = items[index];
            if (index < 0 || index >= 3) return;
            var missed = new List<string>();
            if (item.Tokens != Fixture.Tokens[index]) missed.Add("tokens");
            if (item.Score != Fixture.Scores[index]) missed.Add("score");
            if (item.Kind != Fixture.Kinds[index]) missed.Add("kind");
            if (item.Content != Fixture.Contents[index]) missed.Add("content");
            if (item.Timestamp != 1000L * (index + 1)) missed.Add("timestamp");
            if (item.Index != index) missed.Add("index");
            if (missed.Count > 0) CheckFailed = string.Join(", ", missed) + " read back wrong";
        }

        /// <summary>items.add_variant: item `index` reads back the one variant
        /// added, numbered 1.</summary>
        public void Variants(Items items, int index, int number, Variant want)
        {
            var got = items[index].Variants;
            if (number != 1) CheckFailed = "AddVariant returned " + number + ", not 1";
            else if (got.Count != 1 || !got[0].Equals(want))
                CheckFailed = "item " + index + " reads back [" + string.Join("; ", got) + "], not [" + want + "]";
        }

        /// <summary>items.set_truncatable: item `index` reads back truncatable
        /// with that keep and min_tokens.</summary>
        public void Truncatable(Items items, int index, Truncatable want)
        {
            var got = items[index].Truncatable;
            if (!got.HasValue || !got.Value.Equals(want))
                CheckFailed = "item " + index + " reads back " + (got.HasValue ? got.Value.ToString() : "not truncatable") +
                    ", not " + want;
        }

        /// <summary>items.set_key, items.set_volatile: item `index` reads back
        /// that key and volatile flag.</summary>
        public void Identity(Items items, int index, ulong key, bool isVolatile)
        {
            var item = items[index];
            if (item.Key != key || item.Volatile != isVolatile)
                CheckFailed = "item " + index + " reads back key " + item.Key + ", volatile " + item.Volatile;
        }

        /// <summary>Runs the row's op; false when the op is unknown.</summary>
        public bool Run()
        {
            var f = F;
            switch (row.Op)
            {
                case "items.push":
                    H("items", f.Items).Push(L("tokens", 10), D("score", 0.5), S("kind", "Message"));
                    return true;
                case "items.push_many":
                {
                    var tokens = Enumerable.Repeat(7L, 12).ToArray();
                    var scores = Enumerable.Repeat(0.5, 12).ToArray();
                    var kinds = Enumerable.Repeat("Message", 12).ToArray();
                    tokens[11] = L("tokens", 7);
                    scores[11] = D("score", 0.5);
                    kinds[11] = S("kind", "Message");
                    H("items", f.Items).PushMany(tokens, scores, kinds);
                    return true;
                }
                case "items.set_content":
                    f.Items.SetContent(I("index", 0), S("content", "hello"));
                    return true;
                case "items.set_timestamp":
                    f.Items.SetTimestamp(I("index", 0), L("unix_millis", 5));
                    return true;
                case "items.set_priority":
                    f.Items.SetPriority(I("index", 0), L("priority", 1));
                    return true;
                case "items.set_pinned":
                    f.Items.SetPinned(I("index", 0), B("pinned", true));
                    return true;
                case "items.set_group":
                    f.Items.SetGroup(I("index", 0), U64("group", 7));
                    return true;
                case "items.add_tag":
                    f.Items.AddTag(I("index", 0), S("tag", "t"));
                    return true;
                case "items.set_metadata":
                    f.Items.SetMetadata(I("index", 0), S("key", "k"), S("value", "v"));
                    return true;
                case "items.get":
                    Get(H("items", f.Items), I("index", 1));
                    return true;
                case "items.close":
                    H("items", f.Items).Dispose();
                    return true;
                case "budget.new":
                    f.Keep(new Budget(L("max_tokens", 1000), L("target_tokens", 800)));
                    return true;
                case "budget.set_output_reserve":
                    H("budget", f.Budget).SetOutputReserve(L("output_reserve", 10));
                    return true;
                case "budget.set_safety_margin":
                    H("budget", f.Budget).SetSafetyMargin(D("percent", 5));
                    return true;
                case "budget.reserve":
                    H("budget", f.Budget).Reserve(S("kind", "Message"), L("tokens", 10));
                    return true;
                case "slicer.knapsack":
                    f.Keep(Slicer.Knapsack(L("bucket_size", 100)));
                    return true;
                case "slicer.quota":
                {
                    var inner = H("inner", f.Greedy);
                    var q = new Quota(S("kind", "Message"), D("require_percent", 10), D("cap_percent", 50));
                    f.Keep(Slicer.Quota(inner, new[] { q }));
                    return true;
                }
                case "slicer.count_quota":
                {
                    var inner = H("inner", f.Greedy);
                    var q = new CountQuota(S("kind", "Message"), U32("require_count", 1), U32("cap_count", 2));
                    f.Keep(Slicer.CountQuota(inner, new[] { q }, Scarcity.Degrade));
                    return true;
                }
                case "scorer.kind":
                    f.Keep(Scorer.Kind(new Dictionary<string, double> { { S("kind", "Message"), D("weight", 1) } }));
                    return true;
                case "scorer.composite":
                {
                    var last = H("children", f.Kind);
                    var weight = D("weights", 1);
                    f.Keep(Scorer.Composite(new KeyValuePair<Scorer, double>(f.Recency, 1),
                        new KeyValuePair<Scorer, double>(f.Priority, 1), new KeyValuePair<Scorer, double>(last, weight)));
                    return true;
                }
                case "scorer.scaled":
                    f.Keep(Scorer.Scaled(H("inner", f.Recency)));
                    return true;
                case "scorer.metadata_key":
                    f.Keep(Scorer.MetadataKey(S("key", "k"), S("value", "v"), D("boost", 2)));
                    return true;
                case "placer.place":
                {
                    var placer = H("placer", f.Chronological);
                    var items = H("items", f.Items);
                    var indices = new[] { 0, 1, I("indices", 2) };
                    var scores = new[] { 0.5, 0.5, D("scores", 0.5) };
                    Indices(placer.Place(items, indices, scores));
                    return true;
                }
                case "pipeline.new":
                    f.Keep(new Pipeline(H("scorer", f.Recency), H("slicer", f.Greedy), H("placer", f.Chronological)));
                    return true;
                case "pipeline.run":
                    Indices(H("pipeline", f.Pipeline).Run(H("items", f.Items), H("budget", f.Budget)));
                    return true;
                case "slice":
                    Indices(H("slicer", f.Greedy).Slice(H("items", f.Items), H("budget", f.Budget), L("pinned_tokens", 0)));
                    return true;
                case "marginal_items":
                    Indices(H("slicer", f.Greedy).MarginalItems(H("items", f.Items), H("budget", f.Budget),
                        L("pinned_tokens", 0), L("slack_tokens", 150)));
                    return true;
                case "find_min_budget":
                {
                    var tokens = H("slicer", f.Greedy).FindMinBudget(H("items", f.Items), L("pinned_tokens", 0),
                        I("target_index", 2), L("search_ceiling", 1000));
                    Result = tokens.HasValue ? tokens.Value.ToString(CultureInfo.InvariantCulture) : "none";
                    return true;
                }
                case "stream.push":
                    H("stream", f.Stream).Push(L("tokens", 10), D("score", 0.5));
                    return true;
                case "reason.name":
                    Result = ((Reason)I("code", 0)).Name();
                    return true;
                case "tokenizer.new":
                    f.Keep(new Tokenizer(S("name", "o200k_base")));
                    return true;
                case "tokenizer.count":
                    Result = H("tokenizer", f.Tokenizer).Count(S("text", Fixture.Sentence)).ToString(CultureInfo.InvariantCulture);
                    return true;
                case "tokenizer.count_many":
                    List(H("tokenizer", f.Tokenizer).CountMany(new[] { Fixture.Sentence, S("texts", "hello world") }));
                    return true;
                case "tokenizer.truncate":
                {
                    var text = S("text", Fixture.Sentence);
                    Truncated(text, H("tokenizer", f.Tokenizer).Truncate(text, L("max_tokens", 4), K("keep", Keep.Head)));
                    return true;
                }
                case "items.push_text":
                {
                    var text = S("text", "hello world");
                    H("items", f.Items).PushText(H("tokenizer", f.Tokenizer), text, D("score", 0.5), S("kind", "Message"));
                    PushedText(f.Items, text, 2);
                    return true;
                }
                case "items.add_variant":
                {
                    var items = H("items", f.Items);
                    int index = I("index", 0);
                    var v = new Variant(L("tokens", 5), D("value", 0.5), S("content", "[cleared]"));
                    int number = items.AddVariant(index, v.Tokens, v.Value, v.Content);
                    Variants(f.Items, index, number, v);
                    return true;
                }
                case "items.set_truncatable":
                {
                    var items = H("items", f.Items);
                    int index = I("index", 1);
                    var t = new Truncatable(K("keep", Keep.Head), L("min_tokens", 1));
                    items.SetTruncatable(index, t.Keep, t.MinTokens);
                    Truncatable(f.Items, index, t);
                    return true;
                }
                case "pipeline.set_tokenizer":
                    H("pipeline", f.Pipeline).SetTokenizer(H("tokenizer", f.Tokenizer));
                    return true;
                case "pipeline.run_cut":
                {
                    // Before the run (and before a `closed` value disposes a
                    // handle): item 1 truncatable, keeping its head, at least 1 token.
                    f.Items.SetTruncatable(1, Keep.Head, 1);
                    var pipeline = H("pipeline", f.Pipeline);
                    pipeline.SetTokenizer(H("tokenizer", f.Tokenizer));
                    var report = f.Keep(new Report());
                    pipeline.Run(H("items", f.Items), H("budget", f.Budget), report);
                    Result = report.Included.Length.ToString(CultureInfo.InvariantCulture);
                    return true;
                }
                case "items.set_key":
                {
                    var items = H("items", f.Items);
                    int index = I("index", 0);
                    var key = U64("key", 7);
                    items.SetKey(index, key);
                    Identity(f.Items, index, key, false);
                    return true;
                }
                case "items.set_volatile":
                {
                    var items = H("items", f.Items);
                    int index = I("index", 0);
                    var v = B("is_volatile", true);
                    items.SetVolatile(index, v);
                    Identity(f.Items, index, 0, v);
                    return true;
                }
                case "session.new":
                    f.Keep(new Session(H("pipeline", f.Pipeline)));
                    return true;
                case "session.set_slack":
                {
                    var session = H("session", f.Session);
                    var fraction = D("fraction", 0.3);
                    session.Slack = fraction;
                    if (session.Slack != fraction) CheckFailed = "the slack reads back " + session.Slack;
                    return true;
                }
                case "session.run":
                {
                    // `pipeline` closed: the session's pipeline, disposed
                    // after the session was made and before the run.
                    H("pipeline", f.Pipeline);
                    var placed = H("session", f.Session).Run(H("items", f.Items), H("budget", f.Budget));
                    Result = placed.Length.ToString(CultureInfo.InvariantCulture);
                    return true;
                }
                case "session.run_keyed":
                {
                    // Before the run: the items keyed 1, 2 and `key` (3).
                    f.Items.SetKeys(0, new ulong[] { 1, 2, U64("key", 3) });
                    Result = f.Session.Run(f.Items, f.Budget).Length.ToString(CultureInfo.InvariantCulture);
                    return true;
                }
                case "session.run_twice":
                {
                    // The same items twice: the second run's stable prefix is
                    // the whole output, as [items, tokens].
                    var session = H("session", f.Session);
                    session.Run(H("items", f.Items), H("budget", f.Budget));
                    var placed = session.Run(f.Items, f.Budget);
                    var prefix = session.StablePrefix;
                    List(new long[] { prefix.Items, prefix.Tokens });
                    if (session.LastAction != SessionAction.Append || prefix.Items != placed.Length)
                        CheckFailed = "the second run: " + session.LastAction + ", stable " + prefix + " of " +
                            placed.Length + " items";
                    return true;
                }
                case "pipeline.from_json":
                    Result = Included(f.Keep(Pipeline.FromJson(S("json", Fixture.Policy))), f.Budget);
                    return true;
                case "pipeline.to_json":
                {
                    var text = H("pipeline", f.Pipeline).ToJson();
                    using (var back = Pipeline.FromJson(text))
                    {
                        var again = back.ToJson();
                        if (again != text) CheckFailed = "read back and written again: " + again + ", not " + text;
                    }
                    return true;
                }
                case "budget.from_json":
                    Result = Included(f.Pipeline, f.Keep(Budget.FromJson(S("json", Fixture.BudgetDoc))));
                    return true;
                case "budget.to_json":
                {
                    var text = H("budget", f.Budget).ToJson();
                    using (var back = Budget.FromJson(text))
                    {
                        var again = back.ToJson();
                        if (again != text) CheckFailed = "read back and written again: " + again + ", not " + text;
                    }
                    return true;
                }
                case "pipeline.preset":
                    Result = Included(f.Keep(Pipeline.Preset(S("name", "Chat"))), f.Budget);
                    return true;
                case "policy_sensitivity":
                {
                    // KINDPIPE: scorer.kind's defaults (Message: 1), greedy, chronological.
                    var kindScorer = f.Keep(Scorer.Kind(new Dictionary<string, double> { { "Message", 1 } }));
                    var kindPipe = f.Keep(new Pipeline(kindScorer, f.Greedy, f.Chronological));
                    var variants = new List<KeyValuePair<string, Pipeline>> {
                        new KeyValuePair<string, Pipeline>("a", f.Pipeline),
                        new KeyValuePair<string, Pipeline>("b", kindPipe),
                    };
                    int count = I("count", 2);
                    var result = PolicySensitivity.Compare(variants.Take(count), H("items", f.Items), H("budget", f.Budget));
                    Result = result.Diffs.Count.ToString(CultureInfo.InvariantCulture);
                    return true;
                }
                case "report.analytics":
                {
                    var report = f.Keep(new Report());
                    H("pipeline", f.Pipeline).Run(f.Items, f.Budget, report);
                    var items = H("items", f.Items);
                    int kinds = report.KindDiversity(items);
                    double coverage = report.TimestampCoverage(items);
                    Result = "[" + kinds.ToString(CultureInfo.InvariantCulture) + "," +
                        coverage.ToString(CultureInfo.InvariantCulture) + "]";
                    if (Math.Abs(report.BudgetUtilization - 250.0 / 300) > 1e-9)
                        CheckFailed = "budget utilization " + report.BudgetUtilization + ", not 250/300";
                    return true;
                }
                case "pipeline.set_trace":
                {
                    int events = 0;
                    var pipeline = H("pipeline", f.Pipeline);
                    var level = T("level", TraceLevel.Stages);
                    Action<TraceEvent> counter = e => events++;
                    pipeline.SetTrace(level, IsNull("callback") ? null : counter);
                    f.Pipeline.Run(f.Items, f.Budget);
                    Result = events.ToString(CultureInfo.InvariantCulture);
                    return true;
                }
                case "select":
                {
                    var messages = IsNull("messages") ? null : Fixture.Messages();
                    Result = Context.Select(messages, L("max_tokens", 2), S("policy", "Chat")).Length
                        .ToString(CultureInfo.InvariantCulture);
                    return true;
                }
            }
            return false;
        }
    }

    static string Camel(string snake)
    {
        var parts = snake.Split('_');
        return parts[0] + string.Concat(parts.Skip(1).Select(p => p.Length == 0 ? "" : char.ToUpperInvariant(p[0]) + p.Substring(1)));
    }

    static bool HasWord(string text, string word)
    {
        for (int at = text.IndexOf(word, StringComparison.Ordinal); at >= 0; at = text.IndexOf(word, at + 1, StringComparison.Ordinal))
        {
            bool before = at > 0 && (char.IsLetterOrDigit(text[at - 1]) || text[at - 1] == '_');
            int end = at + word.Length;
            bool after = end < text.Length && (char.IsLetterOrDigit(text[end]) || text[end] == '_');
            if (!before && !after) return true;
        }
        return false;
    }

    /// <summary>The index or element position an error message must give,
    /// or null (the table's rule; C# counts from 0 like the table).</summary>
    static string PositionOf(Row r)
    {
        if (r.Value == "end") return "3";
        if (r.Op == "items.push_many") return "11";
        if (r.Op == "tokenizer.count_many" && r.Arg == "texts") return "1";
        if ((r.Op == "scorer.composite" && (r.Arg == "children" || r.Arg == "weights")) ||
            (r.Op == "placer.place" && (r.Arg == "indices" || r.Arg == "scores")))
            return "2";
        if (r.Value.Length > 1 && r.Value[0] == '-' && char.IsDigit(r.Value[1]) && (r.Arg.Contains("index") || r.Arg == "indices"))
            return r.Value;
        return null;
    }

    static bool NamesCs(string where)
    {
        if (where == "all" || where == "handles") return true;
        if (where == "dyn") return false;
        return where.Split(',').Contains("cs");
    }

    /// <summary>Runs one row; null when it passes, else why not.</summary>
    static string RunRow(Row r)
    {
        Call call;
        try
        {
            call = new Call(r);
        }
        catch (Exception e)
        {
            return "fixture: " + e.Message;
        }
        try
        {
            Exception thrown = null;
            bool known;
            try
            {
                known = call.Run();
            }
            catch (Inexpressible e)
            {
                return e.Message;
            }
            catch (Exception e)
            {
                thrown = e;
                known = true;
            }
            if (!known) return "unknown op " + r.Op;
            if (!call.ArgUsed && r.Arg != "-") return "op " + r.Op + " takes no argument " + r.Arg;

            if (r.Expect == "ok" || r.Expect.StartsWith("ok=", StringComparison.Ordinal))
            {
                if (thrown != null) return "expected ok, got " + thrown.GetType().Name + ": " + thrown.Message;
                if (call.CheckFailed != null) return "ok, but " + call.CheckFailed;
                if (r.Expect.Length > 2 && call.Result != r.Expect.Substring(3))
                    return "expected " + r.Expect.Substring(3) + ", got " + call.Result;
                return null;
            }

            Type want;
            if (!Classes.TryGetValue(r.Expect, out want)) return "unknown expect " + r.Expect;
            if (want == null) return "expect " + r.Expect + " has no C# error class (@map: -)";
            if (thrown == null) return "expected " + want.Name + ", got success (" + call.Result + ")";
            if (!want.IsInstanceOfType(thrown)) return "expected " + want.Name + ", got " + thrown.GetType().Name + ": " + thrown.Message;
            // A subclass of the wanted class that is another category's class
            // is that category (ArgumentNullException is an ArgumentException).
            foreach (var other in Classes.Values)
                if (other != null && other != want && want.IsAssignableFrom(other) && other.IsInstanceOfType(thrown))
                    return "expected " + want.Name + ", got " + thrown.GetType().Name + ": " + thrown.Message;

            string key = r.Op + " " + r.Arg, name;
            if (!Aliases.TryGetValue(key, out name)) name = Camel(r.Arg);
            var argument = thrown as ArgumentException;
            var disposed = thrown as ObjectDisposedException;
            string named = argument != null ? argument.ParamName : disposed != null ? disposed.ObjectName : null;
            if (named != name) return thrown.GetType().Name + " names " + (named ?? "no argument") + ", not " + name;
            // The binding's own text (the first line; .NET appends the
            // parameter name on the next) names the argument.
            var message = thrown.Message;
            var own = message.Split('\n')[0];
            if (!HasWord(own, name)) return "message \"" + own + "\" does not name " + name;
            var pos = PositionOf(r);
            if (pos != null && !HasWord(own, pos)) return "message \"" + own + "\" does not give position " + pos;
            foreach (var s in Sentinels)
                if (message.Contains(s) && !r.Value.Contains(s)) return "message \"" + message + "\" shows the sentinel " + s;
            if (r.Expect == "closed" && !ClosedWords.Any(w => HasWord(own.ToLowerInvariant(), w)))
                return "message \"" + own + "\" does not say the handle was closed (" + string.Join("/", ClosedWords) + ")";
            // Nothing changed (a disposed list cannot be counted).
            if (!(r.Arg == "items" && r.Value == "closed"))
            {
                int n = call.F.Items.Count;
                if (n != 3) return "the items changed: " + n + " items";
            }
            return null;
        }
        finally
        {
            call.F.Dispose();
        }
    }

    static string TablePath()
    {
        var env = Environment.GetEnvironmentVariable("CUPEL_CONTRACT");
        if (!string.IsNullOrEmpty(env)) return env;
        for (var dir = new System.IO.DirectoryInfo(AppDomain.CurrentDomain.BaseDirectory); dir != null; dir = dir.Parent)
        {
            var path = System.IO.Path.Combine(dir.FullName, "tests", "contract", "contract.txt");
            if (System.IO.File.Exists(path)) return path;
        }
        return null;
    }

    static int Main(string[] args)
    {
        var path = args.Length > 0 ? args[0] : TablePath();
        if (path == null)
        {
            Console.Error.WriteLine("contract cs: no table: set CUPEL_CONTRACT (no tests/contract/contract.txt above " +
                AppDomain.CurrentDomain.BaseDirectory + ")");
            return 2;
        }
        var lines = System.IO.File.ReadAllLines(path);
        bool mapped = false;
        var rows = new List<Row>();
        for (int i = 0; i < lines.Length; i++)
        {
            var line = lines[i].Trim();
            var f = line.Split(new[] { ' ', '\t' }, StringSplitOptions.RemoveEmptyEntries);
            if (line.StartsWith("@map", StringComparison.Ordinal))
            {
                if (f.Length != 2 + Categories.Length)
                {
                    Console.Error.WriteLine(path + ":" + (i + 1) + ": an @map line of " + f.Length + " fields");
                    return 2;
                }
                if (f[1] != "cs") continue;
                mapped = true;
                for (int k = 0; k < Categories.Length; k++)
                {
                    var mine = Classes[Categories[k]];
                    var mineName = mine == null ? "-" : mine.Name;
                    if (f[2 + k] != mineName)
                    {
                        Console.Error.WriteLine(path + ":" + (i + 1) + ": @map cs says " + Categories[k] + " is " + f[2 + k] +
                            "; this runner checks " + mineName);
                        return 2;
                    }
                }
                continue;
            }
            if (line.Length == 0 || line[0] == '#') continue;
            if (f.Length != 6)
            {
                Console.Error.WriteLine(path + ":" + (i + 1) + ": not a row of six fields: " + line);
                return 2;
            }
            rows.Add(new Row { Id = f[0], Op = f[1], Arg = f[2], Value = f[3], Expect = f[4], Where = f[5], Line = i + 1 });
        }
        if (!mapped)
        {
            Console.Error.WriteLine(path + ": no @map line for cs");
            return 2;
        }
        int passed = 0, failed = 0;
        var failures = new StringBuilder();
        foreach (var r in rows.Where(r => NamesCs(r.Where)))
        {
            string why;
            try
            {
                why = RunRow(r);
            }
            catch (Exception e)
            {
                why = "the runner failed: " + e;
            }
            if (why == null)
            {
                passed++;
            }
            else
            {
                failed++;
                failures.Append("FAILED ").Append(r.Id).Append(": ").Append(why.Replace("\n", " | ")).Append('\n');
            }
        }
        Console.Write(failures.ToString());
        Console.WriteLine("contract cs: " + passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
