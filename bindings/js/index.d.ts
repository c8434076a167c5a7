// Type declarations of libcupel for JavaScript (index.js).

/** Status codes of the C ABI. */
export declare const Status: Readonly<{
  OK: 0;
  NULL_POINTER: 1;
  INVALID_ARGUMENT: 2;
  BUFFER_TOO_SMALL: 3;
  SCARCITY: 4;
  UNSUPPORTED: 5;
  CAPACITY: 6;
  INTERNAL: 7;
  OVERFLOW: 8;
}>;

/** Why an item was included or excluded: the codes (names: `Cupel.reasonName`). */
export declare const Reason: Readonly<{
  Scored: 0;
  Pinned: 1;
  ZeroToken: 2;
  /** Included as one of its variants (`IncludedDecision.variant`). */
  Variant: 3;
  /** Included cut down to fit (`IncludedDecision.cut`). */
  Truncated: 4;
  BudgetExceeded: 10;
  ScoredTooLow: 11;
  Deduplicated: 12;
  QuotaCapExceeded: 13;
  QuotaRequireDisplaced: 14;
  NegativeTokens: 15;
  PinnedOverride: 16;
  Filtered: 17;
  CountCapExceeded: 18;
  /** Left out by a session (`Session.run`) to keep the cached prefix; the pipeline alone would take it. */
  Deferred: 19;
}>;
export type ReasonName = keyof typeof Reason;

/** What the pipeline does when the selection exceeds the target. */
export declare const Overflow: Readonly<{ Throw: 0; Truncate: 1; Proceed: 2 }>;
/** What a count slicer does when a kind has too few items. */
export declare const Scarcity: Readonly<{ Degrade: 0; Error: 1 }>;
/** The DecayScorer's curves. */
export declare const DecayCurve: Readonly<{ Exponential: 0; Step: 1; Window: 2 }>;
/**
 * What `Tokenizer.truncate` keeps of a text, and how a truncatable item is
 * cut (`Items.setTruncatable`): the beginning, the end, or both ends (the
 * middle goes).
 */
export declare const Keep: Readonly<{ Head: 0; Tail: 1; BothEnds: 2 }>;
/** A value of `Keep`. */
export type KeepValue = (typeof Keep)[keyof typeof Keep];
/**
 * Which rule a session run took (`Session.lastAction`), spelled as the
 * report's JSON spells it: the first run (or the first after a reset), an
 * append after the previous output, or a compaction.
 */
export declare const SessionAction: Readonly<{ First: "first"; Append: "append"; Compact: "compact" }>;
/** A value of `SessionAction`. */
export type SessionActionValue = (typeof SessionAction)[keyof typeof SessionAction];
/**
 * What a cache breakpoint marks (`Breakpoint.mark`), spelled as the
 * report's JSON spells it ("at"): after the leading pinned items, after the
 * prefix the last compaction kept, after the stable prefix, after the last
 * non-volatile item.
 */
export declare const BreakpointMark: Readonly<{ Pinned: "pinned"; Compaction: "compaction"; Stable: "stable"; End: "end" }>;
/** A value of `BreakpointMark`. */
export type BreakpointMarkValue = (typeof BreakpointMark)[keyof typeof BreakpointMark];
/**
 * How much a trace carries (`Pipeline.setTrace`): the stage spans and the
 * pipeline's ("StageOnly"), + one event per excluded item
 * ("StageAndExclusions"), + one per included item ("Full").
 */
export declare const TraceLevel: Readonly<{ Stages: 0; Exclusions: 1; Full: 2 }>;
/** A value of `TraceLevel`. */
export type TraceLevelValue = (typeof TraceLevel)[keyof typeof TraceLevel];
/** What a trace event is about (`TraceEvent.kind`). */
export declare const TraceKind: Readonly<{ Pipeline: "pipeline"; Stage: "stage"; Exclusion: "exclusion"; Included: "included" }>;
/** A value of `TraceKind`. */
export type TraceKindValue = (typeof TraceKind)[keyof typeof TraceKind];

/**
 * One trace event (a span or a span event of the specification's
 * OpenTelemetry chapter), never content or metadata. Per run, in order:
 * each stage's span event, followed by its exclusions (the place stage's
 * also by the included items), and the pipeline's last. Fields that do not
 * apply to the kind are null.
 */
export interface TraceEvent {
  kind: TraceKindValue;
  /** "cupel.pipeline", "cupel.stage.classify" (.score, .deduplicate, .slice, .place), "cupel.exclusion", "cupel.item.included". */
  name: string;
  /** The stage, lowercase ("classify", ...); null for the pipeline. */
  stage: string | null;
  /** `cupel.verbosity`: "StageOnly", "StageAndExclusions" or "Full". */
  verbosity: string;
  /** Stage: items in and out, and its exclusions; pipeline: items in, included, all exclusions. */
  itemCountIn: number | null;
  itemCountOut: number | null;
  exclusionCount: number | null;
  /** Exclusion, included: the item's index. */
  item: number | null;
  /** Exclusion: the reason's code (`Reason`) and name ("BudgetExceeded"). */
  reason: number | null;
  reasonName: string | null;
  /** Exclusion, included: the item's kind. */
  itemKind: string | null;
  /** Exclusion: the item's tokens; included: the tokens it adds. */
  tokens: number | bigint | null;
  /** Included: its final score. */
  score: number | null;
  /** Pipeline: `cupel.budget.max_tokens`. */
  maxTokens: number | bigint | null;
  /**
   * Nanoseconds since the Unix epoch, and the duration (0 for events). The
   * module has no clock: the binding times the whole run, and every span
   * (the pipeline's and the stages') has the run's start and end; events
   * are at the end.
   */
  startUnixNanos: bigint;
  durationNanos: bigint;
}

/** A message of the one-call path (`Cupel.select`); other fields are ignored. */
export interface Message {
  /** Required, non-empty. */
  text: string;
  /** Default "Message". */
  kind?: string | null;
  pinned?: boolean | null;
  /** Messages with the same group are kept or dropped together ("": none). */
  group?: string | null;
  /** A tool result's, or a single tool call's, id: one group with the call ("": none). */
  toolCallId?: string | null;
  /** A message that makes several calls: all their ids ("" or null: none). */
  toolCallIds?: (string | null)[] | null;
  /** A 64-bit identity (sessions); 0: none. */
  key?: Integer | null;
  /** UTC ms or a Date; when no message has one, message i gets i. */
  timestamp?: Integer | Date | null;
  priority?: Integer | null;
  /** The reflexive scorer's hint. */
  relevance?: number | null;
  /** The given scorer's score; default 1. */
  score?: number | null;
}

/** The options of `Cupel.select`: `maxTokens` or `budget`. */
export interface SelectOptions {
  /** The budget's max and target. */
  maxTokens?: Integer;
  /** A Budget, or `cupel.budget`'s options. */
  budget?: Budget | BudgetOptions;
  /** A preset name, a policy document (text or object) or a Pipeline; default "Chat". */
  policy?: string | Record<string, unknown> | Pipeline | null;
  /** An encoding name or a Tokenizer; default the policy's tokenizer, else "o200k_base". */
  tokenizer?: string | Tokenizer;
}

/** What `Cupel.policySensitivity` found. */
export interface Sensitivity {
  /** Each pipeline's run, in order: its label and SelectionReport (parsed JSON). */
  variants: { label: string; report: any }[];
  /** Every item included by one pipeline and excluded by another, by index in push order. */
  diffs: { index: number; content: string | null; statuses: { label: string; status: "Included" | "Excluded" }[] }[];
}

/** A report's analytics. */
export interface Analytics {
  /** Included tokens over the budget's max_tokens; 0 when that is 0 or nothing is included. */
  budgetUtilization: number;
  /** Distinct kinds among the included items (compared case-insensitively). */
  kindDiversity: number;
  /** The share of included items with a timestamp; 0 when none is included. */
  timestampCoverage: number;
  /** One row per quota constraint, outermost first (as the report's JSON has them). */
  quotas: { kind: string; mode: "percentage" | "count"; require: number; cap: number; actual: number; utilization: number }[];
}

/**
 * A failure of the library that is not an argument error (scarcity,
 * capacity, overflow, ...). Bad arguments throw the built-in TypeError (null,
 * wrong type, disposed handle) or RangeError (not an integer, out of range,
 * past 2^53, a lone surrogate, a value the library refuses), with the same
 * fields; `e instanceof CupelError` is true for those too.
 */
export declare class CupelError extends Error {
  /** A number of `Status`. */
  readonly status: number;
  readonly statusName: string;
  /** The message: it names the argument (as this API names it) and the value. */
  readonly detail: string;
}

/** The fields every error of this binding carries (CupelError, TypeError, RangeError). */
export interface CupelErrorFields {
  readonly status: number;
  readonly statusName: string;
  readonly detail: string;
}

/**
 * An integer argument: a number (a safe integer: past 2^53 - 1 it is refused,
 * as it may already be rounded) or a BigInt, within the C type's range.
 */
export type Integer = number | bigint;

/**
 * One candidate. Only `tokens` is required; an absent field (undefined or
 * null) takes its default. Strings must have a UTF-8 form (no lone
 * surrogate) and no NUL.
 */
export interface Item {
  /** An int64 (negative: never selected, reported as NegativeTokens). */
  tokens: Integer;
  /** The caller's relevance score (the `given` scorer, and `slice`); finite. Default 0. */
  score?: number | null;
  /** Default "Message"; ASCII case-insensitive; not blank. */
  kind?: string | null;
  /** Byte-identical contents are deduplicated. Not empty. */
  content?: string | null;
  /** UTC milliseconds since the epoch, or a Date. */
  timestamp?: Integer | Date | null;
  priority?: Integer | null;
  pinned?: boolean | null;
  relevanceHint?: number | null;
  /** Default "Chat"; not blank. */
  source?: string | null;
  tags?: string[] | null;
  metadata?: Record<string, string | number | bigint> | null;
  /**
   * Keep-together group (0 or absent: none), from 0 to 2^64 - 1: items that
   * share one are selected all together or not at all, and placed next to
   * each other in push order (a tool call and its result are never split).
   */
  group?: Integer | null;
  /**
   * Smaller stand-ins selection may take instead of the item (as
   * `Items.addVariant`, in order: variant k is `variants[k - 1]`); at most 255.
   */
  variants?: Variant[] | null;
  /** Makes the item truncatable (as `Items.setTruncatable`); absent or null: not. */
  truncatable?: Truncatable | null;
  /**
   * Identity key for sessions (as `Items.setKey`), from 0 to 2^64 - 1; 0 or
   * absent: none. Unique in a list for `Session.run`.
   */
  key?: Integer | null;
  /** Expected to change every turn: a session places it last (as `Items.setVolatile`). Default false. */
  volatile?: boolean | null;
}

/**
 * A variant of an item: a smaller stand-in (a summary, a digest, a
 * placeholder such as "[output cleared]") that selection may take instead
 * of the item. Selection takes at most one option of an item: the item as
 * pushed (variant 0) or one of its variants (1, 2, ... in the order added).
 */
export interface Variant {
  /** The tokens it adds to the context: an integer >= 0 (it may be more than the item's). */
  tokens: Integer;
  /** The share of the item's score it keeps, in (0, 1]: its score is the item's times `value`. */
  value: number;
  /** Its text: not empty; null or absent for none (then a report's `text` is null when it is chosen). */
  content?: string | null;
}

/** How a truncatable item may be cut. */
export interface Truncatable {
  /** What the cut keeps: `Keep.Head`, `Keep.Tail` or `Keep.BothEnds`. */
  keep: KeepValue;
  /** An integer >= 0: the item is included cut only if what is kept counts at least this many tokens. */
  minTokens: Integer;
}

/**
 * One element of `Items.pushTexts`: an `Item` whose tokens are the count
 * of `text` and whose content is `text` (so it has neither `tokens` nor
 * `content`).
 */
export interface TextItem extends Omit<Item, "tokens" | "content"> {
  /** Not empty; no lone surrogate (a NUL is ordinary text). */
  text: string;
  tokens?: never;
  content?: never;
}

/**
 * An item as the library holds it (`Items.get`): every field of `Item`,
 * with null where a value was never set. Integers past 2^53 are BigInts.
 */
export interface ItemRecord {
  tokens: number | bigint;
  score: number;
  /** As this list first spelled the kind. */
  kind: string;
  content: string | null;
  timestamp: number | bigint | null;
  priority: number | bigint | null;
  pinned: boolean;
  relevanceHint: number | null;
  source: string;
  /** 0 when none. */
  group: number | bigint;
  /** In the order added, repeats included. */
  tags: string[];
  /** In the order the keys were first set (as a JavaScript object orders them). */
  metadata: Record<string, string>;
  /** In order (variant k at [k - 1]); empty when none. */
  variants: VariantRecord[];
  /** null when the item is not truncatable. */
  truncatable: TruncatableRecord | null;
  /** The session key, 0 when none (a BigInt past 2^53). */
  key: number | bigint;
  volatile: boolean;
}

/** A variant as the library holds it (`Items.variants`). */
export interface VariantRecord {
  tokens: number | bigint;
  value: number;
  /** null when it has none. */
  content: string | null;
}

/** A truncatable item's settings as the library holds them (`Items.truncatable`). */
export interface TruncatableRecord {
  keep: KeepValue;
  minTokens: number | bigint;
}

/** One item's fate in a report. */
export interface Decision {
  /** The item's index (push order). */
  index: number;
  score: number;
  reason: ReasonName;
  reasonCode: number;
  itemTokens: number | bigint;
  /** BudgetExceeded: the tokens that were left. */
  availableTokens: number | bigint;
  /** Deduplicated: the item kept; PinnedOverride: the pinned item. */
  relatedIndex: number | null;
  /** The item's group, 0 when none (a BigInt past 2^53). */
  group: number | bigint;
  /** The tokens the decision was made on: its group's, or its own. */
  groupTokens: number | bigint;
}

/**
 * An included item's decision, with what was chosen of it: the item as
 * pushed, one of its variants, or the item cut down (reasons Variant and
 * Truncated), and the text the host sends for it.
 */
export interface IncludedDecision extends Decision {
  /** The option chosen: 0 for the item as pushed (also when it was cut), k for its variant k. */
  variant: number;
  /**
   * The tokens it adds to the context: the variant's, the cut's, or the
   * item's own (`itemTokens` stays the item's own count). The report's
   * `selectedTokens` sums these.
   */
  addedTokens: number | bigint;
  /**
   * The kept ranges of the ITEM's content, in UTF-8 BYTES (not JavaScript
   * string indices, unlike `Tokenizer.truncate`'s `Cut`): bytes
   * `[0, headEnd)` then `[tailStart, byte length)` of its UTF-8 form. Both
   * are the content's byte length when it was not cut, both 0 when it has
   * no content. For a variant they describe the item's own content, which
   * is not what is sent: use `text`.
   */
  cut: { headEnd: number; tailStart: number };
  /**
   * The text as the host sends it: the variant's content when `variant` > 0
   * (null if it has none), else the item's content with the cut applied
   * (the two byte ranges of `cut`, decoded: a correct JavaScript string
   * whatever the script), null when the item has no content.
   */
  text: string | null;
}

/** What one slice or run decided. Token counts past 2^53 are BigInts. */
export interface Report {
  /** In placed order. */
  included: IncludedDecision[];
  /** By score descending. */
  excluded: Decision[];
  totalCandidates: number | bigint;
  totalTokensConsidered: number | bigint;
  effectiveMaxTokens: number | bigint;
  effectiveTargetTokens: number | bigint;
  selectedTokens: number | bigint;
  shortfalls: { kind: string; required: number; satisfied: number }[];
  capExcluded: number[];
  /** Budget utilization, kind diversity, timestamp coverage, quota rows. */
  analytics: Analytics;
  /** The specification's SelectionReport JSON. */
  json: string;
}

/** Every handle: free with dispose() (or `using`); idempotent. */
declare class Handle {
  /** Frees the native object. Idempotent; afterwards every use throws a TypeError. */
  dispose(): void;
  /** dispose(), for `using`. */
  [Symbol.dispose](): void;
  /** Whether dispose() has run. */
  readonly disposed: boolean;
}

/** Scored candidates. Every index is 0-based, in push order. */
export declare class Items extends Handle {
  /** Adds one item or an array of them, all or nothing. */
  push(items: Item | Item[]): this;
  /**
   * Adds one item made from a text: its tokens are the text's count with
   * `tokenizer`, its content the text (not empty). `score` default 0,
   * `kind` default "Message".
   */
  pushText(tokenizer: Tokenizer, text: string, score?: number, kind?: string | null): this;
  /**
   * Adds items made from texts (counted together), all or nothing: each a
   * string (score 0, kind "Message") or a `TextItem` record. Errors name
   * `texts[k]` or `texts[k].field`.
   */
  pushTexts(tokenizer: Tokenizer, texts: (string | TextItem)[]): this;
  /** Item `index` as the library holds it. */
  get(index: number): ItemRecord;
  /** Sets item `index`'s content (not empty; byte-identical contents are deduplicated). */
  setContent(index: number, content: string): this;
  /** Sets item `index`'s timestamp: UTC milliseconds since the epoch, or a Date. */
  setTimestamp(index: number, unixMillis: Integer | Date): this;
  /** Sets item `index`'s priority (higher is more important). */
  setPriority(index: number, priority: Integer): this;
  /** Pins item `index` (the pipeline includes it first, unscored) or unpins it. */
  setPinned(index: number, pinned: boolean): this;
  /** Sets item `index`'s relevance hint (read by the reflexive scorer). */
  setRelevanceHint(index: number, hint: number): this;
  /** Sets item `index`'s source ("Chat" when never set; not blank). */
  setSource(index: number, source: string): this;
  /** Adds a tag to item `index` (tags accumulate, repeats included). */
  addTag(index: number, tag: string): this;
  /** Sets metadata `key` of item `index` (again: replaces the value). */
  setMetadata(index: number, key: string, value: string): this;
  /** Puts item `index` in keep-together group `group` (0 to 2^64 - 1; 0: none). */
  setGroup(index: number, group: Integer): this;
  /** Item `first + k` gets `groups[k]`, all or nothing. */
  setGroups(first: number, groups: Integer[]): this;
  /**
   * Adds a variant to item `index` (numbered 1, 2, ... in the order added;
   * at most 255). A RangeError for tokens < 0, a value outside (0, 1] or
   * NaN, an empty content, or an index out of range; nothing changes then.
   */
  addVariant(index: number, variant: Variant): this;
  /** The variants of item `index`, in order (variant k at [k - 1]). */
  variants(index: number): VariantRecord[];
  /**
   * Makes item `index` truncatable: a pipeline run with a tokenizer
   * (`Pipeline.setTokenizer`) may include it cut down to the tokens the
   * slicer left, keeping `keep`, if what is kept counts at least
   * `minTokens` (>= 0); its score then scales by the kept share of its
   * tokens. The item needs content. Again: replaces keep and minTokens.
   */
  setTruncatable(index: number, keep: KeepValue, minTokens: Integer): this;
  /** Makes item `index` no longer truncatable (a no-op if it was not). */
  clearTruncatable(index: number): this;
  /** How item `index` may be cut, or null when it is not truncatable. */
  truncatable(index: number): TruncatableRecord | null;
  /**
   * Gives item `index` an identity key for sessions (0 to 2^64 - 1; 0:
   * none): the same key, tokens and content from one turn's list to the
   * next are the same item. Keys must be unique in a list for `Session.run`.
   */
  setKey(index: number, key: Integer): this;
  /** Item `first + k` gets `keys[k]`, all or nothing. */
  setKeys(first: number, keys: Integer[]): this;
  /** Marks item `index` volatile (expected to change every turn: a session places it last) or not. */
  setVolatile(index: number, isVolatile: boolean): this;
  /** Item `first + k` gets the volatile flag `flags[k]`, all or nothing. */
  setVolatileMany(first: number, flags: boolean[]): this;
  /** The number of items. */
  readonly length: number;
  /** Removes every item (indices start again from 0). */
  clear(): void;
}

/** A token budget. */
export declare class Budget extends Handle {
  /** [max, target] after `pinnedTokens`, reserves and the safety margin. */
  effective(pinnedTokens?: Integer): [number | bigint, number | bigint];
  /** Tokens kept for the model's answer (>= 0). */
  setOutputReserve(outputReserve: Integer): this;
  /** A share of the budget kept free, 0 to 100. */
  setSafetyMargin(percent: number): this;
  /** Tokens reserved for items of `kind` (again: replaces). */
  reserve(kind: string, tokens: Integer): this;
  /** The budget as a budget document (JSON text, every field; reserved kinds lower-cased). */
  toJson(): string;
  /** toJson() parsed. */
  toObject(): Record<string, unknown>;
}

/** A slicer: which items fit the budget. */
export declare class Slicer extends Handle {
  /** Bytes of working memory one slice call may use. */
  memoryLimit: number;
}

/** A scorer: each item's relevance. */
export declare class Scorer extends Handle {
  /** The score of every item, by index. */
  score(items: Items): number[];
}

/** A placer: the order of the final context. */
export declare class Placer extends Handle {
  /** The Place stage alone: `indices` (with their `scores`) in placed order. */
  place(items: Items, indices: number[], scores: number[]): number[];
}

/** The whole pipeline: Classify, Score, Deduplicate, Sort, Slice, Place. */
export declare class Pipeline extends Handle {
  /**
   * Runs all six stages: the item indices in placed order, and with `{ report: true }` every decision.
   * A truncatable item without content, or with no tokenizer set, is a RangeError naming the item.
   */
  run(items: Items, budget: Budget, options: { report: true }): { placed: number[]; report: Report };
  run(items: Items, budget: Budget, options?: { report?: boolean }): { placed: number[]; report?: Report };
  /**
   * The tokenizer that cuts truncatable items (null removes it). The
   * pipeline keeps its own reference: `tokenizer` may be disposed after.
   */
  setTokenizer(tokenizer: Tokenizer | null): this;
  /**
   * The pipeline as a policy document (JSON text, every setting), which
   * `cupel.pipelineFromJson` reads back exactly. CupelError (UNSUPPORTED)
   * for a pipeline that cannot be written without loss.
   */
  toJson(): string;
  /** toJson() parsed. */
  toObject(): Record<string, unknown>;
  /**
   * Calls `callback` with each event of `level` during every successful run
   * (and every run of a session made from the pipeline afterwards); null
   * turns tracing off. An exception of the callback is thrown by the run
   * once it returned. The callback must not call into this pipeline, nor
   * change the run's items or budget (CupelError).
   */
  setTrace(level: TraceLevelValue, callback: ((event: TraceEvent) => void) | null): this;
  /** Turns tracing off. */
  clearTrace(): this;
}

/** OpenTelemetry spans from a pipeline's runs (`cupel.otel`). */
export declare class Otel {
  /** The @opentelemetry/api module once loaded; null before. */
  readonly api: unknown;
  /**
   * Traces `pipeline` as OpenTelemetry spans on the tracer "cupel":
   * `cupel.pipeline` with five `cupel.stage.<name>` children and their
   * events. `@opentelemetry/api` (an optional peer dependency) is imported
   * the first time, unless given as `api`. Resolves to the pipeline.
   */
  instrument(
    pipeline: Pipeline,
    options?: { level?: TraceLevelValue; tracerProvider?: { getTracer(name: string, version?: string): unknown }; api?: unknown },
  ): Promise<Pipeline>;
}

/** A cache breakpoint of a session run: after the first `items` items of its output, which add `tokens` tokens. */
export interface Breakpoint {
  items: number;
  tokens: number | bigint;
  mark: BreakpointMarkValue;
}

/**
 * Cache-stable selection across the turns of a conversation (`Cupel.session`).
 * The first run (and the first after `reset`) is the pipeline's selection,
 * volatile items last; later runs append new items after the previous
 * output while that fits, and otherwise compact once, leaving `slack` of
 * the target free. A run that throws changes nothing.
 */
export declare class Session extends Handle {
  /** The share, in [0, 1), of the target a compaction leaves free (default 0.2); outside it or NaN: a RangeError. */
  slack: number;
  /**
   * One turn, with the pipeline's rules: the item indices in prompt order,
   * and with `{ report: true }` every decision (reason "Deferred": left out
   * to keep the cached prefix; the JSON has a "session" object). Two items
   * with the same non-zero key are a RangeError naming both indices.
   */
  run(items: Items, budget: Budget, options: { report: true }): { placed: number[]; report: Report };
  run(items: Items, budget: Budget, options?: { report?: boolean }): { placed: number[]; report?: Report };
  /** The leading items of the last output identical to the run before's, and their tokens (0 and 0 after a first run). */
  readonly stablePrefix: { items: number; tokens: number | bigint };
  /** The rule the last successful run took ("first" before any run and after a reset). */
  readonly lastAction: SessionActionValue;
  /** The last run's cache breakpoints, ascending, at most 4; empty before any run. */
  readonly breakpoints: Breakpoint[];
  /** Forgets every run: the next run is a first run. The slack stays. */
  reset(): this;
}

/** A StreamSlice: items arriving one at a time. */
export declare class Stream extends Handle {
  /** Offers the next item (in keep-together group `group`, 0: none); true once the budget is spent. */
  push(tokens: Integer, score: number, group?: Integer): boolean;
  /** The taken indices in the order taken; the stream takes no more pushes. */
  finish(): number[];
}

/** What `Tokenizer.truncate` kept. */
export interface Cut {
  /** The kept text: `text.slice(0, headEnd) + text.slice(tailStart)`, no marker between. */
  text: string;
  /** The head is `text.slice(0, headEnd)`: a JavaScript string index (UTF-16 code units). */
  headEnd: number;
  /** The tail is `text.slice(tailStart)`; `text.length` when there is none. */
  tailStart: number;
  /** The head's count plus the tail's (each counted on its own); at most maxTokens. */
  tokens: number;
}

/**
 * A tokenizer: a vocabulary and its pre-tokenization pattern, immutable.
 * Counts are tiktoken's `encode_ordinary` lengths (special tokens such as
 * `<|endoftext|>` are ordinary text). Texts are strings with no lone
 * surrogate (a RangeError naming the argument and the index).
 */
export declare class Tokenizer extends Handle {
  /** The built-in encoding's name, or null for a vocabulary loaded from a file. */
  readonly name: string | null;
  /** The number of tokens of `text`. */
  count(text: string): number;
  /** The counts of `texts`, in order. Errors name `texts[k]`. */
  countMany(texts: string[]): number[];
  /**
   * Cuts `text` to at most `maxTokens` (>= 0) tokens, keeping its head
   * (the default), its tail, or both ends (the head gets ceil(maxTokens / 2)
   * tokens). Offsets are JavaScript string indices; cuts fall on token
   * boundaries of the whole text, never inside a surrogate pair. A text
   * that fits is kept whole.
   */
  truncate(text: string, maxTokens: Integer, keep?: KeepValue): Cut;
}

/** The options of `Cupel.budget`. */
export interface BudgetOptions {
  maxTokens: Integer;
  /** Default: maxTokens. */
  targetTokens?: Integer;
  outputReserve?: Integer;
  safetyMarginPercent?: number;
  /** Tokens reserved per kind. */
  reserved?: Record<string, Integer>;
}

/** The options of `Cupel.pipeline`. */
export interface PipelineOptions {
  /** Default: the pushed scores. */
  scorer?: Scorer | null;
  slicer: Slicer;
  /** Default: the slicer's output order. */
  placer?: Placer | null;
  /** Default true. */
  deduplication?: boolean;
  /** Default Overflow.Throw. */
  overflow?: number;
  /** Cuts truncatable items (as `Pipeline.setTokenizer`). Default: none. */
  tokenizer?: Tokenizer | null;
}

/** The scorer factories (`cupel.scorers`). */
export interface Scorers {
  /** The scores pushed with the items. */
  given(): Scorer;
  /** Newer items score higher (by timestamp rank). */
  recency(): Scorer;
  /** Higher priority scores higher. */
  priority(): Scorer;
  /** Items sharing tags with many others score higher. */
  frequency(): Scorer;
  /** Each item's relevance hint, clamped to [0, 1]. */
  reflexive(): Scorer;
  /** Omitted: the spec's default weights. */
  kind(weights?: Record<string, number>): Scorer;
  /** `weights`: { tag: weight }. */
  tag(weights: Record<string, number>): Scorer;
  /** Weighted children; errors name them parts[k][0] (scorer) and parts[k][1] (weight). */
  composite(parts: [Scorer, number][]): Scorer;
  /** `inner`'s scores scaled to [0, 1]. */
  scaled(inner: Scorer): Scorer;
  /** The "cupel:trust" metadata value; `defaultScore` (0.5) when absent. */
  metadataTrust(defaultScore?: number): Scorer;
  /** Boosts (by `boost` > 0) items whose metadata `key` equals `value`. */
  metadataKey(key: string, value: string, boost: number): Scorer;
  /** Scores by age against `referenceTime` on a decay curve. */
  decay(options: {
    curve: number;
    durationSecs?: number;
    /** Step curve: [maxAgeSecs, score] pairs, youngest first. */
    windows?: [number, number][];
    /** UTC milliseconds, or a Date: there is no clock inside the library. */
    referenceTime: Integer | Date;
    nullTimestampScore?: number;
  }): Scorer;
}

/** The loaded library: factories for every handle, and the calls between them. */
export declare class Cupel {
  /** libcupel's version, "MAJOR.MINOR.PATCH". */
  readonly version: string;
  /** Native handles not yet freed. */
  readonly liveHandles: number;
  /** The scorer factories. */
  readonly scorers: Scorers;
  /** OpenTelemetry spans, when the host has @opentelemetry/api. */
  readonly otel: Otel;
  /**
   * The one-call path: the messages to send (the objects given), in prompt
   * order, fitted to `maxTokens` (or `budget`) under `policy`. Errors name
   * the message (`messages[3].text`).
   */
  select<M extends Message>(messages: M[], options: SelectOptions): M[];
  /** `select`, and the run's report (indices of `messages`). */
  selectWithReport<M extends Message>(messages: M[], options: SelectOptions): { messages: M[]; report: Report };
  /**
   * A pipeline from a policy document (JSON text, or an object to
   * stringify). A RangeError gives the JSON path and the rule.
   */
  pipelineFromJson(json: string | Record<string, unknown>): Pipeline;
  /** A budget from a budget document (JSON text or an object). */
  budgetFromJson(json: string | Record<string, unknown>): Budget;
  /** A preset pipeline by name (case-insensitive): see `presetNames`. */
  preset(name: "Chat" | "CodeReview" | "Rag" | "DocumentQa" | "ToolUse" | "LongRunning" | "Debugging" | "AgentLoop" | (string & {})): Pipeline;
  /** The presets' names. */
  readonly presetNames: string[];
  /**
   * Runs every pipeline on the same items and budget: each run's report, and
   * the items whose status differs, matched by index (never by content).
   * At least two variants: [label, pipeline] pairs, a Map, or an object.
   */
  policySensitivity(
    variants: [string, Pipeline][] | Map<string, Pipeline> | Record<string, Pipeline>,
    items: Items,
    budget: Budget,
  ): Sensitivity;
  /** The specification's name of a reason code (cupel_reason_str): "BudgetExceeded", ...; "Unknown" for no reason. */
  reasonName(code: Integer): string;
  /** A new list holding `items` (nothing is made if one is bad). */
  items(items?: Item[]): Items;
  /** A token budget. */
  budget(options: BudgetOptions): Budget;
  /** GreedySlice: by score per token, while it fits. */
  greedy(): Slicer;
  /** KnapsackSlice, tokens rounded up to `bucketSize` (default 100). */
  knapsack(bucketSize?: Integer): Slicer;
  /** QuotaSlice over `inner`: percentages of the target per kind. */
  quota(inner: Slicer, quotas: { kind: string; requirePercent?: number; capPercent?: number }[]): Slicer;
  /** CountQuotaSlice over `inner`: item counts per kind. */
  countQuota(inner: Slicer, entries: { kind: string; requireCount?: number; capCount?: number }[], scarcity?: number): Slicer;
  /** CountConstrainedKnapsackSlice: a knapsack under count entries. */
  countConstrainedKnapsack(bucketSize: Integer, entries: { kind: string; requireCount?: number; capCount?: number }[], scarcity?: number): Slicer;
  /** ChronologicalPlacer: oldest first, items without a timestamp last. */
  chronological(): Placer;
  /** UShapedPlacer: the best items at both ends. */
  uShaped(): Placer;
  /** A pipeline over copies of the scorer, slicer and placer given. */
  pipeline(options: PipelineOptions): Pipeline;
  /**
   * A session over a copy of `pipeline` (which may be disposed right after):
   * cache-stable selection across turns. `slack` in [0, 1), default 0.2.
   */
  session(pipeline: Pipeline, options?: { slack?: number }): Session;
  /** The Sort and Slice stages alone: the selected indices, and with `{ report: true }` every decision. */
  slice(slicer: Slicer, items: Items, budget: Budget, options: { pinnedTokens?: Integer; report: true }): { selected: number[]; report: Report };
  slice(slicer: Slicer, items: Items, budget: Budget, options?: { pinnedTokens?: Integer; report?: boolean }): { selected: number[]; report?: Report };
  /** The items selected at `budget` but not with `slackTokens` fewer (the C ABI's argument order). */
  marginalItems(slicer: Slicer, items: Items, budget: Budget, pinnedTokens: Integer, slackTokens: Integer): number[];
  /** The smallest budget selecting item `targetIndex`, or null if none up to `searchCeiling` (the C ABI's argument order). */
  findMinBudget(slicer: Slicer, items: Items, pinnedTokens: Integer, targetIndex: number, searchCeiling: Integer): number | bigint | null;
  /**
   * A tokenizer for a built-in encoding, "o200k_base" or "cl100k_base"
   * (inside cupel.wasm: nothing is fetched). An unknown name is a
   * RangeError listing the known ones.
   */
  tokenizer(name: "o200k_base" | "cl100k_base" | (string & {})): Tokenizer;
  /**
   * A tokenizer from a tiktoken vocabulary file's bytes (`base64(token) rank`
   * lines) and its pre-tokenization pattern (null or omitted: o200k_base's).
   * A malformed line is a RangeError naming the line.
   */
  tokenizerFromTiktoken(ranks: ArrayBuffer | ArrayBufferView, pattern?: string | null): Tokenizer;
  /** A StreamSlice up to `targetTokens`, deciding `batchSize` items at a time (0: 32). */
  stream(targetTokens: Integer, batchSize?: number): Stream;
}

/**
 * Loads the library: nothing (Node: the cupel.wasm of this package), a
 * path or URL (Node), the module's bytes, a fetch Response, or a compiled
 * WebAssembly.Module.
 */
export declare function load(
  source?: string | URL | ArrayBuffer | ArrayBufferView | Response | WebAssembly.Module,
): Promise<Cupel>;
