// libcupel for JavaScript: the C ABI of the WebAssembly build (cupel.wasm,
// no imports, no wasm-bindgen), wrapped as classes. Works in Node (load()
// reads the .wasm beside this file) and in a browser or editor webview
// (load(bytes) with the module's bytes, a Response or a WebAssembly.Module).
//
// Every handle owns memory inside the module: call dispose() (or use
// `using` where the runtime has explicit resource management); a
// FinalizationRegistry frees forgotten handles as a backstop. Failures
// throw CupelError with the library's status and message.

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

/** Why an item was included or excluded (`cupel_reason`). */
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
const REASON_NAMES = Object.fromEntries(Object.entries(Reason).map(([k, v]) => [v, k]));

/** What the pipeline does when the selection exceeds the target. */
export const Overflow = Object.freeze({ Throw: 0, Truncate: 1, Proceed: 2 });
/** What a count slicer does when a kind has too few items. */
export const Scarcity = Object.freeze({ Degrade: 0, Error: 1 });
/** The DecayScorer's curves. */
export const DecayCurve = Object.freeze({ Exponential: 0, Step: 1, Window: 2 });

/** An error from the library: `status` (a number of `Status`), `statusName`, `detail`. */
export class CupelError extends Error {
  constructor(status, detail) {
    const name = STATUS_NAMES[status] ?? String(status);
    super(`${name}: ${detail}`);
    this.name = "CupelError";
    this.status = status;
    this.statusName = name;
    this.detail = detail;
  }
}

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
  } else {
    module = await WebAssembly.compile(source);
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
  /** A NUL-terminated UTF-8 copy of `s` (0 for null/undefined). */
  str(s, what) {
    if (s === null || s === undefined) return 0;
    if (typeof s !== "string") throw new CupelError(Status.INVALID_ARGUMENT, `${what} is ${typeof s}; expected a string`);
    const bytes = encoder.encode(s);
    const ptr = this.alloc(bytes.length + 1);
    const mem = this.lib.u8();
    mem.set(bytes, ptr);
    mem[ptr + bytes.length] = 0;
    return ptr;
  }
  i64s(values) {
    const ptr = this.alloc(8 * Math.max(values.length, 1));
    const view = new BigInt64Array(this.lib.x.memory.buffer, ptr, values.length);
    values.forEach((v, i) => (view[i] = toI64(v)));
    return ptr;
  }
  u64s(values) {
    const ptr = this.alloc(8 * Math.max(values.length, 1));
    const view = new BigUint64Array(this.lib.x.memory.buffer, ptr, values.length);
    values.forEach((v, i) => (view[i] = BigInt.asUintN(64, BigInt(v))));
    return ptr;
  }
  f64s(values) {
    const ptr = this.alloc(8 * Math.max(values.length, 1));
    new Float64Array(this.lib.x.memory.buffer, ptr, values.length).set(values.map(Number));
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

function toI64(v) {
  if (typeof v === "bigint") return BigInt.asIntN(64, v);
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new CupelError(Status.INVALID_ARGUMENT, `${v} is not an integer`);
  }
  return BigInt(v);
}

/** A JS number for an int64 result (exact below 2^53). */
const num = (b) => Number(b);

/** A group id as given back: a number when exact, else a BigInt. */
const groupId = (b) => (b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b);

class Handle {
  constructor(lib, ptr, free) {
    this.lib = lib;
    this.ptr = ptr;
    this.freeFn = free;
    registry.register(this, { free, ptr }, this);
  }
  /** The native pointer; throws once disposed. */
  get handle() {
    if (!this.ptr) throw new CupelError(Status.NULL_POINTER, `this ${this.constructor.name} was disposed`);
    return this.ptr;
  }
  /** Frees the native object. Idempotent. */
  dispose() {
    if (this.ptr) {
      registry.unregister(this);
      this.freeFn(this.ptr);
      this.ptr = 0;
    }
  }
  [disposeSymbol]() {
    this.dispose();
  }
}

/** Scored candidates. Build with `cupel.items([...])`. */
export class Items extends Handle {
  /** Adds items (plain objects: see index.d.ts `Item`), all or nothing for the push itself. */
  push(list) {
    const lib = this.lib;
    const n = list.length;
    if (n === 0) return this;
    const first = this.length;
    lib.call((a) => {
      const kinds = list.map((it, i) => a.str(it.kind, `items[${i}].kind`));
      return lib.x.cupel_items_push_many(
        this.handle,
        n,
        a.i64s(list.map((it) => it.tokens)),
        a.f64s(list.map((it) => it.score ?? 0)),
        a.u32s(kinds),
      );
    });
    const x = lib.x;
    const h = this.handle;
    for (let k = 0; k < n; k++) {
      const it = list[k];
      const i = first + k;
      lib.call((a) => {
        const st = [];
        if (it.content !== undefined) st.push(x.cupel_items_set_content(h, i, a.str(it.content, "content")));
        if (it.timestamp !== undefined) {
          const ms = it.timestamp instanceof Date ? it.timestamp.getTime() : it.timestamp;
          st.push(x.cupel_items_set_timestamp(h, i, toI64(ms)));
        }
        if (it.priority !== undefined) st.push(x.cupel_items_set_priority(h, i, toI64(it.priority)));
        if (it.pinned) st.push(x.cupel_items_set_pinned(h, i, 1));
        if (it.relevanceHint !== undefined) st.push(x.cupel_items_set_relevance_hint(h, i, Number(it.relevanceHint)));
        if (it.source !== undefined) st.push(x.cupel_items_set_source(h, i, a.str(it.source, "source")));
        for (const tag of it.tags ?? []) st.push(x.cupel_items_add_tag(h, i, a.str(tag, "tag")));
        for (const [key, value] of Object.entries(it.metadata ?? {})) {
          st.push(x.cupel_items_set_metadata(h, i, a.str(key, "metadata key"), a.str(String(value), "metadata value")));
        }
        if (it.group !== undefined && it.group !== 0) {
          st.push(x.cupel_items_set_group(h, i, BigInt.asUintN(64, BigInt(it.group))));
        }
        return st.find((s) => s !== 0) ?? 0;
      });
    }
    return this;
  }
  /** Puts item `index` in keep-together group `group` (0: none). */
  setGroup(index, group) {
    this.lib.call(() => this.lib.x.cupel_items_set_group(this.handle, index, BigInt.asUintN(64, BigInt(group))));
    return this;
  }
  /** Sets the groups of items `first .. first + groups.length` in one call. */
  setGroups(first, groups) {
    this.lib.call((a) => this.lib.x.cupel_items_set_groups(this.handle, first, groups.length, a.u64s(groups)));
    return this;
  }
  get length() {
    return this.lib.x.cupel_items_len(this.handle);
  }
  clear() {
    this.lib.x.cupel_items_clear(this.handle);
  }
}

/** A token budget. Build with `cupel.budget({...})`. */
export class Budget extends Handle {
  /** The effective [max, target] after `pinnedTokens`, reserves and margin. */
  effective(pinnedTokens = 0) {
    return this.lib.call((a) => {
      const max = a.out(8);
      const target = a.out(8);
      const st = this.lib.x.cupel_budget_effective(this.handle, toI64(pinnedTokens), max, target);
      return [st, () => [num(this.lib.i64At(max)), num(this.lib.i64At(target))]];
    });
  }
}

/** A slicer (Greedy, Knapsack, Quota, CountQuota, CountConstrainedKnapsack). */
export class Slicer extends Handle {
  get memoryLimit() {
    return this.lib.x.cupel_slicer_memory_limit(this.handle);
  }
  set memoryLimit(bytes) {
    this.lib.call(() => this.lib.x.cupel_slicer_set_memory_limit(this.handle, bytes));
  }
}

/** A scorer. Build with `cupel.scorers.*`. */
export class Scorer extends Handle {
  /** The score of every item of `items`, by index. */
  score(items) {
    const n = items.length;
    return this.lib.call((a) => {
      const out = a.alloc(8 * Math.max(n, 1));
      const len = a.out(4);
      const st = this.lib.x.cupel_scorer_score(this.handle, items.handle, out, n, len);
      return [st, () => Array.from(new Float64Array(this.lib.x.memory.buffer, out, this.lib.u32At(len)))];
    });
  }
}

/** A placer (chronological or U-shaped). */
export class Placer extends Handle {}

/** The whole pipeline. Build with `cupel.pipeline({...})`. */
export class Pipeline extends Handle {
  /**
   * Runs all six stages. Returns `{ placed, report }`: the item indices in
   * placed order, and (with `{ report: true }`) every decision.
   */
  run(items, budget, { report = false } = {}) {
    return this.lib.withReport(report, (r) =>
      this.lib.indices(items.length, (out, cap, len) =>
        this.lib.x.cupel_pipeline_run(this.handle, items.handle, budget.handle, out, cap, len, r),
      ),
    ).finish(items, "placed");
  }
}

/** A StreamSlice: items arriving one at a time. */
export class Stream extends Handle {
  constructor(lib, ptr, free) {
    super(lib, ptr, free);
    this.pushed = 0;
  }
  /** Offers the next item (in keep-together group `group`, 0: none); true once the budget is spent. */
  push(tokens, score, group = 0) {
    const full = this.lib.call((a) => {
      const out = a.out(4);
      const st = this.lib.x.cupel_stream_push_grouped(this.handle, toI64(tokens), Number(score), BigInt.asUintN(64, BigInt(group)), out);
      return [st, () => this.lib.u8()[out] !== 0];
    });
    this.pushed++;
    return full;
  }
  /** Decides the last batch; the taken indices in the order taken. */
  finish() {
    return this.lib.indices(this.pushed, (out, cap, len) => this.lib.x.cupel_stream_finish(this.handle, out, cap, len))
      .value;
  }
}

/** The library: factories for every handle, and the calls between them. */
export class Cupel {
  constructor(exports) {
    this.x = exports;
    const lib = this;
    /** Scorer factories (spec chapters in ../../shared/spec/cupel/scorers). */
    this.scorers = {
      given: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_given(out)),
      recency: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_recency(out)),
      priority: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_priority(out)),
      frequency: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_frequency(out)),
      reflexive: () => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_reflexive(out)),
      /** `weights`: { kind: weight }, or omitted for the spec's defaults. */
      kind: (weights) =>
        lib.make(Scorer, (out, a) => {
          if (weights === undefined) return lib.x.cupel_scorer_new_kind(0, 0, out);
          const e = Object.entries(weights);
          return lib.x.cupel_scorer_new_kind(lib.pairs(a, e), e.length, out);
        }),
      /** `weights`: { tag: weight }. */
      tag: (weights) =>
        lib.make(Scorer, (out, a) => {
          const e = Object.entries(weights ?? {});
          return lib.x.cupel_scorer_new_tag(lib.pairs(a, e), e.length, out);
        }),
      /** `parts`: [[scorer, weight], ...]; the children may be disposed right after. */
      composite: (parts) =>
        lib.make(Scorer, (out, a) =>
          lib.x.cupel_scorer_new_composite(
            a.u32s(parts.map(([s]) => s.handle)),
            a.f64s(parts.map(([, w]) => w)),
            parts.length,
            out,
          )),
      scaled: (inner) => lib.make(Scorer, (out) => lib.x.cupel_scorer_new_scaled(inner.handle, out)),
      metadataTrust: (defaultScore = 0.5) =>
        lib.make(Scorer, (out) => lib.x.cupel_scorer_new_metadata_trust(defaultScore, out)),
      metadataKey: (key, value, boost) =>
        lib.make(Scorer, (out, a) =>
          lib.x.cupel_scorer_new_metadata_key(a.str(key, "key"), a.str(value, "value"), boost, out)),
      /**
       * `{ curve: DecayCurve.*, durationSecs, windows: [[maxAgeSecs, score]], referenceTime (ms or Date),
       * nullTimestampScore = 0.5 }`.
       */
      decay: ({ curve, durationSecs = 0, windows = [], referenceTime, nullTimestampScore = 0.5 }) =>
        lib.make(Scorer, (out, a) => {
          const ref = referenceTime instanceof Date ? referenceTime.getTime() : referenceTime;
          return lib.x.cupel_scorer_new_decay(
            curve,
            durationSecs,
            windows.length ? a.f64s(windows.flat()) : 0,
            windows.length,
            toI64(ref),
            nullTimestampScore,
            out,
          );
        }),
    };
  }

  // ---- plumbing ----------------------------------------------------------
  u8() {
    return new Uint8Array(this.x.memory.buffer);
  }
  u32At(ptr) {
    return new DataView(this.x.memory.buffer).getUint32(ptr, true);
  }
  i64At(ptr) {
    return new DataView(this.x.memory.buffer).getBigInt64(ptr, true);
  }
  cString(ptr) {
    if (!ptr) return null;
    const mem = this.u8();
    let end = ptr;
    while (mem[end] !== 0) end++;
    return decoder.decode(mem.subarray(ptr, end));
  }
  lastError() {
    return this.cString(this.x.cupel_last_error());
  }
  /**
   * Runs `f(arena)` and frees the arena. `f` returns a status, or
   * [status, read] where read() extracts the result before the arena goes.
   */
  call(f) {
    const a = new Arena(this);
    try {
      const r = f(a);
      const [st, read] = Array.isArray(r) ? r : [r, undefined];
      if (st !== 0) throw new CupelError(st, this.lastError());
      return read ? read() : undefined;
    } finally {
      a.free();
    }
  }
  make(Class, create) {
    const ptr = this.call((a) => {
      const out = a.out(4);
      const st = create(out, a);
      return [st, () => this.u32At(out)];
    });
    const free = {
      Items: this.x.cupel_items_free,
      Budget: this.x.cupel_budget_free,
      Slicer: this.x.cupel_slicer_free,
      Scorer: this.x.cupel_scorer_free,
      Placer: this.x.cupel_placer_free,
      Pipeline: this.x.cupel_pipeline_free,
      Stream: this.x.cupel_stream_free,
    }[Class.name];
    return new Class(this, ptr, free);
  }
  /** An array of { const char *, double } pairs (kind or tag weights). */
  pairs(a, entries) {
    const ptr = a.alloc(16 * Math.max(entries.length, 1));
    const names = entries.map(([k]) => a.str(k, "name"));
    // After the allocations: a grown memory detaches older views.
    const dv = new DataView(this.x.memory.buffer);
    entries.forEach(([, w], i) => {
      dv.setUint32(ptr + 16 * i, names[i], true);
      dv.setFloat64(ptr + 16 * i + 8, Number(w), true);
    });
    return ptr;
  }
  /**
   * Calls `f(out, capacity, outLen)` with a buffer of `capacity` size_t's;
   * returns { value: the indices }.
   */
  indices(capacity, f) {
    const value = this.call((a) => {
      const out = a.alloc(4 * Math.max(capacity, 1));
      const len = a.out(4);
      const st = f(out, capacity, len);
      return [st, () => Array.from(new Uint32Array(this.x.memory.buffer, out, this.u32At(len)))];
    });
    return { value };
  }
  /** Runs `f(reportPtr or 0)`; the result's `finish(items, key)` gives { [key]: indices, report }. */
  withReport(wanted, f) {
    const lib = this;
    let report = 0;
    if (wanted) report = this.call((a) => {
      const out = a.out(4);
      return [this.x.cupel_report_new(out), () => this.u32At(out)];
    });
    let result;
    try {
      result = f(report);
    } catch (e) {
      if (report) this.x.cupel_report_free(report);
      throw e;
    }
    return {
      finish(items, key) {
        try {
          return { [key]: result.value, report: report ? lib.readReport(report, items) : undefined };
        } finally {
          if (report) lib.x.cupel_report_free(report);
        }
      },
    };
  }
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
          reason: REASON_NAMES[reasonCode] ?? String(reasonCode),
          reasonCode,
          itemTokens: num(dv.getBigInt64(d + 24, true)),
          availableTokens: num(dv.getBigInt64(d + 32, true)),
          relatedIndex: related === SIZE_MAX ? null : related,
          group: groupId(dv.getBigUint64(d + 48, true)),
          groupTokens: num(dv.getBigInt64(d + 56, true)),
        };
      }];
    });
  }
  readReport(r, items) {
    const x = this.x;
    const included = [];
    const excluded = [];
    for (let i = 0; i < x.cupel_report_included_count(r); i++) included.push(this.decision(r, true, i));
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
    const json = this.call((a) => {
      const len = a.out(4);
      const st = x.cupel_report_json(r, items.handle, 0, 0, len);
      if (st !== Status.BUFFER_TOO_SMALL) return st;
      const n = this.u32At(len);
      const buf = a.alloc(n + 1);
      return [x.cupel_report_json(r, items.handle, buf, n + 1, len), () => decoder.decode(this.u8().subarray(buf, buf + n))];
    });
    return {
      included,
      excluded,
      totalCandidates: num(x.cupel_report_total_candidates(r)),
      totalTokensConsidered: num(x.cupel_report_total_tokens_considered(r)),
      effectiveMaxTokens: num(x.cupel_report_effective_max_tokens(r)),
      effectiveTargetTokens: num(x.cupel_report_effective_target_tokens(r)),
      selectedTokens: num(x.cupel_report_selected_tokens(r)),
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
  /** A list of items (plain objects, see index.d.ts). */
  items(list = []) {
    const items = this.make(Items, (out) => this.x.cupel_items_new(out));
    try {
      return items.push(list);
    } catch (e) {
      items.dispose();
      throw e;
    }
  }
  /** `{ maxTokens, targetTokens = maxTokens, outputReserve, safetyMarginPercent, reserved: { kind: tokens } }`. */
  budget({ maxTokens, targetTokens = maxTokens, outputReserve = 0, safetyMarginPercent = 0, reserved = {} }) {
    const b = this.make(Budget, (out) => this.x.cupel_budget_new(toI64(maxTokens), toI64(targetTokens), out));
    try {
      if (outputReserve) this.call(() => this.x.cupel_budget_set_output_reserve(b.handle, toI64(outputReserve)));
      if (safetyMarginPercent) this.call(() => this.x.cupel_budget_set_safety_margin(b.handle, safetyMarginPercent));
      for (const [kind, tokens] of Object.entries(reserved)) {
        this.call((a) => this.x.cupel_budget_reserve(b.handle, a.str(kind, "kind"), toI64(tokens)));
      }
      return b;
    } catch (e) {
      b.dispose();
      throw e;
    }
  }
  greedy() {
    return this.make(Slicer, (out) => this.x.cupel_slicer_new_greedy(out));
  }
  knapsack(bucketSize = 100) {
    return this.make(Slicer, (out) => this.x.cupel_slicer_new_knapsack(toI64(bucketSize), out));
  }
  /** `quotas`: [{ kind, requirePercent, capPercent }]. */
  quota(inner, quotas) {
    return this.make(Slicer, (out, a) => {
      const ptr = a.alloc(24 * Math.max(quotas.length, 1));
      const kinds = quotas.map((q, i) => a.str(q.kind, `quotas[${i}].kind`));
      const dv = new DataView(this.x.memory.buffer);
      quotas.forEach((q, i) => {
        dv.setUint32(ptr + 24 * i, kinds[i], true);
        dv.setFloat64(ptr + 24 * i + 8, q.requirePercent ?? 0, true);
        dv.setFloat64(ptr + 24 * i + 16, q.capPercent ?? 100, true);
      });
      return this.x.cupel_slicer_new_quota(inner.handle, ptr, quotas.length, out);
    });
  }
  countEntries(a, entries) {
    const ptr = a.alloc(12 * Math.max(entries.length, 1));
    const kinds = entries.map((e, i) => a.str(e.kind, `entries[${i}].kind`));
    const dv = new DataView(this.x.memory.buffer);
    entries.forEach((e, i) => {
      dv.setUint32(ptr + 12 * i, kinds[i], true);
      dv.setUint32(ptr + 12 * i + 4, e.requireCount ?? 0, true);
      dv.setUint32(ptr + 12 * i + 8, e.capCount ?? 0, true);
    });
    return ptr;
  }
  /** `entries`: [{ kind, requireCount, capCount }]. */
  countQuota(inner, entries, scarcity = Scarcity.Degrade) {
    return this.make(Slicer, (out, a) =>
      this.x.cupel_slicer_new_count_quota(inner.handle, this.countEntries(a, entries), entries.length, scarcity, out));
  }
  countConstrainedKnapsack(bucketSize, entries, scarcity = Scarcity.Degrade) {
    return this.make(Slicer, (out, a) =>
      this.x.cupel_slicer_new_count_constrained_knapsack(toI64(bucketSize), this.countEntries(a, entries), entries.length, scarcity, out));
  }
  chronological() {
    return this.make(Placer, (out) => this.x.cupel_placer_new_chronological(out));
  }
  uShaped() {
    return this.make(Placer, (out) => this.x.cupel_placer_new_u_shaped(out));
  }
  /** `{ scorer = null (the pushed scores), slicer, placer = null, deduplication = true, overflow = Overflow.Throw }`. */
  pipeline({ scorer = null, slicer, placer = null, deduplication = true, overflow = Overflow.Throw }) {
    const p = this.make(Pipeline, (out) =>
      this.x.cupel_pipeline_new(scorer ? scorer.handle : 0, slicer.handle, placer ? placer.handle : 0, out));
    try {
      this.call(() => this.x.cupel_pipeline_set_deduplication(p.handle, deduplication ? 1 : 0));
      this.call(() => this.x.cupel_pipeline_set_overflow(p.handle, overflow));
      return p;
    } catch (e) {
      p.dispose();
      throw e;
    }
  }
  /** The Sort and Slice stages alone: `{ selected, report }`. */
  slice(slicer, items, budget, { pinnedTokens = 0, report = false } = {}) {
    return this.withReport(report, (r) =>
      this.indices(items.length, (out, cap, len) =>
        this.x.cupel_slice(slicer.handle, items.handle, budget.handle, toI64(pinnedTokens), out, cap, len, r),
      ),
    ).finish(items, "selected");
  }
  /** Items selected at `budget` but not with `slackTokens` fewer. */
  marginalItems(slicer, items, budget, slackTokens, pinnedTokens = 0) {
    return this.indices(items.length, (out, cap, len) =>
      this.x.cupel_marginal_items(slicer.handle, items.handle, budget.handle, toI64(pinnedTokens), toI64(slackTokens), out, cap, len),
    ).value;
  }
  /** The smallest budget selecting item `index`, or null if none up to `ceiling`. */
  findMinBudget(slicer, items, index, ceiling, pinnedTokens = 0) {
    const b = this.call((a) => {
      const out = a.out(8);
      return [this.x.cupel_find_min_budget(slicer.handle, items.handle, toI64(pinnedTokens), index, toI64(ceiling), out), () => num(this.i64At(out))];
    });
    return b < 0 ? null : b;
  }
  stream(targetTokens, batchSize = 0) {
    return this.make(Stream, (out) => this.x.cupel_stream_new(toI64(targetTokens), batchSize, out));
  }
}
