"""The queue's reactions that differ by release (release.nomination), on whole runs."""

from __future__ import annotations

import pytest

from kplan.framework.release import Release
from tests.builders import make_node, make_pod, simulate
from tests.unit.scheduler.test_preemption import CLASSES


@pytest.mark.parametrize(("version", "rule", "attempts"), [
    ("1.34", True, 2),
    ("1.35", False, 1),
    ("1.36", False, 1),
    ("1.37", False, 1),
])
def test_binding_a_nominated_pod_retries_the_pods_its_nomination_held_back_only_in_1_34(
        version: str, rule: bool, attempts: int) -> None:
    # h preempts v and is nominated to n1; l (lower priority) then finds n1's room held by h's
    # nomination and waits for a pod to leave a node (NodeResourcesFit). 1.34's binding of h
    # reaches the queue as the deletion of a pod nominated to n1 and retries l; from 1.35 (#134157)
    # only as h's AssignedPodAdd, to which NodeResourcesFit does not listen
    assert Release.of(version).nomination.bind_moves_pods is rule
    result = simulate([make_node("n1").alloc(cpu="4", pods=10)],
                      [make_pod("h").req(cpu="2").priority_class("high"),
                       make_pod("l").req(cpu="3").priority_class("mid")],
                      [make_pod("v").req(cpu="3").priority_class("low").node_name("n1")], CLASSES, release=version)
    h, low = result.outcome("default", "h"), result.outcome("default", "l")
    assert h is not None and low is not None
    assert (h.status, h.node, h.attempts) == ("Scheduled", "n1", 2)
    assert [e.pod.name for e in result.preempted] == ["v"]
    assert (low.status, low.attempts) == ("Unschedulable", attempts)


@pytest.mark.parametrize(("version", "rule", "low_node"), [
    ("1.34", False, "n1"),
    ("1.35", False, "n1"),
    ("1.36", False, "n1"),
    ("1.37", True, None),
])
def test_a_gated_pod_s_nomination_holds_room_only_from_1_37(version: str, rule: bool, low_node: str | None) -> None:
    # g comes gated with status.nominatedNodeName n1 and n1's whole CPU; up to 1.36 the queue
    # records a new pod's nomination only when it enters activeQ, from 1.37 (#139057) always
    assert Release.of(version).nomination.gated_pods_nominated is rule
    g = make_pod("g").req(cpu="2").priority_class("high").gate("example.com/wait")
    g.d["status"] = {"nominatedNodeName": "n1"}
    result = simulate([make_node("n1").alloc(cpu="2", pods=10)], [g, make_pod("l").req(cpu="1")], [], CLASSES,
                      release=version)
    gated, low = result.outcome("default", "g"), result.outcome("default", "l")
    assert gated is not None and low is not None
    assert (gated.status, gated.node) == ("Gated", None)
    assert low.node == low_node
