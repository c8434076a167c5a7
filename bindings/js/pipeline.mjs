import { load, Overflow } from "libcupel";

const cupel = await load(); // Node: the package's cupel.wasm; a browser: load(await fetch(wasmUrl))
const minute = 60_000;
const now = Date.UTC(2026, 10, 23, 8, 0);
const items = cupel.items([
  { tokens: 120, kind: "SystemPrompt", content: "system: coding assistant", pinned: true, timestamp: now - 600 * minute },
  { tokens: 40, kind: "Message", content: "user: why does login fail?", timestamp: now - 9 * minute },
  // A tool call and its result: one group, never split.
  { tokens: 25, kind: "ToolCall", content: "call: grep refresh_token", timestamp: now - 8 * minute, group: 1 },
  { tokens: 310, kind: "ToolOutput", content: "src/auth/refresh.rs:42 ...", timestamp: now - 8 * minute, group: 1 },
  { tokens: 20, kind: "ToolCall", content: "call: kubectl logs auth", timestamp: now - 5 * minute, group: 2 },
  { tokens: 450, kind: "ToolOutput", content: "auth-7f9: token expired ...", timestamp: now - 5 * minute, group: 2 },
  { tokens: 90, kind: "Memory", content: "project uses Redis for sessions", timestamp: now - 3 * 1440 * minute },
  { tokens: 90, kind: "Memory", content: "project uses Redis for sessions", timestamp: now - 2 * 1440 * minute },
  { tokens: 200, kind: "Document", content: "docs/auth/oauth.md chunk 2" },
]);
const scorer = cupel.scorers.composite([
  [cupel.scorers.recency(), 2],
  [cupel.scorers.kind(), 1],
]);
const pipeline = cupel.pipeline({ scorer, slicer: cupel.greedy(), placer: cupel.chronological(), overflow: Overflow.Throw });
const budget = cupel.budget({ maxTokens: 800, targetTokens: 600 });
const { placed, report } = pipeline.run(items, budget, { report: true });

console.log(`${placed.length} of ${items.length} items, ${report.selectedTokens} tokens, oldest first:`);
for (const d of report.included) {
  const item = items.get(d.index); // the item as the library holds it
  console.log(`  #${d.index} ${d.reason.padEnd(7)} ${String(d.itemTokens).padStart(4)}  ${item.kind}: ${item.content}`);
}
for (const d of report.excluded) {
  const why = d.group ? ` (group ${d.group}: ${d.groupTokens} tokens)` : d.relatedIndex !== null ? ` (same as #${d.relatedIndex})` : "";
  console.log(`  left out #${d.index}: ${d.reason}${why}`);
}
for (const h of [items, scorer, pipeline, budget]) h.dispose();
