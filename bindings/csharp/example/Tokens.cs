// Counts, cuts and pushes text with the built-in o200k_base vocabulary.
using System;
using Cupel;

static class Tokens
{
    static void Main()
    {
        using (var tokenizer = new Tokenizer(Tokenizer.O200kBase))
        using (var items = new Items())
        using (var budget = new Budget(20, 20))
        using (var greedy = Slicer.Greedy())
        {
            string sentence = "Hello, world! This is libcupel counting tokens.";
            Console.WriteLine(tokenizer.Count(sentence) + " tokens");
            long[] counts = tokenizer.CountMany(new[] { "hello world", "\u65E5\u672C\u8A9E", "\U0001F44B\U0001F30D" });
            Console.WriteLine("[" + string.Join(", ", counts) + "]");

            // Keep 5 tokens: the beginning and the end; the middle goes.
            Truncation cut = tokenizer.Truncate(sentence, 5, Keep.BothEnds);
            Console.WriteLine(cut.Tokens + " tokens: \"" + cut.Text + "\"");
            Console.WriteLine(sentence.Substring(0, cut.HeadEnd) + " [...]" + sentence.Substring(cut.TailStart));

            // Offsets are string indices (UTF-16 code units): each emoji is
            // two chars (and four bytes of UTF-8).
            string wave = "\U0001F44B\U0001F30D and more";
            Truncation head = tokenizer.Truncate(wave, 4, Keep.Head);
            Console.WriteLine(head.Tokens + " tokens: chars [0, " + head.HeadEnd + ") of " + wave.Length
                + (head.Text == "\U0001F44B\U0001F30D" ? ", the two emoji" : ", not the two emoji"));

            // Items from text: the count is the item's tokens, the text its content.
            items.PushText(tokenizer, sentence, 0.9, "Document");
            items.PushTexts(tokenizer, new[] { "a short message", "another, somewhat longer chat message here" },
                new[] { 0.5, 0.7 });
            for (int i = 0; i < items.Count; i++)
                Console.WriteLine("item " + i + ": " + items[i].Tokens + " tokens, " + items[i].Kind);
            Console.WriteLine("greedy chose [" + string.Join(" ", greedy.Slice(items, budget)) + "] within 20 tokens");
        }
    }
}
