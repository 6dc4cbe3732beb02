"""status.nominatedNodeName around binding and failures, per release (the release rule
``nomination``, framework/release_tables.py). The queue part — a bound nominated pod moves no pods from 1.35 — is judged against the
real schedulers by tests/fidelity/regressions/bound-nominated-pod-moves-no-pods-1.35 and the 1.35
expected results of preemption-1100004/5, priority-1100044, dra-1100005 and mixed-1100039."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import make_node, make_pod, simulate

CLASSES = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
           for n, v in (("low", 100), ("high", 100000))]
NO_PREEMPTION = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{"schedulerName": "default-scheduler",
                               "plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}, {"name": "DynamicResources"}]}}}]}


def nominated(pod: Any, node: str) -> dict[str, Any]:
    d: dict[str, Any] = pod.dict()
    d["status"] = {"nominatedNodeName": node}
    return d


@pytest.mark.parametrize("release, expected", [
    pytest.param("1.34", "node-a", id="1.34: the pod bound after preempting keeps its nominated node"),
    pytest.param("1.35", None, id="1.35: the binding clears the nominated node"),
    pytest.param("1.37", None, id="1.37: as 1.35"),
])
def test_a_preemptor_bound_on_its_nominated_node(release: str, expected: str | None) -> None:
    result = simulate([make_node("node-a").alloc(cpu="2", pods=10)],
                      [make_pod("high").req(cpu="2").priority_class("high")],
                      running=[make_pod("low").req(cpu="2").priority_class("low").node_name("node-a")],
                      objects=CLASSES, release=release)
    o = result.outcome("default", "high")
    assert o is not None and o.node == "node-a"
    assert [e.pod.name for e in result.preempted] == ["low"]
    assert o.nominated_node == expected


@pytest.mark.parametrize("release, expected", [
    pytest.param("1.34", "node-a", id="1.34: a failure without PostFilter plugins leaves the nomination"),
    pytest.param("1.35", None, id="1.35: a failure without PostFilter plugins clears the nomination"),
])
def test_a_nominated_pod_that_fails_in_a_profile_without_preemption(release: str, expected: str | None) -> None:
    result = simulate([make_node("node-a").alloc(cpu="1", pods=10)],
                      [nominated(make_pod("big").req(cpu="2"), "node-a")], config=NO_PREEMPTION, release=release)
    o = result.outcome("default", "big")
    assert o is not None and o.node is None
    assert o.nominated_node == expected


@pytest.mark.parametrize("release", ["1.34", "1.35"])
def test_a_failure_with_preemption_clears_the_nomination_in_both(release: str) -> None:
    result = simulate([make_node("node-a").alloc(cpu="1", pods=10)],
                      [nominated(make_pod("big").req(cpu="2"), "node-a")], release=release)
    o = result.outcome("default", "big")
    assert o is not None and o.node is None and o.nominated_node is None
