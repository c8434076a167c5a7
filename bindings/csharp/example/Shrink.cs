// Items that shrink instead of vanish: a tool output goes in as its
// placeholder, a long document cut to the tokens left.
using System;
using System.Text;
using Cupel;

static class Shrink
{
    static void Main()
    {
        var doc = new StringBuilder();
        for (int i = 0; i < 200; i++) doc.Append("Line " + i + ": the quick brown fox jumps over the lazy dog.\n");

        using (var tokenizer = new Tokenizer(Tokenizer.O200kBase))
        using (var items = new Items())
        using (var budget = new Budget(1000, 1000))
        using (var greedy = Slicer.Greedy())
        using (var pipeline = new Pipeline(null, greedy, null))
        using (var report = new Report())
        {
            items.Push(40, 0.9, "Message");
            items.SetContent(0, "What failed in the last build?");
            // 9000 tokens never fit; its placeholder (variant 1) keeps a tenth
            // of its score in 12 tokens.
            items.Push(9000, 0.8, "ToolOutput");
            items.SetContent(1, "(the build log)");
            items.AddVariant(1, 12, 0.1, "[output cleared: 9,000 tokens]");
            // The document: cut to what is left, keeping its head (50 tokens at least).
            items.PushText(tokenizer, doc.ToString(), 0.6, "Document");
            items.SetTruncatable(2, Keep.Head, 50);

            try
            {
                pipeline.Run(items, budget);
            }
            catch (ArgumentException e)
            {
                Console.WriteLine("without a tokenizer: " + e.Message.Split('\n')[0]);
            }

            pipeline.SetTokenizer(tokenizer);
            pipeline.Run(items, budget, report);
            foreach (Decision d in report.Included)
            {
                string text = d.Text(items); // what to send: the variant's, or the content cut
                Console.WriteLine("item " + d.Index + " " + d.Reason.Name().PadRight(9) + " variant " + d.Variant + ", " +
                    d.AddedTokens.ToString().PadLeft(3) + " tokens, cut bytes [" + d.HeadEndByte + ", " + d.TailStartByte +
                    "): " + text.Length + " chars \"" + text.Substring(0, Math.Min(36, text.Length)) + "\"");
            }
            Console.WriteLine(report.SelectedTokens + " tokens selected");
        }
    }
}
