"""The runtime cost of DRA selectors and its limit (resource.k8s.io CELSelectorExpressionMaxCost,
cel-go's interpreter/runtimecost.go; scheduler-reference-dra.md 3.5)."""

from __future__ import annotations

from typing import Any

import pytest

import kplan.cel as cel
import kplan.cel.interpreter
from kplan.cel import (
    COST_EXCEEDED,
    CelError,
    compile_selector,
    device_activation,
    evaluate_with_cost,
)
from kplan.model.dra import (
    ClaimSpec,
    Device,
    DeviceClass,
    DeviceRequest,
    ResourceClaim,
    ResourceSlice,
    SubRequest,
)
from kplan.plugins.dra.structured import Allocator, AllocatorError

D = 'device.attributes["dra.example.com"]'
Q = 'device.capacity["dra.example.com"]'
DEV = Device("d0", {"bool": ("bool", True), "int": ("int", 1), "string": ("string", "fish"),
                    "version": ("version", "1.0.0"), "a": ("bool", True), "b": ("bool", True), "c": ("bool", True)},
             {"quantity": "1Mi"})


def cost(expr: str, limit: int | None = None) -> tuple[bool, int]:
    return evaluate_with_cost(compile_selector(expr), device_activation("dra.example.com", DEV), limit)


COSTS = [
    # the first two are upstream's compile_test.go cases, whose worst case is also what they cost here
    ("three attribute tests", f"{D}.a && {D}.b && {D}.c", 12),
    ("every kind of lookup and comparison",
     f'{Q}.quantity.isGreaterThan(quantity("1Ki")) && {D}.bool && {D}.int > 0 && {D}.string == "fish" && '
     f'{D}.version.isGreaterThan(semver("0.0.1")) && {Q}["quantity"].isGreaterThan(quantity("1Ki")) && '
     f'{D}["bool"] && {D}["int"] > 0 && {D}["string"] == "fish" && {D}["version"].isGreaterThan(semver("0.0.1"))',
     52),
    ("string equality costs a tenth of the shorter string", 'device.driver == "dra.example.com"', 4),
    ("the side || does not need is not evaluated", f'!("name" in {Q}) || {Q}.name.isGreaterThan(quantity("1Ki"))',
     5),
    ("constants cost nothing", "1 < 2 || true", 1),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in COSTS], ids=[c[0] for c in COSTS])
def test_cost(expr: str, want: int) -> None:
    assert cost(expr) == (True, want)


NESTED = f"{D}.all(x, {D}.all(y, {D}.all(z, x != y || y != z || z != 'q')))"


def test_comprehensions_pay_per_iteration_and_all_stops_at_the_first_false() -> None:
    _, full = cost(NESTED)
    assert full > 7 ** 3
    _, stopped = cost(f"{D}.all(x, x == 'nope')")
    assert stopped < cost(f"{D}.all(x, x != 'nope')")[1]


def test_past_the_limit_the_evaluation_is_cancelled() -> None:
    with pytest.raises(CelError, match=f"^{COST_EXCEEDED}$"):
        cost(NESTED, limit=500)


def test_the_cancellation_is_not_absorbed_by_or() -> None:
    # cel-go aborts the evaluation: || never sees an error value it could ignore
    with pytest.raises(CelError, match=COST_EXCEEDED):
        cost(f"{NESTED} || true", limit=500)
    assert cost(f"true || {NESTED}", limit=500) == (True, 0)


def test_the_default_limit_is_the_dra_selector_limit() -> None:
    assert cel.MAX_COST == 1_000_000


def test_the_allocator_reports_the_limit_as_upstream(monkeypatch: Any) -> None:
    monkeypatch.setattr(kplan.cel.interpreter, "MAX_COST", 500)  # the limit evaluate reads
    slices = [ResourceSlice("n1-d", "dra.example.com", "n1", 1, 1, node_name="n1", devices=(DEV,))]
    classes = {"any": DeviceClass("any", ())}
    spec = ClaimSpec((DeviceRequest("r", exactly=SubRequest("r", "any", (NESTED,))),))
    claim = ResourceClaim("default", "c", "uid-c", spec)
    with pytest.raises(AllocatorError) as e:
        Allocator(slices, classes, []).allocate("n1", {}, [claim])
    assert str(e.value) == f"claim default/c: selector #0: CEL runtime error: {COST_EXCEEDED}"
