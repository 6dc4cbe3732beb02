"""DynamicResources' node summaries against the exact allocator (plugins/dra/summary.py).

The summaries may only rule out a node where the allocator certainly finds nothing without an
error, and a remembered decision must be the one the allocator would make now. The property test
builds random inventories (node-local pools, pools shared by name between nodes, allNodes and
node-selector slices, incomplete pools, devices lacking an attribute a selector reads), random
claims (counts, selectors, admin access, firstAvailable, All, matchAttribute) and random devices
in use, changes the in-use set between rounds, and compares every node with a fresh allocator.
"""

from __future__ import annotations

import random
from dataclasses import replace as dataclass_replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kplan.cel  # noqa: F401  (celpy raises the recursion limit on import: not inside a hypothesis test)
from kplan.cluster.dra import DraState, InUseView
from kplan.cluster.node_table import NodeTable
from kplan.model.dra import (
    ALL,
    Allocation,
    ClaimSpec,
    Constraint,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceResult,
    ResourceClaim,
    ResourceSlice,
    SubRequest,
)
from kplan.model.selectors import IN, NodeSelector, NodeSelectorTerm, Requirement
from kplan.plugins.dra.structured import Allocator, AllocatorError, Inventory
from kplan.plugins.dra.summary import NO, SEARCH, YES, NodeSummaries
from tests.builders import make_node

GPU, NIC = "gpu.example.com", "nic.example.com"
CLASSES = {c.name: c for c in (DeviceClass("gpu", (f'device.driver == "{GPU}"',)),
                               DeviceClass("nic", (f'device.driver == "{NIC}"',)),
                               DeviceClass("any", ()))}
SELECTORS = ["", f'device.attributes["{GPU}"].model == "a"',
             f'device.attributes["{GPU}"].numa == 1',  # an error on a GPU without numa
             f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0',
             f'!has(device.attributes["{GPU}"].numa) || device.attributes["{GPU}"].numa == 0']


def _device(rng: random.Random, name: str) -> Device:
    attrs: dict[str, Any] = {"model": ("string", rng.choice("ab"))}
    if rng.random() < 0.9:
        attrs["numa"] = ("int", rng.randint(0, 1))
    return Device(name, attrs, {"memory": rng.choice(["24Gi", "80Gi"])})


def _slices(rng: random.Random, nodes: list[str]) -> list[ResourceSlice]:
    out = []
    for node in nodes:
        for k in range(rng.randint(0, 2)):
            driver = GPU if k == 0 or rng.random() < 0.5 else NIC
            # a pool name two nodes share makes the same device id visible on both
            pool = "dup" if rng.random() < 0.2 else f"{node}-{k}"
            count = 2 if rng.random() < 0.1 else 1
            devices = tuple(_device(rng, f"d{i}") for i in range(rng.randint(0, 4)))
            out.append(ResourceSlice(f"{node}-{k}", driver, pool, 1, count, node_name=node, devices=devices))
    if rng.random() < 0.2:
        out.append(ResourceSlice("everywhere", GPU, "shared", 1, 1, all_nodes=True,
                                 devices=tuple(_device(rng, f"s{i}") for i in range(rng.randint(1, 2)))))
    if rng.random() < 0.2:
        sel = NodeSelector((NodeSelectorTerm((Requirement("tier", IN, ("x",)),)),))
        out.append(ResourceSlice("tier-x", GPU, "tier-x", 1, 1, node_selector=sel,
                                 devices=tuple(_device(rng, f"t{i}") for i in range(rng.randint(1, 3)))))
    return out


def _sub(rng: random.Random, name: str) -> SubRequest:
    mode = ALL if rng.random() < 0.05 else "ExactCount"
    sels = tuple(rng.sample(SELECTORS[1:], rng.randint(0, 1)))
    return SubRequest(name, rng.choice(["gpu", "gpu", "nic", "any"]), sels, mode, rng.randint(1, 3),
                      rng.random() < 0.1)


def _claims(rng: random.Random) -> list[ResourceClaim]:
    claims = []
    for c in range(rng.randint(1, 2)):
        requests = []
        for r in range(rng.randint(1, 2)):
            if rng.random() < 0.2:
                requests.append(DeviceRequest(f"r{r}", first_available=(_sub(rng, "big"), _sub(rng, "small"))))
            else:
                requests.append(DeviceRequest(f"r{r}", exactly=_sub(rng, f"r{r}")))
        constraints = (Constraint((), f"{GPU}/numa"),) if rng.random() < 0.2 else ()
        claims.append(ResourceClaim("default", f"c{c}", f"uid-c{c}", ClaimSpec(tuple(requests), constraints)))
    return claims


def _set_in_use(dra: DraState, devices: list[tuple[str, str, str]], picked: set[int]) -> None:
    """Make exactly ``picked`` (indices into ``devices``) in use, through in-flight allocations."""
    for i, dev in enumerate(devices):
        uid = f"holder-{i}"
        if i in picked and uid not in dra.in_flight:
            result = DeviceResult("r", *dev)
            dra.set_in_flight(ResourceClaim("default", uid, uid, ClaimSpec(), Allocation((result,))))
        elif i not in picked:
            dra.pop_in_flight(uid)


def _exact(slices: list[ResourceSlice], in_use: set[tuple[str, str, str]], node: str, labels: Any,
           claims: list[ResourceClaim]) -> list[Allocation] | None | str:
    try:
        return Allocator(slices, CLASSES, in_use).allocate(node, labels, claims)
    except AllocatorError as e:
        return f"error: {e}"


@settings(max_examples=250, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
def test_summaries_agree_with_the_exact_allocator(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(rng.randint(2, 5))]
    table = NodeTable([make_node(n).labels(tier=rng.choice("xy")).build() for n in names])
    slices = sorted(_slices(rng, names), key=lambda s: s.name)
    devices = sorted({(s.driver, s.pool, d.name) for s in slices for d in s.devices})
    dra = DraState(CLASSES.values(), slices)
    summaries = NodeSummaries(Inventory(dra.slices, dra.classes), dra)
    summaries.node_ids(table)
    for _ in range(4):
        _set_in_use(dra, devices, {i for i in range(len(devices)) if rng.random() < 0.3})
        claims = _claims(rng)
        allocator = Allocator(dra.slices, dra.classes, InUseView(dra), summaries.inventory)
        spec_id = summaries.spec_id(claims)
        may_pass = summaries.may_pass(allocator, claims, spec_id)
        plan = summaries.plan(allocator, claims, spec_id)
        in_use = set(dra.in_use)
        want = [_exact(slices, in_use, n.name, n.labels, claims) for n in table.nodes]
        for k, node in enumerate(table.nodes):
            nid = summaries.ids[node.name]
            if may_pass is not None and not may_pass[nid]:
                assert want[k] is None, f"{node.name} ruled out, but the allocator says {want[k]}"
            if plan[nid] != SEARCH:
                assert (plan[nid] == YES) == (want[k] is not None), f"{node.name}: plan {plan[nid]}, {want[k]}"
        rows = np.array(rng.sample(range(len(names)), len(names)))
        errors = [want[r] for r in rows if isinstance(want[r], str)]
        if errors:
            with pytest.raises(AllocatorError) as e:
                summaries.allocate_rows(allocator, table, rows, claims, spec_id, plan)
            assert f"error: {e.value}" == errors[0]
            continue
        ok, found = summaries.allocate_rows(allocator, table, rows, claims, spec_id, plan)
        for k, row in enumerate(rows):
            name = table.names[row]
            assert bool(ok[k]) == (want[row] is not None), name
            if ok[k]:
                got = found.get(name) or summaries.decided(allocator, name, spec_id)
                assert got == want[row], name


def _gpu_slice(node: str, n: int) -> ResourceSlice:
    return ResourceSlice(f"{node}-gpu", GPU, node, 1, 1, node_name=node,
                         devices=tuple(Device(f"g{i}", {"model": ("string", "a")}, {}) for i in range(n)))


def _one_claim(count: int) -> list[ResourceClaim]:
    spec = ClaimSpec((DeviceRequest("gpu", exactly=SubRequest("gpu", "gpu", count=count)),))
    return [ResourceClaim("default", "c", "uid-c", spec)]


def _mask(summaries: NodeSummaries, allocator: Allocator, claims: list[ResourceClaim]) -> Any:
    return summaries.may_pass(allocator, claims, summaries.spec_id(claims))


def test_a_node_with_too_few_free_matching_devices_is_ruled_out_and_followed_as_devices_change() -> None:
    slices = [_gpu_slice("n1", 2), _gpu_slice("n2", 4)]
    table = NodeTable([make_node("n1").build(), make_node("n2").build()])
    dra = DraState(CLASSES.values(), slices)
    summaries = NodeSummaries(Inventory(dra.slices, dra.classes), dra)
    summaries.node_ids(table)
    allocator = Allocator(slices, CLASSES, InUseView(dra), summaries.inventory)
    assert _mask(summaries, allocator, _one_claim(3)).tolist() == [False, True]
    devices = [(GPU, "n2", "g0"), (GPU, "n2", "g1")]
    _set_in_use(dra, devices, {0, 1})
    assert _mask(summaries, allocator, _one_claim(3)).tolist() == [False, False]
    assert _mask(summaries, allocator, _one_claim(2)).tolist() == [True, True]
    _set_in_use(dra, devices, {1})
    assert _mask(summaries, allocator, _one_claim(3)).tolist() == [False, True]


def test_a_decision_is_reused_until_a_device_of_the_node_changes() -> None:
    slices = [_gpu_slice("n1", 2), _gpu_slice("n2", 2)]
    table = NodeTable([make_node("n1").build(), make_node("n2").build()])
    dra = DraState(CLASSES.values(), slices)
    summaries = NodeSummaries(Inventory(dra.slices, dra.classes), dra)
    summaries.node_ids(table)
    calls: list[str] = []

    class Counting(Allocator):
        def allocate(self, node_name: str, labels: Any, claims: Any) -> list[Allocation] | None:
            calls.append(node_name)
            return super().allocate(node_name, labels, claims)

    def run() -> list[bool]:
        allocator = Counting(slices, CLASSES, InUseView(dra), summaries.inventory)
        claims = _one_claim(1)
        sid = summaries.spec_id(claims)
        ok, _ = summaries.allocate_rows(allocator, table, np.arange(2), claims, sid,
                                        summaries.plan(allocator, claims, sid))
        return [bool(x) for x in ok]

    assert run() == [True, True] and calls == ["n1", "n2"]
    assert run() == [True, True] and calls == ["n1", "n2"]
    _set_in_use(dra, [(GPU, "n2", "g0"), (GPU, "n2", "g1")], {0})
    assert run() == [True, True] and calls == ["n1", "n2", "n2"]
    _set_in_use(dra, [(GPU, "n2", "g0"), (GPU, "n2", "g1")], {0, 1})
    # n2 has no free device left: ruled out by the summaries, no search
    assert run() == [True, False] and calls == ["n1", "n2", "n2"]


@pytest.mark.parametrize("shared", ["same pool name on two nodes", "allNodes"])
def test_a_device_two_nodes_see_is_freed_for_both(shared: str) -> None:
    if shared == "allNodes":
        slices = [ResourceSlice("all", GPU, "pool", 1, 1, all_nodes=True,
                                devices=(Device("g0", {"model": ("string", "a")}, {}),))]
    else:
        slices = [dataclass_replace(_gpu_slice(n, 1), name=f"{n}-gpu", pool="pool") for n in ("n1", "n2")]
    table = NodeTable([make_node("n1").build(), make_node("n2").build()])
    dra = DraState(CLASSES.values(), slices)
    summaries = NodeSummaries(Inventory(dra.slices, dra.classes), dra)
    summaries.node_ids(table)
    allocator = Allocator(slices, CLASSES, InUseView(dra), summaries.inventory)
    device = [(GPU, "pool", "g0")]
    _set_in_use(dra, device, {0})
    mask = _mask(summaries, allocator, _one_claim(1))
    assert mask is not None
    _set_in_use(dra, device, set())
    mask = _mask(summaries, allocator, _one_claim(1))
    assert mask is not None and mask.tolist() == [True, True]


def test_a_view_keeps_prefilters_devices_after_they_change() -> None:
    # PostFilter can deallocate a claim before preemption's dry run calls Filter again: the
    # cycle's allocator and plan must still see the devices in use as PreFilter saw them
    slices = [_gpu_slice("n1", 1), _gpu_slice("n2", 1)]
    table = NodeTable([make_node("n1").build(), make_node("n2").build()])
    dra = DraState(CLASSES.values(), slices)
    devices = [(GPU, "n1", "g0"), (GPU, "n2", "g0")]
    _set_in_use(dra, devices, {0})
    summaries = NodeSummaries(Inventory(dra.slices, dra.classes), dra)
    summaries.node_ids(table)
    view = InUseView(dra)
    allocator = Allocator(slices, CLASSES, view, summaries.inventory)
    claims = _one_claim(1)
    sid = summaries.spec_id(claims)
    plan = summaries.plan(allocator, claims, sid)
    _set_in_use(dra, devices, {1})
    assert not view.unchanged and set(view.devices()) == {devices[0]}
    ok, found = summaries.allocate_rows(allocator, table, np.arange(2), claims, sid, plan)
    assert ok.tolist() == [False, True] and set(found) <= {"n2"}
    # decided on a past state, so not kept for later pods: n1 is searched again, n2 ruled out
    fresh = Allocator(slices, CLASSES, InUseView(dra), summaries.inventory)
    plan = summaries.plan(fresh, claims, sid)
    assert plan.tolist() == [SEARCH, NO]
    assert summaries.allocate_rows(fresh, table, np.arange(2), claims, sid, plan)[0].tolist() == [True, False]
