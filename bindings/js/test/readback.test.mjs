// Reading items back (Items.get over cupel_items_tokens .. _metadata_entry)
// and naming reasons (Cupel.reasonName over cupel_reason_str).
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, CupelError, Keep, Reason, Status } from "../index.js";

const cupel = await load();

test("an item reads back with every attribute it was given", () => {
  const items = cupel.items([
    {
      tokens: 120,
      score: 0.25,
      kind: "ToolOutput",
      content: "grep: 3 matches ✓ 😀",
      timestamp: new Date(Date.UTC(2026, 0, 2)),
      priority: -4,
      pinned: true,
      relevanceHint: 0.75,
      source: "Tool",
      tags: ["auth", "db", "auth"],
      metadata: { "cupel:trust": 0.9, owner: "ops", __proto__x: "y" },
      group: 7,
      variants: [{ tokens: 30, value: 0.5, content: "3 matches ✓" }, { tokens: 2, value: 0.1 }],
      truncatable: { keep: Keep.BothEnds, minTokens: 8 },
      key: 2n ** 64n - 1n,
      volatile: true,
    },
  ]);
  assert.deepEqual(items.get(0), {
    tokens: 120,
    score: 0.25,
    kind: "ToolOutput",
    content: "grep: 3 matches ✓ 😀",
    timestamp: Date.UTC(2026, 0, 2),
    priority: -4,
    pinned: true,
    relevanceHint: 0.75,
    source: "Tool",
    group: 7,
    tags: ["auth", "db", "auth"],
    metadata: { "cupel:trust": "0.9", owner: "ops", __proto__x: "y" },
    variants: [
      { tokens: 30, value: 0.5, content: "3 matches ✓" },
      { tokens: 2, value: 0.1, content: null },
    ],
    truncatable: { keep: Keep.BothEnds, minTokens: 8 },
    key: 2n ** 64n - 1n,
    volatile: true,
  });
  items.dispose();
});

test("absent values read back as null, defaults as the library's", () => {
  const items = cupel.items([{ tokens: 5 }, { tokens: -3, score: 0.5, kind: "message" }]);
  assert.deepEqual(items.get(0), {
    tokens: 5,
    score: 0,
    kind: "Message",
    content: null,
    timestamp: null,
    priority: null,
    pinned: false,
    relevanceHint: null,
    source: "Chat",
    group: 0,
    tags: [],
    metadata: {},
    variants: [],
    truncatable: null,
    key: 0,
    volatile: false,
  });
  // Kinds compare with ASCII case folding: the first spelling is kept.
  assert.equal(items.get(1).kind, "Message");
  assert.equal(items.get(1).tokens, -3);
  // A metadata key named __proto__ is an own property, not the prototype.
  items.setMetadata(0, "__proto__", "p");
  const md = items.get(0).metadata;
  assert.deepEqual(Object.keys(md), ["__proto__"]);
  assert.equal(Object.getPrototypeOf(md), Object.prototype);
  items.dispose();
});

test("setters show in the read-back, and metadata replaces by key", () => {
  const items = cupel.items([{ tokens: 1 }, { tokens: 2 }]);
  items
    .setContent(1, "hello")
    .setTimestamp(1, 1234)
    .setPriority(1, 9)
    .setPinned(1, true)
    .setRelevanceHint(1, 0.5)
    .setSource(1, "Rag")
    .addTag(1, "x")
    .addTag(1, "x")
    .setMetadata(1, "a", "1")
    .setMetadata(1, "b", "2")
    .setMetadata(1, "a", "3")
    .setGroup(1, 4);
  const it = items.get(1);
  assert.equal(it.content, "hello");
  assert.equal(it.timestamp, 1234);
  assert.equal(it.priority, 9);
  assert.equal(it.pinned, true);
  assert.equal(it.relevanceHint, 0.5);
  assert.equal(it.source, "Rag");
  assert.deepEqual(it.tags, ["x", "x"]);
  assert.deepEqual(Object.entries(it.metadata), [["a", "3"], ["b", "2"]]);
  assert.equal(it.group, 4);
  items.setPinned(1, false);
  assert.equal(items.get(1).pinned, false);
  // Item 0 is untouched.
  assert.equal(items.get(0).content, null);
  items.dispose();
});

test("records round-trip: pushing what get() gave makes the same item", () => {
  const a = cupel.items([
    { tokens: 10, score: 0.1, kind: "Memory", content: "c", timestamp: -5, priority: 2, tags: ["t"], metadata: { k: "v" }, group: 3, key: 12, volatile: true },
    { tokens: 0, relevanceHint: 1.5, source: "Web" },
  ]);
  const records = [a.get(0), a.get(1)];
  const b = cupel.items(records);
  assert.deepEqual([b.get(0), b.get(1)], records);
  a.dispose();
  b.dispose();
});

test("integers past 2^53 read back exactly, as BigInt", () => {
  const items = cupel.items([{ tokens: 2n ** 62n + 1n, priority: -(2n ** 63n), timestamp: 2n ** 63n - 1n, group: 2n ** 64n - 1n }]);
  const it = items.get(0);
  assert.equal(it.tokens, 2n ** 62n + 1n);
  assert.equal(it.priority, -(2n ** 63n));
  assert.equal(it.timestamp, 2n ** 63n - 1n);
  assert.equal(it.group, 2n ** 64n - 1n);
  items.setGroup(0, Number.MAX_SAFE_INTEGER);
  assert.equal(items.get(0).group, Number.MAX_SAFE_INTEGER);
  items.dispose();
});

test("an index out of range is a RangeError naming it, in the caller's base", () => {
  const items = cupel.items([{ tokens: 1 }, { tokens: 2 }, { tokens: 3 }]);
  for (const [index, shown] of [[3, "3"], [-1, "-1"], [2 ** 32, "4294967296"], [2n ** 64n, "18446744073709551616n"]]) {
    assert.throws(
      () => items.get(index),
      (e) => e instanceof RangeError && e.message === `index ${shown} is out of range: the list holds 3 items`,
      String(index),
    );
  }
  assert.throws(() => items.get(1.5), /^RangeError: index is 1\.5; expected an integer$/);
  assert.throws(() => items.get("1"), /^TypeError: index is the string "1"; expected an integer$/);
  assert.throws(() => items.get(), /^TypeError: index is undefined; expected an integer$/);
  assert.equal(items.get(2n).tokens, 3);
  items.clear();
  assert.throws(() => items.get(0), /index 0 is out of range: the list holds 0 items/);
  items.dispose();
  assert.throws(() => items.get(0), (e) => e instanceof TypeError && e.message === "this items list was disposed");
});

test("reason names come from the library and agree with the Reason codes", () => {
  for (const [name, code] of Object.entries(Reason)) {
    assert.equal(cupel.reasonName(code), name, `code ${code}`);
    assert.equal(cupel.reasonName(BigInt(code)), name);
  }
  const known = new Set(Object.values(Reason));
  for (let code = -3; code < 40; code++) {
    if (!known.has(code)) assert.equal(cupel.reasonName(code), "Unknown", `code ${code}`);
  }
  // The library takes an int: a number outside it is no reason, never a wrapped one.
  assert.equal(cupel.reasonName(2 ** 32 + Reason.BudgetExceeded), "Unknown");
  assert.equal(cupel.reasonName(-(2 ** 31) - 1), "Unknown");
  assert.equal(cupel.reasonName(2n ** 64n + 10n), "Unknown");
  assert.equal(cupel.reasonName(-(2 ** 31)), "Unknown");
  assert.throws(() => cupel.reasonName(1.5), (e) => e instanceof RangeError && /^code is 1\.5/.test(e.message));
  assert.throws(() => cupel.reasonName("10"), (e) => e instanceof TypeError && e instanceof CupelError && /^code is the string "10"/.test(e.message));
  assert.throws(() => cupel.reasonName(null), (e) => e instanceof TypeError && e.status === Status.NULL_POINTER);
});

test("a report's reasons are the library's names for its codes", () => {
  const items = cupel.items([
    { tokens: 50, kind: "SystemPrompt", pinned: true, content: "s" },
    { tokens: 100, content: "dup", timestamp: 1 },
    { tokens: 100, content: "dup", timestamp: 2 },
    { tokens: -1 },
    { tokens: 0 },
    { tokens: 900, timestamp: 3 },
  ]);
  const p = cupel.pipeline({ scorer: cupel.scorers.recency(), slicer: cupel.greedy() });
  const { report } = p.run(items, cupel.budget({ maxTokens: 400 }), { report: true });
  const all = [...report.included, ...report.excluded];
  assert.equal(all.length, 6);
  const seen = new Set();
  for (const d of all) {
    assert.equal(d.reason, cupel.reasonName(d.reasonCode));
    assert.equal(Reason[d.reason], d.reasonCode);
    seen.add(d.reason);
  }
  assert.deepEqual([...seen].sort(), ["BudgetExceeded", "Deduplicated", "NegativeTokens", "Pinned", "Scored", "ZeroToken"]);
  p.dispose();
  items.dispose();
});
