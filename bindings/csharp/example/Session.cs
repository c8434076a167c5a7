// Three turns of a conversation through a session: each turn's prompt
// starts with the previous one's, so a provider's prompt cache keeps
// serving it, until the history outgrows the budget and is compacted.
using System;
using System.Collections.Generic;
using Cupel;

static class SessionExample
{
    // One message of the conversation: its key names it from turn to turn.
    sealed class Message
    {
        public ulong Key;
        public long Tokens, Minute;
        public double Score;
        public string Kind, Text;
        public bool Pinned;
    }

    static void Main()
    {
        var history = new List<Message> {
            new Message { Key = 1, Tokens = 200, Score = 1, Kind = "SystemPrompt", Text = "You are a build assistant.",
                Pinned = true, Minute = 0 },
            new Message { Key = 2, Tokens = 150, Score = 0.6, Kind = "Message", Text = "user: why does the build fail?",
                Minute = 1 },
            new Message { Key = 3, Tokens = 250, Score = 0.5, Kind = "Message",
                Text = "assistant: the linker cannot find -lcupel.", Minute = 2 },
        };
        var turns = new[] {
            new Message[0],
            new[] { new Message { Key = 4, Tokens = 100, Score = 0.7, Kind = "Message", Text = "user: where does it look?",
                Minute = 3 } },
            new[] { new Message { Key = 5, Tokens = 300, Score = 0.8, Kind = "Message",
                Text = "assistant: in target/release; build it first.", Minute = 4 } },
        };

        using (var greedy = Slicer.Greedy())
        using (var chronological = Placer.Chronological())
        using (var budget = new Budget(1000, 1000))
        using (var items = new Items())
        {
            Session session;
            using (var pipeline = new Pipeline(null, greedy, chronological))
                session = new Session(pipeline); // its own copy of the pipeline
            using (session)
            {
                for (int turn = 0; turn < turns.Length; turn++)
                {
                    history.AddRange(turns[turn]);
                    items.Clear();
                    foreach (var m in history)
                    {
                        int i = items.Count;
                        items.Push(m.Tokens, m.Score, m.Kind);
                        items.SetContent(i, m.Text);
                        items.SetTimestamp(i, m.Minute * 60000);
                        items.SetPinned(i, m.Pinned);
                        items.SetKey(i, m.Key);
                    }
                    // This turn's retrieved document changes every turn:
                    // volatile, so the session places it last, after the
                    // cached prefix.
                    int doc = items.Count;
                    items.Push(100, 0.9, "Document");
                    items.SetContent(doc, "build log, turn " + (turn + 1));
                    items.SetVolatile(doc, true);

                    var order = session.Run(items, budget);
                    var prefix = session.StablePrefix;
                    Console.WriteLine("turn " + (turn + 1) + ": " + session.LastAction.Name().PadRight(7) + " [" +
                        string.Join(" ", order) + "], stable prefix " + prefix.Items + " items (" + prefix.Tokens +
                        " tokens)");
                }
                foreach (var bp in session.Breakpoints)
                    Console.WriteLine("cache breakpoint " + bp.Mark.Name().PadRight(6) + " after " + bp.Items +
                        " items (" + bp.Tokens + " tokens)");
            }
        }
    }
}
