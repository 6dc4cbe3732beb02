"""Extended resources served by DRA devices (DRAExtendedResource, KEP-5004): the rules of
plugins/dra/extended.py one by one, and whole simulations per release (tests/fidelity/regressions/
dra-extended-resources-* hold the real scheduler's answers on a larger case)."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.errors import InputError, UnsupportedError
from kplan.framework.release import Release
from kplan.model.dra import DeviceClass
from kplan.model.parse_dra import parse_device_class, parse_resource_slice
from kplan.plugins.dra import extended as ext
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import Simulation
from tests.builders import make_node, make_pod, scenario, simulate
from tests.unit.dra.test_dynamicresources import gpus, outcome, template

GPU_RES = "example.com/gpu"


def gpu_class(name: str = "gpu", resource: str | None = GPU_RES, created: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
    if resource:
        d["spec"]["extendedResourceName"] = resource
    if created:
        d["metadata"]["creationTimestamp"] = created
    return d


def pod_of(*containers: dict[str, str], inits: tuple[tuple[dict[str, str], bool], ...] = ()) -> Any:
    b = make_pod("p")
    for c in containers:
        b.container(c, c)
    for c, sidecar in inits:
        b.init_container(c, c, sidecar=sidecar)
    return b.build()


# ------------------------------------------------------------------------ the class mapping

def cls(name: str, resource: str = "", created: float | None = None) -> DeviceClass:
    return DeviceClass(name, extended_resource_name=resource, created=created)


MAPPING_CASES = [
    ("every class serves its implicit name, and its extendedResourceName",
     [cls("gpu", GPU_RES), cls("fpga")],
     {GPU_RES: "gpu", "deviceclass.resource.kubernetes.io/gpu": "gpu", "deviceclass.resource.kubernetes.io/fpga": "fpga"}),
    ("of two classes naming one resource at the same time, the lower name wins; the other gets nothing",
     [cls("b", GPU_RES), cls("a", GPU_RES)],
     {GPU_RES: "a", "deviceclass.resource.kubernetes.io/a": "a"}),
    ("the newer class wins the name and the older keeps its implicit name",
     [cls("a", GPU_RES, 10.0), cls("b", GPU_RES, 20.0)],
     {GPU_RES: "b", "deviceclass.resource.kubernetes.io/a": "a", "deviceclass.resource.kubernetes.io/b": "b"}),
    ("an older class added later loses the name and its implicit name",
     [cls("a", GPU_RES, 20.0), cls("b", GPU_RES, 10.0)],
     {GPU_RES: "a", "deviceclass.resource.kubernetes.io/a": "a"}),
]


@pytest.mark.parametrize(("classes", "want"), [c[1:] for c in MAPPING_CASES], ids=[c[0] for c in MAPPING_CASES])
def test_resolve_classes(classes: list[DeviceClass], want: dict[str, str]) -> None:
    assert {r: c.name for r, c in ext.resolve_classes(classes).items()} == want


# ------------------------------------------------------------------------ a node's variant

MAPPING = ext.resolve_classes([cls("gpu", GPU_RES)])

VARIANT_CASES = [
    ("a node without the resource leaves it to DRA", {}, False, (GPU_RES,)),
    ("a node advertising it at 0 leaves it to DRA too", {GPU_RES: 0}, False, (GPU_RES,)),
    ("a device plugin serves it: nothing for DRA", {GPU_RES: 4}, False, ext.PASS),
    ("a device plugin serves it but the pod has claims: an empty claim is allocated", {GPU_RES: 4}, True, ()),
]


@pytest.mark.parametrize(("alloc", "claims", "want"), [c[1:] for c in VARIANT_CASES], ids=[c[0] for c in VARIANT_CASES])
def test_filter_extended_resources(alloc: dict[str, int], claims: bool, want: Any) -> None:
    assert ext.filter_extended_resources(pod_of({GPU_RES: "1"}), MAPPING, alloc, claims) == want


def test_a_resource_neither_the_node_nor_a_class_provides_fails_the_node() -> None:
    pod = pod_of({GPU_RES: "1", "example.com/other": "1"})
    assert ext.filter_extended_resources(pod, MAPPING, {}, False) == ext.FAIL
    assert ext.filter_extended_resources(pod, MAPPING, {"example.com/other": 1}, False) == (GPU_RES,)


# ------------------------------------------------------------------------ the claim's requests

REQUEST_CASES = [
    ("one request per container, named by container index and the resource's sorted position",
     pod_of({"cpu": "1", GPU_RES: "2"}, {GPU_RES: "1"}),
     [("container-0-request-1", 2), ("container-1-request-0", 1)], True),
    ("an init container reuses the later containers' requests before asking for more",
     pod_of({GPU_RES: "1"}, inits=(({GPU_RES: "3"}, False),)),
     [("container-0-request-0", 2), ("container-1-request-0", 1)], True),
    ("init containers share one request, the largest",
     pod_of({"cpu": "1"}, inits=(({GPU_RES: "1"}, False), ({GPU_RES: "2"}, False))),
     [("container-1-request-0", 2)], True),
    ("a sidecar is long-lived: its request counts beside the containers'",
     pod_of({GPU_RES: "1"}, inits=(({GPU_RES: "2"}, False), ({GPU_RES: "1"}, True))),
     [("container-1-request-0", 1), ("container-2-request-0", 1)], True),
    ("a request that is not an integer gets no devices and maps nothing",
     pod_of({GPU_RES: "500m"}), [], False),
]


@pytest.mark.parametrize(("pod", "want", "mapped"), [c[1:] for c in REQUEST_CASES], ids=[c[0] for c in REQUEST_CASES])
def test_create_requests(pod: Any, want: list[tuple[str, int]], mapped: bool) -> None:
    requests, got_mapped = ext.create_requests(pod, (GPU_RES,), MAPPING)
    assert [(r.name, r.exactly.count) for r in requests if r.exactly] == want
    assert all(r.exactly and r.exactly.class_name == "gpu" for r in requests)
    assert got_mapped == mapped


def test_no_resource_served_by_dra_gives_an_empty_claim_that_maps_nothing() -> None:
    assert ext.create_requests(pod_of({GPU_RES: "1"}), (), MAPPING) == ((), False)


# ------------------------------------------------------------------------ whole simulations

NODES = [make_node("n1").alloc(cpu="8", memory="8Gi", pods="10"),
         make_node("n2").alloc(cpu="8", memory="8Gi", pods="10", **{GPU_RES: "1"})]


def gpu_pod(name: str, n: str = "1", cpu: str = "1") -> Any:
    return make_pod(name).req(cpu=cpu, **{GPU_RES: n}).lim(**{GPU_RES: n})


SIM_CASES = [
    ("1.34 ignores extendedResourceName: only the device plugin's GPU", "1.34",
     [gpu_pod("a"), gpu_pod("b")],
     {"a": ("Scheduled", "n2"), "b": ("Unschedulable", None)}),
    ("1.36 serves the resource from DRA devices where the node does not advertise it", "1.36",
     [gpu_pod("a", "2"), gpu_pod("b"), gpu_pod("c")],
     {"a": ("Scheduled", "n1"), "b": ("Scheduled", "n2"), "c": ("Unschedulable", None)}),
    ("1.37 likewise", "1.37",
     [gpu_pod("a", "2"), gpu_pod("b"), gpu_pod("c")],
     {"a": ("Scheduled", "n1"), "b": ("Scheduled", "n2"), "c": ("Unschedulable", None)}),
]


@pytest.mark.parametrize(("release", "pending", "want"), [c[1:] for c in SIM_CASES], ids=[c[0] for c in SIM_CASES])
def test_extended_resources_in_a_simulation(release: str, pending: list[Any], want: dict[str, Any]) -> None:
    result = simulate(NODES, pending, objects=[gpu_class(), gpus("n1", 2)], release=release)
    assert {name: outcome(result, name)[:2] for name in want} == want


def test_1_36_with_the_gate_off_ignores_extended_resource_names_as_1_34() -> None:
    # the 1.36 oracle with ORACLE_FEATURE_GATES=DRAExtendedResource=false gives 1.34's results on
    # tests/fidelity/regressions/dra-extended-resources-1.36
    off = Release.of("1.36", "DRAExtendedResource=false")
    result = simulate(NODES, [gpu_pod("a"), gpu_pod("b")], objects=[gpu_class(), gpus("n1", 2)], release=off)
    assert outcome(result, "a")[:2] == ("Scheduled", "n2")
    assert outcome(result, "b")[2] == (
        "0/2 nodes are available: 2 Insufficient example.com/gpu. no new claims to deallocate, preemption: 0/2 nodes "
        "are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.")


def test_the_messages_of_a_pod_dra_cannot_serve() -> None:
    result = simulate(NODES, [gpu_pod("a", "3")], objects=[gpu_class(), gpus("n1", 2)], release="1.36")
    assert outcome(result, "a")[2] == (
        "0/2 nodes are available: 1 Insufficient example.com/gpu, 1 cannot allocate all claims. still not "
        "schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")


def test_a_preempted_pod_frees_the_devices_of_the_claim_the_scheduler_made_for_it() -> None:
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
               for n, v in (("low", 1), ("mid", 50), ("high", 100))]
    nodes = [make_node("n1").alloc(cpu="4", memory="8Gi", pods="10")]
    low = gpu_pod("low", "1", cpu="3").priority_class("low").node_name("n1")
    held = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "low-extended-resources-bcdfg", "namespace": "default",
                         "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                         "finalizers": ["resource.kubernetes.io/delete-protection"],
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "low", "uid": "default/low",
                                              "controller": True}]},
            "spec": {"devices": {"requests": [{"name": "container-0-request-1",
                                               "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "container-0-request-1", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}},
                "reservedFor": [{"resource": "pods", "name": "low", "uid": "default/low"}]}}
    # high needs only cpu and evicts low; the resourceclaim controller then frees low's claim, whose
    # device the later pod takes
    high = make_pod("high").req(cpu="3").priority_class("high")
    later = gpu_pod("later", "1", cpu="1").priority_class("mid")
    result = simulate(nodes, [high, later], running=[low], objects=[*classes, gpu_class(), gpus("n1", 1), held],
                      release="1.36")
    assert [e.pod.name for e in result.preempted] == ["low"]
    assert outcome(result, "high")[:2] == ("Scheduled", "n1")
    assert outcome(result, "later")[:2] == ("Scheduled", "n1")


def test_a_pod_with_claims_on_a_node_whose_device_plugin_serves_everything_is_refused() -> None:
    pod = gpu_pod("a").spec(resourceClaims=[{"name": "g", "resourceClaimTemplateName": "one-gpu"}])
    nodes = [make_node("n2").alloc(cpu="8", memory="8Gi", pods="10", **{GPU_RES: "1"})]
    with pytest.raises(UnsupportedError, match="nil or empty request mappings"):
        simulate(nodes, [pod], objects=[gpu_class(), gpu_class("other", None), gpus("n2", 1),
                                        template(cls="other")], release="1.36")


# ------------------------------------------------------------------------ parsing

PARSE_CASES = [
    ("an extendedResourceName in the kubernetes.io domain",
     lambda: parse_device_class({**gpu_class(resource="kubernetes.io/gpu")}, "c.yaml"),
     r'c.yaml: DeviceClass gpu: spec.extendedResourceName: Invalid value: "kubernetes.io/gpu": must be a valid '
     r"extended resource name"),
    ("an extendedResourceName without a domain",
     lambda: parse_device_class({**gpu_class(resource="gpu")}, "c.yaml"),
     r"spec.extendedResourceName: Invalid value: \"gpu\""),
    ("a device's binding conditions (KEP-5007)",
     lambda: parse_resource_slice({**gpus("n1", 1), "spec": {**gpus("n1", 1)["spec"], "devices": [
         {"name": "gpu-0", "bindingConditions": ["Attached"]}]}}, "s.yaml"),
     r"s.yaml: ResourceSlice n1-gpu: spec.devices\[0\].bindingConditions: kplan does not model device binding "
     r"conditions \(KEP-5007"),
    ("a device bound to its node until binding (KEP-5007)",
     lambda: parse_resource_slice({**gpus("n1", 1), "spec": {**gpus("n1", 1)["spec"], "devices": [
         {"name": "gpu-0", "bindsToNode": True}]}}, "s.yaml"),
     r"spec.devices\[0\].bindsToNode: kplan does not model device binding conditions"),
]


@pytest.mark.parametrize(("parse", "want"), [c[1:] for c in PARSE_CASES], ids=[c[0] for c in PARSE_CASES])
def test_refused_inputs_name_file_object_and_field(parse: Any, want: str) -> None:
    with pytest.raises(InputError, match=want):
        parse()


def test_a_device_class_keeps_its_extended_resource_name_and_creation_time() -> None:
    c = parse_device_class(gpu_class(created="2025-01-01T00:00:00Z"))
    assert (c.extended_resource_name, c.created) == (GPU_RES, 1735689600.0)


# ------------------------------------------------------------------------ scoring (#134058)

def _scoring_config(plugin: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": 100,
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": plugin, "args": args}]}]}


MOST_GPU = _scoring_config("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated", "resources": [
    {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU_RES, "weight": 10}]}})


@pytest.mark.parametrize(("release", "want"), [("1.36", "n1"), ("1.37", "n1"), ("1.34", "n2")])
def test_fit_scores_the_devices_dra_serves_a_resource_from(release: str, want: str) -> None:
    # MostAllocated: n1's one DRA GPU in use is 1 of 1, n2's device-plugin GPU 1 of 8; at 1.34
    # n1 cannot serve the resource at all
    nodes = [make_node("n1").alloc(cpu="8", memory="8Gi", pods="10"),
             make_node("n2").alloc(cpu="8", memory="8Gi", pods="10", **{GPU_RES: "8"})]
    result = simulate(nodes, [gpu_pod("a")], objects=[gpu_class(), gpus("n1", 1)], config=MOST_GPU, release=release)
    assert outcome(result, "a")[:2] == ("Scheduled", want)


def test_balanced_allocation_on_a_class_with_selectors_is_refused_as_the_crash_it_is_upstream() -> None:
    config = _scoring_config("NodeResourcesBalancedAllocation", {"resources": [
        {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU_RES, "weight": 1}]})
    with pytest.raises(UnsupportedError, match="kube-scheduler crashes here: NodeResourcesBalancedAllocation"):
        simulate(NODES, [gpu_pod("a")], objects=[gpu_class(), gpus("n1", 2)], config=config, release="1.36")


def test_explain_names_what_the_extended_resources_need_of_their_class() -> None:
    from types import SimpleNamespace

    from kplan.cluster.dra import DraState
    from kplan.model.parse_dra import parse_resource_slice
    from kplan.plugins.dynamicresources import DynamicResources

    dra = DraState([parse_device_class(gpu_class())], [parse_resource_slice(gpus("n1", 2))])
    handle = SimpleNamespace(snapshot=SimpleNamespace(dra=dra), release=Release.of("1.36"))
    plugin = DynamicResources(None, handle)  # type: ignore[arg-type]
    n1 = make_node("n1").alloc(cpu="8", memory="8Gi", pods="10").build()
    table = SimpleNamespace(nodes=[n1])
    assert plugin.explain_rejection(gpu_pod("a", "3").build(), table, 0) == (
        "example.com/gpu: 3 device(s) of DeviceClass gpu wanted, of 2 on the node in all")
    other = make_pod("b").req(**{"example.com/other": "1", GPU_RES: "1"}).build()
    assert plugin.explain_rejection(other, table, 0) == (
        "no DeviceClass serves example.com/other and the node does not advertise it")


# ------------------------------------------------------------------------ SignPod per release

SIGN_CASES = [
    ("1.34 knows no DRAExtendedResource: a pod asking for the served resource is signed", "1.34", "", True, True),
    ("1.35 with the gate off signs it", "1.35", "", True, True),
    ("1.36 refuses a pod asking for a resource a DeviceClass serves", "1.36", "", True, False),
    ("1.36 signs a pod without such a resource", "1.36", "", False, True),
    ("1.36 with the gate off signs a pod asking for it", "1.36", "DRAExtendedResource=false", True, True),
    ("1.38 (the gate locked on) refuses a pod asking for it", "1.38", "", True, False),
]


@pytest.mark.parametrize(("version", "gates", "asks", "signed"), [c[1:] for c in SIGN_CASES],
                         ids=[c[0] for c in SIGN_CASES])
def test_fit_and_balanced_allocation_sign_pods_as_their_release_says(version: str, gates: str, asks: bool,
                                                                      signed: bool) -> None:
    # the SignPod rule each constructor picks (noderesources/fit.py sign_pod_rule; #134058)
    release = Release.of(version, gates)
    pending = gpu_pod("a") if asks else make_pod("a").req(cpu="1")
    sc = scenario(NODES, [pending], objects=[gpu_class(), gpus("n1", 2)], release=release)
    sim = Simulation(sc.snapshot, SchedulerSetup.of(release), sc.pending, lowest_name=True)
    plugins = next(iter(sim.handle.frameworks.values())).plugins
    for name in ("NodeResourcesFit", "NodeResourcesBalancedAllocation"):
        sign_pod = plugins[name].sign_pod
        assert (sign_pod(sim.pending[0]) is not None) == signed, name
