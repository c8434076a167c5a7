// Tracing: pipeline.setTrace(level, callback) through the module's function
// table (a JavaScript function in a slot index.js grows), events per level,
// their fields, the host's times, exceptions in the callback, calls into the
// run from the callback, sessions, and the callback kept alive by the
// pipeline (GC).
import { test } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { load, CupelError, Status, TraceLevel, TraceKind, Keep, Pipeline, Reason } from "../index.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

const cupel = await load();

const FIXTURE = [
  { tokens: 100, score: 0.9, kind: "Message", content: "alpha", timestamp: 1000 },
  { tokens: 200, score: 0.5, kind: "Document", content: "beta", timestamp: 2000 },
  { tokens: 50, score: 0.1, kind: "ToolOutput", content: "gamma", timestamp: 3000 },
];

/** The contract's fixture: recency, greedy, chronological; budget 300 / 250. */
function fixture() {
  const recency = cupel.scorers.recency();
  const greedy = cupel.greedy();
  const placer = cupel.chronological();
  const pipeline = cupel.pipeline({ scorer: recency, slicer: greedy, placer });
  for (const h of [recency, greedy, placer]) h.dispose();
  const items = cupel.items(FIXTURE);
  const budget = cupel.budget({ maxTokens: 300, targetTokens: 250 });
  return { pipeline, items, budget, dispose: () => [pipeline, items, budget].forEach((h) => h.dispose()) };
}

const STAGES = ["classify", "score", "deduplicate", "slice", "place"];

test("events per level: 6 at stages, 7 at exclusions, 9 at full, 0 when cleared", () => {
  const f = fixture();
  const counts = [];
  for (const level of [TraceLevel.Stages, TraceLevel.Exclusions, TraceLevel.Full]) {
    const events = [];
    assert.equal(f.pipeline.setTrace(level, (e) => events.push(e)), f.pipeline, "returns the pipeline");
    assert.deepEqual(f.pipeline.run(f.items, f.budget).placed, [1, 2]);
    counts.push(events.length);
  }
  assert.deepEqual(counts, [6, 7, 9]);
  let after = 0;
  f.pipeline.setTrace(TraceLevel.Full, () => after++).clearTrace();
  f.pipeline.run(f.items, f.budget);
  f.pipeline.setTrace(TraceLevel.Full, () => after++).setTrace(TraceLevel.Stages, null);
  f.pipeline.run(f.items, f.budget);
  assert.equal(after, 0);
  f.dispose();
});

test("event fields: names, stages, counts, the exclusion's reason, the included items, the pipeline last", () => {
  const f = fixture();
  const events = [];
  f.pipeline.setTrace(TraceLevel.Full, (e) => events.push(e));
  const before = BigInt(Date.now()) * 1_000_000n;
  f.pipeline.run(f.items, f.budget);
  const after = BigInt(Date.now() + 1) * 1_000_000n;
  assert.deepEqual(
    events.map((e) => [e.kind, e.name]),
    [
      [TraceKind.Stage, "cupel.stage.classify"],
      [TraceKind.Stage, "cupel.stage.score"],
      [TraceKind.Stage, "cupel.stage.deduplicate"],
      [TraceKind.Stage, "cupel.stage.slice"],
      [TraceKind.Exclusion, "cupel.exclusion"],
      [TraceKind.Stage, "cupel.stage.place"],
      [TraceKind.Included, "cupel.item.included"],
      [TraceKind.Included, "cupel.item.included"],
      [TraceKind.Pipeline, "cupel.pipeline"],
    ],
  );
  const stages = events.filter((e) => e.kind === TraceKind.Stage);
  assert.deepEqual(stages.map((e) => e.stage), STAGES);
  assert.deepEqual(stages.map((e) => [e.itemCountIn, e.itemCountOut, e.exclusionCount]), [[3, 3, 0], [3, 3, 0], [3, 3, 0], [3, 2, 1], [2, 2, 0]]);
  for (const e of events) assert.equal(e.verbosity, "Full");
  for (const e of stages) {
    for (const field of ["item", "reason", "reasonName", "itemKind", "tokens", "score", "maxTokens"]) assert.equal(e[field], null, field);
  }
  const exclusion = events[4];
  assert.deepEqual(
    { stage: exclusion.stage, item: exclusion.item, reason: exclusion.reason, reasonName: exclusion.reasonName, itemKind: exclusion.itemKind, tokens: exclusion.tokens, score: exclusion.score },
    { stage: "slice", item: 0, reason: Reason.BudgetExceeded, reasonName: "BudgetExceeded", itemKind: "Message", tokens: 100, score: null },
  );
  const included = events.filter((e) => e.kind === TraceKind.Included);
  assert.deepEqual(included.map((e) => [e.stage, e.item, e.itemKind, e.tokens]), [["place", 1, "Document", 200], ["place", 2, "ToolOutput", 50]]);
  for (const e of included) assert.ok(e.score >= 0 && e.score <= 1 && e.reasonName === null);
  const pipeline = events[8];
  assert.deepEqual(
    [pipeline.stage, pipeline.itemCountIn, pipeline.itemCountOut, pipeline.exclusionCount, pipeline.maxTokens],
    [null, 3, 2, 1, 300],
  );
  // Times: the host's clock (the module has none), within the run; spans
  // share the run's start and end, events sit at its end.
  for (const e of events) {
    assert.equal(typeof e.startUnixNanos, "bigint");
    assert.equal(typeof e.durationNanos, "bigint");
    assert.ok(e.startUnixNanos >= before && e.startUnixNanos + e.durationNanos <= after, `${e.name} within the run`);
  }
  for (const e of stages) {
    assert.equal(e.startUnixNanos, pipeline.startUnixNanos);
    assert.equal(e.durationNanos, pipeline.durationNanos);
  }
  for (const e of [exclusion, ...included]) {
    assert.equal(e.durationNanos, 0n);
    assert.equal(e.startUnixNanos, pipeline.startUnixNanos + pipeline.durationNanos);
  }
  // Verbosity names per level.
  const names = [];
  for (const level of [TraceLevel.Stages, TraceLevel.Exclusions]) {
    f.pipeline.setTrace(level, (e) => names.push(e.verbosity));
    f.pipeline.run(f.items, f.budget);
  }
  assert.deepEqual([...new Set(names)], ["StageOnly", "StageAndExclusions"]);
  f.dispose();
});

test("setTrace checks its arguments", () => {
  const f = fixture();
  const is = (Class, re) => (e) => e.constructor === Class && e instanceof CupelError && re.test(e.message);
  assert.throws(() => f.pipeline.setTrace(3, () => {}), is(RangeError, /^level is 3; expected TraceLevel\.Stages \(0\), TraceLevel\.Exclusions \(1\) or TraceLevel\.Full \(2\)$/));
  assert.throws(() => f.pipeline.setTrace(-1, () => {}), is(RangeError, /^level is -1/));
  assert.throws(() => f.pipeline.setTrace(0.5, () => {}), is(RangeError, /^level is 0\.5; expected an integer/));
  assert.throws(() => f.pipeline.setTrace("full", () => {}), is(TypeError, /^level is the string "full"/));
  assert.throws(() => f.pipeline.setTrace(TraceLevel.Full, "f"), is(TypeError, /^callback is the string "f"; expected a function/));
  assert.throws(() => f.pipeline.setTrace(TraceLevel.Full), is(TypeError, /^callback is undefined/));
  assert.throws(() => Pipeline.prototype.setTrace.call(null, 0, () => {}), is(TypeError, /^this is null; setTrace is a method of a pipeline$/));
  f.pipeline.dispose();
  assert.throws(() => f.pipeline.setTrace(0, () => {}), is(TypeError, /^this pipeline was disposed$/));
  f.dispose();
});

test("a callback that throws: the run returns, then its exception is thrown; later events are not delivered", () => {
  const f = fixture();
  class Mine extends Error {}
  const seen = [];
  f.pipeline.setTrace(TraceLevel.Full, (e) => {
    seen.push(e.name);
    if (e.stage === "score") throw new Mine("from the callback");
  });
  assert.throws(() => f.pipeline.run(f.items, f.budget, { report: true }), (e) => e instanceof Mine && e.message === "from the callback");
  assert.deepEqual(seen, ["cupel.stage.classify", "cupel.stage.score"]);
  // Everything still works, and the next run delivers again from the start.
  seen.length = 0;
  f.pipeline.setTrace(TraceLevel.Stages, (e) => seen.push(e.name));
  assert.deepEqual(f.pipeline.run(f.items, f.budget).placed, [1, 2]);
  assert.equal(seen.length, 6);
  // A thrown non-Error value comes back as it was.
  f.pipeline.setTrace(TraceLevel.Stages, () => {
    throw 42;
  });
  assert.throws(() => f.pipeline.run(f.items, f.budget), (e) => e === 42);
  assert.equal(cupel.frames.length, 0, "no run left open");
  f.dispose();
});

test("a failed run sends nothing", () => {
  const f = fixture();
  let events = 0;
  f.pipeline.setTrace(TraceLevel.Full, () => events++);
  f.items.setTruncatable(1, Keep.Head, 1); // and the pipeline has no tokenizer
  assert.throws(() => f.pipeline.run(f.items, f.budget), (e) => e instanceof RangeError && /no tokenizer/.test(e.message));
  assert.equal(events, 0);
  f.dispose();
});

test("from the callback: reading the run's items is fine, changing them or calling into the pipeline throws", () => {
  const f = fixture();
  const other = fixture();
  const read = [];
  f.pipeline.setTrace(TraceLevel.Exclusions, (e) => {
    if (e.kind === TraceKind.Exclusion) read.push(f.items.get(e.item).content, f.items.length, f.budget.effective(0));
  });
  f.pipeline.run(f.items, f.budget);
  assert.deepEqual(read, ["alpha", 3, [300, 250]]);

  for (const [what, call] of [
    ["a run of the same pipeline", () => f.pipeline.run(f.items, f.budget)],
    ["its setTrace", () => f.pipeline.clearTrace()],
    ["its toJson", () => f.pipeline.toJson()],
    ["a push to the run's items", () => f.items.push({ tokens: 1 })],
    ["a change of the run's budget", () => f.budget.setOutputReserve(1)],
    ["a session of the pipeline", () => cupel.session(f.pipeline)],
  ]) {
    f.pipeline.setTrace(TraceLevel.Stages, (e) => {
      if (e.kind === TraceKind.Pipeline) call();
    });
    assert.throws(
      () => f.pipeline.run(f.items, f.budget),
      (e) => e.constructor === CupelError && e.status === Status.UNSUPPORTED && /in use by a run under way/.test(e.message),
      what,
    );
  }
  // Other handles may be read and written from the callback: all the events still come.
  const seen = [];
  f.pipeline.setTrace(TraceLevel.Full, (e) => {
    seen.push(e.name);
    other.pipeline.toJson();
    other.budget.toJson();
    other.items.push({ tokens: 1 });
  });
  f.pipeline.run(f.items, f.budget);
  assert.equal(seen.length, 9);
  assert.equal(other.items.length, 12);
  // Another pipeline may run from the callback (its own events go to its own callback).
  const inner = [];
  other.pipeline.setTrace(TraceLevel.Stages, (e) => inner.push(e.name));
  let placed = null;
  f.pipeline.setTrace(TraceLevel.Stages, (e) => {
    if (e.kind === TraceKind.Pipeline) placed = other.pipeline.run(f.items, other.budget).placed;
  });
  f.pipeline.run(f.items, f.budget);
  assert.deepEqual(placed, [1, 2]);
  assert.equal(inner.length, 6);
  // Disposing the pipeline from its own callback frees it when the run returns.
  f.pipeline.setTrace(TraceLevel.Stages, (e) => {
    if (e.kind === TraceKind.Pipeline) f.pipeline.dispose();
  });
  assert.deepEqual(f.pipeline.run(f.items, f.budget).placed, [1, 2]);
  assert.ok(f.pipeline.disposed);
  f.dispose();
  other.dispose();
});

test("sessions made from a traced pipeline trace their runs, and keep the callback once the pipeline is gone", () => {
  const f = fixture();
  const names = [];
  f.pipeline.setTrace(TraceLevel.Stages, (e) => names.push(e.name));
  const session = cupel.session(f.pipeline);
  f.pipeline.dispose();
  gc();
  session.run(f.items, f.budget);
  session.run(f.items, f.budget);
  assert.equal(names.length, 12);
  assert.equal(names.filter((n) => n === "cupel.pipeline").length, 2);
  // A session made before the trace was set does not trace.
  const g = fixture();
  const plain = cupel.session(g.pipeline);
  g.pipeline.setTrace(TraceLevel.Stages, () => assert.fail("a session keeps the trace it was made with"));
  plain.run(g.items, g.budget);
  session.dispose();
  plain.dispose();
  f.dispose();
  g.dispose();
});

test("policy sensitivity traces each variant's run once", () => {
  const f = fixture();
  const a = [];
  const b = [];
  const kind = cupel.preset("Chat");
  f.pipeline.setTrace(TraceLevel.Stages, (e) => a.push(e));
  kind.setTrace(TraceLevel.Full, (e) => b.push(e));
  cupel.policySensitivity([["recency", f.pipeline], ["chat", kind]], f.items, f.budget);
  assert.equal(a.length, 6);
  assert.equal(b.filter((e) => e.kind === TraceKind.Pipeline).length, 1);
  assert.ok(a.at(-1).startUnixNanos <= b[0].startUnixNanos, "the second run starts after the first");
  kind.dispose();
  f.dispose();
});

test("policy sensitivity: a first buffer too small runs the pipelines again, and still delivers each run once", async () => {
  // A load() of its own whose cupel_policy_sensitivity is counted.
  const lib = await load();
  const real = lib.x.cupel_policy_sensitivity;
  let calls = 0;
  lib.x = { ...lib.x, cupel_policy_sensitivity: (...args) => (calls++, real(...args)) };
  // 200 items of 20 kB each: the diffs' contents pass the first buffer.
  const items = lib.items(Array.from({ length: 200 }, (_, i) => ({ tokens: 10, content: `item ${i} `.repeat(2500), timestamp: i, priority: -i })));
  const budget = lib.budget({ maxTokens: 300, targetTokens: 250 });
  const recency = lib.pipelineFromJson({ scorers: [{ type: "recency", weight: 1 }] });
  const priority = lib.pipelineFromJson({ scorers: [{ type: "priority", weight: 1 }] });
  const events = [];
  recency.setTrace(TraceLevel.Stages, (e) => events.push(e.name));
  priority.setTrace(TraceLevel.Stages, (e) => events.push(e.name));
  const r = lib.policySensitivity([["recency", recency], ["priority", priority]], items, budget);
  assert.equal(calls, 2, "the call ran twice");
  assert.equal(r.diffs.length, 50);
  assert.equal(r.diffs[0].content, `item 0 `.repeat(2500));
  assert.equal(events.length, 12, "each run's events once");
  for (const h of [items, budget, recency, priority]) h.dispose();
});

test("the pipeline keeps its callback alive (GC), and drops it when disposed or cleared", async () => {
  const f = fixture();
  let calls = 0;
  const ref = (() => {
    const callback = () => calls++;
    f.pipeline.setTrace(TraceLevel.Stages, callback);
    return new WeakRef(callback);
  })();
  gc();
  await new Promise((r) => setTimeout(r, 0));
  gc();
  f.pipeline.run(f.items, f.budget);
  assert.equal(calls, 6, "still called after a collection");
  assert.ok(ref.deref(), "held by the pipeline");
  f.pipeline.clearTrace();
  for (let i = 0; i < 5 && ref.deref(); i++) {
    await new Promise((r) => setTimeout(r, 0));
    gc();
  }
  assert.equal(ref.deref(), undefined, "a cleared trace lets the callback go");
  // Disposed: the same.
  const ref2 = (() => {
    const callback = () => calls++;
    f.pipeline.setTrace(TraceLevel.Stages, callback);
    return new WeakRef(callback);
  })();
  f.pipeline.dispose();
  for (let i = 0; i < 5 && ref2.deref(); i++) {
    await new Promise((r) => setTimeout(r, 0));
    gc();
  }
  assert.equal(ref2.deref(), undefined, "a disposed pipeline lets the callback go");
  f.dispose();
});

test("one table slot per load(), whatever the number of traced pipelines", () => {
  const table = cupel.x.__indirect_function_table;
  const f = fixture();
  f.pipeline.setTrace(TraceLevel.Stages, () => {});
  const length = table.length;
  for (let i = 0; i < 20; i++) {
    const p = cupel.preset("Chat");
    p.setTrace(TraceLevel.Full, () => {});
    p.run(f.items, f.budget);
    p.dispose();
  }
  assert.equal(table.length, length);
  f.dispose();
});
