import { load } from "libcupel";

const cupel = await load();
const pipeline = cupel.pipelineFromJson({
  scorers: [{ type: "recency", weight: 2 }, { type: "kind", weight: 1 }],
  quotas: [{ kind: "Message", minPercent: 10 }],
});
const items = cupel.items([
  { tokens: 300, kind: "Document", content: "spec, part 1", timestamp: 1 },
  { tokens: 300, kind: "Document", content: "spec, part 2", timestamp: 2 },
  { tokens: 200, kind: "message", content: "user: summarise it" }, // no timestamp
  { tokens: 100, kind: "Message", content: "user: briefly", timestamp: 4 }, // kinds compare case-insensitively
]);
const budget = cupel.budget({ maxTokens: 1000, targetTokens: 800 });
const { report } = pipeline.run(items, budget, { report: true });
const { budgetUtilization, kindDiversity, timestampCoverage, quotas } = report.analytics;
console.log(`${report.selectedTokens} of ${report.effectiveMaxTokens} tokens: utilization ${budgetUtilization}`);
console.log(`${kindDiversity} kinds, ${(timestampCoverage * 100).toFixed(1)}% of the included items stamped`);
// One row per quota: what the kind took (percent of the target, or items) and that over its cap.
for (const q of quotas) console.log(`quota ${q.kind} (${q.mode}): require ${q.require}, cap ${q.cap}, took ${q.actual}, utilization ${q.utilization}`);
for (const h of [pipeline, items, budget]) h.dispose();
