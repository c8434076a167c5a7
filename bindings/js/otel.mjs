import { load, TraceLevel } from "libcupel";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

// Your tracer provider (here one that keeps the spans in memory; yours exports them).
const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const cupel = await load();
// @opentelemetry/api is imported now, the first time it is needed (tracerProvider: default the global one).
const pipeline = await cupel.otel.instrument(cupel.preset("Chat"), { level: TraceLevel.Exclusions, tracerProvider });
const messages = [{ text: "an old note" }, { text: "a question", pinned: true }, { text: "a long document ".repeat(50) }];
cupel.select(messages, { maxTokens: 60, policy: pipeline }); // or pipeline.run(items, budget)

for (const span of exporter.getFinishedSpans()) {
  console.log(span.name, JSON.stringify(span.attributes));
  for (const event of span.events) console.log(`  ${event.name} ${JSON.stringify(event.attributes)}`);
}
pipeline.dispose();
