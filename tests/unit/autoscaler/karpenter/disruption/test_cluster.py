"""Disruption on kplan's Karpenter inputs: the views built from a KarpenterCluster, the simulated
NodeClaim as consolidation narrows it (price filter, spot pin, minValues), and the launch of a
replacement."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kplan.autoscaler.karpenter import KarpenterCluster, NewNodeClaim
from kplan.autoscaler.karpenter.disruption.cluster import (
    MAX_FLOAT64,
    KarpenterClaim,
    claim_view,
    drift_reason,
    launch_replacement,
    node_claims_by_node,
    node_pool_view,
    state_nodes,
)
from kplan.autoscaler.karpenter.disruption.consolidation import replacement
from kplan.model.karpenter import Budget, Disruption, NodeClaim, NodePool, Requirement
from kplan.model.objects import Node, Pod
from kplan.model.parse_karpenter import parse_catalog


def offering(price: float, capacity_type: str, zone: str = "a", available: bool = True) -> dict[str, Any]:
    return {"Price": price, "Available": available,
            "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity_type]},
                             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}


def itype(name: str, od: float, spot: float, family: str = "m") -> dict[str, Any]:
    return {"name": name, "architecture": "amd64", "operatingSystems": ["linux"],
            "resources": {"cpu": "2", "memory": "8Gi", "pods": "29"},
            "offerings": [offering(od, "on-demand"), offering(spot, "spot")], "labels": {"family": family}}


CATALOG = parse_catalog([itype("c.xlarge", 0.4, 0.12, "c"), itype("m.small", 0.1, 0.03), itype("m.large", 0.2, 0.06),
                         itype("c.small", 0.1, 0.05, "c")], "types.json")


def claim(*reqs: Requirement) -> KarpenterClaim:
    base = (Requirement("node.kubernetes.io/instance-type", "In", tuple(t.name for t in CATALOG.instance_types)),
            Requirement("karpenter.sh/nodepool", "In", ("default",)))
    pod = Pod(namespace="default", name="p", uid="p")
    return KarpenterClaim(NewNodeClaim("default", CATALOG.instance_types, (pod,), base + reqs), CATALOG)


def test_order_by_price_takes_the_cheapest_launchable_offering_the_requirements_allow() -> None:
    c = claim(Requirement("karpenter.sh/capacity-type", "In", ("on-demand",)))
    c.order_by_price()
    # equal prices stay where Go's sort.Slice leaves them (insertion sort up to 12: input order)
    assert c.instance_type_names() == ["m.small", "c.small", "m.large", "c.xlarge"]


def test_the_price_filter_reads_the_worst_launch_price_of_spot_before_on_demand() -> None:
    c = claim()
    assert c.capacity_types() == ("reserved", "spot", "on-demand")  # no capacity-type requirement: any
    assert c.remove_by_price(0.06) is None
    # spot is the capacity type a claim allowing both launches: m.small 0.03 and c.small 0.05 are below 0.06
    assert c.instance_type_names() == ["m.small", "c.small"]
    c.require_capacity_type("on-demand")
    assert not c.allows_capacity_type("spot")
    assert c.launch_price() == 0.1


def test_min_values_left_unmet_is_upstreams_error() -> None:
    c = claim(Requirement("family", "In", ("c", "m"), min_values=2))
    assert c.min_instance_types() == 2
    assert c.remove_by_price(0.05) == "minValues requirement is not met for label(s) (label(s)=[family])"
    assert c.remove_by_price(MAX_FLOAT64) == "minValues requirement is not met for label(s) (label(s)=[family])"


def test_a_replacement_launches_the_narrowed_claim() -> None:
    c = claim()
    c.order_by_price()
    assert c.remove_by_price(0.2) is None
    c.require_capacity_type("spot")
    pool = NodePool("default")
    state, info, nc = launch_replacement(replacement(c), "default-r1-1", 100.0, CATALOG, {"default": pool})
    assert (info.instance_type, info.capacity_type, info.price) == ("m.small", "spot", 0.03)
    assert info.instance_type_options == ("m.small", "c.small", "m.large", "c.xlarge")
    assert state.node is not None and state.node.ready == "True" and state.initialized
    assert nc.last_pod_event_time == 100.0 and info.pods == ("default/p",)


def test_views_find_each_karpenter_nodes_claim_or_make_one() -> None:
    labels = {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "m.small"}
    nodes = (Node("a", labels=labels, ready="True"), Node("b", labels=labels, ready="True"), Node("plain"))
    claims = (NodeClaim("claim-a", "default", labels=labels, node_name="a", registered=True, initialized=True,
                        initialized_time=50.0, last_pod_event_time=70.0, creation_time=40.0),
              NodeClaim("in-flight", "default", labels=labels, creation_time=90.0, provider_id="kwok://x"),
              NodeClaim("not-launched", "default", labels=labels, creation_time=95.0))
    pods = (Pod(namespace="default", name="p", uid="p", node_name="a"),)
    cluster = KarpenterCluster(nodes, pods, (NodePool("default"),), claims, (), CATALOG)
    by_node = node_claims_by_node(cluster)
    assert by_node["a"].name == "claim-a" and by_node["b"].name == "b" and "plain" not in by_node
    views = state_nodes(cluster, by_node, 100.0)
    # a claim not launched yet (no providerID) is not in Karpenter's state
    assert [v.name for v in views] == ["a", "b", "plain", "in-flight"]
    a, b, plain, flight = views
    assert a.claim is not None and (a.claim.initialized, a.claim.last_pod_event) == (50.0, 70.0)
    assert [p.name for p in a.pods] == ["p"]
    assert b.claim is not None and b.claim.initialized == 0.0
    assert plain.claim is None and not plain.managed
    assert flight.node is None and flight.claim is not None and not flight.initialized


def test_a_node_pool_view_keeps_the_disruption_block() -> None:
    pool = NodePool("p", disruption=Disruption("WhenEmpty", None, (Budget("0", ("Drifted",)), Budget("20%"))))
    view = node_pool_view(pool, CATALOG)
    assert view.consolidate_after is None and view.consolidation_policy == "WhenEmpty"
    assert [(b.nodes, b.reasons) for b in view.budgets] == [("0", ("Drifted",)), ("20%", None)]
    assert set(view.instance_types) == {"c.xlarge", "m.small", "m.large", "c.small"}


LABELS = {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "m.small",
          "karpenter.sh/capacity-type": "on-demand", "topology.kubernetes.io/zone": "a", "family": "m"}
HASHED = {"karpenter.sh/nodepool-hash": "1", "karpenter.sh/nodepool-hash-version": "v3"}
DRIFT = [
    ("a claim that meets its NodePool has not drifted", NodePool("default"), {}, {}, 0.0, ""),
    ("a different NodePool hash of the same version", NodePool("default", annotations=HASHED),
     {"karpenter.sh/nodepool-hash": "2", "karpenter.sh/nodepool-hash-version": "v3"}, {}, 0.0, "NodePoolDrifted"),
    ("hashes of different versions are not compared", NodePool("default", annotations=HASHED),
     {"karpenter.sh/nodepool-hash": "2", "karpenter.sh/nodepool-hash-version": "v2"}, {}, 0.0, ""),
    ("labels outside the NodePool's requirements",
     NodePool("default", requirements=(Requirement("family", "In", ("c",)),)), {}, {}, 0.0, "RequirementsDrifted"),
    ("a requirement on a label the claim lacks",
     NodePool("default", requirements=(Requirement("gpu", "Exists"),)), {}, {}, 0.0, "RequirementsDrifted"),
    ("an instance type gone from the catalog, after an hour", NodePool("default"), {},
     {"node.kubernetes.io/instance-type": "gone"}, 3601.0, "InstanceTypeNotFound"),
    ("but not within the first hour", NodePool("default"), {}, {"node.kubernetes.io/instance-type": "gone"}, 3600.0, ""),
    ("no offering left for the claim's zone", NodePool("default"), {}, {"topology.kubernetes.io/zone": "b"}, 7200.0,
     "InstanceTypeNotFound"),
]


@pytest.mark.parametrize(("pool", "annotations", "labels", "age", "want"), [d[1:] for d in DRIFT],
                         ids=[d[0] for d in DRIFT])
def test_drift_as_the_node_claim_controller_finds_it(pool: NodePool, annotations: dict[str, str],
                                                     labels: dict[str, str], age: float, want: str) -> None:
    nc = NodeClaim("c", "default", labels={**LABELS, **labels}, annotations=annotations, launched=True,
                   creation_time=1000.0)
    assert drift_reason(pool, nc, CATALOG, 1000.0 + age) == want


def test_a_drift_the_input_records_keeps_its_time_and_a_new_one_starts_now() -> None:
    nc = NodeClaim("c", "default", labels=LABELS, launched=True, drifted=True, drifted_time=5.0)
    assert claim_view(nc, "RequirementsDrifted", 99.0).drifted == 5.0
    assert claim_view(dataclasses.replace(nc, drifted=False), "RequirementsDrifted", 99.0).drifted == 99.0
    assert claim_view(nc, "", 99.0).drifted is None


def test_a_nodes_provider_id_and_creation_time_pair_it_with_its_claim_and_date_a_made_one() -> None:
    from kplan.autoscaler.karpenter.disruption.cluster import claim_for_node
    from kplan.model.parse import parse_node
    n = parse_node({"metadata": {"name": "a", "creationTimestamp": "2025-01-10T00:00:00Z",
                                 "labels": {"karpenter.sh/nodepool": "default"}},
                    "spec": {"providerID": "kwok://a"}})
    assert (n.provider_id, n.creation_time) == ("kwok://a", 1736467200.0)
    made = claim_for_node(n)
    assert (made.initialized_time, made.creation_time, made.provider_id) == (1736467200.0, 1736467200.0, "kwok://a")
    claims = (NodeClaim("by-name", "default", node_name="a"),
              NodeClaim("claim-x", "default", provider_id="kwok://a", initialized=True))
    cluster = KarpenterCluster((n,), (), (NodePool("default"),), claims, (), CATALOG)
    # the providerID join wins over status.nodeName, as in state.Cluster
    assert node_claims_by_node(cluster)["a"].name == "claim-x"
