"""Consumable capacity (KEP-5075, DRAConsumableCapacity): the capacity rules, the fields' parsing,
the allocator's shares and distinctAttribute, the allocated state's shares, and the gate off."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kplan.cel import CelError, compile_selector, device_activation, evaluate
from kplan.cluster.dra import DraState, SharedView, insert_capacity, remove_capacity
from kplan.errors import InputError, UnsupportedError
from kplan.model.dra import Allocation, DeviceFeatures, DeviceResult, RequestPolicy
from kplan.model.parse_dra import parse_resource_claim, parse_resource_slice
from kplan.model.quantity import parse_nanos
from kplan.plugins.dra import capacity as cap
from kplan.plugins.dra.structured import NEW_SHARE, Allocator
from tests.unit.dra.test_allocator import CLASSES, GPU, claim, exactly, picked, slice_

G = 1_000_000_000
GI = 1024**3 * G
ON = DeviceFeatures(consumable_capacity=True, partitionable_devices=True, skip_unusable_pools=True)
ON_136 = dataclasses.replace(ON, distinct_per_request_name=True)
ON_137 = dataclasses.replace(ON, all_requests_listed_by_capacity_alone=True, negative_capacity_aborts=True,
                             shared_devices_count_as_in_use=True)
OFF = DeviceFeatures(partitionable_devices=True, skip_unusable_pools=True)


def q(text: str) -> int:
    return parse_nanos(text)


RANGE_4G = RequestPolicy(default=8 * GI, min=4 * GI, step=4 * GI, has_range=True)
RANGE_MAX = RequestPolicy(default=2 * G, min=G, max=6 * G, step=G, has_range=True)
VALUES = RequestPolicy(default=10 * G, valid_values=(10 * G, 25 * G, 50 * G, 100 * G))
FRACTION = RequestPolicy(default=q("500m"), min=q("500m"), step=G, has_range=True)

CONSUMED = [
    # (name, requested, capacity value, policy, fractional, consumed)
    ("no request, no policy: the whole capacity", None, 40 * GI, None, False, 40 * GI),
    ("no request: the policy's default", None, 40 * GI, RANGE_4G, False, 8 * GI),
    ("a request without policy is taken as it is", 7 * GI, 40 * GI, None, False, 7 * GI),
    ("below min: min", 1 * GI, 40 * GI, RANGE_4G, False, 4 * GI),
    ("rounded up to a whole number of steps above min", 10 * GI, 40 * GI, RANGE_4G, False, 12 * GI),
    ("on a step: unchanged", 16 * GI, 40 * GI, RANGE_4G, False, 16 * GI),
    ("validValues: the first at least as large", 11 * G, 100 * G, VALUES, False, 25 * G),
    ("validValues: above them all, unchanged", 101 * G, 100 * G, VALUES, False, 101 * G),
    ("whole units: each operand rounded up first (2 - 1 is one step)", q("1200m"), 10 * G, FRACTION, False, 2 * G),
    ("DRAFractionalCapacityRange: in thousandths", q("1200m"), 10 * G, FRACTION, True, q("1500m")),
    ("a policy with a default only takes the request as it is", 3 * G, 10 * G, RequestPolicy(default=G), False, 3 * G),
]


@pytest.mark.parametrize(("requested", "value", "policy", "fractional", "want"), [c[1:] for c in CONSUMED],
                         ids=[c[0] for c in CONSUMED])
def test_consumed_amount(requested: int | None, value: int, policy: RequestPolicy | None, fractional: bool,
                         want: int) -> None:
    assert cap.consumed_amount(requested, value, policy, fractional) == want


VIOLATES = [
    ("no policy", 5 * G, None, False),
    ("the default never violates", 2 * G, RANGE_MAX, False),
    ("above max", 7 * G, RANGE_MAX, True),
    ("on the step within max", 6 * G, RANGE_MAX, False),
    ("off the step", q("2500m") + G, dataclasses.replace(RANGE_MAX, step=2 * G), True),
    ("one of validValues", 50 * G, VALUES, False),
    ("not one of validValues", 101 * G, VALUES, True),
]


@pytest.mark.parametrize(("amount", "policy", "want"), [c[1:] for c in VIOLATES], ids=[c[0] for c in VIOLATES])
def test_violates_policy(amount: int, policy: RequestPolicy | None, want: bool) -> None:
    assert cap.violates_policy(amount, policy) is want


def device(**body: Any) -> Any:
    return parse_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                 "metadata": {"name": "s"},
                                 "spec": {"driver": GPU, "nodeName": "n1",
                                          "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                                          "devices": [{"name": "g", **body}]}}).devices[0]


SHARED = device(allowMultipleAllocations=True, capacity={
    "memory": {"value": "40Gi", "requestPolicy": {"default": "8Gi", "validRange": {"min": "4Gi", "step": "4Gi"}}},
    "cores": {"value": "100", "requestPolicy": {"default": "10", "validValues": ["10", "25", "50", "100"]}}})

FITS = [
    # (name, requests, consumed on the device, picked in this attempt, fits)
    ("the defaults of every capacity", None, None, None, True),
    ("rounded up, within the capacity", (("memory", 10 * GI),), {"memory": 28 * GI}, None, True),
    ("rounded up past the capacity", (("memory", 10 * GI),), {"memory": 29 * GI}, None, False),
    ("an unnamed capacity consumes its default too", (("memory", 4 * GI),), {"cores": 91 * G}, None, False),
    ("this attempt's picks count", (("memory", 4 * GI),), {"memory": 20 * GI}, {"memory": 20 * GI}, False),
    ("above every valid value", (("cores", 101 * G),), None, None, False),
]


@pytest.mark.parametrize(("requests", "consumed", "allocating", "want"), [c[1:] for c in FITS],
                         ids=[c[0] for c in FITS])
def test_fits(requests: Any, consumed: dict[str, int] | None, allocating: dict[str, int] | None, want: bool) -> None:
    assert cap.fits(SHARED, requests, consumed, allocating) is want


def test_a_request_for_a_capacity_the_device_lacks_is_an_error_the_allocator_skips() -> None:
    with pytest.raises(cap.CapacityError, match="some requested capacity has not been defined"):
        cap.fits(SHARED, (("bandwidth", G),), None, None)


RESOLVE = [
    ("a short name stays as the device publishes it", (("memory", G),), (("memory", G),)),
    ("the driver as domain names the device's short name (1.38, #142202)", (("gpu.example.com/memory", G),),
     (("memory", G),)),
    ("another domain does not", (("other.example.com/memory", G),), (("other.example.com/memory", G),)),
    ("a name the device lacks is kept, for fits to skip the device", (("bandwidth", G),), (("bandwidth", G),)),
]


@pytest.mark.parametrize(("requests", "want"), [c[1:] for c in RESOLVE], ids=[c[0] for c in RESOLVE])
def test_capacity_names_resolve_with_the_driver_as_default_domain(requests: Any, want: Any) -> None:
    assert cap.resolve_requests(SHARED, "gpu.example.com", requests) == want


def test_one_capacity_requested_under_both_names_is_refused() -> None:
    with pytest.raises(cap.DuplicateCapacityRequest):
        cap.resolve_requests(SHARED, "gpu.example.com", (("memory", G), ("gpu.example.com/memory", G)))


def test_consumed_capacity_names_every_capacity_of_the_device() -> None:
    assert cap.consumed_capacity(SHARED, (("memory", 10 * GI),)) == (("cores", 10 * G), ("memory", 12 * GI))


# ------------------------------------------------------------------------------ parsing

def test_fields_parse() -> None:
    assert SHARED.allow_multiple_allocations
    assert SHARED.request_policies["memory"] == RANGE_4G
    c = claim({"name": "r", "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"memory": "10Gi"}}}},
              constraints=({"distinctAttribute": f"{GPU}/numa"},))
    assert c.spec.requests[0].exactly.capacity == (("memory", 10 * GI),)
    assert c.spec.constraints[0].distinct_attribute == f"{GPU}/numa"
    allocated = parse_resource_claim({
        "kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {"devices": {"requests": []}},
        "status": {"allocation": {"devices": {"results": [
            {"request": "r", "driver": GPU, "pool": "n1", "device": "g", "shareID": "u-1",
             "consumedCapacity": {"memory": "4Gi"}}]}}}})
    assert allocated.allocation is not None
    assert allocated.allocation.results[0].share_id == "u-1"
    assert allocated.allocation.results[0].consumed == (("memory", 4 * GI),)


BAD = [
    ("a policy on a device that does not allow multiple allocations",
     dict(capacity={"m": {"value": "1", "requestPolicy": {"default": "1"}}}),
     r"capacity.m.requestPolicy: Forbidden: allowMultipleAllocations must be true"),
    ("validValues without default", dict(allowMultipleAllocations=True, capacity={
        "m": {"value": "10", "requestPolicy": {"validValues": ["1"]}}}), r"default: Required value"),
    ("a default off the step", dict(allowMultipleAllocations=True, capacity={
        "m": {"value": "10", "requestPolicy": {"default": "3", "validRange": {"min": "1", "step": "3"}}}}),
     r"validRange.step: Invalid value: value is not a multiple of a given step from min"),
    ("validValues and validRange", dict(allowMultipleAllocations=True, capacity={
        "m": {"value": "10", "requestPolicy": {"default": "1", "validValues": ["1"], "validRange": {"min": "1"}}}}),
     r"exactly one policy can be specified"),
]


@pytest.mark.parametrize(("body", "want"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_invalid_policies_are_refused(body: dict[str, Any], want: str) -> None:
    with pytest.raises(InputError, match=want):
        device(**body)


# ------------------------------------------------------------------------------ CEL

def test_allow_multiple_allocations_in_cel() -> None:
    expr = "device.allowMultipleAllocations"
    program = compile_selector(expr, stored=True)  # kube-scheduler's "stored expressions" environment
    assert evaluate(program, device_activation(GPU, SHARED, consumable=True)) is True
    # the gate off: the API server dropped the field, so it is false for every device
    assert evaluate(program, device_activation(GPU, SHARED, consumable=False)) is False
    with pytest.raises(CelError, match="undefined field 'allowMultipleAllocations'"):
        compile_selector(expr)  # the API server's environment for new expressions (1.34's gates)


# ------------------------------------------------------------------------------ the allocator

def shared_gpu(name: str, numa: int = 0, memory: str = "40Gi") -> dict[str, Any]:
    return {"name": name, "allowMultipleAllocations": True, "attributes": {"numa": {"int": numa}},
            "capacity": {"memory": {"value": memory}}}


def mem(amount: str, name: str = "r", count: int = 1) -> dict[str, Any]:
    r = exactly(name, count)
    r["exactly"]["capacity"] = {"requests": {"memory": amount}}
    return r


def test_a_shared_device_serves_several_requests_of_one_attempt_until_its_capacity_runs_out() -> None:
    slices = [slice_("n1", shared_gpu("g0"))]
    alloc = Allocator(slices, CLASSES, set(), features=ON)
    found = alloc.allocate("n1", {}, [claim(mem("16Gi"), name="a"), claim(mem("16Gi"), name="b")])
    assert picked(found) == [["g0"], ["g0"]]
    assert found is not None and found[0].results[0].share_id == NEW_SHARE
    assert found[0].results[0].consumed == (("memory", 16 * GI),)
    assert alloc.allocate("n1", {}, [claim(mem("16Gi"), name="a"), claim(mem("16Gi"), name="b"),
                                     claim(mem("16Gi"), name="c")]) is None


def test_one_request_never_takes_a_shared_device_twice() -> None:
    alloc = Allocator([slice_("n1", shared_gpu("g0"), shared_gpu("g1"))], CLASSES, set(), features=ON)
    assert picked(alloc.allocate("n1", {}, [claim(mem("1Gi", count=2))])) == [["g0", "g1"]]
    assert alloc.allocate("n1", {}, [claim(mem("1Gi", count=3), name="three")]) is None


def test_without_the_gate_a_device_allowing_multiple_allocations_is_exclusive() -> None:
    alloc = Allocator([slice_("n1", shared_gpu("g0"))], CLASSES, set(), features=OFF)
    found = alloc.allocate("n1", {}, [claim(exactly(), name="a"), claim(exactly(), name="b")])
    assert found is None
    [only] = Allocator([slice_("n1", shared_gpu("g0"))], CLASSES, set(), features=OFF).allocate(
        "n1", {}, [claim(mem("80Gi"))]) or []  # the request's capacity was dropped by the API server
    assert only.results[0].share_id == "" and only.results[0].consumed is None


def test_an_exclusive_device_is_checked_against_the_request_too() -> None:
    slices = [slice_("n1", {"name": "g0", "capacity": {"memory": {"value": "40Gi"}}})]
    assert Allocator(slices, CLASSES, set(), features=ON).allocate("n1", {}, [claim(mem("50Gi"))]) is None
    [a] = Allocator(slices, CLASSES, set(), features=ON).allocate("n1", {}, [claim(mem("30Gi"))]) or []
    assert a.results[0].share_id == "" and a.results[0].consumed is None


THREE_NUMA = [slice_("n1", {"name": "d0", "attributes": {"numa": {"int": 0}}},
                     {"name": "d1", "attributes": {"numa": {"int": 1}}},
                     {"name": "d2", "attributes": {"numa": {"int": 0}}})]
DISTINCT = ({"distinctAttribute": f"{GPU}/numa"},)


@pytest.mark.parametrize(("features", "want"), [(ON_136, [["d0", "d1", "d2"]]), (ON_137, None)],
                         ids=["1.36 keeps one value per request name", "1.37 keeps every device's"])
def test_distinct_attribute_within_one_request(features: DeviceFeatures, want: Any) -> None:
    alloc = Allocator(THREE_NUMA, CLASSES, set(), features=features)
    assert picked(alloc.allocate("n1", {}, [claim(exactly(count=3), constraints=DISTINCT)])) == want


def test_distinct_attribute_across_requests_of_a_shared_device() -> None:
    slices = [slice_("n1", shared_gpu("s0", numa=0), shared_gpu("s1", numa=1))]
    two = claim(exactly("r1"), exactly("r2"), constraints=DISTINCT)
    assert picked(Allocator(slices, CLASSES, set(), features=ON_137).allocate("n1", {}, [two])) == [["s0", "s1"]]
    # without the constraint both requests share s0 (a request without capacity would take all 40Gi)
    assert picked(Allocator(slices, CLASSES, set(), features=ON_137).allocate(
        "n1", {}, [claim(mem("1Gi", "r1"), mem("1Gi", "r2"))])) == [["s0", "s0"]]
    assert picked(Allocator(slices, CLASSES, set(), features=ON_137).allocate(
        "n1", {}, [claim(exactly("r1"), exactly("r2"))])) == [["s0", "s1"]]


def test_distinct_attribute_alone_is_refused_with_the_gate_off() -> None:
    with pytest.raises(UnsupportedError, match=r"has only distinctAttribute, which needs DRAConsumableCapacity"):
        Allocator(THREE_NUMA, CLASSES, set(), features=OFF).allocate(
            "n1", {}, [claim(exactly(count=2), constraints=DISTINCT)])


@pytest.mark.parametrize(("features", "want"), [(ON, [["s1"]]), (ON_137, None)],
                         ids=["1.36 lists the devices with room left", "1.37 lists them by capacity alone"])
def test_all_with_capacity(features: DeviceFeatures, want: Any) -> None:
    slices = [slice_("n1", shared_gpu("s0", memory="10Gi"), shared_gpu("s1", memory="10Gi"))]
    dra = DraState(slices=slices)
    dra.features = features
    dra.write(_allocated("held", "s0", 8 * GI))
    all4 = {"name": "r", "exactly": {"deviceClassName": "gpu", "allocationMode": "All",
                                     "capacity": {"requests": {"memory": "4Gi"}}}}
    alloc = Allocator(dra.slices, CLASSES, dra.allocated_devices(), features=features, shares=SharedView(dra))
    assert picked(alloc.allocate("n1", {}, [claim(all4)])) == want


# ------------------------------------------------------------------------------ the allocated state

def _allocated(name: str, dev: str, memory: int, share: str = "") -> Any:
    c = claim(exactly(), name=name)
    result = DeviceResult("r", GPU, "n1", dev, share_id=share or f"share-{name}", consumed=(("memory", memory),))
    return dataclasses.replace(c, allocation=Allocation((result,)))


def test_shares_are_tracked_apart_from_devices_in_use() -> None:
    dra = DraState(slices=[slice_("n1", shared_gpu("s0"))])
    dra.features = ON
    held = _allocated("a", "s0", 4 * GI)
    dra.write(held)
    assert dra.allocated_devices() == set()
    assert dra.shares((GPU, "n1", "s0")).aggregated() == {"memory": 4 * GI}
    view = SharedView(dra)
    flying = _allocated("b", "s0", 8 * GI)
    dra.set_in_flight(flying)
    assert dra.shares((GPU, "n1", "s0")).aggregated() == {"memory": 12 * GI}
    assert view.get((GPU, "n1", "s0")).aggregated() == {"memory": 4 * GI}  # what PreFilter saw
    dra.pop_in_flight(flying.uid)
    dra.delete(held)
    assert dra.shares((GPU, "n1", "s0")).aggregated() is None and not dra.device_allocated((GPU, "n1", "s0"))


def test_the_gate_off_counts_shares_as_devices_in_use() -> None:
    dra = DraState(slices=[slice_("n1", shared_gpu("s0"))], claims=[_allocated("a", "s0", 4 * GI)])
    dra.features = ON
    assert dra.allocated_devices() == set()
    dra.features = OFF
    assert dra.allocated_devices() == {(GPU, "n1", "s0")}


def test_the_trackers_insert_and_remove() -> None:
    entry = insert_capacity(None, (("a", 1), ("b", 2)))
    assert insert_capacity(entry, (("a", 1),)) == (("a", 2), ("b", 2))
    assert remove_capacity(entry, (("a", 1),)) == (("a", 0), ("b", 2))
    assert remove_capacity(entry, (("a", 1), ("b", 2))) is None  # all zero: the entry goes
    assert remove_capacity(None, (("a", 1),)) is None
