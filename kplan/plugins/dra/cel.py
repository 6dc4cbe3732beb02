"""CEL device selectors (dynamic-resource-allocation/cel), evaluated with cel-python (``celpy``).

Why cel-python: it is a complete, pure-Python implementation of the CEL specification that keeps
CEL's error semantics exactly where DRA selectors depend on them (``&&``/``||`` absorb an error
when the other operand decides, ``has()`` and ``in`` on maps, runtime "no such key"), and it lets
the Kubernetes extension types be plain Python objects with methods (``quantity(...)``,
``semver(...)``, ``q.compareTo(...)``), which the native-binding libraries on PyPI cannot express
as opaque CEL types. Its speed is that of an interpreter, so each expression is compiled once
(a process-wide cache) and each result is cached per identical device.

The variable is ``device`` (scheduler-reference-dra.md 3.1): ``driver``; ``attributes`` and
``capacity`` as maps domain → (id → value), where an attribute name without a domain goes under
the driver's name and an unknown domain gives an empty map; versions are Semver objects,
capacities Quantity objects.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from functools import total_ordering
from typing import Any

import celpy
from celpy import celtypes
from celpy.evaluation import CELEvalError

from kplan.model.dra import Device
from kplan.model.quantity import QuantityError, parse_quantity


class CelError(Exception):
    """A compile or runtime failure; ``str`` is the upstream detail text."""


# ------------------------------------------------------------------------- extension types

@total_ordering
class Quantity:
    """A Kubernetes resource.Quantity inside CEL (apiserver/pkg/cel/library/quantity.go)."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            raise CelError("no such overload")
        return self.value == other.value

    def __lt__(self, other: object) -> bool:
        raise CelError("no such overload")

    def __hash__(self) -> int:
        return hash(self.value)


_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                     r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


class Semver:
    """A semantic version (blang/semver v4 as the apiserver's CEL library uses it)."""

    __slots__ = ("major", "minor", "patch", "pre")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple[str, ...]) -> None:
        self.major, self.minor, self.patch, self.pre = major, minor, patch, pre

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        if normalize:
            text = text[1:] if text.startswith("v") else text
            m0 = re.search(r"[-+]", text)
            core, rest = (text[:m0.start()], text[m0.start():]) if m0 else (text, "")
            parts = core.split(".")
            while len(parts) < 3:
                parts.append("0")
            parts = [p.lstrip("0") or "0" for p in parts]
            text = ".".join(parts) + rest
        m = _SEMVER.match(text)
        if m is None:
            raise CelError(f"No Major.Minor.Patch elements found: {text!r}" if text.count(".") < 2
                           else f"invalid semantic version: {text!r}")
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)

    def compare(self, other: Semver) -> int:
        a, b = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn != yn:
                return -1 if xn else 1
            return -1 if x < y else 1
        return -1 if len(self.pre) < len(other.pre) else (1 if len(self.pre) > len(other.pre) else 0)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            raise CelError("no such overload")
        return self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))


def _quantity(s: Any) -> Quantity:
    try:
        return Quantity(parse_quantity(str(s)))
    except (QuantityError, ValueError) as e:
        raise CelError(f"quantities must match the regular expression: {e}") from None


def _is_quantity(s: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(s))
        return celtypes.BoolType(True)
    except (QuantityError, ValueError):
        return celtypes.BoolType(False)


def _semver(s: Any, normalize: Any = False) -> Semver:
    return Semver.parse(str(s), bool(normalize))


def _is_semver(s: Any, normalize: Any = False) -> celtypes.BoolType:
    try:
        Semver.parse(str(s), bool(normalize))
        return celtypes.BoolType(True)
    except CelError:
        return celtypes.BoolType(False)


def _sign(x: int) -> celtypes.IntType:
    return celtypes.IntType((x > 0) - (x < 0))


def _compare(a: Any, b: Any) -> celtypes.IntType:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return _sign((a.value > b.value) - (a.value < b.value))
    if isinstance(a, Semver) and isinstance(b, Semver):
        return _sign(a.compare(b))
    raise CelError("no such overload")


def _greater(a: Any, b: Any) -> celtypes.BoolType:
    return celtypes.BoolType(int(_compare(a, b)) > 0)


def _less(a: Any, b: Any) -> celtypes.BoolType:
    return celtypes.BoolType(int(_compare(a, b)) < 0)


def _q(a: Any) -> Quantity:
    if not isinstance(a, Quantity):
        raise CelError("no such overload")
    return a


def _arith(a: Any, b: Any, sign: int) -> Quantity:
    other = _q(b).value if isinstance(b, Quantity) else Fraction(int(b))
    return Quantity(_q(a).value + sign * other)


def _semver_part(attr: str) -> Callable[[Any], celtypes.IntType]:
    def get(v: Any) -> celtypes.IntType:
        if not isinstance(v, Semver):
            raise CelError("no such overload")
        return celtypes.IntType(getattr(v, attr))
    return get


def _as_integer(a: Any) -> celtypes.IntType:
    v = _q(a).value
    if v.denominator != 1 or not -(2**63) <= v < 2**63:
        raise CelError("cannot convert value to integer")
    return celtypes.IntType(int(v))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "compareTo": _compare,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "sign": lambda a: _sign((_q(a).value > 0) - (_q(a).value < 0)),
    "isInteger": lambda a: celtypes.BoolType(_q(a).value.denominator == 1),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda a: celtypes.DoubleType(float(_q(a).value)),
    "add": lambda a, b: _arith(a, b, 1),
    "sub": lambda a, b: _arith(a, b, -1),
    "major": _semver_part("major"),
    "minor": _semver_part("minor"),
    "patch": _semver_part("patch"),
}


# ------------------------------------------------------------------------------- the device

class _Domains(celtypes.MapType):
    """``device.attributes`` / ``device.capacity``: an unknown domain is an empty map."""

    def __getitem__(self, key: Any) -> Any:
        if key not in self:
            return celtypes.MapType()
        return super().__getitem__(key)


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _value(kind: str, v: Any, name: str) -> Any:
    if kind == "string":
        return celtypes.StringType(v)
    if kind == "int":
        return celtypes.IntType(v)
    if kind == "bool":
        return celtypes.BoolType(v)
    try:
        return Semver.parse(v)
    except CelError as e:
        raise CelError(f"attribute {name}: parse semantic version: {e}") from None


def device_activation(driver: str, device: Device) -> dict[str, Any]:
    """The ``device`` variable of one device; raises CelError when a version attribute is invalid."""
    attrs: dict[Any, Any] = {}
    for name, (kind, v) in device.attributes.items():
        domain, ident = _split(name, driver)
        attrs.setdefault(celtypes.StringType(domain), celtypes.MapType())[celtypes.StringType(ident)] = \
            _value(kind, v, name)
    caps: dict[Any, Any] = {}
    for name, q in device.capacity.items():
        domain, ident = _split(name, driver)
        caps.setdefault(celtypes.StringType(domain), celtypes.MapType())[celtypes.StringType(ident)] = \
            Quantity(parse_quantity(q))
    return {"device": celtypes.MapType({
        celtypes.StringType("driver"): celtypes.StringType(driver),
        celtypes.StringType("attributes"): _Domains(attrs),
        celtypes.StringType("capacity"): _Domains(caps),
    })}


# ------------------------------------------------------------------------------- compilation

_ENV = celpy.Environment()
_PROGRAMS: dict[str, Any] = {}


def compile_selector(expression: str) -> Any:
    """Compile once (process-wide cache); raises CelError with cel-go's wording."""
    prg = _PROGRAMS.get(expression)
    if prg is not None:
        return prg
    try:
        ast = _ENV.compile(expression)
    except Exception as e:  # celpy's parser raises its own error types
        detail = " ".join(str(e).split())
        line = getattr(e, "line", None) or 1
        col = getattr(e, "column", None) or 1
        raise CelError(f"compilation failed: ERROR: <input>:{line}:{col}: Syntax error: {detail}") from None
    prg = _ENV.program(ast, functions=FUNCTIONS)
    _PROGRAMS[expression] = prg
    return prg


def _runtime_detail(e: BaseException) -> str:
    args: tuple[Any, ...] = tuple(getattr(e, "args", ()))
    cause = args[1] if len(args) > 1 else None
    text = str(args[0]) if args else str(e)
    if cause is KeyError or "no such member" in text or "no such key" in text:
        m = re.search(r"'([^']*)'", text)
        return f"no such key: {m.group(1) if m else text}"
    if "overload" in text:
        return "no such overload"
    return text


def evaluate(program: Any, activation: dict[str, Any]) -> bool:
    """Run a compiled selector on one device's activation; raises CelError for runtime errors."""
    try:
        result = program.evaluate(activation)
    except CelError:
        raise
    except CELEvalError as e:
        raise CelError(_runtime_detail(e)) from None
    except Exception as e:  # an extension function's own failure surfaces as a CEL runtime error
        raise CelError(str(e)) from None
    if isinstance(result, CELEvalError):
        raise CelError(_runtime_detail(result))
    if not isinstance(result, celtypes.BoolType):
        raise CelError(f"CEL result of type {type(result).__name__} could not be converted to bool")
    return bool(result)
