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

/** Why an item was included or excluded. */
export declare const Reason: Readonly<{
  Scored: 0;
  Pinned: 1;
  ZeroToken: 2;
  BudgetExceeded: 10;
  ScoredTooLow: 11;
  Deduplicated: 12;
  QuotaCapExceeded: 13;
  QuotaRequireDisplaced: 14;
  NegativeTokens: 15;
  PinnedOverride: 16;
  Filtered: 17;
  CountCapExceeded: 18;
}>;
export type ReasonName = keyof typeof Reason;

export declare const Overflow: Readonly<{ Throw: 0; Truncate: 1; Proceed: 2 }>;
export declare const Scarcity: Readonly<{ Degrade: 0; Error: 1 }>;
export declare const DecayCurve: Readonly<{ Exponential: 0; Step: 1; Window: 2 }>;

/** A failure of the library: its status and message. */
export declare class CupelError extends Error {
  readonly status: number;
  readonly statusName: string;
  /** The library's message (names the argument and value). */
  readonly detail: string;
}

/** One candidate. Only `tokens` is required. */
export interface Item {
  tokens: number | bigint;
  /** The caller's relevance score (the `given` scorer, and `slice`). Default 0. */
  score?: number;
  /** Default "Message"; ASCII case-insensitive. */
  kind?: string;
  /** Byte-identical contents are deduplicated. */
  content?: string;
  /** UTC milliseconds since the epoch, or a Date. */
  timestamp?: number | Date;
  priority?: number;
  pinned?: boolean;
  relevanceHint?: number;
  /** Default "Chat". */
  source?: string;
  tags?: string[];
  metadata?: Record<string, string | number>;
  /**
   * Keep-together group (0 or absent: none): items that share one are
   * selected all together or not at all, and placed next to each other in
   * push order (a tool call and its result are never split).
   */
  group?: number | bigint;
}

/** One item's fate in a report. */
export interface Decision {
  /** The item's index (push order). */
  index: number;
  score: number;
  reason: ReasonName;
  reasonCode: number;
  itemTokens: number;
  /** BudgetExceeded: the tokens that were left. */
  availableTokens: number;
  /** Deduplicated: the item kept; PinnedOverride: the pinned item. */
  relatedIndex: number | null;
  /** The item's group, 0 when none (a BigInt past 2^53). */
  group: number | bigint;
  /** The tokens the decision was made on: its group's, or its own. */
  groupTokens: number;
}

export interface Report {
  /** In placed order. */
  included: Decision[];
  /** By score descending. */
  excluded: Decision[];
  totalCandidates: number;
  totalTokensConsidered: number;
  effectiveMaxTokens: number;
  effectiveTargetTokens: number;
  selectedTokens: number;
  shortfalls: { kind: string; required: number; satisfied: number }[];
  capExcluded: number[];
  /** The specification's SelectionReport JSON. */
  json: string;
}

/** Every handle: free with dispose() (or `using`); idempotent. */
declare class Handle {
  dispose(): void;
  [Symbol.dispose](): void;
}

export declare class Items extends Handle {
  push(list: Item[]): this;
  setGroup(index: number, group: number | bigint): this;
  setGroups(first: number, groups: (number | bigint)[]): this;
  readonly length: number;
  clear(): void;
}

export declare class Budget extends Handle {
  /** [max, target] after `pinnedTokens`, reserves and the safety margin. */
  effective(pinnedTokens?: number): [number, number];
}

export declare class Slicer extends Handle {
  memoryLimit: number;
}

export declare class Scorer extends Handle {
  score(items: Items): number[];
}

export declare class Placer extends Handle {}

export declare class Pipeline extends Handle {
  run(items: Items, budget: Budget, options: { report: true }): { placed: number[]; report: Report };
  run(items: Items, budget: Budget, options?: { report?: boolean }): { placed: number[]; report?: Report };
}

export declare class Stream extends Handle {
  /** True once the budget is spent. */
  push(tokens: number, score: number, group?: number | bigint): boolean;
  finish(): number[];
}

export interface BudgetOptions {
  maxTokens: number;
  /** Default: maxTokens. */
  targetTokens?: number;
  outputReserve?: number;
  safetyMarginPercent?: number;
  /** Tokens reserved per kind. */
  reserved?: Record<string, number>;
}

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
}

export interface Scorers {
  given(): Scorer;
  recency(): Scorer;
  priority(): Scorer;
  frequency(): Scorer;
  reflexive(): Scorer;
  /** Omitted: the spec's default weights. */
  kind(weights?: Record<string, number>): Scorer;
  tag(weights: Record<string, number>): Scorer;
  composite(parts: [Scorer, number][]): Scorer;
  scaled(inner: Scorer): Scorer;
  metadataTrust(defaultScore?: number): Scorer;
  metadataKey(key: string, value: string, boost: number): Scorer;
  decay(options: {
    curve: number;
    durationSecs?: number;
    /** Step curve: [maxAgeSecs, score] pairs, youngest first. */
    windows?: [number, number][];
    /** UTC milliseconds, or a Date: there is no clock inside the library. */
    referenceTime: number | Date;
    nullTimestampScore?: number;
  }): Scorer;
}

export declare class Cupel {
  readonly version: string;
  /** Native handles not yet freed. */
  readonly liveHandles: number;
  readonly scorers: Scorers;
  items(list?: Item[]): Items;
  budget(options: BudgetOptions): Budget;
  greedy(): Slicer;
  knapsack(bucketSize?: number): Slicer;
  quota(inner: Slicer, quotas: { kind: string; requirePercent?: number; capPercent?: number }[]): Slicer;
  countQuota(inner: Slicer, entries: { kind: string; requireCount?: number; capCount?: number }[], scarcity?: number): Slicer;
  countConstrainedKnapsack(bucketSize: number, entries: { kind: string; requireCount?: number; capCount?: number }[], scarcity?: number): Slicer;
  chronological(): Placer;
  uShaped(): Placer;
  pipeline(options: PipelineOptions): Pipeline;
  slice(slicer: Slicer, items: Items, budget: Budget, options: { pinnedTokens?: number; report: true }): { selected: number[]; report: Report };
  slice(slicer: Slicer, items: Items, budget: Budget, options?: { pinnedTokens?: number; report?: boolean }): { selected: number[]; report?: Report };
  marginalItems(slicer: Slicer, items: Items, budget: Budget, slackTokens: number, pinnedTokens?: number): number[];
  findMinBudget(slicer: Slicer, items: Items, index: number, ceiling: number, pinnedTokens?: number): number | null;
  stream(targetTokens: number, batchSize?: number): Stream;
}

/**
 * Loads the library: nothing (Node: the cupel.wasm of this package), a
 * path or URL (Node), the module's bytes, a fetch Response, or a compiled
 * WebAssembly.Module.
 */
export declare function load(
  source?: string | URL | ArrayBuffer | ArrayBufferView | Response | WebAssembly.Module,
): Promise<Cupel>;
