"""``kplan capacity``: how many more replicas of a pod fit, and where.

Semantics (also in docs/capacity.md):
* First every pending pod of the input is scheduled, exactly as ``kplan simulate`` does, until
  the queue is empty.
* Then replicas are created one at a time: identical pods (same labels, requests, constraints and
  admitted priority) named ``<name>-capacity-<k>`` (a StatefulSet's take its next ordinals). A
  replica's PersistentVolumeClaims (a StatefulSet's volumeClaimTemplates, a pod's ephemeral
  volumes) are created just before it, as its controllers create them, those of a name that is
  taken excepted. Each replica is created after everything before it has settled (the queue has
  run empty again), so the k-th replica sees the first k-1 placed. A replica is scheduled by the real algorithm: when no node fits it may preempt
  lower-priority pods as kube-scheduler would, and then be retried; those evictions are
  reported separately.
* The count is the number of replicas that end up scheduled before the first one that does not
  (its message is "why the next one does not"), or the limit when it is reached first.
* A StatefulSet whose podManagementPolicy is OrderedReady gets no replica while one of its
  declared pods is not running: its controller creates the next pod only once the previous one
  runs (``held_by`` names the first such pod).
This is the method of kubernetes-sigs/cluster-capacity (one replica at a time until one fails),
on kplan's faithful scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kplan.model.objects import Pod
from kplan.model.storage import PersistentVolumeClaim
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.queue import Location
from kplan.scheduler.simulate import Eviction, PodOutcome, Simulation, SimulationResult


@dataclass(frozen=True)
class Replica:
    """One more replica: the pod and the claims its controllers create before it."""

    pod: Pod
    claims: tuple[PersistentVolumeClaim, ...] = ()


@dataclass
class CapacityOutcome:
    replicas: int
    placements: dict[str, int]
    #: the first replica that did not fit, with its final status and message (None: limit reached)
    failed: PodOutcome | None
    limit_reached: bool
    #: evictions caused by the replicas (preemption), in order
    evictions: list[Eviction] = field(default_factory=list)
    result: SimulationResult | None = None
    #: an OrderedReady StatefulSet's first declared pod that is not running: no replica was made
    held_by: Pod | None = None


def fill(sim: Simulation, make_replica: Callable[[int], Replica], limit: int, *,
         ordered_after: Sequence[str] = ()) -> CapacityOutcome:
    """Add replicas 1, 2, … to a started simulation until one does not fit or ``limit`` fit.

    ``make_replica(k)`` returns the k-th replica. ``ordered_after``: the uids of the declared
    pods, in order, of a workload whose controller creates a pod only once the previous one
    runs (a StatefulSet's OrderedReady): no replica is made unless they all run.
    """
    sim.drain()
    for uid in ordered_after:
        declared = sim.records.get(uid)
        if declared is not None and declared.where != Location.DONE:
            return CapacityOutcome(0, {}, None, False, [], sim.result(), held_by=declared.pod)
    placements: dict[str, int] = {}
    replica_uids: set[str] = set()
    failed_uid: str | None = None
    count = 0
    while count < limit:
        replica = make_replica(count + 1)
        sim.create_claims(replica.claims)
        q = sim.add_pending(replica.pod)
        replica_uids.add(q.pod.uid)
        sim.drain()
        if q.where != Location.DONE:
            failed_uid = q.pod.uid
            break
        count += 1
    result = sim.result()
    failed = None
    for o in result.pods:
        if o.pod.uid in replica_uids and o.status == PodStatus.SCHEDULED and o.node is not None:
            placements[o.node] = placements.get(o.node, 0) + 1
        if o.pod.uid == failed_uid:
            failed = o
    evictions = [e for e in result.preempted if e.preemptor.uid in replica_uids]
    # a later replica's preemption can evict an earlier replica: count what is still placed
    scheduled = sum(placements.values())
    return CapacityOutcome(scheduled, dict(sorted(placements.items())), failed, failed_uid is None, evictions, result)
