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

Text in: `cupel.Tokenizer("o200k_base")` (or "cl100k_base", or any tiktoken
vocabulary file through `Tokenizer.from_tiktoken`) counts tokens exactly as
tiktoken does and truncates text to a token budget (`truncate`, ranges in
str indices); `items.push_text(tokenizer, text, score)` and
`items.extend_texts(...)` push items whose tokens are their text's count.

Items that shrink instead of vanishing: `items.add_variant(i, tokens, value,
content)` (or `variants=[cupel.Variant(...)]` on a push) gives an item
smaller stand-ins a run may take instead; `items.set_truncatable(i, keep,
min_tokens)` (or `truncatable=` on a push) lets a run with a tokenizer
(`Pipeline(tokenizer=...)`) cut it down. Each included `Decision` says
which `variant` was taken, the `tokens_added`, the cut (`head_end`,
`tail_start`: UTF-8 byte offsets) and the `text` to send.

In one call: `cupel.select(messages, max_tokens, policy="Chat")` keeps the
messages (dicts or objects with a `text`; see `Message`) that fit, in prompt
order, with keep-together groups from `group`, `tool_call_id` and
`tool_call_ids`. Policies as data: `Pipeline.from_json` / `to_json`,
`Pipeline.preset(name)` (`preset_names()`), `Budget.from_json` / `to_json`;
`policy_sensitivity` compares pipelines on the same items; every `Report`
has `budget_utilization`, `kind_diversity` and `timestamp_coverage`;
`Pipeline.set_trace(callback, level)` traces runs (`TraceEvent`), and
`cupel.otel.instrument` makes OpenTelemetry spans of them.

Sessions (cache-stable selection across the turns of a conversation):
`cupel.Session(pipeline)` runs the pipeline turn after turn, changing the
previous turn's prompt only at its end whenever it can, so that a
provider's prompt cache keeps serving its prefix. Items carry an identity
`key` (an int, 0 = none) and a `volatile` flag (`push(..., key=...,
volatile=...)`, `set_key`, `set_volatile`); `session.run(items, budget)`
gives the indices, `last_action` the rule it took (`SessionAction`),
`stable_prefix` the (items, tokens) unchanged since the last turn and
`breakpoints` where to put cache breakpoints.

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
import datetime
import enum
import itertools
import json as _json
import math
import numbers
import operator
import os
import struct as _struct
import threading
import weakref
from typing import Any, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from . import _native as N

__all__ = [
    "ArgumentTypeError", "Breakpoint", "BreakpointMark", "Budget", "CapacityError", "Chronological", "ClosedError", "CountConstrainedKnapsack",
    "CountQuota", "CupelError", "Decision", "Greedy", "IndexOutOfRangeError", "InvalidArgumentError", "Item",
    "Items", "Keep", "Knapsack", "Overflow", "OverflowError_", "Pipeline", "Placer", "Quota", "Reason", "Report",
    "Scarcity", "ScarcityError", "Scorer", "Session", "SessionAction", "Shortfall", "Slicer", "StablePrefix", "Status", "Stream", "Tokenizer", "Truncatable",
    "Truncation", "UShaped", "UnsupportedError", "Variant", "abi_version", "find_min_budget", "live_handles",
    "marginal_items", "reason_name", "scorers", "slice", "version",
    "Message", "Sensitivity", "SensitivityDiff", "SensitivityVariant", "TraceEvent", "TraceKind", "TraceLevel",
    "policy_sensitivity", "preset_names", "select",
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


# C functions a library message may name, as this package spells them.
_C_NAMES = {"cupel_pipeline_set_tokenizer": "Pipeline.set_tokenizer", "cupel_items_set_content": "Items.set_content"}


def _check(st: int) -> None:
    """Raises the error class of a failed status, with the library's message."""
    if st != 0:
        msg = (_lib.cupel_last_error() or b"").decode("utf-8", "replace")
        if "(cupel_" in msg:
            for c_name, py_name in _C_NAMES.items():
                msg = msg.replace(f"({c_name})", f"({py_name})")
        raise _ERRORS.get(st, CupelError)(st, msg)


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


class Keep(enum.IntEnum):
    """What is kept of a text cut down (the C ABI's `cupel_keep`): by
    `Tokenizer.truncate`, and by a pipeline run for a truncatable item
    (`Items.set_truncatable`). Both also take the strings "head", "tail"
    and "both_ends"."""

    HEAD = 0
    """The beginning of the text."""
    TAIL = 1
    """The end of the text."""
    BOTH_ENDS = 2
    """The beginning and the end; the middle goes."""


_KEEP_NAMES = {"head": Keep.HEAD, "tail": Keep.TAIL, "both_ends": Keep.BOTH_ENDS}


def _keep(v: Any, name: str = "keep") -> Keep:
    """A keep argument: a `Keep` (or its int value), or one of the strings
    "head", "tail", "both_ends" (any case)."""
    wanted = "a cupel.Keep or one of 'head', 'tail', 'both_ends'"
    if isinstance(v, str):
        k = _KEEP_NAMES.get(v.lower())
        if k is None:
            raise _invalid(f"{name} is {v!r}; it must be {wanted}")
        return k
    if isinstance(v, bool) or not hasattr(type(v), "__index__"):
        raise _bad_type(name, v, wanted)
    i = operator.index(v)
    if i not in Keep._value2member_map_:
        raise _invalid(f"{name} is {i}; it must be {wanted} (Keep values are 0, 1 and 2)")
    return Keep(i)


# ---- items that shrink: variants and truncation ---------------------------------

_MAX_VARIANTS = 255


@dataclasses.dataclass(frozen=True)
class Variant:
    """A smaller stand-in for an item (a summary, a digest, a placeholder
    such as "[output cleared]") that selection may take instead of it:
    `tokens` (>= 0) is what it adds to the context, `value` in (0, 1] the
    share of the item's score it keeps, `content` its text (None: none).
    Variants are numbered 1, 2, ... in the order added; variant 0 is the
    item as pushed, and a run takes at most one option of an item."""

    tokens: int
    value: float
    content: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Truncatable:
    """How a pipeline run may cut an item down to fill what the slicer
    left: keep its head, its tail or both ends (`keep`, a `Keep` or its
    string), never below `min_tokens` (>= 0). A string keep is taken as
    its `Keep`."""

    keep: Keep = Keep.HEAD
    min_tokens: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.keep, str) and self.keep.lower() in _KEEP_NAMES:
            object.__setattr__(self, "keep", _KEEP_NAMES[self.keep.lower()])


def _variant_fields(tokens: Any, value: Any, content: Any, prefix: str = "") -> Tuple[int, float, Optional[bytes]]:
    """A variant's fields checked, as the C call takes them; messages name
    `prefix` + the field."""
    t = _i64(tokens, prefix + "tokens")
    if t < 0:
        raise _invalid(f"{prefix}tokens is {t}; a variant's tokens must be >= 0")
    v = _f64(value, prefix + "value")
    if not 0.0 < v <= 1.0:
        shown = "NaN" if math.isnan(v) else repr(value)
        raise _invalid(f"{prefix}value is {shown}; it must be in (0, 1]: the share of the item's score "
                       f"the variant keeps")
    c = None
    if content is not None:
        c = _str(content, prefix + "content")
        if not c:
            raise _invalid(f"{prefix}content is empty; pass None for a variant without content")
    return t, v, c


_VARIANT_KEYS = ("tokens", "value", "content")


def _variants_arg(variants: Any, name: str) -> List[Tuple[int, float, Optional[bytes]]]:
    """A list of variants: each a `Variant`, a (tokens, value) or (tokens,
    value, content) tuple, or a dict with those keys. Errors name the
    element, `name[k].field`."""
    wanted = "a list of cupel.Variant, (tokens, value[, content]) tuples or dicts"
    if isinstance(variants, (str, bytes, Mapping, Variant)) or not isinstance(variants, Iterable):
        raise _bad_type(name, variants, wanted)
    out = []
    for k, v in enumerate(variants):
        at = f"{name}[{k}]"
        if isinstance(v, Variant):
            fields = (v.tokens, v.value, v.content)
        elif isinstance(v, Mapping):
            for key in v:
                if key not in _VARIANT_KEYS:
                    raise _invalid(f"{at} has the key {key!r}; a variant has only tokens, value and content")
            fields = tuple(v.get(key) for key in _VARIANT_KEYS)
        elif isinstance(v, (tuple, list)) and len(v) in (2, 3):
            fields = (*v, None)[:3]
        else:
            raise _bad_type(at, v, "a cupel.Variant, a (tokens, value[, content]) tuple or a dict")
        out.append(_variant_fields(*fields, prefix=at + "."))
    if len(out) > _MAX_VARIANTS:
        raise _invalid(f"{name} has {len(out)} variants; an item has at most {_MAX_VARIANTS}")
    return out


def _min_tokens(v: Any, name: str) -> int:
    m = _i64(v, name)
    if m < 0:
        raise _invalid(f"{name} is {m}; it must be >= 0")
    return m


def _truncatable_arg(v: Any, name: str) -> Optional[Tuple[Keep, int]]:
    """How an item may be cut, or None: a `Truncatable`, a keep (a `Keep`
    or its string; min_tokens 0), a (keep, min_tokens) pair, a dict with
    those keys, True (head, 0), or None / False (not truncatable)."""
    if v is None or v is False:
        return None
    if v is True:
        return Keep.HEAD, 0
    if isinstance(v, Truncatable):
        keep, m = v.keep, v.min_tokens
    elif isinstance(v, (str, Keep)):
        keep, m = v, 0
    elif isinstance(v, Mapping):
        for key in v:
            if key not in ("keep", "min_tokens"):
                raise _invalid(f"{name} has the key {key!r}; it has only keep and min_tokens")
        keep, m = v.get("keep", Keep.HEAD), v.get("min_tokens", 0)
    elif isinstance(v, (tuple, list)) and len(v) == 2:
        keep, m = v
    else:
        raise _bad_type(name, v, "a cupel.Truncatable, a keep ('head', 'tail', 'both_ends' or a cupel.Keep), "
                                 "a (keep, min_tokens) pair, True or None")
    return _keep(keep, f"{name}.keep"), _min_tokens(m, f"{name}.min_tokens")


def _attach(h: int, at: int, variants: List[Tuple[int, float, Optional[bytes]]],
            truncatable: Optional[Tuple[Keep, int]]) -> None:
    """Adds checked variants to item `at` and makes it truncatable."""
    for t, v, c in variants:
        _check(_lib.cupel_items_add_variant(h, at, t, v, c))
    if truncatable is not None:
        _check(_lib.cupel_items_set_truncatable(h, at, int(truncatable[0]), truncatable[1]))


def _identity(h: int, at: int, key: int, volatile: bool) -> None:
    """Sets item `at`'s checked session key and volatile flag (when not the defaults)."""
    if key:
        _check(_lib.cupel_items_set_key(h, at, key))
    if volatile:
        _check(_lib.cupel_items_set_volatile(h, at, True))


def _key(v: Any, name: str = "key") -> int:
    """A session key: an int from 0 to 2**64 - 1 (None: 0, no key)."""
    return 0 if v is None else _u64(v, name)


def _or_undo(h: int, first: int, then) -> None:
    """Runs `then` (the calls after a push); if it fails, removes the items
    pushed from index `first` on (cupel_items_truncate) and re-raises, so
    the push is all or nothing."""
    try:
        then()
    except BaseException:
        _lib.cupel_items_truncate(h, first)
        raise


@dataclasses.dataclass
class Item:
    """One candidate. Only `tokens` is required; None means absent. Read back
    by `Items.get`, `kind` is the kind ("Message" by default) and `source`
    the source ("Chat" by default). `variants` (a list of `Variant`s, or of
    (tokens, value[, content]) tuples or dicts when pushed) and
    `truncatable` (a `Truncatable`, or what `Items.push` takes) make an item
    that shrinks instead of vanishing; read back, `variants` is a tuple of
    `Variant`s. `key` and `volatile` are for sessions (`Session`): the
    item's identity from one turn to the next (0: none) and whether it
    changes every turn."""

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
    variants: Sequence[Variant] = ()  # smaller stand-ins, variant 1 first (see `Variant`)
    truncatable: Optional[Truncatable] = None  # how a run may cut it (see `Truncatable`)
    key: int = 0  # identity key for sessions, 0 to 2**64 - 1 (0: none; see `Items.set_key`)
    volatile: bool = False  # expected to change every turn: a session places it last (see `Items.set_volatile`)


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


# Columns as C arrays. Each `_*_buffer` checks a column as `_*_column` does
# and, when every value has the plain type (the usual case), packs it in one
# C-speed pass; otherwise it returns `_*_column`'s checked list, which
# `_c_array` converts later (as before: after every column is checked).
def _all_of(col: List[Any], t: type, also: Optional[type] = None) -> bool:
    """Whether every value of `col` is exactly of type `t` (or `also`): one
    C-speed pass (list.count compares by identity first)."""
    types = list(map(type, col))
    k = types.count(t)
    return k == len(types) or (also is not None and k + types.count(also) == len(types))


def _pack(col: List[Any], ctype, fmt: str):
    """`col` packed by struct format `fmt` into a (ctype * len) array; None
    when struct refuses a value (one out of range)."""
    n = len(col)
    buf = bytearray(C.sizeof(ctype) * n)
    try:
        _struct.pack_into(f"{n}{fmt}", buf, 0, *col)
    except (_struct.error, OverflowError, ValueError):  # PyPy: ValueError for a negative 'Q'
        return None
    return (ctype * n).from_buffer(buf)


def _int_buffer(col: Sequence[Any], name: str, signed: bool = True):
    col = col if type(col) is list else list(col)
    if _all_of(col, int):
        out = _pack(col, C.c_int64, "q") if signed else _pack(col, C.c_uint64, "Q")
        if out is not None:
            return out
    return _int_column(col, name, signed)


def _float_buffer(col: Sequence[Any], name: str):
    col = col if type(col) is list else list(col)
    if _all_of(col, float, int):
        out = _pack(col, C.c_double, "d")
        if out is not None:
            return out
    return _float_column(col, name)


def _bool_buffer(col: Sequence[Any], name: str):
    col = col if type(col) is list else list(col)
    if _all_of(col, bool):
        return (C.c_bool * len(col)).from_buffer(bytearray(col))
    return _bool_column(col, name)


def _c_array(ctype, v):
    """A `_*_buffer` result as a C array of `ctype`."""
    if isinstance(v, C.Array):
        return v
    n = len(v)
    if ctype is C.c_bool:
        return (C.c_bool * n).from_buffer(array.array("b", [1 if x else 0 for x in v]))
    fmt = {C.c_int64: "q", C.c_uint64: "Q", C.c_double: "d"}[ctype]
    return (ctype * n).from_buffer(array.array(fmt, v))


def _any_set(v) -> bool:
    """`any(v)` for a `_*_buffer` result (a C array: whether a byte is not 0)."""
    return bool(bytes(v).strip(b"\0")) if isinstance(v, C.Array) else any(v)


def _any_blank(joined: str, col: List[str]) -> bool:
    """Whether a value of `col` (NUL-free strs, "\\0".join-ed as `joined`)
    is only whitespace; a column without any whitespace needs no look at
    each value."""
    return any(c in joined for c in _WHITESPACE) and any(map(_blank, col))


def _packed(col: Sequence[Optional[str]], name: str, what: Optional[str] = None) -> bytes:
    """A column of strings as the packed form: NUL-terminated UTF-8 back to
    back, None as the empty string (the default kind / content unchanged).
    Checked here for what the form cannot carry ("", NUL, lone surrogates)
    and, with `what`, for kinds made only of whitespace."""
    col = col if type(col) is list else list(col)
    # The fast path, for a column of non-empty strs (the usual case): `all`
    # refuses None and "", join anything but a str, the NUL count a NUL in a
    # value, encode a lone surrogate. Whatever it refuses goes the long way
    # below, which finds the first bad value and names it.
    try:
        if all(col):
            joined = "\0".join(col)
            if joined.count("\0") == len(col) - 1 and (what is None or not _any_blank(joined, col)):
                return joined.encode("utf-8") + b"\0"
    except Exception:
        pass
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


def _item_at(items: Any, index: Any) -> Tuple[int, int]:
    """The native list of `items` (an open Items; a method called unbound
    on None names `items`) and the checked `index` into it."""
    h = _ptr(items, Items, "items")
    return h, _index(index, "index", _lib.cupel_items_len(h))


def _variants_of(h: int, i: int) -> List[Variant]:
    """The variants of item `i` of list `h`, read back."""
    n, tokens, value, ptr, length = C.c_size_t(), C.c_int64(), C.c_double(), C.c_void_p(), C.c_size_t()
    _check(_lib.cupel_items_variant_count(h, i, C.byref(n)))
    out = []
    for v in range(1, n.value + 1):
        _check(_lib.cupel_items_variant(h, i, v, C.byref(tokens), C.byref(value), C.byref(ptr), C.byref(length)))
        out.append(Variant(tokens.value, value.value, _string_out(ptr, length)))
    return out


def _truncatable_of(h: int, i: int) -> Optional[Truncatable]:
    """How item `i` of list `h` may be cut, read back (None: it may not)."""
    yes, keep, m = C.c_bool(), C.c_int(), C.c_int64()
    _check(_lib.cupel_items_truncatable(h, i, C.byref(yes), C.byref(keep), C.byref(m)))
    return Truncatable(Keep(keep.value), m.value) if yes.value else None


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

    def push(self, tokens: int, score: float = 0.0, kind: Optional[str] = None, *,
             variants: Optional[Iterable[Any]] = None, truncatable: Any = None, key: int = 0,
             volatile: bool = False) -> int:
        """Appends one item and returns its index. `kind` None is the
        default kind "Message". `variants`: its smaller stand-ins, numbered
        1, 2, ... in order (`Variant`s, (tokens, value[, content]) tuples or
        dicts; see `add_variant`); `truncatable`: how a run may cut it (see
        `set_truncatable`: a `Truncatable`, a keep, a (keep, min_tokens)
        pair or True; it needs content, so see `push_text`); `key` and
        `volatile`: its session identity (see `set_key`, `set_volatile`).
        All or nothing: errors name `variants[k].value`, `truncatable.keep`,
        `key`, ..."""
        h = self._raw
        t, sc, k = _i64(tokens, "tokens"), _f64(score, "score"), _opt_str(kind, "kind")
        vs = [] if variants is None else _variants_arg(variants, "variants")
        tr = _truncatable_arg(truncatable, "truncatable")
        ky, vo = _key(key), _bool(volatile, "volatile")
        first = _lib.cupel_items_len(h)
        _check(_lib.cupel_items_push(h, t, sc, k))
        if vs or tr is not None or ky or vo:
            _or_undo(h, first, lambda: (_attach(h, first, vs, tr), _identity(h, first, ky, vo)))
        return first

    def extend(self, records: Iterable[Any]) -> "Items":
        """Adds records (dicts, dataclasses or objects with `Item`'s fields;
        None or a missing field means absent). Every field is checked first
        (errors name `records[i].field`, `records[i].variants[k].value`), so
        a failure adds nothing (and a call the library refused after the
        push would be undone). One native call per column, plus one per
        tag, metadata entry, source, variant or truncatable item."""
        h = self._raw
        recs = list(records)
        n = len(recs)
        if n == 0:
            return self
        if _all_of(recs, dict):  # plain dicts (the usual case): each column in one C-speed pass
            col = {name: list(map(dict.get, recs, itertools.repeat(name, n), itertools.repeat(dataclasses.MISSING, n)))
                   for name in _FIELDS}
        else:
            col = {name: [_field(r, name) for r in recs] for name in _FIELDS}
        for i, t in enumerate(col["tokens"]):
            if t is dataclasses.MISSING:
                raise ArgumentTypeError(Status.INVALID_ARGUMENT, f"records[{i}] has no tokens; every record needs them")
        tokens = _int_buffer(col["tokens"], "records[{}].tokens")
        scores = _float_buffer([0.0 if v in _ABSENT else v for v in col["score"]], "records[{}].score")
        kinds = _packed([None if v in _ABSENT else v for v in col["kind"]], "records[{}].kind", "a kind")
        contents = _packed([None if v in _ABSENT else v for v in col["content"]], "records[{}].content")
        sparse = {}
        for name, conv in [("timestamp", _i64), ("priority", _i64), ("relevance_hint", _f64)]:
            # Every record has it, as a plain int (float): the column packed at once (a C array).
            packed = _pack(col[name], C.c_int64, "q") if conv is _i64 and _all_of(col[name], int) else \
                _pack(col[name], C.c_double, "d") if conv is _f64 and _all_of(col[name], float, int) else None
            sparse[name] = packed if packed is not None else \
                [(i, conv(v, f"records[{i}].{name}")) for i, v in enumerate(col[name]) if v not in _ABSENT]
        pinned = _bool_buffer([False if v in _ABSENT else v for v in col["pinned"]], "records[{}].pinned")
        groups = _int_buffer([0 if v in _ABSENT else v for v in col["group"]], "records[{}].group", signed=False)
        keys = _int_buffer([0 if v in _ABSENT else v for v in col["key"]], "records[{}].key", signed=False)
        volatile = _bool_buffer([False if v in _ABSENT else v for v in col["volatile"]], "records[{}].volatile")
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
        shrink = []
        for i, (v, t) in enumerate(zip(col["variants"], col["truncatable"])):
            vs = [] if v in _ABSENT else _variants_arg(v, f"records[{i}].variants")
            tr = None if t is dataclasses.MISSING else _truncatable_arg(t, f"records[{i}].truncatable")
            if vs or tr is not None:
                shrink.append((i, vs, tr))

        # Everything is checked: from here on no call can fail on an argument.
        first = len(self)
        _check(_lib.cupel_items_push_many_packed(h, n, _c_array(C.c_int64, tokens), _c_array(C.c_double, scores),
                                                 kinds, len(kinds)))
        _or_undo(h, first, lambda: self._attributes(h, first, n, contents, sparse, pinned, groups, sources, tags,
                                                     metadata, shrink, keys, volatile))
        return self

    @staticmethod
    def _attributes(h, first, n, contents, sparse, pinned, groups, sources, tags, metadata, shrink, keys,
                    volatile) -> None:
        """`extend`'s calls after the push: the records' other attributes."""
        _check(_lib.cupel_items_set_contents_packed(h, first, n, contents, len(contents)))
        for name, bulk, ctype, single in [
            ("timestamp", _lib.cupel_items_set_timestamps, C.c_int64, _lib.cupel_items_set_timestamp),
            ("priority", _lib.cupel_items_set_priorities, C.c_int64, _lib.cupel_items_set_priority),
            ("relevance_hint", _lib.cupel_items_set_relevance_hints, C.c_double, _lib.cupel_items_set_relevance_hint),
        ]:
            have = sparse[name]
            if isinstance(have, C.Array):
                _check(bulk(h, first, n, have))
            elif len(have) == n:
                _check(bulk(h, first, n, _c_array(ctype, [v for _, v in have])))
            else:
                for i, v in have:
                    _check(single(h, first + i, v))
        _check(_lib.cupel_items_set_pinned_many(h, first, n, _c_array(C.c_bool, pinned)))
        _check(_lib.cupel_items_set_groups(h, first, n, _c_array(C.c_uint64, groups)))
        if _any_set(keys):
            _check(_lib.cupel_items_set_keys(h, first, n, _c_array(C.c_uint64, keys)))
        if _any_set(volatile):
            _check(_lib.cupel_items_set_volatile_many(h, first, n, _c_array(C.c_bool, volatile)))
        for i, v in sources:
            _check(_lib.cupel_items_set_source(h, first + i, v))
        for i, tag in tags:
            _check(_lib.cupel_items_add_tag(h, first + i, tag))
        for i, key, value in metadata:
            _check(_lib.cupel_items_set_metadata(h, first + i, key, value))
        for i, vs, tr in shrink:
            _attach(h, first + i, vs, tr)

    @classmethod
    def from_columns(cls, tokens: Sequence[int], scores: Optional[Sequence[float]] = None, *,
                     kinds: Optional[Sequence[Optional[str]]] = None,
                     contents: Optional[Sequence[Optional[str]]] = None,
                     timestamps: Optional[Sequence[int]] = None, priorities: Optional[Sequence[int]] = None,
                     pinned: Optional[Sequence[bool]] = None, relevance_hints: Optional[Sequence[float]] = None,
                     groups: Optional[Sequence[int]] = None, keys: Optional[Sequence[int]] = None,
                     volatile: Optional[Sequence[bool]] = None) -> "Items":
        """Items from parallel columns (the fast path for large lists: each
        column goes in one native call, strings packed into one buffer).
        `scores` defaults to 0.0; a None kind is the default kind, a None
        content no content; `keys` and `volatile` are the session identity
        columns (see `set_key`, `set_volatile`)."""
        items = cls()
        try:
            items.extend_columns(tokens, scores, kinds=kinds, contents=contents, timestamps=timestamps,
                                 priorities=priorities, pinned=pinned, relevance_hints=relevance_hints,
                                 groups=groups, keys=keys, volatile=volatile)
        except BaseException:
            items.close()
            raise
        return items

    def extend_columns(self, tokens: Sequence[int], scores: Optional[Sequence[float]] = None, *,
                       kinds: Optional[Sequence[Optional[str]]] = None,
                       contents: Optional[Sequence[Optional[str]]] = None,
                       timestamps: Optional[Sequence[int]] = None, priorities: Optional[Sequence[int]] = None,
                       pinned: Optional[Sequence[bool]] = None, relevance_hints: Optional[Sequence[float]] = None,
                       groups: Optional[Sequence[int]] = None, keys: Optional[Sequence[int]] = None,
                       volatile: Optional[Sequence[bool]] = None) -> "Items":
        """Adds items given as columns (see `from_columns`), all or nothing:
        every column is checked first (errors name `column[i]`)."""
        h = self._raw
        cols = {"tokens": tokens, "scores": scores, "kinds": kinds, "contents": contents,
                "timestamps": timestamps, "priorities": priorities, "pinned": pinned,
                "relevance_hints": relevance_hints, "groups": groups, "keys": keys, "volatile": volatile}
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
        tk = _int_buffer(tokens, "tokens[{}]")
        sc = _float_buffer(scores, "scores[{}]") if scores is not None else None
        k = _packed(kinds, "kinds[{}]") if kinds is not None else None
        c = _packed(contents, "contents[{}]") if contents is not None else None
        ts = _int_buffer(timestamps, "timestamps[{}]") if timestamps is not None else None
        pr = _int_buffer(priorities, "priorities[{}]") if priorities is not None else None
        pn = _bool_buffer(pinned, "pinned[{}]") if pinned is not None else None
        rh = _float_buffer(relevance_hints, "relevance_hints[{}]") if relevance_hints is not None else None
        gr = _int_buffer(groups, "groups[{}]", signed=False) if groups is not None else None
        ky = _int_buffer(keys, "keys[{}]", signed=False) if keys is not None else None
        vo = _bool_buffer(volatile, "volatile[{}]") if volatile is not None else None

        # Everything is checked; the push itself checks scores and kinds
        # (all or nothing), and nothing after it can fail on an argument.
        first = len(self)
        _check(_lib.cupel_items_push_many_packed(h, n, _c_array(C.c_int64, tk),
                                                 _c_array(C.c_double, sc) if sc is not None else (C.c_double * n)(),
                                                 k, 0 if k is None else len(k)))
        if c is not None:
            _check(_lib.cupel_items_set_contents_packed(h, first, n, c, len(c)))
        if ts is not None:
            _check(_lib.cupel_items_set_timestamps(h, first, n, _c_array(C.c_int64, ts)))
        if pr is not None:
            _check(_lib.cupel_items_set_priorities(h, first, n, _c_array(C.c_int64, pr)))
        if pn is not None:
            _check(_lib.cupel_items_set_pinned_many(h, first, n, _c_array(C.c_bool, pn)))
        if rh is not None:
            _check(_lib.cupel_items_set_relevance_hints(h, first, n, _c_array(C.c_double, rh)))
        if gr is not None:
            _check(_lib.cupel_items_set_groups(h, first, n, _c_array(C.c_uint64, gr)))
        if ky is not None:
            _check(_lib.cupel_items_set_keys(h, first, n, _c_array(C.c_uint64, ky)))
        if vo is not None:
            _check(_lib.cupel_items_set_volatile_many(h, first, n, _c_array(C.c_bool, vo)))
        return self

    def push_text(self, tokenizer: "Tokenizer", text: str, score: float = 0.0, kind: Optional[str] = None, *,
                  variants: Optional[Iterable[Any]] = None, truncatable: Any = None, key: int = 0,
                  volatile: bool = False) -> int:
        """Appends one item made from `text` (a non-empty str) and returns its
        index: its tokens are `tokenizer.count(text)` and its content is
        `text` (NUL characters included: the text goes with its length).
        `kind` None is the default kind "Message". `variants`,
        `truncatable`, `key` and `volatile` as in `push`
        (`truncatable="head"` lets a run keep the beginning of the text).
        Fails with nothing added."""
        h = self._raw
        t = _ptr(tokenizer, Tokenizer, "tokenizer")
        b = _text_arg(text, "text")
        sc, k = _f64(score, "score"), _opt_str(kind, "kind")
        vs = [] if variants is None else _variants_arg(variants, "variants")
        tr = _truncatable_arg(truncatable, "truncatable")
        ky, vo = _key(key), _bool(volatile, "volatile")
        first = _lib.cupel_items_len(h)
        _check(_lib.cupel_items_push_text(h, t, b, len(b), sc, k))
        if vs or tr is not None or ky or vo:
            _or_undo(h, first, lambda: (_attach(h, first, vs, tr), _identity(h, first, ky, vo)))
        return first

    @classmethod
    def from_texts(cls, tokenizer: "Tokenizer", texts: Iterable[str], scores: Optional[Sequence[float]] = None, *,
                   kinds: Optional[Sequence[Optional[str]]] = None) -> "Items":
        """Items made from `texts` (see `extend_texts`): item i has content
        `texts[i]`, its count with `tokenizer` as its tokens, score
        `scores[i]` (default 0.0) and kind `kinds[i]` (None: "Message")."""
        items = cls()
        try:
            items.extend_texts(tokenizer, texts, scores, kinds=kinds)
        except BaseException:
            items.close()
            raise
        return items

    def extend_texts(self, tokenizer: "Tokenizer", texts: Iterable[str], scores: Optional[Sequence[float]] = None,
                     *, kinds: Optional[Sequence[Optional[str]]] = None) -> "Items":
        """Adds one item per text, all or nothing, in one native call
        (cupel_items_push_texts, which counts the texts on up to two threads):
        item i has content `texts[i]` (a non-empty str), tokens
        `tokenizer.count(texts[i])`, score `scores[i]` (`scores` None: 0.0
        each) and kind `kinds[i]` (`kinds` None, or a None element: the
        default kind "Message"). Errors name the element (`texts[3]`,
        `scores[0]`, `kinds[2]`); on error nothing is added."""
        h = self._raw
        t = _ptr(tokenizer, Tokenizer, "tokenizer")
        packed = _Texts(texts, "texts")
        n = packed.n
        for name, col in (("scores", scores), ("kinds", kinds)):
            if col is None:
                continue
            if isinstance(col, (str, bytes)) or not hasattr(col, "__len__"):
                raise _bad_type(name, col, "a sequence")
            if len(col) != n:
                raise _invalid(f"{name} has {len(col)} values for {n} texts; one per text")
        if n == 0:
            return self
        sc = (C.c_double * n)(*_float_column(list(scores), "scores[{}]")) if scores is not None else (C.c_double * n)()
        kd = None
        if kinds is not None:
            kd = (C.c_char_p * n)(*[None if k is None else _str(k, f"kinds[{i}]") for i, k in enumerate(kinds)])
        _check(_lib.cupel_items_push_texts(h, t, n, packed.ptrs, packed.lens, sc, kd))
        return self

    def set_content(self, index: int, content: str) -> None:
        """Sets item `index`'s content (a non-empty str), replacing an
        earlier one. Deduplication compares contents exactly."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_content(h, i, _str(content, "content")))

    def set_timestamp(self, index: int, unix_millis: int) -> None:
        """Sets item `index`'s timestamp, in UTC milliseconds since the epoch."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_timestamp(h, i, _i64(unix_millis, "unix_millis")))

    def set_priority(self, index: int, priority: int) -> None:
        """Sets item `index`'s priority (higher is more important)."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_priority(h, i, _i64(priority, "priority")))

    def set_pinned(self, index: int, pinned: bool = True) -> None:
        """Pins item `index` (or unpins it): a pipeline includes it unscored."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_pinned(h, i, _bool(pinned, "pinned")))

    def set_relevance_hint(self, index: int, hint: float) -> None:
        """Sets item `index`'s relevance hint (the Reflexive scorer's input)."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_relevance_hint(h, i, _f64(hint, "hint")))

    def set_group(self, index: int, group: int) -> None:
        """Puts item `index` in keep-together group `group` (0: none; 0 to 2**64 - 1)."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_group(h, i, _u64(group, "group")))

    def set_key(self, index: int, key: int) -> None:
        """Gives item `index` an identity key for sessions (`Session`): any
        int from 1 to 2**64 - 1 that names the same message, tool call or
        document from one turn's list to the next (0: no key, the default).
        A keyed item is the same item as last turn when its key, tokens and
        content are; a keyless one when its kind, tokens and content are.
        Keys must be unique in a list for `Session.run` (a ValueError naming
        both indices); `Pipeline.run` ignores them."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_key(h, i, _u64(key, "key")))

    def set_volatile(self, index: int, volatile: bool = True) -> None:
        """Marks item `index` volatile (or not): expected to change every
        turn (the open file in an editor, this turn's retrieved documents).
        A session places every volatile item after every other item, so its
        changes never break the cached prefix; a group is volatile when any
        member is. `Pipeline.run` ignores it."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_volatile(h, i, _bool(volatile, "volatile")))

    def set_source(self, index: int, source: str) -> None:
        """Sets item `index`'s source ("Chat" when never set)."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_source(h, i, _name_of(source, "source", "a source")))

    def add_tag(self, index: int, tag: str) -> None:
        """Adds a tag to item `index` (tags accumulate, repeats included)."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_add_tag(h, i, _str(tag, "tag")))

    def set_metadata(self, index: int, key: str, value: str) -> None:
        """Sets metadata `key` of item `index` to `value` (both str)."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_set_metadata(h, i, _str(key, "key"), _str(value, "value")))

    def add_variant(self, index: int, tokens: int, value: float, content: Optional[str] = None) -> int:
        """Adds a variant to item `index` and returns its number (1, 2, ...
        in the order added; 0 is the item as pushed): a smaller stand-in
        that selection may take instead of the item, at most one option per
        item. `tokens` (>= 0; may exceed the item's) is what it adds to the
        context, `value` in (0, 1] the share of the item's score it keeps
        (its score is the item's times `value`), `content` (a non-empty
        str, or None) the text sent in its place. At most 255 per item. A
        variant of a pinned item or of one pushed with 0 tokens is never
        chosen; a grouped item's variant v gives its group an option (every
        member at its variant v, or as pushed)."""
        h, i = _item_at(self, index)
        t, v, c = _variant_fields(tokens, value, content)
        _check(_lib.cupel_items_add_variant(h, i, t, v, c))
        n = C.c_size_t()
        _check(_lib.cupel_items_variant_count(h, i, C.byref(n)))
        return n.value

    def variants(self, index: int) -> List[Variant]:
        """Item `index`'s variants, variant 1 first (an empty list for none)."""
        h, i = _item_at(self, index)
        return _variants_of(h, i)

    def set_truncatable(self, index: int, keep: Union[Keep, str] = Keep.HEAD, min_tokens: int = 0) -> None:
        """Makes item `index` truncatable: a pipeline run with a tokenizer
        (`Pipeline(tokenizer=...)`, `set_tokenizer`) may include it cut down
        (as `Tokenizer.truncate` cuts, keeping `keep`: Keep.HEAD / "head",
        Keep.TAIL / "tail", Keep.BOTH_ENDS / "both_ends") to fill what the
        slicer left, if it keeps at least `min_tokens` (>= 0); its score then
        scales by the kept share of its tokens. The item needs content: a run
        fails otherwise, as it does without a tokenizer. A pinned item, a
        member of a group and an item a count cap excluded are never cut;
        `cupel.slice` never cuts. Setting it again replaces keep and
        min_tokens."""
        h, i = _item_at(self, index)
        k, m = _keep(keep), _min_tokens(min_tokens, "min_tokens")
        _check(_lib.cupel_items_set_truncatable(h, i, int(k), m))

    def clear_truncatable(self, index: int) -> None:
        """Makes item `index` no longer truncatable (a no-op if it was not)."""
        h, i = _item_at(self, index)
        _check(_lib.cupel_items_clear_truncatable(h, i))

    def truncatable(self, index: int) -> Optional[Truncatable]:
        """How item `index` may be cut (a `Truncatable`), or None when it is
        not truncatable."""
        h, i = _item_at(self, index)
        return _truncatable_of(h, i)

    def truncate(self, length: int) -> None:
        """Removes the items from index `length` on, with all their
        attributes: the list then holds `length` items (0 <= length <=
        len(self)). Undoes pushes: `n = len(items)`, push and set, and on a
        failure `items.truncate(n)`."""
        h = _ptr(self, Items, "items")
        n = _int(length, "length")
        have = _lib.cupel_items_len(h)
        if not 0 <= n <= have:
            raise _invalid(f"length is {n}; it must be in 0 .. {have} (the list holds {have} items; "
                           f"truncate only shortens it)")
        _check(_lib.cupel_items_truncate(h, n))

    def get(self, index: int) -> Item:
        """Item `index` read back as an `Item`: tokens, score and kind as
        pushed, content / timestamp / priority / relevance_hint None when
        absent, pinned, source ("Chat" unless set), group, tags (a tuple, in
        the order added) and metadata (a dict, in the order keys were first
        set), variants, truncatable, and the session `key` (0: none) and
        `volatile`. IndexError for an index outside 0 .. len - 1."""
        h, i = _item_at(self, index)
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
        for k in range(count.value):
            _check(_lib.cupel_items_metadata_entry(h, i, k, C.byref(ptr), C.byref(n), C.byref(ptr2), C.byref(n2)))
            metadata[_string_out(ptr, n) or ""] = _string_out(ptr2, n2) or ""
        key, volatile = C.c_uint64(), C.c_bool()
        _check(_lib.cupel_items_key(h, i, C.byref(key)))
        _check(_lib.cupel_items_volatile(h, i, C.byref(volatile)))
        return Item(tokens=tokens.value, score=score.value, kind=kind, content=content, timestamp=timestamp,
                    priority=priority, pinned=pinned.value, relevance_hint=hint, source=source, tags=tuple(tags),
                    metadata=metadata, group=group.value, variants=tuple(_variants_of(h, i)),
                    truncatable=_truncatable_of(h, i), key=key.value, volatile=volatile.value)

    def __iter__(self) -> Iterator[Item]:
        """Every item, in index order, as `get` reads it."""
        for i in range(len(self)):
            yield self.get(i)

    def __len__(self) -> int:
        """The number of items."""
        return _lib.cupel_items_len(self._raw)

    def clear(self) -> None:
        """Removes every item (indices start again from 0)."""
        _lib.cupel_items_clear(self._raw)


class Budget(_Handle):
    """A token budget: hard ceiling (max) and the slicers' goal (target)."""

    _free = _lib.cupel_budget_free
    _noun = "budget"

    def __init__(self, max_tokens: int, target_tokens: Optional[int] = None, *, output_reserve: int = 0,
                 safety_margin_percent: float = 0.0, reserved: Optional[Mapping[str, int]] = None) -> None:
        """`target_tokens` None is `max_tokens`; the keywords call the setters."""
        mx = _i64(max_tokens, "max_tokens")
        target = mx if target_tokens is None else _i64(target_tokens, "target_tokens")
        _i64(output_reserve, "output_reserve")
        _f64(safety_margin_percent, "safety_margin_percent")
        if reserved is not None and not isinstance(reserved, Mapping):
            raise _bad_type("reserved", reserved, "a mapping of kind to tokens")
        super().__init__(lambda out: _lib.cupel_budget_new(mx, target, out))
        try:
            if output_reserve:
                self.set_output_reserve(output_reserve)
            if safety_margin_percent:
                self.set_safety_margin(safety_margin_percent)
            for kind, tokens in (reserved or {}).items():
                self.reserve(kind, tokens)
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_json(cls, json: Union[str, bytes]) -> "Budget":
        """A budget from a budget document: `{"maxTokens", "targetTokens"}`
        (both required), `"outputReserve"`, `"reservedSlots": {kind:
        tokens}`, `"estimationSafetyMarginPercent"`, checked as the
        constructor and the setters check them. A ValueError gives the JSON
        path (`json $.maxTokens: required`)."""
        buf, n = _json_arg(json)
        budget = cls.__new__(cls)
        _Handle.__init__(budget, lambda out: _lib.cupel_budget_from_json(buf, n, out))
        return budget

    def to_json(self) -> str:
        """The budget as a budget document (every field; reserved kinds as
        compared, lower-cased): `Budget.from_json` of it gives the same
        budget."""
        h = _ptr(self, Budget, "budget")
        return _text_from(lambda buf, cap, n: _lib.cupel_budget_to_json(h, buf, cap, n))

    def set_output_reserve(self, output_reserve: int) -> None:
        """Keeps `output_reserve` tokens (>= 0) of max_tokens for the answer."""
        h = self._raw
        _check(_lib.cupel_budget_set_output_reserve(h, _i64(output_reserve, "output_reserve")))

    def set_safety_margin(self, percent: float) -> None:
        """Takes `percent` (0 to 100) off the effective target."""
        h = self._raw
        _check(_lib.cupel_budget_set_safety_margin(h, _f64(percent, "percent")))

    def reserve(self, kind: str, tokens: int) -> None:
        """Reserves `tokens` for `kind` (setting a kind again replaces it)."""
        h = self._raw
        _check(_lib.cupel_budget_reserve(h, _str(kind, "kind"), _i64(tokens, "tokens")))

    def effective(self, pinned_tokens: int = 0) -> Tuple[int, int]:
        """(max, target) after `pinned_tokens`, reserves and the margin."""
        h = self._raw
        mx, tg = C.c_int64(), C.c_int64()
        _check(_lib.cupel_budget_effective(h, _i64(pinned_tokens, "pinned_tokens"), C.byref(mx), C.byref(tg)))
        return mx.value, tg.value


# ---- slicers, scorers, placers ----------------------------------------------------


class Scarcity(enum.IntEnum):
    """What a count slicer does when a kind has fewer items than it requires."""

    DEGRADE = 0
    ERROR = 1


class Slicer(_Handle):
    """A slicer (the Slice stage). Decorators keep a copy of their inner slicer."""

    _free = _lib.cupel_slicer_free
    _noun = "slicer"

    @property
    def memory_limit(self) -> int:
        """The bound, in bytes, on one slice call's working memory (default 1 GiB)."""
        return _lib.cupel_slicer_memory_limit(self._raw)

    @memory_limit.setter
    def memory_limit(self, limit: int) -> None:
        h = self._raw
        _check(_lib.cupel_slicer_set_memory_limit(h, _size(limit, "memory_limit")))


class Greedy(Slicer):
    """GreedySlice: value density order, greedy fill."""

    def __init__(self) -> None:
        super().__init__(_lib.cupel_slicer_new_greedy)


class Knapsack(Slicer):
    """KnapsackSlice: 0/1 knapsack DP in buckets of `bucket_size` tokens (> 0)."""

    def __init__(self, bucket_size: int = 100) -> None:
        b = _i64(bucket_size, "bucket_size")
        super().__init__(lambda out: _lib.cupel_slicer_new_knapsack(b, out))


def _entries(entries: Any, name: str, struct, conv) -> Tuple[Any, int, list]:
    """A {kind: (a, b)} mapping as an array of `struct`; `conv` checks a and b."""
    if not isinstance(entries, Mapping):
        raise _bad_type(name, entries, "a mapping of kind to a pair")
    rows, keep = [], []
    for k, (kind, pair) in enumerate(entries.items()):
        b = _str(kind, f"{name}[{k}].kind")
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise _bad_type(f"{name}[{k}] ({kind!r})", pair, "a pair")
        keep.append(b)
        rows.append(struct(b, *conv(pair, f"{name}[{k}]")))
    return (struct * max(len(rows), 1))(*rows), len(rows), keep


def _percents(pair, name):
    return _f64(pair[0], f"{name}.require_percent"), _f64(pair[1], f"{name}.cap_percent")


def _counts(pair, name):
    out = []
    for v, what in zip(pair, ("require_count", "cap_count")):
        i = _int(v, f"{name}.{what}")
        if not 0 <= i < 1 << 32:
            raise _invalid(f"{name}.{what} is {i}; it must be in 0 .. 2**32 - 1")
        out.append(i)
    return out


class Quota(Slicer):
    """QuotaSlice over a copy of `inner`: `quotas` maps a kind to
    (require_percent, cap_percent) of the target."""

    def __init__(self, inner: Slicer, quotas: Mapping[str, Tuple[float, float]]) -> None:
        p = _ptr(inner, Slicer, "inner")
        arr, n, _keep = _entries(quotas, "quotas", N.QuotaEntry, _percents)
        super().__init__(lambda out: _lib.cupel_slicer_new_quota(p, arr, n, out))


class CountQuota(Slicer):
    """CountQuotaSlice over a copy of `inner`: `entries` maps a kind to
    (require_count, cap_count)."""

    def __init__(self, inner: Slicer, entries: Mapping[str, Tuple[int, int]],
                 scarcity: Scarcity = Scarcity.DEGRADE) -> None:
        p = _ptr(inner, Slicer, "inner")
        arr, n, _keep = _entries(entries, "entries", N.CountEntry, _counts)
        sc = _int(scarcity, "scarcity")
        super().__init__(lambda out: _lib.cupel_slicer_new_count_quota(p, arr, n, sc, out))


class CountConstrainedKnapsack(Slicer):
    """CountConstrainedKnapsackSlice: the CountQuota phases around a knapsack
    of `bucket_size`; `entries` maps a kind to (require_count, cap_count)."""

    def __init__(self, bucket_size: int, entries: Mapping[str, Tuple[int, int]],
                 scarcity: Scarcity = Scarcity.DEGRADE) -> None:
        b = _i64(bucket_size, "bucket_size")
        arr, n, _keep = _entries(entries, "entries", N.CountEntry, _counts)
        sc = _int(scarcity, "scarcity")
        super().__init__(lambda out: _lib.cupel_slicer_new_count_constrained_knapsack(b, arr, n, sc, out))


class Scorer(_Handle):
    """A scorer (the Score stage), made by the factories in `cupel.scorers`;
    composites copy their children."""

    _free = _lib.cupel_scorer_free
    _noun = "scorer"

    def score(self, items: Items) -> List[float]:
        """The score of every item, by index."""
        h, it = self._raw, _ptr(items, Items, "items")
        n = _lib.cupel_items_len(it)
        out = (C.c_double * max(n, 1))()
        got = C.c_size_t()
        _check(_lib.cupel_scorer_score(h, it, out, n, C.byref(got)))
        return list(out[: got.value])


def _weights(weights: Any) -> Tuple[Any, int, list]:
    if not isinstance(weights, Mapping):
        raise _bad_type("weights", weights, "a mapping of name to weight")
    rows, keep = [], []
    for k, (name, w) in enumerate(weights.items()):
        b = _str(name, f"weights[{k}].kind")
        keep.append(b)
        rows.append(N.Weight(b, _f64(w, f"weights[{k}].weight")))
    return (N.Weight * max(len(rows), 1))(*rows), len(rows), keep


class _Scorers:
    """Factories of every scorer: `cupel.scorers.Recency()`, ..."""

    EXPONENTIAL, STEP, WINDOW = 0, 1, 2

    @staticmethod
    def Given() -> Scorer:
        """The score pushed with each item."""
        return Scorer(_lib.cupel_scorer_new_given)

    @staticmethod
    def Recency() -> Scorer:
        """Timestamp rank among the timestamped items (0 without one)."""
        return Scorer(_lib.cupel_scorer_new_recency)

    @staticmethod
    def Priority() -> Scorer:
        """Priority rank (0 without one)."""
        return Scorer(_lib.cupel_scorer_new_priority)

    @staticmethod
    def Frequency() -> Scorer:
        """The share of other items sharing a tag."""
        return Scorer(_lib.cupel_scorer_new_frequency)

    @staticmethod
    def Reflexive() -> Scorer:
        """The relevance hint, clamped to [0, 1]."""
        return Scorer(_lib.cupel_scorer_new_reflexive)

    @staticmethod
    def Kind(weights: Optional[Mapping[str, float]] = None) -> Scorer:
        """The weight of the item's kind; `weights` {kind: weight >= 0}, None
        for the specification's defaults."""
        if weights is None:
            return Scorer(lambda out: _lib.cupel_scorer_new_kind(None, 0, out))
        arr, n, _keep = _weights(weights)
        return Scorer(lambda out: _lib.cupel_scorer_new_kind(arr, n, out))

    @staticmethod
    def Tag(weights: Mapping[str, float]) -> Scorer:
        """The summed weights of the item's tags over all weights; `weights` {tag: weight >= 0}."""
        arr, n, _keep = _weights(weights)
        return Scorer(lambda out: _lib.cupel_scorer_new_tag(arr, n, out))

    @staticmethod
    def Composite(parts: Sequence[Tuple[Scorer, float]]) -> Scorer:
        """The weighted average of `parts`, (scorer, weight > 0) pairs; the
        composite keeps copies of the scorers."""
        if isinstance(parts, (str, bytes)) or not isinstance(parts, Sequence):
            raise _bad_type("parts", parts, "a sequence of (scorer, weight) pairs")
        kids, weights = [], []
        for k, part in enumerate(parts):
            if not isinstance(part, (tuple, list)) or len(part) != 2:
                raise _bad_type(f"parts[{k}]", part, "a (scorer, weight) pair")
            kids.append(_ptr(part[0], Scorer, f"parts[{k}]"))
            w = _f64(part[1], f"parts[{k}] weight")
            if not (math.isfinite(w) and w > 0):
                shown = "NaN" if math.isnan(w) else repr(part[1])
                raise _invalid(f"parts[{k}] weight is {shown}; composite weights must be finite and > 0")
            weights.append(w)
        n = len(kids)
        karr = (C.c_void_p * max(n, 1))(*kids)
        warr = (C.c_double * max(n, 1))(*weights)
        return Scorer(lambda out: _lib.cupel_scorer_new_composite(karr, warr, n, out))

    @staticmethod
    def Scaled(inner: Scorer) -> Scorer:
        """`inner`'s scores min-max normalised over the list (a copy of `inner` is kept)."""
        p = _ptr(inner, Scorer, "inner")
        return Scorer(lambda out: _lib.cupel_scorer_new_scaled(p, out))

    @staticmethod
    def MetadataTrust(default_score: float = 0.5) -> Scorer:
        """Metadata "cupel:trust" as a number in [0, 1]; `default_score` when absent."""
        d = _f64(default_score, "default_score")
        return Scorer(lambda out: _lib.cupel_scorer_new_metadata_trust(d, out))

    @staticmethod
    def MetadataKey(key: str, value: str, boost: float) -> Scorer:
        """`boost` (finite, > 0) where metadata `key` is exactly `value`, 1.0 otherwise."""
        k, v, b = _str(key, "key"), _str(value, "value"), _f64(boost, "boost")
        return Scorer(lambda out: _lib.cupel_scorer_new_metadata_key(k, v, b, out))

    @staticmethod
    def Decay(curve: int, *, reference_time: int, duration_secs: float = 0.0,
              windows: Sequence[Tuple[float, float]] = (), null_timestamp_score: float = 0.5) -> Scorer:
        """A score from each timestamp's age at `reference_time` (UTC ms):
        curve scorers.EXPONENTIAL (half-life `duration_secs`), WINDOW (1 while
        younger than `duration_secs`) or STEP (`windows`, (max_age_secs,
        score) pairs, youngest first)."""
        c = _int(curve, "curve")
        if not -(1 << 31) <= c < 1 << 31:
            raise _invalid(f"curve is {c}; it must be scorers.EXPONENTIAL, STEP or WINDOW")
        ref, dur, null = (_i64(reference_time, "reference_time"), _f64(duration_secs, "duration_secs"),
                          _f64(null_timestamp_score, "null_timestamp_score"))
        if isinstance(windows, (str, bytes)) or not isinstance(windows, Iterable):
            raise _bad_type("windows", windows, "a sequence of (max_age_secs, score) pairs")
        rows = []
        for k, w in enumerate(windows):
            if not isinstance(w, (tuple, list)) or len(w) != 2:
                raise _bad_type(f"windows[{k}]", w, "a (max_age_secs, score) pair")
            rows.append(N.DecayWindow(_f64(w[0], f"windows[{k}].max_age_secs"), _f64(w[1], f"windows[{k}].score")))
        arr = (N.DecayWindow * max(len(rows), 1))(*rows)
        n = len(rows)
        return Scorer(lambda out: _lib.cupel_scorer_new_decay(c, dur, arr if n else None, n, ref, null, out))


scorers = _Scorers()


class Placer(_Handle):
    """A placer (the Place stage): `Chronological()` or `UShaped()`."""

    _free = _lib.cupel_placer_free
    _noun = "placer"

    def place(self, items: Items, indices: Sequence[int], scores: Sequence[float]) -> List[int]:
        """The Place stage on its own: the item `indices` (each in 0 ..
        len(items) - 1), with their `scores` (one each), in placed order."""
        h, it = self._raw, _ptr(items, Items, "items")
        for name, col in (("indices", indices), ("scores", scores)):
            if isinstance(col, (str, bytes)) or not hasattr(col, "__len__"):
                raise _bad_type(name, col, "a sequence")
        n = len(indices)
        if len(scores) != n:
            raise _invalid(f"place: {n} indices and {len(scores)} scores; one score per index")
        length = _lib.cupel_items_len(it)
        idx = [_index(i, f"indices[{k}]", length) for k, i in enumerate(indices)]
        sc = [_f64(s, f"scores[{k}]") for k, s in enumerate(scores)]
        out = (C.c_size_t * max(n, 1))()
        got = C.c_size_t()
        _check(_lib.cupel_placer_place(h, it, (C.c_size_t * max(n, 1))(*idx), (C.c_double * max(n, 1))(*sc), n,
                                       out, max(n, 1), C.byref(got)))
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
    """What a pipeline does when the selection exceeds the target."""

    THROW = 0
    TRUNCATE = 1
    PROCEED = 2


def reason_name(code: int) -> str:
    """The specification's name of a reason code, as the library names it
    (cupel_reason_str): "BudgetExceeded", ...; "Unknown" for a number that
    is no reason."""
    c = _int(code, "code")
    if not -(1 << 31) <= c < 1 << 31:
        return "Unknown"
    return _lib.cupel_reason_str(c).decode()


class Reason(enum.IntEnum):
    """Why an item was included or excluded (`Decision.reason`)."""

    SCORED = 0
    PINNED = 1
    ZERO_TOKEN = 2
    VARIANT = 3  # included as one of its variants (`Decision.variant`)
    TRUNCATED = 4  # included cut down (`Decision.head_end`, `tail_start`)
    BUDGET_EXCEEDED = 10
    SCORED_TOO_LOW = 11
    DEDUPLICATED = 12
    QUOTA_CAP_EXCEEDED = 13
    QUOTA_REQUIRE_DISPLACED = 14
    NEGATIVE_TOKENS = 15
    PINNED_OVERRIDE = 16
    FILTERED = 17
    COUNT_CAP_EXCEEDED = 18
    DEFERRED = 19  # a session left it out to keep the cached prefix (the pipeline alone takes it)

    @property
    def spec_name(self) -> str:
        """The specification's name, e.g. "BudgetExceeded" (from the library)."""
        return reason_name(self.value)


@dataclasses.dataclass(frozen=True)
class Decision:
    """One item's decision in a report. `item_tokens` is the item's own
    count; for an included item, what the run chose of it:

    - `variant`: the option, 0 for the item as pushed (also when it was
      cut), v for its variant v (`Reason.VARIANT`);
    - `tokens_added`: the tokens it adds to the context (the variant's, the
      cut's or the item's own; `Report.selected_tokens` sums them);
    - `head_end`, `tail_start`: the kept ranges of the item's content as
      **UTF-8 byte offsets** (not str indices): bytes `[0, head_end)` and
      `[tail_start, len)` of `content.encode()`; both the content's byte
      length when it was not cut, both 0 when it has no content
      (`Reason.TRUNCATED` when cut);
    - `text`: the text to send: the variant's content when `variant` > 0,
      else the item's content with the cut applied (None when there is
      no such content).

    For an excluded item: `variant` 0, `tokens_added` 0, and None."""

    index: int
    score: float
    reason: Reason
    item_tokens: int
    available_tokens: int
    related_index: Optional[int]
    group: int
    group_tokens: int
    variant: int = 0
    tokens_added: int = 0
    head_end: Optional[int] = None
    tail_start: Optional[int] = None
    text: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Shortfall:
    """A count requirement a count slicer could not meet (Scarcity.DEGRADE)."""

    kind: str
    required: int
    satisfied: int


@dataclasses.dataclass(frozen=True)
class Report:
    """What one run or slice decided."""

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
    shortfalls: List[Shortfall] = dataclasses.field(default_factory=list)
    cap_excluded: List[int] = dataclasses.field(default_factory=list)  # item indices dropped by a cap_count
    # Analytics (also in the JSON's "analytics" object): the included tokens
    # over the run's max_tokens (0 when max_tokens is 0 or nothing is
    # included), the number of distinct kinds included (compared as kinds
    # are: ASCII case-insensitively), the share of included items that have
    # a timestamp (0 when none is included).
    budget_utilization: float = 0.0
    kind_diversity: int = 0
    timestamp_coverage: float = 0.0

    def to_dict(self) -> dict:
        """The JSON report parsed."""
        return _json.loads(self.json)

    @property
    def analytics(self) -> dict:
        """The JSON's "analytics" object: budgetUtilization, kindDiversity,
        timestampCoverage and, when the slicer had quotas, "quotas": one row
        per constraint (kind, mode, require, cap, actual, utilization)."""
        return self.to_dict().get("analytics", {})


def _decisions(r: int, items: int, included: bool) -> List[Decision]:
    count = _lib.cupel_report_included_count(r) if included else _lib.cupel_report_excluded_count(r)
    get = _lib.cupel_report_included if included else _lib.cupel_report_excluded
    out = []
    d = N.Decision()
    variant, added, head, tail = C.c_size_t(), C.c_int64(), C.c_size_t(), C.c_size_t()
    ptr, n, tokens, value = C.c_void_p(), C.c_size_t(), C.c_int64(), C.c_double()
    for i in range(count):
        _check(get(r, i, C.byref(d)))
        shrink = {}
        if included:
            _check(_lib.cupel_report_included_variant(r, i, C.byref(variant), C.byref(added)))
            _check(_lib.cupel_report_included_cut(r, i, C.byref(head), C.byref(tail)))
            v, he, ts = variant.value, head.value, tail.value
            if v > 0:
                _check(_lib.cupel_items_variant(items, d.item_index, v, C.byref(tokens), C.byref(value),
                                                C.byref(ptr), C.byref(n)))
                text = _string_out(ptr, n)
            else:
                _check(_lib.cupel_items_content(items, d.item_index, C.byref(ptr), C.byref(n)))
                if not ptr.value:
                    text = None
                elif he == ts == n.value:
                    text = C.string_at(ptr.value, n.value).decode("utf-8")
                else:  # the kept bytes: the head, then the tail
                    raw = C.string_at(ptr.value, n.value)
                    text = (raw[:he] + raw[ts:]).decode("utf-8")
            shrink = dict(variant=v, tokens_added=added.value, head_end=he, tail_start=ts, text=text)
        out.append(Decision(d.item_index, d.score, Reason(d.reason), d.item_tokens, d.available_tokens,
                            None if d.related_index == _SIZE_MAX else d.related_index, d.group, d.group_tokens,
                            **shrink))
    return out


def _report(r: int, items: int) -> Report:
    n = C.c_size_t()
    st = _lib.cupel_report_json(r, items, None, 0, C.byref(n))
    if st != Status.BUFFER_TOO_SMALL:
        _check(st)
    buf = C.create_string_buffer(n.value + 1)
    _check(_lib.cupel_report_json(r, items, buf, n.value + 1, C.byref(n)))
    shortfalls = []
    kind, req, sat = C.c_void_p(), C.c_uint32(), C.c_uint32()
    for i in range(_lib.cupel_report_shortfall_count(r)):
        _check(_lib.cupel_report_shortfall(r, i, C.byref(kind), C.byref(req), C.byref(sat)))
        shortfalls.append(Shortfall(C.string_at(kind.value).decode("utf-8"), req.value, sat.value))
    cap, ix = [], C.c_size_t()
    for i in range(_lib.cupel_report_cap_excluded_count(r)):
        _check(_lib.cupel_report_cap_excluded(r, i, C.byref(ix)))
        cap.append(ix.value)
    utilization, kinds, coverage = C.c_double(), C.c_size_t(), C.c_double()
    _check(_lib.cupel_report_budget_utilization(r, C.byref(utilization)))
    _check(_lib.cupel_report_kind_diversity(r, items, C.byref(kinds)))
    _check(_lib.cupel_report_timestamp_coverage(r, items, C.byref(coverage)))
    return Report(
        _decisions(r, items, True), _decisions(r, items, False),
        _lib.cupel_report_total_candidates(r), _lib.cupel_report_total_tokens_considered(r),
        _lib.cupel_report_effective_max_tokens(r), _lib.cupel_report_effective_target_tokens(r),
        _lib.cupel_report_selected_tokens(r), buf.raw[: n.value].decode("utf-8"),
        _lib.cupel_report_tokens_over_budget(r), shortfalls, cap,
        utilization.value, kinds.value, coverage.value,
    )


def _run(items: int, want_report: bool, call) -> Union[List[int], Tuple[List[int], Report]]:
    n = _lib.cupel_items_len(items)
    out = (C.c_size_t * max(n, 1))()
    got = C.c_size_t()
    r = None
    if want_report:
        rp = C.c_void_p()
        _check(_lib.cupel_report_new(C.byref(rp)))
        r = rp.value
    try:
        _check(call(out, n, C.byref(got), r))
        result = out[: got.value]  # a list of ints
        return (result, _report(r, items)) if want_report else result
    finally:
        if r is not None:
            _lib.cupel_report_free(r)


def _json_arg(v: Any, name: str = "json"):
    """A JSON document argument: a str (or UTF-8 bytes), as a ctypes buffer
    and its length in bytes. The text goes with its length, so a NUL in it
    is the library's to refuse (as malformed JSON)."""
    if isinstance(v, str):
        data = _utf8(v, name)
    elif isinstance(v, (bytes, bytearray, memoryview)):
        data = bytes(v)
    else:
        raise _bad_type(name, v, "a str (a JSON document)")
    return C.create_string_buffer(data, max(len(data), 1)), len(data)


def _text_from(call, first_capacity: int = 0) -> str:
    """The text a C call writes with the buffer rules of cupel_report_json
    (NULL and 0 ask for the length; BUFFER_TOO_SMALL gives the length
    needed), decoded. `first_capacity` > 0 tries a buffer of that size
    first. A call that computes its text afresh each time (policy
    sensitivity: its reports carry the stages' measured durations) may need
    a little more the second time: it is retried with room to spare."""
    n = C.c_size_t()
    capacity = first_capacity
    if capacity <= 0:
        st = call(None, 0, C.byref(n))
        if st != Status.BUFFER_TOO_SMALL:
            _check(st)
        capacity = n.value + 1
    for _ in range(8):
        buf = C.create_string_buffer(capacity)
        st = call(buf, capacity, C.byref(n))
        if st != Status.BUFFER_TOO_SMALL:
            _check(st)
            return buf.raw[: n.value].decode("utf-8")
        capacity = n.value + n.value // 8 + 64
    _check(st)
    raise AssertionError("unreachable")


# ---- tracing ---------------------------------------------------------------------


class TraceLevel(enum.IntEnum):
    """How much a trace carries (the OpenTelemetry chapter's verbosity
    tiers; `Pipeline.set_trace` also takes "stages", "exclusions", "full")."""

    STAGES = 0
    """`StageOnly`: the pipeline's event and one per stage."""
    EXCLUSIONS = 1
    """`StageAndExclusions`: + one event per excluded item."""
    FULL = 2
    """`Full`: + one event per included item."""


_LEVEL_NAMES = {"stages": TraceLevel.STAGES, "exclusions": TraceLevel.EXCLUSIONS, "full": TraceLevel.FULL}


def _level(v: Any, name: str = "level") -> TraceLevel:
    wanted = "a cupel.TraceLevel or one of 'stages', 'exclusions', 'full'"
    if isinstance(v, str):
        level = _LEVEL_NAMES.get(v.lower())
        if level is None:
            raise _invalid(f"{name} is {v!r}; it must be {wanted}")
        return level
    if isinstance(v, bool) or not hasattr(type(v), "__index__"):
        raise _bad_type(name, v, wanted)
    i = operator.index(v)
    if i not in TraceLevel._value2member_map_:
        raise _invalid(f"{name} is {i}; it must be {wanted} (TraceLevel values are 0, 1 and 2)")
    return TraceLevel(i)


class TraceKind(enum.IntEnum):
    """What a trace event is about (`TraceEvent.kind`)."""

    PIPELINE = 0
    """The `cupel.pipeline` span: sent last, spanning the run."""
    STAGE = 1
    """A `cupel.stage.<stage>` span, child of the pipeline's."""
    EXCLUSION = 2
    """A `cupel.exclusion` event on its stage's span."""
    INCLUDED = 3
    """A `cupel.item.included` event on the place stage's span."""


@dataclasses.dataclass(frozen=True)
class TraceEvent:
    """One event of a traced run (`Pipeline.set_trace`): what the
    OpenTelemetry chapter puts on its spans and events, never content or
    metadata. Per run, in order: each stage's event (classify, score,
    deduplicate, slice, place) followed by its exclusion events, the place
    stage's also by the included items' events, and the pipeline's last.

    - `name`: "cupel.pipeline", "cupel.stage.classify" (.score,
      .deduplicate, .slice, .place), "cupel.exclusion" or
      "cupel.item.included"; `stage` the stage, lowercase (None for the
      pipeline); `verbosity` the tier ("StageOnly", "StageAndExclusions",
      "Full").
    - Stage: `item_count_in`, `item_count_out`, `exclusion_count`; the
      pipeline: the items in, the items included, all exclusions, and
      `max_tokens`.
    - Exclusion and included: `item` (the push index), `item_kind`,
      `tokens` (an exclusion's item tokens; what an included item adds);
      exclusion: `reason` (a `Reason`) and `reason_name`
      ("BudgetExceeded"); included: `score`. None where they do not apply.
    - `start_unix_nanos` and `duration_nanos` (0 for events), so that spans
      can be built after the fact; `end_unix_nanos` is their sum."""

    kind: TraceKind
    name: str
    stage: Optional[str]
    verbosity: str
    item_count_in: int
    item_count_out: int
    exclusion_count: int
    item: Optional[int]
    reason: Optional["Reason"]
    reason_name: Optional[str]
    item_kind: Optional[str]
    tokens: Optional[int]
    score: Optional[float]
    max_tokens: Optional[int]
    start_unix_nanos: int
    duration_nanos: int

    @property
    def end_unix_nanos(self) -> int:
        """`start_unix_nanos + duration_nanos`."""
        return self.start_unix_nanos + self.duration_nanos


def _c_text(address: Optional[int]) -> Optional[str]:
    return None if not address else C.string_at(address).decode("utf-8")


def _trace_event(e: N.TraceEvent) -> TraceEvent:
    """A `cupel_trace_event` (valid during the callback only) copied out."""
    try:
        kind = TraceKind(e.kind)
    except ValueError:  # a kind of a later library: passed on as its number
        kind = e.kind
    per_item = kind in (TraceKind.EXCLUSION, TraceKind.INCLUDED)
    reason = None
    if e.reason >= 0:
        try:
            reason = Reason(e.reason)
        except ValueError:
            reason = e.reason
    item_kind = None
    if per_item and e.item_kind:
        item_kind = C.string_at(e.item_kind, e.item_kind_len).decode("utf-8") if e.item_kind_len else ""
    return TraceEvent(
        kind=kind, name=_c_text(e.name) or "", stage=_c_text(e.stage), verbosity=_c_text(e.verbosity) or "",
        item_count_in=e.item_count_in, item_count_out=e.item_count_out, exclusion_count=e.exclusion_count,
        item=e.item if per_item else None, reason=reason, reason_name=_c_text(e.reason_name), item_kind=item_kind,
        tokens=e.tokens if per_item else None, score=e.score if kind == TraceKind.INCLUDED else None,
        max_tokens=e.max_tokens if kind == TraceKind.PIPELINE else None,
        start_unix_nanos=e.start_unix_nanos, duration_nanos=e.duration_nanos,
    )


class _Trace:
    """A trace callback as the library holds it: the ctypes function (kept
    alive here, by every pipeline and session that holds it) around the
    host's callable. The function never lets an exception reach C: the
    first one a run's callback raises is kept (per thread), the rest of
    that run's events are dropped, and the run re-raises it once the
    library has returned (`raise_pending`)."""

    def __init__(self, callback, level: TraceLevel) -> None:
        self.callback, self.level = callback, level
        local = self._local = threading.local()

        def trampoline(_user_data, event) -> None:
            if getattr(local, "error", None) is not None:
                return
            try:
                callback(_trace_event(event.contents))
            except BaseException as e:  # noqa: B036 -- nothing may unwind through C
                local.error = e

        self.fn = N.TraceFn(trampoline)

    def begin(self) -> None:
        self._local.error = None

    def raise_pending(self) -> None:
        e = getattr(self._local, "error", None)
        if e is not None:
            self._local.error = None
            raise e


def _traced(traces: Sequence[Optional[_Trace]], call):
    """Runs `call` (which runs pipelines holding `traces`), then raises the
    first exception a trace callback raised during it, if any."""
    live = [t for t in traces if t is not None]
    for t in live:
        t.begin()
    result = call()
    for t in live:
        t.raise_pending()
    return result


# ---- the pipeline ------------------------------------------------------------------


class Pipeline(_Handle):
    """All six stages; keeps copies of its scorer, slicer and placer.
    scorer None: the pushed scores; placer None: the slicer's order.
    Also from a policy document (`Pipeline.from_json`, written back by
    `to_json`) or a preset (`Pipeline.preset`)."""

    _free = _lib.cupel_pipeline_free
    _noun = "pipeline"
    _trace: Optional[_Trace] = None
    _tokenizer_name: Optional[str] = None  # what this package set (see _policy_tokenizer)
    _tokenizer_ref = None

    def __init__(self, *, slicer: Slicer, scorer: Optional[Scorer] = None, placer: Optional[Placer] = None,
                 deduplication: bool = True, overflow: Overflow = Overflow.THROW,
                 tokenizer: Optional["Tokenizer"] = None) -> None:
        """`tokenizer`: see `set_tokenizer` (None: none)."""
        sc = None if scorer is None else _ptr(scorer, Scorer, "scorer")
        sl = _ptr(slicer, Slicer, "slicer")
        pl = None if placer is None else _ptr(placer, Placer, "placer")
        dedup = _bool(deduplication, "deduplication")
        ov = _int(overflow, "overflow")
        if ov not in Overflow._value2member_map_:
            raise _invalid(f"overflow is {ov}; it must be an Overflow (0, 1 or 2)")
        tk = None if tokenizer is None else _ptr(tokenizer, Tokenizer, "tokenizer")
        super().__init__(lambda out: _lib.cupel_pipeline_new(sc, sl, pl, out))
        _check(_lib.cupel_pipeline_set_deduplication(self._ptr, dedup))
        _check(_lib.cupel_pipeline_set_overflow(self._ptr, ov))
        if tk is not None:
            _check(_lib.cupel_pipeline_set_tokenizer(self._ptr, tk))
            self._remember_tokenizer(tokenizer)

    @classmethod
    def _made_by(cls, create) -> "Pipeline":
        pipeline = cls.__new__(cls)
        _Handle.__init__(pipeline, create)
        return pipeline

    @classmethod
    def from_json(cls, json: Union[str, bytes]) -> "Pipeline":
        """A pipeline from a policy document (a JSON object, as a str or
        UTF-8 bytes): the .NET Cupel policy format (`scorers`, `slicerType`,
        `placerType`, `deduplicationEnabled`, `overflowStrategy`,
        `knapsackBucketSize`, `streamBatchSize`, `quotas`, `name`,
        `description`) and libcupel's extensions (docs/policies.md). A
        document that breaks a rule is a ValueError whose message gives the
        JSON path and the rule (`json $.scorers[1].weight: must be positive
        and finite (got -0.5)`); so are empty text, `null`, malformed JSON
        (with line and column) and a lone surrogate; a value that is not a
        str a TypeError."""
        buf, n = _json_arg(json)
        return cls._made_by(lambda out: _lib.cupel_pipeline_from_json(buf, n, out))

    @classmethod
    def preset(cls, name: str) -> "Pipeline":
        """The preset `name` (case-insensitive; `Pipeline.preset_names()`
        lists them): the .NET presets "Chat", "CodeReview", "Rag",
        "DocumentQa", "ToolUse", "LongRunning", "Debugging", and
        libcupel's "AgentLoop". An unknown name is a ValueError listing
        them."""
        n = _str(name, "name")
        return cls._made_by(lambda out: _lib.cupel_pipeline_preset(n, out))

    @staticmethod
    def preset_names() -> List[str]:
        """The names `Pipeline.preset` knows, in the library's order."""
        return [_lib.cupel_preset_name(i).decode() for i in range(_lib.cupel_preset_count())]

    def to_json(self) -> str:
        """The pipeline as a policy document (every setting, keys in
        alphabetical order): `Pipeline.from_json` of it selects exactly as
        this pipeline does. UnsupportedError for the pipelines the format
        cannot carry: a slicer nested otherwise than count quotas around
        quotas around greedy, knapsack or stream, and a tokenizer loaded
        from a vocabulary file."""
        h = _ptr(self, Pipeline, "pipeline")
        return _text_from(lambda buf, cap, n: _lib.cupel_pipeline_to_json(h, buf, cap, n))

    def _remember_tokenizer(self, tokenizer: Optional["Tokenizer"]) -> None:
        self._tokenizer_name = None if tokenizer is None else tokenizer.name
        self._tokenizer_ref = None if tokenizer is None else weakref.ref(tokenizer)

    def set_tokenizer(self, tokenizer: Optional["Tokenizer"]) -> None:
        """Gives the pipeline the tokenizer it cuts truncatable items with
        (`Items.set_truncatable`); None removes it. The pipeline keeps its
        own reference: the tokenizer may be closed afterwards. A run with a
        truncatable item and no tokenizer fails with a ValueError naming
        the item."""
        h = _ptr(self, Pipeline, "pipeline")
        t = None if tokenizer is None else _ptr(tokenizer, Tokenizer, "tokenizer")
        _check(_lib.cupel_pipeline_set_tokenizer(h, t))
        self._remember_tokenizer(tokenizer)

    def set_trace(self, callback, level: Union[TraceLevel, str] = TraceLevel.STAGES) -> None:
        """Traces the pipeline's runs: during each successful `run` (and
        each run of a `Session` made from the pipeline afterwards),
        `callback(event)` is called with a `TraceEvent` for every event of
        `level` (`TraceLevel.STAGES`, `EXCLUSIONS`, `FULL`, or "stages",
        "exclusions", "full"), on the thread that runs. `callback` None
        turns tracing off. The callback must not use this pipeline. An
        exception it raises never reaches the library: the rest of that
        run's events are dropped and the run raises it once the library
        has returned (its selection is lost). The pipeline holds the
        callback until it is replaced or the pipeline closed; a session
        keeps the one the pipeline had when the session was made.
        `cupel.otel.instrument` builds OpenTelemetry spans from these
        events."""
        h = _ptr(self, Pipeline, "pipeline")
        lv = _level(level)
        if callback is None:
            _check(_lib.cupel_pipeline_set_trace(h, int(lv), N.TraceFn(), None))  # NULL: off
            self._trace = None
            return
        if not callable(callback):
            raise _bad_type("callback", callback, "a callable taking a cupel.TraceEvent (or None)")
        trace = _Trace(callback, lv)
        _check(_lib.cupel_pipeline_set_trace(h, int(lv), trace.fn, None))
        self._trace = trace

    def close(self) -> None:
        """Frees the native pipeline (and lets go of its trace callback);
        idempotent."""
        super().close()
        self._trace = None

    def run(self, items: Items, budget: Budget, *, report: bool = False):
        """The placed item indices; with report=True, (placed, Report)."""
        h, it, b = self._raw, _ptr(items, Items, "items"), _ptr(budget, Budget, "budget")
        want = _bool(report, "report")
        return _traced([self._trace], lambda: _run(
            it, want, lambda out, cap, got, r: _lib.cupel_pipeline_run(h, it, b, out, cap, got, r)))


# ---- sessions: cache-stable selection across turns ---------------------------------


class SessionAction(enum.IntEnum):
    """Which rule a session run took (`Session.last_action`)."""

    FIRST = 0
    """The first run, or the first after `reset` (also before any run): the pipeline's selection."""
    APPEND = 1
    """The previous output kept in its order; new items added at its end."""
    COMPACT = 2
    """A fresh selection with room to spare, keeping what it could of the previous output's prefix."""


class BreakpointMark(enum.IntEnum):
    """What a cache breakpoint marks (`Breakpoint.mark`)."""

    PINNED = 0
    """After the leading pinned items (the system prompt, tool definitions)."""
    COMPACTION = 1
    """After the prefix the last compaction kept."""
    STABLE = 2
    """After this run's stable prefix (`Session.stable_prefix`)."""
    END = 3
    """After the last non-volatile item: what the next turn reuses when it appends."""


class StablePrefix(NamedTuple):
    """How many leading items of a session's last output (and their tokens)
    are identical to the leading items of the run before it."""

    items: int
    tokens: int


@dataclasses.dataclass(frozen=True)
class Breakpoint:
    """A cache breakpoint of a session run: after the first `items` items of
    its output, which add `tokens` tokens; `mark` says what it marks."""

    items: int
    tokens: int
    mark: BreakpointMark


def _slack(v: Any, name: str = "slack") -> float:
    """A slack: a number in [0, 1)."""
    f = _f64(v, name)
    if not 0.0 <= f < 1.0:
        shown = "NaN" if math.isnan(f) else repr(v)
        raise _invalid(f"{name} is {shown}; it must be in [0, 1): the share of the effective target a compaction "
                       f"leaves free")
    return f


class Session(_Handle):
    """Cache-stable selection across the turns of a conversation: each
    `run` gives the context for one turn, changing the previous turn's
    prompt only at its end whenever it can, so that a provider's prompt
    cache (or a server's KV cache) keeps serving its prefix.

    The first run (and the first after `reset`) is the pipeline's
    selection, volatile items last. Later runs append: the previous output
    in its order, then the new items, then the volatile ones, while that
    fits the budget; otherwise the session compacts once, selecting afresh
    with `slack` of the target left free for the turns after it and
    keeping the longest prefix of the previous output it can. Items are
    recognised from one turn's list to the next by their `key`
    (`Items.set_key`) with their tokens and content, or without a key by
    their kind, tokens and content.

    The session keeps its own copy of the pipeline (the pipeline may be
    closed right after). A failed run changes nothing. One thread at a time
    per session. A context manager; `close()` frees it."""

    _free = _lib.cupel_session_free
    _noun = "session"

    def __init__(self, pipeline: Pipeline, *, slack: Optional[float] = None) -> None:
        """A session over a copy of `pipeline`; `slack` None is the default, 0.2."""
        pp = _ptr(pipeline, Pipeline, "pipeline")
        sl = None if slack is None else _slack(slack)
        super().__init__(lambda out: _lib.cupel_session_new(pp, out))
        # The copy holds the pipeline's trace callback: keep it alive here.
        self._trace: Optional[_Trace] = pipeline._trace
        if sl is not None:
            _check(_lib.cupel_session_set_slack(self._ptr, sl))

    def close(self) -> None:
        """Frees the native session (and lets go of the trace callback its
        copy of the pipeline held); idempotent."""
        super().close()
        self._trace = None

    @property
    def slack(self) -> float:
        """The share, in [0, 1), of the effective target a compaction leaves
        free for the turns after it (default 0.2): its non-pinned,
        non-volatile items total at most floor((1 - slack) x target).
        Setting a value outside [0, 1) or NaN is a ValueError (the slack
        stays)."""
        out = C.c_double()
        _check(_lib.cupel_session_slack(self._raw, C.byref(out)))
        return out.value

    @slack.setter
    def slack(self, fraction: float) -> None:
        h = self._raw
        _check(_lib.cupel_session_set_slack(h, _slack(fraction)))

    def run(self, items: Items, budget: Budget, *, report: bool = False):
        """One turn: the item indices in prompt order (with report=True,
        (placed, Report)), with `Pipeline.run`'s rules: the budget, pinned
        items, groups, variants and truncation, the overflow strategy. The
        report lists every item left out with its reason (`Reason.DEFERRED`
        where the pipeline alone would take it) and its JSON has a
        "session" object. Two items with the same non-zero key are a
        ValueError naming both indices; a failed run changes nothing."""
        h, it, b = self._raw, _ptr(items, Items, "items"), _ptr(budget, Budget, "budget")
        want = _bool(report, "report")
        return _traced([self._trace], lambda: _run(
            it, want, lambda out, cap, got, r: _lib.cupel_session_run(h, it, b, out, cap, got, r)))

    @property
    def stable_prefix(self) -> StablePrefix:
        """The last run's stable prefix, (items, tokens): how many leading
        items of its output are identical (by identity and option) to the
        leading items of the run before it, and their tokens; where a host
        puts its cache breakpoint. (0, 0) before any run, after a first
        run and after the first run that follows a reset."""
        n, t = C.c_size_t(), C.c_int64()
        _check(_lib.cupel_session_stable_prefix(self._raw, C.byref(n), C.byref(t)))
        return StablePrefix(n.value, t.value)

    @property
    def last_action(self) -> SessionAction:
        """Which rule the last successful run took (`SessionAction.FIRST`
        before any run and after a reset)."""
        out = C.c_int()
        _check(_lib.cupel_session_last_action(self._raw, C.byref(out)))
        return SessionAction(out.value)

    @property
    def breakpoints(self) -> List[Breakpoint]:
        """The last run's cache breakpoints (providers allow up to four per
        request), ascending and distinct, at most 4: after the leading
        pinned items, after the prefix the last compaction kept, after the
        stable prefix and after the last non-volatile item; none at 0
        items, and where two fall together one, with the later mark of that
        list. Empty before any run."""
        h = self._raw
        out = (N.Breakpoint * 4)()
        n = C.c_size_t()
        st = _lib.cupel_session_breakpoints(h, out, 4, C.byref(n))
        if st == Status.BUFFER_TOO_SMALL:  # never, by the C ABI's promise; but grow as the other calls do
            out = (N.Breakpoint * n.value)()
            st = _lib.cupel_session_breakpoints(h, out, n.value, C.byref(n))
        _check(st)
        return [Breakpoint(b.items, b.tokens, BreakpointMark(b.mark)) for b in out[: n.value]]

    def reset(self) -> None:
        """Forgets every run: the next run is a first run (the pipeline's
        selection, stable prefix (0, 0)). The slack stays."""
        _check(_lib.cupel_session_reset(self._raw))


def slice(slicer: Slicer, items: Items, budget: Budget, pinned_tokens: int = 0, *, report: bool = False):
    """The Sort and Slice stages alone, with `pinned_tokens` (>= 0) taken off
    the budget: the selected indices in the slicer's order (and the Report
    with report=True)."""
    s, it, b = _ptr(slicer, Slicer, "slicer"), _ptr(items, Items, "items"), _ptr(budget, Budget, "budget")
    pinned = _i64(pinned_tokens, "pinned_tokens")
    return _run(it, _bool(report, "report"),
                lambda out, cap, got, r: _lib.cupel_slice(s, it, b, pinned, out, cap, got, r))


def marginal_items(slicer: Slicer, items: Items, budget: Budget, pinned_tokens: int, slack_tokens: int) -> List[int]:
    """GetMarginalItems: the indices selected at `budget` but not at the
    same budget with max and target reduced by `slack_tokens` (>= 0), in the
    order of the full-budget selection. The C ABI's argument order."""
    s, it, b = _ptr(slicer, Slicer, "slicer"), _ptr(items, Items, "items"), _ptr(budget, Budget, "budget")
    pinned, slack = _i64(pinned_tokens, "pinned_tokens"), _i64(slack_tokens, "slack_tokens")
    n = _lib.cupel_items_len(it)
    out = (C.c_size_t * max(n, 1))()
    got = C.c_size_t()
    _check(_lib.cupel_marginal_items(s, it, b, pinned, slack, out, n, C.byref(got)))
    return list(out[: got.value])


def find_min_budget(slicer: Slicer, items: Items, pinned_tokens: int, target_index: int,
                    search_ceiling: int) -> Optional[int]:
    """FindMinBudgetFor: the smallest budget (max = target) at which item
    `target_index` is selected, searched up to `search_ceiling`; None when
    it is not selected even there. The C ABI's argument order."""
    s, it = _ptr(slicer, Slicer, "slicer"), _ptr(items, Items, "items")
    pinned = _i64(pinned_tokens, "pinned_tokens")
    target = _index(target_index, "target_index", _lib.cupel_items_len(it))
    ceiling = _i64(search_ceiling, "search_ceiling")
    tokens = C.c_int64()
    _check(_lib.cupel_find_min_budget(s, it, pinned, target, ceiling, C.byref(tokens)))
    return None if tokens.value < 0 else tokens.value


class Stream(_Handle):
    """StreamSlice: items arrive one at a time (index = push order) and are
    decided `batch_size` at a time (0: the default, 32) against
    `target_tokens`; `push` says when the budget is spent."""

    _free = _lib.cupel_stream_free
    _noun = "stream"

    def __init__(self, target_tokens: int, batch_size: int = 0) -> None:
        t, b = _i64(target_tokens, "target_tokens"), _size(batch_size, "batch_size")
        super().__init__(lambda out: _lib.cupel_stream_new(t, b, out))

    def push(self, tokens: int, score: float, group: int = 0) -> bool:
        """Offers the next item (`tokens` >= 0, a finite `score`; `group` a
        keep-together group whose members are pushed one after another, 0 for
        none). Returns True once the budget is spent: the producer can stop."""
        h = self._raw
        t, s, g = _i64(tokens, "tokens"), _f64(score, "score"), _u64(group, "group")
        full = C.c_bool()
        if g:
            _check(_lib.cupel_stream_push_grouped(h, t, s, g, C.byref(full)))
        else:
            _check(_lib.cupel_stream_push(h, t, s, C.byref(full)))
        return full.value

    def finish(self) -> List[int]:
        """Ends the stream (no more pushes) and returns the taken item
        indices, in the order they were taken; calling it again gives the same."""
        h = self._raw
        n = C.c_size_t()
        st = _lib.cupel_stream_finish(h, None, 0, C.byref(n))
        if st != Status.BUFFER_TOO_SMALL:
            _check(st)
        out = (C.c_size_t * max(n.value, 1))()
        _check(_lib.cupel_stream_finish(h, out, n.value, C.byref(n)))
        return list(out[: n.value])


# ---- text in: tokenizers ---------------------------------------------------------


def _text_arg(v: Any, name: str) -> bytes:
    """A text to count: a str as UTF-8 bytes. NUL characters are text like
    any other (texts go to the library with their length); a lone surrogate
    is refused, naming `name` and its position."""
    if not isinstance(v, str):
        raise _bad_type(name, v, "a str")
    return _utf8(v, name)


class _Texts:
    """Many texts as the C ABI takes them: their UTF-8 packed into one
    buffer, with an array of the texts' addresses in it (`ptrs`) and one of
    their byte lengths (`lens`). Errors name the element, `name[i]`."""

    def __init__(self, texts: Any, name: str) -> None:
        if texts is None or isinstance(texts, (str, bytes)) or not isinstance(texts, Iterable):
            raise _bad_type(name, texts, "a sequence of str")
        col = list(texts)
        if not set(map(type, col)) <= {str}:
            for i, t in enumerate(col):
                if not isinstance(t, str):
                    raise _bad_type(f"{name}[{i}]", t, "a str")
        try:
            encoded = [t.encode("utf-8") for t in col]
        except UnicodeEncodeError:
            for i, t in enumerate(col):
                _utf8(t, f"{name}[{i}]")
            raise
        self._pack(encoded)

    @classmethod
    def of_utf8(cls, encoded: List[bytes]) -> "_Texts":
        """Texts already checked and encoded."""
        texts = cls.__new__(cls)
        texts._pack(encoded)
        return texts

    def _pack(self, encoded: List[bytes]) -> None:
        self.n = n = len(encoded)
        lens = [len(b) for b in encoded]
        # One copy the library reads in place: its addresses do not move
        # (PyPy may move a bytes object; a ctypes buffer stays put).
        self._buf = C.create_string_buffer(b"".join(encoded))
        base = C.addressof(self._buf)
        self.lens = (C.c_size_t * max(n, 1))(*lens)
        offsets = list(itertools.accumulate(lens, initial=0))[:n]
        self.ptrs = (C.c_void_p * max(n, 1))(*[base + o for o in offsets])


@dataclasses.dataclass(frozen=True)
class Truncation:
    """What `Tokenizer.truncate` kept of a text. `head_end` and `tail_start`
    are str indices (code points) into the text that was cut: the kept text
    is `text[:head_end] + text[tail_start:]`, and `tokens` (at most the
    `max_tokens` asked for) is the head's count plus the tail's, each
    counted on its own. Nothing was cut when `head_end == tail_start ==
    len(text)`."""

    text: str  # the kept text: the head, then the tail, no marker between
    head_end: int
    tail_start: int
    tokens: int

    @property
    def head(self) -> str:
        """The kept beginning, `text[:head_end]` of the text that was cut
        (empty under Keep.TAIL)."""
        return self.text[: self.head_end]

    @property
    def tail(self) -> str:
        """The kept end, `text[tail_start:]` of the text that was cut (empty
        under Keep.HEAD unless nothing was cut): a host writes its marker
        between `head` and `tail`."""
        return self.text[self.head_end:]


class Tokenizer(_Handle):
    """Exact token counts: a byte-level BPE vocabulary and its
    pre-tokenization pattern, counting as tiktoken's `encode_ordinary` does
    (special tokens such as "<|endoftext|>" are ordinary text).
    `Tokenizer("o200k_base")` (GPT-4o, GPT-4.1, o-series, GPT-5) and
    `Tokenizer("cl100k_base")` (GPT-4, GPT-3.5) are built into the library;
    `Tokenizer.from_tiktoken(ranks, pattern)` loads any tiktoken vocabulary
    file. Immutable: any number of threads may count with one tokenizer at
    once (ctypes releases the GIL during each call). A context manager;
    `close()` frees it."""

    _free = _lib.cupel_tokenizer_free
    _noun = "tokenizer"

    def __init__(self, name: str) -> None:
        """The built-in encoding `name`: "o200k_base" or "cl100k_base". An
        unknown name is a ValueError listing the known ones."""
        n = _str(name, "name")
        super().__init__(lambda out: _lib.cupel_tokenizer_new(n, out))
        self.name: Optional[str] = name
        """The built-in encoding's name; None for a loaded vocabulary."""

    @classmethod
    def from_tiktoken(cls, ranks: Union[bytes, bytearray, memoryview], pattern: Optional[str] = None) -> "Tokenizer":
        """A tokenizer for any vocabulary in tiktoken's file format: `ranks`
        are the file's bytes (lines of `base64(token) rank`, as Llama 3 and
        the OpenAI encodings ship them; any bytes-like object), `pattern` the
        pre-tokenization regular expression as tiktoken writes it (None:
        o200k_base's). A malformed line, a duplicate token or rank or a
        missing single-byte token is a ValueError naming the line; a pattern
        the library cannot compile a ValueError naming the problem. The
        library keeps its own copy of the vocabulary."""
        if isinstance(ranks, bytes):
            data = ranks
        else:
            try:
                data = memoryview(ranks).tobytes()
            except TypeError:
                raise _bad_type("ranks", ranks, "bytes (a tiktoken file's contents)") from None
        pat = _opt_str(pattern, "pattern")
        tokenizer = cls.__new__(cls)
        _Handle.__init__(tokenizer, lambda out: _lib.cupel_tokenizer_from_tiktoken(data, len(data), pat, out))
        tokenizer.name = None
        return tokenizer

    @classmethod
    def from_tiktoken_file(cls, path: Union[str, "os.PathLike[str]"], pattern: Optional[str] = None) -> "Tokenizer":
        """`from_tiktoken` on the bytes of the file at `path` (OSError when
        it cannot be read)."""
        with open(path, "rb") as fh:
            data = fh.read()
        return cls.from_tiktoken(data, pattern)

    def __repr__(self) -> str:
        what = repr(self.name) if getattr(self, "name", None) else "a tiktoken file"
        return f"<cupel.Tokenizer {what}{' (closed)' if self.closed else ''}>"

    def count(self, text: str) -> int:
        """The number of tokens of `text` (a str; "" counts 0)."""
        h = self._raw
        b = _text_arg(text, "text")
        n = C.c_int64()
        _check(_lib.cupel_tokenizer_count(h, b, len(b), C.byref(n)))
        return n.value

    def count_many(self, texts: Iterable[str]) -> List[int]:
        """The counts of `texts` (any iterable of str), in order, in one
        native call (large batches are counted on two threads). All or
        nothing: an error names the element, `texts[i]`."""
        h = self._raw
        packed = _Texts(texts, "texts")
        n = packed.n
        if n == 0:
            return []
        out = (C.c_int64 * n)()
        _check(_lib.cupel_tokenizer_count_many(h, n, packed.ptrs, packed.lens, out))
        return list(out)

    def truncate(self, text: str, max_tokens: int, keep: Union[Keep, str] = Keep.HEAD) -> Truncation:
        """Cuts `text` to at most `max_tokens` (>= 0) tokens, keeping its
        beginning (Keep.HEAD, "head"), its end (Keep.TAIL, "tail") or both
        (Keep.BOTH_ENDS, "both_ends": the head gets ceil(max_tokens / 2)
        tokens, the tail the rest). Cuts fall where a token of the whole
        text starts or ends, on a character boundary, as far out as
        `max_tokens` allows; a text that fits is kept whole, `max_tokens` 0
        keeps nothing. Returns a `Truncation`: the kept text and its ranges
        as str indices into `text`. Joining the head and the tail (or a
        marker between them) may change the count by a token at each seam.
        The cost is about one count of the text."""
        h = self._raw
        b = _text_arg(text, "text")
        m = _i64(max_tokens, "max_tokens")
        if m < 0:
            raise _invalid(f"max_tokens is {m}; it must be >= 0")
        k = _keep(keep)
        head, tail, tokens = C.c_size_t(), C.c_size_t(), C.c_int64()
        _check(_lib.cupel_tokenizer_truncate(h, b, len(b), m, int(k), C.byref(head), C.byref(tail), C.byref(tokens)))
        head_end, tail_start = _code_points(text, b, head.value), _code_points(text, b, tail.value)
        return Truncation(text[:head_end] + text[tail_start:], head_end, tail_start, tokens.value)


def _code_points(text: str, utf8: bytes, offset: int) -> int:
    """The str index of byte `offset` (a character boundary) of `utf8`, the
    UTF-8 of `text`."""
    if len(utf8) == len(text) or offset == 0:  # ASCII: bytes are code points
        return offset
    if offset == len(utf8):
        return len(text)
    # Decode the shorter side: the code points before the offset, or those
    # after it taken from the length.
    if offset <= len(utf8) // 2:
        return len(utf8[:offset].decode("utf-8"))
    return len(text) - len(utf8[offset:].decode("utf-8"))


# ---- policy sensitivity ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SensitivityVariant:
    """One pipeline's run in a policy sensitivity: its `label` and its
    SelectionReport JSON, parsed (`report`)."""

    label: str
    report: dict


@dataclasses.dataclass(frozen=True)
class SensitivityDiff:
    """An item included by at least one pipeline and excluded by another:
    its push `index`, its `content` (None when it has none) and its status,
    "Included" or "Excluded", under each label (`statuses`, in the order of
    the variants)."""

    index: int
    content: Optional[str]
    statuses: Mapping[str, str]

    @property
    def included_by(self) -> List[str]:
        """The labels that include the item."""
        return [label for label, status in self.statuses.items() if status == "Included"]

    @property
    def excluded_by(self) -> List[str]:
        """The labels that exclude the item."""
        return [label for label, status in self.statuses.items() if status != "Included"]


@dataclasses.dataclass(frozen=True)
class Sensitivity:
    """What `policy_sensitivity` found: every pipeline's run (`variants`,
    in the order given) and the items they disagree on (`diffs`, in push
    order); `json` is the library's text."""

    variants: List[SensitivityVariant]
    diffs: List[SensitivityDiff]
    json: str

    def report(self, label: str) -> dict:
        """The parsed SelectionReport of the variant `label` (KeyError when none has it)."""
        for v in self.variants:
            if v.label == label:
                return v.report
        raise KeyError(label)


def policy_sensitivity(variants: Union[Mapping[str, Pipeline], Iterable[Tuple[str, Pipeline]]], items: Items,
                       budget: Budget) -> Sensitivity:
    """Runs every pipeline of `variants` ({label: pipeline}, or (label,
    pipeline) pairs; at least two, labels distinct) on the same `items` and
    `budget` and says where they disagree: a `Sensitivity`. Items are
    matched by push index, never by content, so two items with the same
    text are two diffs. A pipeline whose run fails fails the call, the
    message naming its label."""
    if variants is None or isinstance(variants, (str, bytes)) or not isinstance(variants, (Mapping, Iterable)):
        raise _bad_type("variants", variants, "a mapping of label to Pipeline, or (label, pipeline) pairs")
    pairs = list(variants.items()) if isinstance(variants, Mapping) else list(variants)
    labels, handles, traces, seen = [], [], [], set()
    for k, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise _bad_type(f"variants[{k}]", pair, "a (label, pipeline) pair")
        label, pipeline = pair
        labels.append(_str(label, f"variants[{k}] label"))
        handles.append(_ptr(pipeline, Pipeline, f"variants[{k}] pipeline"))
        traces.append(pipeline._trace)
        if label in seen:
            raise _invalid(f"variants[{k}] label {label!r} is given twice; labels must be distinct")
        seen.add(label)
    if len(pairs) < 2:
        raise _invalid(f"variants has {len(pairs)} pipeline{'' if len(pairs) == 1 else 's'}; "
                       f"policy sensitivity compares at least two")
    it, b = _ptr(items, Items, "items"), _ptr(budget, Budget, "budget")
    n = len(pairs)
    parr = (C.c_void_p * n)(*handles)
    larr = (C.c_char_p * n)(*labels)
    # One call when the text fits a first guess (each call runs every pipeline).
    guess = min(4096 + 1024 * n * (_lib.cupel_items_len(it) + 4), 1 << 23)
    text = _traced(traces, lambda: _text_from(
        lambda buf, cap, got: _lib.cupel_policy_sensitivity(parr, larr, n, it, b, buf, cap, got), guess))
    doc = _json.loads(text)
    return Sensitivity(
        [SensitivityVariant(v["label"], v["report"]) for v in doc["variants"]],
        [SensitivityDiff(d["index"], d.get("content"), {s["label"]: s["status"] for s in d["statuses"]})
         for d in doc["diffs"]],
        text,
    )


def preset_names() -> List[str]:
    """The preset names `Pipeline.preset` (and `select`'s `policy`) knows."""
    return Pipeline.preset_names()


# ---- the one-call path -----------------------------------------------------------


@dataclasses.dataclass
class Message:
    """A message for `select` (any dict or object with these fields will
    do): `text` (required, non-empty), `kind` (None: "Message"), `pinned`,
    `group` (messages with the same group are kept or dropped together;
    "" or None: none), `tool_call_id` (a tool result's, or a single tool
    call's, id; "" or None: none), `tool_call_ids` (a message that makes
    several calls: all their ids; "" or None elements are none), `key` (an
    int below 2**64, for sessions; 0 or None: none), `timestamp` (Unix
    milliseconds or a `datetime`; a naive one is taken as UTC),
    `priority` (int), `relevance` (the hint the `reflexive` scorer reads)
    and `score` (the pushed score the `given` scorer reads; None: 1.0)."""

    text: str
    kind: Optional[str] = None
    pinned: bool = False
    group: Optional[str] = None
    tool_call_id: Optional[str] = None
    tool_call_ids: Sequence[str] = ()
    key: Optional[int] = None
    timestamp: Any = None
    priority: Optional[int] = None
    relevance: Optional[float] = None
    score: Optional[float] = None


_MESSAGE_FIELDS = [f.name for f in dataclasses.fields(Message)]
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _message_field(m: Any, name: str) -> Any:
    if isinstance(m, Mapping):
        return m.get(name)
    return getattr(m, name, None)


def _unix_millis(v: Any, name: str) -> int:
    """A timestamp: Unix milliseconds (an int) or a datetime (naive: UTC)."""
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        return _i64((v - _EPOCH) // datetime.timedelta(milliseconds=1), name)
    if isinstance(v, bool) or not hasattr(type(v), "__index__"):
        raise _bad_type(name, v, "an int (Unix milliseconds) or a datetime")
    return _i64(v, name)


def _link(v: Any, name: str) -> Optional[str]:
    """A group name or a tool call id: a str compared exactly (never sent to
    C); None or "" is none (as in every binding: some cannot tell an absent
    string from an empty one)."""
    if v is None:
        return None
    if not isinstance(v, str):
        raise _bad_type(name, v, "a str")
    return v or None


def _group_numbers(links: List[List[Tuple[str, str]]]) -> List[int]:
    """Keep-together groups from each message's links (("group", name) and
    ("call", id)): messages sharing a link are one group, transitively;
    groups numbered 1, 2, ... in the order of their first message, 0 for a
    message without links."""
    parent = list(range(len(links)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict = {}
    for i, ls in enumerate(links):
        for link in ls:
            j = owner.setdefault(link, i)
            if j != i:
                a, b = root(i), root(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    numbers_of: dict = {}
    out = []
    for i, ls in enumerate(links):
        if not ls:
            out.append(0)
            continue
        out.append(numbers_of.setdefault(root(i), len(numbers_of) + 1))
    return out


def _policy_pipeline(policy: Any) -> Tuple[Pipeline, bool]:
    """`select`'s policy as a pipeline, and whether select made it (and closes it)."""
    if isinstance(policy, Pipeline):
        _ptr(policy, Pipeline, "policy")
        return policy, False
    if not isinstance(policy, str):
        raise _bad_type("policy", policy, "a preset name, a policy document (JSON text) or a cupel.Pipeline")
    if policy.lstrip().startswith("{"):
        try:
            return Pipeline.from_json(policy), True
        except InvalidArgumentError as e:
            msg = e.message
            raise type(e)(e.status, "policy" + msg[4:] if msg.startswith("json") else f"policy: {msg}") from None
    names = Pipeline.preset_names()
    if policy.lower() not in (n.lower() for n in names):
        raise _invalid(f"policy {policy!r} is no preset and no policy document (JSON text starting with '{{'); "
                       f"the presets are {', '.join(names)}")
    return Pipeline.preset(policy), True


def _policy_tokenizer(pipeline: Pipeline) -> Any:
    """The tokenizer a policy's pipeline has (a name or an open Tokenizer),
    or None: its built-in encoding's name (cupel_pipeline_tokenizer_name);
    for one loaded from a vocabulary file, the Tokenizer this package gave
    it, while that is open."""
    name = _lib.cupel_pipeline_tokenizer_name(_ptr(pipeline, Pipeline, "policy"))
    if name is not None:
        return name.decode()
    if pipeline._tokenizer_ref is None:
        return None
    tokenizer = pipeline._tokenizer_ref()
    if tokenizer is None or tokenizer.closed:
        raise _invalid("policy: the pipeline's tokenizer was loaded from a vocabulary file that has since been "
                       "closed; pass tokenizer= to select")
    return tokenizer


def select(messages: Iterable[Any], max_tokens: Optional[int] = None, policy: Union[None, str, Pipeline] = None, *,
           budget: Optional[Budget] = None, tokenizer: Union[None, str, "Tokenizer"] = None,
           report: bool = False):
    """The one-call path: the `messages` to send, in prompt order, that fit
    `max_tokens` (the target is the same) or a `budget` (a `Budget`, as
    `budget=` or in max_tokens' place; give one of the two) under
    `policy`: a preset name ("Chat", ... see
    `preset_names()`), a policy document (a str whose first non-blank
    character is "{") or a `Pipeline`; None (the default) is "Chat".

    Messages are dicts or objects with `Message`'s fields (only `text` is
    required); the result holds the caller's own objects, unchanged.
    Messages sharing a `group`, a `tool_call_id` or one of their
    `tool_call_ids` are kept or dropped together (transitively; "" is
    none, and group names and call ids are separate). When no
    message has a timestamp, message i gets timestamp i (later is more
    recent). Tokens are counted with `tokenizer` (a name such as
    "cl100k_base" or a `Tokenizer`), else the policy's, else "o200k_base".

    With report=True, returns (messages, Report); the report's indices are
    positions in `messages`. Errors as the long-hand calls raise them,
    naming the message (`messages[3].text`)."""
    if messages is None or isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise _bad_type("messages", messages, "a list of messages (dicts or objects with a text)")
    msgs = list(messages)
    want_report = _bool(report, "report")

    # Every message checked first: nothing native is made for bad input.
    n = len(msgs)
    texts, kinds, scores, pinned, links, keys = [], [], [], [], [], []
    stamps, priorities, hints = [], [], []
    for i, m in enumerate(msgs):
        at = f"messages[{i}]"
        if m is None or isinstance(m, (str, bytes)):
            raise _bad_type(at, m, "a dict or an object with a text")
        f = {name: _message_field(m, name) for name in _MESSAGE_FIELDS}
        text = f["text"]
        if not isinstance(text, str):
            raise _bad_type(f"{at}.text", text, "a str")
        if not text:
            raise _invalid(f"{at}.text is empty; a message needs text")
        texts.append(_utf8(text, f"{at}.text"))
        kinds.append(None if f["kind"] is None else _name_of(f["kind"], f"{at}.kind", "a kind"))
        score = 1.0 if f["score"] is None else _f64(f["score"], f"{at}.score")
        if not math.isfinite(score):
            raise _invalid(f"{at}.score is {score}; scores must be finite")
        scores.append(score)
        pinned.append(False if f["pinned"] is None else _bool(f["pinned"], f"{at}.pinned"))
        ls = []
        group = _link(f["group"], f"{at}.group")
        if group is not None:
            ls.append(("group", group))
        call = _link(f["tool_call_id"], f"{at}.tool_call_id")
        if call is not None:
            ls.append(("call", call))
        ids = f["tool_call_ids"]
        if ids is not None:
            if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
                raise _bad_type(f"{at}.tool_call_ids", ids, "a list of str")
            for k, x in enumerate(ids):
                call = _link(x, f"{at}.tool_call_ids[{k}]")
                if call is not None:
                    ls.append(("call", call))
        links.append(ls)
        keys.append(0 if f["key"] is None else _u64(f["key"], f"{at}.key"))
        stamps.append(None if f["timestamp"] is None else _unix_millis(f["timestamp"], f"{at}.timestamp"))
        priorities.append(None if f["priority"] is None else _i64(f["priority"], f"{at}.priority"))
        hints.append(None if f["relevance"] is None else _f64(f["relevance"], f"{at}.relevance"))
    packed = _Texts.of_utf8(texts)
    groups = _group_numbers(links)
    if all(t is None for t in stamps):
        stamps = list(range(n))

    if isinstance(max_tokens, Budget) and budget is None:  # select(messages, cupel.Budget(...))
        max_tokens, budget = None, max_tokens
    if budget is not None:
        if max_tokens is not None:
            raise _invalid("max_tokens and budget are both given; give one")
        _ptr(budget, Budget, "budget")  # checked: open, a Budget
    else:
        if max_tokens is None:
            raise _bad_type("max_tokens", None, "an int (or pass budget=)")
        mx = _i64(max_tokens, "max_tokens")
        if mx < 0:
            raise _invalid(f"max_tokens is {mx}; it must be >= 0")
    if tokenizer is not None and not isinstance(tokenizer, (str, Tokenizer)):
        raise _bad_type("tokenizer", tokenizer, "an encoding name or a cupel.Tokenizer")
    if isinstance(tokenizer, Tokenizer):
        _ptr(tokenizer, Tokenizer, "tokenizer")

    made: List[_Handle] = []
    try:
        pipeline, ours = _policy_pipeline("Chat" if policy is None else policy)
        if ours:
            made.append(pipeline)
        tok = tokenizer if tokenizer is not None else _policy_tokenizer(pipeline)
        if tok is None:
            tok = "o200k_base"
        if isinstance(tok, str):
            try:
                tok = Tokenizer(tok)
            except InvalidArgumentError as e:
                raise type(e)(e.status, "tokenizer" + e.message[4:] if e.message.startswith("name")
                              else e.message) from None
            made.append(tok)
        if budget is None:
            budget = Budget(mx, mx)
            made.append(budget)
        items = Items()
        made.append(items)
        h = items._ptr
        sc = (C.c_double * max(n, 1))(*scores)
        kd = (C.c_char_p * max(n, 1))(*kinds)
        if n:
            _check(_lib.cupel_items_push_texts(h, tok._ptr, n, packed.ptrs, packed.lens, sc, kd))
        if any(pinned):
            _check(_lib.cupel_items_set_pinned_many(h, 0, n, (C.c_bool * n)(*pinned)))
        if any(groups):
            _check(_lib.cupel_items_set_groups(h, 0, n, (C.c_uint64 * n)(*groups)))
        if any(keys):
            _check(_lib.cupel_items_set_keys(h, 0, n, (C.c_uint64 * n)(*keys)))
        for column, bulk, single, ctype in [
            (stamps, _lib.cupel_items_set_timestamps, _lib.cupel_items_set_timestamp, C.c_int64),
            (priorities, _lib.cupel_items_set_priorities, _lib.cupel_items_set_priority, C.c_int64),
            (hints, _lib.cupel_items_set_relevance_hints, _lib.cupel_items_set_relevance_hint, C.c_double),
        ]:
            if n and all(v is not None for v in column):
                _check(bulk(h, 0, n, (ctype * n)(*column)))
            else:
                for i, v in enumerate(column):
                    if v is not None:
                        _check(single(h, i, v))
        result = pipeline.run(items, budget, report=want_report)
        placed, rep = result if want_report else (result, None)
        kept = [msgs[i] for i in placed]
        return (kept, rep) if want_report else kept
    finally:
        for handle in reversed(made):
            handle.close()
