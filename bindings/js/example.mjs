// libcupel in Node: fit a coding assistant's context into 600 tokens.
// Run from a project that installed the package: node node_modules/libcupel/example.mjs
import { load, Overflow } from "libcupel";

const cupel = await load();
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
const pipeline = cupel.pipeline({
  scorer,
  slicer: cupel.greedy(),
  placer: cupel.chronological(),
  overflow: Overflow.Throw,
});
const budget = cupel.budget({ maxTokens: 800, targetTokens: 600 });
const { placed, report } = pipeline.run(items, budget, { report: true });

console.log(`libcupel ${cupel.version} (WebAssembly): ${placed.length} of ${items.length} items, oldest first`);
for (const d of report.included) {
  console.log(`  #${d.index} ${d.reason.padEnd(8)} ${String(d.itemTokens).padStart(4)} tokens${d.group ? `  group ${d.group}` : ""}`);
}
for (const d of report.excluded) {
  console.log(`  left out #${d.index}: ${d.reason}${d.group ? ` (group ${d.group} needs ${d.groupTokens})` : ""}`);
}
const groups = new Map();
for (const [i, g] of [[2, 1], [3, 1], [4, 2], [5, 2]]) {
  groups.set(g, (groups.get(g) ?? 0) + (placed.includes(i) ? 1 : 0));
}
const split = [...groups.values()].filter((n) => n === 1).length;
console.log(`tool call/result pairs split: ${split}`);
for (const h of [items, scorer, pipeline, budget]) h.dispose();
