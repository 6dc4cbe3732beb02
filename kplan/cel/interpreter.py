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

import math
import operator
import re
import threading
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import total_ordering
from typing import Any

import celpy
from celpy import InterpretedRunner, celtypes
from celpy.evaluation import CELEvalError, Evaluator

from kplan.cel import formats, library, net, strformat
from kplan.cel.check import check_selector
from kplan.cel.values import (
    MISSING,
    NUMBERS,
    LibraryError,
    Opaque,
    Optional,
    cel_equal,
    cel_in,
    cel_not_equal,
    map_lookup,
)
from kplan.model.dra import Device
from kplan.model.quantity import QuantityError, parse_quantity


class CelError(Exception):
    """A compile or runtime failure; ``str`` is the upstream detail text."""


# ------------------------------------------------------------------------- extension types

@total_ordering
class Quantity(Opaque):
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


class Semver(Opaque):
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


def _ordering(name: str, op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    """``<``, ``<=``, ``>``, ``>=``: numbers compare by value across int, uint and double (the
    Kubernetes environment enables cross-type numeric comparisons); everything else as celpy does."""
    fallback = celpy.evaluation.base_functions[name]

    def compare(a: Any, b: Any) -> Any:
        if isinstance(a, NUMBERS) and isinstance(b, NUMBERS) and not isinstance(a, celtypes.BoolType) \
                and not isinstance(b, celtypes.BoolType) and type(a) is not type(b):
            if isinstance(a, float) or isinstance(b, float):
                return celtypes.BoolType(op(float(a), float(b)))
            return celtypes.BoolType(op(int(a), int(b)))
        return fallback(a, b)
    return compare


# ------------------------------------------------------------------------------- runtime cost

#: resource.k8s.io CELSelectorExpressionMaxCost: the runtime cost limit of one selector evaluation
MAX_COST = 1_000_000
COST_EXCEEDED = "operation cancelled: actual cost limit exceeded"
#: cel-go's cost factors (common/cost.go)
_STRING_TRAVERSAL, _REGEX_LENGTH, _LIST_CREATE, _MAP_CREATE = 0.1, 0.25, 10, 30


class _CostExceeded(BaseException):
    """Aborts an evaluation past the limit. Not an Exception, so that no handler inside celpy
    turns it into an error value that ``&&``/``||`` could absorb: cel-go cancels the evaluation."""


class _Tracker(threading.local):
    """The running cost of the evaluation in progress, one per thread (evaluations do not nest;
    a sweep worker may run simulations in several threads)."""

    def __init__(self) -> None:
        self.cost = 0
        self.limit = MAX_COST

    def charge(self, n: int) -> None:
        self.cost += n
        if self.cost > self.limit:
            raise _CostExceeded


_TRACKER = _Tracker()


def _size(v: Any) -> int:
    """cel-go's actualSize: the size of strings, bytes, lists and maps, 1 for anything else."""
    return len(v) if isinstance(v, (str, bytes, list, dict)) else 1


def _traversal(n: float) -> int:
    return math.ceil(n * _STRING_TRAVERSAL)


def _call_cost(name: str, args: Sequence[Any]) -> int:
    """The cost of one call as cel-go's CostTracker.costCall counts it without an estimator hit."""
    if name in ("startsWith", "endsWith") and args:
        return _traversal(_size(args[0]))
    if name == "matches" and len(args) == 2:
        return math.ceil((1 + _size(args[0])) * _STRING_TRAVERSAL) * math.ceil(_size(args[1]) * _REGEX_LENGTH)
    if name == "contains" and len(args) == 2 and isinstance(args[0], str):
        return _traversal(_size(args[0])) * _traversal(_size(args[1]))
    return 1


def _charged(function: Callable[..., Any], rule: str) -> Callable[..., Any]:
    """An operator that adds its cost: "compare" (equality and ordering: by the smaller operand),
    "in" (by the list's size), "concat" (strings by both sizes), "one"."""

    def call(*args: Any) -> Any:
        if rule == "compare":
            n = _traversal(min(_size(args[0]), _size(args[1])))
        elif rule == "in":
            n = len(args[1]) if isinstance(args[1], list) else 1
        elif rule == "concat" and isinstance(args[0], str) and isinstance(args[1], str):
            n = _traversal(len(args[0]) + len(args[1]))
        else:
            n = 1
        _TRACKER.charge(n)
        return function(*args)
    return call


def _plus(a: Any, b: Any) -> Any:
    """``a + b`` as celpy adds, with the result a CEL value again: Python's ``+`` on two CEL
    strings, bytes or lists gives a plain str, bytes or list, which would equal nothing."""
    result = celpy.evaluation.base_functions["_+_"](a, b)
    if type(result) is str:
        return celtypes.StringType(result)
    if type(result) is bytes:
        return celtypes.BytesType(result)
    if type(result) is list:
        return celtypes.ListType(result)
    return result


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
    "_==_": _charged(cel_equal, "compare"),
    "_!=_": _charged(cel_not_equal, "compare"),
    "_in_": _charged(cel_in, "in"),
    "_<_": _charged(_ordering("_<_", operator.lt), "compare"),
    "_<=_": _charged(_ordering("_<=_", operator.le), "compare"),
    "_>_": _charged(_ordering("_>_", operator.gt), "compare"),
    "_>=_": _charged(_ordering("_>=_", operator.ge), "compare"),
    "_+_": _charged(_plus, "concat"),
    **{op: _charged(celpy.evaluation.base_functions[op], "one") for op in ("_-_", "_*_", "_/_", "_%_", "!_", "-_")},
}


def _library(function: Callable[..., Any]) -> Callable[..., Any]:
    """A library function whose failure is a CEL error value (which ``&&``/``||`` may absorb)."""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except LibraryError as e:
            return CELEvalError(str(e), LibraryError, ())
    return call


FUNCTIONS.update({name: _library(f) for name, f in library.FUNCTIONS.items()})
FUNCTIONS.update({name: _library(f) for name, f in net.FUNCTIONS.items()})
FUNCTIONS.update({name: _library(f) for name, f in formats.FUNCTIONS.items()})
FUNCTIONS["format"] = _library(strformat.string_format)
_QUALIFIED = {**library.QUALIFIED, **net.QUALIFIED, **formats.QUALIFIED}


def _to_string(v: Any) -> Any:
    """``string(x)``: an IP or CIDR in its text form, anything else as celpy converts it."""
    text = net.to_string(v)
    return text if text is not None else celtypes.StringType(v)


FUNCTIONS["string"] = _to_string


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


def device_activation(driver: str, device: Device, consumable: bool = False) -> dict[str, Any]:
    """The ``device`` variable of one device; raises CelError when a version attribute is invalid.
    ``device.allowMultipleAllocations`` is the device's with DRAConsumableCapacity (``consumable``),
    else false (the API server drops the field from slices then)."""
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
        celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(
            consumable and device.allow_multiple_allocations),
        celtypes.StringType("attributes"): _Domains(attrs),
        celtypes.StringType("capacity"): _Domains(caps),
    })}


# ------------------------------------------------------------------------------- compilation

class _CostEvaluator(Evaluator):
    """celpy's evaluator with cel-go's runtime cost (interpreter/runtimecost.go) counted as it
    goes: 1 per identifier, field selection and index, per function or method call (more for the
    string functions cel-go sizes), the operators' costs in ``_charged``, 10 per list literal and
    30 per map literal, 0 per constant; ``&&``, ``||`` and ``?:`` cost nothing themselves and, as in
    cel-go, do not evaluate the side that cannot change the result; comprehensions pay their
    accumulator and loop condition per iteration as cel-go's expansion of the macro does, and
    ``all``/``exists`` stop at the first decisive element. Past the limit the evaluation stops."""

    def sub_evaluator(self, ast: Any) -> Evaluator:
        return _CostEvaluator(ast, activation=self.activation)

    def _visit_tree(self, tree: Any) -> Any:
        kind = tree.data
        if kind in ("member_dot", "member_index"):
            _TRACKER.charge(1)
        elif kind == "primary":
            child = tree.children[0]
            if child.data == "ident":
                _TRACKER.charge(1)
            elif child.data == "list_lit":
                _TRACKER.charge(_LIST_CREATE)
            elif child.data == "map_lit":
                _TRACKER.charge(_MAP_CREATE)
            elif child.data == "ident_arg" and child.children[0].value == "has":
                _TRACKER.charge(1)
        return super()._visit_tree(tree)

    def function_eval(self, name_token: Any, exprlist: Any = None) -> Any:
        args = list(exprlist) if exprlist is not None else []
        _TRACKER.charge(_call_cost(str(name_token), args))
        return super().function_eval(name_token, args)

    def method_eval(self, obj: Any, method_ident: Any, exprlist: Any = None) -> Any:
        args = list(exprlist) if exprlist is not None else []
        _TRACKER.charge(_call_cost(str(method_ident), [obj, *args]))
        return super().method_eval(obj, method_ident, args)

    def _logical(self, tree: Any, name: str, decisive: bool) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        left = self.visit(tree.children[0])
        if isinstance(left, celtypes.BoolType) and bool(left) is decisive:
            return left
        right = self.visit(tree.children[1])
        try:
            return self.activation.resolve_function(name)(left, right)
        except TypeError as ex:
            return CELEvalError(f"found no matching overload for {name}", ex.__class__, ex.args, tree=tree)

    def conditionalor(self, tree: Any) -> Any:
        return self._logical(tree, "_||_", True)

    def conditionaland(self, tree: Any) -> Any:
        return self._logical(tree, "_&&_", False)

    def _namespace(self, tree: Any) -> str | None:
        """The name a call is qualified by (``sets`` in ``sets.contains(...)``), when the receiver
        is a bare identifier that is no variable."""
        node = tree
        while getattr(node, "data", None) in ("member", "primary") and len(node.children) == 1:
            node = node.children[0]
        if getattr(node, "data", None) != "ident":
            return None
        name = str(node.children[0])
        try:  # a variable, not a function's name (``ip`` is both a function and a namespace)
            self.activation.identifiers.resolve_name(self.activation.package, name)
        except KeyError:
            return name
        return None

    def _arguments(self, tree: Any) -> list[Any]:
        return list(tree.children[2].children) if len(tree.children) > 2 and tree.children[2] is not None else []

    def _variable(self, tree: Any) -> str:
        return str(next(iter(tree.find_data("ident"))).children[0])

    def member_dot_arg(self, tree: Any) -> Any:
        macro = tree.children[1].value
        args = self._arguments(tree)
        namespace = self._namespace(tree.children[0])
        if namespace is not None:
            return self._qualified(namespace, tree.children[1], args)
        if macro in ("all", "exists", "existsOne") and len(args) == 3:
            return self._two_variables(tree, macro, args)
        if macro in ("transformList", "transformMap", "transformMapEntry") and len(args) in (3, 4):
            return self._transform(tree, macro, args)
        if macro == "sortBy" and len(args) == 2:
            return self._sort_by(tree, args)
        if macro in ("optMap", "optFlatMap") and len(args) == 2:
            return self._opt_map(tree, macro, args)
        if macro in ("min", "reduce"):
            # a library function here (celpy would take it for its own macros)
            receiver = self.visit(tree.children[0])
            values = [self.visit(a) for a in args]
            return self.method_eval(receiver, tree.children[1], values)
        if macro not in ("all", "exists", "exists_one", "map", "filter"):
            return super().member_dot_arg(tree)
        items = self.visit(tree.children[0])
        if isinstance(items, CELEvalError):
            return items
        if macro in ("all", "exists"):
            decisive = macro == "exists"
            body = self.build_ss_macro_eval(tree)
            result: Any = celtypes.BoolType(not decisive)
            for item in items:
                # loop condition @not_strictly_false(__result__) (exists: of !__result__)
                _TRACKER.charge(2 if macro == "all" else 3)
                if isinstance(result, celtypes.BoolType) and bool(result) is decisive:
                    break
                _TRACKER.charge(1)  # __result__ in the step
                value = body(item)
                if isinstance(value, celtypes.BoolType) and bool(value) is decisive:
                    result = value
                elif not isinstance(result, CELEvalError) and not isinstance(value, celtypes.BoolType):
                    result = value if isinstance(value, CELEvalError) else \
                        CELEvalError("no such overload", TypeError, ())
            _TRACKER.charge(1)  # the result
            return result
        if macro in ("map", "filter"):
            _TRACKER.charge(_LIST_CREATE)  # the accumulator []
        counted = _CountingBody(self.build_macro_eval(tree), macro)
        out = _run_macro(macro, items, counted)
        _TRACKER.charge(2 if macro == "exists_one" else 1)  # the result (exists_one: __result__ == 1)
        return out


    def _qualified(self, namespace: str, name_token: Any, args: list[Any]) -> Any:
        name = str(name_token)
        if namespace == "cel" and name == "bind" and len(args) == 3:
            # cel.bind(v, init, body): a comprehension over [] whose accumulator is v
            _TRACKER.charge(_LIST_CREATE)
            init = self.visit(args[1])
            if isinstance(init, CELEvalError):
                return init
            return self.sub_evaluator(args[2]).evaluate({self._variable(args[0]): init})
        function = _QUALIFIED.get((namespace, name))
        if function is None:
            return CELEvalError(f"undeclared reference to '{namespace}.{name}'", LibraryError, ())
        _TRACKER.charge(1)
        values = [self.visit(a) for a in args]
        for v in values:
            if isinstance(v, CELEvalError):
                return v
        return _library(function)(*values)

    def _two_variables(self, tree: Any, macro: str, args: list[Any]) -> Any:
        """all/exists/existsOne(k, v, predicate): (index, value) over a list, (key, value) over a map."""
        items = self.visit(tree.children[0])
        if isinstance(items, CELEvalError):
            return items
        first, second = self._variable(args[0]), self._variable(args[1])
        pairs = list(enumerate(items)) if isinstance(items, list) else list(items.items())
        body = self.sub_evaluator(args[2])
        decisive = macro == "exists"
        count = 0
        result: Any = celtypes.BoolType(not decisive)
        for key, value in pairs:
            _TRACKER.charge(2 if macro == "all" else 3)
            if macro != "existsOne" and isinstance(result, celtypes.BoolType) and bool(result) is decisive:
                break
            _TRACKER.charge(1)
            index: Any = celtypes.IntType(key) if isinstance(items, list) else key
            outcome: Any
            try:
                outcome = body.evaluate({first: index, second: value})
            except CELEvalError as e:
                outcome = e
            if macro == "existsOne":
                if isinstance(outcome, CELEvalError):
                    return outcome
                count += bool(outcome)
            elif isinstance(outcome, celtypes.BoolType) and bool(outcome) is decisive:
                result = outcome
            elif not isinstance(result, CELEvalError) and not isinstance(outcome, celtypes.BoolType):
                result = outcome if isinstance(outcome, CELEvalError) else CELEvalError("no such overload", TypeError, ())
        _TRACKER.charge(1)
        return celtypes.BoolType(count == 1) if macro == "existsOne" else result

    def _run(self, body: Evaluator, bindings: dict[str, Any]) -> Any:
        try:
            return body.evaluate(bindings)
        except CELEvalError as e:
            return e

    def _transform(self, tree: Any, macro: str, args: list[Any]) -> Any:
        """transformList/transformMap/transformMapEntry(k, v, [filter,] transform): (index, value)
        over a list, (key, value) over a map; the elements the filter keeps give a list element,
        the value under the same key, or a map's entries (a key given twice is an error)."""
        items = self.visit(tree.children[0])
        if isinstance(items, CELEvalError):
            return items
        if not isinstance(items, (celtypes.ListType, celtypes.MapType)):
            return CELEvalError("no such overload", TypeError, ())
        first, second = self._variable(args[0]), self._variable(args[1])
        keep = self.sub_evaluator(args[2]) if len(args) == 4 else None
        transform = self.sub_evaluator(args[-1])
        _TRACKER.charge(_LIST_CREATE if macro == "transformList" else _MAP_CREATE)  # the accumulator
        pairs = list(enumerate(items)) if isinstance(items, list) else list(items.items())
        listed: list[Any] = []
        mapped = celtypes.MapType()
        for key, value in pairs:
            index: Any = celtypes.IntType(key) if isinstance(items, list) else key
            bindings = {first: index, second: value}
            if keep is not None:
                wanted = self._run(keep, bindings)
                if isinstance(wanted, CELEvalError):
                    return wanted
                if not isinstance(wanted, celtypes.BoolType):
                    return CELEvalError("no such overload", TypeError, ())
                if not wanted:
                    _TRACKER.charge(1)  # __result__
                    continue
            out = self._run(transform, bindings)
            if isinstance(out, CELEvalError):
                return out
            if macro == "transformList":
                _TRACKER.charge(1 + _LIST_CREATE + 1)  # __result__ + [out]
                listed.append(out)
            elif macro == "transformMap":
                _TRACKER.charge(3)  # cel.@mapInsert(__result__, k, out)
                mapped[index] = out
            else:
                _TRACKER.charge(2)  # cel.@mapInsert(__result__, out)
                if not isinstance(out, celtypes.MapType):
                    return CELEvalError("no such overload", TypeError, ())
                for k, v in out.items():
                    if map_lookup(mapped, k) is not MISSING:
                        shown = str(bool(k)).lower() if isinstance(k, celtypes.BoolType) else str(k)
                        return CELEvalError(f"insert failed: key {shown} already exists", LibraryError, ())
                    mapped[k] = v
        _TRACKER.charge(1)  # the result
        return celtypes.ListType(listed) if macro == "transformList" else mapped

    def _opt_map(self, tree: Any, macro: str, args: list[Any]) -> Any:
        """opt.optMap(v, expr): optional.of(expr) with v the value, none for none; optFlatMap's
        expr gives the optional itself."""
        opt = self.visit(tree.children[0])
        if isinstance(opt, CELEvalError):
            return opt
        if not isinstance(opt, Optional):
            return CELEvalError("no such overload", TypeError, ())
        _TRACKER.charge(1)  # hasValue()
        if not opt.has_value:
            _TRACKER.charge(1)  # optional.none()
            return Optional()
        _TRACKER.charge(_LIST_CREATE + 2)  # the bind of v to value()
        out = self._run(self.sub_evaluator(args[1]), {self._variable(args[0]): opt.value})
        if isinstance(out, CELEvalError):
            return out
        if macro == "optMap":
            _TRACKER.charge(1)  # optional.of()
            return Optional(out)
        return out if isinstance(out, Optional) else CELEvalError("no such overload", TypeError, ())

    def _sort_by(self, tree: Any, args: list[Any]) -> Any:
        """list.sortBy(e, key): cel-go binds the list, maps it to its keys and sorts the list
        by them (library.sort_by_keys)."""
        _TRACKER.charge(_LIST_CREATE)  # the bind's empty range
        items = self.visit(tree.children[0])
        if isinstance(items, CELEvalError):
            return items
        if not isinstance(items, celtypes.ListType):
            return CELEvalError("no such overload", TypeError, ())
        var = self._variable(args[0])
        body = self.sub_evaluator(args[1])
        _TRACKER.charge(1 + _LIST_CREATE)  # the bound list and the map's accumulator
        keys = []
        for item in items:
            key = self._run(body, {var: item})
            if isinstance(key, CELEvalError):
                return key
            _TRACKER.charge(1 + _LIST_CREATE + 1)  # __result__ + [key]
            keys.append(key)
        _TRACKER.charge(3)  # the map's result, the bound list, @sortByAssociatedKeys
        return _library(library.sort_by_keys)(items, celtypes.ListType(keys))


class _CountingBody:
    """A map/filter/exists_one body with cel-go's step costs around it."""

    def __init__(self, body: Callable[[Any], Any], macro: str) -> None:
        self.body, self.macro = body, macro

    def __call__(self, item: Any) -> Any:
        value = self.body(item)
        if self.macro == "map":
            _TRACKER.charge(1 + _LIST_CREATE + 1)  # __result__ + [value]
        elif bool(value) if isinstance(value, celtypes.BoolType) else False:
            _TRACKER.charge(1 + _LIST_CREATE + 2 if self.macro == "filter" else 2)
        else:
            _TRACKER.charge(1)
        return value


def _run_macro(macro: str, items: Any, body: _CountingBody) -> Any:
    if macro == "map":
        values = [body(item) for item in items]
        for v in values:
            if isinstance(v, CELEvalError):
                return v
        return celtypes.ListType(values)
    if macro == "filter":
        kept = []
        for item in items:
            v = body(item)
            if isinstance(v, CELEvalError):
                return v
            if v:
                kept.append(item)
        return celtypes.ListType(kept)
    count = 0
    for item in items:
        v = body(item)
        if isinstance(v, CELEvalError):
            return v
        count += bool(v)
    return celtypes.BoolType(count == 1)


class _Runner(InterpretedRunner):
    def evaluate(self, context: Any) -> Any:
        return _CostEvaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)


_ENV = celpy.Environment(runner_class=_Runner)
_PROGRAMS: dict[tuple[str, bool], Any] = {}


def compile_selector(expression: str, stored: bool = False) -> Any:
    """Compile once (process-wide cache); raises CelError with cel-go's wording. ``stored``: the
    "stored expressions" environment kube-scheduler compiles in, which declares every field of
    ``device`` whatever the gates (``allowMultipleAllocations`` too); else the API server's for
    new expressions with 1.34's gates, which does not."""
    prg = _PROGRAMS.get((expression, stored))
    if prg is not None:
        return prg
    try:
        ast = _ENV.compile(expression)
    except Exception as e:  # celpy's parser raises its own error types
        detail = " ".join(str(e).split())
        line = getattr(e, "line", None) or 1
        col = getattr(e, "column", None) or 1
        raise CelError(f"compilation failed: ERROR: <input>:{line}:{col}: Syntax error: {detail}") from None
    # cel-go type-checks on compile (the API server on create, the scheduler when it allocates)
    findings = check_selector(ast, expression, stored)
    if findings:
        raise CelError(findings[0])
    prg = _ENV.program(ast, functions=FUNCTIONS)
    _PROGRAMS[(expression, stored)] = prg
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


def evaluate(program: Any, activation: dict[str, Any], limit: int | None = None) -> bool:
    """Run a compiled selector on one device's activation; raises CelError for runtime errors,
    among them the cost limit's."""
    return evaluate_with_cost(program, activation, limit)[0]


def evaluate_with_cost(program: Any, activation: dict[str, Any], limit: int | None = None) -> tuple[bool, int]:
    """``evaluate`` and the runtime cost it counted (``limit``: MAX_COST unless given)."""
    _TRACKER.cost, _TRACKER.limit = 0, MAX_COST if limit is None else limit
    try:
        result = program.evaluate(activation)
    except _CostExceeded:
        raise CelError(COST_EXCEEDED) from None
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
    return bool(result), _TRACKER.cost
