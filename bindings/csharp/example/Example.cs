// An agent's conversation cut to fit a token budget, in one call: the
// messages to send, in prompt order, tool calls kept with their results.
using System;
using System.Collections.Generic;
using Cupel;

static class Example
{
    static void Main()
    {
        var conversation = new List<Message> {
            new Message("You are an on-call assistant. Answer briefly.", "SystemPrompt") { Pinned = true },
            new Message("Why does the login service return 500 since this morning?"),
            new Message("grep -rn refresh_token src/", "ToolCall") { ToolCallId = "call_1" },
            new Message("src/auth.rs:88: let token = cache.get(user)?; // stale after a key rotation", "ToolOutput")
                { ToolCallId = "call_1" },
            new Message("kubectl logs auth-7f9; kubectl get events", "ToolCall") { ToolCallIds = new[] { "call_2", "call_3" } },
            new Message("auth-7f9: token signature invalid (kid=2024-06)", "ToolOutput") { ToolCallId = "call_2" },
            new Message("events: secret auth-keys updated at 09:13", "ToolOutput") { ToolCallId = "call_3" },
            new Message("The keys rotated at 09:13 and the token cache was not flushed: flush it."),
        };

        // A preset policy by name and a budget of 75 tokens (o200k_base counts).
        foreach (Message m in Context.Select(conversation, 75, "Chat"))
            Console.WriteLine(m.Kind.PadRight(12) + " " + m.Text);

        // A policy document works the same (a settings file's text), and so
        // does a Pipeline or a Budget object.
        string policy = "{ \"scorers\": [ { \"type\": \"kind\", \"weight\": 1 } ], \"placerType\": \"uShaped\" }";
        Console.WriteLine(Context.Select(conversation, 75, policy).Length + " messages under the kind policy");

        // Mistakes name the message.
        try
        {
            Context.Select(new[] { new Message("hello"), new Message("") }, 100);
        }
        catch (ArgumentException e)
        {
            Console.WriteLine(e.Message);
        }
    }
}
