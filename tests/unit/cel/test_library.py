"""The CEL library functions DRA selectors may call beyond cel-python's own (kplan/cel/library.py), and the
macros the evaluator adds (cel.bind, two-variable comprehensions): a table of selectors and what
cel-go gives for them on one device."""

from __future__ import annotations

import re

import pytest

from kplan.cel import CelError, compile_selector, device_activation, evaluate
from kplan.model.dra import Device

A = 'device.attributes["gpu.example.com"]'
DEV = Device("gpu-0", {"model": ("string", "H100-SXM5-80GB"), "index": ("int", 3), "rdma": ("bool", True),
                       "links": ("string", "a,b,c")}, {"memory": "80Gi"})

TRUE = [
    # strings extension
    ("lowerAscii", f'{A}.model.lowerAscii() == "h100-sxm5-80gb"'),
    ("upperAscii leaves non-ASCII alone", '"äb".upperAscii() == "äB"'),
    ("charAt", f'{A}.model.charAt(0) == "H" && {A}.model.charAt(14) == ""'),
    ("indexOf", f'{A}.model.indexOf("-") == 4 && {A}.model.indexOf("-", 5) == 9 && {A}.model.indexOf("x") == -1'),
    ("lastIndexOf", f'{A}.model.lastIndexOf("-") == 9 && {A}.model.lastIndexOf("-", 8) == 4'),
    ("replace", f'{A}.model.replace("-", "_") == "H100_SXM5_80GB" && {A}.model.replace("-", "", 1) == "H100SXM5-80GB"'),
    ("split", f'{A}.links.split(",") == ["a", "b", "c"] && {A}.links.split(",", 2) == ["a", "b,c"]'),
    ("split with a limit of 0", f'{A}.links.split(",", 0).size() == 0'),
    ("split into characters", '"abc".split("") == ["a", "b", "c"]'),
    ("substring", f'{A}.model.substring(0, 4) == "H100" && {A}.model.substring(10) == "80GB"'),
    ("trim", '"  x \\t".trim() == "x"'),
    ("join", f'{A}.links.split(",").join("-") == "a-b-c" && ["x", "y"].join() == "xy"'),
    ("strings.quote", 'strings.quote("a\\"b") == "\\"a\\\\\\"b\\""'),
    # regex
    ("find", f'{A}.model.find("[0-9]+GB") == "80GB" && {A}.model.find("z+") == ""'),
    ("findAll", f'{A}.model.findAll("[0-9]+") == ["100", "5", "80"] && {A}.model.findAll("[0-9]+", 1) == ["100"]'),
    # Kubernetes lists
    ("isSorted", "[1, 2, 2].isSorted() && ![2, 1].isSorted()"),
    ("sum", "[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0 && [].sum() == 0"),
    ("min and max", "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3"),
    ("list indexOf and lastIndexOf", "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2 && [1].indexOf(5) == -1"),
    # lists extension
    ("flatten", "[[1], [2, [3]]].flatten() == [1, 2, [3]] && [[1], [2, [3]]].flatten(2) == [1, 2, 3]"),
    ("slice", "[1, 2, 3, 4].slice(1, 3) == [2, 3]"),
    ("distinct", "[1, 2, 1, 3].distinct() == [1, 2, 3]"),
    ("sort", '["b", "a"].sort() == ["a", "b"]'),
    ("reverse", "[1, 2].reverse() == [2, 1]"),
    ("lists.range", "lists.range(3) == [0, 1, 2]"),
    # sets extension
    ("sets.contains", "sets.contains([1, 2, 3], [3, 1]) && !sets.contains([1], [2])"),
    ("sets.equivalent", "sets.equivalent([1, 2, 2], [2, 1])"),
    ("sets.intersects", "sets.intersects([1, 2], [2, 5]) && !sets.intersects([1], [5])"),
    # macros
    ("cel.bind", f'cel.bind(gpu, {A}, gpu.model.startsWith("H100") && gpu.index == 3)'),
    ("cel.bind shadows nothing outside", f'cel.bind(x, 1, x == 1) && {A}.index == 3'),
    ("two-variable all over a map", f"{A}.all(k, v, k.size() > 0)"),
    ("two-variable exists over a map", f"{A}.exists(k, v, k == \"index\" && v == 3)"),
    ("two-variable exists over a list", '["a", "b"].exists(i, v, i == 1 && v == "b")'),
    ("existsOne", '[1, 2, 3].existsOne(i, v, v > 2)'),
    ("sortBy", '[3, 1, 2].sortBy(e, -e) == [3, 2, 1] && ["bb", "a", "ccc"].sortBy(s, s.size()) == ["a", "bb", "ccc"]'),
    ("sortBy keeps the order of equal keys", '["b1", "a", "b2", "c"].sortBy(s, s.size()) == ["a", "c", "b1", "b2"]'),
    ("sortBy of nothing", "[].sortBy(e, e) == []"),
    ("sortBy over attributes", f'[{A}.model, "A100"].sortBy(m, m.lowerAscii()) == ["A100", {A}.model]'),
    ("transformList over a list", "[1, 2, 3].transformList(i, v, (i * v) + v) == [1, 4, 9]"),
    ("transformList with a filter", "[1, 2, 3].transformList(i, v, i % 2 == 0, (i * v) + v) == [1, 9]"),
    ("transformList over a map", f'{A}.transformList(k, v, k).exists(k, k == "model")'),
    ("transformMap over a list", "[1, 2, 3].transformMap(i, v, i % 2 == 0, v * 10) == {0: 10, 2: 30}"),
    ("transformMap over a map", '{"greeting": "hello"}.transformMap(k, v, v + "!") == {"greeting": "hello!"}'),
    ("transformMapEntry", '{"greeting": "hello"}.transformMapEntry(k, v, {v: k}) == {"hello": "greeting"}'
                          " && [1, 2, 3].transformMapEntry(i, v, {v: i}) == {1: 0, 2: 1, 3: 2}"),
    ("transformMapEntry with a filter", '[1, 2, 3].transformMapEntry(i, v, v > 1, {string(v): i}) == {"2": 1, "3": 2}'),
    ("concatenations compare equal", '"hello" + "!" == "hello!" && [1] + [2] == [1, 2] && b"a" + b"b" == b"ab"'),
    ("a library function's error absorbed by &&", f'{A}.model.charAt(99) == "x" && false == false || true'),
]


@pytest.mark.parametrize("expr", [c[1] for c in TRUE], ids=[c[0] for c in TRUE])
def test_library_true(expr: str) -> None:
    assert evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV)) is True


ERRORS = [
    ("charAt beyond the end", f'{A}.model.charAt(99) == "x"', "index out of range: 99"),
    ("substring reversed", f'{A}.model.substring(3, 1) == ""', "invalid substring range. start: 3, end: 1"),
    ("min of nothing", "[].min() == 1", "min called on empty list"),
    ("slice past the end", "[1].slice(0, 2).size() == 1", "cannot slice(0, 2), list is length 1"),
    ("sum of mixed kinds", '[1, "a"].sum() == 1', "no such overload"),
    ("sort of mixed kinds", '[1, "a"].sort() == []', "list elements must have the same type"),
    ("sort of lists", "[[2], [1]].sort() == []", "list elements must be comparable"),
    ("sortBy keys of mixed kinds", '[1, 2].sortBy(e, e == 1 ? dyn("a") : dyn(2)) == []', "list elements must have the same type"),
    ("sortBy keys that do not order", "[1, 2].sortBy(e, [e]) == []", "list elements must be comparable"),
    ("sortBy's key fails", "[1, 0].sortBy(e, 1 / e) == []", "divide by zero"),
    ("transformMapEntry gives a key twice", '{"a": "x", "b": "x"}.transformMapEntry(k, v, {v: k}).size() == 1',
     "insert failed: key x already exists"),
    ("transformList's transform fails", "[1, 0].transformList(i, v, 1 / v) == []", "divide by zero"),
    ("transformList's filter is not a bool", "[1].transformList(i, v, v, v) == []", "no such overload"),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_library_errors(expr: str, want: str) -> None:
    with pytest.raises(CelError, match=re.escape(want)):
        evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV))
