"""The before/after diff: pod states, change kinds and utilisation."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from planning_builders import node, pod

from kplan.cluster.node_table import NodeTable
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.simulate import Eviction, PodOutcome
from kplan.whatif.diff import (
    DELETED_KIND,
    EVICTED,
    MOVED,
    NEW,
    NO_LONGER_PREEMPTED,
    NOW_SCHEDULABLE,
    NOW_UNSCHEDULABLE,
    PLACED_ELSEWHERE,
    PREEMPTED_KIND,
    REMOVED,
    PodState,
    Presence,
    change_kind,
    diff_states,
    pod_states,
    utilisation_diff,
)

S, U, G, P = PodStatus.SCHEDULED, PodStatus.UNSCHEDULABLE, PodStatus.GATED, PodStatus.PREEMPTED
RUNNING, DELETED, ABSENT = Presence.RUNNING, Presence.DELETED, Presence.ABSENT

KIND_CASES = [
    ("a pending pod that lands elsewhere is placed elsewhere, not moved", PodState(S, "a"), PodState(S, "b"),
     PLACED_ELSEWHERE),
    ("a pending pod that now lands became schedulable", PodState(U), PodState(S, "a"), NOW_SCHEDULABLE),
    ("a pending pod that no longer lands became unschedulable", PodState(S, "a"), PodState(U), NOW_UNSCHEDULABLE),
    ("a running pod evicted and scheduled on another node moved", PodState(RUNNING, "a"), PodState(S, "b"), MOVED),
    ("a running pod evicted and scheduled on its own node again was evicted", PodState(RUNNING, "a"),
     PodState(S, "a"), EVICTED),
    ("an evicted pod that finds no node is still evicted", PodState(RUNNING, "a"), PodState(U), EVICTED),
    ("a running pod a preemption removes was preempted", PodState(RUNNING, "a"), PodState(P, "a"), PREEMPTED_KIND),
    ("a pod preempted only before is no longer preempted", PodState(P, "a"), PodState(RUNNING, "a"),
     NO_LONGER_PREEMPTED),
    ("a bare pod of a drained node is deleted", PodState(RUNNING, "a"), PodState(DELETED), DELETED_KIND),
    ("a pod that only exists after is new", PodState(ABSENT), PodState(S, "a"), NEW),
    ("a pod that only exists before is removed", PodState(S, "a"), PodState(ABSENT), REMOVED),
    ("a scheduled pod that becomes gated is unschedulable", PodState(S, "a"), PodState(G), NOW_UNSCHEDULABLE),
]


@pytest.mark.parametrize("before, after, kind", [c[1:] for c in KIND_CASES], ids=[c[0] for c in KIND_CASES])
def test_change_kind(before, after, kind):
    assert change_kind(before, after) == kind


def test_unchanged_pods_are_not_changes_and_changes_are_ordered_by_kind_then_name():
    before = {("d", "x"): PodState(S, "a"), ("d", "b"): PodState(U), ("d", "a"): PodState(U),
              ("d", "r"): PodState(RUNNING, "n")}
    after = {("d", "x"): PodState(S, "a"), ("d", "b"): PodState(S, "n"), ("d", "a"): PodState(S, "m"),
             ("d", "r"): PodState(S, "m")}
    changes = diff_states(before, after)
    assert [(c.name, c.kind) for c in changes] == [("r", MOVED), ("a", NOW_SCHEDULABLE), ("b", NOW_SCHEDULABLE)]


@dataclass
class FakeResult:
    pods: list[PodOutcome] = field(default_factory=list)
    preempted: list[Eviction] = field(default_factory=list)


def test_pod_states_layer_pending_outcomes_over_running_pods():
    running = [pod("r1", "n1"), pod("r2", "n1")]
    pending = pod("p1")
    gone = pod("bare", "n1")
    result = FakeResult([PodOutcome(pending, S, "n2", None, 1, None)], [Eviction(running[1], "n1", pending)])
    states = pod_states(result, running, [gone])  # type: ignore[arg-type]
    assert states == {("default", "r1"): PodState(RUNNING, "n1"), ("default", "r2"): PodState(P, "n1"),
                      ("default", "p1"): PodState(S, "n2"), ("default", "bare"): PodState(DELETED)}


def test_utilisation_compares_nodes_and_zones_present_in_either_run():
    before = NodeTable([node("a1", cpu="4"), node("b1", cpu="2", zone="zone-b")])
    after = NodeTable([node("a1", cpu="4"), node("a2", cpu="4")])
    before.add_pod(pod("x", "a1", cpu="1"), 0)
    after.add_pod(pod("x", "a2", cpu="1"), 1)
    d = utilisation_diff(before, after)
    by_node = {c.name: (c.before and c.before.cpu, c.after and c.after.cpu) for c in d.nodes}
    assert by_node == {"a1": (1000, 0), "a2": (None, 1000), "b1": (0, None)}
    zones = {c.name: (c.before, c.after) for c in d.zones}
    assert zones["zone-a"][0].cpu_alloc == 4000 and zones["zone-a"][1].cpu_alloc == 8000
    assert zones["zone-b"][1] is None
    assert d.total_before.cpu == d.total_after.cpu == 1000
