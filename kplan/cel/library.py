"""The CEL library functions of the Kubernetes "stored expressions" environment that cel-python
lacks, as DRA selectors may call them (scheduler-reference-dra.md 3.4):

* cel-go's strings extension (version 2): ``charAt``, ``indexOf``, ``lastIndexOf``,
  ``lowerAscii``, ``upperAscii``, ``replace``, ``split``, ``substring``, ``trim``, ``join``,
  ``strings.quote`` (``format`` lives in strformat.py);
* the Kubernetes list library: ``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``,
  ``lastIndexOf`` on lists; the regex library: ``find``, ``findAll``;
* cel-go's optional types as functions: ``optional.of``, ``optional.none``,
  ``optional.ofNonZeroValue``, ``hasValue``, ``value``, ``orValue``, ``or`` (the ``.?``/``[?``
  syntax is beyond cel-python's parser);
* cel-go's lists extension: ``flatten``, ``slice``, ``distinct``, ``sort``, ``reverse``,
  ``lists.range`` (the ``sortBy`` macro sorts with ``sort_by_keys``); and the sets extension:
  ``sets.contains``, ``sets.equivalent``, ``sets.intersects``.

Strings are sequences of code points, as in cel-go. Failures are CEL runtime errors with
cel-go's wording where it has one. The macros (``cel.bind``, two-variable comprehensions,
``transformList``/``transformMap``/``transformMapEntry``, ``sortBy``) live in the evaluator
(interpreter.py); the IP, CIDR and URL libraries in net.py; the value model and equality in values.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from celpy import celtypes

from kplan.cel.values import LibraryError, Optional, equal


def _string(v: Any) -> str:
    if not isinstance(v, celtypes.StringType):
        raise LibraryError("no such overload")
    return str(v)


def _int(v: Any) -> int:
    if not isinstance(v, celtypes.IntType) or isinstance(v, celtypes.BoolType):
        raise LibraryError("no such overload")
    return int(v)


def _list(v: Any) -> list[Any]:
    if not isinstance(v, celtypes.ListType):
        raise LibraryError("no such overload")
    return list(v)


# --------------------------------------------------------------------------------- strings

def char_at(s: Any, i: Any) -> celtypes.StringType:
    text, at = _string(s), _int(i)
    if at < 0 or at > len(text):
        raise LibraryError(f"index out of range: {at}")
    return celtypes.StringType(text[at:at + 1])


def index_of(target: Any, sub: Any, offset: Any = None) -> celtypes.IntType:
    if isinstance(target, celtypes.ListType):
        return _list_index(target, sub, last=False)
    text, part = _string(target), _string(sub)
    start = 0 if offset is None else _int(offset)
    if start < 0 or start > len(text):
        raise LibraryError(f"index out of range: {start}")
    return celtypes.IntType(text.find(part, start))


def last_index_of(target: Any, sub: Any, offset: Any = None) -> celtypes.IntType:
    if isinstance(target, celtypes.ListType):
        return _list_index(target, sub, last=True)
    text, part = _string(target), _string(sub)
    end = len(text) if offset is None else _int(offset)
    if end < 0 or end > len(text):
        raise LibraryError(f"index out of range: {end}")
    # the match may start at ``end`` at the latest
    return celtypes.IntType(text.rfind(part, 0, end + len(part)))


_UPPER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_LOWER = {c + 32: c for c in range(ord("A"), ord("Z") + 1)}


def lower_ascii(s: Any) -> celtypes.StringType:
    return celtypes.StringType(_string(s).translate(_UPPER))


def upper_ascii(s: Any) -> celtypes.StringType:
    return celtypes.StringType(_string(s).translate(_LOWER))


def replace(s: Any, old: Any, new: Any, n: Any = None) -> celtypes.StringType:
    count = -1 if n is None else _int(n)
    return celtypes.StringType(_string(s).replace(_string(old), _string(new), count if count >= 0 else -1))


def split(s: Any, sep: Any, n: Any = None) -> celtypes.ListType:
    text, by = _string(s), _string(sep)
    limit = -1 if n is None else _int(n)
    if limit == 0:
        return celtypes.ListType([])
    if by == "":  # Go splits into single characters, the last piece taking the rest
        parts = list(text) if limit < 0 or limit >= len(text) else [*text[:limit - 1], text[limit - 1:]]
    else:
        parts = text.split(by, limit - 1 if limit > 0 else -1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def substring(s: Any, start: Any, end: Any = None) -> celtypes.StringType:
    text = _string(s)
    a = _int(start)
    b = len(text) if end is None else _int(end)
    if a < 0 or a > len(text):
        raise LibraryError(f"index out of range: {a}")
    if b < 0 or b > len(text):
        raise LibraryError(f"index out of range: {b}")
    if a > b:
        raise LibraryError(f"invalid substring range. start: {a}, end: {b}")
    return celtypes.StringType(text[a:b])


def trim(s: Any) -> celtypes.StringType:
    return celtypes.StringType(_string(s).strip())


def join(items: Any, sep: Any = None) -> celtypes.StringType:
    parts = [_string(x) for x in _list(items)]
    return celtypes.StringType(("" if sep is None else _string(sep)).join(parts))


def quote(s: Any) -> celtypes.StringType:
    text = _string(s)
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}
    return celtypes.StringType('"' + "".join(escapes.get(c, c) for c in text) + '"')


def find(s: Any, pattern: Any) -> celtypes.StringType:
    m = _regex(pattern).search(_string(s))
    return celtypes.StringType(m.group(0) if m else "")


def find_all(s: Any, pattern: Any, n: Any = None) -> celtypes.ListType:
    limit = -1 if n is None else _int(n)
    found = [m.group(0) for m in _regex(pattern).finditer(_string(s))]
    if limit >= 0:
        found = found[:limit]
    return celtypes.ListType([celtypes.StringType(x) for x in found])


def _regex(pattern: Any) -> re.Pattern[str]:
    try:
        return re.compile(_string(pattern))
    except re.error as e:
        raise LibraryError(f"invalid regular expression: {e}") from None


# ----------------------------------------------------------------------------------- lists

def _same_kind(items: list[Any]) -> None:
    kinds = {type(x) for x in items}
    if len(kinds) > 1:
        raise LibraryError("no such overload")


def _list_index(items: Any, value: Any, *, last: bool) -> celtypes.IntType:
    seq = _list(items)
    order = range(len(seq) - 1, -1, -1) if last else range(len(seq))
    for i in order:
        if equal(seq[i], value):
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


def is_sorted(items: Any) -> celtypes.BoolType:
    seq = _list(items)
    _same_kind(seq)
    return celtypes.BoolType(all(not (seq[i + 1] < seq[i]) for i in range(len(seq) - 1)))


def sum_(items: Any) -> Any:
    seq = _list(items)
    _same_kind(seq)
    if not seq:
        return celtypes.IntType(0)
    kind = type(seq[0])
    if kind not in (celtypes.IntType, celtypes.UintType, celtypes.DoubleType):
        raise LibraryError("no such overload")
    return kind(sum(seq))  # Python's + gives plain numbers; the result keeps the CEL kind


def _extreme(name: str, pick: Callable[[list[Any]], Any]) -> Callable[[Any], Any]:
    def extreme(items: Any) -> Any:
        seq = _list(items)
        if not seq:
            raise LibraryError(f"{name} called on empty list")
        _same_kind(seq)
        return pick(seq)
    return extreme


def flatten(items: Any, depth: Any = None) -> celtypes.ListType:
    levels = 1 if depth is None else _int(depth)
    if levels < 0:
        raise LibraryError("level must be non-negative")

    def flat(seq: list[Any], left: int) -> list[Any]:
        out: list[Any] = []
        for x in seq:
            if isinstance(x, celtypes.ListType) and left > 0:
                out.extend(flat(list(x), left - 1))
            else:
                out.append(x)
        return out
    return celtypes.ListType(flat(_list(items), levels))


def slice_(items: Any, start: Any, end: Any) -> celtypes.ListType:
    seq, a, b = _list(items), _int(start), _int(end)
    if a < 0 or b < 0:
        raise LibraryError(f"cannot slice({a}, {b}), negative indexes not supported")
    if a > b:
        raise LibraryError(f"cannot slice({a}, {b}), start index must be less than or equal to end index")
    if b > len(seq):
        raise LibraryError(f"cannot slice({a}, {b}), list is length {len(seq)}")
    return celtypes.ListType(seq[a:b])


def distinct(items: Any) -> celtypes.ListType:
    out: list[Any] = []
    for x in _list(items):
        if not any(equal(x, y) for y in out):
            out.append(x)
    return celtypes.ListType(out)


#: the types whose values cel-go orders (traits.Comparer)
_ORDERED = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType, celtypes.BoolType, celtypes.StringType,
            celtypes.BytesType, celtypes.TimestampType, celtypes.DurationType)


def sort_by_keys(items: Any, keys: Any) -> celtypes.ListType:
    """cel-go's ``@sortByAssociatedKeys`` (``sort()`` and the ``sortBy`` macro): the items in the
    order of their keys, which must all be of one orderable type. Equal keys keep the items'
    order (cel-go's sort.Slice does for lists of up to 12 items; beyond, its order among equal
    keys is unspecified)."""
    seq, ks = _list(items), _list(keys)
    if len(seq) != len(ks):
        raise LibraryError("@sortByAssociatedKeys() expected a list of the same size as the associated keys "
                           f"list, but got {len(seq)} and {len(ks)} elements respectively")
    if not seq:
        return celtypes.ListType(seq)
    if not isinstance(ks[0], _ORDERED):
        raise LibraryError("list elements must be comparable")
    if any(type(k) is not type(ks[0]) for k in ks):
        raise LibraryError("list elements must have the same type")
    order = sorted(range(len(seq)), key=lambda i: ks[i])
    return celtypes.ListType([seq[i] for i in order])


def sort(items: Any) -> celtypes.ListType:
    return sort_by_keys(items, items)


def reverse(target: Any) -> Any:
    if isinstance(target, celtypes.StringType):
        return celtypes.StringType(str(target)[::-1])
    return celtypes.ListType(list(reversed(_list(target))))


def lists_range(n: Any) -> celtypes.ListType:
    return celtypes.ListType([celtypes.IntType(i) for i in range(max(_int(n), 0))])


# ------------------------------------------------------------------------------------ sets

def sets_contains(a: Any, b: Any) -> celtypes.BoolType:
    have = _list(a)
    return celtypes.BoolType(all(any(equal(x, y) for y in have) for x in _list(b)))


def sets_equivalent(a: Any, b: Any) -> celtypes.BoolType:
    return celtypes.BoolType(bool(sets_contains(a, b)) and bool(sets_contains(b, a)))


def sets_intersects(a: Any, b: Any) -> celtypes.BoolType:
    have = _list(a)
    return celtypes.BoolType(any(any(equal(x, y) for y in have) for x in _list(b)))


# ------------------------------------------------------------------------- optional types

def _optional(v: Any) -> Optional:
    if not isinstance(v, Optional):
        raise LibraryError("no such overload")
    return v


def _is_zero(v: Any) -> bool:
    """cel-go's zero values: null, false, 0, 0u, 0.0, "", b"", [], {}, a zero duration or timestamp."""
    if isinstance(v, celtypes.NullType) or v is None:
        return True
    if isinstance(v, (celtypes.BoolType, celtypes.IntType, celtypes.UintType, celtypes.DoubleType)):
        return not v
    if isinstance(v, (celtypes.StringType, celtypes.BytesType, celtypes.ListType, celtypes.MapType)):
        return len(v) == 0
    if isinstance(v, celtypes.DurationType):
        return v.total_seconds() == 0
    if isinstance(v, celtypes.TimestampType):
        return v.timestamp() == 0
    return False


def optional_of(v: Any) -> Optional:
    return Optional(v)


def optional_none() -> Optional:
    return Optional()


def optional_of_non_zero_value(v: Any) -> Optional:
    return Optional() if _is_zero(v) else Optional(v)


def has_value(opt: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_optional(opt).has_value)


def value(opt: Any) -> Any:
    o = _optional(opt)
    if not o.has_value:
        raise LibraryError("optional.none() dereference")
    return o.value


def or_value(opt: Any, alternative: Any) -> Any:
    o = _optional(opt)
    return o.value if o.has_value else alternative


def or_(opt: Any, alternative: Any) -> Optional:
    o = _optional(opt)
    return o if o.has_value else _optional(alternative)


#: receiver-style and global functions, by name
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": char_at, "indexOf": index_of, "lastIndexOf": last_index_of, "lowerAscii": lower_ascii,
    "upperAscii": upper_ascii, "replace": replace, "split": split, "substring": substring, "trim": trim,
    "join": join, "find": find, "findAll": find_all, "isSorted": is_sorted, "sum": sum_,
    "min": _extreme("min", min), "max": _extreme("max", max), "flatten": flatten, "slice": slice_,
    "distinct": distinct, "sort": sort, "reverse": reverse,
    "hasValue": has_value, "value": value, "orValue": or_value, "or": or_,
}

#: functions called by a qualified name: (namespace, name) -> function
QUALIFIED: dict[tuple[str, str], Callable[..., Any]] = {
    ("strings", "quote"): quote, ("lists", "range"): lists_range, ("sets", "contains"): sets_contains,
    ("sets", "equivalent"): sets_equivalent, ("sets", "intersects"): sets_intersects,
    ("optional", "of"): optional_of, ("optional", "none"): optional_none,
    ("optional", "ofNonZeroValue"): optional_of_non_zero_value,
}
