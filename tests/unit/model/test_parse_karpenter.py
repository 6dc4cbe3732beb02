"""NodePools, NodeClaims and the KWOK-format catalog: parsed once, bad input refused in one line
naming the file, the object and the field (sigs.k8s.io/karpenter v1.15.0 pkg/apis/v1 validation)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kplan.errors import InputError
from kplan.model.karpenter import NODE_POOL_LABEL, Requirement
from kplan.model.parse_karpenter import (
    parse_catalog,
    parse_node_claim,
    parse_node_pool,
    quantity_string,
)
from kplan.model.raw import RawObject
from kplan.scenario.inputs import classify


def node_pool(**spec: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
        "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass",
                                                        "name": "default"},
                                       "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                                                         "values": ["on-demand"]}]}}},
    }
    for path, value in spec.items():
        target = d["spec"]
        parts = path.split("__")
        for p in parts[:-1]:
            target = target.setdefault(p, {})
        target[parts[-1]] = value
    return d


def test_a_node_pool_gets_the_api_defaults() -> None:
    np = parse_node_pool(node_pool(), "pools.yaml")
    assert np.name == "default"
    assert np.requirements == (Requirement("karpenter.sh/capacity-type", "In", ("on-demand",)),)
    assert np.expire_after == 720 * 3600
    assert np.disruption.consolidation_policy == "WhenEmptyOrUnderutilized"
    assert np.disruption.consolidate_after == 0
    assert np.disruption.budgets[0].nodes == "10%"
    assert np.weight is None and np.limits == {}


def test_a_node_pool_reads_limits_weight_taints_and_min_values() -> None:
    np = parse_node_pool(node_pool(
        limits={"cpu": "100", "memory": "1000Gi"}, weight=10,
        template__spec__taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
        template__spec__requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                       "values": ["a", "b", "c"], "minValues": 2},
                                      {"key": "beta.kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
        disruption={"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1h30m",
                    "budgets": [{"nodes": "0", "schedule": "@daily", "duration": "10m"}]}))
    assert np.limits == {"cpu": 100_000, "memory": 1000 * 2**30}
    assert np.weight == 10
    assert np.taints[0].key == "gpu"
    assert np.requirements[0].min_values == 2
    assert np.requirements[1].key == "kubernetes.io/arch"  # normalised
    assert np.disruption.consolidate_after == 5400
    assert np.disruption.budgets[0].duration == 600


BAD_POOLS = [
    pytest.param(node_pool(weight=0), "spec.weight: Invalid value: 0", id="a weight below 1 is refused"),
    pytest.param(node_pool(weight=101), "spec.weight", id="a weight above 100 is refused"),
    pytest.param(node_pool(template__spec__requirements=[{"key": "kubernetes.io/hostname", "operator": "In",
                                                          "values": ["a"]}]),
                 "spec.template.spec.requirements[0].key: using label kubernetes.io/hostname is not allowed",
                 id="a requirement on the hostname is restricted"),
    pytest.param(node_pool(template__spec__requirements=[{"key": "karpenter.sh/foo", "operator": "Exists"}]),
                 "requirements[0].key: using label karpenter.sh/foo", id="the karpenter.sh domain is restricted"),
    pytest.param(node_pool(template__spec__requirements=[{"key": "a", "operator": "In", "values": []}]),
                 "requirements[0].values: requirements with operator 'In' must have a value defined",
                 id="In without values is refused"),
    pytest.param(node_pool(template__spec__requirements=[{"key": "a", "operator": "In", "values": ["x"],
                                                          "minValues": 2}]),
                 "requirements[0].values: requirements with 'minValues'", id="minValues above the values is refused"),
    pytest.param(node_pool(template__spec__requirements=[{"key": "a", "operator": "Gt", "values": ["-1"]}]),
                 "single positive integer value", id="Gt with a negative value is refused"),
    pytest.param(node_pool(template__spec__requirements=[{"key": "a", "operator": "Near", "values": ["1"]}]),
                 'requirements[0].operator: Unsupported value: "Near"', id="an unknown operator is refused"),
    pytest.param(node_pool(template__spec__requirements=[{"key": "karpenter.sh/capacity-type", "operator": "In",
                                                          "values": ["cheap"]}]),
                 "no valid values found", id="an unknown capacity type is refused"),
    pytest.param(node_pool(template__metadata={"labels": {NODE_POOL_LABEL: "x"}}),
                 "spec.template.metadata.labels[karpenter.sh/nodepool]", id="the nodepool label is restricted"),
    pytest.param(node_pool(template__spec__taints=[{"key": "a", "effect": "NoSchedule"},
                                                   {"key": "a", "effect": "NoSchedule"}]),
                 "spec.template.spec.taints[1]: duplicate taint Key/Effect pair a=NoSchedule",
                 id="a taint twice is refused"),
    pytest.param(node_pool(template__spec__taints=[{"key": "a", "effect": "Sometimes"}]),
                 'spec.template.spec.taints[0].effect: Unsupported value: "Sometimes"',
                 id="an unknown taint effect is refused"),
    pytest.param(node_pool(limits={"cpu": "lots"}), "spec.limits[cpu]", id="a limit that is no quantity is refused"),
    pytest.param(node_pool(disruption={"consolidateAfter": "5 minutes"}),
                 'spec.disruption.consolidateAfter: Invalid value: "5 minutes"', id="a bad duration is refused"),
    pytest.param(node_pool(disruption={"consolidationPolicy": "Sometimes"}),
                 "spec.disruption.consolidationPolicy: Unsupported value", id="an unknown policy is refused"),
    pytest.param(node_pool(disruption={"budgets": [{"nodes": "110%"}]}),
                 "spec.disruption.budgets[0].nodes", id="a budget above 100% is refused"),
    pytest.param(node_pool(disruption={"budgets": [{"nodes": "1", "schedule": "@daily"}]}),
                 "'schedule' must be set with 'duration'", id="a schedule without a duration is refused"),
    pytest.param(node_pool(replicas=2, weight=3), "'weight' is not supported on static NodePools",
                 id="a static pool with a weight is refused"),
]


@pytest.mark.parametrize("doc, message", BAD_POOLS)
def test_a_bad_node_pool_is_one_line_naming_file_object_and_field(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_node_pool(doc, "pools.yaml: document 1")
    text = str(e.value)
    assert text.startswith("pools.yaml: document 1: NodePool default: "), text
    assert message in text, text
    assert "\n" not in text


def test_a_node_pool_without_template_or_name_or_class_ref_is_refused() -> None:
    d = node_pool()
    del d["spec"]["template"]
    with pytest.raises(InputError, match="NodePool default: spec.template: Required value"):
        parse_node_pool(d, "f")
    d = node_pool()
    del d["metadata"]["name"]
    with pytest.raises(InputError, match=r"NodePool \?: metadata.name: Required value"):
        parse_node_pool(d, "f")
    d = node_pool()
    del d["spec"]["template"]["spec"]["nodeClassRef"]
    with pytest.raises(InputError, match="spec.template.spec.nodeClassRef: Required value"):
        parse_node_pool(d, "f")
    d = node_pool()
    d["apiVersion"] = "karpenter.sh/v1beta1"
    with pytest.raises(InputError, match='apiVersion: Unsupported value: "karpenter.sh/v1beta1"'):
        parse_node_pool(d, "f")


def node_claim() -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-abc", "labels": {NODE_POOL_LABEL: "default"}},
        "spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                   "values": ["m5.large"]},
                                  {"key": NODE_POOL_LABEL, "operator": "In", "values": ["default"]}],
                 "resources": {"requests": {"cpu": "1500m", "pods": "3"}},
                 "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"}},
        "status": {"nodeName": "node-1", "providerID": "kwok://node-1",
                   "capacity": {"cpu": "2", "memory": "8Gi", "pods": "29"},
                   "conditions": [{"type": "Launched", "status": "True"}, {"type": "Registered", "status": "True"},
                                  {"type": "Initialized", "status": "False"}]},
    }


def test_a_node_claim_reads_its_pool_requests_status_and_conditions() -> None:
    nc = parse_node_claim(node_claim(), "claims.json")
    assert nc.node_pool == "default"
    assert nc.requests == {"cpu": 1500, "pods": 3}
    assert nc.node_name == "node-1" and nc.capacity["memory"] == 8 * 2**30
    assert (nc.launched, nc.registered, nc.initialized) == (True, True, False)
    # a claim's requirements may name the nodepool key (Karpenter writes it there)
    assert nc.requirements[1].key == NODE_POOL_LABEL
    assert (nc.initialized_time, nc.last_pod_event_time, nc.drifted) == (None, None, False)


def test_a_node_claim_reads_the_times_disruption_counts_from() -> None:
    d = node_claim()
    d["status"]["lastPodEventTime"] = "2026-12-01T10:00:00Z"
    d["status"]["conditions"] = [
        {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-12-01T09:00:00Z"},
        {"type": "Drifted", "status": "True", "reason": "NodePoolDrifted", "lastTransitionTime": "2026-12-02T00:00:00Z"}]
    nc = parse_node_claim(d, "claims.json")
    assert nc.initialized and nc.initialized_time == 1796115600.0
    assert nc.last_pod_event_time == 1796119200.0
    assert (nc.drifted, nc.drifted_time, nc.drift_reason) == (True, 1796169600.0, "NodePoolDrifted")


@pytest.mark.parametrize("change, message", [
    pytest.param(lambda d: d["spec"].update(requirements=[{"key": "a", "operator": "In"}]),
                 "NodeClaim default-abc: spec.requirements[0].values: requirements with operator 'In'",
                 id="a claim requirement In without values is refused"),
    pytest.param(lambda d: d["spec"]["resources"].update(requests={"cpu": "x"}),
                 "NodeClaim default-abc: spec.resources.requests[cpu]", id="a bad request quantity is refused"),
    pytest.param(lambda d: d["status"].update(conditions="Ready"),
                 "NodeClaim default-abc: status.conditions: expected a list", id="conditions that are no list"),
    pytest.param(lambda d: d["status"].update(lastPodEventTime="yesterday"),
                 "NodeClaim default-abc: status.lastPodEventTime", id="a last pod event that is no time"),
])
def test_a_bad_node_claim_is_one_line(change: Any, message: str) -> None:
    d = copy.deepcopy(node_claim())
    change(d)
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_node_claim(d, "claims.json")


def test_inputs_classify_node_pools_and_claims_instead_of_skipping_them() -> None:
    inputs = classify([RawObject(node_pool(), "a.yaml"), RawObject(node_claim(), "b.yaml")])
    assert [p.name for p in inputs.node_pools] == ["default"]
    assert [c.name for c in inputs.node_claims] == ["default-abc"]
    assert "NodePool" not in inputs.other and "NodeClaim" not in inputs.other


def offering(price: float, capacity_type: str, zone: str) -> dict[str, Any]:
    return {"Price": price, "Available": True,
            "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity_type]},
                             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}


def instance_type(name: str = "m5.large", **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "architecture": "amd64", "operatingSystems": ["linux"],
                         "resources": {"cpu": "2", "memory": "8Gi"},
                         "offerings": [offering(0.096, "on-demand", "zone-a"), offering(0.04, "spot", "zone-a")]}
    d.update(extra)
    return d


def test_a_kwok_catalog_is_read_as_the_kwok_provider_reads_it() -> None:
    cat = parse_catalog([instance_type(), instance_type("c-4x-amd64-linux")], "types.json")
    m5 = cat.instance_types[0]
    assert m5.capacity == {"cpu": 2000, "memory": 8 * 2**30, "pods": 110}
    assert m5.allocatable == {"cpu": 1900, "memory": 8 * 2**30 - 10 * 2**20, "pods": 110}
    assert m5.labels["karpenter.kwok.sh/instance-size"] == "large"
    assert m5.labels["karpenter.kwok.sh/instance-family"] == "m5"
    assert m5.labels["karpenter.kwok.sh/instance-memory"] == "8Gi"
    generic = cat.instance_types[1]
    assert generic.labels["karpenter.kwok.sh/instance-size"] == "2"
    assert generic.labels["karpenter.kwok.sh/instance-family"] == "c"
    assert [(o.capacity_type, o.zone, o.price) for o in m5.offerings] == [("on-demand", "zone-a", 0.096),
                                                                          ("spot", "zone-a", 0.04)]
    assert "karpenter.kwok.sh/instance-cpu" in cat.well_known_labels


def test_the_kplan_overhead_extension_replaces_kwoks_kube_reserved() -> None:
    cat = parse_catalog([instance_type(overhead={"kubeReserved": {"cpu": "70m", "memory": "574Mi"},
                                                 "evictionThreshold": {"memory": "100Mi"}})], "t.json")
    assert cat.instance_types[0].allocatable["memory"] == 8 * 2**30 - 674 * 2**20


BAD_CATALOGS = [
    pytest.param({"name": "x"}, "t.json: instance types file: (top level): expected a JSON list",
                 id="a catalog that is no list is refused"),
    pytest.param([], "the catalog lists no instance types", id="an empty catalog is refused"),
    pytest.param([instance_type(name="")], "instance type [0]: name: Required value", id="a type without a name"),
    pytest.param([instance_type(resources={"cpu": "two"})], "instance type m5.large: resources[cpu]",
                 id="a resource that is no quantity"),
    pytest.param([instance_type(offerings=[{"Price": "cheap", "Available": True, "Requirements": []}])],
                 "instance type m5.large: offerings[0].Price: expected a number", id="a price that is no number"),
    pytest.param([instance_type(offerings=[{"Price": 1, "Available": True,
                                            "Requirements": [{"key": "z", "operator": "In"}]}])],
                 "offerings[0].Requirements[0].values: requirements with operator 'In'",
                 id="an offering requirement In without values"),
    pytest.param([instance_type(), instance_type()], "instance type m5.large: name: Duplicate value",
                 id="a type listed twice"),
    pytest.param([instance_type(architecture=None)], "instance type m5.large: architecture: Required value",
                 id="a type without an architecture"),
]


@pytest.mark.parametrize("doc, message", BAD_CATALOGS)
def test_a_bad_catalog_is_one_line_naming_file_type_and_field(doc: Any, message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_catalog(doc, "t.json")
    assert message in str(e.value), str(e.value)
    assert str(e.value).startswith("t.json: ")


@pytest.mark.parametrize("text, canonical", [
    pytest.param("8Gi", "8Gi", id="whole gibibytes stay Gi"),
    pytest.param("2048Mi", "2Gi", id="mebibytes that make whole gibibytes become Gi"),
    pytest.param("1536Mi", "1536Mi", id="mebibytes that do not stay Mi"),
    pytest.param("96", "96", id="a plain count stays"),
    pytest.param("1000", "1k", id="a thousand becomes 1k as Quantity prints it"),
    pytest.param("0.5", "500m", id="a half becomes 500m"),
])
def test_quantities_print_as_resource_quantity_does(text: str, canonical: str) -> None:
    assert quantity_string(text) == canonical


def test_the_built_in_aws_catalog_has_the_aws_providers_figures() -> None:
    from kplan.io.catalog import read_catalog

    cat = read_catalog("aws")
    assert len(cat.instance_types) == 848
    m5 = cat.by_name()["m5.large"]
    assert (m5.architecture, m5.capacity["pods"], m5.capacity["memory"]) == ("amd64", 29, 7577 * 2**20)
    assert m5.allocatable["cpu"] == 1930 and m5.allocatable["memory"] == (7577 - 574 - 100) * 2**20
    assert {o.zone for o in m5.offerings} == {"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"}
    assert cat.by_name()["m6g.large"].architecture == "arm64"
