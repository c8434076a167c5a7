// The binding contract (tests/contract/contract.txt) run through the
// JavaScript API: every row whose `where` names js.
//   node bindings/js/test/contract.mjs [contract.txt]
// (default: $CUPEL_CONTRACT, else the repository's table beside this file).
// Prints "contract js: N passed, M failed" and a line per failure; exits
// non-zero if a row fails, names an op or expect this runner does not know,
// or names an argument its op does not take. `node --test` runs it too.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { load, CupelError, Keep, Items, SessionAction, Pipeline, Budget, TraceLevel } from "../index.js";

const LANG = "js";

/** The error class of each expect category (the table's @map line must say the same). */
const ERROR_CLASS = {
  null: TypeError,
  type: TypeError,
  integer: RangeError,
  value: RangeError,
  range: RangeError,
  closed: TypeError,
};

/**
 * Where the JavaScript API names an argument otherwise than the table's
 * name in camelCase: "op arg" -> the name the message must give.
 */
const ALIAS = {
  "scorer.composite children": "parts", // composite([[scorer, weight], ...]): parts[k][0]
  "scorer.composite weights": "parts", //                                       parts[k][1]
  // items.addVariant(...): the list is the receiver, `this` (a null one: the
  // method called through Items.prototype with null).
  "items.add_variant items": "this",
  "items.set_key items": "this", // the same for setKey
  "session.set_slack fraction": "slack", // the property: session.slack = fraction
  // Methods of the handle: the receiver is `this` (a null one: the method
  // called through the prototype with null).
  "pipeline.to_json pipeline": "this",
  "budget.to_json budget": "this",
  "pipeline.set_trace pipeline": "this",
  // policySensitivity(variants, items, budget): the labels and pipelines
  // come as [label, pipeline] pairs, so "fewer than two" names variants.
  "policy_sensitivity count": "variants",
};

const SENTINELS = ["18446744073709551615", "9223372036854775808", "9223372036854775807", "4294967295"];

/** A `closed` row's message holds one of these words, in any case. */
const CLOSED_WORDS = ["closed", "disposed", "freed", "moved"];

const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

/** Whether `msg` holds `word` with no letter, digit or '_' on either side. */
function hasWord(msg, word) {
  for (let at = msg.indexOf(word); at >= 0; at = msg.indexOf(word, at + 1)) {
    const before = at > 0 && /[A-Za-z0-9_]/.test(msg[at - 1]);
    const after = at + word.length < msg.length && /[A-Za-z0-9_]/.test(msg[at + word.length]);
    if (!before && !after) return true;
  }
  return false;
}

// ---- the table ----------------------------------------------------------------

function parse(text) {
  const rows = [];
  let map = null;
  for (const [n, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line.startsWith("@map")) {
      const f = line.split(/\s+/);
      if (f[1] === LANG) map = f.slice(2);
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const f = line.split(/\s+/);
    if (f.length !== 6) throw new Error(`contract.txt:${n + 1}: not a row of six fields: ${line}`);
    const [id, op, arg, value, expect, where] = f;
    rows.push({ id, op, arg, value, expect, where });
  }
  return { rows, map };
}

function namesLanguage(where) {
  if (where === "all" || where === "dyn") return true;
  if (where === "handles") return true; // all but c
  return where.split(",").includes(LANG);
}

/**
 * The row's value as JavaScript values to try: one, or for 2^63 and 2^64
 * two (a number and a BigInt: both must be refused alike).
 */
function valuesOf(v) {
  if (v === "-") return [undefined]; // no argument replaced: the op's defaults
  if (v === "null") return [null];
  if (v === "head") return [Keep.Head];
  if (v === "tail") return [Keep.Tail];
  if (v === "both_ends") return [Keep.BothEnds];
  if (v === "end") return [3];
  if (v === "bad-utf8") return ["\uD800"];
  if (v === "nan") return [NaN];
  if (v === "inf") return [Infinity];
  if (v === "-inf") return [-Infinity];
  if (v === "true") return [true];
  if (v === "stages") return [TraceLevel.Stages];
  if (v === "exclusions") return [TraceLevel.Exclusions];
  if (v === "full") return [TraceLevel.Full];
  if (v in JSON_VALUES) return [JSON_VALUES[v]];
  if (v === "false") return [false];
  const pow = /^2\^(\d+)$/.exec(v);
  if (pow) return [2 ** Number(pow[1]), 2n ** BigInt(pow[1])];
  if (v.startsWith('"')) {
    if (!v.endsWith('"') || v.length < 2) throw new Error(`bad string value ${v}`);
    return [v.slice(1, -1).replace(/\\x([0-9a-fA-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))];
  }
  if (/^-?\d+(\.\d+)?$/.test(v)) return [Number(v)];
  return [Symbol.for(v)]; // closed, wrong-handle: resolved by the op's handle()
}

// ---- the fixture and the ops ----------------------------------------------------

/** The table's JSON texts for `json`. */
const JSON_VALUES = {
  "policy-null": "null",
  "policy-malformed": '{"scorers":',
  "policy-bad-weight": '{"scorers":[{"type":"recency","weight":-1}]}',
  "policy-bad-type": '{"scorers":[{"type":"nope","weight":1}]}',
  "budget-bad": '{"maxTokens":100,"targetTokens":250}',
  "budget-missing": '{"targetTokens":1}',
};

/** The table's POLICY (the fixture's pipeline as JSON) and BUDGET. */
const POLICY = '{"scorers":[{"type":"recency","weight":1}],"slicerType":"greedy","placerType":"chronological"}';
const BUDGET = '{"maxTokens":300,"targetTokens":250}';

/** The table's SENTENCE: 47 bytes, 12 tokens in o200k_base. */
const SENTENCE = "Hello, world! This is libcupel counting tokens.";

const FIXTURE = [
  { tokens: 100, score: 0.9, kind: "Message", content: "alpha", timestamp: 1000 },
  { tokens: 200, score: 0.5, kind: "Document", content: "beta", timestamp: 2000 },
  { tokens: 50, score: 0.1, kind: "ToolOutput", content: "gamma", timestamp: 3000 },
];

/** The table's MESSAGES: the fixture's items as messages of the one-call path. */
const MESSAGES = FIXTURE.map(({ content, kind, timestamp }) => ({ text: content, kind, timestamp }));

function fixture(cupel) {
  const f = {
    items: cupel.items(FIXTURE),
    budget: cupel.budget({ maxTokens: 300, targetTokens: 250 }),
    greedy: cupel.greedy(),
    recency: cupel.scorers.recency(),
    priority: cupel.scorers.priority(),
    kind: cupel.scorers.kind(),
    chronological: cupel.chronological(),
    stream: cupel.stream(100),
    tokenizer: cupel.tokenizer("o200k_base"),
  };
  f.pipeline = cupel.pipeline({ scorer: f.recency, slicer: f.greedy, placer: f.chronological });
  const kindMessage = cupel.scorers.kind({ Message: 1 });
  f.kindpipe = cupel.pipeline({ scorer: kindMessage, slicer: f.greedy, placer: f.chronological });
  kindMessage.dispose();
  f.all = Object.values(f);
  // What an op makes (a pipeline from JSON, a preset): disposed with the rest.
  f.own = (h) => {
    f.all.push(h);
    return h;
  };
  // The session ops make a session from `pipeline`; disposed with the rest.
  f.session = (opts) => {
    const s = cupel.session(f.pipeline, opts);
    f.all.push(s);
    return s;
  };
  return f;
}

/**
 * The ops: each gets the fixture and `arg(name, default)` (the row's value
 * for the argument it replaces, else the default) and `handle(name,
 * fixtureHandle)` (null, the handle disposed first, or a handle of another
 * type). They return what the call returned, as the table writes results.
 */
const OPS = {
  "items.push": (f, arg, handle) =>
    void handle("items", f.items).push({ tokens: arg("tokens", 10), score: arg("score", 0.5), kind: arg("kind", "Message") }),
  "items.push_many": (f, arg, handle) => {
    const list = Array.from({ length: 12 }, () => ({ tokens: 7, score: 0.5, kind: "Message" }));
    list[11] = { tokens: arg("tokens", 7), score: arg("score", 0.5), kind: arg("kind", "Message") };
    handle("items", f.items).push(list);
  },
  "items.set_content": (f, arg) => void f.items.setContent(arg("index", 0), arg("content", "hello")),
  "items.set_timestamp": (f, arg) => void f.items.setTimestamp(arg("index", 0), arg("unix_millis", 5)),
  "items.set_priority": (f, arg) => void f.items.setPriority(arg("index", 0), arg("priority", 1)),
  "items.set_pinned": (f, arg) => void f.items.setPinned(arg("index", 0), arg("pinned", true)),
  "items.set_group": (f, arg) => void f.items.setGroup(arg("index", 0), arg("group", 7)),
  "items.add_tag": (f, arg) => void f.items.addTag(arg("index", 0), arg("tag", "t")),
  "items.set_metadata": (f, arg) => void f.items.setMetadata(arg("index", 0), arg("key", "k"), arg("value", "v")),
  "items.get": (f, arg, handle, check) => {
    const index = arg("index", 1);
    const item = handle("items", f.items).get(index);
    const want = FIXTURE[index];
    for (const field of ["tokens", "score", "kind", "content", "timestamp"]) {
      if (item[field] !== want[field]) check(`${field} read back as ${item[field]}, not ${want[field]}`);
    }
  },
  "items.close": (f, arg, handle) => void handle("items", f.items).dispose(),
  "budget.new": (f, arg, handle, check, cupel) =>
    cupel.budget({ maxTokens: arg("max_tokens", 1000), targetTokens: arg("target_tokens", 800) }).dispose(),
  "budget.set_output_reserve": (f, arg, handle) => void handle("budget", f.budget).setOutputReserve(arg("output_reserve", 10)),
  "budget.set_safety_margin": (f, arg, handle) => void handle("budget", f.budget).setSafetyMargin(arg("percent", 5)),
  "budget.reserve": (f, arg, handle) => void handle("budget", f.budget).reserve(arg("kind", "Message"), arg("tokens", 10)),
  "slicer.knapsack": (f, arg, handle, check, cupel) => cupel.knapsack(arg("bucket_size", 100)).dispose(),
  "slicer.quota": (f, arg, handle, check, cupel) =>
    cupel
      .quota(handle("inner", f.greedy), [
        { kind: arg("kind", "Message"), requirePercent: arg("require_percent", 10), capPercent: arg("cap_percent", 50) },
      ])
      .dispose(),
  "slicer.count_quota": (f, arg, handle, check, cupel) =>
    cupel
      .countQuota(handle("inner", f.greedy), [
        { kind: arg("kind", "Message"), requireCount: arg("require_count", 1), capCount: arg("cap_count", 2) },
      ])
      .dispose(),
  "scorer.kind": (f, arg, handle, check, cupel) =>
    cupel.scorers.kind({ [arg("kind", "Message")]: arg("weight", 1) }).dispose(),
  "scorer.composite": (f, arg, handle, check, cupel) =>
    cupel.scorers
      .composite([
        [f.recency, 1],
        [f.priority, 1],
        [handle("children", f.kind), arg("weights", 1)],
      ])
      .dispose(),
  "scorer.scaled": (f, arg, handle, check, cupel) => cupel.scorers.scaled(handle("inner", f.recency)).dispose(),
  "scorer.metadata_key": (f, arg, handle, check, cupel) =>
    cupel.scorers.metadataKey(arg("key", "k"), arg("value", "v"), arg("boost", 2)).dispose(),
  "placer.place": (f, arg, handle) =>
    handle("placer", f.chronological).place(handle("items", f.items), [0, 1, arg("indices", 2)], [0.5, 0.5, arg("scores", 0.5)]),
  "pipeline.new": (f, arg, handle, check, cupel) =>
    cupel
      .pipeline({ scorer: handle("scorer", f.recency), slicer: handle("slicer", f.greedy), placer: handle("placer", f.chronological) })
      .dispose(),
  "pipeline.run": (f, arg, handle) => handle("pipeline", f.pipeline).run(handle("items", f.items), handle("budget", f.budget)).placed,
  slice: (f, arg, handle, check, cupel) =>
    cupel.slice(handle("slicer", f.greedy), handle("items", f.items), handle("budget", f.budget), {
      pinnedTokens: arg("pinned_tokens", 0),
    }).selected,
  marginal_items: (f, arg, handle, check, cupel) =>
    cupel.marginalItems(
      handle("slicer", f.greedy),
      handle("items", f.items),
      handle("budget", f.budget),
      arg("pinned_tokens", 0),
      arg("slack_tokens", 150),
    ),
  find_min_budget: (f, arg, handle, check, cupel) =>
    cupel.findMinBudget(
      handle("slicer", f.greedy),
      handle("items", f.items),
      arg("pinned_tokens", 0),
      arg("target_index", 2),
      arg("search_ceiling", 1000),
    ) ?? "none",
  "stream.push": (f, arg, handle) => void handle("stream", f.stream).push(arg("tokens", 10), arg("score", 0.5)),
  "reason.name": (f, arg, handle, check, cupel) => cupel.reasonName(arg("code", 0)),
  "tokenizer.new": (f, arg, handle, check, cupel) => cupel.tokenizer(arg("name", "o200k_base")).dispose(),
  "tokenizer.count": (f, arg, handle) => handle("tokenizer", f.tokenizer).count(arg("text", SENTENCE)),
  "tokenizer.count_many": (f, arg, handle) => handle("tokenizer", f.tokenizer).countMany([SENTENCE, arg("texts", "hello world")]),
  "tokenizer.truncate": (f, arg, handle, check) => {
    const text = arg("text", SENTENCE);
    const cut = handle("tokenizer", f.tokenizer).truncate(text, arg("max_tokens", 4), arg("keep", Keep.Head));
    // The kept text is the text's head and tail, in the same units as the offsets.
    if (cut.text !== text.slice(0, cut.headEnd) + text.slice(cut.tailStart)) check(`the kept text ${JSON.stringify(cut.text)}`);
    return [cut.headEnd, cut.tailStart, cut.tokens];
  },
  "items.push_text": (f, arg, handle, check) => {
    const text = arg("text", "hello world");
    handle("items", f.items).pushText(handle("tokenizer", f.tokenizer), text, arg("score", 0.5), arg("kind", "Message"));
    if (f.items.length !== 4) check(`the list holds ${f.items.length} items, not 4`);
    const item = f.items.get(3);
    if (item.tokens !== 2 || item.content !== text) check(`item 3 reads back ${item.tokens} tokens and ${JSON.stringify(item.content)}`);
  },
  "items.add_variant": (f, arg, handle, check) => {
    const index = arg("index", 0);
    const variant = { tokens: arg("tokens", 5), value: arg("value", 0.5), content: arg("content", "[cleared]") };
    // The receiver as an argument: a null list calls the method on null.
    Items.prototype.addVariant.call(handle("items", f.items), index, variant);
    const got = f.items.variants(index);
    const want = { tokens: variant.tokens, value: variant.value, content: variant.content };
    if (got.length !== 1 || got[0].tokens !== want.tokens || got[0].value !== want.value || got[0].content !== want.content) {
      check(`item ${index} reads back the variants ${JSON.stringify(got)}`);
    }
  },
  "items.set_truncatable": (f, arg, handle, check) => {
    const index = arg("index", 1);
    const keep = arg("keep", Keep.Head);
    const minTokens = arg("min_tokens", 1);
    handle("items", f.items).setTruncatable(index, keep, minTokens);
    const got = f.items.truncatable(index);
    if (got === null || got.keep !== keep || got.minTokens !== minTokens) check(`item ${index} reads back ${JSON.stringify(got)}`);
  },
  "items.set_key": (f, arg, handle, check) => {
    const index = arg("index", 0);
    const key = arg("key", 7);
    // The receiver as an argument: a null list calls the method on null.
    Items.prototype.setKey.call(handle("items", f.items), index, key);
    if (BigInt(f.items.get(index).key) !== BigInt(key)) check(`item ${index} reads back the key ${f.items.get(index).key}`);
  },
  "items.set_volatile": (f, arg, handle, check) => {
    const index = arg("index", 0);
    const isVolatile = arg("is_volatile", true);
    handle("items", f.items).setVolatile(index, isVolatile);
    if (f.items.get(index).volatile !== isVolatile) check(`item ${index} reads back volatile ${f.items.get(index).volatile}`);
  },
  "session.new": (f, arg, handle, check, cupel) => {
    const s = cupel.session(handle("pipeline", f.pipeline));
    f.all.push(s);
    if (s.lastAction !== SessionAction.First || s.slack !== 0.2) check(`a new session reads back ${s.lastAction}, slack ${s.slack}`);
  },
  // The session is made first: a `pipeline` closed is closed after it.
  "session.run": (f, arg, handle, check) => {
    const s = f.session();
    handle("pipeline", f.pipeline);
    const { placed } = handle("session", s).run(handle("items", f.items), handle("budget", f.budget));
    if (s.lastAction !== SessionAction.First || s.stablePrefix.items !== 0) check(`a first run reads back ${s.lastAction}`);
    return placed.length;
  },
  "session.run_keyed": (f, arg, handle) => {
    const s = f.session();
    // Keys 1, 2, 3; `key` replaces the LAST one.
    f.items.setKey(0, 1).setKey(1, 2).setKey(2, arg("key", 3));
    return handle("session", s).run(handle("items", f.items), handle("budget", f.budget)).placed.length;
  },
  "session.run_twice": (f, arg, handle, check) => {
    const s = handle("session", f.session());
    const first = s.run(handle("items", f.items), handle("budget", f.budget)).placed;
    const again = s.run(f.items, f.budget).placed;
    if (again.join() !== first.join() || s.lastAction !== SessionAction.Append) check(`the second run placed ${again} (${s.lastAction})`);
    return [s.stablePrefix.items, s.stablePrefix.tokens];
  },
  "session.set_slack": (f, arg, handle, check) => {
    const s = f.session();
    const fraction = arg("fraction", 0.2);
    handle("session", s).slack = fraction;
    if (s.slack !== fraction) check(`the slack reads back ${s.slack}, not ${fraction}`);
  },
  "pipeline.set_tokenizer": (f, arg, handle) => void handle("pipeline", f.pipeline).setTokenizer(handle("tokenizer", f.tokenizer)),
  "pipeline.run_cut": (f, arg, handle) => {
    f.items.setTruncatable(1, Keep.Head, 1);
    const pipeline = handle("pipeline", f.pipeline);
    pipeline.setTokenizer(handle("tokenizer", f.tokenizer));
    return pipeline.run(handle("items", f.items), handle("budget", f.budget), { report: true }).report.included.length;
  },
  "pipeline.from_json": (f, arg, handle, check, cupel) =>
    f.own(cupel.pipelineFromJson(arg("json", POLICY))).run(f.items, f.budget).placed.length,
  "pipeline.to_json": (f, arg, handle, check, cupel) => {
    const text = Pipeline.prototype.toJson.call(handle("pipeline", f.pipeline));
    const again = f.own(cupel.pipelineFromJson(text)).toJson();
    if (again !== text) check(`the text read back writes ${again}, not ${text}`);
  },
  "budget.from_json": (f, arg, handle, check, cupel) =>
    f.pipeline.run(f.items, f.own(cupel.budgetFromJson(arg("json", BUDGET)))).placed.length,
  "budget.to_json": (f, arg, handle, check, cupel) => {
    const text = Budget.prototype.toJson.call(handle("budget", f.budget));
    const again = f.own(cupel.budgetFromJson(text)).toJson();
    if (again !== text) check(`the text read back writes ${again}, not ${text}`);
  },
  "pipeline.preset": (f, arg, handle, check, cupel) => f.own(cupel.preset(arg("name", "Chat"))).run(f.items, f.budget).placed.length,
  policy_sensitivity: (f, arg, handle, check, cupel) => {
    const variants = [["a", f.pipeline], ["b", f.kindpipe]];
    // `count` 1 passes the first pair only.
    const count = arg("count", 2);
    const result = cupel.policySensitivity(variants.slice(0, count), handle("items", f.items), handle("budget", f.budget));
    const labels = result.variants.map((v) => v.label).join();
    if (labels !== "a,b") check(`the variants are labelled ${labels}`);
    return result.diffs.length;
  },
  "report.analytics": (f, arg, handle, check) => {
    const { report } = handle("pipeline", f.pipeline).run(handle("items", f.items), handle("budget", f.budget), { report: true });
    const a = report.analytics;
    if (Math.abs(a.budgetUtilization - 250 / 300) > 1e-9) check(`the budget utilization is ${a.budgetUtilization}, not 250/300`);
    return [a.kindDiversity, a.timestampCoverage];
  },
  "pipeline.set_trace": (f, arg, handle) => {
    let events = 0;
    const callback = arg("callback", () => events++);
    Pipeline.prototype.setTrace.call(handle("pipeline", f.pipeline), arg("level", TraceLevel.Stages), callback);
    f.pipeline.run(f.items, f.budget);
    return events;
  },
  select: (f, arg, handle, check, cupel) => {
    const messages = arg("messages", MESSAGES);
    const kept = cupel.select(messages, { maxTokens: arg("max_tokens", 2), policy: arg("policy", "Chat") });
    // The host's own message objects, in placed order.
    if (kept.some((m) => !MESSAGES.includes(m))) check("select returned objects that are not the messages given");
    return kept.length;
  },
};

/** A result as the table writes it: [i,j], a number, a name. */
function show(result) {
  if (Array.isArray(result)) return `[${result.join(",")}]`;
  return String(result);
}

/** The element position an error message must give (in JavaScript's base, 0), or null. */
function positionOf(row) {
  if (row.value === "end") return "3";
  if (row.op === "items.push_many") return "11";
  if (row.op === "tokenizer.count_many" && row.arg === "texts") return "1";
  if (
    (row.op === "scorer.composite" && (row.arg === "children" || row.arg === "weights")) ||
    (row.op === "placer.place" && (row.arg === "indices" || row.arg === "scores"))
  ) {
    return "2";
  }
  if (/^-\d/.test(row.value) && (row.arg.includes("index") || row.arg === "indices")) return row.value;
  return null;
}

/** Runs `row` once with `value`; returns null if it passed, else why not. */
function runOnce(cupel, row, value) {
  const f = fixture(cupel);
  const used = new Set();
  let checkFailed = null;
  const arg = (name, dflt) => {
    if (name !== row.arg) return dflt;
    used.add(name);
    if (typeof value === "symbol") throw new Error(`value ${row.value} is not a plain value for ${name}`);
    return value;
  };
  const handle = (name, h) => {
    if (name !== row.arg) return h;
    used.add(name);
    if (value === null) return null;
    if (value === Symbol.for("closed")) {
      h.dispose();
      return h;
    }
    if (value === Symbol.for("wrong-handle")) return h === f.greedy ? f.recency : f.greedy;
    return value; // a plain value where a handle goes (a number, a string)
  };
  const check = (what) => {
    checkFailed ??= what;
  };
  try {
    const op = OPS[row.op];
    if (!op) return `unknown op ${row.op}`;
    let outcome;
    try {
      outcome = { result: op(f, arg, handle, check, cupel) };
    } catch (error) {
      outcome = { error };
    }
    if (row.arg !== "-" && !used.has(row.arg)) return `op ${row.op} takes no argument ${row.arg}`;
    const { result, error } = outcome;
    if (row.expect === "ok" || row.expect.startsWith("ok=")) {
      if (error) return `expected ok, got ${error.constructor.name}: ${error.message}`;
      if (checkFailed) return `ok, but ${checkFailed}`;
      if (row.expect.startsWith("ok=") && show(result) !== row.expect.slice(3)) {
        return `expected ${row.expect.slice(3)}, got ${show(result)}`;
      }
      return null;
    }
    const Want = ERROR_CLASS[row.expect];
    if (!Want) return `expect ${row.expect} is not one this runner can check`;
    if (!error) return `expected ${Want.name}, but the call succeeded (${show(result)})`;
    if (error.constructor !== Want || !(error instanceof CupelError)) {
      return `expected libcupel's ${Want.name}, got ${error.constructor.name}${error instanceof CupelError ? "" : " (not from libcupel)"}: ${error.message}`;
    }
    const msg = error.message;
    const name = ALIAS[`${row.op} ${row.arg}`] ?? camel(row.arg);
    if (!hasWord(msg, name)) return `message "${msg}" does not name ${name}`;
    const pos = positionOf(row);
    if (pos !== null && !hasWord(msg, pos)) return `message "${msg}" does not give position ${pos}`;
    // The caller's own value may show; a sentinel it did not pass may not.
    const passed = typeof value === "bigint" || Number.isInteger(value) ? BigInt(value).toString() : "";
    for (const s of SENTINELS) {
      if (msg.includes(s) && passed !== s) return `message "${msg}" shows the sentinel ${s}`;
    }
    // closed shares TypeError with null: the words tell a closed handle from a NULL passed on.
    if (row.expect === "closed" && !CLOSED_WORDS.some((w) => hasWord(msg.toLowerCase(), w))) {
      return `message "${msg}" does not say the handle was closed (${CLOSED_WORDS.join("/")})`;
    }
    if (!f.items.disposed && f.items.length !== 3) return `the items changed: ${f.items.length} items`;
    return null;
  } finally {
    for (const h of f.all) h.dispose();
  }
}

function runRow(cupel, row) {
  let values;
  try {
    values = valuesOf(row.value);
  } catch (e) {
    return e.message;
  }
  for (const v of values) {
    let why;
    try {
      why = runOnce(cupel, row, v);
    } catch (e) {
      why = `the runner failed: ${e.stack ?? e}`;
    }
    if (why) return values.length > 1 ? `(as ${typeof v === "bigint" ? `${v}n` : v}) ${why}` : why;
  }
  return null;
}

const path =
  process.argv[2] ??
  process.env.CUPEL_CONTRACT ??
  fileURLToPath(new URL("../../../tests/contract/contract.txt", import.meta.url));
const { rows, map } = parse(readFileSync(path, "utf8"));
const cupel = await load();
const failures = [];
const want = ["null", "type", "integer", "value", "range", "closed"].map((c) => ERROR_CLASS[c].name);
if (!map || map.join(" ") !== want.join(" ")) {
  failures.push(`@map: the table says js -> ${map?.join(" ")}, this runner checks ${want.join(" ")}`);
}
let passed = 0;
const before = cupel.liveHandles;
for (const row of rows.filter((r) => namesLanguage(r.where))) {
  const why = runRow(cupel, row);
  if (why === null) passed++;
  else failures.push(`${row.id}: ${why}`);
}
if (cupel.liveHandles !== before) failures.push(`handles leaked: ${cupel.liveHandles - before}`);
const failedRows = failures.length;
console.log(`contract ${LANG}: ${passed} passed, ${failedRows} failed`);
for (const f of failures) console.log(`FAILED ${f}`);
process.exitCode = failedRows ? 1 : 0;
