import { load, TraceLevel } from "libcupel";

const cupel = await load();
const pipeline = cupel.preset("Chat");
pipeline.setTrace(TraceLevel.Exclusions, (e) => {
  // Spans (the stages, the pipeline last) and events; never content.
  if (e.kind === "stage") console.log(`${e.name}: ${e.itemCountIn} in, ${e.itemCountOut} out`);
  else if (e.kind === "exclusion") console.log(`  excluded #${e.item} (${e.itemKind}, ${e.tokens} tokens): ${e.reasonName}`);
  else console.log(`${e.name} (${e.verbosity}, max ${e.maxTokens} tokens): ${e.itemCountOut} of ${e.itemCountIn} included`);
  // e.startUnixNanos and e.durationNanos (BigInts): the run's, timed by the host.
});
const items = cupel.items([
  { tokens: 100, kind: "Message", content: "alpha", timestamp: 1 },
  { tokens: 200, kind: "Document", content: "beta", timestamp: 2 },
  { tokens: 50, kind: "Message", content: "alpha", timestamp: 3 },
]);
const budget = cupel.budget({ maxTokens: 300, targetTokens: 250 });
pipeline.run(items, budget);
pipeline.clearTrace(); // or dispose(): the pipeline lets the callback go
for (const h of [pipeline, items, budget]) h.dispose();
