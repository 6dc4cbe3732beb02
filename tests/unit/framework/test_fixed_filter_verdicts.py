"""The framework's cache of the leading fixed-input filters' verdicts (runtime._fixed_verdicts).

Replicas of one template share the verdicts of NodeUnschedulable, NodeName, TaintToleration and
NodeAffinity, which read only a node's fixed attributes. The cache must never change an
outcome: every pod, asked about any rows, any number of times, on the table or on a fork, gets
what a framework without the cache gives.
"""

from __future__ import annotations

import numpy as np
import pytest

from kplan.framework.cycle_state import CycleState
from kplan.framework.runtime import Framework
from kplan.model.objects import Pod
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import SchedulerHandle
from tests.builders import expr, make_node, make_pod, make_snapshot, term

NODES = [
    make_node("a1").alloc(cpu="4", memory="8Gi", pods=10).zone("z1").labels(disk="ssd"),
    make_node("a2").alloc(cpu="4", memory="8Gi", pods=10).zone("z1").taint("dedicated", "db"),
    make_node("a3").alloc(cpu="1", memory="1Gi", pods=10).zone("z1").unschedulable(),
    make_node("b1").alloc(cpu="4", memory="8Gi", pods=10).zone("z2").labels(disk="hdd"),
    make_node("b2").alloc(cpu="2", memory="2Gi", pods=1).zone("z2").taint("spot", effect="PreferNoSchedule"),
    make_node("b3").alloc(cpu="4", memory="8Gi", pods=10).zone("z2").taint("dedicated", "db").labels(disk="ssd"),
    make_node("c1").alloc(cpu="4", memory="8Gi", pods=10).zone("z3").taint("gpu", effect="NoExecute"),
    make_node("c2").alloc(cpu="8", memory="16Gi", pods=10).zone("z3"),
]

PODS = {
    "plain": make_pod("plain").req(cpu="500m"),
    "too big": make_pod("big").req(cpu="6"),
    "selector": make_pod("sel").req(cpu="100m").node_selector(disk="ssd"),
    "tolerates db": make_pod("db").toleration("dedicated", "db", "NoSchedule", operator="Equal"),
    "tolerates all": make_pod("any").toleration(operator="Exists"),
    "required zone": make_pod("zonal").required(term(expr("topology.kubernetes.io/zone", "In", "z2", "z3"))),
    "node name": make_pod("pinned").node_name("b1"),
    "matches nothing": make_pod("none").node_selector(disk="nvme"),
}


def framework(snapshot: object, cached: bool) -> Framework:
    setup = SchedulerSetup.of()
    registry, config = setup.registry, setup.config
    handle = SchedulerHandle(snapshot, config, 0, True, {})  # type: ignore[arg-type]
    fw = Framework(config.profiles[0], registry, handle)
    handle.frameworks[fw.profile_name] = fw
    if not cached:
        fw._fixed_count = 0
    return fw


def outcome(fw: Framework, pod: Pod, table: object, rows: np.ndarray) -> tuple[list[int], list[int], list[str]]:
    state = CycleState()
    fw.run_pre_filter(state, pod)
    out = fw.run_filters(state, pod, table, rows)  # type: ignore[arg-type]
    names = [fw.filter_names[p] if p >= 0 else "" for p in out.plugins.tolist()]
    return out.codes.tolist(), out.reasons.tolist(), names


ROW_SETS = {
    "all": np.arange(len(NODES)),
    "rotated": np.array([5, 6, 7, 0, 1, 2]),
    "one": np.array([2]),
    "none": np.array([], dtype=np.int64),
}


@pytest.mark.parametrize("order", [list(PODS), list(reversed(PODS))], ids=["forward", "reversed"])
def test_cached_verdicts_equal_uncached_ones(order: list[str]) -> None:
    snap = make_snapshot(NODES)
    cached, plain = framework(snap, True), framework(snap, False)
    # three rounds of every pod, interleaved: first sighting, the round that fills the cache,
    # then reads from it
    for _ in range(3):
        for pod_name in order:
            for rows in ROW_SETS.values():
                pod = PODS[pod_name].build()   # a new object each time: replicas of one template
                assert outcome(cached, pod, snap.table, rows) == outcome(plain, pod, snap.table, rows), pod_name


def test_the_cache_sees_resources_change() -> None:
    # NodeResourcesFit is not cached: a node that fills up rejects the next replica
    snap = make_snapshot(NODES)
    fw = framework(snap, True)
    rows = np.array([snap.row_of("b2")])
    for _ in range(2):
        assert outcome(fw, PODS["plain"].build(), snap.table, rows)[0] == [0]
    snap.add_pod(make_pod("filler").node_name("b2").build(), int(rows[0]))
    codes, _, plugins = outcome(fw, PODS["plain"].build(), snap.table, rows)
    assert codes != [0] and plugins == ["NodeResourcesFit"]


def test_a_fork_gets_its_own_verdicts() -> None:
    snap = make_snapshot(NODES)
    cached, plain = framework(snap, True), framework(snap, False)
    fork = snap.table.take([6, 7, 3])
    for _ in range(3):
        for name in ("tolerates all", "selector", "required zone"):
            pod = PODS[name].build()
            assert outcome(cached, pod, fork, np.arange(3)) == outcome(plain, pod, fork, np.arange(3))
            assert outcome(cached, pod, snap.table, ROW_SETS["all"]) == outcome(plain, pod, snap.table,
                                                                               ROW_SETS["all"])


def test_replicas_share_one_entry_and_different_pods_do_not() -> None:
    snap = make_snapshot(NODES)
    fw = framework(snap, True)
    for _ in range(3):
        for name in ("plain", "too big", "selector"):
            outcome(fw, PODS[name].build(), snap.table, ROW_SETS["all"])
    # "plain" and "too big" differ only in requests, which no cached plugin reads
    assert len(fw._fixed[snap.table]) == 2
