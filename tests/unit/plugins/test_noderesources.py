"""NodeResourcesFit (filter 3.3, scoring strategies 4.1) and NodeResourcesBalancedAllocation (4.2)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.framework.cycle_state import CycleState
from kplan.framework.status import Code
from kplan.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
    _std_of_live,
    decode_args,
)
from tests.builders import (
    PodBuilder,
    Verdict,
    make_node,
    make_plugin,
    make_pod,
    make_snapshot,
    run_filter,
    run_score,
)

OK = Verdict(Code.SUCCESS, ())
GPU = "example.com/gpu"
FPGA = "example.com/fpga"


def short(*reasons: str) -> Verdict:
    return Verdict(Code.UNSCHEDULABLE, reasons)


def never(*reasons: str) -> Verdict:
    return Verdict(Code.UNRESOLVABLE, reasons)


def on_n(pod: PodBuilder) -> PodBuilder:
    return pod.node_name("n")


FILTER_NODE = make_node("n").alloc(cpu="2", memory="4Gi", ephemeral_storage="10Gi", pods=3, **{GPU: 1})


@pytest.mark.parametrize("running, args, pod, verdict", [
    pytest.param([], None, make_pod().req(cpu="1", memory="1Gi"), OK, id="a pod that fits passes"),
    pytest.param([on_n(make_pod("r").req(cpu="1500m"))], None, make_pod().req(cpu="1"), short("Insufficient cpu"),
                 id="a request above the free cpu but within allocatable is Unschedulable"),
    pytest.param([], None, make_pod().req(cpu="3"), never("Insufficient cpu"),
                 id="a request above the node's whole allocatable is unresolvable"),
    pytest.param([on_n(make_pod("r").req(cpu="2", memory="4Gi"))], None, make_pod().req(cpu="1", memory="1Gi"),
                 short("Insufficient cpu", "Insufficient memory"), id="every short resource is reported, cpu first"),
    pytest.param([on_n(make_pod("r").req(memory="4Gi"))], None, make_pod().req(cpu="3", memory="1Gi"),
                 never("Insufficient cpu", "Insufficient memory"),
                 id="one resource beyond allocatable makes the whole verdict unresolvable"),
    pytest.param([], None, make_pod().req(ephemeral_storage="11Gi"), never("Insufficient ephemeral-storage"),
                 id="ephemeral-storage is checked"),
    pytest.param([on_n(make_pod(f"r{i}")) for i in range(3)], None, make_pod(), short("Too many pods"),
                 id="a full pod count rejects even a pod without requests"),
    pytest.param([on_n(make_pod(f"r{i}").req(cpu="500m")) for i in range(3)], None, make_pod().req(cpu="1"),
                 short("Too many pods", "Insufficient cpu"), id="too many pods comes before the resources"),
    pytest.param([on_n(make_pod(f"r{i}")) for i in range(3)], None, make_pod().req(cpu="3"),
                 never("Too many pods", "Insufficient cpu"),
                 id="too many pods never makes the verdict resolvable again"),
    pytest.param([on_n(make_pod("r").req(cpu="2", memory="4Gi"))], None, make_pod().container(), OK,
                 id="a pod without requests fits a full node with a free pod slot"),
    pytest.param([on_n(make_pod("r").req(**{GPU: 1}))], None, make_pod().req(**{GPU: 1}), short(f"Insufficient {GPU}"),
                 id="a used extended resource is short"),
    pytest.param([], None, make_pod().req(**{GPU: 2}), never(f"Insufficient {GPU}"),
                 id="more extended resource than the node has is unresolvable"),
    pytest.param([], None, make_pod().req(**{FPGA: 1}), never(f"Insufficient {FPGA}"),
                 id="an extended resource the node does not advertise is unresolvable"),
    pytest.param([], None, make_pod().req(**{FPGA: 0}), OK, id="a zero extended request is not checked"),
    pytest.param([], {"ignoredResources": [FPGA]}, make_pod().req(**{FPGA: 1}), OK,
                 id="ignoredResources skips that extended resource"),
    pytest.param([], {"ignoredResourceGroups": ["example.com"]}, make_pod().req(**{FPGA: 1, GPU: 1}), OK,
                 id="ignoredResourceGroups skips every extended resource of the group"),
    pytest.param([], {"ignoredResources": ["hugepages-2Mi"]}, make_pod().req(hugepages_2Mi="2Mi"),
                 never("Insufficient hugepages-2Mi"), id="ignoredResources does not apply to hugepages"),
    pytest.param([], {"ignoredResourceGroups": ["example.com"]}, make_pod().req(cpu="3", **{FPGA: 1}),
                 never("Insufficient cpu"), id="ignored resources do not hide the others"),
    pytest.param([on_n(make_pod("r").req(cpu="100m").pod_requests(cpu="2"))], None, make_pod().req(cpu="100m"),
                 short("Insufficient cpu"), id="running pods count with their pod-level requests"),
    pytest.param([on_n(make_pod("r").req(cpu="1").overhead(cpu="600m"))], None, make_pod().req(cpu="500m"),
                 short("Insufficient cpu"), id="running pods count with their overhead"),
    pytest.param([], None, make_pod().req(cpu="1").pod_requests(cpu="3"), never("Insufficient cpu"),
                 id="the incoming pod is filtered with its pod-level requests"),
])
def test_fit_filter(running: list[PodBuilder], args: dict[str, Any] | None, pod: PodBuilder,
                    verdict: Verdict) -> None:
    snap = make_snapshot([FILTER_NODE], running)
    assert run_filter(make_plugin("NodeResourcesFit", snap, args), pod.build(), snap) == {"n": verdict}


def test_fit_filter_gives_each_node_its_own_reasons_in_one_call() -> None:
    # one call over many nodes with different shortages: the per-pattern reasons must land on
    # the right nodes, and a resource column far from cpu (the GPU) must be read for each node
    nodes = [make_node(name).alloc(cpu="2", memory="4Gi", pods=2, **{GPU: g})
             for name, g in (("fits", 1), ("cpu-used", 1), ("full", 1), ("no-gpu", 0), ("all", 1), ("fits-2", 2))]
    running = [make_pod("c").node_name("cpu-used").req(cpu="1500m"),
               make_pod("f1").node_name("full"), make_pod("f2").node_name("full"),
               make_pod("a1").node_name("all").req(cpu="2", **{GPU: 1}), make_pod("a2").node_name("all")]
    snap = make_snapshot(nodes, running)
    verdicts = run_filter(make_plugin("NodeResourcesFit", snap), make_pod().req(cpu="1", **{GPU: 1}).build(), snap)
    assert verdicts == {
        "fits": OK, "fits-2": OK,
        "cpu-used": short("Insufficient cpu"),
        "full": short("Too many pods"),
        "no-gpu": never(f"Insufficient {GPU}"),
        "all": short("Too many pods", "Insufficient cpu", f"Insufficient {GPU}"),
    }



def test_fit_filter_reasons_are_the_same_whatever_calls_met_their_patterns_first() -> None:
    # the plugin keeps each pattern's reasons once met: one plugin asked node by node, in two
    # orders, and then for all nodes at once, must answer as a fresh plugin asked once
    nodes = [make_node(name).alloc(cpu="2", memory="4Gi", pods=2, **{GPU: 1})
             for name in ("fits", "cpu-used", "full", "all")]
    running = [make_pod("c").node_name("cpu-used").req(cpu="1500m"),
               make_pod("f1").node_name("full"), make_pod("f2").node_name("full"),
               make_pod("a1").node_name("all").req(cpu="2", **{GPU: 1}), make_pod("a2").node_name("all")]
    snap = make_snapshot(nodes, running)
    pod = make_pod().req(cpu="1", **{GPU: 1}).build()
    expected = run_filter(make_plugin("NodeResourcesFit", snap), pod, snap)
    for order in (["all", "full", "cpu-used", "fits"], ["cpu-used", "fits", "full", "all"]):
        plugin = make_plugin("NodeResourcesFit", snap)
        for name in order:
            assert run_filter(plugin, pod, snap, [name]) == {name: expected[name]}
        assert run_filter(plugin, pod, snap) == expected
    assert expected["all"] == short("Too many pods", "Insufficient cpu", f"Insufficient {GPU}")


# ------------------------------------------------------------------------------ scoring

SCORE_NODES = [
    make_node("a").alloc(cpu="1", memory="1000Mi", ephemeral_storage="100Gi", pods=110, **{GPU: 4}),
    make_node("b").alloc(cpu="1", memory="1000Mi", pods=110),
]
BEST_EFFORT_ON_A = make_pod("r").node_name("a")


def strategy(kind: str, resources: list[tuple[str, int]] | None = None,
             shape: list[tuple[int, int]] | None = None) -> dict[str, Any]:
    ss: dict[str, Any] = {"type": kind}
    if resources is not None:
        ss["resources"] = [{"name": n, "weight": w} for n, w in resources]
    if shape is not None:
        ss["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    return {"scoringStrategy": ss}


@pytest.mark.parametrize("args, running, pod, scores", [
    pytest.param(None, [], make_pod().req(cpu="200m", memory="100Mi"), {"a": 85, "b": 85},
                 id="least allocated averages the free share of cpu and memory"),
    pytest.param(None, [BEST_EFFORT_ON_A], make_pod().req(cpu="200m", memory="100Mi"), {"a": 70, "b": 85},
                 id="a running pod without requests counts as 100m and 200Mi"),
    pytest.param(None, [], make_pod().container(), {"a": 85, "b": 85},
                 id="the incoming pod without requests is scored as 100m and 200Mi"),
    pytest.param(None, [], make_pod().req(cpu="2", memory="100Mi"), {"a": 45, "b": 45},
                 id="a resource requested beyond allocatable scores 0"),
    pytest.param(None, [], make_pod().req(cpu="200m", memory="100Mi").pod_requests(cpu="900m"), {"a": 85, "b": 85},
                 id="pod-level requests of the incoming pod are ignored when scoring"),
    pytest.param(None, [], make_pod().req(cpu="250m", memory="300Mi"), {"a": 72, "b": 72},
                 id="each share and the average are truncated"),
    pytest.param(strategy("LeastAllocated", [("cpu", 3), ("memory", 1)]), [],
                 make_pod().req(cpu="200m", memory="100Mi"), {"a": 82, "b": 82}, id="resource weights are applied"),
    pytest.param(strategy("LeastAllocated", [("cpu", 1), (GPU, 1)]), [], make_pod().req(cpu="200m"),
                 {"a": 80, "b": 80}, id="an extended resource the pod does not request is skipped"),
    pytest.param(strategy("LeastAllocated", [("cpu", 1), (GPU, 1)]), [], make_pod().req(cpu="200m", **{GPU: 1}),
                 {"a": 77, "b": 80}, id="an extended resource counts only on nodes that have it"),
    pytest.param(strategy("LeastAllocated", [("ephemeral-storage", 1)]), [],
                 make_pod().req(ephemeral_storage="25Gi"), {"a": 75, "b": 0},
                 id="ephemeral-storage uses real requests and a node without it scores 0"),
    pytest.param(strategy("MostAllocated"), [], make_pod().req(cpu="200m", memory="100Mi"), {"a": 15, "b": 15},
                 id="most allocated averages the used share"),
    pytest.param(strategy("MostAllocated"), [BEST_EFFORT_ON_A], make_pod().req(cpu="200m", memory="100Mi"),
                 {"a": 30, "b": 15}, id="most allocated prefers the fuller node"),
    pytest.param(strategy("MostAllocated"), [], make_pod().req(cpu="2", memory="100Mi"), {"a": 55, "b": 55},
                 id="most allocated caps a resource at its allocatable"),
    pytest.param(strategy("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]), [],
                 make_pod().req(cpu="200m", memory="100Mi"), {"a": 15, "b": 15},
                 id="a rising shape behaves like most allocated"),
    pytest.param(strategy("RequestedToCapacityRatio", shape=[(0, 10), (100, 0)]), [],
                 make_pod().req(cpu="200m", memory="100Mi"), {"a": 85, "b": 85},
                 id="a falling shape behaves like least allocated"),
    pytest.param(strategy("RequestedToCapacityRatio", shape=[(50, 10)]), [],
                 make_pod().req(cpu="200m", memory="700Mi"), {"a": 100, "b": 100},
                 id="a one-point shape is flat on both sides"),
    pytest.param(strategy("RequestedToCapacityRatio", [("cpu", 1), ("memory", 2)], [(0, 0), (100, 10)]), [],
                 make_pod().req(cpu="200m", memory="100Mi"), {"a": 13, "b": 13},
                 id="the weighted average is rounded down below one half"),
    pytest.param(strategy("RequestedToCapacityRatio", [("cpu", 2), ("memory", 1)], [(0, 0), (100, 10)]), [],
                 make_pod().req(cpu="200m", memory="100Mi"), {"a": 17, "b": 17},
                 id="the weighted average is rounded up from one half"),
    pytest.param(strategy("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]), [],
                 make_pod().req(cpu="0", memory="100Mi"), {"a": 10, "b": 10},
                 id="a resource scoring 0 leaves the weighted average"),
    pytest.param(strategy("RequestedToCapacityRatio", shape=[(0, 0), (30, 3), (100, 10)]), [],
                 make_pod().req(cpu="500m", memory="150Mi"), {"a": 33, "b": 33},
                 id="the shape is interpolated between its points and 32.5 rounds up"),
])
def test_fit_score(args: dict[str, Any] | None, running: list[PodBuilder], pod: PodBuilder,
                   scores: dict[str, int]) -> None:
    snap = make_snapshot(SCORE_NODES, running)
    assert run_score(make_plugin("NodeResourcesFit", snap, args), pod.build(), snap) == scores


@pytest.mark.parametrize("kind, expected", [
    pytest.param("LeastAllocated", 87, id="least allocated scores the worked example 87"),
    pytest.param("MostAllocated", 12, id="most allocated scores the worked example 12"),
])
def test_fit_score_worked_example(kind: str, expected: int) -> None:
    snap = make_snapshot([make_node("n").alloc(cpu="4", memory="8Gi", pods=110)])
    pod = make_pod().req(cpu="500m", memory="1Gi").build()
    assert run_score(make_plugin("NodeResourcesFit", snap, strategy(kind)), pod, snap) == {"n": expected}


# ------------------------------------------------------------------------------ BalancedAllocation

BAL_NODES = [
    make_node("a").alloc(cpu="1", memory="1000Mi", pods=110, **{GPU: 4}),
    make_node("b").alloc(cpu="1", memory="1000Mi", pods=110),
]
RES3 = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 1}]}


@pytest.mark.parametrize("args, running, pod, scores", [
    pytest.param(None, [], make_pod().req(cpu="200m", memory="100Mi"), {"a": 95, "b": 95},
                 id="two resources score one minus half their difference"),
    pytest.param(None, [], make_pod().req(cpu="500m", memory="500Mi"), {"a": 100, "b": 100},
                 id="equal shares score 100"),
    pytest.param(None, [make_pod("r").node_name("a").req(cpu="300m")], make_pod().req(cpu="200m", memory="100Mi"),
                 {"a": 80, "b": 95}, id="running pods' real requests count"),
    pytest.param(None, [BEST_EFFORT_ON_A], make_pod().req(cpu="200m", memory="100Mi"), {"a": 95, "b": 95},
                 id="running pods without requests do not count"),
    pytest.param(None, [], make_pod().req(cpu="2", memory="100Mi"), {"a": 55, "b": 55},
                 id="a share above one is capped at one"),
    pytest.param(None, [], make_pod().req(cpu="100m").pod_requests(cpu="500m", memory="500Mi"), {"a": 100, "b": 100},
                 id="pod-level requests of the incoming pod are honoured"),
    pytest.param(None, [], make_pod().req(cpu="70m", memory="910Mi"), {"a": 57, "b": 57},
                 id="the float64 result is truncated as Go does"),
    pytest.param(RES3, [], make_pod().req(cpu="200m", memory="100Mi", **{GPU: 1}), {"a": 93, "b": 95},
                 id="three resources use the population standard deviation"),
    pytest.param(RES3, [], make_pod().req(cpu="200m", memory="100Mi"), {"a": 95, "b": 95},
                 id="an extended resource the pod does not request is skipped"),
])
def test_balanced_allocation(args: dict[str, Any] | None, running: list[PodBuilder], pod: PodBuilder,
                             scores: dict[str, int]) -> None:
    # the balance with the pod, as 1.34 and 1.35 score it (1.36's change of balance: below)
    snap = make_snapshot(BAL_NODES, running)
    plugin = make_plugin("NodeResourcesBalancedAllocation", snap, args, release="1.34")
    assert run_score(plugin, pod.build(), snap) == scores


def test_balanced_allocation_skips_best_effort_pods() -> None:
    snap = make_snapshot(BAL_NODES)
    plugin = make_plugin("NodeResourcesBalancedAllocation", snap)
    assert run_score(plugin, make_pod().container().build(), snap) is None


# balanced_allocation_test.go at v1.36.3 (#135573): its cases and hand-computed scores, nodes of
# (milli-cpu, memory bytes), the pod of two containers; "(with → without)" are the two balances
def _cm(cpu: str, memory: str, **more: Any) -> dict[str, Any]:
    return {"cpu": cpu, "memory": memory, **more}


TWO_CONTAINERS = make_pod().container(_cm("1000m", "2000")).container(_cm("2000m", "3000"))
CPU_ONLY_ON = make_pod("cpu-only").container({"cpu": "1000m"}).container({"cpu": "2000m"})
BOTH_ON = make_pod("both").container(_cm("1000m", "2000")).container(_cm("2000m", "3000"))
RES3_NVIDIA = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                             {"name": "nvidia.com/gpu", "weight": 1}]}


def _n(name: str, mcpu: int, mem: int, gpus: int = 0) -> Any:
    extra = {"nvidia.com/gpu": gpus} if gpus else {}
    return make_node(name).alloc(cpu=f"{mcpu}m", memory=mem, pods=110, **extra)


@pytest.mark.parametrize("args, nodes, running, pod, scores", [
    pytest.param(None, [_n("node1", 4000, 10000), _n("node2", 6000, 10000)], [], TWO_CONTAINERS,
                 {"node1": 68, "node2": 75}, id="an empty node the pod unbalances scores below 75, one it keeps "
                 "balanced scores 75 (100 → 87, 100 → 100)"),
    pytest.param(None, [_n("node1", 10000, 20000), _n("node2", 10000, 20000)],
                 [CPU_ONLY_ON.node_name("node1"), BOTH_ON.node_name("node2")], TWO_CONTAINERS,
                 {"node1": 73, "node2": 74}, id="running pods count in both balances (85 → 82, 97 → 95)"),
    pytest.param(None, [_n("node1", 10000, 20000), _n("node2", 10000, 50000)],
                 [CPU_ONLY_ON.node_name("node1"), BOTH_ON.node_name("node2")], TWO_CONTAINERS,
                 {"node1": 73, "node2": 70}, id="differently sized nodes (85 → 82, 90 → 80)"),
    pytest.param(None, [_n("node1", 3000, 5000), _n("node2", 3000, 5000)], [CPU_ONLY_ON.node_name("node1")],
                 make_pod().container({"memory": "2000"}).container({"memory": "3000"}),
                 {"node1": 100, "node2": 50}, id="a pod that balances a node scores 100, one that unbalances "
                 "an empty node 50 (50 → 100, 100 → 50)"),
    pytest.param(None, [_n("node1", 6000, 10000), _n("node2", 6000, 10000)],
                 [CPU_ONLY_ON.node_name("node1"), BOTH_ON.node_name("node2")], CPU_ONLY_ON,
                 {"node1": 62, "node2": 62}, id="the shares are capped at one (75 → 50, 100 → 75)"),
    pytest.param(RES3_NVIDIA, [_n("node1", 3500, 40000, 8), _n("node2", 3500, 40000, 8)],
                 [make_pod("a").container(_cm("1000m", "2000")).container(_cm("2000m", "3000", **{"nvidia.com/gpu": 3}))
                  .node_name("node1"), BOTH_ON.node_name("node2")],
                 make_pod().container(_cm("0", "0", **{"nvidia.com/gpu": 1})),
                 {"node1": 75, "node2": 76}, id="a requested scalar resource counts in both balances (69 → 70, 62 → 65)"),
    pytest.param(RES3_NVIDIA, [_n("node1", 3500, 40000, 8), _n("node2", 3500, 40000)], [], TWO_CONTAINERS,
                 {"node1": 56, "node2": 56}, id="a scalar resource the pod does not request is left out (100 → 63)"),
])
def test_balance_change_allocation_1_36(args: dict[str, Any] | None, nodes: list[Any], running: list[PodBuilder],
                                        pod: PodBuilder, scores: dict[str, int]) -> None:
    snap = make_snapshot(nodes, running)
    plugin = NodeResourcesBalancedAllocation(decode_args(args),
                                             make_plugin("NodeResourcesBalancedAllocation", snap, release="1.36").handle)
    assert run_score(plugin, pod.build(), snap) == scores


def test_balance_change_allocation_scores_75_when_no_resource_is_weighed() -> None:
    # only a scalar resource configured and not requested: both balances are 100 (std 0)
    snap = make_snapshot([_n("n", 1000, 1000)])
    args = decode_args({"resources": [{"name": "nvidia.com/gpu", "weight": 1}]})
    plugin = NodeResourcesBalancedAllocation(args, make_plugin("NodeResourcesBalancedAllocation", snap,
                                                               release="1.36").handle)
    assert plugin.score(CycleState(), make_pod().req(cpu="1").build(), snap.table, np.arange(1)).tolist() == [75]


def _scalar_std(fs: list[float]) -> float:
    """The per-node computation of balanced_allocation.go, value by value."""
    if len(fs) == 2:
        return abs((fs[0] - fs[1]) / 2)
    if len(fs) < 2:
        return 0.0
    total = 0.0
    for x in fs:
        total += x
    mean = total / len(fs)
    acc = 0.0
    for x in fs:
        acc = acc + (x - mean) * (x - mean)
    return float(np.sqrt(acc / len(fs)))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(1, 5).flatmap(lambda r: st.lists(
    st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=r, max_size=r), min_size=1, max_size=8)))
def test_balanced_std_over_nodes_is_the_per_node_value_bit_for_bit(nodes: list[list[tuple[float, bool]]]) -> None:
    # nodes lacking some resources (allocatable 0) and more than two resources take the general path
    fractions = np.array([[f for f, _ in node] for node in nodes], dtype=np.float64).T   # resources × nodes
    live = np.array([[has for _, has in node] for node in nodes], dtype=bool).T
    expected = [_scalar_std([f for f, has in node if has]) for node in nodes]
    assert _std_of_live(fractions, live).tolist() == expected
