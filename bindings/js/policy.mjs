import { load } from "libcupel";

const cupel = await load();
// A policy file as a .NET Cupel host writes it; "tokenizer" is one of libcupel's extensions.
const text = `{
  "name": "support",
  "scorers": [
    { "type": "recency", "weight": 3 },
    { "type": "kind", "weight": 1, "kindWeights": { "SystemPrompt": 1, "Document": 0.6, "Message": 0.3 } }
  ],
  "slicerType": "greedy",
  "placerType": "chronological",
  "quotas": [{ "kind": "Document", "maxPercent": 40 }],
  "tokenizer": "o200k_base"
}`;
const pipeline = cupel.pipelineFromJson(text); // or an object: cupel.pipelineFromJson({ scorers: [...] })
const written = pipeline.toObject(); // toJson() is the text: every setting, keys in order
console.log(Object.keys(written).join(", "));
console.log(written.scorers.map((s) => `${s.type} ${s.weight}`).join(", "));
console.log(cupel.pipelineFromJson(pipeline.toJson()).toJson() === pipeline.toJson());

// What the library refuses: a RangeError with the JSON path and the rule.
for (const bad of ['{"scorers": [{"type": "recency", "weight": -1}]}', '{"scorers": [', { scorers: [{ type: "nope", weight: 1 }] }]) {
  try {
    cupel.pipelineFromJson(bad);
  } catch (e) {
    console.log(`${e.name}: ${e.message.slice(0, 90)}`);
  }
}

// Budgets too.
const budget = cupel.budgetFromJson({ maxTokens: 8000, targetTokens: 6000, outputReserve: 1000 });
console.log(budget.toJson().replace(/\s+/g, " "));
for (const h of [pipeline, budget]) h.dispose();
