"""Priority admission (reference 8): what the API server writes into a pod before scheduling."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.errors import InputError
from tests.builders import PodBuilder, make_node, make_pod, scenario


def pc(name: str, value: int, default: bool = False, policy: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                         "metadata": {"name": name}, "value": value}
    if default:
        d["globalDefault"] = True
    if policy:
        d["preemptionPolicy"] = policy
    return d


CLASSES = [pc("high", 1000), pc("batch", 10, policy="Never")]


@pytest.mark.parametrize("classes, pod, priority, policy, class_name", [
    pytest.param([], make_pod(), 0, "PreemptLowerPriority", "",
                 id="no class and no default gives priority 0 and PreemptLowerPriority"),
    pytest.param([pc("std", 50, default=True)], make_pod(), 50, "PreemptLowerPriority", "std",
                 id="the global default class supplies name and value"),
    pytest.param([pc("a", 70, default=True), pc("b", 20, default=True)], make_pod(), 20, "PreemptLowerPriority",
                 "b", id="with several defaults the lowest value wins"),
    pytest.param([pc("d", 5, default=True, policy="Never")], make_pod(), 5, "Never", "d",
                 id="the default class supplies its preemption policy"),
    pytest.param(CLASSES, make_pod().priority_class("high"), 1000, "PreemptLowerPriority", "high",
                 id="a named class sets the priority"),
    pytest.param(CLASSES, make_pod().priority_class("batch"), 10, "Never", "batch",
                 id="a named class sets the preemption policy"),
    pytest.param(CLASSES + [pc("std", 50, default=True)], make_pod().priority_class("high"), 1000,
                 "PreemptLowerPriority", "high", id="a named class beats the global default"),
    pytest.param([], make_pod().priority_class("system-cluster-critical"), 2_000_000_000, "PreemptLowerPriority",
                 "system-cluster-critical", id="system-cluster-critical is built in"),
    pytest.param([], make_pod().priority_class("system-node-critical"), 2_000_001_000, "PreemptLowerPriority",
                 "system-node-critical", id="system-node-critical is built in"),
    pytest.param(CLASSES, make_pod().priority_class("high").priority(1000), 1000, "PreemptLowerPriority", "high",
                 id="an explicit priority equal to the class value is accepted"),
    pytest.param([], make_pod().priority(0), 0, "PreemptLowerPriority", "",
                 id="an explicit zero priority without classes is accepted"),
])
def test_priority_admission(classes: list[dict[str, Any]], pod: PodBuilder, priority: int, policy: str,
                            class_name: str) -> None:
    sc = scenario([make_node("n1")], [pod], objects=classes)
    admitted = sc.pending[0]
    assert (admitted.priority, admitted.preemption_policy, admitted.priority_class_name) == (
        priority, policy, class_name)


@pytest.mark.parametrize("pod, message", [
    pytest.param(make_pod("p").priority_class("missing"),
                 "pods.yaml: Pod default/p: spec.priorityClassName: no PriorityClass with name missing was found",
                 id="an unknown class name rejects the pod"),
    pytest.param(make_pod("p").priority_class("high").priority(5),
                 "pods.yaml: Pod default/p: spec.priority: the integer value of priority (5) must not be provided "
                 "in pod spec; priority admission controller computed 1000 from the given PriorityClass name",
                 id="an explicit priority that differs from the class is rejected"),
    pytest.param(make_pod("p").priority(7),
                 "pods.yaml: Pod default/p: spec.priority: the integer value of priority (7) must not be provided "
                 "in pod spec; priority admission controller computed 0 from the given PriorityClass name",
                 id="an explicit priority without any class must be zero"),
    pytest.param(make_pod("p").priority_class("batch").preemption_policy("PreemptLowerPriority"),
                 "pods.yaml: Pod default/p: spec.preemptionPolicy: the string value of PreemptionPolicy "
                 "(PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed "
                 "Never from the given PriorityClass name",
                 id="an explicit preemption policy that differs from the class is rejected"),
    pytest.param(make_pod("p").preemption_policy("Never"),
                 "pods.yaml: Pod default/p: spec.preemptionPolicy: the string value of PreemptionPolicy "
                 "(Never) must not be provided in pod spec; priority admission controller computed "
                 "PreemptLowerPriority from the given PriorityClass name",
                 id="without any class an explicit Never policy is rejected as well"),
])
def test_priority_admission_errors(pod: PodBuilder, message: str) -> None:
    with pytest.raises(InputError) as e:
        scenario([make_node("n1")], [pod], objects=CLASSES if "priorityClassName" in pod.d["spec"] else [])
    assert str(e.value) == message


def test_running_pods_keep_their_priority() -> None:
    running = make_pod("r").node_name("n1").priority(42)
    sc = scenario([make_node("n1")], [], running=[running], objects=[pc("std", 50, default=True)])
    (pod,) = sc.snapshot.table.pods[0]
    assert pod.priority == 42
