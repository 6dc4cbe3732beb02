"""CEL equality and ordering across types, as cel-go evaluates them with the Kubernetes options
(scheduler-reference-dra.md 3.3): celpy on its own raises "no such overload" where cel-go says false.
The operands are attribute values (``dyn``) where the types differ: with two literals of different
types cel-go's type check refuses the selector before it runs (test_check.py)."""

from __future__ import annotations

import pytest

from kplan.cel import CelError, compile_selector, device_activation, evaluate
from kplan.model.dra import Device

A = 'device.attributes["gpu.example.com"]'
C = 'device.capacity["gpu.example.com"]'
DEV = Device("gpu-0", {"model": ("string", "h100"), "index": ("int", 3), "rdma": ("bool", True),
                       "driverVersion": ("version", "2.0.1")}, {"memory": "80Gi"})

CASES = [
    ("string attribute == int", f"{A}.model == 1", False),
    ("string attribute != int", f"{A}.model != 1", True),
    ("int attribute == string", f'{A}.index == "3"', False),
    ("int attribute != string", f'{A}.index != "3"', True),
    ("bool attribute == string", f'{A}.rdma == "true"', False),
    ("bool attribute == int", f"{A}.rdma == 1", False),
    ("int attribute == double of the same value", f"{A}.index == 3.0", True),
    ("int attribute == uint of the same value", f"{A}.index == 3u", True),
    ("string == version attribute (a built-in on the left is simply unequal)", f'"2.0.1" == {A}.driverVersion',
     False),
    ("int attribute == quantity capacity", f"{A}.index == {C}.memory", False),
    ("version == version by value", f'{A}.driverVersion == semver("2.0.1")', True),
    ("quantity == quantity by value", f'{C}.memory == quantity("81920Mi")', True),
    ("missing attribute behind has() with &&", f"has({A}.nope) && {A}.nope == 1", False),
    ("missing attribute behind !has() with ||", f"!has({A}.nope) || {A}.nope == 1", True),
    ("lists compare element by element", '[1, "a"] == [1.0, "a"]', True),
    ("lists of different element types", '[1] == ["a"]', False),
    ("maps compare value by value", '{"a": 1} == {"a": "b"}', False),
    ("null against a value", f"null == {A}.index", False),
    ("in: an unequal element type is skipped", f'{A}.model in [1, "h100"]', True),
    ("in: no element of the type", f'{A}.index in ["a"]', False),
    ("in: a map's keys", f'"model" in {A}', True),
    ("ordering across int and double", f"{A}.index < 3.5", True),
    ("ordering across uint and int", f"{A}.index >= 3u", True),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_equality_across_types(expr: str, want: bool) -> None:
    assert evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV)) is want


ERRORS = [
    ("a version on the left accepts only a version", f'{A}.driverVersion == "2.0.1"', "no such overload"),
    ("a quantity on the left accepts only a quantity", f"{C}.memory == {A}.index", "no such overload"),
    ("ordering a string against an int", f'{A}.index < "4"', "no such overload"),
    ("a missing attribute without has()", f"{A}.nope == 1", "no such key: nope"),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_that_remain(expr: str, want: str) -> None:
    with pytest.raises(CelError, match=want):
        evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV))
