// Items that shrink instead of vanish: variants (Items.addVariant, or
// `variants` when pushed), truncatable items (Items.setTruncatable, or
// `truncatable` when pushed), the pipeline's tokenizer, and what a report
// says was chosen: the variant, the tokens it adds, the cut (UTF-8 byte
// offsets) and the text as the host sends it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, CupelError, Items, Keep, Reason, Status } from "../index.js";

const cupel = await load();
const o200k = cupel.tokenizer("o200k_base");
const encoder = new TextEncoder();

/** An error check: the class, the binding's brand and status, and the message. */
const fails = (Kind, status, pattern) => (e) =>
  e.constructor === Kind && e instanceof CupelError && e.status === status && pattern.test(e.message);
const range = (pattern) => fails(RangeError, Status.INVALID_ARGUMENT, pattern);
const nullArg = (pattern) => fails(TypeError, Status.NULL_POINTER, pattern);
const wrongType = (pattern) => fails(TypeError, Status.INVALID_ARGUMENT, pattern);

/** Scenario S's document: 200 lines, 10890 bytes (ASCII), 2800 tokens in o200k_base. */
const DOC = Array.from({ length: 200 }, (_, i) => `Line ${i}: the quick brown fox jumps over the lazy dog.\n`).join("");

/** Scenario S's items: a question, a huge tool output with a placeholder variant, a truncatable document. */
function scenarioItems() {
  return cupel
    .items([
      { tokens: 40, score: 0.9, kind: "Message", content: "What failed in the last build?" },
      {
        tokens: 9000,
        score: 0.8,
        kind: "ToolOutput",
        content: "(the build log)",
        variants: [{ tokens: 12, value: 0.1, content: "[output cleared: 9,000 tokens]" }],
      },
    ])
    .pushText(o200k, DOC, 0.6, "Document")
    .setTruncatable(2, Keep.Head, 50);
}

/** The included entries as [index, reason, reasonCode, score, variant, addedTokens, headEnd, tailStart]. */
const rows = (report) =>
  report.included.map((d) => [d.index, d.reason, d.reasonCode, d.score, d.variant, d.addedTokens, d.cut.headEnd, d.cut.tailStart]);

test("scenario S: the document and the build log", () => {
  assert.equal(DOC.length, 10890);
  assert.equal(encoder.encode(DOC).length, 10890);
  assert.equal(o200k.count(DOC), 2800);
  const items = scenarioItems();
  const it = items.get(2);
  assert.deepEqual([it.tokens, it.score, it.kind, it.content], [2800, 0.6, "Document", DOC]);
  assert.deepEqual(it.truncatable, { keep: Keep.Head, minTokens: 50 });
  assert.deepEqual(items.variants(1), [{ tokens: 12, value: 0.1, content: "[output cleared: 9,000 tokens]" }]);
  items.dispose();
});

test("scenario S, GreedySlice: a variant, a cut, and the text as sent", () => {
  const items = scenarioItems();
  const budget = cupel.budget({ maxTokens: 1000, targetTokens: 1000 });
  const pipeline = cupel.pipeline({ slicer: cupel.greedy() });

  // No tokenizer: the run fails naming the item and what it lacks; nothing changes.
  assert.throws(
    () => pipeline.run(items, budget, { report: true }),
    range(/^item 2 is truncatable but the pipeline has no tokenizer to cut it with \(Pipeline\.setTokenizer/),
  );
  assert.equal(items.length, 3);
  assert.deepEqual(items.truncatable(2), { keep: Keep.Head, minTokens: 50 });

  assert.equal(pipeline.setTokenizer(o200k), pipeline);
  const { placed, report } = pipeline.run(items, budget, { report: true });
  assert.deepEqual(placed, [0, 1, 2]);
  assert.deepEqual(rows(report), [
    [0, "Scored", Reason.Scored, 0.9, 0, 40, 30, 30],
    [1, "Variant", Reason.Variant, 0.8 * 0.1, 1, 12, 15, 15],
    [2, "Truncated", Reason.Truncated, 0.6 * (948 / 2800), 0, 948, 3647, 10890],
  ]);
  assert.equal(report.included[1].score, 0.08000000000000002);
  assert.equal(report.included[2].score, 0.20314285714285715); // 0.6 x 948 / 2800
  // itemTokens stays the item's own count; selectedTokens sums what was added.
  assert.deepEqual(report.included.map((d) => d.itemTokens), [40, 9000, 2800]);
  assert.equal(report.selectedTokens, 1000);
  assert.deepEqual(report.excluded, []);
  assert.deepEqual(report.included.map((d) => d.text), [
    "What failed in the last build?",
    "[output cleared: 9,000 tokens]",
    DOC.slice(0, 3647),
  ]);
  // What is sent for the cut document is what a tokenizer keeps of it at the tokens it adds.
  const cut = o200k.truncate(DOC, 948, Keep.Head);
  assert.deepEqual([cut.text, cut.headEnd, cut.tailStart, cut.tokens], [DOC.slice(0, 3647), 3647, 10890, 948]);
  // The JSON report says the same.
  const json = JSON.parse(report.json).included.map((d) => d.reason);
  assert.deepEqual(json, [
    { reason: "Scored" },
    { reason: "Variant", tokens_added: 12, variant: 1 },
    { reason: "Truncated", tokens_added: 948, variant: 0, cut: { head_end: 3647, tail_start: 10890 } },
  ]);
  for (const h of [items, budget, pipeline]) h.dispose();
});

test("scenario S, KnapsackSlice(1): the same choices, in the knapsack's order", () => {
  const items = scenarioItems();
  const budget = cupel.budget({ maxTokens: 1000, targetTokens: 1000 });
  const pipeline = cupel.pipeline({ slicer: cupel.knapsack(1) });
  assert.throws(() => pipeline.run(items, budget), range(/^item 2 is truncatable but the pipeline has no tokenizer/));
  pipeline.setTokenizer(o200k);
  const { placed, report } = pipeline.run(items, budget, { report: true });
  assert.deepEqual(placed, [1, 0, 2]);
  assert.deepEqual(rows(report), [
    [1, "Variant", Reason.Variant, 0.8 * 0.1, 1, 12, 15, 15],
    [0, "Scored", Reason.Scored, 0.9, 0, 40, 30, 30],
    [2, "Truncated", Reason.Truncated, 0.6 * (948 / 2800), 0, 948, 3647, 10890],
  ]);
  assert.equal(report.selectedTokens, 1000);
  assert.deepEqual(report.excluded, []);
  assert.deepEqual(report.included.map((d) => d.text), ["[output cleared: 9,000 tokens]", "What failed in the last build?", DOC.slice(0, 3647)]);
  for (const h of [items, budget, pipeline]) h.dispose();
});

test("the tokenizer: a pipeline option, removed with null, kept after the caller disposes it", () => {
  const budget = cupel.budget({ maxTokens: 1000 });
  const tokenizer = cupel.tokenizer("o200k_base");
  const pipeline = cupel.pipeline({ slicer: cupel.greedy(), tokenizer });
  tokenizer.dispose(); // the pipeline holds its own reference
  const items = scenarioItems();
  assert.deepEqual(rows(pipeline.run(items, budget, { report: true }).report).map((r) => r[1]), ["Scored", "Variant", "Truncated"]);
  assert.equal(pipeline.setTokenizer(null), pipeline);
  assert.throws(() => pipeline.run(items, budget), range(/^item 2 is truncatable but the pipeline has no tokenizer/));
  // Not truncatable any more: the run needs no tokenizer, and the document is left out whole.
  assert.equal(items.clearTruncatable(2), items);
  assert.equal(items.truncatable(2), null);
  const { report } = pipeline.run(items, budget, { report: true });
  assert.deepEqual(rows(report), [
    [0, "Scored", Reason.Scored, 0.9, 0, 40, 30, 30],
    [1, "Variant", Reason.Variant, 0.8 * 0.1, 1, 12, 15, 15],
  ]);
  assert.deepEqual(report.excluded.map((d) => [d.index, d.reason]), [[2, "BudgetExceeded"]]);
  assert.equal(report.selectedTokens, 52);
  // A truncatable item needs content, tokenizer or not.
  const bare = cupel.items([{ tokens: 5000, score: 0.5 }]).setTruncatable(0, Keep.Tail, 1);
  pipeline.setTokenizer(o200k);
  assert.throws(() => pipeline.run(bare, budget), range(/^item 0 is truncatable but has no content to cut \(Items\.setContent/));
  assert.equal(bare.length, 1);
  for (const h of [items, bare, budget, pipeline]) h.dispose();
});

/** Non-ASCII text in 40 lines: CJK, accented Latin, emoji (4 UTF-8 bytes, 2 UTF-16 units each). */
const WIDE = Array.from({ length: 40 }, (_, i) => `行${i}: 日本語のテキスト 🦀 über naïve café ${"😀".repeat(i % 3)}\n`).join("");

test("non-ASCII content cut by truncation: byte offsets, and the right string", () => {
  assert.equal(WIDE.length, 1428);
  assert.equal(encoder.encode(WIDE).length, 2426);
  assert.equal(o200k.count(WIDE), 719);
  const seen = [];
  for (const keep of [Keep.Head, Keep.Tail, Keep.BothEnds]) {
    // Item 0 is too large: its variant (non-ASCII content too) goes in; item 1 is cut to what is left.
    const items = cupel
      .items([{ tokens: 500, score: 0.9, content: "короткий 🦀", variants: [{ tokens: 3, value: 0.5, content: "сводка 🦀" }] }])
      .pushText(o200k, WIDE, 0.5, "Document")
      .setTruncatable(1, keep, 5);
    const pipeline = cupel.pipeline({ slicer: cupel.greedy(), tokenizer: o200k });
    const { report } = pipeline.run(items, cupel.budget({ maxTokens: 101 }), { report: true });
    const [variant, cut] = report.included;
    assert.deepEqual([variant.index, variant.reason, variant.variant, variant.addedTokens], [0, "Variant", 1, 3]);
    assert.equal(variant.text, "сводка 🦀");
    // The variant's cut is over the item's own content (not what is sent), in bytes: 21, not 11.
    assert.deepEqual(variant.cut, { headEnd: 21, tailStart: 21 });
    assert.equal(encoder.encode("короткий 🦀").length, 21);
    // Cut with the 98 tokens left: what a tokenizer keeps at 98 (it may keep fewer, cutting on token boundaries).
    const same = o200k.truncate(WIDE, 98, keep);
    assert.deepEqual([cut.index, cut.reason, cut.variant, cut.addedTokens], [1, "Truncated", 0, same.tokens]);
    assert.equal(report.selectedTokens, 3 + same.tokens);

    // The text as sent: the UTF-8 bytes of the cut, decoded; the same as a tokenizer's cut at those tokens.
    const bytes = encoder.encode(WIDE);
    const { headEnd, tailStart } = cut.cut;
    const decoder = new TextDecoder("utf-8", { fatal: true });
    assert.equal(cut.text, decoder.decode(bytes.subarray(0, headEnd)) + decoder.decode(bytes.subarray(tailStart)));
    assert.equal(cut.text, same.text);
    // The report's offsets are bytes, the tokenizer's JavaScript string indices: they differ here.
    assert.equal(headEnd, encoder.encode(WIDE.slice(0, same.headEnd)).length);
    assert.equal(tailStart, encoder.encode(WIDE.slice(0, same.tailStart)).length);
    if (keep !== Keep.Tail) assert.ok(headEnd > same.headEnd, `${keep}: bytes ${headEnd} vs units ${same.headEnd}`);
    if (keep !== Keep.Head) assert.ok(tailStart > same.tailStart, `${keep}: bytes ${tailStart} vs units ${same.tailStart}`);
    if (keep === Keep.Head) assert.equal(tailStart, 2426);
    if (keep === Keep.Tail) assert.equal(headEnd, 0);
    if (keep !== Keep.Tail) assert.ok(cut.text.startsWith("行0: 日本語のテキスト 🦀 über naïve café \n行1: "));
    if (keep !== Keep.Head) assert.ok(cut.text.endsWith("行39: 日本語のテキスト 🦀 über naïve café \n"));
    assert.ok(cut.text.includes("😀") && cut.text.includes("ü"));
    assert.ok(cut.text.length < WIDE.length && cut.text.isWellFormed());
    seen.push([headEnd, tailStart, cut.addedTokens]);
    items.dispose();
    pipeline.dispose();
  }
  assert.deepEqual(seen, [[326, 2426, 98], [0, 2096, 96], [162, 2259, 98]]);
});

test("cupel.slice honours variants, and its report says which", () => {
  const items = cupel.items([
    { tokens: 400, score: 0.9, content: "the full answer", variants: [{ tokens: 50, value: 0.5, content: "the short answer" }, { tokens: 10, value: 0.2 }] },
    { tokens: 80, score: 0.5, content: "other" },
  ]);
  const budget = cupel.budget({ maxTokens: 100 });
  // (The decision's score of a variant in a slice report is not asserted: see the report to the lead.)
  const choices = (report) => report.included.map((d) => [d.index, d.reason, d.variant, d.addedTokens, d.cut.headEnd, d.cut.tailStart, d.text]);
  // Greedy: the short answer (0.45 for 50 tokens) first; the other item no longer fits.
  let { selected, report } = cupel.slice(cupel.greedy(), items, budget, { report: true });
  assert.deepEqual(selected, [0]);
  assert.deepEqual(choices(report), [[0, "Variant", 1, 50, 15, 15, "the short answer"]]);
  assert.deepEqual(report.excluded.map((d) => [d.index, d.reason, d.availableTokens]), [[1, "BudgetExceeded", 50]]);
  assert.equal(report.selectedTokens, 50);
  // Knapsack: the best total, 0.5 + 0.18 in 90 tokens; variant 2 has no content, so no text.
  ({ selected, report } = cupel.slice(cupel.knapsack(1), items, budget, { report: true }));
  assert.deepEqual(selected, [1, 0]);
  assert.deepEqual(choices(report), [
    [1, "Scored", 0, 80, 5, 5, "other"],
    [0, "Variant", 2, 10, 15, 15, null],
  ]);
  assert.equal(report.included[0].score, 0.5);
  assert.deepEqual(report.excluded, []);
  assert.equal(report.selectedTokens, 90);
  items.dispose();
  budget.dispose();
});

test("an item without content reports a cut of (0, 0) and no text", () => {
  const items = cupel.items([{ tokens: 10, score: 0.5 }]);
  const p = cupel.pipeline({ slicer: cupel.greedy() });
  const d = p.run(items, cupel.budget({ maxTokens: 100 }), { report: true }).report.included[0];
  assert.deepEqual([d.variant, d.addedTokens, d.cut, d.text], [0, 10, { headEnd: 0, tailStart: 0 }, null]);
  items.dispose();
  p.dispose();
});

test("variants and truncation read back, from push and from the setters", () => {
  const items = cupel.items([
    { tokens: 100, content: "full", variants: [{ tokens: 20, value: 0.5, content: "half ✓" }, { tokens: 5n, value: 1 }], truncatable: { keep: Keep.Tail, minTokens: 3 } },
    { tokens: 10 },
  ]);
  assert.deepEqual(items.variants(0), [
    { tokens: 20, value: 0.5, content: "half ✓" },
    { tokens: 5, value: 1, content: null },
  ]);
  assert.deepEqual(items.truncatable(0), { keep: Keep.Tail, minTokens: 3 });
  assert.deepEqual(items.variants(1), []);
  assert.equal(items.truncatable(1), null);
  // The setters chain, number variants in the order added, and replace truncation.
  assert.equal(items.addVariant(1, { tokens: 0, value: 0.25, content: "☃" }).addVariant(1, { tokens: 3, value: 0.75, content: null }), items);
  assert.equal(items.setTruncatable(1, Keep.BothEnds, 0).setTruncatable(1, Keep.Head, 2n ** 40n), items);
  const r = items.get(1);
  assert.deepEqual(r.variants, [
    { tokens: 0, value: 0.25, content: "☃" },
    { tokens: 3, value: 0.75, content: null },
  ]);
  assert.deepEqual(r.truncatable, { keep: Keep.Head, minTokens: 2 ** 40 });
  items.setTruncatable(1, Keep.Tail, 2n ** 62n);
  assert.deepEqual(items.truncatable(1), { keep: Keep.Tail, minTokens: 2n ** 62n });
  items.clearTruncatable(1).clearTruncatable(1); // a no-op the second time
  assert.equal(items.get(1).truncatable, null);
  // Records round-trip: what get() gives pushes back as the same item.
  const records = [items.get(0), items.get(1)];
  const again = cupel.items(records);
  assert.deepEqual([again.get(0), again.get(1)], records);
  // Items from text take them too.
  again.pushTexts(o200k, [{ text: "a text to cut", truncatable: { keep: Keep.BothEnds, minTokens: 1 }, variants: [{ tokens: 1, value: 0.1, content: "cut" }] }]);
  assert.deepEqual(again.truncatable(2), { keep: Keep.BothEnds, minTokens: 1 });
  assert.deepEqual(again.variants(2), [{ tokens: 1, value: 0.1, content: "cut" }]);
  // 255 variants is the most.
  const many = Array.from({ length: 255 }, (_, k) => ({ tokens: k, value: 1 }));
  again.push({ tokens: 300, variants: many });
  assert.equal(again.variants(3).length, 255);
  assert.deepEqual(again.variants(3)[254], { tokens: 254, value: 1, content: null });
  items.dispose();
  again.dispose();
});

test("bad variants: refused in JavaScript's terms, and nothing changes", () => {
  const items = cupel.items([{ tokens: 100, content: "alpha" }, { tokens: 200 }, { tokens: 50 }]);
  items.addVariant(0, { tokens: 5, value: 0.5, content: "[cleared]" });
  const before = items.variants(0);
  const value = /; it must be in \(0, 1\] \(the share of the item's score the variant keeps\)$/;
  const cases = [
    [{ tokens: 5, value: 0 }, range(new RegExp(`^variant\\.value is 0${value.source}`))],
    [{ tokens: 5, value: 1.5 }, range(new RegExp(`^variant\\.value is 1\\.5${value.source}`))],
    [{ tokens: 5, value: -0.5 }, range(new RegExp(`^variant\\.value is -0\\.5${value.source}`))],
    [{ tokens: 5, value: NaN }, range(new RegExp(`^variant\\.value is NaN${value.source}`))],
    [{ tokens: 5, value: Infinity }, range(new RegExp(`^variant\\.value is Infinity${value.source}`))],
    [{ tokens: 5 }, nullArg(/^variant\.value is undefined; expected a number$/)],
    [{ tokens: 5, value: "0.5" }, wrongType(/^variant\.value is the string "0\.5"; expected a number$/)],
    [{ tokens: -1, value: 0.5 }, range(/^variant\.tokens is -1; a variant's tokens must be >= 0$/)],
    [{ tokens: -1n, value: 0.5 }, range(/^variant\.tokens is -1n; a variant's tokens must be >= 0$/)],
    [{ tokens: 2.5, value: 0.5 }, range(/^variant\.tokens is 2\.5; expected an integer$/)],
    [{ tokens: 2n ** 63n, value: 0.5 }, range(/^variant\.tokens is 9223372036854775808n; it must be an integer from -2\^63/)],
    [{ value: 0.5 }, nullArg(/^variant\.tokens is undefined; expected an integer$/)],
    [{ tokens: 5, value: 0.5, content: "" }, range(/^variant\.content is empty; a variant's content must be non-empty \(null or absent for none\)$/)],
    [{ tokens: 5, value: 0.5, content: "a\uD800" }, range(/^variant\.content holds a lone surrogate \(U\+D800\) at index 1: it has no UTF-8 form$/)],
    [{ tokens: 5, value: 0.5, content: "a\0b" }, range(/^variant\.content holds a NUL character at index 1/)],
    [{ tokens: 5, value: 0.5, content: 5 }, wrongType(/^variant\.content is 5; expected a string$/)],
    [null, nullArg(/^variant is null; expected a \{ tokens, value, content \} object$/)],
    [undefined, nullArg(/^variant is undefined; expected a \{ tokens, value, content \} object$/)],
    [[5, 0.5], wrongType(/^variant is an array; expected a \{ tokens, value, content \} object$/)],
  ];
  for (const [variant, check] of cases) {
    assert.throws(() => items.addVariant(0, variant), check, String(variant?.tokens) + " " + String(variant?.value));
  }
  assert.throws(() => items.addVariant(3, { tokens: 5, value: 0.5 }), range(/^index 3 is out of range: the list holds 3 items$/));
  assert.throws(() => items.addVariant(-1, { tokens: 5, value: 0.5 }), range(/^index -1 is out of range: the list holds 3 items$/));
  assert.throws(() => items.addVariant("0", { tokens: 5, value: 0.5 }), wrongType(/^index is the string "0"; expected an integer$/));
  // A method called on no list names `this`.
  assert.throws(() => Items.prototype.addVariant.call(null, 0, { tokens: 5, value: 0.5 }), nullArg(/^this is null; addVariant is a method of an items list$/));
  assert.throws(() => Items.prototype.addVariant.call(o200k, 0, { tokens: 5, value: 0.5 }), wrongType(/^this is a Tokenizer; addVariant is a method of an items list$/));
  assert.deepEqual(items.variants(0), before);
  for (const i of [1, 2]) assert.deepEqual(items.variants(i), []);
  // The 256th variant is the library's to refuse; the list keeps 255.
  for (let k = 0; k < 255; k++) items.addVariant(1, { tokens: 1, value: 1 });
  assert.throws(() => items.addVariant(1, { tokens: 1, value: 1 }), range(/^index 1: the item has 255 variants already, the most it can have$/));
  assert.equal(items.variants(1).length, 255);
  // A push with a bad variant or truncation adds nothing (all or nothing).
  const bad = [
    [[{ tokens: 1 }, { tokens: 2, variants: [{ tokens: 1, value: 2 }] }], range(/^items\[1\]\.variants\[0\]\.value is 2; it must be in \(0, 1\]/)],
    [{ tokens: 2, variants: [{ tokens: 1, value: 1 }, { tokens: 1, value: 1, content: "" }] }, range(/^variants\[1\]\.content is empty/)],
    [{ tokens: 2, variants: { tokens: 1, value: 1 } }, wrongType(/^variants is an object; expected an array$/)],
    [{ tokens: 2, variants: Array(256).fill({ tokens: 1, value: 1 }) }, range(/^variants has 256 variants; an item has at most 255$/)],
    [{ tokens: 2, truncatable: { keep: Keep.Tail, minTokens: -2 } }, range(/^truncatable\.minTokens is -2; it must be >= 0$/)],
    [{ tokens: 2, truncatable: { keep: 3, minTokens: 0 } }, range(/^truncatable\.keep is 3; expected Keep\.Head \(0\), Keep\.Tail \(1\) or Keep\.BothEnds \(2\)$/)],
    [{ tokens: 2, truncatable: { minTokens: 0 } }, nullArg(/^truncatable\.keep is undefined; expected an integer$/)],
    [{ tokens: 2, truncatable: { keep: Keep.Head } }, nullArg(/^truncatable\.minTokens is undefined; expected an integer$/)],
    [{ tokens: 2, truncatable: true }, wrongType(/^truncatable is true; expected a \{ keep, minTokens \} object$/)],
  ];
  for (const [item, check] of bad) assert.throws(() => items.push(item), check, JSON.stringify(item).slice(0, 80));
  assert.equal(items.length, 3);
  items.dispose();
  assert.throws(() => items.addVariant(0, { tokens: 5, value: 0.5 }), nullArg(/^this items list was disposed$/));
  assert.throws(() => items.variants(0), nullArg(/^this items list was disposed$/));
});

test("bad truncation settings: refused in JavaScript's terms, and nothing changes", () => {
  const items = cupel.items([{ tokens: 100, content: "alpha" }, { tokens: 200, content: "beta" }, { tokens: 50 }]);
  items.setTruncatable(1, Keep.Tail, 4);
  const keep = /; expected Keep\.Head \(0\), Keep\.Tail \(1\) or Keep\.BothEnds \(2\)$/;
  const cases = [
    [[1, Keep.Head, -1], range(/^minTokens is -1; it must be >= 0$/)],
    [[1, Keep.Head, -1n], range(/^minTokens is -1n; it must be >= 0$/)],
    [[1, Keep.Head, 1.5], range(/^minTokens is 1\.5; expected an integer$/)],
    [[1, Keep.Head, 2n ** 63n], range(/^minTokens is 9223372036854775808n; it must be an integer from -2\^63/)],
    [[1, Keep.Head], nullArg(/^minTokens is undefined; expected an integer$/)],
    [[1, 7, 1], range(new RegExp(`^keep is 7${keep.source}`))],
    [[1, -1, 1], range(new RegExp(`^keep is -1${keep.source}`))],
    [[1, "head", 1], wrongType(/^keep is the string "head"; expected an integer$/)],
    [[1, null, 1], nullArg(/^keep is null; expected an integer$/)],
    [[3, Keep.Head, 1], range(/^index 3 is out of range: the list holds 3 items$/)],
    [[1.5, Keep.Head, 1], range(/^index is 1\.5; expected an integer$/)],
  ];
  for (const [args, check] of cases) assert.throws(() => items.setTruncatable(...args), check, String(args));
  assert.deepEqual(items.truncatable(1), { keep: Keep.Tail, minTokens: 4 });
  assert.equal(items.truncatable(0), null);
  assert.throws(() => items.clearTruncatable(3), range(/^index 3 is out of range: the list holds 3 items$/));
  assert.throws(() => items.truncatable(3), range(/^index 3 is out of range: the list holds 3 items$/));
  assert.throws(() => items.variants(3), range(/^index 3 is out of range: the list holds 3 items$/));
  assert.deepEqual(items.truncatable(1), { keep: Keep.Tail, minTokens: 4 });
  items.dispose();
  assert.throws(() => items.setTruncatable(0, Keep.Head, 1), nullArg(/^this items list was disposed$/));
  assert.throws(() => items.clearTruncatable(0), nullArg(/^this items list was disposed$/));
  assert.throws(() => items.truncatable(0), nullArg(/^this items list was disposed$/));
});

test("setTokenizer: checked, and a disposed pipeline or tokenizer says so", () => {
  const pipeline = cupel.pipeline({ slicer: cupel.greedy() });
  const t = cupel.tokenizer("o200k_base");
  t.dispose();
  assert.throws(() => pipeline.setTokenizer(t), nullArg(/^tokenizer was disposed$/));
  assert.throws(() => pipeline.setTokenizer(undefined), nullArg(/^tokenizer is undefined; expected a Tokenizer$/));
  assert.throws(() => pipeline.setTokenizer("o200k_base"), wrongType(/^tokenizer is the string "o200k_base"; expected a Tokenizer$/));
  assert.throws(() => pipeline.setTokenizer(cupel.greedy()), wrongType(/^tokenizer is a Slicer; expected a Tokenizer$/));
  assert.throws(() => cupel.pipeline({ slicer: cupel.greedy(), tokenizer: t }), nullArg(/^tokenizer was disposed$/));
  assert.throws(() => cupel.pipeline({ slicer: cupel.greedy(), tokenizer: 5 }), wrongType(/^tokenizer is 5; expected a Tokenizer$/));
  pipeline.dispose();
  assert.throws(() => pipeline.setTokenizer(o200k), nullArg(/^this pipeline was disposed$/));
  assert.throws(() => pipeline.setTokenizer(null), nullArg(/^this pipeline was disposed$/));
});

test("the new reasons: codes 3 and 4, named by the library", () => {
  assert.equal(Reason.Variant, 3);
  assert.equal(Reason.Truncated, 4);
  assert.equal(cupel.reasonName(3), "Variant");
  assert.equal(cupel.reasonName(4), "Truncated");
});
