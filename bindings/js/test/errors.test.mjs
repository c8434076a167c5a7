// Arguments: checked before they reach the module, named as this API
// names them, thrown as TypeError / RangeError (which are also
// `instanceof CupelError`), and a call that throws changes nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, CupelError, Status } from "../index.js";

const cupel = await load();

/** A predicate for assert.throws: the error class and the exact message. */
const is = (Class, message) => (e) => {
  assert.equal(e.constructor, Class, `${e.constructor.name}: ${e.message}`);
  assert.ok(e instanceof CupelError, "instanceof CupelError");
  if (message instanceof RegExp) assert.match(e.message, message);
  else assert.equal(e.message, message);
  assert.equal(e.detail, e.message);
  assert.equal(e.statusName, Object.keys(Status).find((k) => Status[k] === e.status));
  return true;
};

test("CupelError covers the binding's errors and no others", () => {
  assert.ok(!(new TypeError("x") instanceof CupelError));
  assert.ok(!(null instanceof CupelError));
  assert.ok(new CupelError(Status.CAPACITY, "x") instanceof CupelError);
  assert.ok(new CupelError(Status.CAPACITY, "x") instanceof Error);
  try {
    cupel.knapsack(0);
    assert.fail("no error");
  } catch (e) {
    assert.ok(e instanceof RangeError && e instanceof CupelError && e.status === Status.INVALID_ARGUMENT);
  }
});

test("integers: exact safe numbers or BigInts in the C type's range, never rounded or wrapped", () => {
  const items = cupel.items();
  items.push({ tokens: Number.MAX_SAFE_INTEGER });
  assert.equal(items.get(0).tokens, Number.MAX_SAFE_INTEGER);
  assert.throws(() => items.push({ tokens: 2 ** 53 }), is(RangeError, /^tokens is 9007199254740992, beyond 2\^53 - 1 in size .*pass a BigInt$/));
  assert.throws(() => items.push({ tokens: -(2 ** 60) }), is(RangeError, /^tokens is -1152921504606847000, beyond 2\^53 - 1 in size/));
  items.push({ tokens: 2n ** 63n - 1n }).push({ tokens: -(2n ** 63n) });
  assert.deepEqual([items.get(1).tokens, items.get(2).tokens], [2n ** 63n - 1n, -(2n ** 63n)]);
  assert.throws(() => items.push({ tokens: 2n ** 63n }), is(RangeError, "tokens is 9223372036854775808n; it must be an integer from -2^63 to 2^63 - 1"));
  assert.throws(() => items.push({ tokens: "10" }), is(TypeError, 'tokens is the string "10"; expected an integer'));
  assert.throws(() => items.push({ tokens: 10.7 }), is(RangeError, "tokens is 10.7; expected an integer"));
  assert.throws(() => items.push({ score: 1 }), is(TypeError, "tokens is undefined; expected an integer"));
  // size_t is 32 bits in the module: 2^32 must not wrap to 0.
  assert.throws(() => items.setContent(2 ** 32, "x"), is(RangeError, "index 4294967296 is out of range: the list holds 3 items"));
  assert.equal(items.get(0).content, null);
  assert.throws(() => items.setGroup(0, -1), is(RangeError, "group is -1; it must be an integer from 0 to 2^64 - 1"));
  assert.throws(() => items.setGroup(0, 2n ** 64n), is(RangeError, /^group is 18446744073709551616n/));
  assert.throws(
    () => cupel.countQuota(cupel.greedy(), [{ kind: "Message", requireCount: 1, capCount: 2 ** 32 + 2 }]),
    is(RangeError, "entries[0].capCount is 4294967298; it must be an integer from 0 to 2^32 - 1"),
  );
  assert.throws(() => cupel.pipeline({ slicer: cupel.greedy(), overflow: 2 ** 32 }), is(RangeError, /^overflow is 4294967296/));
  assert.throws(() => cupel.pipeline({ slicer: cupel.greedy(), overflow: 7 }), is(RangeError, /strategy/));
  assert.throws(() => cupel.stream(100, -1), is(RangeError, /^batchSize is -1/));
  assert.equal(items.length, 3);
  items.dispose();
});

test("strings: a lone surrogate or a NUL is refused, not replaced or cut", () => {
  const items = cupel.items([{ tokens: 1 }]);
  const cases = [
    [() => items.push({ tokens: 1, kind: "a\uD800b" }), "kind holds a lone surrogate (U+D800) at index 1: it has no UTF-8 form"],
    [() => items.push({ tokens: 1, content: "\uDC00" }), "content holds a lone surrogate (U+DC00) at index 0: it has no UTF-8 form"],
    [() => items.push([{ tokens: 1 }, { tokens: 1, tags: ["ok", "x\uDBFF"] }]), /^items\[1\]\.tags\[1\] holds a lone surrogate \(U\+DBFF\)/],
    [() => items.setMetadata(0, "\uD83D", "v"), /^key holds a lone surrogate/],
    [() => items.setSource(0, "a\uDFFFb"), /^source holds a lone surrogate/],
    [() => items.setContent(0, "ab\0cd"), "content holds a NUL character at index 2: the library's strings end at NUL"],
    [() => cupel.scorers.metadataKey("k", "\uD800", 1), /^value holds a lone surrogate/],
    [() => cupel.budget({ maxTokens: 10, reserved: { "\uD800": 1 } }), /^kind holds a lone surrogate/],
  ];
  for (const [f, message] of cases) assert.throws(f, is(RangeError, message));
  assert.equal(items.length, 1);
  assert.equal(items.get(0).content, null);
  // A surrogate pair is one code point: it round-trips.
  items.setContent(0, "😀 \uD83D\uDE00");
  assert.equal(items.get(0).content, "😀 😀");
  items.dispose();
});

test("a blank source is refused here exactly as the library refuses a blank kind", () => {
  // The library checks kinds (Rust's str::trim); this binding checks
  // sources before the push so that a push stays all or nothing. Every
  // BMP character must get the same answer from both.
  const items = cupel.items();
  let refused = 0;
  for (let c = 0; c <= 0xffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const ch = String.fromCharCode(c);
    const kind = attempt(() => items.push({ tokens: 1, kind: `${ch}${ch}` }));
    const before = items.length;
    const source = attempt(() => items.push({ tokens: 1, source: `${ch}${ch}` }));
    assert.equal(source, kind, `U+${c.toString(16)}: kind ${kind}, source ${source}`);
    assert.equal(items.length, before + (source === "ok" ? 1 : 0), "a refused push adds nothing");
    if (kind !== "ok") refused++;
  }
  assert.equal(refused, 26, "NUL and the 25 White_Space characters of the BMP"); // NUL: both refuse it here
  items.dispose();
});

function attempt(f) {
  try {
    f();
    return "ok";
  } catch (e) {
    return e.constructor.name;
  }
}

test("a push is all or nothing, and so is cupel.items()", () => {
  const items = cupel.items([{ tokens: 1, content: "keep" }]);
  const bad = [
    [{ tokens: 1 }, { tokens: 2, content: "" }],
    [{ tokens: 1, content: "x" }, { tokens: 2, kind: " " }],
    [{ tokens: 1, tags: ["a"] }, { tokens: 2, score: NaN }],
    [{ tokens: 1 }, { tokens: 2, source: "\u3000" }],
    [{ tokens: 1 }, { tokens: 2, metadata: { k: {} } }],
    [{ tokens: 1 }, { tokens: 2, timestamp: new Date(NaN) }],
    [{ tokens: 1 }, { tokens: 2, pinned: "yes" }],
    [{ tokens: 1 }, null],
  ];
  const messages = [
    "items[1].content is empty; content must be non-empty",
    'items[1].kind " " is empty or only whitespace; a kind needs a visible name',
    "items[1].score is NaN; scores must be finite",
    'items[1].source "\u3000" is empty or only whitespace; a source needs a visible name',
    'items[1].metadata["k"] is an object; expected a string or a number',
    "items[1].timestamp is an invalid Date",
    'items[1].pinned is the string "yes"; expected a boolean',
    "items[1] is null; expected an item object",
  ];
  const live = cupel.liveHandles;
  bad.forEach((list, k) => {
    assert.throws(() => items.push(list), (e) => e.message === messages[k], messages[k]);
    assert.equal(items.length, 1);
    assert.throws(() => cupel.items(list), (e) => e.message === messages[k]);
    assert.equal(cupel.liveHandles, live, "no list left behind");
  });
  assert.deepEqual(items.get(0).content, "keep");
  // One item alone names its fields plainly.
  assert.throws(() => items.push({ tokens: 1, score: "0.5" }), is(TypeError, 'score is the string "0.5"; expected a number'));
  items.push({ tokens: 4, kind: null, content: null });
  assert.equal(items.get(1).kind, "Message");
  items.dispose();
});

test("handles: null, another type, disposed, or from another load()", () => {
  const items = cupel.items([{ tokens: 1 }]);
  const budget = cupel.budget({ maxTokens: 10 });
  const greedy = cupel.greedy();
  assert.throws(() => cupel.slice(null, items, budget), is(TypeError, "slicer is null; expected a Slicer"));
  assert.throws(() => cupel.slice(greedy, {}, budget), is(TypeError, "items is an object; expected an Items list"));
  assert.throws(() => cupel.slice(greedy, items, greedy), is(TypeError, "budget is a Slicer; expected a Budget"));
  assert.throws(() => cupel.pipeline({ slicer: cupel.scorers.given() }), is(TypeError, "slicer is a Scorer; expected a Slicer"));
  assert.throws(() => cupel.pipeline(), is(TypeError, "slicer is undefined; expected a Slicer"));
  assert.throws(() => cupel.pipeline(5), is(TypeError, "options is 5; expected an object"));
  // An object that only claims to be an Items.
  assert.throws(() => cupel.slice(greedy, Object.create(items.constructor.prototype), budget), is(TypeError, /^items is an Items; expected an Items list$/));
  return load().then((other) => {
    const foreign = other.items([{ tokens: 1 }]);
    assert.throws(() => cupel.slice(greedy, foreign, budget), is(TypeError, /^items belongs to another load\(\) of libcupel/));
    foreign.dispose();
    budget.dispose();
    assert.throws(() => cupel.slice(greedy, items, budget), is(TypeError, "budget was disposed"));
    assert.throws(() => budget.setOutputReserve(1), is(TypeError, "this budget was disposed"));
    items.dispose();
    greedy.dispose();
  });
});

test("the composite scorer names its parts, and the placer its indices", () => {
  const r = cupel.scorers.recency();
  assert.throws(() => cupel.scorers.composite([[r, 1], [r, -1]]), is(RangeError, "parts[1][1] is -1; composite weights must be finite and > 0"));
  assert.throws(() => cupel.scorers.composite([[r, 1], [null, 1]]), is(TypeError, "parts[1][0] is null; expected a Scorer"));
  assert.throws(() => cupel.scorers.composite([[r, 1], r]), is(TypeError, "parts[1] is a Scorer; expected a [scorer, weight] pair"));
  assert.throws(() => cupel.scorers.composite([]), is(RangeError, /^parts is empty/));
  const items = cupel.items([{ tokens: 1, timestamp: 30 }, { tokens: 1, timestamp: 10 }, { tokens: 1, timestamp: 20 }]);
  const placer = cupel.chronological();
  assert.deepEqual(placer.place(items, [0, 1, 2], [0.1, 0.2, 0.3]), [1, 2, 0]);
  assert.deepEqual(placer.place(items, [2, 0], [0.5, 0.5]), [2, 0]);
  assert.deepEqual(cupel.uShaped().place(items, [0, 1, 2], [0.9, 0.1, 0.5]).length, 3);
  assert.throws(() => placer.place(items, [0, -1], [1, 1]), is(RangeError, "indices[1] is -1: out of range, the list holds 3 items"));
  assert.throws(() => placer.place(items, [0, 3], [1, 1]), is(RangeError, "indices[1] is 3: out of range, the list holds 3 items"));
  assert.throws(() => placer.place(items, [0, 1], [1]), is(RangeError, "indices has 2 entries and scores 1; they must match"));
  assert.throws(() => placer.place(items, [0], ["1"]), is(TypeError, 'scores[0] is the string "1"; expected a number'));
  items.dispose();
  placer.dispose();
  r.dispose();
});

test("budget setters: checked, named, and a failed one changes nothing", () => {
  const b = cupel.budget({ maxTokens: 1000, targetTokens: 800 });
  b.setOutputReserve(100).reserve("Memory", 50).setSafetyMargin(10);
  const effective = b.effective(20);
  assert.throws(() => b.setOutputReserve(-1), is(RangeError, "outputReserve is -1; it must be >= 0"));
  assert.throws(() => b.setSafetyMargin(NaN), is(RangeError, /^safety margin percent is NaN/));
  assert.throws(() => b.setSafetyMargin("5"), is(TypeError, 'percent is the string "5"; expected a number'));
  assert.throws(() => b.reserve("", 5), is(RangeError, /^kind "" is empty/));
  assert.throws(() => b.reserve("Memory", 1.5), is(RangeError, "tokens is 1.5; expected an integer"));
  assert.throws(() => b.effective(-1), is(RangeError, "pinnedTokens is -1; it must be >= 0"));
  assert.deepEqual(b.effective(20), effective);
  b.dispose();
  assert.throws(() => cupel.budget({ maxTokens: 10, outputReserve: -1 }), is(RangeError, "outputReserve is -1; it must be >= 0"));
});

test("a stream push that fails changes nothing", () => {
  const s = cupel.stream(100, 2);
  s.push(30, 0.5);
  assert.throws(() => s.push(-1, 0.5), is(RangeError, "tokens is -1; token counts must be >= 0"));
  assert.throws(() => s.push(10, Infinity), is(RangeError, "score is Infinity; scores must be finite"));
  assert.throws(() => s.push(10, 0.5, -1), is(RangeError, /^group is -1/));
  s.push(30, 0.4);
  assert.deepEqual(s.finish(), [0, 1]);
  s.dispose();
});
