"""The FitError message (reference 5.6), from a Diagnosis and from whole scheduling attempts."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from kplan.framework.diagnosis import Diagnosis
from kplan.framework.status import Code, Status
from tests.builders import PodBuilder, make_node, make_pod, name_in, simulate, term


def diagnosis(n: int, statuses: Mapping[int, tuple[str, ...]], absent: tuple[str, ...] = (), pre_filter: str = "",
              post_filter: str = "") -> Diagnosis:
    d = Diagnosis(n)
    for row, reasons in statuses.items():
        d.record(row, Status(Code.UNSCHEDULABLE, reasons, "P"))
    if absent:
        d.absent = Status(Code.UNRESOLVABLE, absent)
    d.pre_filter_msg, d.post_filter_msg = pre_filter, post_filter
    return d


@pytest.mark.parametrize("d, message", [
    pytest.param(diagnosis(3, {0: ("Insufficient cpu",), 1: ("Insufficient cpu",), 2: ("x",)}),
                 "0/3 nodes are available: 1 x, 2 Insufficient cpu.", id="reasons are counted over nodes"),
    pytest.param(diagnosis(12, {i: ("b",) for i in range(10)} | {10: ("a",), 11: ("a",)}),
                 "0/12 nodes are available: 10 b, 2 a.", id="items are sorted as plain strings so 10 comes before 2"),
    pytest.param(diagnosis(2, {0: ("Too many pods", "Insufficient cpu")}, absent=("gone",)),
                 "0/2 nodes are available: 1 Insufficient cpu, 1 Too many pods, 1 gone.",
                 id="each reason of a node counts and nodes without a status take the absent reasons"),
    pytest.param(diagnosis(5, {0: ("x",)}, absent=("node(s) didn't satisfy plugin(s) [NodeAffinity]",)),
                 "0/5 nodes are available: 1 x, 4 node(s) didn't satisfy plugin(s) [NodeAffinity].",
                 id="absent reasons are multiplied by the number of absent nodes"),
    pytest.param(diagnosis(3, {0: ("x",)}, pre_filter="pod affinity terms conflict"),
                 "0/3 nodes are available: pod affinity terms conflict.",
                 id="a PreFilter message replaces the node histogram"),
    pytest.param(diagnosis(3, {}, post_filter="preemption: not eligible"),
                 "0/3 nodes are available: preemption: not eligible",
                 id="without any reason the PostFilter message follows directly"),
    pytest.param(diagnosis(1, {0: ("x",)}, post_filter="tail"), "0/1 nodes are available: 1 x. tail",
                 id="the PostFilter message follows after a space"),
])
def test_fit_error_text(d: Diagnosis, message: str) -> None:
    assert d.fit_error().message == message


NODES = [
    make_node("cp").alloc(cpu="2", memory="4Gi", pods=10).taint("node-role.kubernetes.io/control-plane"),
    make_node("w1").alloc(cpu="2", memory="4Gi", pods=10),
    make_node("w2").alloc(cpu="2", memory="4Gi", pods=10),
]
RUNNING = [make_pod("r1").node_name("w1").req(cpu="1500m"), make_pod("r2").node_name("w2").req(cpu="1500m")]
NEVER = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "never"}, "value": 0,
         "preemptionPolicy": "Never"}
FILTERS = "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "


@pytest.mark.parametrize("pod, message", [
    pytest.param(make_pod("p").req(cpu="1"),
                 FILTERS + "2 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: "
                 "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
                 id="the reference example of a failed preemption"),
    pytest.param(make_pod("p").req(cpu="3"),
                 FILTERS + "2 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: "
                 "3 Preemption is not helpful for scheduling.",
                 id="unresolvable nodes are not preemption candidates"),
    pytest.param(make_pod("p").req(cpu="1").priority_class("never"),
                 FILTERS + "2 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to "
                 "preemptionPolicy=Never.", id="a pod that never preempts says so"),
    pytest.param(make_pod("p").required(term(fields=[name_in("w1"), name_in("w2")])),
                 "0/3 nodes are available: pod affinity terms conflict. not found",
                 id="a PreFilter rejection ends with DynamicResources' not found"),
    pytest.param(make_pod("p").required(term(fields=[name_in("cp")])),
                 FILTERS + "2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, "
                 "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
                 id="nodes outside a PreFilterResult count as not satisfying the plugin"),
])
def test_fit_error_of_a_scheduling_attempt(pod: PodBuilder, message: str) -> None:
    result = simulate(NODES, [pod], RUNNING, objects=[NEVER], release="1.34")
    (outcome,) = result.pods
    assert (outcome.status, outcome.message) == ("Unschedulable", message)


def test_no_nodes_at_all() -> None:
    result = simulate([], [make_pod("p")])
    assert result.pods[0].message == "no nodes available to schedule pods"


def test_the_message_comes_from_the_last_attempt() -> None:
    # The pod is tried once: node-level rejections are never retried (reference 12.4).
    result = simulate(NODES[:1], [make_pod("p")], release="1.34")
    (o,) = result.pods
    assert o.attempts == 1
    assert o.message == ("0/1 nodes are available: 1 node(s) had untolerated taint "
                         "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: "
                         "0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
