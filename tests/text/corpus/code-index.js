// libcupel for JavaScript: the C ABI of the WebAssembly build (cupel.wasm,
// no imports, no wasm-bindgen), wrapped as classes. Works in Node (load()
// reads the .wasm beside this file) and in a browser or editor webview
// (load(bytes) with the module's bytes, a Response or a WebAssembly.Module).
//
// Every handle owns memory inside the module: call dispose() (or use
// `using` where the runtime has explicit resource management); a
// FinalizationRegistry frees forgotten handles as a backstop.
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
  BudgetExceeded: 10,
  ScoredTooLow: 11,
  Deduplicated: 12,
  QuotaCapExceeded: 13,
  QuotaRequireDisplaced: 14,
  NegativeTokens: 15,
  PinnedOverride: 16,
  Filtered: 17,
  CountCapExceeded: 18,
});

/** What the pipeline does when the selection exceeds the target. */
export const Overflow = Object.freeze({ Throw: 0, Truncate: 1, Proceed: 2 });
/** What a count slicer does when a kind has too few items. */
export const Scarcity = Object.freeze({ Degrade: 0, Error: 1 });
/** The DecayScorer's curves. */
export const DecayCurve = Object.freeze({ Exponential: 0, Step: 1, Window: 2 });

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
 * A string argument that has a UTF-8 form the library reads whole: no lone
 * surrogate (TextEncoder would replace it silently) and no NUL (the
 * library's strings end there).
 */
function text(v, name) {
  if (typeof v !== "string") throw typeError(`${name} is ${describe(v)}; expected a string`, v);
  const bad = v.search(LONE_SURROGATE);
  if (bad >= 0) {
    const unit = v.charCodeAt(bad).toString(16).toUpperCase();
    throw rangeError(`${name} holds a lone surrogate (U+${unit}) at index ${bad}: it has no UTF-8 form`);
  }
  const nul = v.indexOf("\0");
  if (nul >= 0) throw rangeError(`${name} holds a NUL character at index ${nul}: the library's strings end at NUL`);
  return v;
}

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

// ---- the module ---------------------------------------------------------------

const disposeSymbol = Symbol.dispose ?? Symbol.for("Symbol.dispose");
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const SIZE_MAX = 0xffffffff; // size_t is 32 bits in wasm32
const DECISION_SIZE = 64; // sizeof(cupel_decision) in wasm32

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
};

/** What every handle shares: its native pointer, and dispose(). */
class Handle {
  #ptr;
  #free;
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
    return h.#ptr;
  }
  /** This handle's pointer, for its own methods; throws once disposed. */
  self() {
    if (!(#ptr in this)) throw typeError(`this is ${describe(this)}; call the method on a libcupel handle`, this);
    if (!this.#ptr) {
      const kind = Object.keys(RECEIVER).find((k) => this instanceof HANDLES[k]);
      throw typeError(`this ${RECEIVER[kind]} was disposed`, null);
    }
    return this.#ptr;
  }
  /** Whether dispose() has run. */
  get disposed() {
    return this.#ptr === 0;
  }
  /** Frees the native object. Idempotent. */
  dispose() {
    if (this.#ptr) {
      registry.unregister(this);
      this.#free(this.#ptr);
      this.#ptr = 0;
    }
  }
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
  return c;
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
    // The attributes cannot fail now: every value was checked above, and
    // the indices exist.
    const x = lib.x;
    for (let k = 0; k < n; k++) {
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
        return st.find((s) => s !== 0) ?? 0;
      });
    }
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
   * Item `index` read back from the library, as an object with the fields
   * of `Item`: tokens, score, kind, content (null when none), timestamp
   * (UTC ms, null when none), priority (null when none), pinned,
   * relevanceHint (null when none), source, group (0 when none), tags and
   * metadata. Integers past 2^53 come back as BigInt.
   */
  get(index) {
    const h = this.self();
    const i = this.#index(index);
    const lib = this.lib;
    const x = lib.x;
    return lib.call((a) => {
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
  }

  /** The number of items. */
  get length() {
    return this.lib.x.cupel_items_len(this.self());
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
    const h = this.self();
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
      throw rangeError(`indices has ${i