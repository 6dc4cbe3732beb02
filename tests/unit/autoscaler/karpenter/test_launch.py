"""The offering a NodeClaim launches on (kwok/cloudprovider toNode; the AWS capacity-type order)."""

from __future__ import annotations

from typing import Any

from kplan.autoscaler.karpenter import NewNodeClaim, launch
from kplan.model.karpenter import Requirement
from kplan.model.parse_karpenter import parse_catalog


def offering(price: float, capacity_type: str, zone: str) -> dict[str, Any]:
    return {"Price": price, "Available": True,
            "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity_type]},
                             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}


CATALOG = parse_catalog([
    {"name": "m5.large", "architecture": "amd64", "operatingSystems": ["linux"],
     "resources": {"cpu": "2", "memory": "8Gi", "pods": "29"},
     "offerings": [offering(0.096, "on-demand", "a"), offering(0.096, "on-demand", "b"),
                   offering(0.04, "spot", "a"), offering(0.035, "spot", "b")]},
    {"name": "m5.xlarge", "architecture": "amd64", "operatingSystems": ["linux"],
     "resources": {"cpu": "4", "memory": "16Gi"},
     "offerings": [offering(0.192, "on-demand", "a"), offering(0.07, "spot", "a")]},
], "types.json")


def claim(*reqs: Requirement) -> NewNodeClaim:
    types = CATALOG.instance_types
    base = (Requirement("node.kubernetes.io/instance-type", "In", tuple(t.name for t in types)),
            Requirement("karpenter.sh/nodepool", "In", ("default",)))
    return NewNodeClaim("default", types, (), base + reqs, labels={"team": "a"})


def test_on_demand_takes_the_cheapest_option_of_the_fleet_request() -> None:
    node = launch(claim(Requirement("karpenter.sh/capacity-type", "In", ("on-demand",))), CATALOG, "n1")
    assert node is not None
    assert (node.instance_type.name, node.capacity_type, node.zone, node.price) == ("m5.large", "on-demand", "a",
                                                                                    0.096)
    assert [(o.instance_type, o.zone) for o in node.options] == [("m5.large", "a"), ("m5.large", "b"),
                                                                  ("m5.xlarge", "a")]
    assert not node.cloud_picks
    assert node.other_instance_types == ("m5.xlarge",)


def test_spot_is_preferred_when_allowed_and_ec2_picks_among_the_options() -> None:
    node = launch(claim(), CATALOG, "n1")
    assert node is not None
    assert (node.capacity_type, node.zone, node.price) == ("spot", "b", 0.035)
    assert node.cloud_picks
    assert [(o.instance_type, o.zone, o.price) for o in node.options] == [
        ("m5.large", "b", 0.035), ("m5.large", "a", 0.04), ("m5.xlarge", "a", 0.07)]


def test_spot_dearer_than_the_cheapest_on_demand_is_not_offered() -> None:
    cat = parse_catalog([
        {"name": "a.large", "architecture": "amd64", "operatingSystems": ["linux"], "resources": {"cpu": "2"},
         "offerings": [offering(0.10, "on-demand", "a"), offering(0.12, "spot", "a")]},
        {"name": "b.large", "architecture": "amd64", "operatingSystems": ["linux"], "resources": {"cpu": "2"},
         "offerings": [offering(0.20, "on-demand", "a"), offering(0.09, "spot", "a")]},
    ], "t.json")
    types = cat.instance_types
    c = NewNodeClaim("default", types, (), (Requirement("node.kubernetes.io/instance-type", "In",
                                                        ("a.large", "b.large")),))
    node = launch(c, cat, "n1")
    assert node is not None and node.capacity_type == "spot"
    assert [(o.instance_type, o.price) for o in node.options] == [("b.large", 0.09)]


def test_a_metal_or_gpu_type_is_launched_only_when_nothing_else_is_left() -> None:
    cat = parse_catalog([
        {"name": "g.large", "architecture": "amd64", "operatingSystems": ["linux"],
         "resources": {"cpu": "2", "nvidia.com/gpu": "1"}, "offerings": [offering(0.05, "on-demand", "a")]},
        {"name": "c.large", "architecture": "amd64", "operatingSystems": ["linux"], "resources": {"cpu": "2"},
         "offerings": [offering(0.08, "on-demand", "a")]},
    ], "t.json")
    c = NewNodeClaim("default", cat.instance_types, (), (Requirement("node.kubernetes.io/instance-type", "In",
                                                                     ("g.large", "c.large")),))
    node = launch(c, cat, "n1")
    assert node is not None and node.instance_type.name == "c.large"
    only_gpu = NewNodeClaim("default", cat.instance_types[:1], (), (
        Requirement("node.kubernetes.io/instance-type", "In", ("g.large",)),))
    node = launch(only_gpu, cat, "n1")
    assert node is not None and node.instance_type.name == "g.large"


def test_a_type_the_requests_do_not_fit_is_not_launched() -> None:
    c = NewNodeClaim("default", CATALOG.instance_types, (), claim().requirements, requests={"cpu": 3000})
    node = launch(c, CATALOG, "n1")
    assert node is not None and node.instance_type.name == "m5.xlarge"


def test_the_node_carries_the_labels_capacity_and_allocatable_of_its_type() -> None:
    node = launch(claim(Requirement("topology.kubernetes.io/zone", "In", ("a",)),
                        Requirement("karpenter.sh/capacity-type", "In", ("on-demand",))), CATALOG, "n1").node
    assert node.labels["node.kubernetes.io/instance-type"] == "m5.large"
    assert node.labels["topology.kubernetes.io/zone"] == "a"
    assert node.labels["karpenter.sh/capacity-type"] == "on-demand"
    assert node.labels["karpenter.sh/nodepool"] == "default"
    assert node.labels["kubernetes.io/hostname"] == "n1"
    assert node.labels["team"] == "a"
    assert node.capacity["pods"] == 29
    assert node.allocatable["cpu"] == 1900


def test_no_offering_left_means_no_launch() -> None:
    assert launch(claim(Requirement("topology.kubernetes.io/zone", "In", ("c",))), CATALOG, "n1") is None
