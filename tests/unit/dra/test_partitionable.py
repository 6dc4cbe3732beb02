"""Partitionable devices (KEP-4815: shared counters, devices consuming them, per-device node
selection) and the pool rules of the allocators from 1.35 on, release by release."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kplan.errors import InputError
from kplan.framework.release import Release
from kplan.model.dra import FEATURES_OFF, DeviceFeatures
from kplan.model.parse_dra import parse_resource_slice
from kplan.plugins.dra.structured import INVALID_POOLS, Allocator, AllocatorError, NodeFailure, gather_pools
from kplan.plugins.dynamicresources import device_features
from tests.unit.dra.test_allocator import CLASSES, GPU, claim, exactly, picked

#: 1.35 with DRAPartitionableDevices=true, 1.36 and 1.37 (their defaults)
F135 = DeviceFeatures(partitionable_devices=True, skip_unusable_pools=True, counter_slices_reach_every_node=True)
F136 = DeviceFeatures(device_taints=True, partitionable_devices=True, skip_unusable_pools=True,
                      counter_slices_reach_every_node=True)
F137 = DeviceFeatures(device_taints=True, device_taint_rules=True, partitionable_devices=True,
                      skip_unusable_pools=True)
#: 1.35's defaults: the new pool rules, no partitionable devices (the API server drops the fields)
POOLS_ONLY = DeviceFeatures(skip_unusable_pools=True, counter_slices_reach_every_node=True)


def raw_slice(name: str, node: str = "n1", pool: str = "n1", count: int = 2, gen: int = 1, **spec: Any
              ) -> Any:
    body: dict[str, Any] = {"driver": GPU, "pool": {"name": pool, "generation": gen, "resourceSliceCount": count}}
    if node:
        body["nodeName"] = node
    body.update(spec)
    return parse_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                 "metadata": {"name": name}, "spec": body})


def counters(memory: str = "40Gi", slices: int = 7, name: str = "gpu-0") -> list[dict[str, Any]]:
    return [{"name": name, "counters": {"memory": {"value": memory}, "slices": {"value": str(slices)}}}]


def part(name: str, memory: str, slices: int, counter_set: str = "gpu-0", **extra: Any) -> dict[str, Any]:
    return {"name": name, "consumesCounters": [{"counterSet": counter_set, "counters": {
        "memory": {"value": memory}, "slices": {"value": str(slices)}}}], **extra}


def gpu_pool(node: str = "n1", *devices: dict[str, Any]) -> list[Any]:
    """A counter slice and a device slice of one pool on the node: a whole GPU and its partitions."""
    devices = devices or (part("whole", "40Gi", 7), part("mig-1", "5Gi", 1), part("mig-2", "5Gi", 1),
                          part("mig-3", "20Gi", 3))
    return [raw_slice(f"{node}-counters", node, node, sharedCounters=counters()),
            raw_slice(f"{node}-devices", node, node, devices=list(devices))]


WHOLE_SEL = 'device.attributes["x"].size() == 0'

CASES = [
    ("the whole device leaves no counters for a second device: two partitions are taken", F136, gpu_pool(),
     set(), [claim(exactly(count=2))], [["mig-1", "mig-2"]]),
    ("the partitions share the counters: three of them fit", F136, gpu_pool(), {(GPU, "n1", "whole")},
     [claim(exactly(count=3))], None),
    ("the allocated whole device leaves no counters for a partition", F136, gpu_pool(), {(GPU, "n1", "whole")},
     [claim(exactly())], None),
    ("an allocated partition leaves room for the others", F136, gpu_pool(), {(GPU, "n1", "mig-1")},
     [claim(exactly(count=2))], [["mig-2", "mig-3"]]),
    ("two claims: the search backtracks from the whole device to partitions", F136, gpu_pool(), set(),
     [claim(exactly()), claim(exactly(), name="d")], [["mig-1"], ["mig-2"]]),
    ("without DRAPartitionableDevices counters play no role (1.34)", FEATURES_OFF, gpu_pool(), set(),
     [claim(exactly(count=4))], [["whole", "mig-1", "mig-2", "mig-3"]]),
    ("without DRAPartitionableDevices counters play no role (1.35)", POOLS_ONLY, gpu_pool(), set(),
     [claim(exactly(count=4))], [["whole", "mig-1", "mig-2", "mig-3"]]),
    ("at 1.37 too", F137, gpu_pool(), {(GPU, "n1", "mig-3")}, [claim(exactly(count=2))], [["mig-1", "mig-2"]]),
]


@pytest.mark.parametrize(("features", "slices", "allocated", "claims", "want"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_counters_limit_what_is_allocated_together(features: DeviceFeatures, slices: Any, allocated: Any,
                                                   claims: Any, want: Any) -> None:
    assert picked(Allocator(slices, CLASSES, allocated, features=features).allocate("n1", {}, claims)) == want


def test_two_claims_share_the_counters_within_one_call() -> None:
    devices = (part("mig-1", "20Gi", 3), part("mig-2", "20Gi", 3), part("mig-3", "20Gi", 3))
    got = Allocator(gpu_pool("n1", *devices), CLASSES, set(), features=F136).allocate(
        "n1", {}, [claim(exactly()), claim(exactly(), name="d")])
    assert picked(got) == [["mig-1"], ["mig-2"]]
    assert Allocator(gpu_pool("n1", *devices), CLASSES, set(), features=F136).allocate(
        "n1", {}, [claim(exactly(count=3))]) is None


INVALID = [
    ("a device consuming an unknown counter set", [part("a", "1Gi", 1, counter_set="nope")],
     "counter set nope not found"),
    ("a device consuming an unknown counter", [{"name": "a", "consumesCounters": [
        {"counterSet": "gpu-0", "counters": {"power": {"value": "1"}}}]}], "counter power not found in counter set gpu-0"),
]


@pytest.mark.parametrize(("devices", "reason"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_an_invalid_pool_fails_the_node_when_nothing_fits(devices: list[dict[str, Any]], reason: str) -> None:
    slices = gpu_pool("n1", *devices)
    [pool] = gather_pools(slices, "n1", {}, F136)
    assert pool.invalid == reason and pool.devices == []
    with pytest.raises(NodeFailure, match=INVALID_POOLS):
        Allocator(slices, CLASSES, set(), features=F136).allocate("n1", {}, [claim(exactly())])


def test_a_pool_missing_a_slice_is_not_allocated_from_from_1_35_on() -> None:
    slices = [raw_slice("a", devices=[{"name": "g0"}])]  # resourceSliceCount 2, one slice
    assert picked(Allocator(slices, CLASSES, set()).allocate("n1", {}, [claim(exactly())])) == [["g0"]]  # 1.34
    assert Allocator(slices, CLASSES, set(), features=POOLS_ONLY).allocate("n1", {}, [claim(exactly())]) is None
    with pytest.raises(AllocatorError, match=f"asks for all devices, but resource pool {GPU}/n1 is currently being "
                                             "updated"):
        Allocator(slices, CLASSES, set(), features=POOLS_ONLY).allocate("n1", {}, [claim(exactly(mode="All"))])


def test_a_pool_the_driver_replaces_elsewhere_is_obsolete() -> None:
    slices = [raw_slice("a", devices=[{"name": "g0"}]), raw_slice("b", node="n2", gen=2, count=1,
                                                                    devices=[{"name": "g1"}])]
    assert gather_pools(slices, "n1", {}, POOLS_ONLY) == []


def test_an_invalid_pool_aborts_the_attempt_at_1_34_and_fails_the_node_after() -> None:
    slices = [raw_slice("a", devices=[{"name": "g0"}]), raw_slice("b", devices=[{"name": "g0"}])]
    with pytest.raises(AllocatorError, match="pool n1 is invalid: duplicate device name g0") as e:
        Allocator(slices, CLASSES, set()).allocate("n1", {}, [claim(exactly())])
    assert not isinstance(e.value, NodeFailure)
    with pytest.raises(NodeFailure, match=INVALID_POOLS):
        Allocator(slices, CLASSES, set(), features=POOLS_ONLY).allocate("n1", {}, [claim(exactly())])


PER_DEVICE = [raw_slice("fabric", node="", pool="fabric", count=1, perDeviceNodeSelection=True, devices=[
    {"name": "link-n2", "nodeName": "n2"},
    {"name": "link-rack", "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r1"]}]}]}},
    {"name": "link-any", "allNodes": True}])]


def test_per_device_node_selection_and_the_allocations_node_selector() -> None:
    alloc = Allocator(PER_DEVICE, CLASSES, set(), features=F136)
    [n1] = alloc.allocate("n1", {"rack": "r1"}, [claim(exactly(count=2))]) or []
    assert [r.device for r in n1.results] == ["link-rack", "link-any"]
    assert n1.node_selector is not None and n1.node_selector.matches("x", {"rack": "r1"})
    [n2] = alloc.allocate("n2", {}, [claim(exactly(), name="d")]) or []
    assert [r.device for r in n2.results] == ["link-n2"]
    assert n2.node_selector is not None and n2.node_selector.matches("n2", {}) and \
        not n2.node_selector.matches("n1", {})
    [anywhere] = alloc.allocate("n3", {}, [claim(exactly(), name="d")]) or []
    assert [r.device for r in anywhere.results] == ["link-any"] and anywhere.node_selector is None
    # without the gate (1.34, 1.35) the slice is ignored
    assert Allocator(PER_DEVICE, CLASSES, set(), features=POOLS_ONLY).allocate("n3", {}, [claim(exactly())]) is None


def test_counter_slices_reach_every_node_in_1_36_only() -> None:
    broken = gpu_pool("n2", part("a", "1Gi", 1, counter_set="nope"))
    here = gpu_pool("n1")
    with pytest.raises(NodeFailure):  # n1 sees n2's pool through its counter slice
        Allocator(here + broken, CLASSES, {(GPU, "n1", "whole")}, features=F136).allocate("n1", {}, [claim(exactly())])
    assert Allocator(here + broken, CLASSES, {(GPU, "n1", "whole")}, features=F137).allocate(
        "n1", {}, [claim(exactly())]) is None


#: the allocators' consumable-capacity rules from 1.37
RULES_137 = {"all_requests_listed_by_capacity_alone": True, "negative_capacity_aborts": True,
             "shared_devices_count_as_in_use": True}


@pytest.mark.parametrize(("release", "gates", "want"), [
    ("1.34", "", FEATURES_OFF), ("1.35", "", POOLS_ONLY), ("1.35", "DRAPartitionableDevices=true", F135),
    ("1.36", "", dataclasses.replace(F136, consumable_capacity=True, distinct_per_request_name=True)),
    ("1.36", "DRAConsumableCapacity=false", dataclasses.replace(F136, distinct_per_request_name=True)),
    ("1.37", "", dataclasses.replace(F137, consumable_capacity=True, **RULES_137)),
    ("1.37", "DRAFractionalCapacityRange=true",
     dataclasses.replace(F137, consumable_capacity=True, fractional_capacity_range=True, **RULES_137)),
    ("1.37", "DRAConsumableCapacity=false", dataclasses.replace(F137, **RULES_137))])
def test_release_features(release: str, gates: str, want: DeviceFeatures) -> None:
    assert device_features(Release.of(release, gates)) == want


BAD = [
    ("counters and devices in one slice", dict(sharedCounters=counters(), devices=[{"name": "g"}]),
     "spec: Invalid value: only one of `sharedCounters` or `devices` is allowed"),
    ("a device's node selection without perDeviceNodeSelection", dict(devices=[{"name": "g", "allNodes": True}]),
     r"spec.devices\[0\]: Invalid value: nodeName, nodeSelector and allNodes of a device need"),
    ("a counter set without name", dict(sharedCounters=[{"counters": {}}]), r"spec.sharedCounters\[0\].name: Required"),
    ("a counter that is not a quantity", dict(sharedCounters=[{"name": "c", "counters": {"m": {"value": "x"}}}]),
     r"spec.sharedCounters\[0\].counters.m.value: expected a quantity"),
    ("compatibility groups (1.37 alpha, off)", dict(devices=[{"name": "g", "consumesCounters": [
        {"counterSet": "c", "counters": {}, "compatibilityGroups": ["a"]}]}]),
     r"spec.devices\[0\].consumesCounters\[0\].compatibilityGroups: kplan does not model"),
]


@pytest.mark.parametrize(("spec", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_slices_are_one_line_errors(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        raw_slice("s", **spec)
