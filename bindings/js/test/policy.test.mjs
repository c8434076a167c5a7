// Policies as data (pipelineFromJson / toJson / toObject, budgetFromJson /
// toJson), presets against docs/policies.md's table, policy sensitivity and
// a report's analytics.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { load, CupelError, Status, Keep, Pipeline } from "../index.js";

const cupel = await load();

/** A predicate for assert.throws: the error class and the message (a RegExp or exact). */
const is = (Class, message) => (e) => {
  assert.equal(e.constructor, Class, `${e.constructor.name}: ${e.message}`);
  assert.ok(e instanceof CupelError, "instanceof CupelError");
  if (message instanceof RegExp) assert.match(e.message, message);
  else assert.equal(e.message, message);
  return true;
};

const FIXTURE = [
  { tokens: 100, score: 0.9, kind: "Message", content: "alpha", timestamp: 1000 },
  { tokens: 200, score: 0.5, kind: "Document", content: "beta", timestamp: 2000 },
  { tokens: 50, score: 0.1, kind: "ToolOutput", content: "gamma", timestamp: 3000 },
];

/** Runs `f(h1, h2, ...)` with handles that are disposed afterwards. */
function using(handles, f) {
  try {
    return f(...handles);
  } finally {
    for (const h of handles) h.dispose();
  }
}

test("pipelineFromJson reads text or an object; toJson writes every setting and reads back exactly", () => {
  const doc = {
    name: "mine",
    description: "recency first",
    scorers: [
      { type: "recency", weight: 2 },
      { type: "kind", weight: 1, kindWeights: { Message: 0.5, ToolOutput: 0.25 } },
      { type: "scaled", weight: 1, innerScorer: { type: "priority" } },
    ],
    slicerType: "KNAPSACK", // enum values: any case
    knapsackBucketSize: 10,
    placerType: "uShaped",
    deduplicationEnabled: false,
    overflowStrategy: "proceed",
    quotas: [{ kind: "Message", minPercent: 10, maxPercent: 80 }],
    tokenizer: "cl100k_base",
    sessionSlack: 0.3,
    unknownKey: "ignored",
  };
  const fromObject = cupel.pipelineFromJson(doc);
  const fromText = cupel.pipelineFromJson(JSON.stringify(doc, null, 2));
  const text = fromObject.toJson();
  assert.equal(fromText.toJson(), text);
  const o = fromObject.toObject();
  assert.deepEqual(Object.keys(o), [...Object.keys(o)].sort(), "keys in alphabetical order");
  assert.equal(o.name, "mine");
  assert.equal(o.description, "recency first");
  assert.equal(o.slicerType, "knapsack");
  assert.equal(o.knapsackBucketSize, 10);
  assert.equal(o.placerType, "uShaped");
  assert.equal(o.deduplicationEnabled, false);
  assert.equal(o.overflowStrategy, "proceed");
  assert.equal(o.tokenizer, "cl100k_base");
  assert.equal(o.sessionSlack, 0.3);
  assert.deepEqual(o.quotas, [{ kind: "Message", minPercent: 10, maxPercent: 80 }]);
  assert.deepEqual(
    o.scorers.map((s) => [s.type, s.weight]),
    [["recency", 2], ["kind", 1], ["scaled", 1]],
    "the weights as configured",
  );
  assert.deepEqual(o.scorers[1].kindWeights, { Message: 0.5, ToolOutput: 0.25 });
  assert.equal(o.scorers[2].innerScorer.type, "priority");
  // Read back: the same text, and the same selection on the same data.
  const again = cupel.pipelineFromJson(text);
  assert.equal(again.toJson(), text);
  using([cupel.items(FIXTURE), cupel.budget({ maxTokens: 300, targetTokens: 250 })], (items, budget) => {
    assert.deepEqual(again.run(items, budget).placed, fromObject.run(items, budget).placed);
  });
  for (const p of [fromObject, fromText, again]) p.dispose();
});

test("a pipeline built in code writes a document that selects as it does", () => {
  const recency = cupel.scorers.recency();
  const kind = cupel.scorers.kind();
  const scorer = cupel.scorers.composite([[recency, 3], [kind, 1]]);
  const greedy = cupel.greedy();
  const pipeline = cupel.pipeline({ scorer, slicer: greedy, placer: cupel.chronological() });
  const o = pipeline.toObject();
  assert.deepEqual(o.scorers.map((s) => [s.type, s.weight]), [["recency", 3], ["kind", 1]]);
  const copy = cupel.pipelineFromJson(o);
  using([cupel.items(FIXTURE), cupel.budget({ maxTokens: 300, targetTokens: 250 })], (items, budget) => {
    assert.deepEqual(copy.run(items, budget, { report: true }).report.json, pipeline.run(items, budget, { report: true }).report.json);
  });
  // No scorer: the pushed scores, written as one `given` entry.
  const given = cupel.pipeline({ slicer: greedy });
  assert.deepEqual(given.toObject().scorers, [{ type: "given", weight: 1 }]);
  for (const h of [recency, kind, scorer, greedy, pipeline, copy, given]) h.dispose();
});

test("pipelineFromJson: every refusal a RangeError with the JSON path, types a TypeError", () => {
  const cases = [
    ["", /^json is empty/],
    ["  ", /^json/],
    ["null", /^json \$: expected a policy object, got null$/],
    ['{"scorers":', /^json: malformed JSON at line 1 column 11/],
    ['{"scorers":[{"type":"recency","weight":-1}]}', "json $.scorers[0].weight: must be positive and finite (got -1)"],
    ['{"scorers":[{"type":"recency","weight":1},{"type":"recency","weight":0}]}', /^json \$\.scorers\[1\]\.weight: must be positive/],
    ['{"scorers":[{"type":"nope","weight":1}]}', /^json \$\.scorers\[0\]\.type: unknown scorer type "nope"; known types: recency, /],
    ['{"scorers":[{"type":"recency","weight":1}],"knapsackBucketSize":5}', /^json \$\.knapsackBucketSize: only valid when slicerType is "knapsack"/],
    [
      '{"scorers":[{"type":"recency","weight":1}],"quotas":[{"kind":"Message","minPercent":80,"maxPercent":20}]}',
      /^json \$\.quotas\[0\]: minPercent 80 exceeds maxPercent 20/,
    ],
    ["[1]", /^json \$/],
    ["\uD800", "json holds a lone surrogate (U+D800) at index 0: it has no UTF-8 form"],
  ];
  for (const [json, message] of cases) {
    assert.throws(() => cupel.pipelineFromJson(json), is(RangeError, message), JSON.stringify(json));
  }
  for (const bad of [null, undefined, 3, true, cupel.greedy()]) {
    assert.throws(() => cupel.pipelineFromJson(bad), is(TypeError, /^json is .*; expected a JSON text \(a string\) or an object/));
  }
  assert.throws(() => cupel.pipelineFromJson({ scorers: [{ type: "recency", weight: 1n }] }), is(TypeError, /^json cannot be written as JSON/));
  assert.throws(() => cupel.pipelineFromJson({ scorers: [] }), is(RangeError, /^json \$\.scorers: /));
});

test("toJson refuses what it cannot write without loss (UNSUPPORTED), and a disposed pipeline", () => {
  const greedy = cupel.greedy();
  const counts = cupel.countQuota(greedy, [{ kind: "Message", requireCount: 1, capCount: 2 }]);
  const nested = cupel.quota(counts, [{ kind: "Message", requirePercent: 10, capPercent: 50 }]);
  const pipeline = cupel.pipeline({ slicer: nested });
  assert.throws(
    () => pipeline.toJson(),
    (e) => e.constructor === CupelError && e.status === Status.UNSUPPORTED && /quota/i.test(e.detail),
  );
  // A tokenizer from a vocabulary file: the 256 single bytes.
  const lines = Array.from({ length: 256 }, (_, b) => `${Buffer.from([b]).toString("base64")} ${b}`).join("\n");
  const fileTokenizer = cupel.tokenizerFromTiktoken(new TextEncoder().encode(lines));
  const withFile = cupel.pipeline({ slicer: greedy, tokenizer: fileTokenizer });
  assert.throws(() => withFile.toJson(), (e) => e.constructor === CupelError && e.status === Status.UNSUPPORTED);
  const named = cupel.tokenizer("cl100k_base");
  withFile.setTokenizer(named);
  assert.equal(withFile.toObject().tokenizer, "cl100k_base");
  for (const h of [greedy, counts, nested, pipeline, fileTokenizer, withFile, named]) h.dispose();
  assert.throws(() => pipeline.toJson(), is(TypeError, "this pipeline was disposed"));
  assert.throws(() => Pipeline.prototype.toJson.call(null), is(TypeError, /^this is null; toJson is a method of a pipeline$/));
});

test("budgetFromJson / toJson: every field, kinds lower-cased, round trip, the budget's own checks", () => {
  const budget = cupel.budgetFromJson({
    maxTokens: 1000,
    targetTokens: 800,
    outputReserve: 100,
    reservedSlots: { SystemPrompt: 50 },
    estimationSafetyMarginPercent: 5,
  });
  const o = budget.toObject();
  assert.deepEqual(o, {
    estimationSafetyMarginPercent: 5,
    maxTokens: 1000,
    outputReserve: 100,
    reservedSlots: { systemprompt: 50 },
    targetTokens: 800,
  });
  const made = cupel.budget({ maxTokens: 1000, targetTokens: 800, outputReserve: 100, safetyMarginPercent: 5, reserved: { SystemPrompt: 50 } });
  assert.equal(made.toJson(), budget.toJson());
  assert.deepEqual(made.effective(10), budget.effective(10));
  const again = cupel.budgetFromJson(budget.toJson());
  assert.equal(again.toJson(), budget.toJson());
  assert.throws(() => cupel.budgetFromJson('{"maxTokens":100,"targetTokens":250}'), is(RangeError, /^json \$\.targetTokens: 250 exceeds maxTokens 100/));
  assert.throws(() => cupel.budgetFromJson('{"targetTokens":1}'), is(RangeError, "json $.maxTokens: required"));
  assert.throws(() => cupel.budgetFromJson({ maxTokens: -1, targetTokens: -1 }), is(RangeError, /^json \$/));
  assert.throws(() => cupel.budgetFromJson(null), is(TypeError, /^json is null/));
  for (const h of [budget, made, again]) h.dispose();
  assert.throws(() => budget.toJson(), is(TypeError, "this budget was disposed"));
});

/** docs/policies.md's preset table: name -> { scorers: [[type, weight]], slicer, bucket, placer }. */
function presetTable() {
  const doc = readFileSync(new URL("../../../docs/policies.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf("## Presets"), doc.indexOf("## The one-call path"));
  const rows = {};
  for (const line of section.split("\n")) {
    const m = /^\| `(\w+)`(?: \(ours\))? \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$/.exec(line.trim());
    if (!m) continue;
    const scorers = m[2].split(",").map((s) => {
      const [type, weight] = s.trim().split(/\s+/);
      return [type, Number(weight)];
    });
    const slicer = /^(\w+)(?: \(bucket (\d+)\))?$/.exec(m[3].trim());
    rows[m[1]] = { scorers, slicer: slicer[1], bucket: slicer[2] ? Number(slicer[2]) : undefined, placer: m[4].trim() };
  }
  return rows;
}

test("presets: the names, and each one as docs/policies.md's table says (weights through toObject)", () => {
  const table = presetTable();
  assert.equal(Object.keys(table).length, 8, "the table's eight presets");
  assert.deepEqual(cupel.presetNames, Object.keys(table));
  for (const [name, want] of Object.entries(table)) {
    for (const spelling of [name, name.toLowerCase(), name.toUpperCase()]) {
      const p = cupel.preset(spelling);
      const o = p.toObject();
      p.dispose();
      assert.equal(o.name, name);
      assert.deepEqual(o.scorers.map((s) => [s.type, s.weight]), want.scorers, name);
      assert.equal(o.slicerType, want.slicer, name);
      assert.equal(o.knapsackBucketSize, want.bucket, name);
      assert.equal(o.placerType, want.placer, name);
      assert.equal(o.deduplicationEnabled, true, name);
      assert.equal(o.overflowStrategy, "throw", name);
      // The KindScorer's defaults wherever a kind scorer is.
      for (const s of o.scorers.filter((s) => s.type === "kind")) {
        assert.deepEqual(s.kindWeights, { Document: 0.4, Memory: 0.8, Message: 0.2, SystemPrompt: 1, ToolOutput: 0.6 });
      }
    }
  }
  const agent = cupel.preset("AgentLoop").toObject();
  assert.equal(agent.sessionSlack, 0.2);
  assert.equal(agent.tokenizer, "o200k_base");
  assert.throws(() => cupel.preset("Nope"), is(RangeError, /^name "Nope" is no preset; the presets are Chat, CodeReview, Rag, DocumentQa, ToolUse, LongRunning, Debugging, AgentLoop$/));
  assert.throws(() => cupel.preset(""), is(RangeError, /^name "" is no preset/));
  assert.throws(() => cupel.preset(null), is(TypeError, "name is null; expected a string"));
  assert.throws(() => cupel.preset(3), is(TypeError, "name is 3; expected a string"));
});

test("policy sensitivity: variants with their reports, diffs by index (identical contents are two diffs)", () => {
  const items = cupel.items([
    { tokens: 100, content: "same text", priority: 10, timestamp: 0 },
    { tokens: 100, content: "same text", priority: 1, timestamp: 1 },
    { tokens: 50, content: "other", priority: 5, timestamp: 2 },
  ]);
  const budget = cupel.budget({ maxTokens: 1000 });
  const byPriority = cupel.pipelineFromJson({ scorers: [{ type: "priority", weight: 1 }] });
  const byRecency = cupel.pipelineFromJson({ scorers: [{ type: "recency", weight: 1 }] });
  // Deduplication keeps the better-scored copy: item 0 by priority, item 1 by recency.
  const r = cupel.policySensitivity([["priority", byPriority], ["recency", byRecency]], items, budget);
  assert.deepEqual(r.variants.map((v) => v.label), ["priority", "recency"]);
  assert.deepEqual(r.variants[0].report.included.map((d) => d.item ?? d.index).length, 2);
  assert.ok(Array.isArray(r.variants[1].report.excluded));
  assert.deepEqual(r.diffs, [
    { index: 0, content: "same text", statuses: [{ label: "priority", status: "Included" }, { label: "recency", status: "Excluded" }] },
    { index: 1, content: "same text", statuses: [{ label: "priority", status: "Excluded" }, { label: "recency", status: "Included" }] },
  ]);
  // A Map and an object of pipelines by label say the same.
  assert.deepEqual(cupel.policySensitivity(new Map([["priority", byPriority], ["recency", byRecency]]), items, budget), r);
  assert.deepEqual(cupel.policySensitivity({ priority: byPriority, recency: byRecency }, items, budget), r);
  // The same pipeline twice: no diffs; three variants.
  const three = cupel.policySensitivity([["a", byPriority], ["b", byPriority], ["c", byRecency]], items, budget);
  assert.equal(three.variants.length, 3);
  assert.equal(three.diffs.length, 2);
  assert.equal(three.diffs[0].statuses.length, 3);
  // Items with no content: content null.
  const bare = cupel.items([{ tokens: 10, score: 1 }, { tokens: 10, score: 0.5 }]);
  const given = cupel.pipeline({ slicer: cupel.greedy() });
  const small = cupel.budget({ maxTokens: 10 });
  const flip = cupel.pipelineFromJson({ scorers: [{ type: "recency", weight: 1 }] });
  bare.setTimestamp(0, 0).setTimestamp(1, 1);
  assert.deepEqual(cupel.policySensitivity([["given", given], ["recency", flip]], bare, small).diffs.map((d) => d.content), [null, null]);

  // Errors: fewer than two, wrong shapes, null and disposed handles.
  assert.throws(() => cupel.policySensitivity([["a", byPriority]], items, budget), is(RangeError, /^variants holds 1 pipeline; policy sensitivity compares at least two$/));
  assert.throws(() => cupel.policySensitivity([], items, budget), is(RangeError, /^variants holds 0 pipelines/));
  assert.throws(() => cupel.policySensitivity(null, items, budget), is(TypeError, /^variants is null/));
  assert.throws(() => cupel.policySensitivity([["a", byPriority], "b"], items, budget), is(TypeError, /^variants\[1\] is the string "b"; expected a \[label, pipeline\] pair/));
  assert.throws(() => cupel.policySensitivity([["a", byPriority], [2, byRecency]], items, budget), is(TypeError, /^variants\[1\]\[0\] is 2; expected a string/));
  assert.throws(() => cupel.policySensitivity([["a", byPriority], ["b", null]], items, budget), is(TypeError, /^variants\[1\]\[1\] is null; expected a Pipeline/));
  assert.throws(() => cupel.policySensitivity({ a: byPriority, b: budget }, items, budget), is(TypeError, /^variants\["b"\] is a Budget; expected a Pipeline/));
  assert.throws(() => cupel.policySensitivity([["a", byPriority], ["b\0", byRecency]], items, budget), is(RangeError, /^variants\[1\]\[0\] holds a NUL/));
  assert.throws(() => cupel.policySensitivity([["a", byPriority], ["b", byRecency]], null, budget), is(TypeError, /^items is null/));
  assert.throws(() => cupel.policySensitivity([["a", byPriority], ["b", byRecency]], items, null), is(TypeError, /^budget is null/));
  // A variant whose run fails fails the call, naming its index and label.
  const cut = cupel.items([{ tokens: 5000, content: "long", truncatable: { keep: Keep.Head, minTokens: 1 } }]);
  const cutter = cupel.pipelineFromJson({ scorers: [{ type: "priority", weight: 1 }], tokenizer: "o200k_base" });
  assert.throws(
    () => cupel.policySensitivity([["ok", cutter], ["fails", byRecency]], cut, budget),
    is(RangeError, /^variant 1 \("fails"\) failed: item 0 is truncatable but the pipeline has no tokenizer/),
  );
  for (const h of [items, budget, byPriority, byRecency, bare, given, small, flip, cut, cutter]) h.dispose();
  assert.throws(() => cupel.policySensitivity([["a", byPriority], ["b", byRecency]], items, budget), is(TypeError, /was disposed/));
});

test("a report's analytics: utilization, kind diversity, timestamp coverage, quota rows, and their edges", () => {
  const recency = cupel.scorers.recency();
  const greedy = cupel.greedy();
  const pipeline = cupel.pipeline({ scorer: recency, slicer: greedy, placer: cupel.chronological() });
  const run = (list, budget) =>
    using([cupel.items(list), cupel.budget(budget)], (items, b) => pipeline.run(items, b, { report: true }).report);

  // The fixture: 250 of 300 tokens, Document and ToolOutput, both stamped.
  let a = run(FIXTURE, { maxTokens: 300, targetTokens: 250 }).analytics;
  assert.ok(Math.abs(a.budgetUtilization - 250 / 300) < 1e-12);
  assert.equal(a.kindDiversity, 2);
  assert.equal(a.timestampCoverage, 1);
  assert.deepEqual(a.quotas, []);
  // The JSON has the same numbers.
  const report = run(FIXTURE, { maxTokens: 300, targetTokens: 250 });
  const j = JSON.parse(report.json).analytics;
  assert.equal(j.budgetUtilization, report.analytics.budgetUtilization);
  assert.equal(j.kindDiversity, report.analytics.kindDiversity);
  assert.equal(j.timestampCoverage, report.analytics.timestampCoverage);

  // An empty report: all 0.
  a = run([], { maxTokens: 300 }).analytics;
  assert.deepEqual(a, { budgetUtilization: 0, kindDiversity: 0, timestampCoverage: 0, quotas: [] });
  // A zero budget: utilization 0 (the peers give NaN), nothing included.
  a = run(FIXTURE, { maxTokens: 0 }).analytics;
  assert.equal(a.budgetUtilization, 0);
  assert.equal(a.kindDiversity, 0);
  assert.equal(a.timestampCoverage, 0);
  // Kinds compared case-insensitively; half the included items stamped.
  a = run(
    [
      { tokens: 10, kind: "message", timestamp: 5 },
      { tokens: 10, kind: "MESSAGE" },
    ],
    { maxTokens: 40 },
  ).analytics;
  assert.equal(a.kindDiversity, 1);
  assert.equal(a.timestampCoverage, 0.5);
  assert.equal(a.budgetUtilization, 0.5);

  // Quota rows, outermost first.
  const quota = cupel.quota(greedy, [{ kind: "Message", requirePercent: 10, capPercent: 50 }]);
  const counted = cupel.countQuota(quota, [{ kind: "Document", requireCount: 1, capCount: 2 }]);
  const quoted = cupel.pipeline({ scorer: recency, slicer: counted });
  const rows = using([cupel.items(FIXTURE), cupel.budget({ maxTokens: 300, targetTokens: 250 })], (items, b) =>
    quoted.run(items, b, { report: true }).report.analytics.quotas,
  );
  assert.deepEqual(rows.map((r) => [r.kind, r.mode]), [["Document", "count"], ["Message", "percentage"]]);
  for (const r of rows) assert.ok(r.utilization >= 0 && r.utilization <= 1);
  for (const h of [recency, greedy, pipeline, quota, counted, quoted]) h.dispose();
});
