// Tokenizers: counting, truncation with offsets in UTF-16 code units,
// tiktoken files loaded from bytes, items pushed from text, and the errors.
// The cross check against the native library reads the texts and results
// tests/js_binding.rs writes (CUPEL_TOKEN_CASES); run alone, without them,
// it is skipped loudly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { load, CupelError, Keep, Status, Tokenizer } from "../index.js";

const cupel = await load();
const o200k = cupel.tokenizer("o200k_base");
const cl100k = cupel.tokenizer("cl100k_base");
const encoder = new TextEncoder();

/** The contract table's SENTENCE: 47 bytes, 12 tokens in o200k_base. */
const SENTENCE = "Hello, world! This is libcupel counting tokens.";

const KEEPS = [Keep.Head, Keep.Tail, Keep.BothEnds];

/** An error check: the class, the binding's brand and status, and the message. */
const fails = (Kind, status, pattern) => (e) =>
  e.constructor === Kind && e instanceof CupelError && e.status === status && pattern.test(e.message);

/** Whether JavaScript index `i` of `s` falls between the halves of a surrogate pair. */
function splitsPair(s, i) {
  if (i <= 0 || i >= s.length) return false;
  const before = s.charCodeAt(i - 1);
  const after = s.charCodeAt(i);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

/**
 * The properties every cut has, in JavaScript's units: the kept text is the
 * head and the tail, neither offset splits a pair, the tokens are the head's
 * count plus the tail's and within the budget, and each keep's shape.
 */
function checkCut(tok, text, max, keep, cut, what) {
  const { headEnd, tailStart, tokens } = cut;
  assert.ok(Number.isInteger(headEnd) && Number.isInteger(tailStart), what);
  assert.ok(0 <= headEnd && headEnd <= tailStart && tailStart <= text.length, `${what}: [${headEnd}, ${tailStart}]`);
  assert.ok(!splitsPair(text, headEnd) && !splitsPair(text, tailStart), `${what}: an offset splits a surrogate pair`);
  assert.equal(cut.text, text.slice(0, headEnd) + text.slice(tailStart), `${what}: the kept text`);
  const head = text.slice(0, headEnd);
  const tail = text.slice(tailStart);
  assert.equal(tokens, tok.count(head) + tok.count(tail), `${what}: tokens`);
  assert.ok(tokens <= max, `${what}: ${tokens} tokens > ${max}`);
  const whole = tok.count(text);
  if (whole <= max) {
    assert.deepEqual([headEnd, tailStart, tokens], [text.length, text.length, whole], `${what}: fits`);
  } else if (keep === Keep.Head) {
    assert.equal(tailStart, text.length, `${what}: head keeps no tail`);
  } else if (keep === Keep.Tail) {
    assert.equal(headEnd, 0, `${what}: tail keeps no head`);
  } else {
    assert.ok(tok.count(head) <= Math.ceil(max / 2), `${what}: the head takes at most half, rounded up`);
  }
}

test("counts: the contract's sentence, empty text, many texts in order, both encodings", () => {
  assert.equal(o200k.count(SENTENCE), 12);
  assert.equal(o200k.count("hello world"), 2);
  assert.equal(o200k.count(""), 0);
  assert.deepEqual(o200k.countMany([SENTENCE, "hello world", "", "a"]), [12, 2, 0, 1]);
  assert.deepEqual(o200k.countMany([]), []);
  assert.equal(o200k.name, "o200k_base");
  assert.equal(cl100k.name, "cl100k_base");
  // The two vocabularies differ where it shows: CJK takes fewer o200k tokens.
  const cjk = "日本語のテキストを数えます。漢字とかなとカナ。";
  assert.ok(o200k.count(cjk) < cl100k.count(cjk), `${o200k.count(cjk)} vs ${cl100k.count(cjk)}`);
  // Special tokens are ordinary text (encode_ordinary): more than one token.
  assert.ok(o200k.count("<|endoftext|>") > 1);
  // A NUL is ordinary text here: the length goes with the bytes.
  assert.equal(o200k.count("a\0b"), 3);
  // countMany is count, text by text, also for a batch large enough to split.
  const texts = Array.from({ length: 300 }, (_, i) => `${"word ".repeat(i % 50)}日本${"🦀".repeat(i % 7)} ${i}`);
  assert.deepEqual(o200k.countMany(texts), texts.map((t) => o200k.count(t)));
  const big = "The quick brown fox jumps over the lazy dog. ".repeat(25_000).trimEnd(); // 1.1 MB, 10 tokens a sentence
  assert.equal(o200k.count(big), 10 * 25_000);
});

test("truncation on the contract's sentence: head, tail, both ends, fits, zero", () => {
  const cut = (max, keep) => {
    const c = o200k.truncate(SENTENCE, max, keep);
    return [c.headEnd, c.tailStart, c.tokens, c.text];
  };
  assert.deepEqual(cut(4, Keep.Head), [13, 47, 4, "Hello, world!"]);
  assert.deepEqual(cut(4, Keep.Tail), [0, 28, 4, "el counting tokens."]);
  assert.deepEqual(cut(4, Keep.BothEnds), [6, 39, 4, "Hello, tokens."]);
  assert.deepEqual(cut(12, Keep.BothEnds), [47, 47, 12, SENTENCE]);
  assert.deepEqual(cut(0, Keep.Tail), [0, 47, 0, ""]);
  // Head is the default, and a BigInt budget is as good as a number.
  assert.deepEqual(o200k.truncate(SENTENCE, 4n), o200k.truncate(SENTENCE, 4, Keep.Head));
});

test("truncation offsets are JavaScript string indices on non-ASCII text", () => {
  const jp = "日本語のテキスト"; // 8 UTF-16 units, 24 bytes
  const whole = o200k.count(jp);
  assert.ok(whole >= 2, `${whole}`);
  for (const keep of KEEPS) {
    for (let max = 0; max <= whole + 1; max++) {
      const c = o200k.truncate(jp, max, keep);
      checkCut(o200k, jp, max, keep, c, `日本語 max ${max} keep ${keep}`);
    }
  }
  // Head of one token: the offset counts characters, not the bytes (3 each).
  const h = o200k.truncate(jp, 1, Keep.Head);
  assert.ok(h.headEnd > 0 && h.headEnd < jp.length, `${h.headEnd}`);
  assert.equal(encoder.encode(jp.slice(0, h.headEnd)).length, 3 * h.headEnd);
  assert.equal(h.text, jp.slice(0, h.headEnd));

  // Astral characters are two units each: no offset may split one.
  const emoji = "🦀 crabs 🦀🦀 and 👩‍👩‍👧‍👦, 👍🏽, 🇯🇵 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠀀𠀁 end";
  const n = o200k.count(emoji);
  for (const tok of [o200k, cl100k]) {
    for (const keep of KEEPS) {
      for (let max = 0; max <= n + 1; max++) {
        checkCut(tok, emoji, max, keep, tok.truncate(emoji, max, keep), `emoji max ${max} keep ${keep}`);
      }
    }
  }
  const tail = o200k.truncate("🦀".repeat(10), 3, Keep.Tail);
  assert.equal(tail.headEnd, 0);
  assert.equal(tail.tailStart % 2, 0, "a crab is two units");
  assert.match(tail.text, /^(🦀)+$/u);
  // Mixed text: the offsets grow with the budget, and the head is a prefix.
  const mixed = "Zürich café — naïve façade. Ελληνικά, русский, العربية, हिन्दी, 한국어 🦀 done.";
  let last = 0;
  for (let max = 0; max <= o200k.count(mixed); max++) {
    const c = o200k.truncate(mixed, max, Keep.Head);
    checkCut(o200k, mixed, max, Keep.Head, c, `mixed max ${max}`);
    assert.ok(c.headEnd >= last, `max ${max}: the head shrank`);
    last = c.headEnd;
  }
  assert.equal(last, mixed.length);
});

test("tiktoken vocabularies from bytes, with their own pattern", () => {
  // A small vocabulary: the 256 bytes, then merges to "hello" (ranks 256..259).
  const b64 = (s) => Buffer.from(s, "latin1").toString("base64");
  const lines = Array.from({ length: 256 }, (_, b) => `${b64(String.fromCharCode(b))} ${b}`);
  lines.push(`${b64("he")} 256`, `${b64("ll")} 257`, `${b64("llo")} 258`, `${b64("hello")} 259`);
  const file = encoder.encode(`${lines.join("\n")}\n`);
  const small = cupel.tokenizerFromTiktoken(file); // o200k_base's pattern
  assert.equal(small.name, null);
  assert.equal(small.count("hello"), 1);
  assert.equal(small.count("hello world"), 1 + 6); // " world" has no merges: six bytes
  assert.equal(small.count("日"), 3); // three bytes, no merges
  // The pattern decides the pieces: one per character, so nothing merges.
  const perChar = cupel.tokenizerFromTiktoken(file.buffer, ".");
  assert.equal(perChar.count("hello"), 5);
  // Any typed array view: a Buffer, a DataView, a view into a larger buffer.
  const padded = new Uint8Array(file.length + 10);
  padded.set(file, 5);
  const views = [Buffer.from(file), new DataView(padded.buffer, 5, file.length), padded.subarray(5, 5 + file.length)];
  for (const v of views) {
    const t = cupel.tokenizerFromTiktoken(v);
    assert.equal(t.count("hello hello"), 1 + 2, v.constructor.name); // "hello", then " hello": " " and "hello"
    t.dispose();
  }
  const cut = small.truncate("hellohello", 1, Keep.Head);
  assert.equal(cut.tokens, small.count(cut.text));
  for (const t of [small, perChar]) t.dispose();
});

test("bad vocabularies name their line; a bad pattern names the problem", () => {
  const b64 = (s) => Buffer.from(s, "latin1").toString("base64");
  const good = Array.from({ length: 256 }, (_, b) => `${b64(String.fromCharCode(b))} ${b}`);
  const file = (extra) => encoder.encode([...good, ...extra].join("\n"));
  const range = (pattern) => fails(RangeError, Status.INVALID_ARGUMENT, pattern);
  assert.throws(() => cupel.tokenizerFromTiktoken(file(["!!! 256"])), range(/line 257/));
  assert.throws(() => cupel.tokenizerFromTiktoken(file([`${b64("ab")} x`])), range(/line 257/));
  assert.throws(() => cupel.tokenizerFromTiktoken(file([`${b64("a")} 256`])), range(/^line 257: the token "a" is already line 98$/));
  assert.throws(() => cupel.tokenizerFromTiktoken(encoder.encode(good.slice(1).join("\n"))), range(/single byte 0x00/));
  assert.throws(() => cupel.tokenizerFromTiktoken(new Uint8Array(0)), range(/no tokens/));
  assert.throws(() => cupel.tokenizerFromTiktoken(file([]), "(unclosed"), range(/^pattern: .*unclosed/));
  assert.throws(() => cupel.tokenizerFromTiktoken(file([]), "a\uD800"), range(/^pattern holds a lone surrogate/));
  assert.throws(
    () => cupel.tokenizerFromTiktoken(good.join("\n")),
    fails(TypeError, Status.INVALID_ARGUMENT, /^ranks is the string .*; expected the file's bytes/),
  );
  assert.throws(() => cupel.tokenizerFromTiktoken(null), fails(TypeError, Status.NULL_POINTER, /^ranks is null/));
  assert.throws(() => cupel.tokenizerFromTiktoken(file([]), 5), fails(TypeError, Status.INVALID_ARGUMENT, /^pattern is 5/));
});

test("an unknown encoding lists the known ones", () => {
  for (const name of ["gpt2", "", "O200K_BASE"]) {
    assert.throws(
      () => cupel.tokenizer(name),
      fails(RangeError, Status.INVALID_ARGUMENT, /^name ".*" is no known encoding; the known ones are "o200k_base" and "cl100k_base"$/),
    );
  }
  assert.throws(() => cupel.tokenizer(null), fails(TypeError, Status.NULL_POINTER, /^name is null; expected a string$/));
  assert.throws(() => cupel.tokenizer(), fails(TypeError, Status.NULL_POINTER, /^name is undefined/));
});

test("texts, budgets and keeps are checked in JavaScript's terms", () => {
  const range = (pattern) => fails(RangeError, Status.INVALID_ARGUMENT, pattern);
  const type = (pattern) => (e) => e.constructor === TypeError && e instanceof CupelError && pattern.test(e.message);
  const lone = /holds a lone surrogate \(U\+D800\) at index 2: it has no UTF-8 form$/;
  assert.throws(() => o200k.count("ab\uD800"), range(new RegExp(`^text ${lone.source}`)));
  assert.throws(() => o200k.truncate("ab\uD800", 3), range(new RegExp(`^text ${lone.source}`)));
  assert.throws(() => o200k.countMany(["ok", "fine", "ab\uD800"]), range(new RegExp(`^texts\\[2\\] ${lone.source}`)));
  assert.throws(() => o200k.count(null), type(/^text is null; expected a string$/));
  assert.throws(() => o200k.count(5), type(/^text is 5; expected a string$/));
  assert.throws(() => o200k.countMany(["a", null]), type(/^texts\[1\] is null; expected a string$/));
  assert.throws(() => o200k.countMany("abc"), type(/^texts is the string "abc"; expected an array$/));
  assert.throws(() => o200k.truncate(SENTENCE, -1), range(/^maxTokens is -1; it must be >= 0$/));
  assert.throws(() => o200k.truncate(SENTENCE, -1n), range(/^maxTokens is -1; it must be >= 0$/));
  assert.throws(() => o200k.truncate(SENTENCE, 2.5), range(/^maxTokens is 2\.5; expected an integer$/));
  assert.throws(() => o200k.truncate(SENTENCE, 2n ** 63n), range(/^maxTokens is 9223372036854775808n; it must be an integer from -2\^63/));
  assert.throws(() => o200k.truncate(SENTENCE, 2 ** 60), range(/^maxTokens is .*pass a BigInt$/));
  assert.throws(() => o200k.truncate(SENTENCE), type(/^maxTokens is undefined; expected an integer$/));
  assert.throws(() => o200k.truncate(SENTENCE, 4, 7), range(/^keep is 7; expected Keep\.Head \(0\), Keep\.Tail \(1\) or Keep\.BothEnds \(2\)$/));
  assert.throws(() => o200k.truncate(SENTENCE, 4, -1), range(/^keep is -1; expected Keep\.Head/));
  assert.throws(() => o200k.truncate(SENTENCE, 4, "head"), type(/^keep is the string "head"; expected an integer$/));
  // A pair is fine; only a lone half is refused.
  assert.equal(o200k.count("\uD83E\uDD80"), o200k.count("🦀"));
});

test("a disposed tokenizer refuses every use, and says so", () => {
  const before = cupel.liveHandles;
  const t = cupel.tokenizer("o200k_base");
  assert.ok(t instanceof Tokenizer);
  assert.equal(cupel.liveHandles, before + 1);
  t.dispose();
  t.dispose(); // idempotent
  assert.equal(cupel.liveHandles, before);
  assert.equal(t.disposed, true);
  const closed = (pattern) => fails(TypeError, Status.NULL_POINTER, pattern);
  assert.throws(() => t.count("a"), closed(/^this tokenizer was disposed$/));
  assert.throws(() => t.countMany(["a"]), closed(/^this tokenizer was disposed$/));
  assert.throws(() => t.truncate("a", 1), closed(/^this tokenizer was disposed$/));
  const items = cupel.items();
  assert.throws(() => items.pushText(t, "hello"), closed(/^tokenizer was disposed$/));
  assert.throws(() => items.pushTexts(t, ["hello"]), closed(/^tokenizer was disposed$/));
  assert.equal(items.length, 0);
  // Another handle type, or a tokenizer of another load(), is refused too.
  assert.throws(() => items.pushText(cupel.greedy(), "hello"), /^TypeError: tokenizer is a Slicer; expected a Tokenizer$/);
  items.dispose();
});

test("a tokenizer of another load() is refused", async () => {
  const other = await load();
  const t = other.tokenizer("cl100k_base");
  const items = cupel.items();
  assert.throws(() => items.pushText(t, "hello"), /^TypeError: tokenizer belongs to another load\(\) of libcupel/);
  t.dispose();
  items.dispose();
});

test("items from text: tokens are the count, content is the text", () => {
  const items = cupel.items([{ tokens: 5, content: "first" }]);
  assert.equal(items.pushText(o200k, "hello world", 0.5, "Document"), items);
  items.pushText(o200k, "日本語のテキスト"); // score 0, kind Message
  let r = items.get(1);
  assert.deepEqual([r.tokens, r.content, r.score, r.kind], [2, "hello world", 0.5, "Document"]);
  r = items.get(2);
  assert.deepEqual([r.tokens, r.content, r.score, r.kind], [o200k.count("日本語のテキスト"), "日本語のテキスト", 0, "Message"]);
  items.pushText(cl100k, "a\0b", 0.25); // a NUL is content too
  assert.deepEqual([items.get(3).content, items.get(3).tokens], ["a\0b", cl100k.count("a\0b")]);

  const texts = [
    "user: why does login fail?",
    { text: "src/auth/refresh.rs:42 🦀", score: 0.7, kind: "ToolOutput", timestamp: 5000, tags: ["auth"], group: 3 },
    { text: "memo", pinned: true, metadata: { "cupel:trust": 0.9 }, source: "Notes" },
  ];
  assert.equal(items.pushTexts(o200k, texts), items);
  assert.equal(items.length, 7);
  r = items.get(4);
  assert.deepEqual([r.tokens, r.content, r.score, r.kind], [o200k.count(texts[0]), texts[0], 0, "Message"]);
  r = items.get(5);
  assert.deepEqual(
    [r.tokens, r.content, r.score, r.kind, r.timestamp, r.tags, r.group],
    [o200k.count(texts[1].text), texts[1].text, 0.7, "ToolOutput", 5000, ["auth"], 3],
  );
  r = items.get(6);
  assert.deepEqual([r.tokens, r.content, r.pinned, r.metadata, r.source], [1, "memo", true, { "cupel:trust": "0.9" }, "Notes"]);
  assert.equal(items.pushTexts(o200k, []).length, 7);

  // Through a pipeline: the selected tokens are the counts.
  const budget = cupel.budget({ maxTokens: 1000 });
  const { report } = cupel.slice(cupel.greedy(), items, budget, { report: true });
  let sum = 0;
  for (let i = 0; i < items.length; i++) sum += items.get(i).tokens;
  assert.equal(report.selectedTokens, sum);
  items.dispose();
  budget.dispose();
});

test("pushing from text is all or nothing, and errors name the element", () => {
  const items = cupel.items([{ tokens: 1 }]);
  const range = (pattern) => fails(RangeError, Status.INVALID_ARGUMENT, pattern);
  const type = (pattern) => (e) => e.constructor === TypeError && e instanceof CupelError && pattern.test(e.message);
  assert.throws(() => items.pushText(o200k, ""), range(/^text is empty; an item's content must be non-empty$/));
  assert.throws(() => items.pushText(o200k, "x\uDC00"), range(/^text holds a lone surrogate \(U\+DC00\) at index 1/));
  assert.throws(() => items.pushText(o200k, "x", NaN), range(/^score is NaN/));
  assert.throws(() => items.pushText(o200k, "x", 0.5, " "), range(/^kind " " is empty or only whitespace/));
  assert.throws(() => items.pushText(o200k, "x", "high"), type(/^score is the string "high"; expected a number$/));
  assert.throws(() => items.pushText(null, "x"), fails(TypeError, Status.NULL_POINTER, /^tokenizer is null; expected a Tokenizer$/));
  assert.throws(() => items.pushText(o200k, null), fails(TypeError, Status.NULL_POINTER, /^text is null; expected a string$/));
  const bad = [
    [["ok", ""], range(/^texts\[1\] is empty; an item's content must be non-empty$/)],
    [["ok", { text: "" }], range(/^texts\[1\]\.text is empty/)],
    [["ok", "ok", "a\uD800"], range(/^texts\[2\] holds a lone surrogate/)],
    [["ok", { text: "x", score: NaN }], range(/^texts\[1\]\.score is NaN/)],
    [["ok", "ok", { text: "x", kind: "\t" }], range(/^texts\[2\]\.kind "\\t" is empty or only whitespace/)],
    [["ok", { text: "x", kind: "a\0b" }], range(/^texts\[1\]\.kind holds a NUL/)],
    [["ok", { text: "x", timestamp: 1.5 }], range(/^texts\[1\]\.timestamp is 1\.5; expected an integer$/)],
    [["ok", { text: "x", tokens: 3 }], type(/^texts\[1\]\.tokens is given; a text's item takes its tokens/)],
    [["ok", { text: "x", content: "y" }], type(/^texts\[1\]\.content is given/)],
    [["ok", 7], type(/^texts\[1\] is 7; expected a string or a record with a text field$/)],
    [["ok", null], fails(TypeError, Status.NULL_POINTER, /^texts\[1\] is null/)],
    [["ok", {}], fails(TypeError, Status.NULL_POINTER, /^texts\[1\]\.text is undefined; expected a string$/)],
  ];
  for (const [texts, check] of bad) {
    assert.throws(() => items.pushTexts(o200k, texts), check, JSON.stringify(texts));
    assert.equal(items.length, 1, `${JSON.stringify(texts)} changed the list`);
  }
  assert.throws(() => items.pushTexts(o200k, "ok"), type(/^texts is the string "ok"; expected an array$/));
  assert.equal(items.length, 1);
  items.dispose();
});

test("tokenizers in wasm agree with native", (t) => {
  const path = process.env.CUPEL_TOKEN_CASES;
  if (!path) {
    t.skip("*** SKIPPED: CUPEL_TOKEN_CASES not set (cargo test --test js_binding writes it) ***");
    return;
  }
  const { texts, encodings, files } = JSON.parse(readFileSync(path, "utf8"));
  assert.ok(texts.length >= 100);
  const bytesOf = texts.map((s) => encoder.encode(s).length);
  let cuts = 0;
  let nonAscii = 0;
  for (const [name, { counts, cuts: expected }] of Object.entries(encodings)) {
    const tok = name === "o200k_base" ? o200k : cl100k;
    assert.deepEqual(texts.map((s) => tok.count(s)), counts, `${name}: count`);
    assert.deepEqual(tok.countMany(texts), counts, `${name}: countMany`);
    for (const [i, max, keepName, headByte, tailByte, tokens] of expected) {
      const text = texts[i];
      const keep = { head: Keep.Head, tail: Keep.Tail, both_ends: Keep.BothEnds }[keepName];
      const c = tok.truncate(text, max, keep);
      const what = `${name} text ${i} max ${max} ${keepName}`;
      // The same cut, in UTF-16 units: its head and tail are the native ones' bytes.
      assert.equal(c.tokens, tokens, what);
      assert.equal(encoder.encode(text.slice(0, c.headEnd)).length, headByte, `${what}: headEnd ${c.headEnd}`);
      assert.equal(bytesOf[i] - encoder.encode(text.slice(c.tailStart)).length, tailByte, `${what}: tailStart ${c.tailStart}`);
      assert.ok(!splitsPair(text, c.headEnd) && !splitsPair(text, c.tailStart), what);
      assert.equal(c.text, text.slice(0, c.headEnd) + text.slice(c.tailStart), what);
      cuts++;
      if (bytesOf[i] !== text.length && c.headEnd !== headByte) nonAscii++;
    }
  }
  assert.ok(cuts > 1000, `${cuts} cuts`);
  assert.ok(nonAscii > 100, `only ${nonAscii} cuts where UTF-16 and byte offsets differ`);
  for (const { path: file, pattern, counts } of files) {
    const tok = cupel.tokenizerFromTiktoken(readFileSync(file), pattern);
    assert.deepEqual(tok.countMany(texts), counts, `${file} with ${pattern}`);
    tok.dispose();
  }
});
