"""kplan's own account of a DynamicResources rejection (plugins/dra/diagnose.py): per node, which
claim and request fail and why, and on which nodes an empty copy would have devices for them."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.cluster.dra import DraState
from kplan.model.dra import DeviceFeatures
from kplan.model.parse_dra import DRA_PARSERS
from kplan.plugins.dra.diagnose import (
    CONSTRAINT,
    COUNTERS,
    ERROR,
    IN_USE,
    NO_DEVICE,
    NOT_ENOUGH,
    NOT_SELECTED,
    TAINTED,
    TOGETHER,
    diagnose,
    fresh_nodes,
)
from tests.builders import make_pod
from tests.unit.dra.test_dynamicresources import GPU, gpu_class, shared_claim

V1 = "resource.k8s.io/v1"


def gpu_slice(node: str, *devices: tuple[str, str, str], pool: str = "", **where: Any) -> dict[str, Any]:
    """A slice of ``devices`` (name, model, pcieRoot) for ``node`` (or ``where``: allNodes, nodeSelector)."""
    spec: dict[str, Any] = {"driver": GPU, "pool": {"name": pool or node, "generation": 1, "resourceSliceCount": 1},
                            "devices": [{"name": n, "attributes": {"model": {"string": m}, "pcieRoot": {"string": r}}}
                                        for n, m, r in devices]}
    spec.update(where or {"nodeName": node})
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{pool or node}-gpus"}, "spec": spec}


def claim_template(name: str, *requests: dict[str, Any], constraints: tuple[dict[str, Any], ...] = ()
                   ) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": list(requests), "constraints": list(constraints)}}}}


def request(name: str = "gpu", count: int = 1, model: str = "", mode: str = "") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "count": count}
    if mode:
        exactly = {"deviceClassName": "gpu", "allocationMode": mode}
    if model:
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{GPU}"].model == "{model}"'}}]
    return {"name": name, "exactly": exactly}


SAME_ROOT = {"requests": [], "matchAttribute": f"{GPU}/pcieRoot"}
H100 = [("gpu-0", "h100", "pci0"), ("gpu-1", "h100", "pci1")]


def state(objects: list[dict[str, Any]], claims: dict[str, str]) -> tuple[DraState, Any]:
    """The DRA objects and a pod with one claim per entry (pod claim name → template or ``claim:NAME``),
    its template claims made as the resourceclaim controller makes them."""
    parsed = [DRA_PARSERS[o["kind"]](o, "test") for o in [gpu_class(), *objects]]
    dra = DraState(*([x for x in parsed if type(x).__name__ == k]
                     for k in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")))
    entries = [{"name": n, "resourceClaimName": t[len("claim:"):]} if t.startswith("claim:") else
               {"name": n, "resourceClaimTemplateName": t} for n, t in claims.items()]
    pod = make_pod("p").spec(resourceClaims=entries).build()
    dra.create_template_claims(pod, lambda base: base + "x")
    return dra, pod


CASES = [
    ("a node publishing no slice has no matching device",
     [gpu_slice("other", *H100), claim_template("t", request())], "n1",
     [("gpu", "gpu", NO_DEVICE, "no matching device — no ResourceSlice publishes devices for this node")]),
    ("devices of the class matching no selector",
     [gpu_slice("n1", *H100), claim_template("t", request(model="a100"))], "n1",
     [("gpu", "gpu", NO_DEVICE, "no matching device — 2 devices of class gpu, none matching the request's "
                                "selectors")]),
    ("fewer matching devices than asked",
     [gpu_slice("n1", *H100), claim_template("t", request(count=3))], "n1",
     [("gpu", "gpu", NOT_ENOUGH, "not enough devices — asks for 3, 2 match")]),
    ("enough devices, but allocated to another claim",
     [gpu_slice("n1", *H100), shared_claim("held", "n1"), claim_template("t", request(count=2))], "n1",
     [("gpu", "gpu", IN_USE, "devices already in use — asks for 2, 2 match, 1 of them in use")]),
    ("All mode with one matching device in use",
     [gpu_slice("n1", *H100), shared_claim("held", "n1"), claim_template("t", request(mode="All"))], "n1",
     [("gpu", "gpu", IN_USE, "devices already in use — asks for all 2 matching devices, 1 in use")]),
    ("two free devices on different PCIe roots fail a matchAttribute constraint",
     [gpu_slice("n1", *H100), claim_template("t", request(count=2), constraints=(SAME_ROOT,))], "n1",
     [("gpu", "", CONSTRAINT, "constraint matchAttribute gpu.example.com/pcieRoot cannot be satisfied — the free "
                              "matching devices have pci0 ×1, pci1 ×1")]),
    ("two requests that each fit alone compete for the node's devices",
     [gpu_slice("n1", *H100), claim_template("t", request("a", 1), request("b", 2))], "n1",
     [("gpu", "", TOGETHER, "its requests together need more free devices than the node has")]),
    ("two claims that each fit alone compete for the node's devices",
     [gpu_slice("n1", *H100), claim_template("t", request(count=2))], "n1+other",
     [("gpu, other", "", TOGETHER, "each claim fits alone, but together they need more free devices than the node "
                                   "has")]),
    ("an allocated shared claim whose node selector picks another node",
     [gpu_slice("n1", *H100), gpu_slice("n2", *H100), shared_claim("held", "n2")], "n1+held",
     [("gpu", "", NOT_SELECTED, "allocated to devices this node cannot reach — its allocation's node selector does "
                                "not select this node")]),
    ("a selector error is the allocator's error",
     [gpu_slice("n1", *H100), claim_template("t", {"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [
         {"cel": {"expression": f'device.attributes["{GPU}"].missing == 1'}}]}})], "n1",
     [("gpu", "gpu", ERROR, "selector error — runtime: no such key: missing")]),
    ("nothing in the way", [gpu_slice("n1", *H100), claim_template("t", request(count=2))], "n1", []),
]


@pytest.mark.parametrize(("objects", "node", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_diagnose(objects: list[dict[str, Any]], node: str, want: list[tuple[str, str, str, str]]) -> None:
    # "NODE+held": the pod uses the claim "held"; "NODE+other": a second claim from the template
    node, _, extra = node.partition("+")
    claims = {"gpu": "claim:held"} if extra == "held" else {"gpu": "t"}
    if extra == "other":
        claims["other"] = "t"
    dra, pod = state(objects, claims)
    got = diagnose(dra, pod, node, {"kubernetes.io/hostname": node})
    assert [(p.claim, p.request, p.kind, p.text) for p in got] == want


FRESH_CASES = [
    ("a node whose own slice has the devices, even all in use, is named",
     [gpu_slice("n1", *H100), gpu_slice("n2", ("gpu-0", "l4", "pci0")), shared_claim("held", "n1"),
      claim_template("t", request(count=2, model="h100"))], {"gpu": "t"}, ["n1"]),
    ("a shared pool reaching every node gives no copy devices of its own",
     [gpu_slice("", *H100, pool="net", allNodes=True), claim_template("t", request(count=3))], {"gpu": "t"}, []),
    ("a slice selecting the node by hostname is copied, so the node is named",
     [gpu_slice("", *H100, pool="n1-nics", nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
         {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}),
      claim_template("t", request(count=2))], {"gpu": "t"}, ["n1"]),
    ("a claim pinned to a node by its allocation: no copy helps",
     [gpu_slice("n1", *H100), shared_claim("held", "n1")], {"gpu": "claim:held"}, []),
    ("no node has enough matching devices",
     [gpu_slice("n1", *H100), claim_template("t", request(count=4))], {"gpu": "t"}, []),
]


@pytest.mark.parametrize(("objects", "claims", "want"), [c[1:] for c in FRESH_CASES], ids=[c[0] for c in FRESH_CASES])
def test_fresh_nodes(objects: list[dict[str, Any]], claims: dict[str, str], want: list[str]) -> None:
    dra, pod = state(objects, claims)
    nodes = [(n, {"kubernetes.io/hostname": n}) for n in ("n1", "n2", "n3")]
    assert fresh_nodes(dra, pod, nodes) == want


def test_untolerated_device_taints_are_named_when_they_count() -> None:
    objects = [gpu_slice("n1", *H100), claim_template("t", request(count=2))]
    objects[0]["spec"]["devices"][0]["taints"] = [{"key": "maintenance", "value": "planned", "effect": "NoSchedule"}]
    dra, pod = state(objects, {"gpu": "t"})
    assert diagnose(dra, pod, "n1", {}) == []  # DRADeviceTaints off (1.34, 1.35): the taint does not count
    dra.features = DeviceFeatures(device_taints=True)
    [problem] = diagnose(dra, pod, "n1", {})
    assert (problem.kind, problem.text) == (TAINTED, "devices tainted — 1 of the 2 matching devices has a taint "
                                                     "the request does not tolerate (maintenance=planned:NoSchedule)")


def test_shared_counters_used_up_are_named_with_partitionable_devices() -> None:
    counters = {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": "n1-counters"},
                "spec": {"driver": GPU, "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 2},
                         "sharedCounters": [{"name": "mem", "counters": {"memory": {"value": "40Gi"}}}]}}
    devices = gpu_slice("n1", *H100)
    devices["spec"]["pool"]["resourceSliceCount"] = 2
    for d in devices["spec"]["devices"]:
        d["consumesCounters"] = [{"counterSet": "mem", "counters": {"memory": {"value": "40Gi"}}}]
    dra, pod = state([counters, devices, shared_claim("held", "n1"), claim_template("t", request())], {"gpu": "t"})
    dra.features = DeviceFeatures(partitionable_devices=True, skip_unusable_pools=True)
    [problem] = diagnose(dra, pod, "n1", {})
    assert (problem.kind, problem.text) == (COUNTERS, "shared counters used up — 2 of the 2 matching devices consume "
                                                      "more of their pool's counters than the allocated devices leave")
