"""The values CEL's modules share: the library error, cel-go's optional type, the marker of the
Kubernetes library types, and the one equality (cel-go's heterogeneous ``==``, ``!=`` and ``in``),
which lists, sets and optionals compare with too.

The bottom of kplan.cel: it imports no other module of the package.
"""

from __future__ import annotations

from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError


class LibraryError(Exception):
    """A library function's runtime error; ``str`` is cel-go's text."""


class Opaque:
    """The Kubernetes library types (quantity, semver, IP, CIDR, URL, named format): equal only to
    their own type (their Equal says "no such overload" otherwise)."""

    __slots__ = ()


class Optional:
    """cel-go's optional value (``optional_type(T)``): a value, or none."""

    __slots__ = ("value",)

    _NONE: Any = object()

    def __init__(self, value: Any = _NONE) -> None:
        self.value = value

    @property
    def has_value(self) -> bool:
        return self.value is not Optional._NONE

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.has_value else "optional.none()"

    def __eq__(self, other: object) -> bool:
        """Optionals are equal when both are none or their values are equal (cel-go's Optional.Equal)."""
        if not isinstance(other, Optional):
            return False
        if not self.has_value or not other.has_value:
            return self.has_value == other.has_value
        return equal(self.value, other.value)

    def __hash__(self) -> int:
        return 0


def equal(a: Any, b: Any) -> bool:
    """Whether ``a == b`` holds in CEL (an error counts as not equal)."""
    result = cel_equal(a, b)
    return isinstance(result, celtypes.BoolType) and bool(result)


NUMBERS = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)


def _kind(v: Any) -> type | None:
    """The CEL type family of a value for equality (ints, uints and doubles are one: numbers)."""
    for t in (celtypes.BoolType, celtypes.StringType, celtypes.BytesType, celtypes.NullType,
              celtypes.ListType, celtypes.MapType, celtypes.TimestampType, celtypes.DurationType):
        if isinstance(v, t):
            return t
    if isinstance(v, NUMBERS):
        return celtypes.DoubleType
    return None


def cel_equal(a: Any, b: Any) -> Any:
    """``a == b`` as cel-go evaluates it (heterogeneous equality): values of different types are
    not equal, numbers compare by value across int, uint and double, lists and maps element by
    element. The Kubernetes types on the left accept only their own type (their Equal returns
    "no such overload" otherwise); on the right they are simply unequal to a built-in value."""
    if isinstance(a, CELEvalError):
        return a
    if isinstance(b, CELEvalError):
        return b
    if isinstance(a, Optional) or isinstance(b, Optional):
        return celtypes.BoolType(isinstance(a, Optional) and a == b)
    if isinstance(a, Opaque):
        if type(a) is not type(b):
            raise TypeError("no such overload")
        return celtypes.BoolType(a == b)
    if isinstance(b, Opaque):
        return celtypes.BoolType(False)
    ka, kb = _kind(a), _kind(b)
    if ka is None or kb is None:
        return celtypes.BoolType(type(a) is type(b) and bool(a == b))
    if ka is not kb:
        return celtypes.BoolType(False)
    if ka is celtypes.ListType:
        if len(a) != len(b):
            return celtypes.BoolType(False)
        return _all_equal(zip(a, b, strict=True))
    if ka is celtypes.MapType:
        if len(a) != len(b):
            return celtypes.BoolType(False)
        pairs = []
        for key, value in a.items():
            other = map_lookup(b, key)
            if other is MISSING:
                return celtypes.BoolType(False)
            pairs.append((value, other))
        return _all_equal(pairs)
    if ka is celtypes.DoubleType:
        return celtypes.BoolType(float(a) == float(b) if isinstance(a, float) or isinstance(b, float)
                                 else int(a) == int(b))
    if ka is celtypes.NullType:
        return celtypes.BoolType(True)
    return celtypes.BoolType(bool(a == b))


#: what map_lookup returns for a key the map does not hold
MISSING = object()


def _true(r: Any) -> bool:
    return isinstance(r, celtypes.BoolType) and bool(r)


def map_lookup(m: Any, key: Any) -> Any:
    for k, v in m.items():
        if _kind(k) is _kind(key) and _true(cel_equal(k, key)):
            return v
    return MISSING


def _all_equal(pairs: Any) -> Any:
    """True if every pair is equal; False as soon as one is not; an error when none is unequal
    but one comparison failed."""
    error: Any = None
    for x, y in pairs:
        try:
            r = cel_equal(x, y)
        except TypeError:
            r = CELEvalError("no such overload", TypeError, ())
        if isinstance(r, CELEvalError):
            error = error or r
        elif not r:
            return celtypes.BoolType(False)
    return error if error is not None else celtypes.BoolType(True)


def cel_not_equal(a: Any, b: Any) -> Any:
    r = cel_equal(a, b)
    return r if isinstance(r, CELEvalError) else celtypes.BoolType(not r)


def cel_in(item: Any, container: Any) -> Any:
    """``item in container``: a list holds an element equal to the item (comparisons that fail
    count as unequal, as cel-go's Contains), a map has the key."""
    if isinstance(item, CELEvalError):
        return item
    if isinstance(container, CELEvalError):
        return container
    if isinstance(container, celtypes.MapType):
        return celtypes.BoolType(map_lookup(container, item) is not MISSING)
    if isinstance(container, celtypes.ListType):
        for element in container:
            try:
                if _true(cel_equal(item, element)):
                    return celtypes.BoolType(True)
            except TypeError:
                continue
        return celtypes.BoolType(False)
    raise TypeError("no such overload")
