"""cel-go's ``<string>.format(<list>)`` (strings extension version 2, as Kubernetes 1.34 configures
it): a table of calls and the text cel-go gives, most of them the cases of cel-go's own format
test table, then the runtime errors, then the compile-time findings of its format validator."""

from __future__ import annotations

import re

import pytest

from kplan.cel import CelError, compile_selector, device_activation, evaluate
from kplan.model.dra import Device

A = 'device.attributes["gpu.example.com"]'
DEV = Device("gpu-0", {"model": ("string", "H100"), "index": ("int", 3), "ratio": ("string", "0.5"),
                       "fmt": ("string", "%d GPUs")}, {})
SCI = "\u202f×\u202f10"  # x/text's en_US scientific notation: 2.718280 × 10⁰⁰


def _cel_string(s: str) -> str:
    """A CEL double-quoted literal for ``s``."""
    escaped = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


FORMATTED = [
    # substitution and %%
    ("no clause", '"no substitution".format([])', "no substitution"),
    ("mid-string substitution", '"str is %s and some more".format(["filler"])', "str is filler and some more"),
    ("percent escaping", '"%% and also %%".format([])', "% and also %"),
    ("a clause inside escaped percent signs", '"%%%s%%".format(["text"])', "%text%"),
    ("an escaped percent sign on the right", '"%s%%".format(["right"])', "right%"),
    ("an escaped percent sign on the left", '"%%%s".format(["left"])', "%left"),
    ("multiple substitutions", '"%d %d %d, %s %s %s, %d %d %d, %s %s %s".format([1, 2, 3, "A", "B", "C", 4, 5, 6, '
                               '"D", "E", "F"])', "1 2 3, A B C, 4 5 6, D E F"),
    ("percent signs written as escapes", '"\\u0025\\u0025escaped \\u0025s\\u0025\\u0025".format(["percent"])',
     "%escaped percent%"),
    ("a precision on %s is read and ignored", '"%.2s|".format(["abc"])', "abc|"),
    ("non-ASCII text around clauses", '"∑ %s ∞".format(["é"])', "∑ é ∞"),
    # %d %b %o %x %X
    ("uint with %d", '"%d".format([uint(64)])', "64"),
    ("binary", '"this is 5 in binary: %b".format([5])', "this is 5 in binary: 101"),
    ("uint in binary", '"%b".format([uint(64)])', "1000000"),
    ("bool in binary", '"bit set from bool: %b".format([true])', "bit set from bool: 1"),
    ("a negative int in binary", '"%b".format([-5])', "-101"),
    ("octal", '"%o".format([11])', "13"),
    ("uint in octal", '"this is an unsigned octal: %o".format([uint(65535)])', "this is an unsigned octal: 177777"),
    ("lowercase hex", '"%x is 20 in hexadecimal".format([30])', "1e is 20 in hexadecimal"),
    ("uppercase hex", '"%X is 20 in hexadecimal".format([30])', "1E is 20 in hexadecimal"),
    ("uint in hex", '"%X is 6000 in hexadecimal".format([uint(6000)])', "1770 is 6000 in hexadecimal"),
    ("a negative int in hex", '"%x".format([-255])', "-ff"),
    ("a string in hex", '"%x".format(["Hello world!"])', "48656c6c6f20776f726c6421"),
    ("a string in uppercase hex", '"%X".format(["Hello world!"])', "48656C6C6F20776F726C6421"),
    ("a string in hex is its UTF-8 bytes", '"%x".format(["é"])', "c3a9"),
    ("bytes in hex", '"%x".format([b"byte string"])', "6279746520737472696e67"),
    ("bytes in uppercase hex", '"%X".format([b"byte string"])', "6279746520737472696E67"),
    # %f and %e: golang.org/x/text's en_US numbers
    ("fixed point with a precision", '"%.3f".format([1.2345])', "1.234"),
    ("fixed point, six places by default", '"%f".format([2.71828])', "2.718280"),
    ("fixed point groups thousands", '"%f".format([1234567.5])', "1,234,567.500000"),
    ("fixed point with no places", '"%.0f".format([-1234.5])', "-1,234"),
    ("fixed point: a negative zero has no sign, a small negative number keeps it",
     '"%f|%.2f".format([-0.0, -0.001])', "0.000000|-0.00"),
    ("NaN for fixed point", '"%f".format(["NaN"])', "NaN"),
    ("infinity for fixed point", '"%f".format(["Infinity"])', "∞"),
    ("negative infinity for fixed point", '"%f".format(["-Infinity"])', "-∞"),
    ("double NaN and infinity for fixed point", '"NaN: %f, infinity: %f".format([double("NaN"), double("Infinity")])',
     "NaN: NaN, infinity: ∞"),
    ("scientific notation", '"%.6e".format([1052.032911275])', f"1.052033{SCI}⁰³"),
    ("scientific notation, six places by default", '"%e".format([2.71828])', f"2.718280{SCI}⁰⁰"),
    ("scientific notation of a small negative number", '"%e".format([-0.000123])', f"-1.230000{SCI}⁻⁰⁴"),
    ("scientific notation takes the precision as a width", '"[%.20e]".format([2.0])', f"[     2.000000{SCI}⁰⁰]"),
    # %s: cel-go's string conversion of each kind
    ("null", '"null: %s".format([null])', "null: null"),
    ("bytes", '"some bytes: %s".format([b"xyz"])', "some bytes: xyz"),
    ("a type", '"type is %s".format([type("test string")])', "type is string"),
    ("types of other kinds", '"%s %s %s".format([type(1), type(null), type(type(1))])', "int null_type type"),
    ("a timestamp", '"%s".format([timestamp("2023-02-03T23:31:20+00:00")])', "2023-02-03T23:31:20Z"),
    ("a duration", '"%s".format([duration("1h45m47s")])', "6347s"),
    ("a fractional duration", '"%s".format([duration("1.5ms")])', "0.0015s"),
    ("bools", '"true bool: %s, false bool: %s".format([true, false])', "true bool: true, false bool: false"),
    ("doubles as Go's %g", '"%s %s %s %s %s %s".format([64.2, 1e6, 123456.0, 0.0001, 0.00001, -0.0])',
     "64.2 1e+06 123456 0.0001 1e-05 -0"),
    ("a double NaN and infinities", '"%s %s %s".format([double("NaN"), double("Infinity"), double("-Infinity")])',
     "NaN +Inf -Inf"),
    ("a list", '"%s".format([["abc", 3.14, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]])',
     '["abc", 3.140000, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]'),
    ("a map, its entries sorted by key",
     '"%s".format([{"key1": b"xyz", "key5": null, "key2": duration("2h"), "key4": true, "key3": 2.71828}])',
     '{"key1":b"xyz", "key2":duration("7200s"), "key3":2.718280, "key4":true, "key5":null}'),
    ("a map with int, uint and string keys", '"%s".format([{2: "two", uint(1): "one", "k": double("NaN")}])',
     '{"k":"NaN", 1:"one", 2:"two"}'),
    ("a map inside a list", '"%s".format([[1, 2, 3, {"a": "x", "b": "y", "c": "z"}]])',
     '[1, 2, 3, {"a":"x", "b":"y", "c":"z"}]'),
    ("infinities inside a list are quoted", '"%s".format([[double("-Infinity"), 1.5]])', '["-Inf", 1.500000]'),
    ("strings inside a list are quoted as Go quotes", '"%s".format([["a\\u00a0b\\x01\\"q\\"😀"]])',
     '["a\\u00a0b\\x01\\"q\\"😀"]'),
    ("a device attribute", f'"%s is GPU %d".format([{A}.model, {A}.index])', "H100 is GPU 3"),
    ("a device's attributes", f'"%s".format([{A}])',
     '{"fmt":"%d GPUs", "index":3, "model":"H100", "ratio":"0.5"}'),
    ("a format string from an attribute", f'{A}.fmt.format([8])', "8 GPUs"),
    ("unused arguments are no runtime error", '"%s".format(dyn(["a", "b"]))', "a"),
]


@pytest.mark.parametrize(("call", "want"), [c[1:] for c in FORMATTED], ids=[c[0] for c in FORMATTED])
def test_format(call: str, want: str) -> None:
    expr = f"{call} == {_cel_string(want)}"
    assert evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV)) is True


# the arguments go through dyn(...) so that cel-go's compile-time validator, which looks at
# list literals only, leaves these to run time
RUNTIME_ERRORS = [
    ("an unknown clause", '"%a".format(dyn([1]))', 'could not parse formatting clause: unrecognized formatting clause "a"'),
    ("uppercase E is no clause", '"double is %E".format(dyn([0.5]))',
     'could not parse formatting clause: unrecognized formatting clause "E"'),
    ("a missing argument", '"%d %d %d".format(dyn([0, 1]))', "index 2 out of range"),
    ("no arguments at all", '"%s".format(dyn([]))', "index 0 out of range"),
    ("a percent sign at the end", '"100%".format(dyn([1]))', "unexpected end of string"),
    ("a precision that does not end", '"%.3".format(dyn([1.0]))',
     "could not parse formatting clause: error while parsing precision: could not find end of precision specifier"),
    ("a precision with no digits", '"%.f".format(dyn([1.0]))',
     "could not parse formatting clause: error while parsing precision: error while converting precision to "
     'integer: strconv.Atoi: parsing "": invalid syntax'),
    ("a string with %b", '"string is %b".format(dyn(["abc"]))',
     "error during formatting: only integers and bools can be formatted as binary, was given string"),
    ("a duration with %d", '"%d".format(dyn([duration("30m2s")]))',
     "error during formatting: decimal clause can only be used on integers, was given google.protobuf.Duration"),
    ("a bool with %d", '"%d".format(dyn([true]))',
     "error during formatting: decimal clause can only be used on integers, was given bool"),
    ("a string with %o", '"octal: %o".format(dyn(["a string"]))',
     "error during formatting: octal clause can only be used on integers, was given string"),
    ("a double with %x", '"double is %x".format(dyn([0.5]))',
     "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double"),
    ("an int with %f", '"%f".format(dyn([1]))',
     "error during formatting: fixed-point clause can only be used on doubles, was given int"),
    ("another string with %f", '"%f".format(dyn(["1.5"]))',
     "error during formatting: fixed-point clause can only be used on doubles, was given string"),
    ("null with %e", '"null: %e".format(dyn([null]))',
     "error during formatting: scientific clause can only be used on doubles, was given null_type"),
    ("null with %X", '"null: %X".format(dyn([null]))',
     "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given null_type"),
    ("an object with %s", '"object is %s".format(dyn([quantity("1Gi")]))',
     "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, "
     "lists, types, durations, and timestamps, was given kubernetes.Quantity"),
    ("an object inside a list", '"%s".format(dyn([[1, 2, quantity("1Gi")]]))',
     "error during formatting: no formatting function for kubernetes.Quantity"),
    ("an object inside a map", '"%s".format(dyn([{1: "a", 2: quantity("1Gi")}]))',
     "error during formatting: no formatting function for kubernetes.Quantity"),
    ("bytes that are not UTF-8", '"%s".format(dyn([b"\\xff"]))',
     'error during formatting: could not convert argument "invalid UTF-8 in bytes, cannot convert to string" '
     "to string"),
    ("a list argument that is no list", '"%s".format(dyn("x"))', "no such overload"),
    ("a clause error from an attribute's format string", f'{A}.model.format([1]) == "" || {A}.fmt.format(["x"]) == ""',
     "error during formatting: decimal clause can only be used on integers, was given string"),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in RUNTIME_ERRORS], ids=[c[0] for c in RUNTIME_ERRORS])
def test_format_runtime_errors(expr: str, want: str) -> None:
    selector = expr if "==" in expr else f'{expr} == ""'
    with pytest.raises(CelError, match=re.escape(want)):
        evaluate(compile_selector(selector), device_activation("gpu.example.com", DEV))


def test_format_error_is_absorbed_by_or() -> None:
    expr = '"%d".format(dyn(["x"])) == "" || true'
    assert evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV)) is True


# cel-go's string-format validator (installed by the strings extension from version 1) checks a
# literal format string against a list literal when the selector is compiled
REFUSED = [
    ("an argument left over", '"%s".format(["x", 1]) == ""',
     "ERROR: <input>:1:12: too many arguments supplied to string.format (expected 1, got 2)"),
    ("an argument missing", '"%s %s".format(["x"]) == ""', "ERROR: <input>:1:15: index 1 out of range"),
    ("an unknown clause", '"%z".format(["x"]) == ""',
     'ERROR: <input>:1:12: could not parse formatting clause: unrecognized formatting clause "z"'),
    ("an argument of the wrong type, placed at the argument", '"%d".format(["x"]) == ""',
     "ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given string"),
    ("null for %d", '"%d".format([null]) == ""',
     "ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given null_type"),
    ("a list for %d", '("%d").format([[1]]) == ""',
     "ERROR: <input>:1:16: error during formatting: decimal clause can only be used on integers, was given list"),
    ("an object inside a list literal for %s", '"%s".format([[1, quantity("1")]]) == ""',
     "ERROR: <input>:1:26: error during formatting: string clause can only be used on strings, bools, bytes, ints, "
     "doubles, maps, lists, types, durations, and timestamps, was given kubernetes.Quantity"),
    ("format on something not a string", '1u.format([1]) == ""',
     "ERROR: <input>:1:10: found no matching overload for 'format' applied to 'uint.(list(int))'"),
    ("format with an argument that is no list", '"%s".format("x") == ""',
     "ERROR: <input>:1:12: found no matching overload for 'format' applied to 'string.(string)'"),
    ("format's result is a string", '"%s".format([1])', "must evaluate to bool or the unknown type, not string"),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_format_refused_at_compile(expr: str, want: str) -> None:
    with pytest.raises(CelError, match=re.escape(want)):
        compile_selector(expr)


ACCEPTED = [
    ("attribute arguments of type dyn", f'"%.3f %e %d".format([{A}.x, {A}.y, {A}.z]) == ""'),
    ("strings for %f and %e", '"%f %e".format(["NaN", "Infinity"]) == ""'),
    ("a format string that is no literal", f'{A}.fmt.format([1, 2]) == ""'),
    ("an argument list that is no literal", '"%s".format(dyn(["a", "b"])) == ""'),
    ("mixed arguments for their clauses", '"%s %d %f %b %x %o".format(["a", 1, 1.5, true, b"x", 8u]) == ""'),
]


@pytest.mark.parametrize("expr", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_format_accepted_at_compile(expr: str) -> None:
    compile_selector(expr)
