"""The difference between two simulations of the same cluster: before and after a change.

Every pod gets a state in each run: a pending pod its simulation status (Scheduled,
Unschedulable, Gated, Preempted) and node; a running pod of the input is Running on its node
unless the run preempted it; a pod a change removed is Deleted; a pod that does not exist in a
run is Absent. A change is any pod whose (status, node) differs. Utilisation compares the
requested cpu, memory and pod counts of every node, and of every zone, at the end of each run.

A move is a pod that had a place before and has another one after: a running pod evicted (by a
drain, say) and scheduled on another node. A pending pod has no place yet: that the run after the
change puts it on another node than the run before is a different plan, not a move ("placed
elsewhere"); an added node or the seeded tie-breaks of a large run reshuffle thousands of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from kplan.cluster.node_table import NodeTable
from kplan.cluster.resources import CPU, MEMORY
from kplan.model.objects import Pod
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.simulate import SimulationResult


class Presence(StrEnum):
    """The state in a run of a pod that is not one of the run's pending pods."""

    #: an input's running pod on its node, not preempted
    RUNNING = "Running"
    #: removed by a change, not replaced
    DELETED = "Deleted"
    #: not in this run at all
    ABSENT = "Absent"


ZONE_LABEL = "topology.kubernetes.io/zone"
NO_ZONE = "<none>"

#: change kinds, in the order reports list them
MOVED = "moved"
EVICTED = "evicted"
NOW_SCHEDULABLE = "now schedulable"
NOW_UNSCHEDULABLE = "now unschedulable"
PREEMPTED_KIND = "preempted"
NO_LONGER_PREEMPTED = "no longer preempted"
DELETED_KIND = "deleted"
NEW = "new"
REMOVED = "removed"
OTHER = "changed"
PLACED_ELSEWHERE = "placed elsewhere"
KIND_ORDER = (EVICTED, MOVED, NOW_SCHEDULABLE, NOW_UNSCHEDULABLE, PREEMPTED_KIND, NO_LONGER_PREEMPTED,
              DELETED_KIND, NEW, REMOVED, OTHER, PLACED_ELSEWHERE)


@dataclass(frozen=True)
class PodState:
    status: PodStatus | Presence
    node: str | None = None


@dataclass(frozen=True)
class PodChange:
    namespace: str
    name: str
    before: PodState
    after: PodState
    kind: str


def pod_states(result: SimulationResult, running: Iterable[Pod], deleted: Iterable[Pod] = ()
               ) -> dict[tuple[str, str], PodState]:
    """(namespace, name) → state at the end of a run.

    ``running`` are the input's running pods of this run (on nodes that exist), ``deleted`` the
    pods a change removed without replacement.
    """
    states: dict[tuple[str, str], PodState] = {}
    for p in running:
        states[(p.namespace, p.name)] = PodState(Presence.RUNNING, p.node_name)
    for e in result.preempted:
        states[(e.pod.namespace, e.pod.name)] = PodState(PodStatus.PREEMPTED, e.node)
    for o in result.pods:
        states[(o.pod.namespace, o.pod.name)] = PodState(o.status, o.node)
    for p in deleted:
        states.setdefault((p.namespace, p.name), PodState(Presence.DELETED, None))
    return states


def change_kind(before: PodState, after: PodState) -> str:
    b, a = before.status, after.status
    if b == Presence.ABSENT:
        return NEW
    if a == Presence.ABSENT:
        return REMOVED
    if a == Presence.DELETED:
        return DELETED_KIND
    if a == PodStatus.PREEMPTED and b != PodStatus.PREEMPTED:
        return PREEMPTED_KIND
    if b == PodStatus.PREEMPTED and a != PodStatus.PREEMPTED:
        return NO_LONGER_PREEMPTED
    if b == Presence.RUNNING and a == PodStatus.SCHEDULED and after.node != before.node:
        return MOVED
    if b == Presence.RUNNING and a != Presence.RUNNING:
        return EVICTED
    if b == PodStatus.SCHEDULED and a == PodStatus.SCHEDULED:
        return PLACED_ELSEWHERE
    if a == PodStatus.SCHEDULED or (a == Presence.RUNNING and b != Presence.RUNNING):
        return NOW_SCHEDULABLE
    if b in (PodStatus.SCHEDULED, Presence.RUNNING) and a in (PodStatus.UNSCHEDULABLE, PodStatus.GATED):
        return NOW_UNSCHEDULABLE
    return OTHER


def diff_states(before: dict[tuple[str, str], PodState], after: dict[tuple[str, str], PodState]) -> list[PodChange]:
    """Every pod whose state differs, by kind (KIND_ORDER), then namespace and name."""
    out = []
    for key in set(before) | set(after):
        b = before.get(key, PodState(Presence.ABSENT))
        a = after.get(key, PodState(Presence.ABSENT))
        if a != b:
            out.append(PodChange(key[0], key[1], b, a, change_kind(b, a)))
    return sorted(out, key=lambda c: (KIND_ORDER.index(c.kind), c.namespace, c.name))


# ------------------------------------------------------------------------------ utilisation

@dataclass(frozen=True)
class Usage:
    cpu: int = 0
    cpu_alloc: int = 0
    memory: int = 0
    memory_alloc: int = 0
    pods: int = 0
    pods_alloc: int = 0

    def __add__(self, o: Usage) -> Usage:
        return Usage(self.cpu + o.cpu, self.cpu_alloc + o.cpu_alloc, self.memory + o.memory,
                     self.memory_alloc + o.memory_alloc, self.pods + o.pods, self.pods_alloc + o.pods_alloc)


@dataclass(frozen=True)
class UsageChange:
    name: str
    zone: str
    before: Usage | None
    after: Usage | None


def node_usage(table: NodeTable) -> dict[str, tuple[str, Usage]]:
    """node name → (zone, usage) at the end of a run."""
    out = {}
    for i, name in enumerate(table.names):
        zone = table.nodes[i].labels.get(ZONE_LABEL) or NO_ZONE
        out[name] = (zone, Usage(int(table.requested[i, CPU]), int(table.alloc[i, CPU]),
                                 int(table.requested[i, MEMORY]), int(table.alloc[i, MEMORY]),
                                 int(table.pod_count[i]), int(table.allowed_pods[i])))
    return out


def zone_usage(nodes: dict[str, tuple[str, Usage]]) -> dict[str, Usage]:
    out: dict[str, Usage] = {}
    for zone, u in nodes.values():
        out[zone] = out.get(zone, Usage()) + u
    return out


@dataclass
class UtilisationDiff:
    nodes: list[UsageChange] = field(default_factory=list)
    zones: list[UsageChange] = field(default_factory=list)
    total_before: Usage = Usage()
    total_after: Usage = Usage()


def utilisation_diff(before: NodeTable, after: NodeTable) -> UtilisationDiff:
    b, a = node_usage(before), node_usage(after)
    nodes = [UsageChange(n, (a.get(n) or b[n])[0], b[n][1] if n in b else None, a[n][1] if n in a else None)
             for n in sorted(set(b) | set(a))]
    zb, za = zone_usage(b), zone_usage(a)
    zones = [UsageChange(z, z, zb.get(z), za.get(z)) for z in sorted(set(zb) | set(za))]
    total_b = sum((u for _, u in b.values()), Usage())
    total_a = sum((u for _, u in a.values()), Usage())
    return UtilisationDiff(nodes, zones, total_b, total_a)


# ------------------------------------------------------------------------------ summary

@dataclass
class WhatIfDiff:
    changes: list[PodChange]
    utilisation: UtilisationDiff

    def count(self, kind: str) -> int:
        return sum(1 for c in self.changes if c.kind == kind)


def diff_results(before: SimulationResult, before_running: Iterable[Pod], after: SimulationResult,
                 after_running: Iterable[Pod], deleted: Iterable[Pod] = ()) -> WhatIfDiff:
    changes = diff_states(pod_states(before, before_running), pod_states(after, after_running, deleted))
    return WhatIfDiff(changes, utilisation_diff(before.snapshot.table, after.snapshot.table))


def running_on_nodes(pods: Iterable[Pod], table: NodeTable) -> list[Pod]:
    """The input's running pods that the run placed (their node exists)."""
    return [p for p in pods if p.node_name in table.row_of]
