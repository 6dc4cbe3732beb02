"""The exact fast paths of the resource plugins (issue 36, item 4) against their plain computation.

* NodeResourcesFit's Filter tells up to three checked resources by flag patterns
  (``FlagPatterns``): the same codes and the same reason ids, interned in the same order, as the
  general path, with and without a load of pods added or removed (preemption's forks);
* BalancedAllocation from 1.36 reads the balance without the pod from a per-row column kept as
  pods are bound and removed (``BalanceWithoutPod``): the same scores as computing it afresh.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kplan.plugins.noderesources.fit as fit
from kplan.framework.cycle_state import CycleState
from kplan.framework.status import REASONS
from kplan.plugins.noderesources.balanced_allocation import (
    BalanceWithoutPod,
    NodeResourcesBalancedAllocation,
    balance_score,
)
from tests.builders import make_node, make_plugin, make_pod, make_snapshot

GPU = "example.com/gpu"
#: requests a pod may make, some beyond every node's allocatable (unresolvable)
CPU = ["0", "100m", "1", "3", "9"]
MEMORY = ["0", "100Mi", "1Gi", "6Gi", "40Gi"]


def _cluster(draw: Any) -> Any:
    nodes = []
    for i in range(draw(st.integers(1, 7))):
        extra = {GPU: draw(st.integers(0, 2))} if draw(st.booleans()) else {}
        nodes.append(make_node(f"n{i}").alloc(cpu=draw(st.sampled_from(["1", "2", "4", "8"])),
                                              memory=draw(st.sampled_from(["1Gi", "4Gi", "16Gi"])),
                                              ephemeral_storage="10Gi", pods=draw(st.integers(1, 4)), **extra))
    running = []
    for j in range(draw(st.integers(0, 10))):
        node = f"n{draw(st.integers(0, len(nodes) - 1))}"
        running.append(make_pod(f"r{j}").node_name(node).req(cpu=draw(st.sampled_from(CPU[:4])),
                                                             memory=draw(st.sampled_from(MEMORY[:4]))))
    return make_snapshot(nodes, running)


@st.composite
def clusters_and_pods(draw: Any) -> tuple[Any, list[Any]]:
    snap = _cluster(draw)
    pods = []
    for k in range(draw(st.integers(1, 4))):
        req: dict[str, Any] = {"cpu": draw(st.sampled_from(CPU)), "memory": draw(st.sampled_from(MEMORY))}
        if draw(st.booleans()):
            req["ephemeral_storage"] = draw(st.sampled_from(["0", "1Gi", "20Gi"]))
        if draw(st.booleans()):
            req[GPU] = draw(st.integers(0, 3))   # with ephemeral storage: four checked resources, the general path
        pods.append(make_pod(f"p{k}").req(**req).build())
    return snap, pods


def _verdicts(plugin: Any, snap: Any, pod: Any, rows: np.ndarray, load: tuple[Any, Any] | None
              ) -> tuple[list[int], list[int], list[tuple[str, ...]]]:
    state = CycleState()
    plugin.pre_filter(state, pod)
    pods, requests = load if load is not None else (None, None)
    v = plugin.filter_with_load(state, pod, snap.table, rows, pods, requests)
    assert v.codes.dtype == np.int8 and v.reasons.dtype == np.int32
    return v.codes.tolist(), v.reasons.tolist(), [REASONS[int(r)] for r in v.reasons]


@settings(max_examples=150, deadline=None)
@given(clusters_and_pods(), st.booleans(), st.randoms(use_true_random=False))
def test_fit_filter_by_flag_patterns_is_the_general_path(case: tuple[Any, list[Any]], with_load: bool,
                                                         rnd: Any) -> None:
    snap, pods = case
    n = len(snap.table)
    fast, general = make_plugin("NodeResourcesFit", snap), make_plugin("NodeResourcesFit", snap)
    for pod in pods:
        rows = np.array(rnd.sample(range(n), rnd.randint(1, n)), dtype=np.int64)
        load = None
        if with_load:
            # preemption's question: as if some pods were gone from (negative) or added to each node
            k = len(rows)
            load = (np.array([rnd.randint(-2, 1) for _ in range(k)], dtype=np.int64),
                    {"cpu": np.array([rnd.choice([-2000, -500, 0, 300]) for _ in range(k)], dtype=np.int64),
                     "memory": np.array([rnd.choice([-2**30, 0, 2**28]) for _ in range(k)], dtype=np.int64)})
        got = _verdicts(fast, snap, pod, rows, load)
        previous = fit._FLAGGED_RESOURCES
        fit._FLAGGED_RESOURCES = 0   # the general path for every pod
        try:
            want = _verdicts(general, snap, pod, rows, load)
        finally:
            fit._FLAGGED_RESOURCES = previous
        assert got == want


def test_flag_patterns_tell_each_rule() -> None:
    nodes = [make_node(name).alloc(cpu="2", memory="4Gi", pods=2)
             for name in ("fits", "cpu-used", "full", "tiny", "all")]
    running = [make_pod("c").node_name("cpu-used").req(cpu="1500m"),
               make_pod("f1").node_name("full"), make_pod("f2").node_name("full"),
               make_pod("a1").node_name("all").req(cpu="2"), make_pod("a2").node_name("all")]
    snap = make_snapshot(nodes, running)
    plugin = make_plugin("NodeResourcesFit", snap)
    row = snap.table.row_of
    for pod, expect in [
        (make_pod().req(cpu="1", memory="1Gi").build(),
         {"fits": (0, ()), "cpu-used": (1, ("Insufficient cpu",)), "full": (1, ("Too many pods",)),
          "tiny": (0, ()), "all": (1, ("Too many pods", "Insufficient cpu"))}),
        # more memory than any node has: unresolvable everywhere, with the other reasons before it
        (make_pod().req(cpu="1", memory="5Gi").build(),
         {"fits": (2, ("Insufficient memory",)), "cpu-used": (2, ("Insufficient cpu", "Insufficient memory")),
          "full": (2, ("Too many pods", "Insufficient memory")), "tiny": (2, ("Insufficient memory",)),
          "all": (2, ("Too many pods", "Insufficient cpu", "Insufficient memory"))}),
    ]:
        rows = np.array([row[name] for name in expect], dtype=np.int64)
        codes, _, reasons = _verdicts(plugin, snap, pod, rows, None)
        assert dict(zip(expect, zip(codes, reasons, strict=True), strict=True)) == expect


# ------------------------------------------------------------------------------ BalancedAllocation 1.36+

def _balance_change(snap: Any) -> NodeResourcesBalancedAllocation:
    plugin = make_plugin("NodeResourcesBalancedAllocation", snap, release="1.37")
    assert plugin.rules.scores_balance_change
    return plugin


def _scores(plugin: NodeResourcesBalancedAllocation, snap: Any, pod: Any, fast: bool) -> list[int]:
    plugin._cpu_memory = fast   # False: the general path, both balances computed afresh
    return np.asarray(plugin.score(CycleState(), pod, snap.table, np.arange(len(snap.table)))).tolist()


@settings(max_examples=60, deadline=None)
@given(clusters_and_pods(), st.randoms(use_true_random=False))
def test_balance_without_the_pod_kept_per_row_scores_as_computed_afresh(case: tuple[Any, list[Any]],
                                                                        rnd: Any) -> None:
    snap, pods = case
    plugin = _balance_change(snap)
    table = snap.table
    placed: list[tuple[Any, int]] = []
    for k in range(12):
        pod = pods[k % len(pods)]
        assert _scores(plugin, snap, pod, True) == _scores(plugin, snap, pod, False)
        # bind or remove a pod: the kept column follows the row it touches
        if placed and rnd.random() < 0.4:
            gone, at = placed.pop(rnd.randrange(len(placed)))
            table.remove_pod(gone, at)
        else:
            at = rnd.randrange(len(table))
            bound = make_pod(f"b{k}").node_name(table.names[at]).req(
                cpu=rnd.choice(CPU[:4]), memory=rnd.choice(MEMORY[:4])).build()
            table.add_pod(bound, at)
            placed.append((bound, at))
    kept = BalanceWithoutPod.of(table).per_row
    afresh = balance_score(table.requested_t[:2], table.alloc_t[:2], None)
    assert kept.tolist() == afresh.tolist()


def test_balance_without_the_pod_on_a_node_without_memory_is_left_to_the_general_path() -> None:
    snap = make_snapshot([make_node("a").alloc(cpu="4", memory="8Gi", pods=10),
                          make_node("no-memory").alloc(cpu="4", pods=10)],
                         [make_pod("r").node_name("a").req(cpu="1", memory="1Gi")])
    plugin = _balance_change(snap)
    pod = make_pod().req(cpu="500m", memory="1Gi").build()
    assert _scores(plugin, snap, pod, True) == _scores(plugin, snap, pod, False)
    assert BalanceWithoutPod.of(snap.table).per_row[snap.table.row_of["no-memory"]] == 0


@pytest.mark.parametrize("cpu, memory", [(0, 0), (1, 3), (2**40 + 1, 3 * 2**50 + 7), (10**6, 10**6 + 1)])
def test_one_rows_balance_in_python_floats_is_numpys(cpu: int, memory: int) -> None:
    from kplan.plugins.noderesources.balanced_allocation import balance_of_row
    snap = make_snapshot([make_node("n").alloc(cpu="3", memory="7Gi", pods=10)])
    table = snap.table
    table.requested_t[0, 0], table.requested_t[1, 0] = cpu, memory
    assert balance_of_row(table, 0) == int(balance_score(table.requested_t[:2, :1], table.alloc_t[:2, :1], None)[0])
