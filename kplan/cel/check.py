"""The static type check cel-go runs when a DRA selector is compiled (checker/checker.go), over
cel-python's parse tree.

The API server and the scheduler compile a selector with the type checker on, so an expression
that parses but cannot type-check is refused on create, and fails a claim's allocation as a
compile error. cel-python only parses; this pass gives kplan the same verdicts for the errors a
selector's author makes:

* a name that is not declared (``gpu.memory > 1``): ``undeclared reference to 'gpu' (in container '')``;
* a field the ``device`` object does not have (``device.drvier``): ``undefined field 'drvier'``;
  and field selection on a value that has no fields;
* an operator or function applied to types no overload takes (``device.driver == 1``,
  ``1 + 1.0``, a Quantity compared with ``<``): ``found no matching overload for '_==_' applied to
  '(string, int)'``;
* a comprehension over something that is neither a list nor a map;
* a literal format string given a list literal (``"%d".format(["x"])``) that cel-go's string-format
  validator refuses: arguments missing or left over, an unknown clause, an argument the clause
  does not take;
* a result whose static type is neither ``bool`` nor ``dyn``:
  ``must evaluate to bool or the unknown type, not string`` (dynamic-resource-allocation/cel).

The environment is the one of scheduler-reference-dra.md 3.1: ``device`` of object type
``kubernetes.DRADevice`` with ``driver`` (string), ``attributes`` (map of domain to map of id to
``dyn``) and ``capacity`` (the same, with ``kubernetes.Quantity`` values). Attribute values are
``dyn``, so most selectors type-check and fail, if at all, at run time.

The check is one-sided on purpose: where kplan does not model an overload set completely (the
library functions beyond those DRA selectors use, qualified names such as ``sets.contains``)
the result is ``dyn`` and nothing is reported, so a selector cel-go accepts is never refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from celpy.evaluation import celstr
from lark import Token, Tree

from kplan.cel import strformat
from kplan.cel.values import LibraryError


@dataclass(frozen=True)
class CelType:
    """A CEL type: ``int``, ``dyn``, ``kubernetes.Quantity``, or ``list``/``map`` with parameters."""

    name: str
    params: tuple[CelType, ...] = ()

    def __str__(self) -> str:
        """As cel-go prints a type in its messages (checker.FormatCelType)."""
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    @property
    def family(self) -> str:
        """Numbers of all kinds are one family (they compare with each other)."""
        return "number" if self in NUMERIC else self.name

    def is_a(self, *names: str) -> bool:
        return self.name in names


DYN, BOOL, INT, UINT, DOUBLE, STRING, BYTES, NULL, TYPE = (CelType(n) for n in (
    "dyn", "bool", "int", "uint", "double", "string", "bytes", "null", "type"))
QUANTITY, SEMVER, DEVICE = CelType("kubernetes.Quantity"), CelType("kubernetes.Semver"), CelType("kubernetes.DRADevice")
TIMESTAMP, DURATION = CelType("google.protobuf.Timestamp"), CelType("google.protobuf.Duration")
IP, CIDR, URL = CelType("net.IP"), CelType("net.CIDR"), CelType("kubernetes.URL")
NUMERIC = frozenset({INT, UINT, DOUBLE})
PRIMITIVE = frozenset({BOOL, INT, UINT, DOUBLE, STRING, BYTES})


def list_of(t: CelType) -> CelType:
    return CelType("list", (t,))


def map_of(k: CelType, v: CelType) -> CelType:
    return CelType("map", (k, v))


#: the fields of ``device`` with the default feature gates of 1.34
DEVICE_FIELDS: dict[str, CelType] = {
    "driver": STRING,
    "attributes": map_of(STRING, map_of(STRING, DYN)),
    "capacity": map_of(STRING, map_of(STRING, QUANTITY)),
}
#: the "stored expressions" environment kube-scheduler compiles selectors in: every versioned
#: option whatever the gates, so the device type is deviceTypeV134ConsumableCapacity, with
#: ``allowMultipleAllocations`` (the API server's environment for new expressions has it only
#: with DRAConsumableCapacity)
DEVICE_FIELDS_STORED: dict[str, CelType] = {"allowMultipleAllocations": BOOL, **DEVICE_FIELDS}

#: identifiers that name types (a type value, as in ``type(x) == int``)
TYPE_NAMES = frozenset({"bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type", "type",
                        "dyn"})

#: every function the 1.34 "stored expressions" environment declares under a simple name
#: (standard library, the cel-go extensions and Kubernetes libraries of scheduler-reference-dra.md
#: 3.4): an unknown name is an undeclared reference, a known one without a modelled overload
#: set gives ``dyn``
KNOWN_FUNCTIONS = frozenset({
    # standard
    "size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double", "string", "bytes", "bool",
    "type", "dyn", "duration", "timestamp", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
    "getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds",
    # strings extension
    "charAt", "indexOf", "lastIndexOf", "lowerAscii", "upperAscii", "replace", "split", "substring", "trim",
    "join", "quote", "format", "reverse",
    # lists extension and Kubernetes lists
    "flatten", "slice", "distinct", "sort", "sortBy", "first", "last", "isSorted", "sum", "min", "max",
    # optional types
    "hasValue", "value", "or", "orValue", "optMap", "optFlatMap",
    # regex, URLs, IP/CIDR, format, authz
    "find", "findAll", "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath",
    "getQuery", "ip", "isIP", "isCanonical", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
    "isLinkLocalUnicast", "isGlobalUnicast", "cidr", "isCIDR", "containsIP", "containsCIDR", "masked",
    "prefixLength", "validate", "path", "group", "resource", "subresource", "namespace", "name", "check",
    "allowed", "reason", "errored", "error", "serviceAccount", "fieldSelector", "labelSelector",
    # quantity and semver
    "quantity", "isQuantity", "sign", "isInteger", "asInteger", "asApproximateFloat", "add", "sub",
    "isGreaterThan", "isLessThan", "compareTo", "semver", "isSemver", "major", "minor", "patch",
})

#: comprehension macros: name -> the argument counts that make them macros
MACROS = {"all": (2, 3), "exists": (2, 3), "exists_one": (2,), "existsOne": (3,), "map": (2, 3), "filter": (2,),
          "transformList": (3, 4), "transformMap": (3, 4), "transformMapEntry": (3, 4), "sortBy": (2,)}

#: receiver methods whose overloads are modelled: name -> ((receiver, (args...), result), ...)
METHODS: dict[str, tuple[tuple[CelType, tuple[CelType, ...], CelType], ...]] = {
    "sign": ((QUANTITY, (), INT),),
    "isInteger": ((QUANTITY, (), BOOL),),
    "asInteger": ((QUANTITY, (), INT),),
    "asApproximateFloat": ((QUANTITY, (), DOUBLE),),
    "add": ((QUANTITY, (QUANTITY,), QUANTITY), (QUANTITY, (INT,), QUANTITY)),
    "sub": ((QUANTITY, (QUANTITY,), QUANTITY), (QUANTITY, (INT,), QUANTITY)),
    "isGreaterThan": ((QUANTITY, (QUANTITY,), BOOL), (SEMVER, (SEMVER,), BOOL)),
    "isLessThan": ((QUANTITY, (QUANTITY,), BOOL), (SEMVER, (SEMVER,), BOOL)),
    "compareTo": ((QUANTITY, (QUANTITY,), INT), (SEMVER, (SEMVER,), INT)),
    "major": ((SEMVER, (), INT),),
    "minor": ((SEMVER, (), INT),),
    "patch": ((SEMVER, (), INT),),
    "contains": ((STRING, (STRING,), BOOL),),
    "startsWith": ((STRING, (STRING,), BOOL),),
    "endsWith": ((STRING, (STRING,), BOOL),),
    "matches": ((STRING, (STRING,), BOOL),),
    "lowerAscii": ((STRING, (), STRING),),
    "format": ((STRING, (list_of(DYN),), STRING),),
    "upperAscii": ((STRING, (), STRING),),
    # the Kubernetes IP, CIDR and URL libraries
    "family": ((IP, (), INT),),
    "isUnspecified": ((IP, (), BOOL),),
    "isLoopback": ((IP, (), BOOL),),
    "isLinkLocalMulticast": ((IP, (), BOOL),),
    "isLinkLocalUnicast": ((IP, (), BOOL),),
    "isGlobalUnicast": ((IP, (), BOOL),),
    "containsIP": ((CIDR, (STRING,), BOOL), (CIDR, (IP,), BOOL)),
    "containsCIDR": ((CIDR, (STRING,), BOOL), (CIDR, (CIDR,), BOOL)),
    "ip": ((CIDR, (), IP),),
    "masked": ((CIDR, (), CIDR),),
    "prefixLength": ((CIDR, (), INT),),
    "getScheme": ((URL, (), STRING),),
    "getHost": ((URL, (), STRING),),
    "getHostname": ((URL, (), STRING),),
    "getPort": ((URL, (), STRING),),
    "getEscapedPath": ((URL, (), STRING),),
    "getQuery": ((URL, (), map_of(STRING, list_of(STRING))),),
}

#: global functions whose overloads are modelled
GLOBALS: dict[str, tuple[tuple[tuple[CelType, ...], CelType], ...]] = {
    "quantity": (((STRING,), QUANTITY),),
    "isQuantity": (((STRING,), BOOL),),
    "semver": (((STRING,), SEMVER), ((STRING, BOOL), SEMVER)),
    "isSemver": (((STRING,), BOOL), ((STRING, BOOL), BOOL)),
    "ip": (((STRING,), IP),),
    "isIP": (((STRING,), BOOL),),
    "cidr": (((STRING,), CIDR),),
    "isCIDR": (((STRING,), BOOL),),
    "url": (((STRING,), URL),),
    "isURL": (((STRING,), BOOL),),
}

#: conversions: whatever they accept, their result has the type they name
CONVERSIONS: dict[str, CelType] = {"int": INT, "uint": UINT, "double": DOUBLE, "string": STRING, "bool": BOOL,
                                   "bytes": BYTES, "dyn": DYN, "type": TYPE, "duration": DURATION,
                                   "timestamp": TIMESTAMP}


def _matches(want: CelType, got: CelType) -> bool:
    """``got`` may be passed where ``want`` is declared (dyn matches anything, lists and maps by kind)."""
    if DYN in (want, got):
        return True
    if want.params or got.params:
        return want.name == got.name
    return want == got


def _comparable(a: CelType, b: CelType) -> bool:
    """``==``/``!=``/``in`` may apply: one side dynamic, the same type (lists and maps: of any
    elements), or null against an object. Equality is declared on one type parameter, (A, A), so
    an int and a double do not compare statically (they do at run time, when dyn hides them)."""
    if a == DYN or b == DYN:
        return True
    if a.family == b.family:
        return a == b if a.family == "number" else True
    if NULL in (a, b):
        other = b if a == NULL else a
        return other not in PRIMITIVE
    return False


@dataclass
class CheckIssue:
    offset: int
    message: str


@dataclass
class Checker:
    source: str
    issues: list[CheckIssue] = field(default_factory=list)
    #: the fields of ``device`` in the environment the expression is compiled in
    device_fields: dict[str, CelType] = field(default_factory=lambda: DEVICE_FIELDS)
    scopes: list[dict[str, CelType]] = field(default_factory=list)
    #: the type found for each node checked (by id), for the validators that run after the check
    types: dict[int, CelType] = field(default_factory=dict)
    #: ``"literal".format([list literal])`` calls: (the call, its format string, its argument nodes)
    format_calls: list[tuple[Tree[Token], str, list[Tree[Token] | Token]]] = field(default_factory=list)

    # ------------------------------------------------------------------ positions

    def location(self, offset: int) -> str:
        line = self.source.count("\n", 0, offset) + 1
        column = offset - (self.source.rfind("\n", 0, offset) + 1) + 1
        return f"<input>:{line}:{column}"

    def _find(self, text: str, start: int, end: int | None = None) -> int:
        """Where an operator token ``text`` stands between two operands (cel-go places an error at it)."""
        at = self.source.find(text, start, end if end is not None else len(self.source))
        return at if at >= 0 else start

    def report(self, offset: int, message: str) -> CelType:
        self.issues.append(CheckIssue(offset, message))
        return DYN  # cel-go's error type: assignable to anything, so one mistake is reported once

    def no_overload(self, offset: int, name: str, args: Sequence[CelType], receiver: CelType | None = None) -> CelType:
        shown = ", ".join(str(a) for a in args)
        sig = f"{receiver}.({shown})" if receiver is not None else f"({shown})"
        return self.report(offset, f"found no matching overload for '{name}' applied to '{sig}'")

    # ------------------------------------------------------------------ the walk

    def check(self, node: Tree[Token] | Token) -> CelType:
        if isinstance(node, Token):
            return DYN
        handler = getattr(self, f"_{node.data}", None)
        if handler is None:  # a form this pass does not model: no verdict
            for child in node.children:
                self.check(child)
            return DYN
        result: CelType = handler(node)
        self.types[id(node)] = result
        return result

    def _start(self, node: Tree[Token] | Token) -> int:
        if isinstance(node, Token):
            return node.start_pos or 0
        return getattr(node.meta, "start_pos", 0) or 0

    def _end(self, node: Tree[Token] | Token) -> int:
        if isinstance(node, Token):
            return node.end_pos or 0
        return getattr(node.meta, "end_pos", 0) or 0

    def _expr(self, node: Tree[Token]) -> CelType:
        if len(node.children) == 1:
            return self.check(node.children[0])
        cond, yes, no = node.children
        tc, ty, tn = self.check(cond), self.check(yes), self.check(no)
        if not _matches(BOOL, tc) or not _comparable(ty, tn) or (ty != tn and DYN not in (ty, tn)
                                                                    and ty.family == "number"):
            return self.no_overload(self._find("?", self._end(cond)), "_?_:_", (tc, ty, tn))
        return ty if ty == tn else DYN

    def _logical(self, node: Tree[Token], name: str, token: str) -> CelType:
        if len(node.children) == 1:
            return self.check(node.children[0])
        left, right = node.children
        a, b = self.check(left), self.check(right)
        if not (_matches(BOOL, a) and _matches(BOOL, b)):
            return self.no_overload(self._find(token, self._end(left)), name, (a, b))
        return BOOL

    def _conditionalor(self, node: Tree[Token]) -> CelType:
        return self._logical(node, "_||_", "||")

    def _conditionaland(self, node: Tree[Token]) -> CelType:
        return self._logical(node, "_&&_", "&&")

    def _operands(self, node: Tree[Token]) -> tuple[str, Tree[Token] | Token, CelType, Tree[Token] | Token, CelType]:
        """A binary operator's node (``relation_eq``, ``addition_add``, ...), its operands and their types:
        the grammar nests the left operand under the operator."""
        op, right = node.children
        assert isinstance(op, Tree)
        left = op.children[0]
        return str(op.data), left, self.check(left), right, self.check(right)

    def _relation(self, node: Tree[Token]) -> CelType:
        if len(node.children) == 1:
            return self.check(node.children[0])
        kind, left, a, right, b = self._operands(node)
        symbol = {"relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
                  "relation_eq": "==", "relation_ne": "!=", "relation_in": "in"}[kind]
        name = "@in" if symbol == "in" else f"_{symbol}_"
        at = self._find(symbol, self._end(left), self._start(right))
        if symbol in ("==", "!="):
            return BOOL if _comparable(a, b) else self.no_overload(at, name, (a, b))
        if symbol == "in":
            if b == DYN:
                return BOOL
            if b.is_a("list", "map"):
                return BOOL if _comparable(a, b.params[0]) else self.no_overload(at, name, (a, b))
            return self.no_overload(at, name, (a, b))
        if a == DYN or b == DYN:
            return BOOL
        orderable = NUMERIC | {STRING, BYTES, BOOL, TIMESTAMP, DURATION}
        if a in orderable and b in orderable and (a == b or (a in NUMERIC and b in NUMERIC)):
            return BOOL
        return self.no_overload(at, name, (a, b))

    def _arith(self, node: Tree[Token], ops: dict[str, tuple[str, frozenset[CelType]]]) -> CelType:
        if len(node.children) == 1:
            return self.check(node.children[0])
        kind, left, a, right, b = self._operands(node)
        symbol, allowed = ops[kind]
        if a == DYN or b == DYN:
            concrete = b if a == DYN else a
            return concrete if concrete in allowed else DYN
        if a == b and a in allowed:
            return a
        if symbol == "+" and a.is_a("list") and b.is_a("list"):
            return a if a == b else list_of(DYN)
        if {a, b} <= {TIMESTAMP, DURATION} and (symbol == "+" and a != b or symbol == "-" and b == DURATION):
            return TIMESTAMP if TIMESTAMP in (a, b) and symbol == "+" else (a if b == DURATION else DURATION)
        at = self._find(symbol, self._end(left), self._start(right))
        return self.no_overload(at, f"_{symbol}_", (a, b))

    def _addition(self, node: Tree[Token]) -> CelType:
        return self._arith(node, {"addition_add": ("+", NUMERIC | {STRING, BYTES, DURATION}),
                                  "addition_sub": ("-", NUMERIC | {DURATION})})

    def _multiplication(self, node: Tree[Token]) -> CelType:
        return self._arith(node, {"multiplication_mul": ("*", NUMERIC), "multiplication_div": ("/", NUMERIC),
                                  "multiplication_mod": ("%", frozenset({INT, UINT}))})

    def _unary(self, node: Tree[Token]) -> CelType:
        if len(node.children) == 1:
            return self.check(node.children[0])
        op, operand = node.children
        assert isinstance(op, Tree)
        t = self.check(operand)
        if op.data == "unary_not":
            return BOOL if _matches(BOOL, t) else self.no_overload(self._start(node), "!_", (t,))
        if t == DYN or t in (INT, DOUBLE, DURATION):
            return t
        return self.no_overload(self._start(node), "-_", (t,))

    def _member(self, node: Tree[Token]) -> CelType:
        return self.check(node.children[0])

    def _primary(self, node: Tree[Token]) -> CelType:
        return self.check(node.children[0])

    def _paren_expr(self, node: Tree[Token]) -> CelType:
        return self.check(node.children[0])

    def _literal(self, node: Tree[Token]) -> CelType:
        token = node.children[0]
        assert isinstance(token, Token)
        return {"INT_LIT": INT, "UINT_LIT": UINT, "FLOAT_LIT": DOUBLE, "STRING_LIT": STRING, "MLSTRING_LIT": STRING,
                "BYTES_LIT": BYTES, "BOOL_LIT": BOOL, "NULL_LIT": NULL}.get(token.type, DYN)

    def _args(self, node: Tree[Token] | Token | None) -> list[Tree[Token] | Token]:
        return list(node.children) if isinstance(node, Tree) else []

    def _joined(self, types: Sequence[CelType]) -> CelType:
        return types[0] if types and all(t == types[0] for t in types) else DYN

    def _list_lit(self, node: Tree[Token]) -> CelType:
        items = [self.check(e) for e in self._args(node.children[0] if node.children else None)]
        return list_of(self._joined(items))

    def _map_lit(self, node: Tree[Token]) -> CelType:
        inits = self._args(node.children[0] if node.children else None)
        keys = [self.check(k) for k in inits[0::2]]
        values = [self.check(v) for v in inits[1::2]]
        return map_of(self._joined(keys), self._joined(values))

    def lookup(self, name: str) -> CelType | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name == "device":
            return DEVICE
        if name in TYPE_NAMES:
            return TYPE
        return None

    def _ident(self, node: Tree[Token]) -> CelType:
        token = node.children[0]
        assert isinstance(token, Token)
        found = self.lookup(str(token))
        if found is None:
            return self.report(self._start(token), f"undeclared reference to '{token}' (in container '')")
        return found

    _dot_ident = _ident

    def select(self, operand: CelType, name: str, at: int) -> CelType:
        if operand == DYN:
            return DYN
        if operand == DEVICE:
            found = self.device_fields.get(name)
            return found if found is not None else self.report(at, f"undefined field '{name}'")
        if operand.is_a("map"):
            return operand.params[1]
        return self.report(at, f"type '{operand}' does not support field selection")

    def _member_dot(self, node: Tree[Token]) -> CelType:
        target, name = node.children
        assert isinstance(name, Token)
        operand = self.check(target)
        return self.select(operand, str(name), self._find(".", self._end(target), self._start(name)))

    def _member_index(self, node: Tree[Token]) -> CelType:
        target, index = node.children
        a, i = self.check(target), self.check(index)
        at = self._find("[", self._end(target), self._start(index))
        if a == DYN:
            return DYN
        if a.is_a("list"):
            return a.params[0] if _matches(INT, i) or i == UINT else self.no_overload(at, "_[_]", (a, i))
        if a.is_a("map"):
            return a.params[1] if _comparable(a.params[0], i) else self.no_overload(at, "_[_]", (a, i))
        return self.no_overload(at, "_[_]", (a, i))

    # ------------------------------------------------------------------ calls and macros

    def position(self, node: Tree[Token] | Token) -> int:
        """Where cel-go places an expression: a selection at its '.', a call at its '(', an index at
        its '[', anything else (as far as this pass reports it) where it starts."""
        inner = self._innermost(node)
        if isinstance(inner, Tree) and inner.data in ("member_dot", "member_dot_arg", "member_index"):
            target, after = inner.children[0], inner.children[1]
            if inner.data == "member_dot_arg":
                return self._find("(", self._end(after))
            return self._find("." if inner.data == "member_dot" else "[", self._end(target), self._start(after))
        if isinstance(inner, Tree) and inner.data in ("ident_arg", "dot_ident_arg"):
            return self._find("(", self._end(inner.children[0]))
        return self._start(inner)

    def _has(self, args: list[Tree[Token] | Token], at: int) -> CelType:
        if len(args) == 1:
            arg = args[0]
            inner = self._innermost(arg)
            if isinstance(inner, Tree) and inner.data == "member_dot":
                target, name = inner.children
                assert isinstance(name, Token)
                self.select(self.check(target), str(name),
                            self._find(".", self._end(target), self._start(name)))
                return BOOL
        for a in args:
            self.check(a)
        return BOOL

    def _innermost(self, node: Tree[Token] | Token) -> Tree[Token] | Token:
        """The node an expression consists of once the single-child levels of the grammar are peeled."""
        while isinstance(node, Tree) and len(node.children) == 1 and node.data in (
                "expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
                "member", "primary", "paren_expr"):
            node = node.children[0]
        return node

    def _ident_arg(self, node: Tree[Token]) -> CelType:
        name_token = node.children[0]
        assert isinstance(name_token, Token)
        name = str(name_token)
        args = self._args(node.children[1] if len(node.children) > 1 else None)
        at = self._find("(", self._end(name_token))
        if name == "has":
            return self._has(args, at)
        types = [self.check(a) for a in args]
        if name in CONVERSIONS:
            return CONVERSIONS[name]
        if name in GLOBALS:
            for params, result in GLOBALS[name]:
                if len(params) == len(types) and all(_matches(p, t) for p, t in zip(params, types, strict=True)):
                    return result
            return self.no_overload(at, name, types)
        if name not in KNOWN_FUNCTIONS:
            return self.report(at, f"undeclared reference to '{name}' (in container '')")
        if name == "size":
            return INT
        return DYN

    _dot_ident_arg = _ident_arg

    def _comprehension(self, receiver: CelType, args: list[Tree[Token] | Token], at: int, name: str) -> CelType:
        """A comprehension macro; ``at`` is where its range expression stands."""
        names = []
        # one variable (e, then predicate, transform or key), or two (index or key, and value):
        # the two-variable forms and the transforms, whose filter may itself be a bare name
        two = name.startswith("transform") or name == "existsOne" or (name in ("all", "exists") and len(args) == 3)
        for a in args[:2 if two else 1]:
            inner = self._innermost(a)
            if isinstance(inner, Tree) and inner.data == "ident" and isinstance(inner.children[0], Token):
                names.append(str(inner.children[0]))
        if receiver != DYN and not receiver.is_a("list", "map"):
            self.report(at, f"expression of type '{receiver}' cannot be range of a comprehension "
                            "(must be list, map, or dynamic)")
            receiver = DYN
        if receiver == DYN:
            elem, second = DYN, DYN
        elif receiver.is_a("list"):
            elem, second = receiver.params[0], DYN
        else:
            elem, second = receiver.params[0], receiver.params[1]
        scope: dict[str, CelType] = {}
        if len(names) == 1:
            scope[names[0]] = elem
        elif len(names) == 2:
            # two variables: (index, value) over a list, (key, value) over a map
            is_list = receiver.is_a("list")
            scope[names[0]], scope[names[1]] = (INT, elem) if is_list else (elem, second)
        self.scopes.append(scope)
        try:
            bodies = [self.check(a) for a in args[len(names):]]
        finally:
            self.scopes.pop()
        if name in ("all", "exists", "exists_one", "existsOne"):
            return BOOL
        if name == "filter":
            return list_of(elem) if receiver != DYN else DYN
        if name in ("map", "transformList"):
            return list_of(bodies[-1] if bodies else DYN)
        if name == "sortBy":
            return receiver if receiver.is_a("list") else DYN
        return DYN

    def _member_dot_arg(self, node: Tree[Token]) -> CelType:
        target, name_token = node.children[0], node.children[1]
        assert isinstance(name_token, Token)
        name = str(name_token)
        args = self._args(node.children[2] if len(node.children) > 2 else None)
        at = self._find("(", self._end(name_token))
        inner = self._innermost(target)
        if isinstance(inner, Tree) and inner.data == "ident" and isinstance(inner.children[0], Token):
            namespace = str(inner.children[0])
            if self.lookup(namespace) is None:
                # a qualified function (cel.bind, sets.contains, lists.range, ...): bind is a macro
                if namespace == "cel" and name == "bind" and len(args) == 3:
                    var = self._innermost(args[0])
                    init = self.check(args[1])
                    if isinstance(var, Tree) and var.data == "ident" and isinstance(var.children[0], Token):
                        self.scopes.append({str(var.children[0]): init})
                        try:
                            return self.check(args[2])
                        finally:
                            self.scopes.pop()
                for a in args:
                    self.check(a)
                return DYN
        receiver = self.check(target)
        if name in ("optMap", "optFlatMap") and len(args) == 2:
            var = self._innermost(args[0])
            scope = {str(var.children[0]): DYN} if isinstance(var, Tree) and var.data == "ident" else {}
            self.scopes.append(scope)
            try:
                self.check(args[1])
            finally:
                self.scopes.pop()
            return DYN
        if name in MACROS and len(args) in MACROS[name]:
            return self._comprehension(receiver, args, self.position(target), name)
        types = [self.check(a) for a in args]
        if name not in KNOWN_FUNCTIONS:
            return self.report(at, f"undeclared reference to '{name}' (in container '')")
        if name in METHODS and receiver != DYN:
            for recv, params, result in METHODS[name]:
                if (_matches(recv, receiver) and len(params) == len(types)
                        and all(_matches(p, t) for p, t in zip(params, types, strict=True))):
                    if name == "format":
                        self._note_format_call(node, target, args[0])
                    return result
            return self.no_overload(at, name, types, receiver)
        if name in METHODS:
            results = {result for _, _, result in METHODS[name]}
            return results.pop() if len(results) == 1 else DYN
        if name == "size":
            return INT
        return DYN


    def _note_format_call(self, node: Tree[Token], target: Tree[Token] | Token, arg: Tree[Token] | Token) -> None:
        """Keep a call the string-format validator looks at: a literal format string and a list literal."""
        literal, items = self._innermost(target), self._innermost(arg)
        if not (isinstance(literal, Tree) and literal.data == "literal" and isinstance(items, Tree)
                and items.data == "list_lit"):
            return
        token = literal.children[0]
        if isinstance(token, Token) and token.type in ("STRING_LIT", "MLSTRING_LIT"):
            elements = self._args(items.children[0] if items.children else None)
            self.format_calls.append((node, str(celstr(token)), elements))

    # ------------------------------------------------------------------ validators

    def validate_format_calls(self) -> None:
        """cel-go's string-format validator (ext/formatting.go, installed by the strings extension
        from version 1): a literal format string whose clauses do not parse, ask for more arguments
        than a list literal holds, or meet an argument whose type the clause does not take, and a
        list literal with arguments left over, are compile errors. One finding per call."""
        for node, fmt, elements in self.format_calls:
            at = self.position(node)

            def verify(index: int, verb: str, precision: int | None, elements: list[Tree[Token] | Token] = elements) -> str:
                bad = self._clause_misfit(elements[index], verb)
                if bad is not None:
                    offset, given = bad
                    raise _FormatFinding(offset, f"error during formatting: {strformat.CLAUSE_MESSAGES[verb]}, "
                                                 f"was given {given}")
                return ""
            try:
                _, requested = strformat.walk(fmt, len(elements), verify)
            except LibraryError as e:
                self.report(at, str(e))
                continue
            except _FormatFinding as f:
                self.report(f.offset, f.message)
                continue
            if len(elements) > requested:
                self.report(at, "too many arguments supplied to string.format "
                                f"(expected {requested}, got {len(elements)})")

    def _clause_misfit(self, element: Tree[Token] | Token, verb: str) -> tuple[int, str] | None:
        """Where and of what type an argument (or, for ``%s``, a member of a list or map literal)
        is that the clause does not take; None when it fits or is ``dyn``."""
        t = self.types.get(id(element), DYN)
        if t != DYN and t.name not in strformat.CLAUSE_TYPES[verb]:
            return self.position(element), _type_name(t)
        inner = self._innermost(element)
        if verb == "s" and isinstance(inner, Tree) and inner.data in ("list_lit", "map_lit"):
            for member in self._args(inner.children[0] if inner.children else None):
                bad = self._clause_misfit(member, verb)
                if bad is not None:
                    return bad
        return None


class _FormatFinding(Exception):
    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset, self.message = offset, message


def _type_name(t: CelType) -> str:
    """A type as cel-go's TypeName gives it (a list or map without its parameters)."""
    return "null_type" if t == NULL else t.name


def check_selector(tree: Tree[Token], source: str, stored: bool = False) -> list[str]:
    """cel-go's compile-time findings on a parsed selector, worded as ``compile.go`` reports them:
    ``compilation failed: ERROR: <input>:L:C: ...`` for type errors, or the result-type message.
    ``stored``: the "stored expressions" environment (``device.allowMultipleAllocations`` declared)."""
    checker = Checker(source, device_fields=DEVICE_FIELDS_STORED if stored else DEVICE_FIELDS)
    result = checker.check(tree)
    if not checker.issues:  # cel-go runs its validators on a checked expression only
        checker.validate_format_calls()
    if checker.issues:
        ordered = sorted(checker.issues, key=lambda i: i.offset)
        return ["compilation failed: " + " ".join(f"ERROR: {checker.location(i.offset)}: {i.message}"
                                                  for i in ordered)]
    if result not in (BOOL, DYN):
        return [f"must evaluate to bool or the unknown type, not {result}"]
    return []
