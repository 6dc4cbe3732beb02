"""What 1.36 and 1.37 schedule differently from 1.34, end to end: the release's rules (profile,
plugin rules, gates) through a whole simulation."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import PreFilterResult
from kplan.framework.release import Release
from kplan.io.workspace import load_scenario
from kplan.model.raw import RawObject
from kplan.plugins import FACTORIES, in_tree_registry
from kplan.plugins.nodename import NodeName
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import Simulation
from tests.builders import make_pod

Obj = dict[str, Any]


def node(name: str, cpu: str, memory: str, *, features: tuple[str, ...] = ()) -> Obj:
    d: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
              "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}
    if features:
        d["status"]["declaredFeatures"] = list(features)
    return d


def pod(name: str, cpu: str, memory: str, on: str = "") -> Obj:
    d: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
              "spec": {"containers": [{"name": "c", "image": "app", "resources": {
                  "requests": {"cpu": cpu, "memory": memory}}}]}}
    if on:
        d["spec"]["nodeName"] = on
    return d


def simulate(version: str, cluster: list[Obj], manifests: list[Obj]) -> dict[str, tuple[str | None, str | None]]:
    release = Release.of(version)
    scenario = load_scenario([RawObject(d, "cluster.yaml") for d in cluster],
                             [RawObject(d, "app.yaml") for d in manifests])
    result = Simulation(scenario.snapshot, SchedulerSetup.of(release, None), scenario.pending,
                        lowest_name=True, pdb_allowed=scenario.pdb_allowed,
                        created_after=scenario.inputs.created_after).run()
    return {o.pod.name: (o.node, o.message) for o in result.pods}


# Node a (4 cpu, 4Gi) runs 1 cpu; b (8 cpu, 4Gi) is empty; the pod asks 1 cpu and 3Gi.
# NodeResourcesFit (LeastAllocated): a (50 + 25) / 2 = 37, b (87 + 25) / 2 = 56.
# BalancedAllocation 1.34: a 1 - |0.5 - 0.75| / 2 → 87, b 1 - |0.125 - 0.75| / 2 → 68: 124 each, a by name.
# 1.36: a's balance stays 87 (from 0.25/0: 87) → 75; b's goes from 100 to 68 → 50 + 18 / 2 = 59: b, 115 to 112.
BALANCE = [node("a", "4", "4Gi"), node("b", "8", "4Gi"), pod("r", "1", "0", on="a")]


@pytest.mark.parametrize("version, placed", [("1.34", "a"), ("1.36", "b"), ("1.37", "b")])
def test_balanced_allocation_scores_the_change_of_balance_from_1_36(version: str, placed: str) -> None:
    assert simulate(version, BALANCE, [pod("p", "1", "3Gi")])["p"][0] == placed


def _needs_restart_all(name: str) -> Obj:
    d = pod(name, "100m", "100Mi")
    d["spec"]["containers"][0]["restartPolicyRules"] = [
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]
    return d


@pytest.mark.parametrize("version, outcome", [
    ("1.34", ("a", None)),
    ("1.36", ("b", None)),
    ("1.37", ("b", None)),
])
def test_node_declared_features_filters_from_1_36(version: str, outcome: tuple[str, None]) -> None:
    cluster = [node("a", "4", "4Gi"), node("b", "4", "4Gi", features=("RestartAllContainersOnContainerExits",))]
    assert simulate(version, cluster, [_needs_restart_all("p")])["p"] == outcome


@pytest.mark.parametrize("version, post_filter", [
    ("1.36", "no new claims to deallocate, "),
    ("1.37", ""),  # DynamicResources' PostFilter gives no reason for a pod without claims from 1.37
])
def test_no_node_declaring_the_feature_is_an_unresolvable_fit_error(version: str, post_filter: str) -> None:
    placed, message = simulate(version, [node("a", "4", "4Gi"), node("b", "4", "4Gi")], [_needs_restart_all("p")])["p"]
    assert placed is None
    assert message == ("0/2 nodes are available: 2 node(s) didn't match Pod's required features. " + post_filter
                       + "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")


@pytest.mark.parametrize("version, rules", [
    ("1.34", {"NodeResourcesBalancedAllocation": {"scores_balance_change": False},
              "ImageLocality": {"sums_image_volumes": False, "counts_image_volumes": False},
              "NodeName": {"pre_filter": False}}),
    ("1.36", {"NodeResourcesBalancedAllocation": {"scores_balance_change": True},
              "ImageLocality": {"sums_image_volumes": True, "counts_image_volumes": False},
              "NodeDeclaredFeatures": {"feature_registry": "1.36"}, "NodeName": {"pre_filter": False}}),
    ("1.37", {"NodeResourcesBalancedAllocation": {"scores_balance_change": True},
              "ImageLocality": {"sums_image_volumes": True, "counts_image_volumes": True},
              "NodeDeclaredFeatures": {"feature_registry": "1.37"}, "NodeName": {"pre_filter": True}}),
], ids=["1.34 scores the balance and container images only",
        "1.36 scores the change of balance and sums image volumes",
        "1.37 counts image volumes, has 1.37's feature registry and NodeName's PreFilter"])
def test_each_release_gives_its_plugins_their_rules(version: str, rules: dict[str, dict[str, object]]) -> None:
    release = Release.of(version)
    registry = in_tree_registry(release)
    for name, want in rules.items():
        spec = registry.get(name)
        assert spec is not None and spec.plugin_type is FACTORIES[name], name
        assert {k: release.plugin_rules[name][k] for k in want} == want, name


@pytest.mark.parametrize("version, head", [
    ("1.36", ["SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName"]),
    ("1.37", ["SchedulingGates", "PrioritySort", "NodeName", "NodeUnschedulable"]),
])
def test_default_profile_order(version: str, head: list[str]) -> None:
    profile = [name for name, _ in Release.of(version).default_profile]
    assert profile[:4] == head and profile[-2:] == ["DefaultBinder", "NodeDeclaredFeatures"]
    assert dict(Release.of(version).default_profile)["DynamicResources"] == 2


@pytest.mark.parametrize("version, gates, on", [
    ("1.36", "", {"NodeDeclaredFeatures", "DRAExtendedResource"}),
    ("1.36", "StorageCapacityScoring=true,VolumeLimitScaling=true", {"StorageCapacityScoring", "VolumeLimitScaling"}),
    ("1.37", "", {"StorageCapacityScoring", "VolumeLimitScaling", "NodeDeclaredFeatures"}),
])
def test_release_gates(version: str, gates: str, on: set[str]) -> None:
    release = Release.of(version, gates)
    assert on <= {g.value for g, v in release.features.values if v}


@pytest.mark.parametrize("version, gates, message", [
    ("1.37", "SchedulerQueueingHints=true", "unrecognized feature gate: SchedulerQueueingHints"),
    ("1.37", "NodeDeclaredFeatures=false", "cannot set feature gate NodeDeclaredFeatures to false, "
                                           "feature is locked to true"),
    ("1.36", "NodeDeclaredFeatures=false", "kplan models kube-scheduler 1.36 with this gate at its default"),
])
def test_release_gate_refusals(version: str, gates: str, message: str) -> None:
    from kplan.errors import ConfigError
    with pytest.raises(ConfigError) as e:
        Release.of(version, gates)
    assert message in str(e.value)


def test_node_name_pre_filter_restricts_the_cycle_to_the_named_node_from_1_37() -> None:
    plugin = NodeName(None, None)  # type: ignore[arg-type]
    assert plugin.pre_filter(CycleState(), make_pod().node_name("n1").build())[0] == PreFilterResult(frozenset({"n1"}))
    assert plugin.pre_filter(CycleState(), make_pod().build())[0] is None


LIST_DEFAULTING = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                   "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                       {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}]}


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_every_plugin_signs_plain_pods_so_batching_stays_on(version: str) -> None:
    # 1.35's NodeResourcesFit and BalancedAllocation refuse to sign every pod once DRAExtendedResource
    # is on; from 1.36 (where it is on by default) only pods with DRA-served extended resources
    release = Release.of(version)
    scenario = load_scenario([RawObject(node("a", "4", "4Gi"), "cluster.yaml")],
                             [RawObject(pod("p", "1", "1Gi"), "app.yaml")])
    sim = Simulation(scenario.snapshot, SchedulerSetup.of(release, LIST_DEFAULTING), scenario.pending,
                     lowest_name=True)
    fw = next(iter(sim.handle.frameworks.values()))
    assert fw.batching and fw.sign_pod(sim.pending[0]) is not None


@pytest.mark.parametrize("defaulting", ["System", "List"])
def test_sign_pod_asking_the_last_refuser_first_gives_every_pod_its_own_signature(defaulting: str) -> None:
    # Framework.sign_pod asks first the signer that refused the last unsignable pod: on pods
    # signable or not, for different reasons, in turn, each answer is a fresh framework's
    release = Release.of("1.37")
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "x"}}}]}}
    manifests = [pod("plain", "1", "1Gi"), pod("other", "2", "1Gi"),
                 {**pod("affine", "1", "1Gi"), "spec": {**pod("affine", "1", "1Gi")["spec"], "affinity": affinity}},
                 {**pod("spread", "1", "1Gi"), "spec": {**pod("spread", "1", "1Gi")["spec"], "topologySpreadConstraints": [
                     {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
                      "labelSelector": {"matchLabels": {"app": "x"}}}]}}]
    config = {**LIST_DEFAULTING, "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "PodTopologySpread", "args": {"defaultingType": defaulting}}]}]}
    scenario = load_scenario([RawObject(node("a", "4", "4Gi"), "cluster.yaml")],
                             [RawObject(d, "app.yaml") for d in manifests])
    sim = Simulation(scenario.snapshot, SchedulerSetup.of(release, config), scenario.pending,
                     lowest_name=True)
    fw = next(iter(sim.handle.frameworks.values()))
    fresh = {p.name: Simulation(scenario.snapshot, SchedulerSetup.of(release, config), [p],
                                lowest_name=True) for p in sim.pending}
    answers = []
    for p in [*sim.pending, *reversed(sim.pending), *sim.pending]:
        want = next(iter(fresh[p.name].handle.frameworks.values())).sign_pod(p)
        answers.append(want is None)
        assert fw.sign_pod(p) == want
    assert any(answers) and (defaulting == "System" or not all(answers))
