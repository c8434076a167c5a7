import { load, Keep } from "libcupel";

const cupel = await load();
const tokenizer = cupel.tokenizer("o200k_base");
const doc = Array.from({ length: 200 }, (_, i) => `Line ${i}: the quick brown fox jumps over the lazy dog.\n`).join("");
const items = cupel.items([
  { tokens: 40, score: 0.9, content: "What failed in the last build?" },
  // A huge tool output, and a placeholder it may shrink to (keeping 10% of its score).
  {
    tokens: 9000,
    score: 0.8,
    kind: "ToolOutput",
    content: "(the build log)",
    variants: [{ tokens: 12, value: 0.1, content: "[output cleared: 9,000 tokens]" }],
  },
]);
// A document that may be cut to what is left, keeping its head, if at least 50 tokens remain.
items.pushText(tokenizer, doc, 0.6, "Document").setTruncatable(2, Keep.Head, 50);

const pipeline = cupel.pipeline({ slicer: cupel.greedy(), tokenizer }); // the tokenizer cuts
const { report } = pipeline.run(items, cupel.budget({ maxTokens: 1000 }), { report: true });
console.log(`${report.selectedTokens} tokens:`);
for (const d of report.included) {
  const text = d.text.length > 32 ? `${d.text.slice(0, 32)}... (${d.text.length} chars)` : d.text;
  console.log(`  #${d.index} ${d.reason.padEnd(9)} variant ${d.variant} ${String(d.addedTokens).padStart(3)} tokens  ${JSON.stringify(text)}`);
}
const { headEnd, tailStart } = report.included[2].cut; // offsets in the content's UTF-8 bytes
const bytes = new TextEncoder().encode(doc).length;
console.log(`#2 sends bytes [0, ${headEnd}) + [${tailStart}, ${bytes}) of its ${bytes}-byte content`);
for (const h of [items, pipeline, tokenizer]) h.dispose();
