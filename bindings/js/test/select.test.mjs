// The one-call path, cupel.select(messages, { maxTokens | budget, policy,
// tokenizer }), against the long-hand pipeline built here by hand on the
// same data (the tokens counted, the groups and timestamps written out),
// compared through the whole report; and its refusals, which name the
// message (`messages[1].text`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, CupelError, Overflow } from "../index.js";

const cupel = await load();

/**
 * The long-hand run: items made by hand from `messages` (tokens counted
 * with `tokenizer`, content the text, score 1 unless given), `groups` and
 * `timestamps` as written in the test, then `pipeline.run` with a report.
 */
function longhand(messages, { tokenizer = "o200k_base", groups, timestamps, budget, pipeline }) {
  const t = cupel.tokenizer(tokenizer);
  const items = cupel.items(
    messages.map((m, i) => ({
      tokens: t.count(m.text),
      content: m.text,
      kind: m.kind,
      score: m.score ?? 1,
      pinned: m.pinned,
      group: groups[i],
      timestamp: timestamps[i],
      priority: m.priority,
      relevanceHint: m.relevance,
      key: m.key,
    })),
  );
  try {
    const { placed, report } = pipeline.run(items, budget, { report: true });
    return { messages: placed.map((i) => messages[i]), report };
  } finally {
    items.dispose();
    t.dispose();
  }
}

/** select and the long-hand run agree: the same messages (the very objects) and the same report. */
function agree(messages, opts, hand) {
  const got = cupel.selectWithReport(messages, opts);
  const want = longhand(messages, hand);
  assert.deepEqual(got.messages, want.messages);
  got.messages.forEach((m, k) => assert.equal(m, want.messages[k], "the host's own objects"));
  assert.equal(got.report.json, want.report.json);
  assert.deepEqual(cupel.select(messages, opts), got.messages);
  return got;
}

const positions = (n) => Array.from({ length: n }, (_, i) => i);
const none = (n) => Array(n).fill(0);

test("a chat with a pinned system prompt and no timestamps, under a preset", () => {
  const turns = [
    "How do I rotate the API keys of the staging cluster?",
    "Run the rotate-keys job in the ops console, then restart the gateway pods so that they read the new secret.",
    "The job failed with a permission error.",
    "Your role lacks secrets:write on staging. Ask an admin to grant it, or run the job as the ops service account.",
    "Granted. It worked, thanks! One more thing: how long do the old keys stay valid?",
    "Twenty-four hours, so that clients that cached them keep working while they refresh.",
  ];
  const messages = [
    { text: "You are the ops assistant of ACME. Be brief.", kind: "SystemPrompt", pinned: true },
    ...turns.map((text, i) => ({ text, kind: "Message", role: i % 2 ? "assistant" : "user" })),
  ];
  const n = messages.length;
  for (const max of [20, 40, 60, 80, 200]) {
    const budget = cupel.budget({ maxTokens: max });
    const pipeline = cupel.preset("Chat");
    const got = agree(messages, { maxTokens: max, policy: "Chat" }, { groups: none(n), timestamps: positions(n), budget, pipeline });
    assert.equal(got.messages[0], messages[0], "the pinned system prompt first (oldest)");
    budget.dispose();
    pipeline.dispose();
  }
  // Chronological: the kept messages in the given order.
  const kept = cupel.select(messages, { maxTokens: 60, policy: "chat" });
  assert.deepEqual(kept, [...kept].sort((a, b) => messages.indexOf(a) - messages.indexOf(b)));
  assert.ok(kept.length < n);
});

test("tool calls with their results, parallel calls and groups: kept or dropped together, numbered by first message", () => {
  const messages = [
    { text: "You are a coding agent.", kind: "SystemPrompt", pinned: true }, // 0
    { text: "Why does the login test fail?", kind: "Message" }, // 1
    { text: "call grep(refresh_token); call cat(auth.rs)", kind: "ToolCall", toolCallIds: ["c1", "c2"] }, // 2: parallel calls
    { text: "src/auth.rs:42 refresh_token expired ".repeat(30), kind: "ToolOutput", toolCallId: "c1" }, // 3
    { text: "fn refresh() { todo!() } ".repeat(20), kind: "ToolOutput", toolCallId: "c2" }, // 4
    { text: "note: staging uses Redis", kind: "Memory", group: "notes" }, // 5
    { text: "The refresh path is unimplemented.", kind: "Message" }, // 6
    { text: "call run_tests(auth)", kind: "ToolCall", toolCallId: "c3" }, // 7
    { text: "3 passed, 1 failed: login", kind: "ToolOutput", toolCallId: "c3" }, // 8
    { text: "note: CI runs on Node 20", kind: "Memory", group: "notes" }, // 9
    { text: "Fix it.", kind: "Message" }, // 10
  ];
  const n = messages.length;
  const groups = [0, 0, 1, 1, 1, 2, 0, 3, 3, 2, 0];
  const sizes = [];
  for (const max of [30, 60, 90, 150, 400, 1000]) {
    for (const policy of ["AgentLoop", "ToolUse", "Chat"]) {
      const budget = cupel.budget({ maxTokens: max });
      const pipeline = cupel.preset(policy);
      const got = agree(messages, { maxTokens: max, policy }, { groups, timestamps: positions(n), budget, pipeline });
      // A group is whole or absent.
      for (const g of [1, 2, 3]) {
        const members = messages.filter((_, i) => groups[i] === g);
        const kept = members.filter((m) => got.messages.includes(m)).length;
        assert.ok(kept === 0 || kept === members.length, `group ${g} split at ${max} under ${policy}`);
      }
      sizes.push(got.messages.length);
      budget.dispose();
      pipeline.dispose();
    }
  }
  assert.ok(new Set(sizes).size > 2, "the budgets make a difference");
});

test("groups: transitive through shared ids, ids of different fields apart, numbered by first message", () => {
  const messages = [
    { text: "a", toolCallId: "k" }, // 0: group 1 (with 3)
    { text: "b", group: "x" }, // 1: group 2 (x, t, u: 1, 2, 4, 5)
    { text: "c", group: "x", toolCallId: "t" }, // 2
    { text: "d", toolCallIds: ["k"] }, // 3
    { text: "e", toolCallIds: ["t", "u"] }, // 4
    { text: "f", toolCallId: "u" }, // 5
    { text: "g", group: "k" }, // 6: a group "k" is not the call id "k": group 3
    { text: "h" }, // 7: none
    { text: "i", toolCallId: "lonely" }, // 8: a call whose result is gone: group 4
  ];
  const budget = cupel.budget({ maxTokens: 100 });
  const pipeline = cupel.preset("Chat");
  const got = agree(messages, { maxTokens: 100, policy: "Chat" }, { groups: [1, 2, 2, 1, 2, 2, 3, 0, 4], timestamps: positions(9), budget, pipeline });
  assert.equal(got.messages.length, 9);
  budget.dispose();
  pipeline.dispose();
});

test("a policy document's text (with its tokenizer), timestamps as given, priorities, hints, keys and scores", () => {
  const t0 = Date.UTC(2026, 0, 1);
  const messages = [
    { text: "日本語のテキストを数えます。漢字とかなとカナ。", kind: "Document", timestamp: new Date(t0), priority: 5, key: 11n },
    { text: "🦀 crabs and 👩‍👩‍👧‍👦 a family", kind: "Message", timestamp: t0 + 1000, relevance: 0.9, key: 12 },
    { text: "plain ascii text for the counts", kind: "Message", priority: -3, relevance: 0.1 }, // no timestamp
    { text: "Ünïcödé wörds everywhere, ßtraße", kind: "Memory", timestamp: t0 + 3000, score: 0.25 },
    { text: "the newest message", kind: "Message", timestamp: t0 + 4000, pinned: false, relevance: 0.5 },
  ];
  const policy = `
    {"scorers": [{"type": "priority", "weight": 2}, {"type": "recency", "weight": 1},
                 {"type": "reflexive", "weight": 1}, {"type": "given", "weight": 1}],
     "placerType": "uShaped", "tokenizer": "cl100k_base"}`;
  const timestamps = [t0, t0 + 1000, undefined, t0 + 3000, t0 + 4000];
  for (const max of [10, 25, 40, 100]) {
    const budget = cupel.budget({ maxTokens: max });
    const pipeline = cupel.pipelineFromJson(policy);
    agree(messages, { maxTokens: max, policy }, { tokenizer: "cl100k_base", groups: none(5), timestamps, budget, pipeline });
    // A policy object says the same as its text.
    const pipeline2 = cupel.pipelineFromJson(policy);
    agree(messages, { maxTokens: max, policy: JSON.parse(policy) }, { tokenizer: "cl100k_base", groups: none(5), timestamps, budget, pipeline: pipeline2 });
    for (const h of [budget, pipeline, pipeline2]) h.dispose();
  }
  // Every message stamped: the bulk call; priorities and hints on all of them too.
  const all = messages.map((m, i) => ({ ...m, timestamp: t0 + i, priority: i, relevance: i / 10 }));
  const budget = cupel.budget({ maxTokens: 40 });
  const pipeline = cupel.pipelineFromJson(policy);
  agree(all, { maxTokens: 40, policy }, { tokenizer: "cl100k_base", groups: none(5), timestamps: all.map((m) => m.timestamp), budget, pipeline });
  budget.dispose();
  pipeline.dispose();
});

test("a pipeline object and a budget object (a Budget, or cupel.budget's options)", () => {
  const messages = Array.from({ length: 12 }, (_, i) => ({
    text: `message ${i}: ${"lorem ipsum dolor sit amet ".repeat(1 + (i % 4))}`,
    kind: i % 3 === 0 ? "ToolOutput" : "Message",
    score: ((i * 7) % 10) / 10 + 0.05,
    toolCallId: i % 3 === 0 ? `call-${i}` : undefined,
  }));
  messages[1].toolCallId = "call-0"; // the call of result 0
  const groups = [1, 1, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0];
  const greedy = cupel.knapsack(5);
  const pipeline = cupel.pipeline({ slicer: greedy, placer: cupel.uShaped(), overflow: Overflow.Proceed }); // the pushed scores
  const budget = cupel.budget({ maxTokens: 150, targetTokens: 120, outputReserve: 10 });
  const got = agree(messages, { budget, policy: pipeline }, { groups, timestamps: positions(12), budget, pipeline });
  assert.ok(got.messages.length > 0 && got.messages.length < 12);
  // The budget as options: the same as the Budget.
  const again = cupel.selectWithReport(messages, { budget: { maxTokens: 150, targetTokens: 120, outputReserve: 10 }, policy: pipeline });
  assert.equal(again.report.json, got.report.json);
  // The caller's pipeline and budget are used, not disposed.
  assert.ok(!pipeline.disposed && !budget.disposed);
  for (const h of [greedy, pipeline, budget]) h.dispose();
});

test("the tokenizer: the argument, else the policy's, else o200k_base", () => {
  // A text whose counts differ between the two encodings.
  const text = "日本語のテキストを数えます。漢字とかなとカナ、そして English も。";
  const o200k = cupel.tokenizer("o200k_base");
  const cl100k = cupel.tokenizer("cl100k_base");
  assert.notEqual(o200k.count(text), cl100k.count(text));
  const messages = [{ text }, { text: "short" }];
  const tokensOf = (r) => r.report.included.concat(r.report.excluded).find((d) => d.index === 0).itemTokens;
  const clPolicy = '{"scorers":[{"type":"recency","weight":1}],"tokenizer":"cl100k_base"}';
  const opts = { maxTokens: 1000 };
  assert.equal(tokensOf(cupel.selectWithReport(messages, { ...opts, policy: "Chat" })), o200k.count(text), "the default");
  assert.equal(tokensOf(cupel.selectWithReport(messages, { ...opts, policy: "AgentLoop" })), o200k.count(text), "AgentLoop's");
  assert.equal(tokensOf(cupel.selectWithReport(messages, { ...opts, policy: clPolicy })), cl100k.count(text), "the policy's");
  assert.equal(tokensOf(cupel.selectWithReport(messages, { ...opts, policy: clPolicy, tokenizer: "o200k_base" })), o200k.count(text), "the argument's");
  assert.equal(tokensOf(cupel.selectWithReport(messages, { ...opts, policy: "Chat", tokenizer: cl100k })), cl100k.count(text), "a Tokenizer");
  // A pipeline object: the tokenizer its document names.
  const withCl = cupel.pipeline({ slicer: cupel.greedy(), tokenizer: cl100k });
  assert.equal(tokensOf(cupel.selectWithReport(messages, { ...opts, policy: withCl })), cl100k.count(text), "the pipeline's");
  // A pipeline the format cannot write, with a built-in tokenizer: its name all the same.
  const g = cupel.greedy();
  const counted = cupel.countQuota(g, [{ kind: "Message", requireCount: 0, capCount: 5 }]);
  const nested = cupel.quota(counted, [{ kind: "Message", requirePercent: 0, capPercent: 100 }]);
  const unwritable = cupel.pipeline({ slicer: nested, tokenizer: cl100k });
  assert.throws(() => unwritable.toJson(), (e) => e instanceof CupelError);
  assert.equal(tokensOf(cupel.selectWithReport(messages, { ...opts, policy: unwritable })), cl100k.count(text), "unwritable");
  unwritable.setTokenizer(null);
  assert.equal(tokensOf(cupel.selectWithReport(messages, { ...opts, policy: unwritable })), o200k.count(text), "none: o200k_base");
  // One from a vocabulary file has no name: select asks for the tokenizer.
  const lines = Array.from({ length: 256 }, (_, b) => `${Buffer.from([b]).toString("base64")} ${b}`).join("\n");
  const file = cupel.tokenizerFromTiktoken(new TextEncoder().encode(lines));
  withCl.setTokenizer(file);
  assert.throws(
    () => cupel.select(messages, { ...opts, policy: withCl }),
    (e) => e instanceof RangeError && /^policy: the pipeline's tokenizer was loaded from a vocabulary file/.test(e.message),
  );
  assert.equal(tokensOf(cupel.selectWithReport(messages, { ...opts, policy: withCl, tokenizer: file })), file.count(text), "passed");
  for (const h of [o200k, cl100k, withCl, file, unwritable, nested, counted, g]) h.dispose();
});

test("the default policy (absent or null) is Chat; no message, no result; every message fits", () => {
  const messages = [{ text: "one" }, { text: "two", kind: "SystemPrompt" }, { text: "three" }];
  const budget = cupel.budget({ maxTokens: 1000 });
  const pipeline = cupel.preset("Chat");
  agree(messages, { maxTokens: 1000 }, { groups: none(3), timestamps: positions(3), budget, pipeline });
  agree(messages, { maxTokens: 1000, policy: null }, { groups: none(3), timestamps: positions(3), budget, pipeline });
  assert.deepEqual(cupel.select(messages, { maxTokens: 1000 }), messages);
  // Where the presets differ, no policy is Chat, not AgentLoop.
  const mixed = [
    { text: "a memory worth keeping", kind: "Memory", relevance: 1 },
    { text: "an older plain message", kind: "Message", relevance: 0 },
    { text: "a newer plain message", kind: "Message", relevance: 0 },
  ];
  assert.notDeepEqual(cupel.select(mixed, { maxTokens: 8, policy: "Chat" }), cupel.select(mixed, { maxTokens: 8, policy: "AgentLoop" }));
  for (const maxTokens of [0, 4, 8, 10, 14]) {
    assert.deepEqual(cupel.select(mixed, { maxTokens }), cupel.select(mixed, { maxTokens, policy: "Chat" }));
    assert.deepEqual(cupel.select(mixed, { maxTokens, policy: undefined }), cupel.select(mixed, { maxTokens, policy: "Chat" }));
  }
  assert.deepEqual(cupel.select([], { maxTokens: 10, policy: "Chat" }), []);
  assert.deepEqual(cupel.select(messages, { maxTokens: 0, policy: "Chat" }), []);
  budget.dispose();
  pipeline.dispose();
});

test("empty ids (\"\", null, undefined) are none, every message with an id is in a group, key 0 is none", () => {
  const messages = [
    { text: "a", group: "", key: 0 }, // 0: none
    { text: "b", toolCallId: "", key: 0n }, // 1: none
    { text: "c", toolCallIds: ["", null, undefined, "t"], group: null }, // 2: group 1 (with 3)
    { text: "d", toolCallId: "t", key: 5 }, // 3
    { text: "e", group: "g", toolCallIds: [""] }, // 4: alone, group 2
    { text: "f", toolCallIds: [] }, // 5: none
    { text: "g", toolCallId: "u", key: 2n ** 64n - 1n }, // 6: alone, group 3
    { text: "h", group: "t" }, // 7: a group "t" is not the call "t": group 4
  ];
  const budget = cupel.budget({ maxTokens: 100 });
  const pipeline = cupel.preset("Chat");
  const got = agree(messages, { maxTokens: 100 }, { groups: [0, 0, 1, 1, 2, 0, 3, 4], timestamps: positions(8), budget, pipeline });
  assert.equal(got.messages.length, 8);
  budget.dispose();
  pipeline.dispose();
});

test("a traced pipeline object traces the one-call run", () => {
  const pipeline = cupel.preset("Chat");
  const names = [];
  pipeline.setTrace(0, (e) => names.push(e.name));
  cupel.select([{ text: "a" }, { text: "b" }], { maxTokens: 10, policy: pipeline });
  assert.equal(names.length, 6);
  pipeline.dispose();
});

test("bad input: the error names the message, in JavaScript's base; nothing is left behind", () => {
  const is = (Class, message) => (e) => {
    assert.equal(e.constructor, Class, `${e.constructor.name}: ${e.message}`);
    assert.ok(e instanceof CupelError);
    if (message instanceof RegExp) assert.match(e.message, message);
    else assert.equal(e.message, message);
    return true;
  };
  const ok = [{ text: "first" }, { text: "second" }];
  const live = cupel.liveHandles;
  const cases = [
    [[{ text: "a" }, { text: "" }], { maxTokens: 5 }, RangeError, "messages[1].text is empty; a message's text must be non-empty"],
    [[{ text: "a" }, {}], { maxTokens: 5 }, TypeError, "messages[1].text is undefined; a message needs its text (a non-empty string)"],
    [[{ text: 3 }], { maxTokens: 5 }, TypeError, "messages[0].text is 3; expected a string"],
    [[{ text: "a\uD800" }], { maxTokens: 5 }, RangeError, /^messages\[0\]\.text holds a lone surrogate \(U\+D800\) at index 1/],
    [[null], { maxTokens: 5 }, TypeError, /^messages\[0\] is null; expected a message object/],
    [["text"], { maxTokens: 5 }, TypeError, /^messages\[0\] is the string "text"; expected a message object/],
    [[{ text: "a", pinned: "yes" }], { maxTokens: 5 }, TypeError, /^messages\[0\]\.pinned is the string "yes"; expected a boolean/],
    [[{ text: "a" }, { text: "b", kind: " " }], { maxTokens: 5 }, RangeError, /^messages\[1\]\.kind/],
    [[{ text: "a", score: "high" }], { maxTokens: 5 }, TypeError, /^messages\[0\]\.score is the string "high"/],
    [[{ text: "a" }, { text: "b", score: NaN }], { maxTokens: 5 }, RangeError, /^messages\[1\]\.score/],
    [[{ text: "a", key: -1 }], { maxTokens: 5 }, RangeError, /^messages\[0\]\.key is -1/],
    [[{ text: "a", key: 2n ** 64n }], { maxTokens: 5 }, RangeError, /^messages\[0\]\.key is 18446744073709551616n/],
    [[{ text: "a", group: 7 }], { maxTokens: 5 }, TypeError, /^messages\[0\]\.group is 7; expected a string/],
    [[{ text: "a", toolCallIds: "c1" }], { maxTokens: 5 }, TypeError, /^messages\[0\]\.toolCallIds is the string "c1"; expected an array/],
    [[{ text: "a", toolCallIds: ["c1", 7] }], { maxTokens: 5 }, TypeError, /^messages\[0\]\.toolCallIds\[1\] is 7; expected a string/],
    [[{ text: "a", toolCallId: "x\0y" }], { maxTokens: 5 }, RangeError, /^messages\[0\]\.toolCallId holds a NUL/],
    [[{ text: "a", timestamp: new Date(NaN) }], { maxTokens: 5 }, RangeError, "messages[0].timestamp is an invalid Date"],
    [[{ text: "a", timestamp: 1.5 }], { maxTokens: 5 }, RangeError, /^messages\[0\]\.timestamp is 1\.5; expected an integer/],
    [[{ text: "a", priority: 0.5 }], { maxTokens: 5 }, RangeError, /^messages\[0\]\.priority is 0\.5/],
    [[{ text: "a", relevance: "x" }], { maxTokens: 5 }, TypeError, /^messages\[0\]\.relevance is the string "x"/],
    [ok, { maxTokens: -1, policy: "Chat" }, RangeError, /^maxTokens is -1/],
    [ok, { maxTokens: 1.5 }, RangeError, /^maxTokens is 1\.5; expected an integer/],
    [ok, { maxTokens: "10" }, TypeError, /^maxTokens is the string "10"/],
    [ok, {}, TypeError, /^maxTokens is undefined/],
    [ok, undefined, TypeError, /^maxTokens is undefined/],
    [ok, { maxTokens: 10, budget: { maxTokens: 10 } }, TypeError, /both given/],
    [ok, { budget: { maxTokens: 10, targetTokens: 20 } }, RangeError, /target/],
    [ok, { budget: 10 }, TypeError, /^budget is 10/],
    [ok, { maxTokens: 10, policy: "Nope" }, RangeError, /^policy "Nope" is no preset; the presets are Chat, /],
    [ok, { maxTokens: 10, policy: "" }, RangeError, /^policy "" is no preset/],
    [ok, { maxTokens: 10, policy: 3 }, TypeError, /^policy is 3; expected a preset name, a policy document/],
    [ok, { maxTokens: 10, policy: '  {"scorers":[{"type":"recency","weight":-1}]}' }, RangeError, "policy $.scorers[0].weight: must be positive and finite (got -1)"],
    [ok, { maxTokens: 10, policy: "{" }, RangeError, /^policy: malformed JSON at line 1 column 1/],
    [ok, { maxTokens: 10, policy: { scorers: [] } }, RangeError, /^policy \$\.scorers/],
    [ok, { maxTokens: 10, policy: cupel.items([]) }, TypeError, /^policy is an Items/],
    [ok, { maxTokens: 10, tokenizer: "p50k" }, RangeError, /^name "p50k"|p50k/],
    [ok, { maxTokens: 10, tokenizer: 5 }, TypeError, /^tokenizer is 5/],
    [null, { maxTokens: 10 }, TypeError, "messages is null; expected an array"],
    [[{ text: "a" }, , { text: "c" }], { maxTokens: 10 }, TypeError, /^messages\[1\] is undefined; expected a message object/], // eslint-disable-line no-sparse-arrays
    [{ text: "a" }, { maxTokens: 10 }, TypeError, "messages is an object; expected an array"],
    [ok, 5, TypeError, /^options is 5/],
  ];
  for (const [messages, opts, Class, message] of cases) {
    assert.throws(() => cupel.select(messages, opts), is(Class, message), String(message));
  }
  // A disposed pipeline or budget given.
  const p = cupel.preset("Chat");
  p.dispose();
  assert.throws(() => cupel.select(ok, { maxTokens: 5, policy: p }), is(TypeError, "policy was disposed"));
  const b = cupel.budget({ maxTokens: 5 });
  b.dispose();
  assert.throws(() => cupel.select(ok, { budget: b }), is(TypeError, "budget was disposed"));
  // An overflow error of the run itself comes through as it is.
  const tight = cupel.pipelineFromJson({ scorers: [{ type: "recency", weight: 1 }], overflowStrategy: "throw" });
  assert.throws(
    () => cupel.select([{ text: "a very long pinned message that cannot fit", pinned: true }], { maxTokens: 2, policy: tight }),
    (e) => e instanceof CupelError,
  );
  tight.dispose();
  assert.equal(cupel.liveHandles, live + 1, "only the Items given as a policy above is left"); // cupel.items([]) in the cases
});
