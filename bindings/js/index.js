// libcupel for JavaScript: the C ABI of the WebAssembly build (cupel.wasm,
// no imports, no wasm-bindgen), wrapped as classes. Works in Node (load()
// reads the .wasm beside this file) and in a browser or editor webview
// (load(bytes) with the module's bytes, a Response or a WebAssembly.Module).
//
// Every handle owns memory inside the module: call dispose() (or use
// `using` where the runtime has explicit resource management); a
// FinalizationRegistry frees forgotten handles as a backstop.
//
// Text in: the o200k_base and cl100k_base vocabularies are inside
// cupel.wasm (nothing is fetched), and a Tokenizer counts and truncates
// JavaScript strings exactly as tiktoken's encode_ordinary does. Its
// offsets are JavaScript string indices (UTF-16 code units), converted
// from the library's UTF-8 byte offsets.
//
// Items that shrink: an item may have variants (smaller stand-ins) and be
// truncatable (cut to what the slicer left, by the pipeline's tokenizer).
// A report's included entries say which variant was chosen, the tokens it
// adds, the cut as the library gives it (UTF-8 byte offsets into the
// item's content) and the text as sent, decoded from those bytes.
//
// Sessions: `cupel.session(pipeline)` runs the pipeline turn after turn,
// changing the previous turn's prompt only at its end whenever it can, so
// that a provider's prompt cache keeps serving its prefix. Items carry an
// identity `key` (0: none) and a `volatile` flag; a session reports its
// action, its stable prefix and its cache breakpoints.
//
// The one-call path: `cupel.select(messages, { maxTokens, policy })` fits
// plain message objects (tool calls kept with their results) into a budget
// under a preset, a policy document or a pipeline, and returns the same
// objects in prompt order (docs/policies.md, "The one-call path").
//
// Policies as data: `cupel.pipelineFromJson` / `pipeline.toJson` (the .NET
// Cupel policy format and libcupel's extensions), budgets likewise,
// presets (`cupel.preset`), policy sensitivity, a report's analytics.
//
// Tracing: `pipeline.setTrace(level, callback)`. A C function pointer in
// wasm32 is an index into the module's function table, which build.sh
// exports (growable); a JavaScript function cannot go into a table on Node
// 20 (no WebAssembly.Function), so a 32-byte module written here wraps one
// trampoline as (i32, i32) -> () and takes one slot, user_data naming the
// callback. `cupel.otel.instrument` makes OpenTelemetry spans of the
// events where the host has @opentelemetry/api (an optional peer
// dependency, imported when first needed).
//
// Errors. Every argument is checked here before it reaches the module, in
// the caller's terms (the parameter names below, camelCase): a value of the
// wrong type, null where a value is needed, or a disposed handle throws a
// TypeError; a number that is no integer where one is needed, an integer
// out of its range, a number past 2^53 (no longer exact), or a string that
// has no UTF-8 form (a lone surrogate) or holds a NUL throws a RangeError.
// What the library itself refuses comes back the same way: its
// CUPEL_ERROR_NULL_POINTER as a TypeError, CUPEL_ERROR_INVALID_ARGUMENT as
// a RangeError, with the library's message in JavaScript's names; every
// other failure (scarcity, capacity, overflow, ...) throws CupelError.
// All of them carry `status`, `statusName` and `detail`, and
// `e instanceof CupelError` is true for all of them. A call that throws
// changes nothing.

const STATUS_NAMES = [
  "OK",
  "NULL_POINTER",
  "INVALID_ARGUMENT",
  "BUFFER_TOO_SMALL",
  "SCARCITY",
  "UNSUPPORTED",
  "CAPACITY",
  "INTERNAL",
  "OVERFLOW",
];

/** Status codes of the C ABI (`cupel_status`). */
export const Status = Object.freeze(
  Object.fromEntries(STATUS_NAMES.map((name, code) => [name, code])),
);

/**
 * Why an item was included or excluded (`cupel_reason`): the codes. Their
 * names come from the library (`cupel.reasonName(code)`, which the tests
 * check against this table).
 */
export const Reason = Object.freeze({
  Scored: 0,
  Pinned: 1,
  ZeroToken: 2,
  Variant: 3,
  Truncated: 4,
  BudgetExceeded: 10,
  ScoredTooLow: 11,
  Deduplicated: 12,
  QuotaCapExceeded: 13,
  QuotaRequireDisplaced: 14,
  NegativeTokens: 15,
  PinnedOverride: 16,
  Filtered: 17,
  CountCapExceeded: 18,
  Deferred: 19,
});

/** What the pipeline does when the selection exceeds the target. */
export const Overflow = Object.freeze({ Throw: 0, Truncate: 1, Proceed: 2 });
/** What a count slicer does when a kind has too few items. */
export const Scarcity = Object.freeze({ Degrade: 0, Error: 1 });
/** The DecayScorer's curves. */
export const DecayCurve = Object.freeze({ Exponential: 0, Step: 1, Window: 2 });
/**
 * What `Tokenizer.truncate` keeps of a text (`cupel_keep`): the beginning,
 * the end, or both ends (the middle goes); also how a truncatable item is
 * cut (`Items.setTruncatable`).
 */
export const Keep = Object.freeze({ Head: 0, Tail: 1, BothEnds: 2 });
/**
 * Which rule a session run took (`Session.lastAction`; `cupel_session_action`),
 * as the report's JSON spells it: the first run (or the first after a
 * reset), an append after the previous output, or a compaction.
 */
export const SessionAction = Object.freeze({ First: "first", Append: "append", Compact: "compact" });
/** The `cupel_session_action` codes, in order. */
const ACTIONS = [SessionAction.First, SessionAction.Append, SessionAction.Compact];
/**
 * What a cache breakpoint marks (`Breakpoint.mark`; `cupel_breakpoint_mark`),
 * as the report's JSON spells it ("at"): after the leading pinned items,
 * after the prefix the last compaction kept, after the stable prefix, after
 * the last non-volatile item.
 */
export const BreakpointMark = Object.freeze({ Pinned: "pinned", Compaction: "compaction", Stable: "stable", End: "end" });
/** The `cupel_breakpoint_mark` codes, in order. */
const MARKS = [BreakpointMark.Pinned, BreakpointMark.Compaction, BreakpointMark.Stable, BreakpointMark.End];

/**
 * How much a trace carries (`cupel_trace_level`; `Pipeline.setTrace`): the
 * stage spans and the pipeline's (the specification's "StageOnly"), and
 * one event per excluded item ("StageAndExclusions"), and one per
 * included item ("Full").
 */
export const TraceLevel = Object.freeze({ Stages: 0, Exclusions: 1, Full: 2 });
/**
 * What a trace event is about (`TraceEvent.kind`; `cupel_trace_kind`): the
 * `cupel.pipeline` span (sent last), a `cupel.stage.<name>` span, a
 * `cupel.exclusion` event, a `cupel.item.included` event.
 */
export const TraceKind = Object.freeze({ Pipeline: "pipeline", Stage: "stage", Exclusion: "exclusion", Included: "included" });
/** The `cupel_trace_kind` codes, in order. */
const TRACE_KINDS = [TraceKind.Pipeline, TraceKind.Stage, TraceKind.Exclusion, TraceKind.Included];
/** The trace callback a pipeline or session holds. */
const TRACE = Symbol("libcupel.trace");
/** Whether a pipeline was given a tokenizer by this binding (select: one from a vocabulary file has no name). */
const TOKENIZER_GIVEN = Symbol("libcupel.tokenizerGiven");

const BRAND = Symbol("libcupel.error");

/**
 * A failure of the library that is not an argument error: `status` (a
 * number of `Status`), `statusName` and `detail` (the library's message).
 * `e instanceof CupelError` is also true for the TypeError and RangeError
 * this binding throws for bad arguments (they carry the same fields).
 */
export class CupelError extends Error {
  constructor(status, detail) {
    const name = STATUS_NAMES[status] ?? String(status);
    super(`${name}: ${detail}`);
    this.name = "CupelError";
    this.status = status;
    this.statusName = name;
    this.detail = detail;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for every error this binding throws. */
  static [Symbol.hasInstance](value) {
    return value !== null && typeof value === "object" && value[BRAND] === true;
  }
}

/** A built-in error (TypeError, RangeError) with the binding's fields. */
function argError(Kind, status, detail) {
  const e = new Kind(detail);
  e.status = status;
  e.statusName = STATUS_NAMES[status];
  e.detail = detail;
  Object.defineProperty(e, BRAND, { value: true });
  return e;
}

/** A TypeError: a null, undefined or wrongly typed argument. */
function typeError(detail, value) {
  return argError(TypeError, value == null ? Status.NULL_POINTER : Status.INVALID_ARGUMENT, detail);
}

/** A RangeError: a value of the right type outside its domain. */
function rangeError(detail) {
  return argError(RangeError, Status.INVALID_ARGUMENT, detail);
}

/** The error for a failed C call: its status as the matching class. */
function statusError(status, detail) {
  if (status === Status.NULL_POINTER) return argError(TypeError, status, detail);
  if (status === Status.INVALID_ARGUMENT) return argError(RangeError, status, detail);
  return new CupelError(status, detail);
}

/** A value as a message shows it. */
function describe(v) {
  switch (typeof v) {
    case "string":
      return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
    case "number":
      return Object.is(v, -0) ? "-0" : String(v);
    case "bigint":
      return `${v}n`;
    case "undefined":
    case "boolean":
      return String(v);
    case "symbol":
      return "a symbol";
    case "function":
      return "a function";
  }
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  const name = Object.getPrototypeOf(v)?.constructor?.name;
  return name && name !== "Object" ? `${/^[AEIOU]/.test(name) ? "an" : "a"} ${name}` : "an object";
}

/**
 * The library's message in JavaScript's terms: outside quoted strings, its
 * snake_case argument names in camelCase and its infinities as Infinity.
 */
function jsTerms(message) {
  return message.replace(/"(?:[^"\\]|\\.)*"|\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b|(?<![\w.])(-?)inf\b/g, (m, id, sign) => {
    if (sign !== undefined) return `${sign}Infinity`;
    return id === undefined || id.startsWith("cupel_") ? m : id.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  });
}

// ---- argument conversion ------------------------------------------------------

/** Integer types of the C ABI (size_t is 32 bits in wasm32). */
const I64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n, big: true, range: "from -2^63 to 2^63 - 1" };
const U64 = { min: 0n, max: 2n ** 64n - 1n, big: true, range: "from 0 to 2^64 - 1" };
const USIZE = { min: 0n, max: 2n ** 32n - 1n, big: false, range: "from 0 to 2^32 - 1" };
const U32 = USIZE;
const I32 = { min: -(2n ** 31n), max: 2n ** 31n - 1n, big: false, range: "from -2^31 to 2^31 - 1" };

/**
 * An integer argument (a number or a BigInt) as the type `t` takes it: a
 * BigInt for 64-bit types, else a number. `outOfRange(shown)` gives the
 * message for an integer outside the type.
 */
function int(v, name, t, outOfRange) {
  let b;
  if (typeof v === "number") {
    if (!Number.isInteger(v)) throw rangeError(`${name} is ${describe(v)}; expected an integer`);
    b = BigInt(v);
    if (b >= t.min && b <= t.max && !Number.isSafeInteger(v)) {
      throw rangeError(
        `${name} is ${describe(v)}, beyond 2^53 - 1 in size where JavaScript numbers stop being exact ` +
          "(it may already be rounded); pass a BigInt",
      );
    }
  } else if (typeof v === "bigint") {
    b = v;
  } else {
    throw typeError(`${name} is ${describe(v)}; expected an integer`, v);
  }
  if (b < t.min || b > t.max) {
    throw rangeError(outOfRange ? outOfRange(describe(v)) : `${name} is ${describe(v)}; it must be an integer ${t.range}`);
  }
  return t.big ? b : Number(b);
}

/** A double argument: a number (NaN and infinities are the library's to judge). */
function dbl(v, name) {
  if (typeof v !== "number") throw typeError(`${name} is ${describe(v)}; expected a number`, v);
  return v;
}

function bool(v, name) {
  if (typeof v !== "boolean") throw typeError(`${name} is ${describe(v)}; expected a boolean`, v);
  return v;
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Refuses a string `v` (named `name`) that holds a lone surrogate: it has
 * no UTF-8 form, and TextEncoder would replace it silently.
 */
function wellFormed(v, name) {
  const ok = typeof v.isWellFormed === "function" ? v.isWellFormed() : !LONE_SURROGATE.test(v);
  if (ok) return;
  const bad = v.search(LONE_SURROGATE);
  const unit = v.charCodeAt(bad).toString(16).toUpperCase();
  throw rangeError(`${name} holds a lone surrogate (U+${unit}) at index ${bad}: it has no UTF-8 form`);
}

/**
 * A string argument that has a UTF-8 form the library reads whole: no lone
 * surrogate (TextEncoder would replace it silently) and no NUL (the
 * library's strings end there).
 */
function text(v, name) {
  if (typeof v !== "string") throw typeError(`${name} is ${describe(v)}; expected a string`, v);
  wellFormed(v, name);
  const nul = v.indexOf("\0");
  if (nul >= 0) throw rangeError(`${name} holds a NUL character at index ${nul}: the library's strings end at NUL`);
  return v;
}

/**
 * A text for the tokenizer, as its UTF-8 bytes: a string with no lone
 * surrogate. A NUL is ordinary text here (the length goes with the bytes).
 */
function textBytes(v, name) {
  if (typeof v !== "string") throw typeError(`${name} is ${describe(v)}; expected a string`, v);
  wellFormed(v, name);
  return encoder.encode(v);
}

/**
 * The UTF-16 code units (JavaScript string length) of the UTF-8 bytes
 * `b[from .. to)`, whole characters: one per lead byte, two for a
 * four-byte character (a surrogate pair).
 */
function utf16Units(b, from, to) {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = b[i];
    if ((c & 0xc0) !== 0x80) n += c >= 0xf0 ? 2 : 1;
  }
  return n;
}

/** A `Keep` value (an argument named `name`), checked. */
function keepOf(v, name = "keep") {
  const k = int(v, name, I32);
  if (k < 0 || k > 2) throw rangeError(`${name} is ${describe(v)}; expected Keep.Head (0), Keep.Tail (1) or Keep.BothEnds (2)`);
  return k;
}

/** The most variants an item may have (the library's limit). */
const MAX_VARIANTS = 255;

/**
 * A variant `{ tokens, value, content }` (named `where`; `at(field)` names
 * its fields), checked as the library would: tokens an integer >= 0, value
 * in (0, 1], content a non-empty string or absent. Returns the checked
 * fields, content null when none.
 */
function checkVariant(v, where, at) {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw typeError(`${where} is ${describe(v)}; expected a { tokens, value, content } object`, v);
  }
  const tokens = int(v.tokens, at("tokens"), I64);
  if (tokens < 0n) throw rangeError(`${at("tokens")} is ${describe(v.tokens)}; a variant's tokens must be >= 0`);
  const value = dbl(v.value, at("value"));
  if (!(value > 0 && value <= 1)) throw rangeError(`${at("value")} is ${describe(value)}; it must be in (0, 1] (the share of the item's score the variant keeps)`);
  let content = null;
  if (v.content != null) {
    content = text(v.content, at("content"));
    if (content === "") throw rangeError(`${at("content")} is empty; a variant's content must be non-empty (null or absent for none)`);
  }
  return { tokens, value, content };
}

/** `keep` and `minTokens` of a truncatable item (named by `at(field)`), checked: [keep, minTokens]. */
function checkTruncation(keep, minTokens, at) {
  const k = keepOf(keep, at("keep"));
  const m = int(minTokens, at("minTokens"), I64);
  if (m < 0n) throw rangeError(`${at("minTokens")} is ${describe(minTokens)}; it must be >= 0`);
  return [k, m];
}

/**
 * The pointer of `obj`, the receiver of method `method` of `Class`: a
 * TypeError naming `this` when it is null or no such handle (a method
 * taken off its object), as Handle.self() does once it is disposed.
 */
function receiver(obj, Class, method, read = false) {
  if (obj === null || typeof obj !== "object" || !(obj instanceof Class)) {
    const a = /^[aeiou]/i.test(RECEIVER[Class.name]) ? "an" : "a";
    throw typeError(`this is ${describe(obj)}; ${method} is a method of ${a} ${RECEIVER[Class.name]}`, obj);
  }
  return obj.self(read);
}

/** A session's slack: a number in [0, 1) (NaN refused). */
function slackOf(v, name) {
  const f = dbl(v, name);
  if (!(f >= 0 && f < 1)) {
    throw rangeError(`${name} is ${describe(f)}; it must be in [0, 1): the share of the effective target a compaction leaves free`);
  }
  return f;
}

/** A `TraceLevel` value (an argument named `name`), checked. */
function traceLevelOf(v, name) {
  const l = int(v, name, I32);
  if (l < 0 || l > 2) {
    throw rangeError(`${name} is ${describe(v)}; expected TraceLevel.Stages (0), TraceLevel.Exclusions (1) or TraceLevel.Full (2)`);
  }
  return l;
}

/** Now, in nanoseconds since the Unix epoch (a BigInt), from the host's clock. */
function nowNanos() {
  return BigInt(Math.round(performance.timeOrigin * 1000)) * 1000n + BigInt(Math.round(performance.now() * 1e6));
}

/**
 * A module of three sections written by hand: a function of type
 * (i32, i32) -> () imported as e.f and exported as f. Instantiated with a
 * JavaScript function, its export is a WebAssembly function of that type,
 * which a slot of cupel.wasm's function table can hold: a C function
 * pointer `void (*)(void *, const cupel_trace_event *)` in wasm32.
 */
const TRAMPOLINE_MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x06, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x00, // type section: (i32, i32) -> ()
  0x02, 0x07, 0x01, 0x01, 0x65, 0x01, 0x66, 0x00, 0x00, // import section: e.f, a function of type 0
  0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export section: f, function 0
]);

/** `text` under another name, for methods whose parameter is called `text`. */
const checkedString = text;

/** An options object (undefined: none). */
function options(v, name) {
  if (v === undefined) return {};
  if (v === null || typeof v !== "object") throw typeError(`${name} is ${describe(v)}; expected an object`, v);
  return v;
}

function array(v, name) {
  if (!Array.isArray(v)) throw typeError(`${name} is ${describe(v)}; expected an array`, v);
  return v;
}

/**
 * Unicode White_Space, what the library trims to refuse a blank kind or
 * source (Rust's str::trim; JavaScript's \s differs in U+0085 and U+FEFF).
 * The tests check it against the library's own kind check.
 */
const BLANK = /^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

// ---- the one-call path -----------------------------------------------------------

/** A group or tool call id (named `name`): a string; null, undefined and "" are none (null here). */
function idOf(v, name) {
  if (v == null) return null;
  const s = text(v, name);
  return s === "" ? null : s;
}

/**
 * Message `i` of `cupel.select`, checked: its text's bytes, kind, score,
 * pinned, key, the ids that group it ("g" + group, "c" + a tool call id),
 * and timestamp, priority, relevance where given.
 */
function checkMessage(m, i) {
  const where = `messages[${i}]`;
  const at = (f) => `${where}.${f}`;
  if (m === null || typeof m !== "object" || Array.isArray(m)) {
    throw typeError(`${where} is ${describe(m)}; expected a message object with a text field`, m);
  }
  if (m.text == null) throw typeError(`${at("text")} is ${describe(m.text)}; a message needs its text (a non-empty string)`, m.text);
  const bytes = textBytes(m.text, at("text"));
  if (bytes.length === 0) throw rangeError(`${at("text")} is empty; a message's text must be non-empty`);
  const c = { bytes, kind: null, score: 1, pinned: false, key: 0n, ids: [] };
  if (m.kind != null) c.kind = text(m.kind, at("kind"));
  if (m.score != null) c.score = dbl(m.score, at("score"));
  if (m.pinned != null) c.pinned = bool(m.pinned, at("pinned"));
  const group = idOf(m.group, at("group"));
  if (group !== null) c.ids.push(`g${group}`);
  const call = idOf(m.toolCallId, at("toolCallId"));
  if (call !== null) c.ids.push(`c${call}`);
  if (m.toolCallIds != null) {
    // Array.from: a hole is undefined, none.
    Array.from(array(m.toolCallIds, at("toolCallIds")), (v, j) => idOf(v, `${at("toolCallIds")}[${j}]`)).forEach((id) => {
      if (id !== null) c.ids.push(`c${id}`);
    });
  }
  if (m.key != null) c.key = int(m.key, at("key"), U64); // 0: none
  if (m.timestamp != null) {
    const ms = m.timestamp instanceof Date ? m.timestamp.getTime() : m.timestamp;
    if (Number.isNaN(ms)) throw rangeError(`${at("timestamp")} is an invalid Date`);
    c.timestamp = int(ms, at("timestamp"), I64);
  }
  if (m.priority != null) c.priority = int(m.priority, at("priority"), I64);
  if (m.relevance != null) c.relevance = dbl(m.relevance, at("relevance"));
  return c;
}

/**
 * The keep-together group of each checked message: messages that share a
 * group or a tool call id are one group, transitively (union-find, each
 * group's root its first message); groups numbered 1, 2, ... in the order
 * of their first message; 0 for a message with no id.
 */
function messageGroups(checked) {
  const parent = checked.map((_, i) => i);
  const find = (i) => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  const firstWith = new Map();
  checked.forEach((c, i) => {
    for (const id of c.ids) {
      const j = firstWith.get(id);
      if (j === undefined) {
        firstWith.set(id, i);
        continue;
      }
      const [a, b] = [find(i), find(j)];
      if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
    }
  });
  const numbers = new Map();
  return checked.map((c, i) => {
    if (c.ids.length === 0) return 0n;
    const root = find(i);
    let g = numbers.get(root);
    if (g === undefined) numbers.set(root, (g = BigInt(numbers.size + 1)));
    return g;
  });
}

/** Error `e` of this binding with its detail rewritten by `f` (the same class and status). */
function renamed(e, f) {
  if (!(e instanceof CupelError)) return e;
  const detail = f(e.detail);
  return e.constructor === CupelError ? new CupelError(e.status, detail) : argError(e.constructor, e.status, detail);
}

// ---- the module ---------------------------------------------------------------

const disposeSymbol = Symbol.dispose ?? Symbol.for("Symbol.dispose");
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** For the text a report says is sent: a cut inside a character would be a library bug, never replaced silently. */
const strictDecoder = new TextDecoder("utf-8", { fatal: true });
const SIZE_MAX = 0xffffffff; // size_t is 32 bits in wasm32
const DECISION_SIZE = 64; // sizeof(cupel_decision) in wasm32
const BREAKPOINT_SIZE = 24; // sizeof(cupel_breakpoint) in wasm32: size_t items, int64_t tokens at 8, int32_t mark at 16
const MAX_BREAKPOINTS = 4; // a session writes at most four

const registry = new FinalizationRegistry(({ free, ptr }) => free(ptr));

/**
 * Loads libcupel. `source`: nothing (Node: the cupel.wasm beside this
 * module), a file path or URL (Node), the module's bytes (ArrayBuffer or
 * typed array), a fetch Response, or a compiled WebAssembly.Module.
 */
export async function load(source) {
  let module;
  if (source instanceof WebAssembly.Module) {
    module = source;
  } else if (typeof Response !== "undefined" && source instanceof Response) {
    module = await WebAssembly.compile(await source.arrayBuffer());
  } else if (source === undefined || typeof source === "string" || source instanceof URL) {
    const { readFile } = await import("node:fs/promises");
    module = await WebAssembly.compile(await readFile(source ?? new URL("./cupel.wasm", import.meta.url)));
  } else if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    module = await WebAssembly.compile(source);
  } else {
    throw typeError(`source is ${describe(source)}; expected a path, URL, bytes, Response or WebAssembly.Module`, source);
  }
  const instance = await WebAssembly.instantiate(module, {});
  return new Cupel(instance.exports);
}

/** Scratch memory in the module for one call, freed after it. */
class Arena {
  constructor(lib) {
    this.lib = lib;
    this.blocks = [];
  }
  alloc(size) {
    const ptr = this.lib.x.cupel_alloc(size);
    if (!ptr) throw new CupelError(Status.CAPACITY, `cannot allocate ${size} bytes in the module`);
    this.blocks.push([ptr, size]);
    return ptr;
  }
  /** A NUL-terminated UTF-8 copy of `s`, a string already checked by text(); 0 for null. */
  str(s) {
    if (s === null) return 0;
    const bytes = encoder.encode(s);
    const ptr = this.alloc(bytes.length + 1);
    const mem = this.lib.u8();
    mem.set(bytes, ptr);
    mem[ptr + bytes.length] = 0;
    return ptr;
  }
  /** A copy of `bytes` (a Uint8Array; no NUL added): the pointer. */
  bytes(bytes) {
    const ptr = this.alloc(Math.max(bytes.length, 1));
    this.lib.u8().set(bytes, ptr);
    return ptr;
  }
  /**
   * Many byte strings in one block: [pointers, lengths] as arrays of
   * size_t for a `const char *const *texts, const size_t *lens` pair.
   */
  byteStrings(list) {
    const total = list.reduce((n, b) => n + b.length, 0);
    const block = this.alloc(Math.max(total, 1));
    const ptrs = [];
    let at = block;
    const mem = this.lib.u8();
    for (const b of list) {
      mem.set(b, at);
      ptrs.push(at);
      at += b.length;
    }
    return [this.u32s(ptrs), this.u32s(list.map((b) => b.length))];
  }
  /** Arrays of checked values. Allocate everything first: a grown memory detaches older views. */
  i64s(values) {
    const ptr = this.alloc(8 * Math.max(values.length, 1));
    new BigInt64Array(this.lib.x.memory.buffer, ptr, values.length).set(values);
    return ptr;
  }
  u64s(values) {
    const ptr = this.alloc(8 * Math.max(values.length, 1));
    new BigUint64Array(this.lib.x.memory.buffer, ptr, values.length).set(values);
    return ptr;
  }
  f64s(values) {
    const ptr = this.alloc(8 * Math.max(values.length, 1));
    new Float64Array(this.lib.x.memory.buffer, ptr, values.length).set(values);
    return ptr;
  }
  u32s(values) {
    const ptr = this.alloc(4 * Math.max(values.length, 1));
    new Uint32Array(this.lib.x.memory.buffer, ptr, values.length).set(values);
    return ptr;
  }
  /** An out-parameter of `size` bytes, zeroed. */
  out(size = 8) {
    const ptr = this.alloc(size);
    this.lib.u8().fill(0, ptr, ptr + size);
    return ptr;
  }
  free() {
    for (const [ptr, size] of this.blocks) this.lib.x.cupel_dealloc(ptr, size);
    this.blocks = [];
  }
}

/** An int64 result: a number, or a BigInt past 2^53 where a number would round. */
function int64Out(b) {
  return b >= -BigInt(Number.MAX_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

/** The C functions that free each kind of handle. */
const FREE = {
  Items: "cupel_items_free",
  Budget: "cupel_budget_free",
  Slicer: "cupel_slicer_free",
  Scorer: "cupel_scorer_free",
  Placer: "cupel_placer_free",
  Pipeline: "cupel_pipeline_free",
  Stream: "cupel_stream_free",
  Tokenizer: "cupel_tokenizer_free",
  Session: "cupel_session_free",
};

/**
 * The error for a call into a handle while a run that uses it is under way:
 * a trace callback (`Pipeline.setTrace`) must not call into the pipeline,
 * items, budget or session of the run that calls it.
 */
function busyError(h, name) {
  const kind = Object.keys(RECEIVER).find((k) => h instanceof HANDLES[k]);
  return new CupelError(
    Status.UNSUPPORTED,
    `${name ?? `this ${RECEIVER[kind]}`} is in use by a run under way: a trace callback must not call into the pipeline, items, budget or session of the run that calls it`,
  );
}

/** What every handle shares: its native pointer, and dispose(). */
class Handle {
  #ptr;
  #free;
  /** Runs under way that use this handle (see Handle.hold), and those that run it (a pipeline, a session). */
  #busy = 0;
  #running = 0;
  #disposeLater = false;
  constructor(lib, ptr, free) {
    this.lib = lib;
    this.#ptr = ptr;
    this.#free = free;
    registry.register(this, { free, ptr }, this);
  }
  /**
   * The native pointer of `h`, an argument named `name` that must be a live
   * handle of class `Class` made by `lib`.
   */
  static ptr(h, Class, name, lib) {
    if (!(h instanceof Class) || !(#ptr in h)) {
      throw typeError(`${name} is ${describe(h)}; expected ${Class === Items ? "an Items list" : `a ${Class.name}`}`, h);
    }
    if (h.lib !== lib) throw typeError(`${name} belongs to another load() of libcupel; use it with the Cupel that made it`);
    if (!h.#ptr) throw typeError(`${name} was disposed`, null);
    if (h.#running) throw busyError(h, name);
    return h.#ptr;
  }
  /**
   * Runs `f()` with `running` (the pipelines or sessions it runs) and `used`
   * (the items and budgets they read) marked: from a trace callback during
   * `f`, a call into a running handle throws, and so does a call that would
   * change a used one (reading it is fine); a dispose() of either waits for
   * the end of `f`.
   */
  static hold(running, used, f) {
    for (const h of running) h.#running++;
    for (const h of [...running, ...used]) h.#busy++;
    try {
      return f();
    } finally {
      for (const h of running) h.#running--;
      for (const h of [...running, ...used]) {
        h.#busy--;
        if (h.#busy === 0 && h.#disposeLater) h.dispose();
      }
    }
  }
  /**
   * This handle's pointer, for its own methods; throws once disposed, and
   * during a run that uses it (see Handle.hold) unless `read` (a method
   * that only reads) and the run only reads it.
   */
  self(read = false) {
    if (!(#ptr in this)) throw typeError(`this is ${describe(this)}; call the method on a libcupel handle`, this);
    if (!this.#ptr) {
      const kind = Object.keys(RECEIVER).find((k) => this instanceof HANDLES[k]);
      throw typeError(`this ${RECEIVER[kind]} was disposed`, null);
    }
    if (this.#running || (this.#busy && !read)) throw busyError(this);
    return this.#ptr;
  }
  /** Whether dispose() has run. */
  get disposed() {
    return this.#ptr === 0;
  }
  /**
   * Frees the native object. Idempotent. Called from a trace callback on a
   * handle of the run under way, it frees it when that run returns.
   */
  dispose() {
    if (this.#busy) {
      this.#disposeLater = true;
      return;
    }
    if (this.#ptr) {
      registry.unregister(this);
      this.#free(this.#ptr);
      this.#ptr = 0;
      this.released();
    }
  }
  /** After dispose() freed the native object (Pipeline and Session drop their trace callback). */
  released() {}
  /** dispose(), for `using`. */
  [disposeSymbol]() {
    this.dispose();
  }
}

/** How an error names a handle a method was called on (`this items list was disposed`). */
const RECEIVER = {
  Items: "items list",
  Budget: "budget",
  Slicer: "slicer",
  Scorer: "scorer",
  Placer: "placer",
  Pipeline: "pipeline",
  Stream: "stream",
  Tokenizer: "tokenizer",
  Session: "session",
};

/** The fields of one item to push, checked. `at(field)` names a field in messages. */
function checkItem(it, where, at) {
  if (it === null || typeof it !== "object") throw typeError(`${where} is ${describe(it)}; expected an item object`, it);
  const c = {
    tokens: int(it.tokens, at("tokens"), I64),
    score: it.score == null ? 0 : dbl(it.score, at("score")),
    kind: it.kind == null ? null : text(it.kind, at("kind")),
    attrs: false,
  };
  if (it.content != null) {
    c.content = text(it.content, at("content"));
    if (c.content === "") throw rangeError(`${at("content")} is empty; content must be non-empty`);
    c.attrs = true;
  }
  if (it.timestamp != null) {
    const ms = it.timestamp instanceof Date ? it.timestamp.getTime() : it.timestamp;
    if (Number.isNaN(ms)) throw rangeError(`${at("timestamp")} is an invalid Date`);
    c.timestamp = int(ms, at("timestamp"), I64);
    c.attrs = true;
  }
  if (it.priority != null) {
    c.priority = int(it.priority, at("priority"), I64);
    c.attrs = true;
  }
  if (it.pinned != null && bool(it.pinned, at("pinned"))) {
    c.pinned = true;
    c.attrs = true;
  }
  if (it.relevanceHint != null) {
    c.relevanceHint = dbl(it.relevanceHint, at("relevanceHint"));
    c.attrs = true;
  }
  if (it.source != null) {
    c.source = text(it.source, at("source"));
    if (BLANK.test(c.source)) {
      throw rangeError(`${at("source")} ${JSON.stringify(c.source)} is empty or only whitespace; a source needs a visible name`);
    }
    c.attrs = true;
  }
  if (it.tags != null) {
    c.tags = array(it.tags, at("tags")).map((t, j) => text(t, `${at("tags")}[${j}]`));
    c.attrs ||= c.tags.length > 0;
  }
  if (it.metadata != null) {
    const md = options(it.metadata, at("metadata"));
    c.metadata = Object.entries(md).map(([k, v]) => {
      const name = `${at("metadata")}[${JSON.stringify(k)}]`;
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "bigint") {
        throw typeError(`${name} is ${describe(v)}; expected a string or a number`, v);
      }
      return [text(k, `${at("metadata")} key ${JSON.stringify(k)}`), text(String(v), name)];
    });
    c.attrs ||= c.metadata.length > 0;
  }
  if (it.group != null) {
    c.group = int(it.group, at("group"), U64);
    c.attrs ||= c.group !== 0n;
  }
  if (it.key != null) {
    c.key = int(it.key, at("key"), U64);
    c.attrs ||= c.key !== 0n;
  }
  if (it.volatile != null && bool(it.volatile, at("volatile"))) {
    c.volatile = true;
    c.attrs = true;
  }
  if (it.variants != null) {
    const list = array(it.variants, at("variants"));
    if (list.length > MAX_VARIANTS) {
      throw rangeError(`${at("variants")} has ${list.length} variants; an item has at most ${MAX_VARIANTS}`);
    }
    c.variants = list.map((v, j) => checkVariant(v, `${at("variants")}[${j}]`, (f) => `${at("variants")}[${j}].${f}`));
    c.attrs ||= c.variants.length > 0;
  }
  if (it.truncatable != null) {
    const t = it.truncatable;
    if (typeof t !== "object" || Array.isArray(t)) {
      throw typeError(`${at("truncatable")} is ${describe(t)}; expected a { keep, minTokens } object`, t);
    }
    c.truncatable = checkTruncation(t.keep, t.minTokens, (f) => `${at("truncatable")}.${f}`);
    c.attrs = true;
  }
  return c;
}

/**
 * Element `k` of `Items.pushTexts`'s texts, checked: a string, or a record
 * with `text` and the fields of an item but `tokens` and `content`.
 */
function checkTextItem(t, k) {
  const where = `texts[${k}]`;
  if (typeof t === "string") {
    const bytes = textBytes(t, where);
    if (bytes.length === 0) throw rangeError(`${where} is empty; an item's content must be non-empty`);
    return { bytes, score: 0, kind: null, attrs: false, record: false };
  }
  if (t === null || typeof t !== "object" || Array.isArray(t)) {
    throw typeError(`${where} is ${describe(t)}; expected a string or a record with a text field`, t);
  }
  for (const field of ["tokens", "content"]) {
    if (t[field] != null) {
      throw typeError(`${where}.${field} is given; a text's item takes its tokens (its count) and content (the text) from ${where}.text`, t[field]);
    }
  }
  const bytes = textBytes(t.text, `${where}.text`);
  if (bytes.length === 0) throw rangeError(`${where}.text is empty; an item's content must be non-empty`);
  const c = checkItem({ ...t, tokens: 0, content: null }, where, (f) => `${where}.${f}`);
  return { ...c, bytes, record: true };
}

/** Scored candidates. Build with `cupel.items([...])`. */
export class Items extends Handle {
  /**
   * Adds one item (a plain object: see index.d.ts `Item`) or an array of
   * them, all or nothing: every field is checked before anything is added.
   * Returns this list.
   */
  push(items) {
    const h = this.self();
    const lib = this.lib;
    const single = !Array.isArray(items);
    const list = single ? [items] : items;
    const checked = list.map((it, k) =>
      single ? checkItem(it, "item", (f) => f) : checkItem(it, `items[${k}]`, (f) => `items[${k}].${f}`),
    );
    const n = checked.length;
    if (n === 0) return this;
    const first = this.length;
    const field = { tokens: "tokens", scores: "score", kinds: "kind" };
    lib.call(
      (a) => {
        // One copy of each distinct kind.
        const kindPtrs = new Map();
        const kinds = checked.map((c) => {
          if (c.kind === null) return 0;
          let p = kindPtrs.get(c.kind);
          if (p === undefined) kindPtrs.set(c.kind, (p = a.str(c.kind)));
          return p;
        });
        const tokens = a.alloc(8 * n);
        const scores = a.alloc(8 * n);
        const kindArray = a.alloc(4 * n);
        const buf = lib.x.memory.buffer;
        const t = new BigInt64Array(buf, tokens, n);
        const s = new Float64Array(buf, scores, n);
        for (let k = 0; k < n; k++) {
          t[k] = checked[k].tokens;
          s[k] = checked[k].score;
        }
        new Uint32Array(buf, kindArray, n).set(kinds);
        return lib.x.cupel_items_push_many(h, n, tokens, scores, kindArray);
      },
      // The library names its parallel arrays: tokens[k], scores[k], kinds[k].
      (m) => m.replace(/\b(tokens|scores|kinds)\[(\d+)\]/g, (_, f, k) => (single ? field[f] : `items[${k}].${field[f]}`)),
    );
    this.#attributes(first, checked);
    return this;
  }

  /**
   * Sets the attributes of the items `first + k` pushed from `checked[k]`.
   * They cannot fail now: every value was checked before the push, and the
   * indices exist.
   */
  #attributes(first, checked) {
    const h = this.self();
    const lib = this.lib;
    const x = lib.x;
    for (let k = 0; k < checked.length; k++) {
      const c = checked[k];
      if (!c.attrs) continue;
      const i = first + k;
      lib.call((a) => {
        const st = [];
        if (c.content !== undefined) st.push(x.cupel_items_set_content(h, i, a.str(c.content)));
        if (c.timestamp !== undefined) st.push(x.cupel_items_set_timestamp(h, i, c.timestamp));
        if (c.priority !== undefined) st.push(x.cupel_items_set_priority(h, i, c.priority));
        if (c.pinned) st.push(x.cupel_items_set_pinned(h, i, 1));
        if (c.relevanceHint !== undefined) st.push(x.cupel_items_set_relevance_hint(h, i, c.relevanceHint));
        if (c.source !== undefined) st.push(x.cupel_items_set_source(h, i, a.str(c.source)));
        for (const tag of c.tags ?? []) st.push(x.cupel_items_add_tag(h, i, a.str(tag)));
        for (const [key, value] of c.metadata ?? []) {
          st.push(x.cupel_items_set_metadata(h, i, a.str(key), a.str(value)));
        }
        if (c.group !== undefined && c.group !== 0n) st.push(x.cupel_items_set_group(h, i, c.group));
        if (c.key !== undefined && c.key !== 0n) st.push(x.cupel_items_set_key(h, i, c.key));
        if (c.volatile) st.push(x.cupel_items_set_volatile(h, i, 1));
        for (const v of c.variants ?? []) st.push(x.cupel_items_add_variant(h, i, v.tokens, v.value, a.str(v.content)));
        if (c.truncatable !== undefined) st.push(x.cupel_items_set_truncatable(h, i, ...c.truncatable));
        return st.find((s) => s !== 0) ?? 0;
      });
    }
  }

  /**
   * Adds one item made from a text: its tokens are the text's count with
   * `tokenizer`, its content the text (not empty), its score `score`
   * (default 0) and its kind `kind` (default "Message"), through
   * `cupel_items_push_text`. Nothing is added if an argument is bad.
   * Returns this list.
   */
  pushText(tokenizer, text, score = 0, kind = null) {
    const h = this.self();
    const lib = this.lib;
    const tp = lib.ptrOf(tokenizer, Tokenizer, "tokenizer");
    const bytes = textBytes(text, "text");
    if (bytes.length === 0) throw rangeError("text is empty; an item's content must be non-empty");
    const s = dbl(score, "score");
    const k = kind == null ? null : checkedString(kind, "kind");
    lib.call((a) => lib.x.cupel_items_push_text(h, tp, a.bytes(bytes), bytes.length, s, a.str(k)));
    return this;
  }

  /**
   * Adds items made from texts, all or nothing, through
   * `cupel_items_push_texts` (the texts are counted together). Each
   * element of `texts` is a string (score 0, kind "Message") or a record:
   * an `Item` with `text` in place of `tokens` and `content` (its tokens
   * are the text's count with `tokenizer`, its content the text), and any
   * of the other fields. Returns this list.
   */
  pushTexts(tokenizer, texts) {
    const h = this.self();
    const lib = this.lib;
    const tp = lib.ptrOf(tokenizer, Tokenizer, "tokenizer");
    const checked = array(texts, "texts").map((t, k) => checkTextItem(t, k));
    const n = checked.length;
    if (n === 0) return this;
    const first = this.length;
    lib.call(
      (a) => {
        const [ptrs, lens] = a.byteStrings(checked.map((c) => c.bytes));
        const kindPtrs = new Map();
        const kinds = checked.map((c) => {
          if (c.kind === null) return 0;
          let p = kindPtrs.get(c.kind);
          if (p === undefined) kindPtrs.set(c.kind, (p = a.str(c.kind)));
          return p;
        });
        const scores = a.f64s(checked.map((c) => c.score));
        return lib.x.cupel_items_push_texts(h, tp, n, ptrs, lens, scores, a.u32s(kinds));
      },
      // The library names its parallel arrays: texts[k], scores[k], kinds[k].
      (m) =>
        m.replace(/\b(texts|scores|kinds)\[(\d+)\]/g, (_, f, k) => {
          const field = { texts: "text", scores: "score", kinds: "kind" }[f];
          return checked[k]?.record || f !== "texts" ? `texts[${k}].${field}` : `texts[${k}]`;
        }),
    );
    this.#attributes(first, checked);
    return this;
  }

  /** Item `index`, checked: an integer from 0 below this list's length (the library checks the upper end). */
  #index(index, name = "index") {
    return int(index, name, USIZE, (shown) => `${name} ${shown} is out of range: the list holds ${this.length} items`);
  }

  /** Sets item `index`'s content (a non-empty string), replacing an earlier one. Returns this list. */
  setContent(index, content) {
    const h = this.self();
    const i = this.#index(index);
    const s = text(content, "content");
    this.lib.call((a) => this.lib.x.cupel_items_set_content(h, i, a.str(s)));
    return this;
  }

  /** Sets item `index`'s timestamp: UTC milliseconds since the epoch, or a Date. Returns this list. */
  setTimestamp(index, unixMillis) {
    const h = this.self();
    const i = this.#index(index);
    const ms = unixMillis instanceof Date ? unixMillis.getTime() : unixMillis;
    if (Number.isNaN(ms)) throw rangeError("unixMillis is an invalid Date");
    const t = int(ms, "unixMillis", I64);
    this.lib.call(() => this.lib.x.cupel_items_set_timestamp(h, i, t));
    return this;
  }

  /** Sets item `index`'s priority (an integer; higher is more important). Returns this list. */
  setPriority(index, priority) {
    const h = this.self();
    const i = this.#index(index);
    const p = int(priority, "priority", I64);
    this.lib.call(() => this.lib.x.cupel_items_set_priority(h, i, p));
    return this;
  }

  /** Pins item `index` (`pinned` true) or unpins it. Returns this list. */
  setPinned(index, pinned) {
    const h = this.self();
    const i = this.#index(index);
    const p = bool(pinned, "pinned");
    this.lib.call(() => this.lib.x.cupel_items_set_pinned(h, i, p ? 1 : 0));
    return this;
  }

  /** Sets item `index`'s relevance hint (a number, read by the reflexive scorer). Returns this list. */
  setRelevanceHint(index, hint) {
    const h = this.self();
    const i = this.#index(index);
    const v = dbl(hint, "hint");
    this.lib.call(() => this.lib.x.cupel_items_set_relevance_hint(h, i, v));
    return this;
  }

  /** Sets item `index`'s source (a visible name; "Chat" when never set). Returns this list. */
  setSource(index, source) {
    const h = this.self();
    const i = this.#index(index);
    const s = text(source, "source");
    this.lib.call((a) => this.lib.x.cupel_items_set_source(h, i, a.str(s)));
    return this;
  }

  /** Adds a tag to item `index` (tags accumulate, repeats included). Returns this list. */
  addTag(index, tag) {
    const h = this.self();
    const i = this.#index(index);
    const s = text(tag, "tag");
    this.lib.call((a) => this.lib.x.cupel_items_add_tag(h, i, a.str(s)));
    return this;
  }

  /** Sets metadata `key` of item `index` to `value` (strings; setting a key again replaces it). Returns this list. */
  setMetadata(index, key, value) {
    const h = this.self();
    const i = this.#index(index);
    const k = text(key, "key");
    const v = text(value, "value");
    this.lib.call((a) => this.lib.x.cupel_items_set_metadata(h, i, a.str(k), a.str(v)));
    return this;
  }

  /** Puts item `index` in keep-together group `group` (an integer from 0 to 2^64 - 1; 0: none). Returns this list. */
  setGroup(index, group) {
    const h = this.self();
    const i = this.#index(index);
    const g = int(group, "group", U64);
    this.lib.call(() => this.lib.x.cupel_items_set_group(h, i, g));
    return this;
  }

  /** Sets the groups of items `first .. first + groups.length` in one call, all or nothing. Returns this list. */
  setGroups(first, groups) {
    const h = this.self();
    const f = this.#index(first, "first");
    const g = array(groups, "groups").map((v, k) => int(v, `groups[${k}]`, U64));
    this.lib.call((a) => this.lib.x.cupel_items_set_groups(h, f, g.length, a.u64s(g)));
    return this;
  }

  /**
   * Gives item `index` an identity key for sessions (`cupel.session`): an
   * integer from 1 to 2^64 - 1 that names the same message, tool call or
   * document from one turn's list to the next (0: none, the default). A
   * keyed item is the same item as last turn when its key, tokens and
   * content are; a keyless one when its kind, tokens and content are. Keys
   * must be unique in a list for `Session.run` (a RangeError naming both
   * indices); `Pipeline.run` ignores them. Returns this list.
   */
  setKey(index, key) {
    const h = receiver(this, Items, "setKey");
    const i = this.#index(index);
    const k = int(key, "key", U64);
    this.lib.call(() => this.lib.x.cupel_items_set_key(h, i, k));
    return this;
  }

  /** Sets the keys of items `first .. first + keys.length` in one call, all or nothing. Returns this list. */
  setKeys(first, keys) {
    const h = receiver(this, Items, "setKeys");
    const f = this.#index(first, "first");
    const k = array(keys, "keys").map((v, j) => int(v, `keys[${j}]`, U64));
    this.lib.call((a) => this.lib.x.cupel_items_set_keys(h, f, k.length, a.u64s(k)));
    return this;
  }

  /**
   * Marks item `index` volatile (`isVolatile` true) or not: expected to
   * change every turn (the open file, this turn's retrieved documents). A
   * session places every volatile item after every other item, so its
   * changes never break the cached prefix; a group is volatile when any
   * member is. `Pipeline.run` ignores it. Returns this list.
   */
  setVolatile(index, isVolatile) {
    const h = receiver(this, Items, "setVolatile");
    const i = this.#index(index);
    const v = bool(isVolatile, "isVolatile");
    this.lib.call(() => this.lib.x.cupel_items_set_volatile(h, i, v ? 1 : 0));
    return this;
  }

  /** Sets the volatile flags of items `first .. first + flags.length` in one call, all or nothing. Returns this list. */
  setVolatileMany(first, flags) {
    const h = receiver(this, Items, "setVolatileMany");
    const f = this.#index(first, "first");
    const v = array(flags, "flags").map((b, j) => (bool(b, `flags[${j}]`) ? 1 : 0));
    this.lib.call((a) => {
      const ptr = a.alloc(Math.max(v.length, 1));
      this.lib.u8().set(v, ptr);
      return this.lib.x.cupel_items_set_volatile_many(h, f, v.length, ptr);
    }, (m) => m.replace(/\bisVolatile\b/g, "flags"));
    return this;
  }

  /**
   * Adds a variant to item `index`: a smaller stand-in (a summary, a
   * placeholder such as "[output cleared]") that selection may take
   * instead of the item. `variant` is `{ tokens, value, content }`: the
   * tokens it adds to the context (an integer >= 0), the share of the
   * item's score it keeps (in (0, 1]), and its text (a non-empty string;
   * null or absent for none). Variants are numbered 1, 2, ... in the order
   * added (0 is the item as pushed); selection takes at most one option of
   * an item; an item has at most 255 variants. Returns this list.
   */
  addVariant(index, variant) {
    const h = receiver(this, Items, "addVariant");
    const i = this.#index(index);
    const v = checkVariant(variant, "variant", (f) => `variant.${f}`);
    this.lib.call(
      (a) => this.lib.x.cupel_items_add_variant(h, i, v.tokens, v.value, a.str(v.content)),
      (m) => m.replace(/^item (\d+) has (\d+) variants already/, "index $1: the item has $2 variants already"),
    );
    return this;
  }

  /**
   * The variants of item `index`, in order (variant k at [k - 1]), as
   * `{ tokens, value, content }` (content null when none).
   */
  variants(index) {
    const h = receiver(this, Items, "variants", true);
    const i = this.#index(index);
    const lib = this.lib;
    const x = lib.x;
    return lib.call((a) => {
      const count = a.out(4);
      const st = x.cupel_items_variant_count(h, i, count);
      if (st !== 0) return st;
      const n = lib.u32At(count);
      const tokens = a.out(8);
      const value = a.out(8);
      const ptr = a.out(4);
      const len = a.out(4);
      const list = [];
      for (let v = 1; v <= n; v++) {
        const s = x.cupel_items_variant(h, i, v, tokens, value, ptr, len);
        if (s !== 0) return s;
        const q = lib.u32At(ptr);
        list.push({
          tokens: int64Out(lib.i64At(tokens)),
          value: new DataView(x.memory.buffer).getFloat64(value, true),
          content: q ? decoder.decode(lib.u8().subarray(q, q + lib.u32At(len))) : null,
        });
      }
      return [0, () => list];
    });
  }

  /**
   * Makes item `index` truncatable: a pipeline run with a tokenizer
   * (`Pipeline.setTokenizer`) may include it cut down to what the slicer
   * left, keeping its head (`Keep.Head`), its tail (`Keep.Tail`) or both
   * ends (`Keep.BothEnds`), if what is kept still counts at least
   * `minTokens` (an integer >= 0); its score then scales by the kept share
   * of its tokens. The item needs content (a run fails otherwise). Setting
   * it again replaces keep and minTokens. Returns this list.
   */
  setTruncatable(index, keep, minTokens) {
    const h = receiver(this, Items, "setTruncatable");
    const i = this.#index(index);
    const [k, m] = checkTruncation(keep, minTokens, (f) => f);
    this.lib.call(() => this.lib.x.cupel_items_set_truncatable(h, i, k, m));
    return this;
  }

  /** Makes item `index` no longer truncatable (nothing happens if it was not). Returns this list. */
  clearTruncatable(index) {
    const h = receiver(this, Items, "clearTruncatable");
    const i = this.#index(index);
    this.lib.call(() => this.lib.x.cupel_items_clear_truncatable(h, i));
    return this;
  }

  /** How item `index` may be cut: `{ keep, minTokens }` (keep a `Keep` value), or null when it is not truncatable. */
  truncatable(index) {
    const h = receiver(this, Items, "truncatable", true);
    const i = this.#index(index);
    const lib = this.lib;
    return lib.call((a) => {
      const is = a.out(4);
      const keep = a.out(4);
      const min = a.out(8);
      const st = lib.x.cupel_items_truncatable(h, i, is, keep, min);
      return [st, () => (lib.u8()[is] ? { keep: new DataView(lib.x.memory.buffer).getInt32(keep, true), minTokens: int64Out(lib.i64At(min)) } : null)];
    });
  }

  /**
   * Item `index` read back from the library, as an object with the fields
   * of `Item`: tokens, score, kind, content (null when none), timestamp
   * (UTC ms, null when none), priority (null when none), pinned,
   * relevanceHint (null when none), source, group (0 when none), tags,
   * metadata, variants (as `variants(index)`), truncatable (as
   * `truncatable(index)`: null when it is not), and the session identity:
   * key (0 when none) and volatile. Integers past 2^53 come back as BigInt.
   */
  get(index) {
    const h = this.self(true);
    const i = this.#index(index);
    const lib = this.lib;
    const x = lib.x;
    const item = lib.call((a) => {
      const o = a.out(64);
      const p = a.out(8);
      const at = (k) => o + 8 * k;
      const steps = [
        () => x.cupel_items_tokens(h, i, at(0)),
        () => x.cupel_items_score(h, i, at(1)),
        () => x.cupel_items_timestamp(h, i, p, at(2)),
        () => x.cupel_items_priority(h, i, p + 1, at(3)),
        () => x.cupel_items_relevance_hint(h, i, p + 2, at(4)),
        () => x.cupel_items_pinned(h, i, p + 3),
        () => x.cupel_items_group(h, i, at(5)),
        () => x.cupel_items_tag_count(h, i, at(6)),
        () => x.cupel_items_metadata_count(h, i, at(6) + 4),
        () => x.cupel_items_key(h, i, at(7)),
        () => x.cupel_items_volatile(h, i, p + 4),
      ];
      for (const step of steps) {
        const st = step();
        if (st !== 0) return st;
      }
      const dv = () => new DataView(x.memory.buffer);
      const present = (k) => lib.u8()[p + k] !== 0;
      const item = {
        tokens: int64Out(dv().getBigInt64(at(0), true)),
        score: dv().getFloat64(at(1), true),
        kind: null,
        content: null,
        timestamp: present(0) ? int64Out(dv().getBigInt64(at(2), true)) : null,
        priority: present(1) ? int64Out(dv().getBigInt64(at(3), true)) : null,
        pinned: present(3),
        relevanceHint: present(2) ? dv().getFloat64(at(4), true) : null,
        source: null,
        group: int64Out(dv().getBigUint64(at(5), true)),
        key: int64Out(dv().getBigUint64(at(7), true)),
        volatile: present(4),
        tags: [],
        metadata: {},
      };
      const tagCount = lib.u32At(at(6));
      const metaCount = lib.u32At(at(6) + 4);
      // Strings: a pointer and a length, owned by the list.
      const ptr = a.out(8);
      const len = a.out(8);
      const read = (st, pOff = 0, lOff = 0) => {
        if (st !== 0) throw lib.error(st);
        const q = lib.u32At(ptr + pOff);
        return q ? decoder.decode(lib.u8().subarray(q, q + lib.u32At(len + lOff))) : null;
      };
      item.kind = read(x.cupel_items_kind(h, i, ptr, len));
      item.content = read(x.cupel_items_content(h, i, ptr, len));
      item.source = read(x.cupel_items_source(h, i, ptr, len));
      for (let t = 0; t < tagCount; t++) item.tags.push(read(x.cupel_items_tag(h, i, t, ptr, len)));
      const entries = [];
      for (let m = 0; m < metaCount; m++) {
        const st = x.cupel_items_metadata_entry(h, i, m, ptr, len, ptr + 4, len + 4);
        entries.push([read(st), read(0, 4, 4)]);
      }
      item.metadata = Object.fromEntries(entries);
      return [0, () => item];
    });
    item.variants = this.variants(i);
    item.truncatable = this.truncatable(i);
    return item;
  }

  /** The number of items. */
  get length() {
    return this.lib.x.cupel_items_len(this.self(true));
  }

  /** Removes every item (indices start again from 0). */
  clear() {
    this.lib.x.cupel_items_clear(this.self());
  }
}

/** A token budget. Build with `cupel.budget({...})`. */
export class Budget extends Handle {
  /** The effective [max, target] after `pinnedTokens`, reserves and margin. */
  effective(pinnedTokens = 0) {
    const h = this.self(true);
    const pinned = int(pinnedTokens, "pinnedTokens", I64);
    return this.lib.call((a) => {
      const max = a.out(8);
      const target = a.out(8);
      const st = this.lib.x.cupel_budget_effective(h, pinned, max, target);
      return [st, () => [int64Out(this.lib.i64At(max)), int64Out(this.lib.i64At(target))]];
    });
  }
  /** Keeps `outputReserve` tokens (>= 0) for the model's answer. Returns this budget. */
  setOutputReserve(outputReserve) {
    const h = this.self();
    const r = int(outputReserve, "outputReserve", I64);
    this.lib.call(() => this.lib.x.cupel_budget_set_output_reserve(h, r));
    return this;
  }
  /** Keeps `percent` (0 to 100) of the budget free as a safety margin. Returns this budget. */
  setSafetyMargin(percent) {
    const h = this.self();
    const p = dbl(percent, "percent");
    this.lib.call(() => this.lib.x.cupel_budget_set_safety_margin(h, p));
    return this;
  }
  /**
   * The budget as a budget document (JSON text, every field: `maxTokens`,
   * `targetTokens`, `outputReserve`, `reservedSlots` with the kinds
   * lower-cased, `estimationSafetyMarginPercent`), which
   * `cupel.budgetFromJson` reads back to the same budget.
   */
  toJson() {
    const h = receiver(this, Budget, "toJson", true);
    return this.lib.text((a, buf, cap, len) => this.lib.x.cupel_budget_to_json(h, buf, cap, len));
  }
  /** `toJson()` parsed: a plain object. */
  toObject() {
    return JSON.parse(this.toJson());
  }
  /** Reserves `tokens` for items of `kind` (setting a kind again replaces it). Returns this budget. */
  reserve(kind, tokens) {
    const h = this.self();
    const k = text(kind, "kind");
    const t = int(tokens, "tokens", I64);
    this.lib.call((a) => this.lib.x.cupel_budget_reserve(h, a.str(k), t));
    return this;
  }
}

/** A slicer (Greedy, Knapsack, Quota, CountQuota, CountConstrainedKnapsack). */
export class Slicer extends Handle {
  /** The most working memory, in bytes, one slice call may use. */
  get memoryLimit() {
    return this.lib.x.cupel_slicer_memory_limit(this.self());
  }
  set memoryLimit(bytes) {
    const h = this.self();
    const b = int(bytes, "memoryLimit", USIZE);
    this.lib.call(() => this.lib.x.cupel_slicer_set_memory_limit(h, b));
  }
}

/** A scorer. Build with `cupel.scorers.*`. */
export class Scorer extends Handle {
  /** The score of every item of `items`, by index. */
  score(items) {
    const h = this.self();
    const ip = this.lib.ptrOf(items, Items, "items");
    const n = items.length;
    return this.lib.call((a) => {
      const out = a.alloc(8 * Math.max(n, 1));
      const len = a.out(4);
      const st = this.lib.x.cupel_scorer_score(h, ip, out, n, len);
      return [st, () => Array.from(new Float64Array(this.lib.x.memory.buffer, out, this.lib.u32At(len)))];
    });
  }
}

/** A placer (chronological or U-shaped). */
export class Placer extends Handle {
  /**
   * The Place stage alone: orders the items `indices` of `items`, whose
   * scores are `scores` (arrays of one length), and returns the indices in
   * placed order.
   */
  place(items, indices, scores) {
    const h = this.self();
    const lib = this.lib;
    const ip = lib.ptrOf(items, Items, "items");
    array(indices, "indices");
    array(scores, "scores");
    if (indices.length !== scores.length) {
      throw rangeError(`indices has ${indices.length} entries and scores ${scores.length}; they must match`);
    }
    const ix = indices.map((v, k) =>
      int(v, `indices[${k}]`, USIZE, (shown) => `indices[${k}] is ${shown}: out of range, the list holds ${items.length} items`),
    );
    const sc = scores.map((v, k) => dbl(v, `scores[${k}]`));
    return lib.indices(Math.max(ix.length, 1), (a, out, cap, len) =>
      lib.x.cupel_placer_place(h, ip, a.u32s(ix), a.f64s(sc), ix.length, out, cap, len),
    );
  }
}

/** A run's error message in this API's terms: the library names its own setters. */
function runTerms(m) {
  return m
    .replace("(cupel_items_set_content)", "(Items.setContent, or content when pushed)")
    .replace("(cupel_pipeline_set_tokenizer)", "(Pipeline.setTokenizer, or the tokenizer option of cupel.pipeline)");
}

/**
 * The whole pipeline. Build with `cupel.pipeline({...})`, from a policy
 * document (`cupel.pipelineFromJson`) or a preset (`cupel.preset`).
 */
export class Pipeline extends Handle {
  /** The trace callback this pipeline holds (see setTrace), or null. */
  [TRACE] = null;
  /** Whether setTokenizer (or cupel.pipeline's tokenizer option) gave it a tokenizer. */
  [TOKENIZER_GIVEN] = false;

  /**
   * Runs all six stages. Returns `{ placed, report }`: the item indices in
   * placed order, and (with `{ report: true }`) every decision, the report's
   * analytics among them. A traced pipeline calls its callback during the
   * run; an exception it threw is thrown here once the run has returned.
   */
  run(items, budget, opts) {
    const h = this.self();
    const lib = this.lib;
    const ip = lib.ptrOf(items, Items, "items");
    const bp = lib.ptrOf(budget, Budget, "budget");
    const { report = false } = options(opts, "options");
    bool(report, "options.report");
    return lib.withReport(report, items, "placed", (r) =>
      lib.traced([this], [items, budget], () =>
        lib.indices(items.length, (a, out, cap, len) => lib.x.cupel_pipeline_run(h, ip, bp, out, cap, len, r), runTerms),
      ),
    );
  }

  /**
   * The pipeline as a policy document (JSON text, every setting, keys in
   * alphabetical order): `cupel.pipelineFromJson` reads it back to a
   * pipeline that selects exactly as this one. A pipeline that cannot be
   * written without loss (a slicer nested otherwise than count quotas
   * around quotas around greedy, knapsack or stream; a tokenizer loaded
   * from a vocabulary file) throws CupelError with status UNSUPPORTED.
   */
  toJson() {
    const h = receiver(this, Pipeline, "toJson");
    return this.lib.text((a, buf, cap, len) => this.lib.x.cupel_pipeline_to_json(h, buf, cap, len));
  }

  /** `toJson()` parsed: a plain object. */
  toObject() {
    return JSON.parse(this.toJson());
  }

  /**
   * Traces this pipeline's runs: during each successful run (and each run
   * of a session made from it afterwards), `callback(event)` gets every
   * event of `level` (`TraceLevel.Stages`, `.Exclusions` or `.Full`), in
   * order: each stage's span event followed by its exclusions (the place
   * stage also by the included items), the pipeline's last. A `TraceEvent`
   * never holds content or metadata. `callback` null (or clearTrace())
   * turns tracing off. An exception the callback throws ends the delivery
   * of that run's events and is thrown by the run once it returned. The
   * callback must not call into this pipeline or change the run's items or
   * budget (that throws CupelError). The module has no clock: the binding
   * times the run, and gives every span the run's start and end. The
   * pipeline keeps the callback until it is disposed or the trace changes.
   * Returns this pipeline.
   */
  setTrace(level, callback) {
    const h = receiver(this, Pipeline, "setTrace");
    const lib = this.lib;
    const l = traceLevelOf(level, "level");
    if (callback !== null && typeof callback !== "function") {
      throw typeError(`callback is ${describe(callback)}; expected a function (null: tracing off)`, callback);
    }
    if (callback === null) {
      lib.call(() => lib.x.cupel_pipeline_set_trace(h, l, 0, 0));
      this[TRACE] = null;
      return this;
    }
    const entry = lib.traceEntry(callback);
    lib.call(() => lib.x.cupel_pipeline_set_trace(h, l, lib.trampoline(), entry.id));
    this[TRACE] = entry;
    return this;
  }

  /** Turns tracing off (setTrace(TraceLevel.Stages, null)). Returns this pipeline. */
  clearTrace() {
    return this.setTrace(TraceLevel.Stages, null);
  }

  released() {
    this[TRACE] = null;
  }

  /**
   * Gives the pipeline `tokenizer` to cut truncatable items with
   * (`Items.setTruncatable`); null removes it. The pipeline keeps its own
   * reference: `tokenizer` may be disposed right after. A run with a
   * truncatable item and no tokenizer is a RangeError naming the item.
   * Returns this pipeline.
   */
  setTokenizer(tokenizer) {
    const h = receiver(this, Pipeline, "setTokenizer");
    const tp = tokenizer === null ? 0 : this.lib.ptrOf(tokenizer, Tokenizer, "tokenizer");
    this.lib.call(() => this.lib.x.cupel_pipeline_set_tokenizer(h, tp));
    this[TOKENIZER_GIVEN] = tp !== 0;
    return this;
  }
}

/** A StreamSlice: items arriving one at a time. */
export class Stream extends Handle {
  /** Made by cupel.stream(). */
  constructor(lib, ptr, free) {
    super(lib, ptr, free);
    this.pushed = 0;
  }
  /** Offers the next item (in keep-together group `group`, 0: none); true once the budget is spent. */
  push(tokens, score, group = 0) {
    const h = this.self();
    const t = int(tokens, "tokens", I64);
    const s = dbl(score, "score");
    const g = int(group, "group", U64);
    const full = this.lib.call((a) => {
      const out = a.out(4);
      const st = this.lib.x.cupel_stream_push_grouped(h, t, s, g, out);
      return [st, () => this.lib.u8()[out] !== 0];
    });
    this.pushed++;
    return full;
  }
  /** Decides the last batch; the taken indices in the order taken. */
  finish() {
    const h = this.self();
    return this.lib.indices(this.pushed, (a, out, cap, len) => this.lib.x.cupel_stream_finish(h, out, cap, len));
  }
}

/**
 * A tokenizer: a vocabulary and its pre-tokenization pattern. Build with
 * `cupel.tokenizer(name)` or `cupel.tokenizerFromTiktoken(bytes, pattern)`.
 * Counts are tiktoken's `encode_ordinary` lengths (special tokens such as
 * `<|endoftext|>` are ordinary text). Offsets are JavaScript string
 * indices (UTF-16 code units). Texts are strings with no lone surrogate.
 */
export class Tokenizer extends Handle {
  /** Made by cupel.tokenizer() or cupel.tokenizerFromTiktoken(). */
  constructor(lib, ptr, free) {
    super(lib, ptr, free);
    /** The built-in encoding's name ("o200k_base", "cl100k_base"), or null for a loaded vocabulary. */
    this.name = null;
  }

  /** The number of tokens of `text`. */
  count(text) {
    const h = this.self();
    const lib = this.lib;
    const bytes = textBytes(text, "text");
    return lib.call((a) => {
      const p = a.bytes(bytes);
      const out = a.out(8);
      return [lib.x.cupel_tokenizer_count(h, p, bytes.length, out), () => int64Out(lib.i64At(out))];
    });
  }

  /** The counts of `texts` (an array of strings), in order; one call for all of them. */
  countMany(texts) {
    const h = this.self();
    const lib = this.lib;
    const list = array(texts, "texts").map((t, k) => textBytes(t, `texts[${k}]`));
    if (list.length === 0) return [];
    return lib.call((a) => {
      const [ptrs, lens] = a.byteStrings(list);
      const out = a.alloc(8 * list.length);
      const st = lib.x.cupel_tokenizer_count_many(h, list.length, ptrs, lens, out);
      return [st, () => Array.from(new BigInt64Array(lib.x.memory.buffer, out, list.length), int64Out)];
    });
  }

  /**
   * Cuts `text` to at most `maxTokens` tokens (an integer >= 0), keeping
   * its beginning (`Keep.Head`, the default), its end (`Keep.Tail`) or both
   * (`Keep.BothEnds`: the head gets ceil(maxTokens / 2) tokens, the tail
   * what the head left). Returns `{ text, headEnd, tailStart, tokens }`:
   * the kept text `text.slice(0, headEnd) + text.slice(tailStart)` (no
   * marker between; a host that writes one reserves its tokens first), the
   * offsets as JavaScript string indices (UTF-16 code units, never inside
   * a surrogate pair), and the head's count plus the tail's. A text that
   * fits is kept whole (`headEnd` = `tailStart` = `text.length`); cuts
   * fall on token boundaries of the whole text. Costs about one count.
   */
  truncate(text, maxTokens, keep = Keep.Head) {
    const h = this.self();
    const lib = this.lib;
    const bytes = textBytes(text, "text");
    const max = int(maxTokens, "maxTokens", I64);
    const k = keepOf(keep);
    const [headByte, tailByte, tokens] = lib.call((a) => {
      const p = a.bytes(bytes);
      const out = a.out(16);
      const st = lib.x.cupel_tokenizer_truncate(h, p, bytes.length, max, k, out, out + 4, out + 8);
      return [st, () => [lib.u32At(out), lib.u32At(out + 4), int64Out(lib.i64At(out + 8))]];
    });
    let headEnd = headByte;
    let tailStart = tailByte;
    if (bytes.length !== text.length) {
      // Not ASCII: byte offsets to UTF-16 ones (both are character boundaries).
      headEnd = utf16Units(bytes, 0, headByte);
      tailStart = headEnd + utf16Units(bytes, headByte, tailByte);
    }
    return { text: text.slice(0, headEnd) + text.slice(tailStart), headEnd, tailStart, tokens };
  }
}

/**
 * Cache-stable selection across the turns of a conversation. Build with
 * `cupel.session(pipeline)`: it keeps its own copy of the pipeline (which
 * may be disposed right after). Each `run` gives the context for one turn,
 * changing the previous turn's prompt only at its end whenever it can: the
 * first run (and the first after `reset`) is the pipeline's selection,
 * volatile items last; later runs append (the previous output in its order,
 * then the new items, then the volatile ones) while that fits, and
 * otherwise compact once, with `slack` of the target left free for the turns
 * after it, keeping the longest prefix of the previous output they can. A
 * run that throws changes nothing.
 */
export class Session extends Handle {
  /** The trace callback of the pipeline this session copied, or null: the session's runs call it. */
  [TRACE] = null;

  /**
   * The share, in [0, 1), of the effective target a compaction leaves free
   * for the turns after it (default 0.2). Setting a number outside [0, 1)
   * or NaN is a RangeError (the slack stays).
   */
  get slack() {
    const h = this.self();
    return this.lib.call((a) => {
      const out = a.out(8);
      return [this.lib.x.cupel_session_slack(h, out), () => new DataView(this.lib.x.memory.buffer).getFloat64(out, true)];
    });
  }
  set slack(fraction) {
    const h = this.self();
    const f = slackOf(fraction, "slack");
    this.lib.call(() => this.lib.x.cupel_session_set_slack(h, f));
  }

  /**
   * One turn, with `Pipeline.run`'s rules (the budget, pinned items,
   * groups, variants and truncation, the overflow strategy). Returns
   * `{ placed, report }`: the item indices in prompt order, and (with
   * `{ report: true }`) every decision: an item the pipeline alone would
   * take but the session left out has the reason "Deferred", and the JSON
   * has a "session" object. Two items with the same non-zero key are a
   * RangeError naming both indices.
   */
  run(items, budget, opts) {
    const h = this.self();
    const lib = this.lib;
    const ip = lib.ptrOf(items, Items, "items");
    const bp = lib.ptrOf(budget, Budget, "budget");
    const { report = false } = options(opts, "options");
    bool(report, "options.report");
    return lib.withReport(report, items, "placed", (r) =>
      lib.traced([this], [items, budget], () =>
        lib.indices(items.length, (a, out, cap, len) => lib.x.cupel_session_run(h, ip, bp, out, cap, len, r), runTerms),
      ),
    );
  }

  released() {
    this[TRACE] = null;
  }

  /**
   * The last run's stable prefix, `{ items, tokens }`: how many leading
   * items of its output are identical (by identity and option) to the
   * leading items of the run before it, and their tokens; where a host
   * puts its cache breakpoint. 0 and 0 before any run, after a first run
   * and after the first run that follows a reset.
   */
  get stablePrefix() {
    const h = this.self();
    const lib = this.lib;
    return lib.call((a) => {
      const n = a.out(4);
      const t = a.out(8);
      return [lib.x.cupel_session_stable_prefix(h, n, t), () => ({ items: lib.u32At(n), tokens: int64Out(lib.i64At(t)) })];
    });
  }

  /** Which rule the last successful run took: a `SessionAction` ("first" before any run and after a reset). */
  get lastAction() {
    const h = this.self();
    const lib = this.lib;
    return lib.call((a) => {
      const out = a.out(4);
      return [lib.x.cupel_session_last_action(h, out), () => ACTIONS[new DataView(lib.x.memory.buffer).getInt32(out, true)]];
    });
  }

  /**
   * The last run's cache breakpoints (providers allow up to four per
   * request), ascending and distinct, at most 4, as `{ items, tokens, mark }`
   * (`mark` a `BreakpointMark`): after the first `items` items of the
   * output, which add `tokens` tokens. None at 0 items; where two fall
   * together one, with the later mark. Empty before any run.
   */
  get breakpoints() {
    const h = this.self();
    const lib = this.lib;
    return lib.call((a) => {
      const out = a.alloc(BREAKPOINT_SIZE * MAX_BREAKPOINTS);
      const len = a.out(4);
      const st = lib.x.cupel_session_breakpoints(h, out, MAX_BREAKPOINTS, len);
      return [st, () => {
        const dv = new DataView(lib.x.memory.buffer);
        return Array.from({ length: lib.u32At(len) }, (_, k) => {
          const b = out + BREAKPOINT_SIZE * k;
          return { items: dv.getUint32(b, true), tokens: int64Out(dv.getBigInt64(b + 8, true)), mark: MARKS[dv.getInt32(b + 16, true)] };
        });
      }];
    });
  }

  /** Forgets every run: the next run is a first run (stable prefix 0). The slack stays. Returns this session. */
  reset() {
    const h = this.self();
    this.lib.call(() => this.lib.x.cupel_session_reset(h));
    return this;
  }
}

/** The handle classes by name (for messages). */
const HANDLES = { Items, Budget, Slicer, Scorer, Placer, Pipeline, Stream, Tokenizer, Session };

// ---- OpenTelemetry -----------------------------------------------------------------

/** Nanoseconds since the epoch (a BigInt) as OpenTelemetry's HrTime, [seconds, nanoseconds]. */
function hrTime(ns) {
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

/** An integer attribute: a number (a BigInt past 2^53 rounds). */
function attrInt(v) {
  return typeof v === "bigint" ? Number(v) : v;
}

/**
 * A trace callback that turns each run's events into OpenTelemetry spans
 * on `tracer`, after the fact: the `cupel.pipeline` span (a child of the
 * context active during the run) with five `cupel.stage.<name>` children,
 * their `cupel.exclusion` and `cupel.item.included` events, and the
 * attributes of the specification's chapter for `level`.
 */
function spanBuilder(api, tracer, level) {
  let pending = [];
  return (e) => {
    if (e.kind !== TraceKind.Pipeline) {
      if (e.kind === TraceKind.Stage && e.stage === "classify") pending = []; // a run's first event
      pending.push(e);
      return;
    }
    const events = pending;
    pending = [];
    const parent = api.context.active();
    const root = tracer.startSpan(
      e.name,
      {
        startTime: hrTime(e.startUnixNanos),
        attributes: { "cupel.budget.max_tokens": attrInt(e.maxTokens), "cupel.verbosity": e.verbosity },
      },
      parent,
    );
    const inside = api.trace.setSpan(parent, root);
    let stage = null;
    let stageEnd;
    for (const ev of events) {
      if (ev.kind === TraceKind.Stage) {
        stage?.end(stageEnd);
        const attributes = {
          "cupel.stage.name": ev.stage,
          "cupel.stage.item_count_in": ev.itemCountIn,
          "cupel.stage.item_count_out": ev.itemCountOut,
        };
        if (level >= TraceLevel.Exclusions) attributes["cupel.exclusion.count"] = ev.exclusionCount;
        stage = tracer.startSpan(ev.name, { startTime: hrTime(ev.startUnixNanos), attributes }, inside);
        stageEnd = hrTime(ev.startUnixNanos + ev.durationNanos);
      } else if (ev.kind === TraceKind.Exclusion) {
        stage?.addEvent(
          ev.name,
          {
            "cupel.exclusion.reason": ev.reasonName,
            "cupel.exclusion.item_kind": ev.itemKind,
            "cupel.exclusion.item_tokens": attrInt(ev.tokens),
          },
          hrTime(ev.startUnixNanos),
        );
      } else {
        stage?.addEvent(
          ev.name,
          { "cupel.item.kind": ev.itemKind, "cupel.item.tokens": attrInt(ev.tokens), "cupel.item.score": ev.score },
          hrTime(ev.startUnixNanos),
        );
      }
    }
    stage?.end(stageEnd);
    root.end(hrTime(e.startUnixNanos + e.durationNanos));
  };
}

const OTEL_API = "@opentelemetry/api";

/**
 * `@opentelemetry/api`, loaded when first needed: an ES module import as
 * the host resolves it, else Node's require (which also honours
 * NODE_PATH). CupelError (UNSUPPORTED) when neither finds it.
 */
async function loadOtelApi() {
  let why;
  try {
    const m = await import(/* webpackIgnore: true */ OTEL_API);
    return m.trace ? m : m.default;
  } catch (e) {
    why = e;
  }
  try {
    const { createRequire } = await import("node:module");
    return createRequire(import.meta.url)(OTEL_API);
  } catch {
    // not installed: the error below
  }
  throw new CupelError(
    Status.UNSUPPORTED,
    `${OTEL_API} is not installed (an optional peer dependency of libcupel): npm install ${OTEL_API}, or pass it as options.api (${why?.message ?? why})`,
  );
}

/**
 * OpenTelemetry spans from a pipeline's runs (`cupel.otel`), when the host
 * has `@opentelemetry/api` installed (an optional peer dependency, loaded
 * the first time it is needed).
 */
export class Otel {
  /** Made by load(): `cupel.otel`. */
  constructor(lib) {
    this.lib = lib;
    this.api = null;
  }
  /**
   * Traces `pipeline` as OpenTelemetry spans: each successful run (and
   * each run of a session made from it afterwards) ends a `cupel.pipeline`
   * span, a child of the span active during the run, with five
   * `cupel.stage.<name>` children (`cupel.stage.name`,
   * `cupel.stage.item_count_in`, `cupel.stage.item_count_out`, and from
   * `TraceLevel.Exclusions` `cupel.exclusion.count`), `cupel.exclusion`
   * events (`cupel.exclusion.reason`, `.item_kind`, `.item_tokens`) and at
   * `TraceLevel.Full` `cupel.item.included` events (`cupel.item.kind`,
   * `.tokens`, `.score`) on them; the root has `cupel.budget.max_tokens`
   * and `cupel.verbosity`. The tracer is named "cupel". Options: `level`
   * (TraceLevel.Stages), `tracerProvider` (the global one), `api` (the
   * `@opentelemetry/api` module, where this module cannot import it: a
   * bundle). It replaces the pipeline's trace callback
   * (`pipeline.clearTrace()` ends it). Resolves to the pipeline.
   */
  async instrument(pipeline, opts) {
    const lib = this.lib;
    lib.ptrOf(pipeline, Pipeline, "pipeline");
    const o = options(opts, "options");
    const level = traceLevelOf(o.level ?? TraceLevel.Stages, "options.level");
    let api = o.api;
    if (api == null) api = this.api ??= await loadOtelApi();
    if (typeof api !== "object" || typeof api.trace?.setSpan !== "function" || typeof api.context?.active !== "function") {
      throw typeError(`options.api is ${describe(api)}; expected the @opentelemetry/api module`, api);
    }
    const provider = o.tracerProvider ?? api.trace.getTracerProvider();
    if (typeof provider?.getTracer !== "function") {
      throw typeError(`options.tracerProvider is ${describe(provider)}; expected a TracerProvider`, provider);
    }
    const tracer = provider.getTracer("cupel", lib.version);
    return pipeline.setTrace(level, spanBuilder(api, tracer, level));
  }
}

/** The library: factories for every handle, and the calls between them. */
export class Cupel {
  /** Wraps an instance's exports; use load() rather than this. */
  constructor(exports) {
    this.x = exports;
    this.reasonNames = new Map();
    /** Trace callbacks by the id passed as user_data: weak, the pipelines and sessions hold them. */
    this.traces = new Map();
    this.traceIds = 0;
    this.traceGone = new FinalizationRegistry((id) => this.traces.delete(id));
    /** The runs under way (Cupel.traced), innermost last. */
    this.frames = [];
    /** The function table slot of the trace trampoline (0: not made yet). */
    this.trampolineSlot = 0;
    /** The library's static strings (event names, stages, reason names) by address. */
    this.statics = new Map();
    /**
     * OpenTelemetry spans from a pipeline's runs, when the host has
     * `@opentelemetry/api` (an optional peer dependency): see `Otel`.
     */
    this.otel = new Otel(this);
    const lib = this;
    const weightsOf = (a, weights, name) => {
      const entries = Object.entries(options(weights, name)).map(([k, w]) => [
        text(k, `${name} key ${JSON.stringify(k)}`),
        dbl(w, `${name}[${JSON.stringify(k)}]`),
      ]);
      return [entries, () => lib.pairs(a, entries)];
    };
    /** Scorer factories (spec chapters in ../../shared/spec/cupel/scorers). */
    this.scorers = {
      given: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_given(out)),
      recency: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_recency(out)),
      priority: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_priority(out)),
      frequency: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_frequency(out)),
      reflexive: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_reflexive(out)),
      /** `weights`: { kind: weight }, or omitted for the spec's defaults. */
      kind: (weights) => {
        if (weights === undefined) return lib.make(Scorer, (out) => lib.x.cupel_scorer_new_kind(0, 0, out));
        return lib.make(Scorer, (out, a) => {
          const [entries, write] = weightsOf(a, weights, "weights");
          return lib.x.cupel_scorer_new_kind(write(), entries.length, out);
        });
      },
      /** `weights`: { tag: weight }. */
      tag: (weights) =>
        lib.make(Scorer, (out, a) => {
          const [entries, write] = weightsOf(a, weights ?? {}, "weights");
          return lib.x.cupel_scorer_new_tag(write(), entries.length, out);
        }),
      /** `parts`: [[scorer, weight], ...]; the children may be disposed right after. */
      composite: (parts) => {
        const checked = array(parts, "parts").map((part, k) => {
          if (!Array.isArray(part) || part.length !== 2) {
            throw typeError(`parts[${k}] is ${describe(part)}; expected a [scorer, weight] pair`, part);
          }
          return [lib.ptrOf(part[0], Scorer, `parts[${k}][0]`), dbl(part[1], `parts[${k}][1]`)];
        });
        return lib.make(
          Scorer,
          (out, a) =>
            lib.x.cupel_scorer_new_composite(
              a.u32s(checked.map(([s]) => s)),
              a.f64s(checked.map(([, w]) => w)),
              checked.length,
              out,
            ),
          (m) =>
            m
              .replace(/\bchildren\[(\d+)\]/g, "parts[$1][0]")
              .replace(/\bweights\[(\d+)\]/g, "parts[$1][1]")
              .replace(/\bcount is 0\b/, "parts is empty"),
        );
      },
      /** A scorer scaling `inner`'s scores to [0, 1]; `inner` may be disposed right after. */
      scaled: (inner) => {
        const ip = lib.ptrOf(inner, Scorer, "inner");
        return lib.make(Scorer, (out) => lib.x.cupel_scorer_new_scaled(ip, out));
      },
      /** Scores by the "cupel:trust" metadata value, `defaultScore` when absent. */
      metadataTrust: (defaultScore = 0.5) => {
        const d = dbl(defaultScore, "defaultScore");
        return lib.make(Scorer, (out) => lib.x.cupel_scorer_new_metadata_trust(d, out));
      },
      /** Boosts (by `boost` > 0) items whose metadata `key` equals `value`. */
      metadataKey: (key, value, boost) => {
        const k = text(key, "key");
        const v = text(value, "value");
        const b = dbl(boost, "boost");
        return lib.make(Scorer, (out, a) => lib.x.cupel_scorer_new_metadata_key(a.str(k), a.str(v), b, out));
      },
      /**
       * `{ curve: DecayCurve.*, durationSecs, windows: [[maxAgeSecs, score]], referenceTime (ms or Date),
       * nullTimestampScore = 0.5 }`.
       */
      decay: (opts) => {
        const { curve, durationSecs = 0, windows = [], referenceTime, nullTimestampScore = 0.5 } = options(opts, "options");
        const c = int(curve, "curve", I32);
        const d = dbl(durationSecs, "durationSecs");
        const w = array(windows, "windows").map((pair, k) => {
          if (!Array.isArray(pair) || pair.length !== 2) {
            throw typeError(`windows[${k}] is ${describe(pair)}; expected a [maxAgeSecs, score] pair`, pair);
          }
          return [dbl(pair[0], `windows[${k}][0]`), dbl(pair[1], `windows[${k}][1]`)];
        });
        const refMs = referenceTime instanceof Date ? referenceTime.getTime() : referenceTime;
        if (Number.isNaN(refMs)) throw rangeError("referenceTime is an invalid Date");
        const ref = int(refMs, "referenceTime", I64);
        const n = dbl(nullTimestampScore, "nullTimestampScore");
        return lib.make(Scorer, (out, a) =>
          lib.x.cupel_scorer_new_decay(c, d, w.length ? a.f64s(w.flat()) : 0, w.length, ref, n, out),
        );
      },
    };
  }

  // ---- plumbing (not part of the API) ----------------------------------
  /** The module's memory as bytes (a fresh view: memory growth detaches old ones). */
  u8() {
    return new Uint8Array(this.x.memory.buffer);
  }
  /** The uint32 (size_t, pointer) at `ptr`. */
  u32At(ptr) {
    return new DataView(this.x.memory.buffer).getUint32(ptr, true);
  }
  /** The int64 at `ptr`, as a BigInt. */
  i64At(ptr) {
    return new DataView(this.x.memory.buffer).getBigInt64(ptr, true);
  }
  /** The NUL-terminated UTF-8 string at `ptr`; null for 0. */
  cString(ptr) {
    if (!ptr) return null;
    const mem = this.u8();
    let end = ptr;
    while (mem[end] !== 0) end++;
    return decoder.decode(mem.subarray(ptr, end));
  }
  /** The pointer of handle argument `h` (see Handle.ptr). */
  ptrOf(h, Class, name) {
    return Handle.ptr(h, Class, name, this);
  }
  /** The error for the failed call that returned `status`: the library's message in JavaScript's terms. */
  error(status, rename) {
    let message = jsTerms(this.cString(this.x.cupel_last_error()) ?? STATUS_NAMES[status] ?? `status ${status}`);
    if (rename) message = rename(message);
    return statusError(status, message);
  }
  /**
   * Runs `f(arena)` and frees the arena. `f` returns a status, or
   * [status, read] where read() extracts the result before the arena goes.
   * `rename` rewrites the library's message where it names arguments
   * otherwise than this binding does.
   */
  call(f, rename) {
    const a = new Arena(this);
    try {
      const r = f(a);
      const [st, read] = Array.isArray(r) ? r : [r, undefined];
      if (st !== 0) throw this.error(st, rename);
      return read ? read() : undefined;
    } finally {
      a.free();
    }
  }
  /** A new handle of `Class` from `create(outPtr, arena)`. */
  make(Class, create, rename) {
    const ptr = this.call((a) => {
      const out = a.out(4);
      const st = create(out, a);
      return [st, () => this.u32At(out)];
    }, rename);
    return new Class(this, ptr, this.x[FREE[Class.name]]);
  }
  /** An array of { const char *, double } pairs (kind or tag weights), checked. */
  pairs(a, entries) {
    const ptr = a.alloc(16 * Math.max(entries.length, 1));
    const names = entries.map(([k]) => a.str(k));
    // After the allocations: a grown memory detaches older views.
    const dv = new DataView(this.x.memory.buffer);
    entries.forEach(([, w], i) => {
      dv.setUint32(ptr + 16 * i, names[i], true);
      dv.setFloat64(ptr + 16 * i + 8, w, true);
    });
    return ptr;
  }
  /**
   * Calls `f(arena, out, capacity, outLen)` with a buffer of `capacity`
   * size_t's (larger if the library asks for more); returns the indices.
   */
  indices(capacity, f, rename) {
    let cap = capacity;
    for (;;) {
      let needed = -1;
      const value = this.call((a) => {
        const out = a.alloc(4 * Math.max(cap, 1));
        const len = a.out(4);
        const st = f(a, out, cap, len);
        if (st === Status.BUFFER_TOO_SMALL) {
          needed = this.u32At(len);
          return [0, () => null];
        }
        return [st, () => Array.from(new Uint32Array(this.x.memory.buffer, out, this.u32At(len)))];
      }, rename);
      if (needed < 0) return value;
      cap = needed;
    }
  }
  /** Runs `f(reportPtr or 0)`; gives { [key]: the indices, report }. */
  withReport(wanted, items, key, f) {
    let report = 0;
    if (wanted) {
      report = this.call((a) => {
        const out = a.out(4);
        return [this.x.cupel_report_new(out), () => this.u32At(out)];
      });
    }
    try {
      const value = f(report);
      return { [key]: value, report: report ? this.readReport(report, items) : undefined };
    } finally {
      if (report) this.x.cupel_report_free(report);
    }
  }
  /**
   * A text the library writes with its buffer rules: `f(arena, buf,
   * capacity, outLen)` is called with `capacity` bytes (default: first 0, to
   * ask for the length) and again with what it asked for if that was too
   * small. `mute`: the second call runs with the trace delivery of the
   * innermost traced call off (a call that runs pipelines runs them again).
   */
  text(f, capacity = 0, rename, mute = false) {
    return this.call((a) => {
      const len = a.out(4);
      let buf = capacity ? a.alloc(capacity) : 0;
      let st = f(a, buf, capacity, len);
      if (st === Status.BUFFER_TOO_SMALL) {
        const n = this.u32At(len);
        buf = a.alloc(n + 1);
        const frame = mute ? this.frames.at(-1) : undefined;
        if (frame) frame.muted = true;
        st = f(a, buf, n + 1, len);
      } else if (st === 0 && !capacity) {
        st = Status.INTERNAL; // a length asked for and not refused: never happens
      }
      return [st, () => decoder.decode(this.u8().subarray(buf, buf + this.u32At(len)))];
    }, rename);
  }
  /**
   * Runs `f()`, which runs the pipelines or sessions `running` on `used`
   * (items, budgets), as one traced call: the trace events of its runs get
   * the host's times, and an exception a trace callback threw is thrown
   * here once `f` has returned (an error of `f` itself comes first).
   */
  traced(running, used, f) {
    const frame = { start: nowNanos(), end: 0n, failed: false, error: undefined, muted: false };
    this.frames.push(frame);
    let value;
    try {
      value = Handle.hold(running, used, f);
    } finally {
      this.frames.pop();
    }
    if (frame.failed) throw frame.error;
    return value;
  }
  /** A trace callback entry with its user_data id; the pipeline holds it, the table weakly. */
  traceEntry(callback) {
    const entry = { id: ++this.traceIds, callback };
    this.traces.set(entry.id, new WeakRef(entry));
    this.traceGone.register(entry, entry.id);
    return entry;
  }
  /**
   * The function table slot of the trace trampoline: a WebAssembly function
   * of type (i32, i32) -> () that calls onTrace, made once per load().
   */
  trampoline() {
    if (!this.trampolineSlot) {
      const table = this.x.__indirect_function_table;
      if (!(table instanceof WebAssembly.Table)) {
        throw new CupelError(
          Status.UNSUPPORTED,
          "this cupel.wasm exports no function table, which tracing needs: build it with bindings/js/build.sh",
        );
      }
      const module = new WebAssembly.Module(TRAMPOLINE_MODULE);
      const { exports } = new WebAssembly.Instance(module, { e: { f: (id, ptr) => this.onTrace(id >>> 0, ptr >>> 0) } });
      const slot = table.grow(1);
      table.set(slot, exports.f);
      this.trampolineSlot = slot;
    }
    return this.trampolineSlot;
  }
  /**
   * A trace event from the library (C calls this through the trampoline):
   * never lets an exception unwind into the module. The first exception of
   * a callback is kept for Cupel.traced to throw, and the rest of that
   * call's events are not delivered.
   */
  onTrace(id, ptr) {
    const frame = this.frames.at(-1);
    try {
      if (frame && (frame.failed || frame.muted)) return;
      const entry = this.traces.get(id)?.deref();
      if (!entry) return;
      const event = this.traceEvent(ptr, frame);
      if (event.kind === TraceKind.Pipeline && frame) {
        // The next run of the same call (policy sensitivity) starts now.
        frame.start = nowNanos();
        frame.end = 0n;
      }
      entry.callback(event);
    } catch (e) {
      if (frame) {
        frame.failed = true;
        frame.error = e;
      } else {
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }
  /** The library's static NUL-terminated string at `ptr` (null for 0), decoded once. */
  staticString(ptr) {
    if (!ptr) return null;
    let s = this.statics.get(ptr);
    if (s === undefined) this.statics.set(ptr, (s = this.cString(ptr)));
    return s;
  }
  /** The `cupel_trace_event` at `ptr` as a `TraceEvent` (wasm32 layout: 88 bytes). */
  traceEvent(ptr, frame) {
    const dv = new DataView(this.x.memory.buffer);
    const kind = TRACE_KINDS[dv.getInt32(ptr, true)];
    const span = kind === TraceKind.Pipeline || kind === TraceKind.Stage;
    const kindPtr = dv.getUint32(ptr + 40, true);
    let start = dv.getBigUint64(ptr + 72, true);
    let duration = dv.getBigUint64(ptr + 80, true);
    if (start === 0n) {
      // No clock in the module: the run's start and end as the host saw them.
      let t0 = frame?.start;
      if (frame && frame.end === 0n) frame.end = nowNanos();
      const t1 = frame?.end ?? nowNanos();
      t0 ??= t1;
      start = span ? t0 : t1;
      duration = span ? t1 - t0 : 0n;
    }
    return {
      kind,
      name: this.staticString(dv.getUint32(ptr + 4, true)),
      stage: this.staticString(dv.getUint32(ptr + 8, true)),
      verbosity: this.staticString(dv.getUint32(ptr + 12, true)),
      itemCountIn: span ? dv.getUint32(ptr + 16, true) : null,
      itemCountOut: span ? dv.getUint32(ptr + 20, true) : null,
      exclusionCount: span ? dv.getUint32(ptr + 24, true) : null,
      item: span ? null : dv.getUint32(ptr + 28, true),
      reason: kind === TraceKind.Exclusion ? dv.getInt32(ptr + 32, true) : null,
      reasonName: kind === TraceKind.Exclusion ? this.staticString(dv.getUint32(ptr + 36, true)) : null,
      itemKind: span ? null : kindPtr ? decoder.decode(this.u8().subarray(kindPtr, kindPtr + dv.getUint32(ptr + 44, true))) : "",
      tokens: span ? null : int64Out(dv.getBigInt64(ptr + 48, true)),
      score: kind === TraceKind.Included ? dv.getFloat64(ptr + 56, true) : null,
      maxTokens: kind === TraceKind.Pipeline ? int64Out(dv.getBigInt64(ptr + 64, true)) : null,
      startUnixNanos: start,
      durationNanos: duration,
    };
  }
  /** Decision `i` of a report's included (or excluded) items. */
  decision(report, included, i) {
    return this.call((a) => {
      const d = a.out(DECISION_SIZE);
      const st = included ? this.x.cupel_report_included(report, i, d) : this.x.cupel_report_excluded(report, i, d);
      return [st, () => {
        const dv = new DataView(this.x.memory.buffer);
        const related = dv.getUint32(d + 40, true);
        const reasonCode = dv.getInt32(d + 16, true);
        return {
          index: dv.getUint32(d, true),
          score: dv.getFloat64(d + 8, true),
          reason: this.reasonName(reasonCode),
          reasonCode,
          itemTokens: int64Out(dv.getBigInt64(d + 24, true)),
          availableTokens: int64Out(dv.getBigInt64(d + 32, true)),
          relatedIndex: related === SIZE_MAX ? null : related,
          group: int64Out(dv.getBigUint64(d + 48, true)),
          groupTokens: int64Out(dv.getBigInt64(d + 56, true)),
        };
      }];
    });
  }
  /**
   * What was chosen for included entry `i` (item `index` of `items`): the
   * variant (0: the item as pushed), the tokens it adds, the cut (UTF-8
   * byte offsets into the item's content) and the text as sent.
   */
  chosen(r, i, index, items) {
    const x = this.x;
    const [variant, addedTokens, headEnd, tailStart] = this.call((a) => {
      const v = a.out(4), t = a.out(8), he = a.out(4), ts = a.out(4);
      let st = x.cupel_report_included_variant(r, i, v, t);
      if (st === 0) st = x.cupel_report_included_cut(r, i, he, ts);
      return [st, () => [this.u32At(v), int64Out(this.i64At(t)), this.u32At(he), this.u32At(ts)]];
    });
    const ip = this.ptrOf(items, Items, "items");
    const text = this.call((a) => {
      const ptr = a.out(4), len = a.out(4);
      const st =
        variant > 0
          ? x.cupel_items_variant(ip, index, variant, a.out(8), a.out(8), ptr, len)
          : x.cupel_items_content(ip, index, ptr, len);
      return [st, () => {
        const q = this.u32At(ptr);
        if (!q) return null;
        const bytes = this.u8().subarray(q, q + this.u32At(len));
        if (variant > 0) return decoder.decode(bytes);
        try {
          // Bytes [0, headEnd) then [tailStart, len): both on character boundaries.
          return strictDecoder.decode(bytes.subarray(0, headEnd)) + strictDecoder.decode(bytes.subarray(tailStart));
        } catch {
          throw new CupelError(Status.INTERNAL, `the cut of item ${index} (bytes ${headEnd}, ${tailStart}) is not on character boundaries`);
        }
      }];
    });
    return { variant, addedTokens, cut: { headEnd, tailStart }, text };
  }
  /** Everything a report holds, as plain objects. */
  readReport(r, items) {
    const x = this.x;
    const included = [];
    const excluded = [];
    for (let i = 0; i < x.cupel_report_included_count(r); i++) {
      const d = this.decision(r, true, i);
      included.push({ ...d, ...this.chosen(r, i, d.index, items) });
    }
    for (let i = 0; i < x.cupel_report_excluded_count(r); i++) excluded.push(this.decision(r, false, i));
    const shortfalls = [];
    for (let i = 0; i < x.cupel_report_shortfall_count(r); i++) {
      shortfalls.push(this.call((a) => {
        const kind = a.out(4), req = a.out(4), sat = a.out(4);
        return [x.cupel_report_shortfall(r, i, kind, req, sat), () => ({
          kind: this.cString(this.u32At(kind)),
          required: this.u32At(req),
          satisfied: this.u32At(sat),
        })];
      }));
    }
    const capExcluded = [];
    for (let i = 0; i < x.cupel_report_cap_excluded_count(r); i++) {
      capExcluded.push(this.call((a) => {
        const out = a.out(4);
        return [x.cupel_report_cap_excluded(r, i, out), () => this.u32At(out)];
      }));
    }
    const ip = this.ptrOf(items, Items, "items");
    const json = this.call((a) => {
      const len = a.out(4);
      const st = x.cupel_report_json(r, ip, 0, 0, len);
      if (st !== Status.BUFFER_TOO_SMALL) return st;
      const n = this.u32At(len);
      const buf = a.alloc(n + 1);
      return [x.cupel_report_json(r, ip, buf, n + 1, len), () => decoder.decode(this.u8().subarray(buf, buf + n))];
    });
    const analytics = this.call((a) => {
      const u = a.out(8), d = a.out(4), c = a.out(8);
      let st = x.cupel_report_budget_utilization(r, u);
      if (st === 0) st = x.cupel_report_kind_diversity(r, ip, d);
      if (st === 0) st = x.cupel_report_timestamp_coverage(r, ip, c);
      return [st, () => {
        const dv = new DataView(x.memory.buffer);
        return { budgetUtilization: dv.getFloat64(u, true), kindDiversity: dv.getUint32(d, true), timestampCoverage: dv.getFloat64(c, true) };
      }];
    });
    // The quota rows (the slicer's constraints, outermost first) as the JSON has them.
    analytics.quotas = JSON.parse(json).analytics?.quotas ?? [];
    return {
      included,
      excluded,
      analytics,
      totalCandidates: int64Out(x.cupel_report_total_candidates(r)),
      totalTokensConsidered: int64Out(x.cupel_report_total_tokens_considered(r)),
      effectiveMaxTokens: int64Out(x.cupel_report_effective_max_tokens(r)),
      effectiveTargetTokens: int64Out(x.cupel_report_effective_target_tokens(r)),
      selectedTokens: int64Out(x.cupel_report_selected_tokens(r)),
      shortfalls,
      capExcluded,
      json,
    };
  }

  // ---- the API -----------------------------------------------------------
  /** libcupel's version string. */
  get version() {
    return this.cString(this.x.cupel_version());
  }
  /** Handles not yet freed (a leak check). */
  get liveHandles() {
    return this.x.cupel_live_handles();
  }
  /**
   * The specification's name of a reason code ("Scored", "BudgetExceeded",
   * ...), from the library (`cupel_reason_str`); "Unknown" for a number
   * that is no reason.
   */
  reasonName(code) {
    if (typeof code === "bigint") code = code >= -(2n ** 31n) && code < 2n ** 31n ? Number(code) : 2 ** 31;
    if (typeof code !== "number") throw typeError(`code is ${describe(code)}; expected an integer`, code);
    if (!Number.isInteger(code)) throw rangeError(`code is ${describe(code)}; expected an integer`);
    // The library takes an int: a number outside it is no reason.
    if (code < -(2 ** 31) || code >= 2 ** 31) return "Unknown";
    let name = this.reasonNames.get(code);
    if (name === undefined) {
      name = this.cString(this.x.cupel_reason_str(code));
      this.reasonNames.set(code, name);
    }
    return name;
  }
  /** A list of items (plain objects, see index.d.ts); nothing is made if one is bad. */
  items(list = []) {
    array(list, "items");
    const items = this.make(Items, (out) => this.x.cupel_items_new(out));
    try {
      return items.push(list);
    } catch (e) {
      items.dispose();
      throw e;
    }
  }
  /** `{ maxTokens, targetTokens = maxTokens, outputReserve, safetyMarginPercent, reserved: { kind: tokens } }`. */
  budget(opts) {
    const o = options(opts, "options");
    const max = int(o.maxTokens, "maxTokens", I64);
    const target = o.targetTokens === undefined ? max : int(o.targetTokens, "targetTokens", I64);
    const reserved = Object.entries(options(o.reserved, "reserved"));
    const b = this.make(Budget, (out) => this.x.cupel_budget_new(max, target, out));
    try {
      if (o.outputReserve !== undefined) b.setOutputReserve(o.outputReserve);
      if (o.safetyMarginPercent !== undefined) b.setSafetyMargin(o.safetyMarginPercent);
      for (const [kind, tokens] of reserved) b.reserve(kind, tokens);
      return b;
    } catch (e) {
      b.dispose();
      throw e;
    }
  }
  /** GreedySlice: by score per token, while it fits. */
  greedy() {
    return this.make(Slicer, (out) => this.x.cupel_slicer_new_greedy(out));
  }
  /** KnapsackSlice with tokens rounded up to `bucketSize`. */
  knapsack(bucketSize = 100) {
    const b = int(bucketSize, "bucketSize", I64);
    return this.make(Slicer, (out) => this.x.cupel_slicer_new_knapsack(b, out));
  }
  /** QuotaSlice over `inner`; `quotas`: [{ kind, requirePercent = 0, capPercent = 100 }]. */
  quota(inner, quotas) {
    const ip = this.ptrOf(inner, Slicer, "inner");
    const q = array(quotas, "quotas").map((e, i) => {
      const o = options(e, `quotas[${i}]`);
      return [
        text(o.kind, `quotas[${i}].kind`),
        o.requirePercent === undefined ? 0 : dbl(o.requirePercent, `quotas[${i}].requirePercent`),
        o.capPercent === undefined ? 100 : dbl(o.capPercent, `quotas[${i}].capPercent`),
      ];
    });
    return this.make(Slicer, (out, a) => {
      const ptr = a.alloc(24 * Math.max(q.length, 1));
      const kinds = q.map(([kind]) => a.str(kind));
      const dv = new DataView(this.x.memory.buffer);
      q.forEach(([, require, cap], i) => {
        dv.setUint32(ptr + 24 * i, kinds[i], true);
        dv.setFloat64(ptr + 24 * i + 8, require, true);
        dv.setFloat64(ptr + 24 * i + 16, cap, true);
      });
      return this.x.cupel_slicer_new_quota(ip, ptr, q.length, out);
    });
  }
  /** Count entries [{ kind, requireCount = 0, capCount = 0 }], checked; write(arena) places them. */
  countEntries(entries) {
    const e = array(entries, "entries").map((v, i) => {
      const o = options(v, `entries[${i}]`);
      return [
        text(o.kind, `entries[${i}].kind`),
        o.requireCount === undefined ? 0 : int(o.requireCount, `entries[${i}].requireCount`, U32),
        o.capCount === undefined ? 0 : int(o.capCount, `entries[${i}].capCount`, U32),
      ];
    });
    const write = (a) => {
      const ptr = a.alloc(12 * Math.max(e.length, 1));
      const kinds = e.map(([kind]) => a.str(kind));
      const dv = new DataView(this.x.memory.buffer);
      e.forEach(([, require, cap], i) => {
        dv.setUint32(ptr + 12 * i, kinds[i], true);
        dv.setUint32(ptr + 12 * i + 4, require, true);
        dv.setUint32(ptr + 12 * i + 8, cap, true);
      });
      return ptr;
    };
    return [e.length, write];
  }
  /** CountQuotaSlice over `inner`; `entries`: [{ kind, requireCount, capCount }]. */
  countQuota(inner, entries, scarcity = Scarcity.Degrade) {
    const ip = this.ptrOf(inner, Slicer, "inner");
    const [n, write] = this.countEntries(entries);
    const s = int(scarcity, "scarcity", I32);
    return this.make(Slicer, (out, a) => this.x.cupel_slicer_new_count_quota(ip, write(a), n, s, out));
  }
  /** CountConstrainedKnapsackSlice: a knapsack of `bucketSize` under count `entries`. */
  countConstrainedKnapsack(bucketSize, entries, scarcity = Scarcity.Degrade) {
    const b = int(bucketSize, "bucketSize", I64);
    const [n, write] = this.countEntries(entries);
    const s = int(scarcity, "scarcity", I32);
    return this.make(Slicer, (out, a) => this.x.cupel_slicer_new_count_constrained_knapsack(b, write(a), n, s, out));
  }
  /** ChronologicalPlacer: oldest first, items without a timestamp last. */
  chronological() {
    return this.make(Placer, (out) => this.x.cupel_placer_new_chronological(out));
  }
  /** UShapedPlacer: the best items at both ends. */
  uShaped() {
    return this.make(Placer, (out) => this.x.cupel_placer_new_u_shaped(out));
  }
  /**
   * `{ scorer = null (the pushed scores), slicer, placer = null, deduplication = true, overflow = Overflow.Throw,
   * tokenizer = null (none: see Pipeline.setTokenizer) }`.
   */
  pipeline(opts) {
    const {
      scorer = null,
      slicer,
      placer = null,
      deduplication = true,
      overflow = Overflow.Throw,
      tokenizer = null,
    } = options(opts, "options");
    const sp = scorer === null ? 0 : this.ptrOf(scorer, Scorer, "scorer");
    const lp = this.ptrOf(slicer, Slicer, "slicer");
    const pp = placer === null ? 0 : this.ptrOf(placer, Placer, "placer");
    const dedup = bool(deduplication, "deduplication");
    const ov = int(overflow, "overflow", I32);
    const tp = tokenizer === null ? 0 : this.ptrOf(tokenizer, Tokenizer, "tokenizer");
    const p = this.make(Pipeline, (out) => this.x.cupel_pipeline_new(sp, lp, pp, out));
    try {
      this.call(() => this.x.cupel_pipeline_set_deduplication(p.self(), dedup ? 1 : 0));
      this.call(() => this.x.cupel_pipeline_set_overflow(p.self(), ov));
      if (tp) this.call(() => this.x.cupel_pipeline_set_tokenizer(p.self(), tp));
      p[TOKENIZER_GIVEN] = tp !== 0;
      return p;
    } catch (e) {
      p.dispose();
      throw e;
    }
  }
  /**
   * A session over a copy of `pipeline` (it may be disposed right after):
   * cache-stable selection across the turns of a conversation (see
   * `Session`). Options: `{ slack = 0.2 }`, in [0, 1).
   */
  session(pipeline, opts) {
    const pp = this.ptrOf(pipeline, Pipeline, "pipeline");
    const { slack } = options(opts, "options");
    const f = slack === undefined ? undefined : slackOf(slack, "options.slack");
    const s = this.make(Session, (out) => this.x.cupel_session_new(pp, out));
    // The session copied the pipeline's trace: it keeps the callback alive.
    s[TRACE] = pipeline[TRACE];
    if (f !== undefined) this.call(() => this.x.cupel_session_set_slack(s.self(), f));
    return s;
  }
  /** The Sort and Slice stages alone: `{ selected, report }`. Options: `{ pinnedTokens = 0, report = false }`. */
  slice(slicer, items, budget, opts) {
    const sp = this.ptrOf(slicer, Slicer, "slicer");
    const ip = this.ptrOf(items, Items, "items");
    const bp = this.ptrOf(budget, Budget, "budget");
    const { pinnedTokens = 0, report = false } = options(opts, "options");
    const pinned = int(pinnedTokens, "pinnedTokens", I64);
    bool(report, "options.report");
    return this.withReport(report, items, "selected", (r) =>
      this.indices(items.length, (a, out, cap, len) => this.x.cupel_slice(sp, ip, bp, pinned, out, cap, len, r)),
    );
  }
  /** The items selected at `budget` but not with `slackTokens` fewer (after `pinnedTokens`). */
  marginalItems(slicer, items, budget, pinnedTokens, slackTokens) {
    const sp = this.ptrOf(slicer, Slicer, "slicer");
    const ip = this.ptrOf(items, Items, "items");
    const bp = this.ptrOf(budget, Budget, "budget");
    const pinned = int(pinnedTokens, "pinnedTokens", I64);
    const slack = int(slackTokens, "slackTokens", I64);
    return this.indices(items.length, (a, out, cap, len) =>
      this.x.cupel_marginal_items(sp, ip, bp, pinned, slack, out, cap, len),
    );
  }
  /**
   * The smallest budget (max = target) that selects item `targetIndex`
   * after `pinnedTokens`, or null if none up to `searchCeiling`.
   */
  findMinBudget(slicer, items, pinnedTokens, targetIndex, searchCeiling) {
    const sp = this.ptrOf(slicer, Slicer, "slicer");
    const ip = this.ptrOf(items, Items, "items");
    const pinned = int(pinnedTokens, "pinnedTokens", I64);
    const target = int(targetIndex, "targetIndex", USIZE, (shown) => `targetIndex ${shown} is out of range: there are ${items.length} items`);
    const ceiling = int(searchCeiling, "searchCeiling", I64);
    const b = this.call((a) => {
      const out = a.out(8);
      return [this.x.cupel_find_min_budget(sp, ip, pinned, target, ceiling, out), () => this.i64At(out)];
    });
    return b < 0n ? null : int64Out(b);
  }
  /**
   * A tokenizer for a built-in encoding: "o200k_base" (GPT-4o, GPT-4.1,
   * o-series, GPT-5) or "cl100k_base" (GPT-4, GPT-3.5, text-embedding-3).
   * Both vocabularies are inside cupel.wasm: nothing is fetched. The first
   * tokenizer of an encoding indexes it (a few milliseconds); later ones
   * share that. An unknown name is a RangeError listing the known ones.
   */
  tokenizer(name) {
    const n = text(name, "name");
    const t = this.make(Tokenizer, (out, a) => this.x.cupel_tokenizer_new(a.str(n), out));
    t.name = n;
    return t;
  }
  /**
   * A tokenizer from any byte-level BPE vocabulary in tiktoken's file format
   * (lines of `base64(token) rank`, as Llama 3 and the OpenAI encodings ship
   * them): `ranks` the file's bytes (an ArrayBuffer or a typed array such as
   * a Uint8Array or Buffer), `pattern` the pre-tokenization regular
   * expression as tiktoken writes it (null or omitted: o200k_base's). A
   * malformed line is a RangeError naming the line; a pattern that does not
   * compile, one naming the problem and its place.
   */
  tokenizerFromTiktoken(ranks, pattern = null) {
    let bytes;
    if (ranks instanceof ArrayBuffer) bytes = new Uint8Array(ranks);
    else if (ArrayBuffer.isView(ranks)) bytes = new Uint8Array(ranks.buffer, ranks.byteOffset, ranks.byteLength);
    else throw typeError(`ranks is ${describe(ranks)}; expected the file's bytes (an ArrayBuffer or a typed array such as Uint8Array)`, ranks);
    const pat = pattern === null ? null : text(pattern, "pattern");
    return this.make(Tokenizer, (out, a) => this.x.cupel_tokenizer_from_tiktoken(a.bytes(bytes), bytes.length, a.str(pat), out));
  }
  // ---- policies as data, presets, sensitivity, the one-call path --------
  /**
   * A policy document (JSON text, UTF-8; an object is JSON.stringify'd) as
   * a text's bytes; `name` names the argument.
   */
  jsonBytes(v, name) {
    if (typeof v === "string") return textBytes(v, name);
    if (v === null || typeof v !== "object" || v instanceof Handle) {
      throw typeError(`${name} is ${describe(v)}; expected a JSON text (a string) or an object to write as JSON`, v);
    }
    let json;
    try {
      json = JSON.stringify(v);
    } catch (e) {
      throw typeError(`${name} cannot be written as JSON: ${e.message}`, v);
    }
    return textBytes(json, name);
  }
  /**
   * A pipeline from a policy document: JSON text, or an object (written
   * with JSON.stringify): the .NET Cupel policy format and libcupel's
   * extensions (docs/policies.md). A document the library refuses throws a
   * RangeError whose message gives the JSON path and the rule (`json
   * $.scorers[0].weight: must be positive and finite (got -1)`; malformed
   * JSON with its line and column).
   */
  pipelineFromJson(json) {
    const bytes = this.jsonBytes(json, "json");
    return this.make(Pipeline, (out, a) => this.x.cupel_pipeline_from_json(a.bytes(bytes), bytes.length, out));
  }
  /**
   * A budget from a budget document (JSON text or an object): `maxTokens`
   * and `targetTokens` (required), `outputReserve`, `reservedSlots`
   * ({ kind: tokens }), `estimationSafetyMarginPercent`, validated as
   * `cupel.budget` validates (a RangeError with the JSON path).
   */
  budgetFromJson(json) {
    const bytes = this.jsonBytes(json, "json");
    return this.make(Budget, (out, a) => this.x.cupel_budget_from_json(a.bytes(bytes), bytes.length, out));
  }
  /**
   * A preset pipeline by name, matched case-insensitively: the .NET
   * presets "Chat", "CodeReview", "Rag", "DocumentQa", "ToolUse",
   * "LongRunning", "Debugging" and libcupel's "AgentLoop"
   * (`cupel.presetNames`). An unknown name is a RangeError listing them.
   */
  preset(name) {
    const n = text(name, "name");
    return this.make(Pipeline, (out, a) => this.x.cupel_pipeline_preset(a.str(n), out));
  }
  /** The names `preset` knows, in the library's order. */
  get presetNames() {
    const names = [];
    for (let i = 0; i < this.x.cupel_preset_count(); i++) names.push(this.cString(this.x.cupel_preset_name(i)));
    return names;
  }
  /**
   * Policy sensitivity: runs every pipeline of `variants` on the same
   * `items` and `budget`. `variants` is an array of [label, pipeline]
   * pairs, a Map or an object of pipelines by label (at least two).
   * Returns `{ variants: [{ label, report }], diffs: [{ index, content,
   * statuses: [{ label, status }] }] }`: each run's SelectionReport (parsed
   * JSON), and every item included by one pipeline and excluded by
   * another, by index in push order, with its content (null when none) and
   * its status ("Included" or "Excluded") under each label. Items are
   * matched by index, never by content: two items with the same text are
   * two items. A variant's run error names its index and label.
   */
  policySensitivity(variants, items, budget) {
    let pairs;
    let at;
    if (variants instanceof Map) {
      pairs = [...variants];
      at = (k, part) => `variants entry ${k}${part === 0 ? " key" : ""}`;
    } else if (Array.isArray(variants)) {
      pairs = variants.map((v, k) => {
        if (!Array.isArray(v) || v.length !== 2) throw typeError(`variants[${k}] is ${describe(v)}; expected a [label, pipeline] pair`, v);
        return v;
      });
      at = (k, part) => `variants[${k}][${part}]`;
    } else if (variants !== null && typeof variants === "object" && !(variants instanceof Handle)) {
      pairs = Object.entries(variants);
      at = (k, part) => (part === 0 ? `variants key ${JSON.stringify(pairs[k][0])}` : `variants[${JSON.stringify(pairs[k][0])}]`);
    } else {
      throw typeError(
        `variants is ${describe(variants)}; expected an array of [label, pipeline] pairs, a Map or an object of pipelines by label`,
        variants,
      );
    }
    const checked = pairs.map(([label, pipeline], k) => [text(label, at(k, 0)), this.ptrOf(pipeline, Pipeline, at(k, 1)), pipeline]);
    if (checked.length < 2) {
      throw rangeError(`variants holds ${checked.length} pipeline${checked.length === 1 ? "" : "s"}; policy sensitivity compares at least two`);
    }
    const ip = this.ptrOf(items, Items, "items");
    const bp = this.ptrOf(budget, Budget, "budget");
    const pipelines = [...new Set(checked.map(([, , p]) => p))];
    // A first buffer big enough for most: a second call would run every pipeline again.
    const guess = 65536 + checked.length * items.length * 1024;
    const json = this.traced(pipelines, [items, budget], () =>
      this.text(
        (a, buf, cap, len) =>
          this.x.cupel_policy_sensitivity(
            a.u32s(checked.map(([, p]) => p)),
            a.u32s(checked.map(([label]) => a.str(label))),
            checked.length,
            ip,
            bp,
            buf,
            cap,
            len,
          ),
        guess,
        runTerms,
        true,
      ),
    );
    const result = JSON.parse(json);
    for (const v of result.variants) if (typeof v.report === "string") v.report = JSON.parse(v.report);
    for (const d of result.diffs) d.content ??= null;
    return result;
  }
  /**
   * The one-call path (docs/policies.md): the messages to send, in prompt
   * order, out of `messages` fitted to a budget under a policy.
   *
   * `messages`: plain objects with `text` (required, a non-empty string)
   * and optionally `kind` ("Message"), `pinned` (false), `group` (a
   * string: messages with the same group are kept or dropped together),
   * `toolCallId` (a tool result's, or a single call's, id), `toolCallIds`
   * (a message that makes several calls: all their ids), `key` (a 64-bit
   * integer, a number or BigInt; 0: none), `timestamp` (Unix ms or a
   * Date), `priority` (integer), `relevance` (the reflexive scorer's hint)
   * and `score` (the given scorer's; 1). Other fields are ignored. A group
   * or id that is "", null or undefined is none. Messages that share a
   * group, a tool call id or one of their toolCallIds are one group,
   * transitively (group names and call ids are separate); every message
   * with one is in a group; groups are numbered 1, 2, ... by first
   * message. When no message has a timestamp, message i gets timestamp i.
   *
   * Options: `maxTokens` (the budget's max and target), or `budget` (a
   * Budget, or `cupel.budget`'s options); `policy`: a preset name, a
   * policy document's text (first non-blank character `{`), a policy
   * object, or a Pipeline (default, and null: "Chat"); `tokenizer`: an
   * encoding name or a Tokenizer (default: the policy's tokenizer, else
   * "o200k_base"; a Pipeline's tokenizer loaded from a vocabulary file has
   * no name: pass one). Returns the kept messages themselves, in the order the
   * placer gives. Errors name the message: `messages[3].text`.
   */
  select(messages, opts) {
    return this.selecting(messages, opts, false).messages;
  }
  /**
   * `select`, and why: `{ messages, report }`, the kept messages and the
   * run's report (as `pipeline.run`'s with `{ report: true }`, its indices
   * those of `messages`).
   */
  selectWithReport(messages, opts) {
    return this.selecting(messages, opts, true);
  }
  /** select and selectWithReport. */
  selecting(messages, opts, withReport) {
    array(messages, "messages");
    const o = options(opts, "options");
    const checked = Array.from(messages, (m, i) => checkMessage(m, i)); // a hole is undefined
    const owned = [];
    try {
      // The budget.
      let budget;
      if (o.maxTokens !== undefined && o.budget !== undefined) {
        throw typeError("options.maxTokens and options.budget are both given; pass one", o.budget);
      }
      if (o.budget !== undefined && o.budget !== null) {
        if (o.budget instanceof Budget) {
          this.ptrOf(o.budget, Budget, "budget");
          budget = o.budget;
        } else if (typeof o.budget === "object") {
          owned.push((budget = this.budget(o.budget)));
        } else {
          throw typeError(`budget is ${describe(o.budget)}; expected a Budget or cupel.budget's options`, o.budget);
        }
      } else {
        if (o.maxTokens === undefined) throw typeError("maxTokens is undefined; pass options.maxTokens (or options.budget)", null);
        const max = int(o.maxTokens, "maxTokens", I64);
        owned.push((budget = this.make(Budget, (out) => this.x.cupel_budget_new(max, max, out))));
      }
      // The policy.
      const policy = o.policy ?? "Chat";
      let pipeline;
      if (policy instanceof Pipeline) {
        this.ptrOf(policy, Pipeline, "policy");
        pipeline = policy;
      } else if (typeof policy === "string" || (policy !== null && typeof policy === "object")) {
        const document = typeof policy !== "string" || /^\s*\{/.test(policy);
        try {
          pipeline = document ? this.pipelineFromJson(policy) : this.preset(policy);
        } catch (e) {
          throw renamed(e, (m) => m.replace(document ? /^json\b/ : /^name\b/, "policy"));
        }
        owned.push(pipeline);
      } else {
        throw typeError(`policy is ${describe(policy)}; expected a preset name, a policy document (text or object) or a Pipeline`, policy);
      }
      // The tokenizer: the option's, else the policy's (its built-in
      // encoding's name), else o200k_base.
      let policyTokenizer = null;
      if (o.tokenizer == null) {
        policyTokenizer = this.staticString(this.x.cupel_pipeline_tokenizer_name(pipeline.self()));
        if (policyTokenizer === null && pipeline[TOKENIZER_GIVEN]) {
          throw rangeError(
            "policy: the pipeline's tokenizer was loaded from a vocabulary file and has no name select could count with; pass options.tokenizer",
          );
        }
      }
      let tokenizer;
      const t = o.tokenizer ?? policyTokenizer ?? "o200k_base";
      if (t instanceof Tokenizer) {
        this.ptrOf(t, Tokenizer, "tokenizer");
        tokenizer = t;
      } else {
        owned.push((tokenizer = this.tokenizer(text(t, "tokenizer"))));
      }
      // The items, with the bulk calls.
      const items = this.make(Items, (out) => this.x.cupel_items_new(out));
      owned.push(items);
      const n = checked.length;
      if (n > 0) {
        const ih = items.self();
        const tp = tokenizer.self();
        this.call(
          (a) => {
            const [ptrs, lens] = a.byteStrings(checked.map((c) => c.bytes));
            const kindPtrs = new Map();
            const kinds = checked.map((c) => {
              if (c.kind === null) return 0;
              let p = kindPtrs.get(c.kind);
              if (p === undefined) kindPtrs.set(c.kind, (p = a.str(c.kind)));
              return p;
            });
            return this.x.cupel_items_push_texts(ih, tp, n, ptrs, lens, a.f64s(checked.map((c) => c.score)), a.u32s(kinds));
          },
          (m) =>
            m.replace(/\b(texts|scores|kinds)\[(\d+)\]/g, (_, f, k) => `messages[${k}].${{ texts: "text", scores: "score", kinds: "kind" }[f]}`),
        );
        const x = this.x;
        const groups = messageGroups(checked);
        const stamped = checked.filter((c) => c.timestamp !== undefined).length;
        this.call((a) => {
          const st = [
            x.cupel_items_set_groups(ih, 0, n, a.u64s(groups)),
            x.cupel_items_set_keys(ih, 0, n, a.u64s(checked.map((c) => c.key))),
          ];
          if (checked.some((c) => c.pinned)) {
            const pinned = a.alloc(n);
            this.u8().set(checked.map((c) => (c.pinned ? 1 : 0)), pinned);
            st.push(x.cupel_items_set_pinned_many(ih, 0, n, pinned));
          }
          if (stamped === 0) st.push(x.cupel_items_set_timestamps(ih, 0, n, a.i64s(checked.map((c, i) => BigInt(i)))));
          else if (stamped === n) st.push(x.cupel_items_set_timestamps(ih, 0, n, a.i64s(checked.map((c) => c.timestamp))));
          // A field every message has in one bulk call; one some have, message by message.
          const allPriorities = checked.every((c) => c.priority !== undefined);
          const allHints = checked.every((c) => c.relevance !== undefined);
          if (allPriorities) st.push(x.cupel_items_set_priorities(ih, 0, n, a.i64s(checked.map((c) => c.priority))));
          if (allHints) st.push(x.cupel_items_set_relevance_hints(ih, 0, n, a.f64s(checked.map((c) => c.relevance))));
          checked.forEach((c, i) => {
            if (stamped !== 0 && stamped !== n && c.timestamp !== undefined) st.push(x.cupel_items_set_timestamp(ih, i, c.timestamp));
            if (!allPriorities && c.priority !== undefined) st.push(x.cupel_items_set_priority(ih, i, c.priority));
            if (!allHints && c.relevance !== undefined) st.push(x.cupel_items_set_relevance_hint(ih, i, c.relevance));
          });
          return st.find((v) => v !== 0) ?? 0;
        });
      }
      const { placed, report } = pipeline.run(items, budget, { report: withReport });
      return { messages: placed.map((i) => messages[i]), report };
    } finally {
      for (const h of owned) h.dispose();
    }
  }
  /** A StreamSlice taking items up to `targetTokens`, `batchSize` at a time (0: the default, 32). */
  stream(targetTokens, batchSize = 0) {
    const t = int(targetTokens, "targetTokens", I64);
    const b = int(batchSize, "batchSize", USIZE);
    return this.make(Stream, (out) => this.x.cupel_stream_new(t, b, out));
  }
}
