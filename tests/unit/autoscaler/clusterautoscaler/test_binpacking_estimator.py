"""The binpacking estimator on the cases of the cluster-autoscaler's own unit test
(kubernetes/autoscaler cluster-autoscaler/estimator/binpacking_estimator_test.go,
TestBinpackingEstimate): one old node of 100m in zone-jupiter, a template node of the case's CPU,
its memory in MiB and 10 pods in zone-mars, pods of ``cpu`` milli-CPU and ``mem`` bytes labelled
app=estimatee in namespace universe; the filters are kplan's kube-scheduler's."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kplan.autoscaler.clusterautoscaler.binpacking_estimator import PodEquivalenceGroup, estimate
from kplan.autoscaler.clusterautoscaler.predicatechecker import PredicateChecker, reserve_is_exact
from kplan.autoscaler.clusterautoscaler.threshold_based_limiter import ThresholdBasedLimiter
from kplan.model.objects import Node
from kplan.scheduler.setup import SchedulerSetup
from tests.builders import make_node, make_pod

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
MIB = 1024 * 1024


def node(name: str, cpu_m: int, mem_mib: int, zone: str) -> Node:
    return make_node(name).alloc(cpu=f"{cpu_m}m", memory=str(mem_mib * MIB), pods="10").zone(zone).build()


def group(name: str, cpu_m: int, mem: int, count: int, **extra: Any) -> PodEquivalenceGroup:
    b = make_pod(name, "universe").labels(app="estimatee").req(cpu=f"{cpu_m}m", memory=str(mem))
    if "host_port" in extra:
        b = b.host_port(extra["host_port"])
    if "anti" in extra:  # required anti-affinity to its own app over a topology key
        b = b.spec(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "estimatee"}}, "topologyKey": extra["anti"]}]}})
    if "affine" in extra:  # required affinity to the DaemonSet pods over a topology key
        b = b.spec(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "daemon"}}, "topologyKey": extra["affine"]}]}})
    if "spread" in extra:
        skew, key, min_domains = extra["spread"]
        c: dict[str, Any] = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                             "labelSelector": {"matchLabels": {"app": "estimatee"}}}
        c["minDomains"] = min_domains
        b = b.spec(topologySpreadConstraints=[c])
    pod = b.build()
    return PodEquivalenceGroup(tuple([pod] * count))


def case(name: str, *values: Any) -> Any:
    return pytest.param(*values, id=name)


HIGH = group("estimatee", 500, 1000, 10)

# (id, template milli-CPU, template MiB, limiter's max nodes, groups, nodes, pods, processed)
CASES = [
    case("simple resource-based binpacking", 350 * 3 - 50, 2 * 1000, 0, [group("estimatee", 350, 1000, 10)], 5, 10, None),
    case("pods-per-node bound binpacking", 10000, 20000, 0, [group("estimatee", 10, 100, 20)], 2, 20, None),
    case("hostport conflict forces pod-per-node", 1000, 5000, 0, [group("estimatee", 200, 1000, 8, host_port=5555)],
     8, 8, None),
    case("limiter cuts binpacking", 1000, 5000, 5, [group("estimatee", 500, 1000, 20)], 5, 10, None),
    case("decreasing ordered pods are processed first", 1000, 5000, 5, [group("estimatee", 50, 1000, 10), HIGH],
     5, 10, HIGH.pods),
    case("hostname topology spreading with maxSkew=2 forces 2 pods/node", 1000, 5000, 0,
     [group("estimatee", 200, 200, 8, spread=(2, HOSTNAME, 1))], 4, 8, None),
    case("zonal topology spreading with maxSkew=2 only allows 2 pods to schedule", 1000, 5000, 0,
     [group("estimatee", 20, 100, 8, spread=(2, ZONE, 1))], 1, 2, None),
    pytest.param(
        1000, 5000, 0, [group("estimatee", 20, 100, 12, spread=(1, HOSTNAME, 3))], 3, 12, None,
        id="hostname topology spreading with maxSkew=1 with a large scaleup handles scheduling pods retroactively",
        # kplan gives 12 nodes, and the real kube-scheduler agrees on every verdict behind it: oldnode
        # (no nodeSelector or affinity, the hostname label, no taint) is an eligible hostname domain
        # with 0 matching pods, so the global minimum stays 0 and a new node holding one pod takes no
        # second (test_the_old_nodes_empty_domain_keeps_one_pod_per_new_node, checked against
        # kube-scheduler 1.34.0). Upstream's 3 needs two things kplan's mirrored estimator and the
        # scheduler do not give: oldnode not counted as a domain (yet the maxSkew=2 case above, 4
        # nodes, needs it counted: without it 5 pods share a node and 2 nodes do) and each pod tried
        # on every added node (binpacking_estimator.go tries the added nodes only until the group's
        # first failure, then only the last node: 7 nodes without oldnode).
        marks=pytest.mark.xfail(strict=True, reason="upstream expects 3 nodes; kube-scheduler's "
                                "PodTopologySpread gives one pod per new node while oldnode's domain is empty")),
]


@pytest.mark.parametrize(("cpu", "mem", "max_nodes", "groups", "nodes", "pods", "processed"),
                         CASES)
def test_binpacking_estimate_as_upstream(cpu: int, mem: int, max_nodes: int, groups: list[PodEquivalenceGroup],
                                         nodes: int, pods: int, processed: Any) -> None:
    checker = PredicateChecker(SchedulerSetup.of(), [node("oldnode", 100, 100, "zone-jupiter")], {})
    template = node("template", cpu, mem, "zone-mars")

    def new_node(i: int) -> tuple[Node, tuple[()]]:
        name = f"e-{i}"
        return dataclasses.replace(template, name=name, labels={**template.labels, HOSTNAME: name}), ()

    got = estimate(groups, template, checker, new_node, ThresholdBasedLimiter(max_nodes))
    assert (got.node_count, len(got.pods)) == (nodes, pods)
    if processed is not None:
        assert tuple(got.pods) == processed


@pytest.mark.parametrize(("cpu", "mem", "max_nodes", "groups", "nodes", "pods", "processed"),
                         [c for c in CASES if not c.marks])
def test_nodes_reserved_ahead_give_the_same_estimate_where_that_is_exact(
        cpu: int, mem: int, max_nodes: int, groups: list[PodEquivalenceGroup], nodes: int, pods: int,
        processed: Any) -> None:
    setup = SchedulerSetup.of()
    template = node("template", cpu, mem, "zone-mars")

    def new_node(i: int) -> tuple[Node, tuple[()]]:
        name = f"e-{i}"
        return dataclasses.replace(template, name=name, labels={**template.labels, HOSTNAME: name}), ()

    def run(reserve: bool) -> tuple[int, list[str]]:
        checker = PredicateChecker(setup, [node("oldnode", 100, 100, "zone-jupiter")], {})
        if reserve:
            checker.reserve([new_node(i) for i in range(sum(len(g.pods) for g in groups))])
        got = estimate(groups, template, checker, new_node, ThresholdBasedLimiter(max_nodes))
        return got.node_count, [p.uid for p in got.pods]

    exact = reserve_is_exact(setup, [p for g in groups for p in g.pods], ())
    assert exact == (not any(p.spread_constraints for g in groups for p in g.pods))
    if exact:
        assert run(True) == run(False)


DAEMON = make_pod("daemon", "universe").labels(app="daemon").req(cpu="10m").owner("DaemonSet", "d").build()


@pytest.mark.parametrize(("groups", "daemons"), [
    pytest.param([group("estimatee", 200, 1000, 8, anti=HOSTNAME)], (), id="hostname anti-affinity"),
    pytest.param([group("estimatee", 200, 1000, 8, anti=ZONE)], (), id="zonal anti-affinity"),
    pytest.param([group("estimatee", 200, 1000, 8, affine=ZONE)], (DAEMON,), id="zonal affinity to DaemonSet pods"),
    pytest.param([group("estimatee", 200, 1000, 8, affine=HOSTNAME)], (DAEMON,),
                 id="hostname affinity to DaemonSet pods"),
    pytest.param([group("estimatee", 200, 1000, 8, affine=ZONE)], (), id="affinity nothing matches"),
])
def test_inter_pod_affinity_gives_the_same_estimate_with_nodes_reserved_ahead(
        groups: list[PodEquivalenceGroup], daemons: tuple[Any, ...]) -> None:
    setup = SchedulerSetup.of()
    template = node("template", 1000, 5000, "zone-mars")
    assert reserve_is_exact(setup, [p for g in groups for p in g.pods], daemons)

    def new_node(i: int) -> tuple[Node, tuple[Any, ...]]:
        name = f"e-{i}"
        return dataclasses.replace(template, name=name, labels={**template.labels, HOSTNAME: name}), daemons

    def run(reserve: bool) -> tuple[int, list[str]]:
        checker = PredicateChecker(setup, [node("oldnode", 100, 100, "zone-jupiter")], {})
        if reserve:
            checker.reserve([new_node(i) for i in range(8)])
        got = estimate(groups, template, checker, new_node)
        return got.node_count, [p.uid for p in got.pods]

    assert run(True) == run(False)


@pytest.mark.parametrize(("old_node", "fits"), [
    pytest.param(True, False, id="an eligible old node with no matching pod keeps the global minimum at 0"),
    pytest.param(False, True, id="without it three domains of one pod each let a second pod in"),
])
def test_the_old_nodes_empty_domain_keeps_one_pod_per_new_node(old_node: bool, fits: bool) -> None:
    # The real kube-scheduler (oracle 1.34.0, replay --serial) on the same cluster: with oldnode
    # tainted (the taint keeps the pod off it; nodeTaintsPolicy Ignore still counts its domain) the
    # pending pod fits none of e-0..e-2 ("3 node(s) didn't match pod topology spread constraints");
    # without oldnode it goes to e-0.
    (pod, *_) = group("estimatee", 20, 100, 4, spread=(1, HOSTNAME, 3)).pods
    old = make_node("oldnode").alloc(cpu="100m", memory=str(100 * MIB), pods="10").zone("zone-jupiter") \
        .taint("old", "x").build()
    checker = PredicateChecker(SchedulerSetup.of(), [old] if old_node else [], {})
    for i in range(3):
        checker.add_node(node(f"e-{i}", 1000, 5000, "zone-mars"))
        checker.add_pod(pod, f"e-{i}")
    assert checker.check(pod, "e-0") is fits
