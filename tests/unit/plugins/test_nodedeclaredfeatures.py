"""NodeDeclaredFeatures (KEP-5328): the features a pod needs, the ones a node declares, the filter."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.framework.features import Features, Gate
from kplan.framework.release import KubeVersion, Release
from kplan.framework.status import Code
from kplan.model.parse import parse_node, parse_pod
from kplan.plugins.nodedeclaredfeatures import (
    FEATURES_1_36,
    REASON,
    NodeDeclaredFeatures,
    declared,
)
from tests.builders import (
    PodBuilder,
    Verdict,
    make_node,
    make_plugin,
    make_pod,
    make_snapshot,
    run_filter,
    run_pre_filter,
)

RESTART = "RestartAllContainersOnContainerExits"
USERNS = "UserNamespacesHostNetworkSupport"
BIND = "VolumeBindMountOptions"
OK = Verdict(Code.SUCCESS, ())
NO = Verdict(Code.UNRESOLVABLE, (REASON,))


def _restart_rule(pod: PodBuilder, action: str = "RestartAllContainers", *, init: bool = False) -> PodBuilder:
    c: dict[str, Any] = {"name": "r", "image": "img", "restartPolicyRules": [
        {"action": action, "exitCodes": {"operator": "In", "values": [42]}}]}
    if init:
        c["restartPolicy"] = "Always"
        pod.d["spec"].setdefault("initContainers", []).append(c)
    else:
        pod.d["spec"]["containers"].append(c)
    return pod


def _spec(pod: PodBuilder, **fields: Any) -> PodBuilder:
    pod.d["spec"].update(fields)
    return pod


def _bind_mount(pod: PodBuilder, field: str = "containers") -> PodBuilder:
    pod.d["spec"].setdefault(field, []).append({"name": "m", "image": "img", "volumeMounts": [
        {"name": "v", "mountPath": "/v", "bindMountOptions": ["noexec"]}]})
    return pod


@pytest.mark.parametrize("pod, needs_1_36, needs_1_37", [
    pytest.param(make_pod(), set(), set(), id="a plain pod needs nothing"),
    pytest.param(_restart_rule(make_pod("p")), {RESTART}, {RESTART},
                 id="a container rule that restarts all containers needs RestartAllContainersOnContainerExits"),
    pytest.param(_restart_rule(make_pod("p"), init=True), {RESTART}, {RESTART},
                 id="an init container's rule counts too"),
    pytest.param(_restart_rule(make_pod("p"), "Restart"), set(), set(), id="another rule action needs nothing"),
    pytest.param(_spec(make_pod("p"), hostNetwork=True, hostUsers=False), {USERNS}, {USERNS},
                 id="host network in a user namespace needs UserNamespacesHostNetworkSupport"),
    pytest.param(_spec(make_pod("p"), hostNetwork=True), set(), set(), id="host network without hostUsers needs nothing"),
    pytest.param(_spec(make_pod("p"), hostNetwork=True, hostUsers=True), set(), set(),
                 id="host network with host users needs nothing"),
    pytest.param(_spec(make_pod("p"), hostUsers=False), set(), set(), id="a user namespace alone needs nothing"),
    pytest.param(_bind_mount(make_pod("p")), set(), {BIND}, id="bind mount options need VolumeBindMountOptions from 1.37"),
    pytest.param(_bind_mount(make_pod("p"), "ephemeralContainers"), set(), {BIND},
                 id="an ephemeral container's bind mount options count"),
    pytest.param(_spec(_restart_rule(make_pod("p")), hostNetwork=True, hostUsers=False), {RESTART, USERNS},
                 {RESTART, USERNS}, id="several features at once"),
])
def test_the_features_a_pod_needs(pod: PodBuilder, needs_1_36: set[str], needs_1_37: set[str]) -> None:
    snap = make_snapshot([make_node("n")])
    built = pod.build()
    assert NodeDeclaredFeatures(None, _handle(snap)).required(built) == needs_1_36
    assert NodeDeclaredFeatures(None, _handle(snap, version=37)).required(built) == needs_1_37


@pytest.mark.parametrize("node_features, found", [
    pytest.param([], set(), id="no list"),
    pytest.param([RESTART, USERNS], {RESTART, USERNS}, id="a sorted list"),
    pytest.param(["AAA", RESTART, "Unknown", USERNS, "Zzz"], {RESTART, USERNS},
                 id="names not registered are ignored"),
    pytest.param([USERNS, RESTART], {USERNS}, id="in a list out of order a name the walk passed is missed"),
])
def test_the_features_a_node_declares_as_the_cache_maps_them(node_features: list[str], found: set[str]) -> None:
    assert declared(tuple(sorted(FEATURES_1_36)), tuple(node_features)) == found


NODES = [make_node("none"), make_node("restart").declared_features(RESTART),
         make_node("both").declared_features(RESTART, USERNS), make_node("unsorted").declared_features(USERNS, RESTART)]


@pytest.mark.parametrize("pod, verdicts", [
    pytest.param(make_pod(), {"none": OK, "restart": OK, "both": OK, "unsorted": OK},
                 id="a pod that needs nothing fits every node"),
    pytest.param(_restart_rule(make_pod("p")), {"none": NO, "restart": OK, "both": OK, "unsorted": NO},
                 id="a node must declare the feature the pod needs"),
    pytest.param(_spec(_restart_rule(make_pod("p")), hostNetwork=True, hostUsers=False),
                 {"none": NO, "restart": NO, "both": OK, "unsorted": NO}, id="a node must declare all of them"),
])
def test_node_declared_features_filter(pod: PodBuilder, verdicts: dict[str, Verdict]) -> None:
    snap = make_snapshot(NODES)
    assert run_filter(NodeDeclaredFeatures(None, _handle(snap)), pod.build(), snap) == verdicts


@pytest.mark.parametrize("pod, on, code", [
    pytest.param(make_pod(), True, Code.SKIP, id="PreFilter skips a pod that needs no feature"),
    pytest.param(_bind_mount(make_pod("p")), True, Code.SKIP,
                 id="PreFilter skips a pod whose only need is a later release's feature"),
    pytest.param(_restart_rule(make_pod("p")), True, Code.SUCCESS, id="PreFilter keeps a pod that needs a feature"),
    pytest.param(_restart_rule(make_pod("p")), False, Code.SKIP, id="PreFilter skips every pod with the gate off"),
])
def test_node_declared_features_pre_filter(pod: PodBuilder, on: bool, code: Code) -> None:
    # upstream's PreFilter Skip: the framework then leaves the plugin out of Filter, and so out of
    # preemption's dry run, whose fast path a filter that runs and reads no pods would close
    snap = make_snapshot(NODES)
    result, status = run_pre_filter(NodeDeclaredFeatures(None, _handle(snap, on=on)), pod.build())
    assert (result, status.code) == (None, code)


def test_the_plugin_does_nothing_with_its_gate_off() -> None:
    snap = make_snapshot(NODES)
    plugin = NodeDeclaredFeatures(None, _handle(snap, on=False))
    assert set(run_filter(plugin, _restart_rule(make_pod("p")).build(), snap).values()) == {OK}
    assert plugin.events_to_register() == []


def test_declared_features_and_pod_facts_parse_from_the_objects() -> None:
    node = parse_node(make_node("n").declared_features(RESTART).dict())
    assert node.declared_features == (RESTART,)
    pod = parse_pod(_spec(make_pod("p"), hostNetwork=True, hostUsers=False).d)
    assert pod.feature_facts.host_network and pod.feature_facts.host_users is False


def _handle(snap: Any, on: bool = True, version: int = 36) -> Any:
    handle = make_plugin("NodeName", snap).handle
    handle.release = Release.with_features(KubeVersion(1, version), Features(((Gate.NODE_DECLARED_FEATURES, on),)))
    return handle
