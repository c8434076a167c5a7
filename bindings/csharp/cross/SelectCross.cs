// The one-call path's cross-binding driver (tests/select_agreement.rs) for
// the C# binding: reads the cases' JSON file, calls Context.Select on each
// and prints "case K: i j ..." (the kept messages' indices, in prompt
// order) or "case K: error" (the message on stderr).
//
//   bash bindings/csharp/test.sh --select cases.json
//
// A case: max_tokens, messages (key as decimal text), and optionally policy
// and tokenizer. An absent policy is left out on even cases and passed as
// null on odd ones.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text;
using Cupel;

static class SelectCross
{
    // A JSON reader for the cases' file: objects (Dictionary), arrays
    // (List), strings, numbers (as their text: Number), true, false, null.
    sealed class Number
    {
        public readonly string Text;
        public Number(string text) { Text = text; }
    }

    sealed class Reader
    {
        readonly string s;
        int pos;
        public Reader(string text) { s = text; }

        void Blank() { while (pos < s.Length && " \t\r\n".IndexOf(s[pos]) >= 0) pos++; }

        Exception Fail(string what) { return new FormatException("JSON: " + what + " at " + pos); }

        string Str()
        {
            pos++; // the opening quote
            var sb = new StringBuilder();
            while (true)
            {
                char c = s[pos++];
                if (c == '"') return sb.ToString();
                if (c != '\\') { sb.Append(c); continue; }
                char e = s[pos++];
                switch (e)
                {
                    case '"': sb.Append('"'); break;
                    case '\\': sb.Append('\\'); break;
                    case '/': sb.Append('/'); break;
                    case 'b': sb.Append('\b'); break;
                    case 'f': sb.Append('\f'); break;
                    case 'n': sb.Append('\n'); break;
                    case 'r': sb.Append('\r'); break;
                    case 't': sb.Append('\t'); break;
                    case 'u':
                        sb.Append((char)int.Parse(s.Substring(pos, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                        pos += 4;
                        break;
                    default: throw Fail("a bad escape");
                }
            }
        }

        public object Value()
        {
            Blank();
            char c = s[pos];
            if (c == '{')
            {
                pos++;
                var o = new Dictionary<string, object>();
                Blank();
                if (s[pos] == '}') { pos++; return o; }
                while (true)
                {
                    Blank();
                    var k = Str();
                    Blank();
                    if (s[pos++] != ':') throw Fail("no colon");
                    o[k] = Value();
                    Blank();
                    c = s[pos++];
                    if (c == '}') return o;
                    if (c != ',') throw Fail("no comma");
                }
            }
            if (c == '[')
            {
                pos++;
                var a = new List<object>();
                Blank();
                if (s[pos] == ']') { pos++; return a; }
                while (true)
                {
                    a.Add(Value());
                    Blank();
                    c = s[pos++];
                    if (c == ']') return a;
                    if (c != ',') throw Fail("no comma");
                }
            }
            if (c == '"') return Str();
            if (string.CompareOrdinal(s, pos, "true", 0, 4) == 0) { pos += 4; return true; }
            if (string.CompareOrdinal(s, pos, "false", 0, 5) == 0) { pos += 5; return false; }
            if (string.CompareOrdinal(s, pos, "null", 0, 4) == 0) { pos += 4; return null; }
            int start = pos;
            while (pos < s.Length && "+-.eE0123456789".IndexOf(s[pos]) >= 0) pos++;
            if (pos == start) throw Fail("an unexpected character");
            return new Number(s.Substring(start, pos - start));
        }
    }

    static object Get(Dictionary<string, object> o, string key)
    {
        object v;
        return o.TryGetValue(key, out v) ? v : null;
    }

    static long Long(object v) { return long.Parse(((Number)v).Text, CultureInfo.InvariantCulture); }
    static double Double(object v) { return double.Parse(((Number)v).Text, NumberStyles.Float, CultureInfo.InvariantCulture); }

    static Message MessageOf(Dictionary<string, object> m)
    {
        var kind = (string)Get(m, "kind");
        var msg = new Message((string)m["text"], kind);
        var pinned = Get(m, "pinned");
        if (pinned != null) msg.Pinned = (bool)pinned;
        msg.Group = (string)Get(m, "group");
        msg.ToolCallId = (string)Get(m, "tool_call_id");
        var ids = (List<object>)Get(m, "tool_call_ids");
        if (ids != null) msg.ToolCallIds = ids.ConvertAll(x => (string)x);
        var key = (string)Get(m, "key");
        if (key != null) msg.Key = ulong.Parse(key, CultureInfo.InvariantCulture);
        var ts = Get(m, "timestamp");
        if (ts != null) msg.Timestamp = DateTimeOffset.FromUnixTimeMilliseconds(Long(ts));
        var priority = Get(m, "priority");
        if (priority != null) msg.Priority = Long(priority);
        var relevance = Get(m, "relevance");
        if (relevance != null) msg.Relevance = Double(relevance);
        var score = Get(m, "score");
        if (score != null) msg.Score = Double(score);
        return msg;
    }

    static int Main(string[] args)
    {
        var root = (Dictionary<string, object>)new Reader(File.ReadAllText(args[0], Encoding.UTF8)).Value();
        var cases = (List<object>)root["cases"];
        for (int k = 0; k < cases.Count; k++)
        {
            var c = (Dictionary<string, object>)cases[k];
            var messages = ((List<object>)c["messages"]).ConvertAll(m => MessageOf((Dictionary<string, object>)m));
            long max = Long(c["max_tokens"]);
            var policy = (string)Get(c, "policy");
            var tokenizer = (string)Get(c, "tokenizer");
            var indices = new List<int>();
            for (int i = 0; i < messages.Count; i++) indices.Add(i);
            Func<int, Message> describe = i => messages[i];
            int[] kept;
            try
            {
                if (policy == null && k % 2 == 0)
                    kept = tokenizer == null
                        ? Context.Select(indices, describe, max)
                        : Context.Select(indices, describe, max, tokenizer: tokenizer);
                else
                    kept = Context.Select(indices, describe, max, policy, tokenizer);
            }
            catch (Exception e) when (e is ICupelError)
            {
                Console.WriteLine("case " + k + ": error");
                Console.Error.WriteLine("case " + k + ": " + e.Message.Split('\n')[0]);
                continue;
            }
            var line = new StringBuilder("case " + k + ":");
            foreach (var i in kept) line.Append(' ').Append(i);
            Console.WriteLine(line.ToString());
        }
        return 0;
    }
}
