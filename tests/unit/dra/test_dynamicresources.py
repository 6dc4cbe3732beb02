"""DynamicResources in whole simulations: the plugin's points, the resourceclaim controller and
the messages upstream writes (scheduler-reference-dra.md section 1, scheduler-reference.md 13.1)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from kplan.framework.release import Release
from kplan.plugins.dynamicresources import DynamicResources
from tests.builders import make_node, make_pod, simulate

GPU = "gpu.example.com"


def gpu_class(name: str = "gpu", expr: str = f'device.driver == "{GPU}"') -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expr}}]}}


def gpus(node: str, n: int) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
            "spec": {"driver": GPU, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                 "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": "h100"}}}
                                 for i in range(n)]}}


def template(name: str = "one-gpu", count: int = 1, cls: str = "gpu") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": cls,
                                                                                    "count": count}}]}}}}


def shared_claim(name: str, node: str | None = None, device: str = "gpu-0") -> dict[str, Any]:
    c: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": name, "namespace": "default"},
                         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    if node:
        c["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": GPU, "pool": node, "device": device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    return c


def with_template(name: str, tpl: str = "one-gpu") -> Any:
    return make_pod(name).req(cpu="100m").spec(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": tpl}])


def with_claim(name: str, claim: str) -> Any:
    return make_pod(name).req(cpu="100m").spec(resourceClaims=[{"name": "gpu", "resourceClaimName": claim}])


NODES = [make_node("n1").alloc(cpu="8", memory="8Gi", pods="10"),
         make_node("n2").alloc(cpu="8", memory="8Gi", pods="10")]


def outcome(result: Any, name: str) -> tuple[str, str | None, str | None]:
    o = result.outcome("default", name)
    return o.status, o.node, o.message


CASES = [
    ("claims from a template take free devices until none is left",
     [gpu_class(), gpus("n1", 2), template()], [with_template("a"), with_template("b"), with_template("c")],
     {"a": ("Scheduled", "n1", None), "b": ("Scheduled", "n1", None),
      "c": ("Unschedulable", None, "0/2 nodes are available: 2 cannot allocate all claims. "
                                   "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                                   "scheduling.")}),
    ("a missing template leaves the pod waiting at PreEnqueue with no message",
     [gpu_class(), gpus("n1", 1)], [with_template("a", "nope")], {"a": ("Unschedulable", None, None)}),
    ("a missing device class rejects the pod at PreFilter",
     [gpus("n1", 1), template(cls="absent")], [with_template("a")],
     {"a": ("Unschedulable", None, "0/2 nodes are available: request gpu: device class absent does not exist. "
                                   "preemption: 0/2 nodes are available: 2 Preemption "
                                   "is not helpful for scheduling.")}),
    ("an allocated shared claim pins every pod sharing it to its node",
     [gpu_class(), gpus("n1", 1), gpus("n2", 1), shared_claim("shared", "n2")],
     [with_claim("a", "shared"), with_claim("b", "shared")],
     {"a": ("Scheduled", "n2", None), "b": ("Scheduled", "n2", None)}),
    ("an unallocated shared claim is allocated once and then pins",
     [gpu_class(), gpus("n2", 1), shared_claim("shared")],
     [with_claim("a", "shared"), with_claim("b", "shared")],
     {"a": ("Scheduled", "n2", None), "b": ("Scheduled", "n2", None)}),
    ("an allocator error aborts the attempt with the filter plugin's text",
     [gpu_class(expr=f'device.attributes["{GPU}"].missing == 1'), gpus("n1", 1), template()], [with_template("a")],
     {"a": ("Unschedulable", None, 'running "DynamicResources" filter plugin: class gpu: selector #0: CEL runtime '
                                   "error: no such key: missing")}),
]


@pytest.mark.parametrize(("objects", "pending", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_dynamic_resources(objects: list[Any], pending: list[Any], want: dict[str, Any]) -> None:
    result = simulate(NODES, pending, objects=objects)
    assert {name: outcome(result, name) for name in want} == want


def test_a_preempted_pod_frees_its_devices_for_a_later_pod() -> None:
    claim = shared_claim("held", "n1")
    claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    claim["status"]["reservedFor"] = [{"resource": "pods", "name": "low", "uid": "default/low"}]
    low = make_pod("low").req(cpu="8").priority_class("low").node_name("n1").spec(
        resourceClaims=[{"name": "gpu", "resourceClaimName": "held"}])
    # "high" needs the cpu the low pod holds: preemption evicts it, which frees the low pod's
    # device as well; "later" then finds that device free
    high = make_pod("high").req(cpu="8500m").priority_class("high").node_selector(**{"kubernetes.io/hostname": "n1"})
    later = with_template("later").priority_class("mid")
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
               for n, v in (("low", 1), ("mid", 50), ("high", 100))]
    nodes = [make_node("n1").alloc(cpu="9", memory="8Gi", pods="10").labels(**{"kubernetes.io/hostname": "n1"})]
    result = simulate(nodes, [high, later], running=[low], objects=[*classes, gpu_class(), gpus("n1", 1), template(),
                                                                     claim])
    assert [e.pod.name for e in result.preempted] == ["low"]
    assert outcome(result, "high")[:2] == ("Scheduled", "n1")
    assert outcome(result, "later")[:2] == ("Scheduled", "n1")


class _Handle:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.release = Release.of("1.34")


def test_postfilter_tries_the_unavailable_claims_as_a_small_go_map_iterates() -> None:
    # one group of 8 slots in insertion order, a random start slot, wrapping around: with 3
    # entries the first comes first 6 times in 8, each other one time in 8
    plugin = DynamicResources(None, _Handle(7))  # type: ignore[arg-type]
    firsts = Counter(plugin._deallocation_order([4, 1, 2])[0] for _ in range(8000))
    assert set(firsts) == {4, 1, 2}
    assert abs(firsts[4] / 8000 - 6 / 8) < 0.02 and abs(firsts[1] / 8000 - 1 / 8) < 0.02
    assert plugin._deallocation_order([5, 0, 3]) in ([5, 0, 3], [0, 3, 5], [3, 5, 0])
    assert plugin._deallocation_order([9]) == [9]
