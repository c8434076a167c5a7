// node --test bindings/js/test/ from the repository root (after
// bindings/js/build.sh); cargo test --release --test js_binding runs it.
// The cross check against the native library reads the cases
// tests/js_binding.rs writes (CUPEL_CROSS_CASES); run alone, without them,
// it is skipped loudly. contract.mjs beside this file runs the binding
// contract table; readback.test.mjs, errors.test.mjs and tokenizer.test.mjs
// (counting, truncation, items from text) test the rest.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { load, CupelError, Status, Reason, Overflow, Scarcity, DecayCurve } from "../index.js";

const cupel = await load();

test("version and handle accounting", () => {
  assert.match(cupel.version, /^\d+\.\d+\.\d+/);
  const before = cupel.liveHandles;
  const items = cupel.items([{ tokens: 1, score: 0.5 }]);
  const slicer = cupel.greedy();
  assert.equal(cupel.liveHandles, before + 2);
  items.dispose();
  items.dispose(); // idempotent
  slicer[Symbol.dispose ?? Symbol.for("Symbol.dispose")]();
  assert.equal(cupel.liveHandles, before);
  assert.throws(
    () => items.length,
    (e) => e instanceof TypeError && e instanceof CupelError && e.status === Status.NULL_POINTER && /this items list was disposed/.test(e.message),
  );
  assert.equal(items.disposed, true);
  assert.throws(() => cupel.slice(slicer, cupel.items(), cupel.budget({ maxTokens: 1 })), /^TypeError: slicer was disposed$/);
});

test("greedy and knapsack on the spec's example", () => {
  const items = cupel.items([
    { tokens: 400, score: 0.9 },
    { tokens: 100, score: 0.7 },
    { tokens: 100, score: 0.5 },
    { tokens: 200, score: 0.1 },
  ]);
  const budget = cupel.budget({ maxTokens: 300 });
  assert.deepEqual(cupel.slice(cupel.greedy(), items, budget).selected, [1, 2]);
  const r = cupel.slice(cupel.knapsack(1), items, budget, { report: true });
  assert.deepEqual([...r.selected].sort(), [1, 2]);
  assert.equal(r.report.selectedTokens, 200);
  assert.equal(r.report.effectiveTargetTokens, 300);
  const over = r.report.excluded.find((d) => d.index === 0);
  assert.equal(over.reason, "BudgetExceeded");
  assert.equal(over.itemTokens, 400);
  assert.equal(over.availableTokens, 100);
});

test("errors carry the status and a message naming the argument", () => {
  const range = (pattern) => (e) => e instanceof RangeError && e instanceof CupelError && e.status === Status.INVALID_ARGUMENT && pattern.test(e.message);
  assert.throws(() => cupel.knapsack(0), range(/^bucketSize is 0; it must be > 0$/));
  assert.throws(() => cupel.budget({ maxTokens: 10, targetTokens: 20 }), range(/^targetTokens 20 > maxTokens 10$/));
  assert.throws(() => cupel.items([{ tokens: 1, score: NaN }]), range(/^items\[0\]\.score is NaN/));
  assert.throws(() => cupel.items([{ tokens: 1.5 }]), range(/^items\[0\]\.tokens is 1\.5; expected an integer$/));
  const items = cupel.items([{ tokens: 1 }]);
  assert.throws(() => items.setGroup(5, 1), range(/^index 5 is out of range: the list holds 1 items$/));
  const strict = cupel.countQuota(cupel.greedy(), [{ kind: "Memory", requireCount: 1, capCount: 2 }], Scarcity.Error);
  assert.throws(
    () => cupel.slice(strict, items, cupel.budget({ maxTokens: 100 })),
    (e) => e.constructor === CupelError && e.status === Status.SCARCITY && e.statusName === "SCARCITY" && e.name === "CupelError",
  );
});

test("a tool call and its result are never split", () => {
  const items = cupel.items([
    { tokens: 10, score: 0.9, kind: "ToolCall", group: 7 },
    { tokens: 200, score: 0.1, kind: "ToolOutput", group: 7 },
    { tokens: 60, score: 0.5 },
  ]);
  const greedy = cupel.greedy();
  const r = cupel.slice(greedy, items, cupel.budget({ maxTokens: 100 }), { report: true });
  assert.deepEqual(r.selected, [2]);
  for (const d of r.report.excluded) {
    assert.equal(d.reason, "BudgetExceeded");
    assert.equal(d.group, 7);
    assert.equal(d.groupTokens, 210);
  }
  assert.deepEqual(cupel.slice(greedy, items, cupel.budget({ maxTokens: 270 })).selected, [2, 0, 1]);
  items.setGroups(0, [0, 0]);
  assert.deepEqual(cupel.slice(greedy, items, cupel.budget({ maxTokens: 100 })).selected, [0, 2]);
  // Group ids past 2^53 round-trip as BigInt.
  items.setGroups(0, [2n ** 63n, 2n ** 63n]);
  const big = cupel.slice(greedy, items, cupel.budget({ maxTokens: 100 }), { report: true });
  assert.equal(big.report.excluded[0].group, 2n ** 63n);
  const s = cupel.stream(100, 2);
  s.push(30, 0.5, 5);
  s.push(30, 0.5, 5);
  s.push(50, 0.5);
  s.push(40, 0.5);
  assert.throws(() => s.push(1, 0.1, 5), /which ended before item 4/);
  assert.deepEqual(s.finish(), [0, 1, 3]);
});

test("the pipeline: scoring, deduplication, pinned, placement and the report", () => {
  const items = cupel.items([
    { tokens: 50, kind: "SystemPrompt", content: "You are helpful.", pinned: true, timestamp: 0 },
    { tokens: 100, content: "hello", timestamp: new Date(86400000) },
    { tokens: 100, content: "how are you", timestamp: 2 * 86400000 },
    { tokens: 100, kind: "ToolOutput", content: "ls output", timestamp: 3 * 86400000 },
    { tokens: 100, content: "hello", timestamp: 4 * 86400000 },
    { tokens: -3, content: "broken" },
    { tokens: 5000, kind: "Document", content: "a huge file" },
  ]);
  using_(cupel.pipeline({ scorer: cupel.scorers.recency(), slicer: cupel.greedy(), placer: cupel.chronological() }), (p) => {
    const { placed, report } = p.run(items, cupel.budget({ maxTokens: 1000, targetTokens: 300 }), { report: true });
    assert.equal(placed[0], 0, "the pinned system prompt, the oldest, first");
    assert.equal(report.included.length, placed.length);
    assert.equal(report.included[0].reason, "Pinned");
    const why = Object.fromEntries(report.excluded.map((d) => [d.index, d]));
    assert.equal(why[5].reason, "NegativeTokens");
    assert.equal(why[1].reason, "Deduplicated");
    assert.equal(why[1].relatedIndex, 4);
    assert.equal(why[6].reason, "BudgetExceeded");
    assert.equal(report.totalCandidates, 7);
    const json = JSON.parse(report.json);
    assert.equal(json.total_candidates, 7);
    assert.equal(json.excluded.length, report.excluded.length);
  });
  const p = cupel.pipeline({ slicer: cupel.greedy(), overflow: Overflow.Throw });
  assert.throws(() => p.run(items, cupel.budget({ maxTokens: 40 })), /pinned items need 50 tokens/);
});

test("every scorer scores every item", () => {
  const items = cupel.items([
    { tokens: 10, score: 0.2, kind: "Memory", timestamp: 1000, priority: 3, relevanceHint: 0.4, tags: ["auth"], metadata: { "cupel:trust": "0.9" } },
    { tokens: 10, score: 0.8, kind: "Message", timestamp: 5000, priority: 1, tags: ["db", "auth"] },
  ]);
  const s = cupel.scorers;
  const all = [
    s.given(), s.recency(), s.priority(), s.frequency(), s.reflexive(), s.kind(), s.kind({ Memory: 2 }),
    s.tag({ auth: 1, db: 3 }), s.metadataTrust(0.5), s.metadataKey("cupel:trust", "0.9", 2),
    s.decay({ curve: DecayCurve.Exponential, durationSecs: 60, referenceTime: 10000 }),
    s.decay({ curve: DecayCurve.Step, windows: [[1, 0.9], [100, 0.1]], referenceTime: new Date(10000) }),
  ];
  all.push(s.composite([[all[0], 1], [all[1], 2]]), s.scaled(all[2]));
  for (const scorer of all) {
    const scores = scorer.score(items);
    assert.equal(scores.length, 2);
    assert.ok(scores.every(Number.isFinite));
  }
  assert.deepEqual(all[0].score(items), [0.2, 0.8]);
  assert.throws(() => s.metadataKey("k", "v", 0), /boost/);
});

test("marginal items, min budget, quota and count slicers", () => {
  const items = cupel.items([
    { tokens: 100, score: 0.9 },
    { tokens: 100, score: 0.8 },
    { tokens: 100, score: 0.7 },
  ]);
  const g = cupel.greedy();
  // The C ABI's order: (slicer, items, budget, pinnedTokens, slackTokens)
  // and (slicer, items, pinnedTokens, targetIndex, searchCeiling).
  assert.deepEqual(cupel.marginalItems(g, items, cupel.budget({ maxTokens: 300 }), 0, 100), [2]);
  assert.deepEqual(cupel.marginalItems(g, items, cupel.budget({ maxTokens: 300 }), 100, 0), []);
  assert.deepEqual(cupel.marginalItems(g, items, cupel.budget({ maxTokens: 300 }), 100, 100), [1]);
  assert.equal(cupel.findMinBudget(g, items, 0, 2, 1000), 300);
  assert.equal(cupel.findMinBudget(g, items, 50, 2, 1000), 350);
  assert.equal(cupel.findMinBudget(g, items, 0, 2, 250), null);
  // The old order (slackTokens, then pinnedTokens last) fails loudly.
  assert.throws(() => cupel.marginalItems(g, items, cupel.budget({ maxTokens: 300 }), 100), /^TypeError: slackTokens is undefined/);
  assert.throws(() => cupel.findMinBudget(g, items, 2, 1000), /^TypeError: searchCeiling is undefined/);
  const q = cupel.quota(g, [{ kind: "Message", requirePercent: 0, capPercent: 50 }]);
  assert.equal(cupel.slice(q, items, cupel.budget({ maxTokens: 300 })).selected.length, 1);
  const c = cupel.countConstrainedKnapsack(1, [{ kind: "Message", requireCount: 1, capCount: 2 }]);
  const r = cupel.slice(c, items, cupel.budget({ maxTokens: 300 }), { report: true });
  assert.deepEqual(r.selected, [0, 1]);
  assert.deepEqual(r.report.capExcluded, [2]);
  const [max, target] = cupel.budget({ maxTokens: 1000, targetTokens: 800, outputReserve: 100 }).effective(50);
  assert.deepEqual([max, target], [850, 750]);
});

// ---- WebAssembly against native --------------------------------------------

function scorerOf(spec) {
  const s = cupel.scorers;
  switch (spec.type) {
    case "recency": return s.recency();
    case "priority": return s.priority();
    case "kind": return s.kind(spec.weights);
    case "tag": return s.tag(spec.weights);
    case "frequency": return s.frequency();
    case "reflexive": return s.reflexive();
    case "composite": {
      const parts = spec.parts.map(([p, w]) => [scorerOf(p), w]);
      const c = s.composite(parts);
      parts.forEach(([p]) => p.dispose());
      return c;
    }
    case "scaled": {
      const inner = scorerOf(spec.inner);
      const c = s.scaled(inner);
      inner.dispose();
      return c;
    }
    case "trust": return s.metadataTrust(spec.default);
    case "key": return s.metadataKey(spec.key, spec.value, spec.boost);
    case "decay": return s.decay(spec);
    default: throw new Error(`scorer ${spec.type}`);
  }
}

function slicerOf(spec) {
  const g = cupel.greedy();
  try {
    switch (spec.type) {
      case "greedy": return cupel.greedy();
      case "knapsack": return cupel.knapsack(spec.bucket);
      case "quota": return cupel.quota(g, spec.quotas);
      case "countQuota": return cupel.countQuota(g, spec.entries, Scarcity.Degrade);
      case "countKnapsack": return cupel.countConstrainedKnapsack(spec.bucket, spec.entries, Scarcity.Degrade);
      default: throw new Error(`slicer ${spec.type}`);
    }
  } finally {
    g.dispose();
  }
}

function using_(handle, f) {
  try {
    return f(handle);
  } finally {
    handle.dispose();
  }
}

test("wasm agrees with native on seeded pipelines", (t) => {
  const path = process.env.CUPEL_CROSS_CASES;
  if (!path) {
    t.skip("*** SKIPPED: CUPEL_CROSS_CASES not set (cargo test --test js_binding writes it) ***");
    return;
  }
  const cases = JSON.parse(readFileSync(path, "utf8"));
  assert.ok(cases.length >= 100);
  const before = cupel.liveHandles;
  let compared = 0;
  let grouped = 0;
  for (const [n, { case: c, expected }] of cases.entries()) {
    const items = cupel.items(c.items);
    const scorer = scorerOf(c.scorer);
    const slicer = slicerOf(c.slicer);
    const placer = c.uShaped ? cupel.uShaped() : cupel.chronological();
    const pipeline = cupel.pipeline({ scorer, slicer, placer, deduplication: c.deduplication, overflow: c.overflow });
    const budget = cupel.budget(c.budget);
    try {
      if (expected.error !== undefined) {
        assert.throws(() => pipeline.run(items, budget), (e) => e.status === expected.error, `case ${n}`);
        continue;
      }
      const { placed, report } = pipeline.run(items, budget, { report: true });
      assert.deepEqual(placed, expected.placed, `case ${n}: placed`);
      assert.deepEqual(report.included.map((d) => [d.index, d.reasonCode]), expected.included, `case ${n}: included`);
      assert.deepEqual(report.excluded.map((d) => [d.index, d.reasonCode]), expected.excluded, `case ${n}: excluded`);
      compared++;
      grouped += c.items.some((i) => i.group) ? 1 : 0;
    } finally {
      for (const h of [items, scorer, slicer, placer, pipeline, budget]) h.dispose();
    }
  }
  assert.ok(compared > cases.length / 2, `${compared} compared`);
  assert.ok(grouped > 50, `${grouped} grouped cases`);
  assert.equal(cupel.liveHandles, before, "every handle freed");
  assert.equal(Reason.Pinned, 1);
});
