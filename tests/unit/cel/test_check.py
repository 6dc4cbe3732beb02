"""The compile-time type check of DRA selectors (cel-go's checker, over cel-python's parse tree):
what it refuses, worded and placed as cel-go does, and selectors it must let through — the check
may say nothing where it is unsure, never refuse what cel-go accepts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.cel import CelError, compile_selector

Q = 'device.capacity["gpu.example.com"].memory'
A = 'device.attributes["gpu.example.com"]'

REFUSED = [
    ("a misspelt device field", 'device.drvier == "x"', "ERROR: <input>:1:7: undefined field 'drvier'"),
    ("a field gated off in 1.34", "device.allowMultipleAllocations",
     "ERROR: <input>:1:7: undefined field 'allowMultipleAllocations'"),
    ("a name that is not declared", "gpu.memory > 1",
     "ERROR: <input>:1:1: undeclared reference to 'gpu' (in container '')"),
    ("a function that does not exist", "device.driver.foo()",
     "ERROR: <input>:1:18: undeclared reference to 'foo' (in container '')"),
    ("a global function that does not exist", 'lookup("x")',
     "ERROR: <input>:1:7: undeclared reference to 'lookup' (in container '')"),
    ("a string compared with an int", "device.driver == 1",
     "ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'"),
    ("a string compared with null", "device.driver != null",
     "ERROR: <input>:1:15: found no matching overload for '_!=_' applied to '(string, null)'"),
    ("null compared with an int", "null == 1",
     "ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(null, int)'"),
    ("an int looked for in a list of strings", '3 in ["a"]',
     "ERROR: <input>:1:3: found no matching overload for '@in' applied to '(int, list(string))'"),
    ("a quantity compared with an int", f"{Q} == 1",
     "found no matching overload for '_==_' applied to '(kubernetes.Quantity, int)'"),
    ("an int compared with a double", "1 == 1.0",
     "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'"),
    ("a double looked for among ints", "1.5 in [1, 2]",
     "ERROR: <input>:1:5: found no matching overload for '@in' applied to '(double, list(int))'"),
    ("int plus double", "1 + 1.0 == 2.0",
     "ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, double)'"),
    ("quantities ordered with >", f'{Q} > quantity("40Gi")',
     "found no matching overload for '_>_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'"),
    ("a quantity method given an int", f"{Q}.isGreaterThan(5)",
     "found no matching overload for 'isGreaterThan' applied to 'kubernetes.Quantity.(int)'"),
    ("a semver method on a quantity", f"{Q}.major() == 1",
     "found no matching overload for 'major' applied to 'kubernetes.Quantity.()'"),
    ("quantity() of an int", "quantity(1).sign() == 1",
     "ERROR: <input>:1:9: found no matching overload for 'quantity' applied to '(int)'"),
    ("a string method given an int", "device.driver.startsWith(1)",
     "ERROR: <input>:1:25: found no matching overload for 'startsWith' applied to 'string.(int)'"),
    ("contains given an int", "device.driver.contains(1)",
     "ERROR: <input>:1:23: found no matching overload for 'contains' applied to 'string.(int)'"),
    ("not of a string", "!device.driver", "ERROR: <input>:1:1: found no matching overload for '!_' applied to '(string)'"),
    ("&& with a string", 'device.driver && true',
     "ERROR: <input>:1:15: found no matching overload for '_&&_' applied to '(string, bool)'"),
    ("indexing a string", 'device.driver[0] == "a"',
     "ERROR: <input>:1:14: found no matching overload for '_[_]' applied to '(string, int)'"),
    ("field selection on a string", "device.driver.size",
     "ERROR: <input>:1:14: type 'string' does not support field selection"),
    ("has() of a field the device lacks", "has(device.foo)", "ERROR: <input>:1:11: undefined field 'foo'"),
    ("a comprehension over a string", "device.driver.all(c, true)",
     "ERROR: <input>:1:7: expression of type 'string' cannot be range of a comprehension "
     "(must be list, map, or dynamic)"),
    ("branches of different types", 'device.driver == "a" ? true : 1',
     "ERROR: <input>:1:22: found no matching overload for '_?_:_' applied to '(bool, bool, int)'"),
    ("an error on the second line", 'device.driver == "a" &&\n  device.capcity["x"].m.isInteger()',
     "ERROR: <input>:2:9: undefined field 'capcity'"),
    ("two errors, in source order", "device.a == 1 || device.b == 2",
     "ERROR: <input>:1:7: undefined field 'a' ERROR: <input>:1:24: undefined field 'b'"),
    ("ip() of an int", "ip(1).family() == 4",
     "ERROR: <input>:1:3: found no matching overload for 'ip' applied to '(int)'"),
    ("cidr() of an int", "cidr(192168).prefixLength() == 1",
     "ERROR: <input>:1:5: found no matching overload for 'cidr' applied to '(int)'"),
    ("an IP compared with a string", 'ip("1.2.3.4") == "1.2.3.4"',
     "found no matching overload for '_==_' applied to '(net.IP, string)'"),
    ("an IP compared with a CIDR", 'ip("1.2.3.4") == cidr("1.2.3.4/32")',
     "found no matching overload for '_==_' applied to '(net.IP, net.CIDR)'"),
    ("a CIDR method on an IP", 'ip("1.2.3.4").prefixLength() == 1',
     "found no matching overload for 'prefixLength' applied to 'net.IP.()'"),
    ("containsIP given an int", 'cidr("10.0.0.0/8").containsIP(1)',
     "found no matching overload for 'containsIP' applied to 'net.CIDR.(int)'"),
    ("an IP method on a string", "device.driver.isLoopback()",
     "ERROR: <input>:1:25: found no matching overload for 'isLoopback' applied to 'string.()'"),
    ("a URL method on a string", 'device.driver.getHost() == ""',
     "found no matching overload for 'getHost' applied to 'string.()'"),
    ("a URL's query compared with a string", 'url("/a").getQuery() == "x"',
     "found no matching overload for '_==_' applied to '(map(string, list(string)), string)'"),
    ("an IP result", 'ip("1.2.3.4")', "must evaluate to bool or the unknown type, not net.IP"),
    ("a sorted list result", "[2, 1].sortBy(e, -e)", "must evaluate to bool or the unknown type, not list(int)"),
    ("a string result", "device.driver", "must evaluate to bool or the unknown type, not string"),
    ("an int result", f'{Q}.compareTo(quantity("1"))', "must evaluate to bool or the unknown type, not int"),
    ("a list result", "[true]", "must evaluate to bool or the unknown type, not list(bool)"),
]

ACCEPTED = [
    'device.driver == "gpu.example.com"',
    f'{A}.model == "h100" && {A}.index < 2',
    f"{A}.model > 3",  # attribute values are dyn: a mismatch is a runtime matter
    f"{A}.index == 3.0",  # dyn against double: compared at run time, across kinds
    f'{Q}.compareTo(quantity("80Gi")) >= 0',
    f'{Q}.isGreaterThan(quantity("40Gi")) || {Q}.add(1).isLessThan(quantity("1"))',
    f'{A}.driverVersion.isGreaterThan(semver("1.2.0"))',
    'semver("v1", true).major() == 1 && isSemver("1.0.0")',
    f"has({A}.foo)",
    f'"model" in {A}',
    f'{A}.all(k, k.startsWith("m"))',
    f"{A}.exists(k, v, v == 1)",
    "[1, 2, 3].exists(x, x == 2) && [1, 2].map(x, x * 2).size() == 2",
    f'cel.bind(d, {A}, d.model == "x" && d.count > 2)',
    "sets.contains([1], [1])",
    "1 < 1.5 && 2u > 1",
    "size(device.attributes) > 0 && device.driver.size() > 3",
    'device.driver.lowerAscii() == "x" && device.driver.matches("^g")',
    'type(device.driver) == string && int(device.attributes["x"].y) > 3',
    f'{A}["model"] == "h100"',
    "device.attributes.size() >= 0",
    "dyn(device.driver)",
    f'{A}.model.split(",").size() > 1',
    "true ? 1 == 1 : false",
    "{'a': 1}.a == 1",
    f"cidr({A}.subnet).containsIP({A}.ip) && ip({A}.ip).family() == 4",
    'ip.isCanonical("::1") && isIP("::1") && isCIDR("::/0") && isURL("/a")',
    'string(cidr("10.0.0.0/8")) == "10.0.0.0/8" && cidr("10.0.0.0/8").ip() == ip("10.0.0.0")',
    'cidr("10.0.0.0/8").masked().containsCIDR("10.1.0.0/16") && cidr("10.0.0.0/8").prefixLength() == 8',
    'url("/a?b=c").getQuery()["b"][0] == "c" && url("/a").getEscapedPath().startsWith("/")',
    "[3, 1].sortBy(e, -e)[0] == 3",
    f"{A}.sortBy(e, e).size() > 0",
    "[1, 2].transformList(i, v, i < 1, v * 2) == [2]",
    "[true].transformList(i, v, v, v) == [true]",
    '{"a": 1}.transformMap(k, v, v + 1)["a"] == 2',
    '{"a": "b"}.transformMapEntry(k, v, {v: k}).size() == 1',
    "optional.of(1).optMap(x, x + 1).hasValue() && optional.none().orValue(1) == 1",
    f'format.dns1123Label().validate({A}.name).hasValue() || format.named("uuid").hasValue()',
]


@pytest.mark.parametrize(("expr", "want"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused(expr: str, want: str) -> None:
    with pytest.raises(CelError) as e:
        compile_selector(expr)
    assert want in str(e.value)
    if want.startswith("ERROR"):
        assert str(e.value).startswith("compilation failed: ERROR: <input>:")


@pytest.mark.parametrize("expr", ACCEPTED)
def test_accepted(expr: str) -> None:
    compile_selector(expr)


ATOMS = ["device", "device.driver", "device.attributes", 'device.attributes["d"]', 'device.attributes["d"].m',
         'device.capacity["d"].mem', "1", "2u", "1.5", '"s"', 'b"b"', "true", "null", "[1, 2]", '{"k": 1}', "x",
         'quantity("1")', 'semver("1.0.0")', "int", "size(device.attributes)"]
BINARY = ["==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "&&", "||", "in"]
SUFFIX = ["", ".size()", ".compareTo(quantity(\"1\"))", ".all(e, e == 1)", ".exists(k, v, v)", "[0]", '["k"]',
          ".isGreaterThan(1)", ".major()", ".startsWith(\"a\")", ".f"]


@given(st.lists(st.tuples(st.sampled_from(ATOMS), st.sampled_from(SUFFIX)), min_size=1, max_size=4),
       st.lists(st.sampled_from(BINARY), min_size=3, max_size=3), st.booleans(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_any_expression_gets_a_verdict_not_a_crash(operands: list[tuple[str, str]], ops: list[str], negate: bool,
                                                   ternary: bool) -> None:
    """Whatever parses, the check answers (accepts or refuses with a compile error), never raises."""
    text = (" " + ops[0] + " ").join(f"{'!' if negate and i == 0 else ''}{a}{s}" for i, (a, s) in enumerate(operands))
    if ternary:
        text = f"({text}) ? {operands[0][0]} : {ops[1] and '1'}"
    try:
        compile_selector(text)
    except CelError as e:
        assert str(e).startswith(("compilation failed: ERROR: <input>:", "must evaluate to bool"))
