import { load } from "libcupel";

const cupel = await load();
const items = cupel.items([
  { tokens: 200, kind: "SystemPrompt", content: "You are a support agent.", pinned: true, timestamp: 0 },
  { tokens: 400, kind: "Document", content: "refund policy (retrieved)", timestamp: 1, priority: 2, relevanceHint: 0.9 },
  { tokens: 150, kind: "Message", content: "user: I want my money back", timestamp: 2 },
  { tokens: 300, kind: "ToolOutput", content: "order lookup: #1234 shipped", timestamp: 3, relevanceHint: 0.4 },
  { tokens: 150, kind: "Message", content: "user: I want my money back", timestamp: 4 }, // the same text, asked again
]);
const budget = cupel.budget({ maxTokens: 800 });
const variants = { chat: cupel.preset("Chat"), rag: cupel.preset("Rag"), debugging: cupel.preset("Debugging") };
const result = cupel.policySensitivity(variants, items, budget);
for (const { label, report } of result.variants) console.log(`${label}: ${report.included.length} included`);
// Items whose fate depends on the policy, by index: the two identical messages are two items.
for (const d of result.diffs) {
  console.log(`#${d.index} ${JSON.stringify(d.content)}: ${d.statuses.map((s) => `${s.label} ${s.status}`).join(", ")}`);
}
for (const h of [items, budget, ...Object.values(variants)]) h.dispose();
