"""libcupel for Python: fit scored context into a language model's token
budget with the Cupel pipeline (score, deduplicate, slice, place, explain).

    import cupel
    with cupel.Items.from_records(records) as items, \\
         cupel.Pipeline(scorer=cupel.scorers.Recency(), slicer=cupel.Greedy(),
                        placer=cupel.Chronological()) as pipeline:
        placed, report = pipeline.run(items, cupel.Budget(8192, 4096), report=True)

Records are dicts, dataclasses or any objects with the item fields (see
`Item`). Every handle is a context manager (and is freed by the garbage
collector otherwise). Failures raise `CupelError` subclasses carrying the
status and the library's message, which names the argument and value.
"""

from __future__ import annotations

import array
import ctypes as C
import dataclasses
import itertools
import enum
import json as _json
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native as N

__all__ = [
    "Budget", "Chronological", "CountQuota", "CountConstrainedKnapsack", "CupelError", "Decision",
    "Greedy", "Item", "Items", "Knapsack", "Overflow", "Pipeline", "Placer", "Quota", "Reason",
    "Report", "Scarcity", "Scorer", "Slicer", "UShaped", "scorers", "slice", "version",
]

_lib = N.lib
_SIZE_MAX = C.c_size_t(-1).value


# ---- errors -------------------------------------------------------------------


class Status(enum.IntEnum):
    OK = 0
    NULL_POINTER = 1
    INVALID_ARGUMENT = 2
    BUFFER_TOO_SMALL = 3
    SCARCITY = 4
    UNSUPPORTED = 5
    CAPACITY = 6
    INTERNAL = 7
    OVERFLOW = 8


class CupelError(Exception):
    """A failed libcupel call: `status` (a `Status`) and the library's `message`."""

    def __init__(self, status: int, message: str):
        self.status = Status(status) if status in Status._value2member_map_ else status
        self.message = message
        name = self.status.name if isinstance(self.status, Status) else str(status)
        super().__init__(f"{name}: {message}")


class InvalidArgumentError(CupelError, ValueError):
    """An argument was NULL or invalid (CUPEL_ERROR_INVALID_ARGUMENT / NULL_POINTER)."""


class ScarcityError(CupelError):
    """A count slicer with Scarcity.ERROR found too few items of a kind."""


class UnsupportedError(CupelError):
    """The operation is not defined for this slicer."""


class CapacityError(CupelError, MemoryError):
    """The memory limit would be exceeded."""


class OverflowError_(CupelError):
    """The pipeline's Throw strategy: the selection exceeds the target."""


_ERRORS = {1: InvalidArgumentError, 2: InvalidArgumentError, 4: ScarcityError,
           5: UnsupportedError, 6: CapacityError, 8: OverflowError_}


def _check(st: int) -> None:
    if st != 0:
        raise _ERRORS.get(st, CupelError)(st, (_lib.cupel_last_error() or b"").decode("utf-8", "replace"))


def _b(s: Optional[str]) -> Optional[bytes]:
    return None if s is None else s.encode("utf-8")


def version() -> str:
    """libcupel's version string."""
    return _lib.cupel_version().decode()


def live_handles() -> int:
    """Native handles not yet freed (a leak check)."""
    return _lib.cupel_live_handles()


# ---- handles ------------------------------------------------------------------


class _Handle:
    _free = None  # the cupel_*_free function

    def __init__(self, create) -> None:
        out = C.c_void_p()
        _check(create(C.byref(out)))
        self._ptr: Optional[int] = out.value

    @property
    def _raw(self) -> int:
        if self._ptr is None:
            raise InvalidArgumentError(Status.NULL_POINTER, f"this {type(self).__name__} was closed")
        return self._ptr

    def close(self) -> None:
        """Frees the native object; idempotent."""
        if getattr(self, "_ptr", None) is not None:
            type(self)._free(self._ptr)
            self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


@dataclasses.dataclass
class Item:
    """One candidate. Only `tokens` is required; None means absent."""

    tokens: int
    score: float = 0.0
    kind: Optional[str] = None
    content: Optional[str] = None
    timestamp: Optional[int] = None  # UTC milliseconds since the epoch
    priority: Optional[int] = None
    pinned: bool = False
    relevance_hint: Optional[float] = None
    source: Optional[str] = None
    tags: Sequence[str] = ()
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)
    group: int = 0  # keep-together group, 0 = none


_FIELDS = [f.name for f in dataclasses.fields(Item)]


def _packed(col, name: str) -> bytes:
    """A column of strings as the packed form: NUL-terminated UTF-8 back to
    back, None as the empty string (the default kind / content unchanged).
    "" and embedded NULs, which the form cannot carry, are refused here as
    the library refuses them."""
    for i, x in enumerate(col):
        if x is not None and (x == "" or "\0" in x):
            what = "is empty" if x == "" else "contains a NUL"
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{name}[{i}] {what}; it must be a non-empty string")
    return "\0".join(x or "" for x in col).encode("utf-8") + b"\0"


def _field(record: Any, name: str, default: Any) -> Any:
    if isinstance(record, Mapping):
        return record.get(name, default)
    return getattr(record, name, default)


class Items(_Handle):
    """The scored candidates; an item's index is its position (push order)."""

    _free = _lib.cupel_items_free

    def __init__(self, records: Iterable[Any] = ()) -> None:
        super().__init__(_lib.cupel_items_new)
        self.extend(records)

    @classmethod
    def from_records(cls, records: Iterable[Any]) -> "Items":
        """Items from dicts, dataclasses or objects with `Item`'s fields."""
        return cls(records)

    def extend(self, records: Iterable[Any]) -> "Items":
        """Adds records: one native call per column (bulk), plus one per tag,
        metadata entry or source given."""
        recs = list(records)
        n = len(recs)
        if n == 0:
            return self
        first = len(self)
        col = {name: [_field(r, name, dataclasses.MISSING) for r in recs] for name in _FIELDS}
        if any(t is dataclasses.MISSING for t in col["tokens"]):
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, "every record needs tokens")
        missing = (dataclasses.MISSING, None)
        tokens = (C.c_int64 * n).from_buffer(array.array("q", map(int, col["tokens"])))
        scores = (C.c_double * n).from_buffer(
            array.array("d", [0.0 if v in missing else float(v) for v in col["score"]]))
        kinds = _packed([None if v is dataclasses.MISSING else v for v in col["kind"]], "kinds")
        _check(_lib.cupel_items_push_many_packed(self._raw, n, tokens, scores, kinds, len(kinds)))
        h = self._ptr

        def present(name):
            return [(i, v) for i, v in enumerate(col[name]) if v not in missing]

        contents = _packed([None if v is dataclasses.MISSING else v for v in col["content"]], "contents")
        _check(_lib.cupel_items_set_contents_packed(h, first, n, contents, len(contents)))
        for name, bulk, ctype, single in [
            ("timestamp", _lib.cupel_items_set_timestamps, C.c_int64, _lib.cupel_items_set_timestamp),
            ("priority", _lib.cupel_items_set_priorities, C.c_int64, _lib.cupel_items_set_priority),
            ("relevance_hint", _lib.cupel_items_set_relevance_hints, C.c_double, _lib.cupel_items_set_relevance_hint),
        ]:
            have = present(name)
            if len(have) == n:
                _check(bulk(h, first, n, (ctype * n)(*[v for _, v in have])))
            else:
                for i, v in have:
                    _check(single(h, first + i, v))
        pinned = (C.c_bool * n)(*[bool(v) and v is not dataclasses.MISSING for v in col["pinned"]])
        _check(_lib.cupel_items_set_pinned_many(h, first, n, pinned))
        groups = (C.c_uint64 * n)(*[0 if v in (dataclasses.MISSING, None) else int(v) for v in col["group"]])
        _check(_lib.cupel_items_set_groups(h, first, n, groups))
        for i, v in present("source"):
            _check(_lib.cupel_items_set_source(h, first + i, _b(v)))
        for i, v in present("tags"):
            for tag in v:
                _check(_lib.cupel_items_add_tag(h, first + i, _b(tag)))
        for i, v in present("metadata"):
            for key, value in v.items():
                _check(_lib.cupel_items_set_metadata(h, first + i, _b(key), _b(str(value))))
        return self

    @classmethod
    def from_columns(cls, tokens: Sequence[int], scores: Optional[Sequence[float]] = None, *,
                     kinds: Optional[Sequence[Optional[str]]] = None,
                     contents: Optional[Sequence[Optional[str]]] = None,
                     timestamps: Optional[Sequence[int]] = None, priorities: Optional[Sequence[int]] = None,
                     pinned: Optional[Sequence[bool]] = None, relevance_hints: Optional[Sequence[float]] = None,
                     groups: Optional[Sequence[int]] = None) -> "Items":
        """Items from columns (sequences of equal length, one value per item):
        the fast path for large lists, one native call per column."""
        items = cls()
        items.extend_columns(tokens, scores, kinds=kinds, contents=contents, timestamps=timestamps,
                             priorities=priorities, pinned=pinned, relevance_hints=relevance_hints, groups=groups)
        return items

    def extend_columns(self, tokens, scores=None, *, kinds=None, contents=None, timestamps=None, priorities=None,
                       pinned=None, relevance_hints=None, groups=None) -> "Items":
        """Adds items given as columns (see `from_columns`)."""
        n = len(tokens)
        for name, col in [("scores", scores), ("kinds", kinds), ("contents", contents), ("timestamps", timestamps),
                          ("priorities", priorities), ("pinned", pinned), ("relevance_hints", relevance_hints),
                          ("groups", groups)]:
            if col is not None and len(col) != n:
                raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{name} has {len(col)} values for {n} tokens")
        if n == 0:
            return self
        first = len(self)
        h = self._raw
        # Columns through the array module (C-speed conversion), viewed by ctypes.
        i64 = lambda col: (C.c_int64 * n).from_buffer(array.array("q", col))
        f64 = lambda col: (C.c_double * n).from_buffer(array.array("d", col))
        sc = f64(scores) if scores is not None else (C.c_double * n)()
        k = _packed(kinds, "kinds") if kinds is not None else None
        _check(_lib.cupel_items_push_many_packed(h, n, i64(tokens), sc, k, 0 if k is None else len(k)))
        if contents is not None:
            c = _packed(contents, "contents")
            _check(_lib.cupel_items_set_contents_packed(h, first, n, c, len(c)))
        if timestamps is not None:
            _check(_lib.cupel_items_set_timestamps(h, first, n, i64(timestamps)))
        if priorities is not None:
            _check(_lib.cupel_items_set_priorities(h, first, n, i64(priorities)))
        if pinned is not None:
            b = (C.c_bool * n).from_buffer(array.array("b", [1 if x else 0 for x in pinned]))
            _check(_lib.cupel_items_set_pinned_many(h, first, n, b))
        if relevance_hints is not None:
            _check(_lib.cupel_items_set_relevance_hints(h, first, n, f64(relevance_hints)))
        if groups is not None:
            _check(_lib.cupel_items_set_groups(h, first, n, (C.c_uint64 * n).from_buffer(array.array("Q", groups))))
        return self

    def set_group(self, index: int, group: int) -> None:
        """Puts item `index` in keep-together group `group` (0: none)."""
        _check(_lib.cupel_items_set_group(self._raw, index, group))

    def __len__(self) -> int:
        return _lib.cupel_items_len(self._raw)

    def clear(self) -> None:
        _lib.cupel_items_clear(self._raw)


class Budget(_Handle):
    """A token budget: hard ceiling (max) and the slicers' goal (target)."""

    _free = _lib.cupel_budget_free

    def __init__(self, max_tokens: int, target_tokens: Optional[int] = None, *, output_reserve: int = 0,
                 safety_margin_percent: float = 0.0, reserved: Optional[Mapping[str, int]] = None) -> None:
        target = max_tokens if target_tokens is None else target_tokens
        super().__init__(lambda out: _lib.cupel_budget_new(max_tokens, target, out))
        if output_reserve:
            _check(_lib.cupel_budget_set_output_reserve(self._ptr, output_reserve))
        if safety_margin_percent:
            _check(_lib.cupel_budget_set_safety_margin(self._ptr, safety_margin_percent))
        for kind, tokens in (reserved or {}).items():
            _check(_lib.cupel_budget_reserve(self._ptr, _b(kind), tokens))

    def effective(self, pinned_tokens: int = 0) -> Tuple[int, int]:
        """(max, target) after `pinned_tokens`, reserves and the margin."""
        mx, tg = C.c_int64(), C.c_int64()
        _check(_lib.cupel_budget_effective(self._raw, pinned_tokens, C.byref(mx), C.byref(tg)))
        return mx.value, tg.value


# ---- slicers, scorers, placers ----------------------------------------------------


class Scarcity(enum.IntEnum):
    DEGRADE = 0
    ERROR = 1


class Slicer(_Handle):
    _free = _lib.cupel_slicer_free


class Greedy(Slicer):
    """GreedySlice: value density order, greedy fill."""

    def __init__(self) -> None:
        super().__init__(_lib.cupel_slicer_new_greedy)


class Knapsack(Slicer):
    """KnapsackSlice: 0/1 knapsack DP in buckets of `bucket_size` tokens."""

    def __init__(self, bucket_size: int = 100) -> None:
        super().__init__(lambda out: _lib.cupel_slicer_new_knapsack(bucket_size, out))


class Quota(Slicer):
    """QuotaSlice over a copy of `inner`: {kind: (require_percent, cap_percent)}."""

    def __init__(self, inner: Slicer, quotas: Mapping[str, Tuple[float, float]]) -> None:
        entries = (N.QuotaEntry * max(len(quotas), 1))(*[N.QuotaEntry(_b(k), r, c) for k, (r, c) in quotas.items()])
        super().__init__(lambda out: _lib.cupel_slicer_new_quota(inner._raw, entries, len(quotas), out))


def _counts(entries: Mapping[str, Tuple[int, int]]):
    return (N.CountEntry * max(len(entries), 1))(*[N.CountEntry(_b(k), r, c) for k, (r, c) in entries.items()])


class CountQuota(Slicer):
    """CountQuotaSlice over a copy of `inner`: {kind: (require_count, cap_count)}."""

    def __init__(self, inner: Slicer, entries: Mapping[str, Tuple[int, int]],
                 scarcity: Scarcity = Scarcity.DEGRADE) -> None:
        e = _counts(entries)
        super().__init__(lambda out: _lib.cupel_slicer_new_count_quota(inner._raw, e, len(entries), int(scarcity), out))


class CountConstrainedKnapsack(Slicer):
    def __init__(self, bucket_size: int, entries: Mapping[str, Tuple[int, int]],
                 scarcity: Scarcity = Scarcity.DEGRADE) -> None:
        e = _counts(entries)
        super().__init__(lambda out: _lib.cupel_slicer_new_count_constrained_knapsack(
            bucket_size, e, len(entries), int(scarcity), out))


class Scorer(_Handle):
    """A scorer (the Score stage); composites copy their children."""

    _free = _lib.cupel_scorer_free

    def score(self, items: Items) -> List[float]:
        """The score of every item, by index."""
        n = len(items)
        out = (C.c_double * max(n, 1))()
        got = C.c_size_t()
        _check(_lib.cupel_scorer_score(self._raw, items._raw, out, n, C.byref(got)))
        return list(out[: got.value])


def _weights(w: Mapping[str, float]):
    return (N.Weight * max(len(w), 1))(*[N.Weight(_b(k), v) for k, v in w.items()]), len(w)


class _Scorers:
    """Factories of every scorer: `cupel.scorers.Recency()`, ..."""

    @staticmethod
    def Given() -> Scorer:
        return Scorer(_lib.cupel_scorer_new_given)

    @staticmethod
    def Recency() -> Scorer:
        return Scorer(_lib.cupel_scorer_new_recency)

    @staticmethod
    def Priority() -> Scorer:
        return Scorer(_lib.cupel_scorer_new_priority)

    @staticmethod
    def Frequency() -> Scorer:
        return Scorer(_lib.cupel_scorer_new_frequency)

    @staticmethod
    def Reflexive() -> Scorer:
        return Scorer(_lib.cupel_scorer_new_reflexive)

    @staticmethod
    def Kind(weights: Optional[Mapping[str, float]] = None) -> Scorer:
        """None: the specification's default weights."""
        if weights is None:
            return Scorer(lambda out: _lib.cupel_scorer_new_kind(None, 0, out))
        arr, n = _weights(weights)
        return Scorer(lambda out: _lib.cupel_scorer_new_kind(arr, n, out))

    @staticmethod
    def Tag(weights: Mapping[str, float]) -> Scorer:
        arr, n = _weights(weights)
        return Scorer(lambda out: _lib.cupel_scorer_new_tag(arr, n, out))

    @staticmethod
    def Composite(parts: Sequence[Tuple[Scorer, float]]) -> Scorer:
        kids = (C.c_void_p * max(len(parts), 1))(*[s._raw for s, _ in parts])
        w = (C.c_double * max(len(parts), 1))(*[float(x) for _, x in parts])
        return Scorer(lambda out: _lib.cupel_scorer_new_composite(kids, w, len(parts), out))

    @staticmethod
    def Scaled(inner: Scorer) -> Scorer:
        return Scorer(lambda out: _lib.cupel_scorer_new_scaled(inner._raw, out))

    @staticmethod
    def MetadataTrust(default_score: float = 0.5) -> Scorer:
        return Scorer(lambda out: _lib.cupel_scorer_new_metadata_trust(default_score, out))

    @staticmethod
    def MetadataKey(key: str, value: str, boost: float) -> Scorer:
        return Scorer(lambda out: _lib.cupel_scorer_new_metadata_key(_b(key), _b(value), boost, out))

    EXPONENTIAL, STEP, WINDOW = 0, 1, 2

    @staticmethod
    def Decay(curve: int, *, reference_time: int, duration_secs: float = 0.0,
              windows: Sequence[Tuple[float, float]] = (), null_timestamp_score: float = 0.5) -> Scorer:
        """curve: scorers.EXPONENTIAL / STEP / WINDOW; reference_time in UTC ms."""
        arr = (N.DecayWindow * max(len(windows), 1))(*[N.DecayWindow(a, s) for a, s in windows])
        return Scorer(lambda out: _lib.cupel_scorer_new_decay(
            curve, duration_secs, arr if windows else None, len(windows), reference_time, null_timestamp_score, out))


scorers = _Scorers()


class Placer(_Handle):
    _free = _lib.cupel_placer_free

    def place(self, items: "Items", indices: Sequence[int], scores: Sequence[float]) -> List[int]:
        """The Place stage on its own: the item `indices`, with their `scores`
        (one each), in placed order."""
        n = len(indices)
        if len(scores) != n:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"place: {n} indices and {len(scores)} scores; one score per index")
        for k, i in enumerate(indices):
            if i < 0:
                raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"place: indices[{k}] is {i}, negative")
        idx = (C.c_size_t * max(n, 1))(*indices)
        sc = (C.c_double * max(n, 1))(*scores)
        out = (C.c_size_t * max(n, 1))()
        got = C.c_size_t()
        _check(_lib.cupel_placer_place(self._raw, items._raw, idx, sc, n, out, max(n, 1), C.byref(got)))
        return list(out[: got.value])


class Chronological(Placer):
    """Oldest first; items without a timestamp last."""

    def __init__(self) -> None:
        super().__init__(_lib.cupel_placer_new_chronological)


class UShaped(Placer):
    """The best-scored items at both edges."""

    def __init__(self) -> None:
        super().__init__(_lib.cupel_placer_new_u_shaped)


# ---- the pipeline and its report -------------------------------------------------


class Overflow(enum.IntEnum):
    THROW = 0
    TRUNCATE = 1
    PROCEED = 2


class Reason(enum.IntEnum):
    SCORED = 0
    PINNED = 1
    ZERO_TOKEN = 2
    BUDGET_EXCEEDED = 10
    SCORED_TOO_LOW = 11
    DEDUPLICATED = 12
    QUOTA_CAP_EXCEEDED = 13
    QUOTA_REQUIRE_DISPLACED = 14
    NEGATIVE_TOKENS = 15
    PINNED_OVERRIDE = 16
    FILTERED = 17
    COUNT_CAP_EXCEEDED = 18

    @property
    def spec_name(self) -> str:
        """The specification's name, e.g. "BudgetExceeded"."""
        return "".join(w.capitalize() for w in self.name.split("_"))


@dataclasses.dataclass(frozen=True)
class Decision:
    index: int
    score: float
    reason: Reason
    item_tokens: int
    available_tokens: int
    related_index: Optional[int]
    group: int
    group_tokens: int


@dataclasses.dataclass(frozen=True)
class Report:
    included: List[Decision]  # placed order
    excluded: List[Decision]  # score descending
    total_candidates: int
    total_tokens_considered: int
    effective_max_tokens: int
    effective_target_tokens: int
    selected_tokens: int
    json: str  # the specification's SelectionReport JSON
    # Tokens the placed items exceed the target by under Overflow.PROCEED
    # (the spec's OverflowEvent); 0 otherwise.
    tokens_over_budget: int = 0

    def to_dict(self) -> dict:
        return _json.loads(self.json)


def _decisions(r: int, included: bool) -> List[Decision]:
    count = _lib.cupel_report_included_count(r) if included else _lib.cupel_report_excluded_count(r)
    get = _lib.cupel_report_included if included else _lib.cupel_report_excluded
    out = []
    d = N.Decision()
    for i in range(count):
        _check(get(r, i, C.byref(d)))
        out.append(Decision(d.item_index, d.score, Reason(d.reason), d.item_tokens, d.available_tokens,
                            None if d.related_index == _SIZE_MAX else d.related_index, d.group, d.group_tokens))
    return out


def _report(r: int, items: Items) -> Report:
    n = C.c_size_t()
    st = _lib.cupel_report_json(r, items._raw, None, 0, C.byref(n))
    if st != Status.BUFFER_TOO_SMALL:
        _check(st)
    buf = C.create_string_buffer(n.value + 1)
    _check(_lib.cupel_report_json(r, items._raw, buf, n.value + 1, C.byref(n)))
    return Report(
        _decisions(r, True), _decisions(r, False),
        _lib.cupel_report_total_candidates(r), _lib.cupel_report_total_tokens_considered(r),
        _lib.cupel_report_effective_max_tokens(r), _lib.cupel_report_effective_target_tokens(r),
        _lib.cupel_report_selected_tokens(r), buf.raw[: n.value].decode("utf-8"),
        _lib.cupel_report_tokens_over_budget(r),
    )


def _run(items: Items, want_report: bool, call) -> Union[List[int], Tuple[List[int], Report]]:
    n = len(items)
    out = (C.c_size_t * max(n, 1))()
    got = C.c_size_t()
    r = None
    if want_report:
        rp = C.c_void_p()
        _check(_lib.cupel_report_new(C.byref(rp)))
        r = rp.value
    try:
        _check(call(out, n, C.byref(got), r))
        result = list(out[: got.value])
        return (result, _report(r, items)) if want_report else result
    finally:
        if r is not None:
            _lib.cupel_report_free(r)


class Pipeline(_Handle):
    """All six stages; keeps copies of its scorer, slicer and placer.
    scorer None: the pushed scores; placer None: the slicer's order."""

    _free = _lib.cupel_pipeline_free

    def __init__(self, *, slicer: Slicer, scorer: Optional[Scorer] = None, placer: Optional[Placer] = None,
                 deduplication: bool = True, overflow: Overflow = Overflow.THROW) -> None:
        super().__init__(lambda out: _lib.cupel_pipeline_new(
            scorer._raw if scorer else None, slicer._raw, placer._raw if placer else None, out))
        _check(_lib.cupel_pipeline_set_deduplication(self._ptr, deduplication))
        _check(_lib.cupel_pipeline_set_overflow(self._ptr, int(overflow)))

    def run(self, items: Items, budget: Budget, *, report: bool = False):
        """The placed item indices; with report=True, (placed, Report)."""
        return _run(items, report, lambda out, cap, got, r: _lib.cupel_pipeline_run(
            self._raw, items._raw, budget._raw, out, cap, got, r))


def slice(slicer: Slicer, items: Items, budget: Budget, *, pinned_tokens: int = 0, report: bool = False):
    """The Sort and Slice stages alone: selected indices (and the Report)."""
    return _run(items, report, lambda out, cap, got, r: _lib.cupel_slice(
        slicer._raw, items._raw, budget._raw, pinned_tokens, out, cap, got, r))
