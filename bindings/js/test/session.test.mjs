// Sessions: cache-stable selection across turns. Item identity (keys and
// volatile items: `key` / `volatile` when pushed, setKey / setKeys /
// setVolatile / setVolatileMany, read back by get), cupel.session (first /
// append / compact, the stable prefix, the breakpoints, reset, the slack),
// the report's "session" object, the Deferred reason, and every argument
// error (nothing changes on error).
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, BreakpointMark, CupelError, Items, Reason, SessionAction, Status } from "../index.js";

const cupel = await load();

/** An error check: the class, the binding's brand and status, and the message. */
const fails = (Kind, status, pattern) => (e) =>
  e.constructor === Kind && e instanceof CupelError && e.status === status && pattern.test(e.message);
const range = (pattern) => fails(RangeError, Status.INVALID_ARGUMENT, pattern);
const nullArg = (pattern) => fails(TypeError, Status.NULL_POINTER, pattern);
const wrongType = (pattern) => fails(TypeError, Status.INVALID_ARGUMENT, pattern);

/** Three keyed items: by the pushed scores, items 0 and 1 fit 250 tokens, 2 does not. */
const ABC = [
  { tokens: 100, score: 0.9, content: "a", key: 1 },
  { tokens: 100, score: 0.8, content: "b", key: 2 },
  { tokens: 200, score: 0.5, content: "c", key: 3 },
];

/** Runs `f(pipeline, budget(max))` with a Greedy pipeline on the pushed scores, disposing what it made. */
function withPipeline(f) {
  const greedy = cupel.greedy();
  const pipeline = cupel.pipeline({ slicer: greedy });
  const made = [greedy, pipeline];
  const budget = (maxTokens) => {
    const b = cupel.budget({ maxTokens });
    made.push(b);
    return b;
  };
  try {
    return f(pipeline, budget, made);
  } finally {
    for (const h of made) h.dispose();
  }
}

test("keys and volatile flags read back from every way of setting them", () => {
  const items = cupel.items([
    { tokens: 10, key: 7 },
    { tokens: 10, volatile: true },
    { tokens: 10, key: 2n ** 64n - 1n, volatile: true },
    { tokens: 10, key: null, volatile: false },
  ]);
  const o200k = cupel.tokenizer("o200k_base");
  items.pushTexts(o200k, [{ text: "hello world", key: 5, volatile: true }]);
  const identity = () => Array.from({ length: items.length }, (_, i) => [items.get(i).key, items.get(i).volatile]);
  assert.deepEqual(identity(), [[7, false], [0, true], [2n ** 64n - 1n, true], [0, false], [5, true]]);
  assert.equal(items.setKey(3, 42).setVolatile(3, true), items);
  assert.deepEqual(identity()[3], [42, true]);
  assert.equal(items.setKeys(1, [11, 12n]).setVolatileMany(0, [true, false, false]), items);
  assert.deepEqual(identity(), [[7, true], [11, false], [12, false], [42, true], [5, true]]);
  items.setKey(3, 0).setVolatile(3, false);
  assert.deepEqual(identity()[3], [0, false]);
  // Records round-trip.
  const again = cupel.items([items.get(0), items.get(2)]);
  assert.deepEqual([again.get(0), again.get(1)], [items.get(0), items.get(2)]);
  again.dispose();
  o200k.dispose();
  items.dispose();
});

test("identity errors name the argument and change nothing", () => {
  const items = cupel.items([{ tokens: 1, key: 4 }, { tokens: 2 }]);
  const cases = [
    [() => items.push({ tokens: 1, key: -1 }), range(/^key is -1; it must be an integer from 0 to 2\^64 - 1$/)],
    [() => items.push({ tokens: 1, key: 2n ** 64n }), range(/^key is 18446744073709551616n; it must be an integer from 0 to 2\^64 - 1$/)],
    [() => items.push({ tokens: 1, key: 1.5 }), range(/^key is 1\.5; expected an integer$/)],
    [() => items.push({ tokens: 1, key: 2 ** 60 }), range(/^key is 1152921504606847000, beyond 2\^53 - 1 .*pass a BigInt$/)],
    [() => items.push({ tokens: 1, key: "7" }), wrongType(/^key is the string "7"; expected an integer$/)],
    [() => items.push([{ tokens: 1 }, { tokens: 1, volatile: "yes" }]), wrongType(/^items\[1\]\.volatile is the string "yes"; expected a boolean$/)],
    [() => items.setKey(0, -1), range(/^key is -1/)],
    [() => items.setKey(2, 1), range(/^index 2 is out of range: the list holds 2 items$/)],
    [() => items.setKey(0), nullArg(/^key is undefined; expected an integer$/)],
    [() => Items.prototype.setKey.call(null, 0, 1), nullArg(/^this is null; setKey is a method of an items list$/)],
    [() => items.setVolatile(0, 1), wrongType(/^isVolatile is 1; expected a boolean$/)],
    [() => items.setVolatile(-1, true), range(/^index -1 is out of range/)],
    [() => items.setKeys(0, [1, 2, 3]), range(/^first 0 \+ count 3 is past the end: the list holds 2 items$/)],
    [() => items.setKeys(0, [1, -2]), range(/^keys\[1\] is -2/)],
    [() => items.setVolatileMany(1, [true, true]), range(/^first 1 \+ count 2 is past the end: the list holds 2 items$/)],
    [() => items.setVolatileMany(0, [true, null]), nullArg(/^flags\[1\] is null; expected a boolean$/)],
  ];
  for (const [call, check] of cases) {
    assert.throws(call, check, String(call));
    assert.equal(items.length, 2);
    assert.deepEqual([items.get(0).key, items.get(0).volatile, items.get(1).key, items.get(1).volatile], [4, false, 0, false]);
  }
  items.dispose();
  assert.throws(() => items.setKey(0, 1), (e) => e instanceof TypeError && e.message === "this items list was disposed");
  assert.throws(() => items.setVolatile(0, true), (e) => e instanceof TypeError && e.message === "this items list was disposed");
});

test("the first run is the pipeline's; the same list again appends, stable prefix the whole output", () =>
  withPipeline((pipeline, budget) => {
    const s = cupel.session(pipeline);
    assert.equal(s.lastAction, SessionAction.First);
    assert.deepEqual(s.stablePrefix, { items: 0, tokens: 0 });
    assert.deepEqual(s.breakpoints, []);
    const items = cupel.items(ABC);
    const b = budget(250);
    const first = s.run(items, b).placed;
    assert.deepEqual(first, pipeline.run(items, b).placed);
    assert.deepEqual(first, [0, 1]);
    assert.equal(s.lastAction, "first");
    assert.deepEqual(s.stablePrefix, { items: 0, tokens: 0 });
    assert.deepEqual(s.breakpoints, [{ items: 2, tokens: 200, mark: BreakpointMark.End }]);
    assert.deepEqual(s.run(items, b).placed, first);
    assert.equal(s.lastAction, SessionAction.Append);
    assert.deepEqual(s.stablePrefix, { items: 2, tokens: 200 });
    s.dispose();
    items.dispose();
  }));

test("a new item that fits is appended after the old output", () =>
  withPipeline((pipeline, budget) => {
    const s = cupel.session(pipeline);
    const items = cupel.items(ABC);
    assert.deepEqual(s.run(items, budget(350)).placed, [0, 1]);
    items.push({ tokens: 50, score: 1, content: "d", key: 4 }); // the best score
    assert.deepEqual(s.run(items, budget(350)).placed, [0, 1, 3]);
    assert.equal(s.lastAction, SessionAction.Append);
    assert.deepEqual(s.stablePrefix, { items: 2, tokens: 200 });
    assert.deepEqual(s.breakpoints, [
      { items: 2, tokens: 200, mark: BreakpointMark.Stable },
      { items: 3, tokens: 250, mark: BreakpointMark.End },
    ]);
    s.dispose();
    items.dispose();
  }));

test("a volatile item is placed last", () =>
  withPipeline((pipeline, budget) => {
    const s = cupel.session(pipeline);
    const items = cupel.items([...ABC, { tokens: 20, score: 1, content: "open file", volatile: true }]);
    const b = budget(250);
    assert.deepEqual(pipeline.run(items, b).placed, [3, 0, 1]);
    assert.deepEqual(s.run(items, b).placed, [0, 1, 3]);
    assert.deepEqual(s.breakpoints, [{ items: 2, tokens: 200, mark: BreakpointMark.End }]);
    items.setContent(3, "open file, edited");
    assert.deepEqual(s.run(items, b).placed, [0, 1, 3]);
    assert.equal(s.lastAction, SessionAction.Append);
    assert.deepEqual(s.stablePrefix, { items: 2, tokens: 200 });
    s.dispose();
    items.dispose();
  }));

test("an item left out before stays out, Deferred, when the pipeline alone would take it", () =>
  withPipeline((pipeline, budget) => {
    const s = cupel.session(pipeline);
    const items = cupel.items(ABC);
    s.run(items, budget(250));
    const b = budget(400);
    assert.deepEqual(pipeline.run(items, b).placed, [0, 1, 2]);
    const { placed, report } = s.run(items, b, { report: true });
    assert.deepEqual(placed, [0, 1]);
    assert.deepEqual(report.included.map((d) => d.index), [0, 1]);
    assert.deepEqual(report.excluded.map((d) => [d.index, d.reason, d.reasonCode]), [[2, "Deferred", Reason.Deferred]]);
    assert.equal(Reason.Deferred, 19);
    assert.equal(cupel.reasonName(19), "Deferred");
    assert.deepEqual(JSON.parse(report.json).session, {
      action: "append",
      stablePrefixItems: 2,
      stablePrefixTokens: 200,
      breakpoints: [{ items: 2, tokens: 200, at: "end" }],
    });
    s.dispose();
    items.dispose();
  }));

/**
 * A conversation: a pinned system prompt of 300 tokens, keyed messages
 * scored by recency, one volatile document per turn; `turns` lists each
 * turn's new messages' tokens. Each turn's { placed, action, prefix, breakpoints, session }.
 */
function conversation(s, turns, maxTokens = 1000) {
  const history = [{ tokens: 300, content: "system", pinned: true, key: 1, timestamp: 0 }];
  const budget = cupel.budget({ maxTokens });
  const out = [];
  turns.forEach((messages, t) => {
    for (const tokens of messages) {
      const n = history.length;
      history.push({ tokens, content: `message ${n}`, key: n + 1, timestamp: n });
    }
    const items = cupel.items([...history, { tokens: 200, kind: "Document", content: `doc ${t + 1}`, volatile: true, timestamp: 100 }]);
    const { placed, report } = s.run(items, budget, { report: true });
    out.push({ placed, action: s.lastAction, prefix: s.stablePrefix, breakpoints: s.breakpoints, session: JSON.parse(report.json).session });
    items.dispose();
  });
  budget.dispose();
  return out;
}

function withRecencyPipeline(f) {
  const recency = cupel.scorers.recency();
  const greedy = cupel.greedy();
  const chrono = cupel.chronological();
  const pipeline = cupel.pipeline({ scorer: recency, slicer: greedy, placer: chrono });
  try {
    return f(pipeline);
  } finally {
    for (const h of [recency, greedy, chrono, pipeline]) h.dispose();
  }
}

test("a conversation appends, then compacts with the slack left free", () =>
  withRecencyPipeline((pipeline) => {
    const s = cupel.session(pipeline);
    const [t1, t2, t3] = conversation(s, [[150], [150, 150], [150, 150]]);
    assert.deepEqual([t1.placed, t1.action, t1.prefix], [[0, 1, 2], "first", { items: 0, tokens: 0 }]);
    assert.deepEqual(t1.breakpoints, [
      { items: 1, tokens: 300, mark: "pinned" },
      { items: 2, tokens: 450, mark: "end" },
    ]);
    assert.deepEqual([t2.placed, t2.action, t2.prefix], [[0, 1, 2, 3, 4], "append", { items: 2, tokens: 450 }]);
    assert.deepEqual(t2.breakpoints, [
      { items: 1, tokens: 300, mark: "pinned" },
      { items: 2, tokens: 450, mark: "stable" },
      { items: 4, tokens: 750, mark: "end" },
    ]);
    // 300 + 5 x 150 + 200 > 1000: a compaction; its messages within (1 - 0.2) x 700.
    assert.deepEqual([t3.placed, t3.action, t3.prefix], [[0, 3, 4, 5, 6], "compact", { items: 1, tokens: 300 }]);
    assert.deepEqual(t3.session, {
      action: "compact",
      stablePrefixItems: 1,
      stablePrefixTokens: 300,
      breakpoints: [
        { items: 1, tokens: 300, at: "stable" },
        { items: 4, tokens: 750, at: "end" },
      ],
    });
    assert.deepEqual([t1.session.action, t2.session.action], ["first", "append"]);
    s.dispose();
  }));

test("breakpoints are ascending, at most four, and the report's", () =>
  withRecencyPipeline((pipeline) => {
    for (const slack of [0, 0.2, 0.5]) {
      const s = cupel.session(pipeline, { slack });
      assert.equal(s.slack, slack);
      const runs = conversation(s, [[150], [100, 120], [90, 200], [150, 150], [60], [300, 40], [80, 80]]);
      for (const { placed, prefix, breakpoints, session } of runs) {
        assert.ok(breakpoints.length >= 1 && breakpoints.length <= 4, JSON.stringify(breakpoints));
        for (let k = 1; k < breakpoints.length; k++) {
          assert.ok(breakpoints[k - 1].items < breakpoints[k].items && breakpoints[k - 1].tokens < breakpoints[k].tokens);
        }
        assert.ok(breakpoints.every((b) => b.items > 0 && b.items <= placed.length && Object.values(BreakpointMark).includes(b.mark)));
        assert.equal(breakpoints.at(-1).mark, BreakpointMark.End);
        assert.deepEqual(session.breakpoints, breakpoints.map(({ items, tokens, mark }) => ({ items, tokens, at: mark })));
        assert.ok(prefix.items <= placed.length);
      }
      assert.ok(runs.some((r) => r.action === SessionAction.Compact));
      s.dispose();
    }
  }));

test("duplicate keys fail naming both indices, and the failed run changes nothing", () =>
  withPipeline((pipeline, budget) => {
    const failed = cupel.session(pipeline);
    const clean = cupel.session(pipeline);
    const b = budget(350);
    const items = cupel.items(ABC);
    assert.deepEqual(failed.run(items, b).placed, [0, 1]);
    assert.deepEqual(clean.run(items, b).placed, [0, 1]);
    const dup = cupel.items([...ABC, { tokens: 10, score: 0.1, content: "dup", key: 2 }]);
    assert.throws(() => failed.run(dup, b, { report: true }), range(/\bkey\b/));
    assert.throws(() => failed.run(dup, b), (e) => /\b1\b/.test(e.message) && /\b3\b/.test(e.message));
    // The pipeline ignores keys.
    assert.deepEqual(pipeline.run(dup, budget(250)).placed, [3, 0, 1]);
    assert.equal(failed.lastAction, SessionAction.First);
    assert.deepEqual(failed.stablePrefix, { items: 0, tokens: 0 });
    assert.deepEqual(failed.breakpoints, clean.breakpoints);
    items.push({ tokens: 50, score: 1, content: "d", key: 4 });
    assert.deepEqual(failed.run(items, b).placed, [0, 1, 3]);
    assert.deepEqual(clean.run(items, b).placed, [0, 1, 3]);
    assert.equal(failed.lastAction, SessionAction.Append);
    assert.equal(clean.lastAction, SessionAction.Append);
    assert.deepEqual(failed.stablePrefix, { items: 2, tokens: 200 });
    assert.deepEqual(failed.stablePrefix, clean.stablePrefix);
    assert.deepEqual(failed.breakpoints, clean.breakpoints);
    for (const h of [failed, clean, items, dup]) h.dispose();
  }));

test("reset makes the next run first; the slack stays", () =>
  withPipeline((pipeline, budget) => {
    const s = cupel.session(pipeline);
    const items = cupel.items(ABC);
    const b = budget(250);
    s.slack = 0.3;
    s.run(items, b);
    s.run(items, b);
    assert.equal(s.lastAction, SessionAction.Append);
    assert.equal(s.reset(), s);
    assert.equal(s.lastAction, SessionAction.First);
    assert.deepEqual(s.stablePrefix, { items: 0, tokens: 0 });
    assert.deepEqual(s.breakpoints, []);
    assert.equal(s.slack, 0.3);
    const { placed, report } = s.run(items, b, { report: true });
    assert.deepEqual(placed, [0, 1]);
    assert.equal(s.lastAction, SessionAction.First);
    assert.deepEqual(s.stablePrefix, { items: 0, tokens: 0 });
    assert.equal(JSON.parse(report.json).session.action, "first");
    s.dispose();
    items.dispose();
  }));

test("a session keeps working after its pipeline is disposed", () => {
  const greedy = cupel.greedy();
  const pipeline = cupel.pipeline({ slicer: greedy });
  const s = cupel.session(pipeline);
  pipeline.dispose();
  greedy.dispose();
  const items = cupel.items(ABC);
  const b = cupel.budget({ maxTokens: 250 });
  assert.deepEqual(s.run(items, b).placed, [0, 1]);
  assert.deepEqual(s.run(items, b).placed, [0, 1]);
  assert.equal(s.lastAction, SessionAction.Append);
  assert.deepEqual(s.stablePrefix, { items: 2, tokens: 200 });
  for (const h of [s, items, b]) h.dispose();
});

test("the report's JSON has the session object; a pipeline's has none", () =>
  withPipeline((pipeline, budget) => {
    const s = cupel.session(pipeline);
    const items = cupel.items(ABC);
    const b = budget(250);
    assert.deepEqual(JSON.parse(s.run(items, b, { report: true }).report.json).session, {
      action: "first",
      stablePrefixItems: 0,
      stablePrefixTokens: 0,
      breakpoints: [{ items: 2, tokens: 200, at: "end" }],
    });
    const { placed, report } = s.run(items, b, { report: true });
    assert.deepEqual(JSON.parse(report.json).session, {
      action: "append",
      stablePrefixItems: 2,
      stablePrefixTokens: 200,
      breakpoints: [{ items: 2, tokens: 200, at: "end" }],
    });
    assert.deepEqual(report.included.map((d) => d.index), placed);
    assert.equal(s.run(items, b).report, undefined);
    assert.equal(JSON.parse(pipeline.run(items, b, { report: true }).report.json).session, undefined);
    s.dispose();
    items.dispose();
  }));

test("the slack: default 0.2, [0, 1), the bad ones refused", () =>
  withPipeline((pipeline) => {
    const s = cupel.session(pipeline);
    assert.equal(s.slack, 0.2);
    s.slack = 0;
    assert.equal(s.slack, 0);
    s.slack = 0.35;
    for (const [bad, shown] of [[1, "1"], [-0.1, "-0.1"], [NaN, "NaN"], [Infinity, "Infinity"], [1.5, "1.5"]]) {
      assert.throws(() => {
        s.slack = bad;
      }, range(new RegExp(`^slack is ${shown}; it must be in \\[0, 1\\)`)));
      assert.equal(s.slack, 0.35);
    }
    assert.throws(() => {
      s.slack = "0.2";
    }, wrongType(/^slack is the string "0\.2"; expected a number$/));
    assert.throws(() => {
      s.slack = null;
    }, nullArg(/^slack is null; expected a number$/));
    assert.equal(s.slack, 0.35);
    s.dispose();
    assert.throws(() => cupel.session(pipeline, { slack: 1 }), range(/^options\.slack is 1; it must be in \[0, 1\)/));
    assert.throws(() => cupel.session(pipeline, 5), wrongType(/^options is 5; expected an object$/));
  }));

test("session arguments, and a disposed session", () =>
  withPipeline((pipeline, budget) => {
    const before = cupel.liveHandles;
    assert.throws(() => cupel.session(null), nullArg(/^pipeline is null; expected a Pipeline$/));
    assert.throws(() => cupel.session(budget(10)), wrongType(/^pipeline is a Budget; expected a Pipeline$/));
    const g = cupel.greedy();
    const disposed = cupel.pipeline({ slicer: g });
    disposed.dispose();
    g.dispose();
    assert.throws(() => cupel.session(disposed), (e) => e instanceof TypeError && e.message === "pipeline was disposed");
    const s = cupel.session(pipeline);
    const items = cupel.items(ABC);
    const b = budget(250);
    assert.throws(() => s.run(null, b), nullArg(/^items is null; expected an Items list$/));
    assert.throws(() => s.run(items, items), wrongType(/^budget is an Items; expected a Budget$/));
    assert.throws(() => s.run(items, b, { report: 1 }), wrongType(/^options\.report is 1; expected a boolean$/));
    const gone = cupel.items([]);
    gone.dispose();
    assert.throws(() => s.run(gone, b), (e) => e instanceof TypeError && e.message === "items was disposed");
    assert.equal(s.lastAction, SessionAction.First);
    s.dispose();
    s.dispose(); // idempotent
    assert.equal(s.disposed, true);
    const disposedSession = (e) => e instanceof TypeError && e instanceof CupelError && e.message === "this session was disposed";
    for (const call of [
      () => s.run(items, b),
      () => s.slack,
      () => s.stablePrefix,
      () => s.lastAction,
      () => s.breakpoints,
      () => s.reset(),
      () => {
        s.slack = 0.1;
      },
    ]) {
      assert.throws(call, disposedSession, String(call));
    }
    items.dispose();
    assert.equal(cupel.liveHandles, before + 2); // the two budgets made above, disposed by withPipeline
  }));
