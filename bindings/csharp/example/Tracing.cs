// Tracing a pipeline's runs: one event per stage span, exclusion and
// included item, the pipeline's span last (start and duration on each, to
// make OpenTelemetry spans from).
using System;
using Cupel;

static class TracingExample
{
    static void Main()
    {
        using (var items = new Items())
        using (var budget = new Budget(300, 250))
        using (var pipeline = Pipeline.Preset("Chat"))
        {
            items.PushMany(new long[] { 100, 200, 50 }, new[] { 1.0, 1.0, 1.0 },
                new[] { "Message", "Document", "ToolOutput" });
            items.SetContents(0, new[] { "alpha", "beta", "gamma" });
            items.SetTimestamps(0, new long[] { 1000, 2000, 3000 });

            pipeline.SetTrace(TraceLevel.Full, e =>
            {
                if (e.Kind == TraceKind.Exclusion)
                    Console.WriteLine("  " + e.Name + ": item " + e.Item + " (" + e.ItemKind + ", " + e.Tokens +
                        " tokens) " + e.ReasonName);
                else if (e.Kind == TraceKind.Included)
                    Console.WriteLine("  " + e.Name + ": item " + e.Item + " (" + e.ItemKind + ")");
                else
                    Console.WriteLine(e.Name + ": " + e.ItemCountIn + " in, " + e.ItemCountOut + " out");
            });
            Console.WriteLine("placed [" + string.Join(" ", pipeline.Run(items, budget)) + "]");

            // A handler's exception never crosses the library: the run throws
            // it once the library has returned.
            pipeline.SetTrace(TraceLevel.Stages, e => { throw new TimeoutException("exporter down"); });
            try
            {
                pipeline.Run(items, budget);
            }
            catch (TimeoutException e)
            {
                Console.WriteLine("the run threw the handler's " + e.GetType().Name + ": " + e.Message);
            }
            pipeline.SetTrace(TraceLevel.Stages, null); // off
        }
    }
}
