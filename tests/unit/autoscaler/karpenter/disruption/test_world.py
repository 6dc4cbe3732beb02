"""Disruption end to end on K2's solve (world.consolidate): a small cluster whose answer is known
from upstream's algorithm, and the consolidateAfter rule of the simulation."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.autoscaler.karpenter import KarpenterCluster
from kplan.autoscaler.karpenter.disruption.controller import DELETED, KEPT, REPLACED
from kplan.autoscaler.karpenter.disruption.world import consolidate
from kplan.model.karpenter import Budget, Disruption, NodeClaim, NodePool, Requirement
from kplan.model.objects import Node, OwnerRef, Pod
from kplan.model.parse_karpenter import parse_catalog

NOW = 1_800_000_000.0


def offering(price: float) -> dict[str, Any]:
    return {"Price": price, "Available": True,
            "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}


def itype(name: str, cpu: str, memory: str, price: float) -> dict[str, Any]:
    return {"name": name, "architecture": "amd64", "operatingSystems": ["linux"],
            "resources": {"cpu": cpu, "memory": memory, "pods": "110"}, "offerings": [offering(price)]}


CATALOG = parse_catalog([itype("s", "2", "4Gi", 0.1), itype("m", "4", "8Gi", 0.2), itype("l", "8", "16Gi", 0.4)], "t")
LARGE = CATALOG.instance_types[2]
ON_DEMAND = (Requirement("karpenter.sh/capacity-type", "In", ("on-demand",)),)


def node(name: str) -> Node:
    labels = {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "l",
              "karpenter.sh/capacity-type": "on-demand", "topology.kubernetes.io/zone": "a",
              "kubernetes.io/hostname": name, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}
    return Node(name, labels=labels, allocatable=LARGE.allocatable, capacity=LARGE.capacity, ready="True")


def pod(name: str, on: str, cpu: int = 500) -> Pod:
    return Pod(namespace="default", name=name, uid=name, node_name=on, phase="Running",
               owners=(OwnerRef("ReplicaSet", "rs", True, api_version="apps/v1"),),
               requests={"cpu": cpu, "memory": 2**30, "pods": 1})


def cluster(*, after: int = 0, claims: tuple[NodeClaim, ...] = ()) -> KarpenterCluster:
    pool = NodePool("default", requirements=ON_DEMAND,
                    disruption=Disruption("WhenEmptyOrUnderutilized", after, (Budget("100%"),)))
    return KarpenterCluster((node("n0"), node("n1"), node("n2")), (pod("p0", "n0"), pod("p1", "n1"), pod("p2", "n2")),
                            (pool,), claims, (), CATALOG)


def test_three_large_nodes_become_one_small_one() -> None:
    r = consolidate(cluster(), [], [], {}, NOW)
    [cmd] = r.commands
    assert (cmd.method, cmd.decision, cmd.candidates) == ("multi-node consolidation", "replace", ("n0", "n1", "n2"))
    [new] = r.launched
    assert (new.instance_type, new.price, new.instance_type_options) == ("s", 0.1, ("s", "m"))
    assert [n.verdict for n in r.nodes] == [REPLACED] * 3
    assert r.cost_before == pytest.approx(1.2) and r.cost_after == pytest.approx(0.1)
    assert cmd.savings == pytest.approx(1.1)


def test_a_node_under_consolidate_after_takes_no_moving_pod() -> None:
    # n2's claim had a pod event 10 minutes ago: under the 1h consolidateAfter it is no candidate, and the
    # simulation keeps n0's and n1's pods off it (IsConsolidationSimulation), so they go to a new small node
    recent = NodeClaim("n2", "default", labels=node("n2").labels, node_name="n2", launched=True, registered=True,
                       initialized=True, initialized_time=NOW - 86400, last_pod_event_time=NOW - 600)
    r = consolidate(cluster(after=3600, claims=(recent,)), [], [], {}, NOW)
    verdicts = {n.name: n.verdict for n in r.nodes}
    assert verdicts == {"n0": REPLACED, "n1": REPLACED, "n2": KEPT}
    assert r.nodes[2].reason == "ConsolidateAfter (1h0m0s) has not passed since the last pod event (10m0s ago)"
    [new] = r.launched
    assert new.pods == ("default/p0", "default/p1")


def test_an_empty_node_goes_by_emptiness_first() -> None:
    c = cluster()
    c = KarpenterCluster(c.nodes, c.bound_pods[:2], c.node_pools, (), (), CATALOG)
    r = consolidate(c, [], [], {}, NOW)
    assert (r.commands[0].method, r.commands[0].candidates) == ("emptiness", ("n2",))
    assert r.nodes[2].verdict == DELETED and r.nodes[2].reason == "Empty"
