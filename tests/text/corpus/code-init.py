"""libcupel for Python: fit scored context into a language model's token
budget with the Cupel pipeline (score, deduplicate, slice, place, explain).

    import cupel
    with cupel.Items.from_records(records) as items, \\
         cupel.Pipeline(scorer=cupel.scorers.Recency(), slicer=cupel.Greedy(),
                        placer=cupel.Chronological()) as pipeline:
        placed, report = pipeline.run(items, cupel.Budget(8192, 4096), report=True)

Records are dicts, dataclasses or any objects with the item fields (see
`Item`); `items.get(i)` reads item i back as an `Item`. Every handle is a
context manager (and is freed by the garbage collector otherwise).

Arguments are checked before they reach the C library, and every failure
names the argument as this package spells it:

- None where a value or handle is required, a value of the wrong type
  (a float, a bool or a str where an int is wanted): `TypeError`
  (`ArgumentTypeError`);
- a value outside its domain (NaN, a negative count, an empty kind, text
  that is not valid Unicode, an int that does not fit 64 bits):
  `ValueError` (`InvalidArgumentError`);
- an item index out of range (negative indices are not taken):
  `IndexError` (`IndexOutOfRangeError`);
- a handle used after `close()`: `ValueError` (`ClosedError`), as Python
  raises for I/O on a closed file.

All of them are `CupelError`s, carrying a `status` and the `message`. A
call that fails changes nothing.
"""

from __future__ import annotations

import array
import ctypes as C
import dataclasses
import enum
import json as _json
import math
import numbers
import operator
from typing import Any, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native as N

__all__ = [
    "ArgumentTypeError", "Budget", "CapacityError", "Chronological", "ClosedError", "CountConstrainedKnapsack",
    "CountQuota", "CupelError", "Decision", "Greedy", "IndexOutOfRangeError", "InvalidArgumentError", "Item",
    "Items", "Knapsack", "Overflow", "OverflowError_", "Pipeline", "Placer", "Quota", "Reason", "Report",
    "Scarcity", "ScarcityError", "Scorer", "Shortfall", "Slicer", "Status", "Stream", "UShaped",
    "UnsupportedError", "abi_version", "find_min_budget", "live_handles", "marginal_items", "reason_name",
    "scorers", "slice", "version",
]

_lib = N.lib
_SIZE_MAX = C.c_size_t(-1).value
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_U64_MAX = (1 << 64) - 1
# What Rust's str::trim takes away (Unicode White_Space): a kind or a source
# made only of these is refused, as the library refuses it.
_WHITESPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
              "\u2028\u2029\u202f\u205f\u3000"


# ---- errors -------------------------------------------------------------------


class Status(enum.IntEnum):
    """libcupel's `cupel_status` codes."""

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
    """A failed libcupel call: `status` (a `Status`) and the `message`, which
    names the argument (`str(error)` is the message)."""

    def __init__(self, status: int, message: str):
        self.status = Status(status) if status in Status._value2member_map_ else status
        self.message = message
        super().__init__(message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.status!r}, {self.message!r})"


class InvalidArgumentError(CupelError, ValueError):
    """An argument outside its domain (CUPEL_ERROR_INVALID_ARGUMENT): also a `ValueError`."""


class ArgumentTypeError(CupelError, TypeError):
    """None where a value or handle is required (status NULL_POINTER), or an
    argument of the wrong type (status INVALID_ARGUMENT): also a `TypeError`."""


class IndexOutOfRangeError(CupelError, IndexError):
    """An item index outside the list (negative ones included): also an `IndexError`."""


class ClosedError(InvalidArgumentError):
    """A handle used after `close()` (status NULL_POINTER: the native object
    is gone): a `ValueError`, as for I/O on a closed file."""


class ScarcityError(CupelError):
    """A count slicer with Scarcity.ERROR found too few items of a kind."""


class UnsupportedError(CupelError):
    """The operation is not defined for this slicer."""


class CapacityError(CupelError, MemoryError):
    """The memory limit would be exceeded."""


class OverflowError_(CupelError):
    """The pipeline's Throw strategy: the selection exceeds the target."""


_ERRORS = {1: ArgumentTypeError, 2: InvalidArgumentError, 4: ScarcityError,
           5: UnsupportedError, 6: CapacityError, 8: OverflowError_}


def _check(st: int) -> None:
    """Raises the error class of a failed status, with the library's message."""
    if st != 0:
        raise _ERRORS.get(st, CupelError)(st, (_lib.cupel_last_error() or b"").decode("utf-8", "replace"))


def _what(v: Any) -> str:
    """A value as error messages show it: its type, and its repr if short."""
    if v is None:
        return "None"
    r = repr(v)
    return f"{type(v).__name__} ({r if len(r) <= 40 else r[:37] + '...'})"


def _bad_type(name: str, v: Any, wanted: str) -> ArgumentTypeError:
    if v is None:
        return ArgumentTypeError(Status.NULL_POINTER, f"{name} is None; it must be {wanted}")
    return ArgumentTypeError(Status.INVALID_ARGUMENT, f"{name} must be {wanted}, not {_what(v)}")


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(Status.INVALID_ARGUMENT, message)


def _int(v: Any, name: str) -> int:
    """An integer argument as a Python int: an int or anything with
    `__index__` (NumPy integers), never a bool, a float or a str."""
    if isinstance(v, bool) or not hasattr(type(v), "__index__"):
        raise _bad_type(name, v, "an int")
    return operator.index(v)


def _range_message(name: str, v: int, signed: bool) -> str:
    # The value itself is not shown: 2**63 and 2**64 - 1 would read as the C
    # sentinels INT64_MIN / UINT64_MAX.
    if signed:
        edge = "2**63 or more" if v > 0 else "below -2**63"
        return f"{name} does not fit a 64-bit signed integer (it is {edge})"
    return f"{name} does not fit a 64-bit unsigned integer (it is 2**64 or more)"


def _i64(v: Any, name: str) -> int:
    """An int64 argument: TypeError for a non-int, ValueError (before ctypes
    converts it) for one outside [-2**63, 2**63)."""
    i = _int(v, name)
    if not _I64_MIN <= i <= _I64_MAX:
        raise _invalid(_range_message(name, i, True))
    return i


def _u64(v: Any, name: str) -> int:
    """A uint64 argument (a group id): ValueError when negative or >= 2**64."""
    i = _int(v, name)
    if i < 0:
        raise _invalid(f"{name} is {i}; it must be >= 0")
    if i > _U64_MAX:
        raise _invalid(_range_message(name, i, False))
    return i


def _size(v: Any, name: str) -> int:
    """A size_t count argument (not an index): ValueError when negative or too large."""
    i = _int(v, name)
    if not 0 <= i <= _SIZE_MAX:
        raise _invalid(f"{name} is {i}; it must be >= 0" if i < 0 else
                       f"{name} does not fit a size_t (it is 2**{_SIZE_MAX.bit_length()} or more)")
    return i


def _index(v: Any, name: str, length: int) -> int:
    """An item index, 0 <= index < length: TypeError for a non-int,
    IndexError otherwise (negative indices included)."""
    i = _int(v, name)
    if not 0 <= i < length:
        hint = " (negative indices are not taken)" if i < 0 else ""
        valid = f"0 to {length - 1}" if length else "none: the list is empty"
        raise IndexOutOfRangeError(Status.INVALID_ARGUMENT,
                                   f"{name} is {i}, out of range: the list holds {length} items "
                                   f"(valid indices: {valid}){hint}")
    return i


def _f64(v: Any, name: str) -> float:
    """A double argument: an int or a float (a real number), not a bool or a
    str. Non-finite values are passed on: the library names them."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise _bad_type(name, v, "a number (int or float)")
    return float(v)


def _bool(v: Any, name: str) -> bool:
    """A bool argument: True or False (or a NumPy bool), not an int or a str."""
    if isinstance(v, bool):
        return v
    if type(v).__module__ == "numpy" and type(v).__name__ in ("bool_", "bool"):
        return bool(v)
    raise _bad_type(name, v, "a bool")


def _text(v: Any, name: str) -> str:
    """Checks a str argument for what the C string cannot carry."""
    if not isinstance(v, str):
        raise _bad_type(name, v, "a str")
    if "\0" in v:
        raise _invalid(f"{name} contains a NUL character at position {v.index(chr(0))}; C strings cannot carry it")
    return v


def _utf8(v: str, name: str) -> bytes:
    try:
        return v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _invalid(f"{name} is not valid Unicode text (a lone surrogate U+{ord(v[e.start]):04X} "
                       f"at position {e.start}); it cannot be encoded as UTF-8") from None


def _str(v: Any, name: str) -> bytes:
    """A required string argument as NUL-terminated UTF-8 bytes."""
    return _utf8(_text(v, name), name)


def _opt_str(v: Any, name: str) -> Optional[bytes]:
    """A string argument where None means the library's default."""
    return None if v is None else _str(v, name)


def _blank(s: str) -> bool:
    return s.strip(_WHITESPACE) == ""


def _name_of(v: Any, name: str, what: str) -> bytes:
    """A kind or a source: a non-empty str that is not only whitespace."""
    b = _str(v, name)
    if _blank(v):
        raise _invalid(f"{name} {v!r} is empty or only whitespace; {what} needs a visible name")
    return b


def _ptr(obj: Any, cls: type, name: str) -> int:
    """The native pointer of handle argument `name`, which must be an open `cls`."""
    if obj is None:
        raise ArgumentTypeError(Status.NULL_POINTER, f"{name} is None; it must be {cls._article} {cls.__name__}")
    if not isinstance(obj, cls):
        raise ArgumentTypeError(Status.INVALID_ARGUMENT,
                                f"{name} must be {cls._article} {cls.__name__}, not {type(obj).__name__}")
    p = obj._ptr
    if p is None:
        raise ClosedError(Status.NULL_POINTER, f"{name} is closed: this {type(obj).__name__} was closed before the call")
    return p


def version() -> str:
    """libcupel's version string, "MAJOR.MINOR.PATCH"."""
    return _lib.cupel_version().decode()


def abi_version() -> int:
    """The C ABI version of the loaded library (1)."""
    return _lib.cupel_abi_version()


def live_handles() -> int:
    """Native handles not yet freed (a leak check)."""
    return _lib.cupel_live_handles()


# ---- handles ------------------------------------------------------------------


class _Handle:
    """A native handle: a context manager; `close()` frees it (idempotent)."""

    _free = None  # the cupel_*_free function
    _noun = "handle"  # how messages name this object when it is the receiver
    _article = "a"

    def __init__(self, create) -> None:
        out = C.c_void_p()
        _check(create(C.byref(out)))
        self._ptr: Optional[int] = out.value

    @property
    def _raw(self) -> int:
        if self._ptr is None:
            raise ClosedError(Status.NULL_POINTER,
                              f"{self._noun} is closed: this {type(self).__name__} was closed before the call")
        return self._ptr

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return getattr(self, "_ptr", None) is None

    def close(self) -> None:
        """Frees the native object; idempotent. Using it afterwards raises `ClosedError`."""
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
    """One candidate. Only `tokens` is required; None means absent. Read back
    by `Items.get`, `kind` is the kind ("Message" by default) and `source`
    the source ("Chat" by default)."""

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
_ABSENT = (dataclasses.MISSING, None)


def _int_column(col: List[Any], name: str, signed: bool = True) -> List[int]:
    """A column of int64 (or uint64) values, checked; `name` formats an index
    into the name of element i, e.g. "tokens[{}]"."""
    if not set(map(type, col)) <= {int}:
        col = [_int(v, name.format(i)) for i, v in enumerate(col)]
    lo, hi = (_I64_MIN, _I64_MAX) if signed else (0, _U64_MAX)
    if col and (min(col) < lo or max(col) > hi):
        i, v = next((i, v) for i, v in enumerate(col) if not lo <= v <= hi)
        raise _invalid(f"{name.format(i)} is {v}; it must be >= 0" if v < 0 and not signed
                       else _range_message(name.format(i), v, signed))
    return col


def _float_column(col: List[Any], name: str) -> List[Any]:
    if not set(map(type, col)) <= {float, int}:
        for i, v in enumerate(col):
            _f64(v, name.format(i))
    return col


def _bool_column(col: List[Any], name: str) -> List[bool]:
    if not set(map(type, col)) <= {bool}:
        col = [_bool(v, name.format(i)) for i, v in enumerate(col)]
    return col


def _packed(col: Sequence[Optional[str]], name: str, what: Optional[str] = None) -> bytes:
    """A column of strings as the packed form: NUL-terminated UTF-8 back to
    back, None as the empty string (the default kind / content unchanged).
    Checked here for what the form cannot carry ("", NUL, lone surrogates)
    and, with `what`, for kinds made only of whitespace."""
    col = list(col)
    if not set(map(type, col)) <= {str, type(None)}:
        for i, x in enumerate(col):
            if x is not None:
                _text(x, name.format(i))
    if "" in col:
        raise _invalid(f"{name.format(col.index(''))} is empty; it must be a non-empty string")
    joined = "\0".join(x or "" for x in col)
    if joined.count("\0") != len(col) - 1:
        for i, x in enumerate(col):
            if x:
                _text(x, name.format(i))
    if what is not None:
        for i, x in enumerate(col):
            if x is not None and _blank(x):
                raise _invalid(f"{name.format(i)} {x!r} is empty or only whitespace; {what} needs a visible name")
    try:
        return joined.encode("utf-8") + b"\0"
    except UnicodeEncodeError:
        for i, x in enumerate(col):
            if x:
                _utf8(x, name.format(i))
        raise


def _field(record: Any, name: str) -> Any:
    if isinstance(record, Mapping):
        return record.get(name, dataclasses.MISSING)
    return getattr(record, name, dataclasses.MISSING)


def _string_out(ptr: C.c_void_p, n: C.c_size_t) -> Optional[str]:
    return None if not ptr.value else C.string_at(ptr.value, n.value).decode("utf-8")


class Items(_Handle):
    """The scored candidates; an item's index is its position (push order,
    from 0). `len(items)` counts them, `items.get(i)` reads one back, and
    iterating yields every item as an `Item`."""

    _free = _lib.cupel_items_free
    _noun = "items"
    _article = "an"

    def __init__(self, records: Iterable[Any] = ()) -> None:
        """An item list holding `records` (see `extend`)."""
        super().__init__(_lib.cupel_items_new)
        self.extend(records)

    @classmethod
    def from_records(cls, records: Iterable[Any]) -> "Items":
        """Items from dicts, dataclasses or objects with `Item`'s fields."""
        return cls(records)

    def push(self, tokens: int, score: float = 0.0, kind: Optional[str] = None) -> int:
        """Appends one item and returns its index. `kind` None is the
        default kind "Message"."""
        h = self._raw
        _check(_lib.cupel_items_push(h, _i64(tokens, "tokens"), _f64(score, "score"), _opt_str(kind, "kind")))
        return len(self) - 1

    def extend(self, records: Iterable[Any]) -> "Items":
        """Adds records (dicts, dataclasses or objects with `Item`'s fields;
        None or a missing field means absent). Every field is checked first
        (errors name `records[i].field`), so a failure adds nothing. One
        native call per column, plus one per tag, metadata entry or source."""
        h = self._raw
        recs = list(records)
        n = len(recs)
        if n == 0:
            return self
        col = {name: [_field(r, name) for r in recs] for name in _FIELDS}
        for i, t in enumerate(col["tokens"]):
            if t is dataclasses.MISSING:
                raise ArgumentTypeError(Status.INVALID_ARGUMENT, f"records[{i}] has no tokens; every record needs them")
        tokens = _int_column(col["tokens"], "records[{}].tokens")
        scores = _float_column([0.0 if v in _ABSENT else v for v in col["score"]], "records[{}].score")
        kinds = _packed([None if v in _ABSENT else v for v in col["kind"]], "records[{}].kind", "a kind")
        contents = _packed([None if v in _ABSENT else v for v in col["content"]], "records[{}].content")
        sparse = {}
        for name, conv in [("timestamp", _i64), ("priority", _i64), ("relevance_hint", _f64)]:
            sparse[name] = [(i, conv(v, f"records[{i}].{name}")) for i, v in enumerate(col[name]) if v not in _ABSENT]
        pinned = _bool_column([False if v in _ABSENT else v for v in col["pinned"]], "records[{}].pinned")
        groups = _int_column([0 if v in _ABSENT else v for v in col["group"]], "records[{}].group", signed=False)
        sources = [(i, _name_of(v, f"records[{i}].source", "a source"))
                   for i, v in enumerate(col["source"]) if v not in _ABSENT]
        tags = []
        for i, v in enumerate(col["tags"]):
            if v in _ABSENT:
                continue
            if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
                raise _bad_type(f"records[{i}].tags", v, "a list of str")
            tags += [(i, _str(t, f"records[{i}].tags[{k}]")) for k, t in enumerate(v)]
        metadata = []
        for i, v in enumerate(col["metadata"]):
            if v in _ABSENT:
                continue
            if not isinstance(v, Mapping):
                raise _bad_type(f"records[{i}].metadata", v, "a mapping of str to str")
            metadata += [(i, _str(k, f"records[{i}].metadata key"), _str(x, f"records[{i}].metadata[{k!r}]"))
                         for k, x in v.items()]

        # Everything is checked: from here on no call can fail on an argument.
        first = len(self)
        _check(_lib.cupel_items_push_many_packed(h, n, (C.c_int64 * n).from_buffer(array.array("q", tokens)),
                                                 (C.c_double * n).from_buffer(array.array("d", scores)),
                                                 kinds, len(kinds)))
        _check(_lib.cupel_items_set_contents_packed(h, first, n, contents, len(contents)))
        for name, bulk, ctype, single in [
            ("timestamp", _lib.cupel_items_set_timestamps, C.c_int64, _lib.cupel_items_set_timestamp),
            ("priority", _lib.cupel_items_set_priorities, C.c_int64, _lib.cupel_items_set_priority),
            ("relevance_hint", _lib.cupel_items_set_relevance_hints, C.c_double, _lib.cupel_items_set_relevance_hint),
        ]:
            have = sparse[name]
            if len(have) == n:
                _check(bulk(h, first, n, (ctype * n)(*[v for _, v in have])))
            else:
                for i, v in have:
                    _check(single(h, first + i, v))
        _check(_lib.cupel_items_set_pinned_many(h, first, n, (C.c_bool * n)(*pinned)))
        _check(_lib.cupel_items_set_groups(h, first, n, (C.c_uint64 * n)(*groups)))
        for i, v in sources:
            _check(_lib.cupel_items_set_source(h, first + i, v))
        for i, tag in tags:
            _check(_lib.cupel_items_add_tag(h, first + i, tag))
        for i, key, value in metadata:
            _check(_lib.cupel_items_set_metadata(h, first + i, key, value))
        return self

    @classmethod
    def from_columns(cls, tokens: Sequence[int], scores: Optional[Sequence[float]] = None, *,
                     kinds: Optional[Sequence[Optional[str]]] = None,
                     contents: Optional[Sequence[Optional[str]]] = None,
                     timestamps: Optional[Sequence[int]] = None, priorities: Optional[Sequence[int]] = None,
                     pinned: Optional[Sequence[bool]] = None, relevance_hints: Optional[Sequence[float]] = None,
                     groups: Optional[Sequence[int]] = None) -> "Items":
        """Items from parallel columns (the fast path for large lists: each
        column goes in one native call, strings packed into one buffer).
        `scores` defaults to 0.0; a None kind is the default kind, a None
        content no content."""
        items = cls()
        try:
            items.extend_columns(tokens, scores, kinds=kinds, contents=contents, timestamps=timestamps,
                                 priorities=priorities, pinned=pinned, relevance_hints=relevance_hints,
                                 groups=groups)
        except BaseException:
            items.close()
            raise
        return items

    def extend_columns(self, tokens: Sequence[int], scores: Optional[Sequence[float]] = None, *,
                       kinds: Optional[Sequence[Optional[str]]] = None,
                       contents: Optional[Sequence[Optional[str]]] = None,
                       timestamps: Optional[Sequence[int]] = None, priorities: Optional[Sequence[int]] = None,
                       pinned: Optional[Sequence[bool]] = None, relevance_hints: Optional[Sequence[float]] = None,
                       groups: Optional[Sequence[int]] = None) -> "Items":
        """Adds items given as columns (see `from_columns`), all or nothing:
        every column is checked first (errors name `column[i]`)."""
        h = self._raw
        cols = {"tokens": tokens, "scores": scores, "kinds": kinds, "contents": contents,
                "timestamps": timestamps, "priorities": priorities, "pinned": pinned,
                "relevance_hints": relevance_hints, "groups": groups}
        for name, col in cols.items():
            if col is None:
                if name == "tokens":
                    raise _bad_type("tokens", None, "a sequence of int")
                continue
            if isinstance(col, (str, bytes)) or not hasattr(col, "__len__"):
                raise _bad_type(name, col, "a sequence")
        n = len(tokens)
        for name, col in cols.items():
            if col is not None and len(col) != n:
                raise _invalid(f"{name} has {len(col)} values for {n} tokens")
        if n == 0:
            return self
        tk = _int_column(list(tokens), "tokens[{}]")
        sc = _float_column(list(scores), "scores[{}]") if scores is not None else None
        k = _packed(kinds, "kinds[{}]") if kinds is not None else None
        c = _packed(contents, "contents[{}]") if contents is not None else None
        ts = _int_column(list(timestamps), "timestamps[{}]") if timestamps is not None else None
        pr = _int_column(list(priorities), "priorities[{}]") if priorities is not None else None
        pn = _bool_column(list(pinned), "pinned[{}]") if pinned is not None else None
        rh = _float_column(list(relevance_hints), "relevance_hints[{}]") if relevance_hints is not None else None
        gr = _int_column(list(groups), "groups[{}]", signed=False) if groups is not None else None

        # Everything is checked; the push itself checks scores and kinds
        # (all or nothing), and nothing after it can fail on an argument.
        first = len(self)
        i64 = lambda col: (C.c_int64 * n).from_buffer(array.array("q", col))
        f64 = lambda col: (C.c_double * n).from_buffer(array.array("d", col))
        _check(_lib.cupel_items_push_many_packed(h, n, i64(tk), f64(sc) if sc is not None else (C.c_double * n)(),
                                                 k, 0 if k is None else len(k)))
        if c is not None:
            _check(_lib.cupel_items_set_contents_packed(h, first, n, c, len(c)))
        if ts is not None:
            _check(_lib.cupel_items_set_timestamps(h, first, n, i64(ts)))
        if pr is not None:
            _check(_lib.cupel_items_set_priorities(h, first, n, i64(pr)))
        if pn is not None:
            _check(_lib.cupel_items_set_pinned_many(h, first, n, (C.c_bool * n).from_buffer(
                array.array("b", [1 if x else 0 for x in pn]))))
        if rh is not None:
            _check(_lib.cupel_items_set_relevance_hints(h, first, n, f64(rh)))
        if gr is not None:
            _check(_lib.cupel_items_set_groups(h, first, n, (C.c_uint64 * n).from_buffer(array.array("Q", gr))))
        return self

    def _at(self, index: Any) -> Tuple[int, int]:
        h = self._raw
        return h, _index(index, "index", _lib.cupel_items_len(h))

    def set_content(self, index: int, content: str) -> None:
        """Sets item `index`'s content (a non-empty str), replacing an
        earlier one. Deduplication compares contents exactly."""
        h, i = self._at(index)
        _check(_lib.cupel_items_set_content(h, i, _str(content, "content")))

    def set_timestamp(self, index: int, unix_millis: int) -> None:
        """Sets item `index`'s timestamp, in UTC milliseconds since the epoch."""
        h, i = self._at(index)
        _check(_lib.cupel_items_set_timestamp(h, i, _i64(unix_millis, "unix_millis")))

    def set_priority(self, index: int, priority: int) -> None:
        """Sets item `index`'s priority (higher is more important)."""
        h, i = self._at(index)
        _check(_lib.cupel_items_set_priority(h, i, _i64(priority, "priority")))

    def set_pinned(self, index: int, pinned: bool = True) -> None:
        """Pins item `index` (or unpins it): a pipeline includes it unscored."""
        h, i = self._at(index)
        _check(_lib.cupel_items_set_pinned(h, i, _bool(pinned, "pinned")))

    def set_relevance_hint(self, index: int, hint: float) -> None:
        """Sets item `index`'s relevance hint (the Reflexive scorer's input)."""
        h, i = self._at(index)
        _check(_lib.cupel_items_set_relevance_hint(h, i, _f64(hint, "hint")))

    def set_group(self, index: int, group: int) -> None:
        """Puts item `index` in keep-together group `group` (0: none; 0 to 2**64 - 1)."""
        h, i = self._at(index)
        _check(_lib.cupel_items_set_group(h, i, _u64(group, "group")))

    def set_source(self, index: int, source: str) -> None:
        """Sets item `index`'s source ("Chat" when never set)."""
        h, i = self._at(index)
        _check(_lib.cupel_items_set_source(h, i, _name_of(source, "source", "a source")))

    def add_tag(self, index: int, tag: str) -> None:
        """Adds a tag to item `index` (tags accumulate, repeats included)."""
        h, i = self._at(index)
        _check(_lib.cupel_items_add_tag(h, i, _str(tag, "tag")))

    def set_metadata(self, index: int, key: str, value: str) -> None:
        """Sets metadata `key` of item `index` to `value` (both str)."""
        h, i = self._at(index)
        _check(_lib.cupel_items_set_metadata(h, i, _str(key, "key"), _str(value, "value")))

    def get(self, index: int) -> Item:
        """Item `index` read back as an `Item`: tokens, score and kind as
        pushed, content / timestamp / priority / relevance_hint None when
        absent, pinned, source ("Chat" unless set), group, tags (a tuple, in
        the order added) and metadata (a dict, in the order keys were first
        set). IndexError for an index outside 0 .. len - 1."""
        h, i = self._at(index)
        tokens, score, present, group, count, pinned = (C.c_int64(), C.c_double(), C.c_bool(), C.c_uint64(),
                                                         C.c_size_t(), C.c_bool())
        ptr, n, ptr2, n2 = C.c_void_p(), C.c_size_t(), C.c_void_p(), C.c_size_t()
        _check(_lib.cupel_items_tokens(h, i, C.byref(tokens)))
        _check(_lib.cupel_items_score(h, i, C.byref(score)))

        def text(fn) -> Optional[str]:
            _check(fn(h, i, C.byref(ptr), C.byref(n)))
            return _string_out(ptr, n)

        def optional(fn, ctype):
            value = ctype()
            _check(fn(h, i, C.byref(present), C.byref(value)))
            return value.value if present.value else None

        kind, content, source = text(_lib.cupel_items_kind), text(_lib.cupel_items_content), \
            text(_lib.cupel_items_source)
        timestamp = optional(_lib.cupel_items_timestamp, C.c_int64)
        priority = optional(_lib.cupel_items_priority, C.c_int64)
        hint = optional(_lib.cupel_items_relevance_hint, C.c_double)
        _check(_lib.cupel_items_pinned(h, i, C.byref(pinned)))
        _check(_lib.cupel_items_group(h, i, C.byref(group)))
        _check(_lib.cupel_items_tag_count(h, i, C.byref(count)))
        tags = []
        for k in range(count.value):
            _check(_lib.cupel_items_tag(h, i, k, C.byref(ptr), C.byref(n)))
            tags.append(_string_out(ptr, n) or "")
        _check(_lib.cupel_items_metadata_count(h, i, C.byref(count)))
        metadata = {}
        for k in 