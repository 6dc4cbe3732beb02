"""A simulation run: pending pods through the queue and the scheduling cycle, one cycle at a time.

Follows the timing model of reference section 12: everything a cycle causes — the bind or the
failure's status write, a preemption's nomination changes and victim deletions, and every queue
move their events trigger — happens before the next pod is popped. The clock is logical
(microseconds from T0), so a run is exactly reproducible.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np

from kplan.cluster.disruption import pdb_key
from kplan.cluster.snapshot import Snapshot
from kplan.framework.config import SchedulerConfig
from kplan.framework.diagnosis import FitError
from kplan.framework.events import ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, ClusterEvent
from kplan.framework.runtime import Framework, Nominator
from kplan.model.objects import Node, Pod, PodDisruptionBudget, Replaced, evolve_pod
from kplan.model.storage import PersistentVolumeClaim
from kplan.scheduler.cycle import CycleResult, Scheduler
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.queue import SECOND, US, Location, QueuedPod, SchedulingQueue
from kplan.scheduler.setup import SchedulerSetup
from kplan.workloads.names import NameGenerator

#: start times of the pods bound during a run (reference 12.1)
BIND_EPOCH = datetime(2025, 1, 11, tzinfo=UTC).timestamp()


@dataclass
class PodOutcome:
    pod: Pod
    status: PodStatus
    node: str | None
    message: str | None
    attempts: int
    nominated_node: str | None
    #: the message's FitError in parts (None when the message is no FitError)
    fit_error: FitError | None = None


@dataclass
class Eviction:
    pod: Pod
    node: str
    preemptor: Pod


@dataclass
class SimulationResult:
    pods: list[PodOutcome]
    preempted: list[Eviction]
    snapshot: Snapshot
    #: cycle results per pod uid, newest last (explain reads them)
    cycles: dict[str, list[CycleResult]] = field(default_factory=dict)
    #: cluster pods that the applied workloads replace (kplan.io.apply), as the run was given them
    replaced: list[Replaced] = field(default_factory=list)
    #: the pods scheduled before ``pods`` (a what-if's new nodes' DaemonSet pods), apart from them
    overhead: list[PodOutcome] = field(default_factory=list)

    def outcome(self, namespace: str, name: str) -> PodOutcome | None:
        for o in self.pods:
            if o.pod.namespace == namespace and o.pod.name == name:
                return o
        return None


#: called after each scheduling cycle, before its bind or failure changes anything
Observer = Callable[["Simulation", QueuedPod, CycleResult], None]


@runtime_checkable
class DetailObserver(Protocol):
    """An observer that says of which pods' cycles it reads the per-plugin filter outcome and
    scores (explain: its pod's; an observer of outcomes alone: none). The compiled cycle, which
    computes neither, is used for the others; an observer without ``wants_detail`` reads them of
    every pod."""

    def __call__(self, sim: Simulation, q: QueuedPod, r: CycleResult) -> None: ...

    def wants_detail(self, pod: Pod) -> bool: ...


class SchedulerHandle:
    """framework.Handle for a run: the snapshot, nominations, RNG and policies plugins read."""

    def __init__(self, snapshot: Snapshot, config: SchedulerConfig, seed: int, lowest_name: bool,
                 pdb_allowed: dict[tuple[str, str], int]) -> None:
        self.snapshot = snapshot
        self.config = config
        self.release = config.release
        self.rng = np.random.default_rng(seed)
        self.lowest_name = lowest_name
        self.nominator = Nominator()
        #: pod uid → its status.nominatedNodeName as this run set it ("" cleared); absent: as input.
        #: Binding does not clear it (1.34), so it is kept apart from the nominator.
        self.nominations: dict[str, str] = {}
        self.frameworks: dict[str, Framework] = {}
        self._pdb_allowed = pdb_allowed
        self._preempting: set[str] = set()

    def framework_for(self, pod: Pod) -> Framework:
        return self.frameworks[pod.scheduler_name]

    def nominated_node(self, pod: Pod) -> str:
        return self.nominations.get(pod.uid, pod.nominated_node)

    def disruptions_allowed(self, pdb: PodDisruptionBudget) -> int:
        return self._pdb_allowed.get(pdb_key(pdb), pdb.disruptions_allowed or 0)

    def preemption_in_progress(self, pod: Pod) -> bool:
        return pod.uid in self._preempting

    def terminating_by_preemption(self, pod: Pod) -> bool:
        # victims leave at once in this model (reference 12.1); terminating input pods carry no
        # DisruptionTarget condition kplan could read
        return False


def _every_pod(pod: Pod) -> bool:
    return True


#: (pods tried at least once, pods created so far): how far a run is
Progress = Callable[[int, int], None]


class Simulation:
    def __init__(self, snapshot: Snapshot, setup: SchedulerSetup, pending: Sequence[Pod],
                 *, seed: int = 0, lowest_name: bool = False, pdb_allowed: dict[tuple[str, str], int] | None = None,
                 keep_cycles: bool = False, observer: Observer | None = None,
                 created_after: Mapping[str, str] | None = None, progress: Progress | None = None,
                 replaced: Sequence[Replaced] = (), first: Simulation | None = None,
                 refused: Mapping[str, str] | None = None) -> None:
        self.snapshot = snapshot
        self.setup = setup
        config = setup.config
        self.handle = SchedulerHandle(snapshot, config, seed, lowest_name, pdb_allowed or {})
        for spec in config.profiles:
            self.handle.frameworks[spec.scheduler_name] = Framework(spec, setup.registry, self.handle)
        # an observer reads each cycle's result: every pod's keeps the per-plugin detail unless
        # the observer says which pods it reads it of (DetailObserver)
        detailed: Callable[[Pod], bool] | None = None
        if keep_cycles:
            detailed = _every_pod
        elif observer is not None:
            detailed = observer.wants_detail if isinstance(observer, DetailObserver) else _every_pod
        self.scheduler = Scheduler(self.handle, detailed)
        self.queue = SchedulingQueue(config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds)
        self.pending = list(pending)
        self.keep_cycles = keep_cycles
        self.observer = observer
        #: told (pods tried at least once, pods created) each time a pod is first tried: the CLI
        #: draws its progress bar from it; the engine itself prints nothing
        self.progress = progress
        self.records: dict[str, QueuedPod] = {}
        self.popped: list[QueuedPod] = []
        self.bound: dict[str, str] = {}
        self.evictions: list[Eviction] = []
        self.cycles: dict[str, list[CycleResult]] = {}
        self.binds = 0
        #: the release's rules for nominations at binding (read once: the property looks them up)
        self._nomination_rules = self.handle.release.nomination
        self._registrations: dict[tuple[str, frozenset[str]], dict[str, list[Any]] | None] = {}
        self._changed_since_error = True
        self._stop = False
        #: pod uid → the pod whose bind creates it (a StatefulSet's OrderedReady policy: the
        #: controller creates the next pod once the previous one runs; kplan counts a bind as that)
        self.created_after = dict(created_after or {})
        #: cluster pods that the applied workloads replace: the result reports them
        self.replaced = tuple(replaced)
        self.waiting: dict[str, list[QueuedPod]] = {}
        #: pod uid → the API server's error for the pods its admission refused (ResourceQuota):
        #: never created, so never queued; the pods created after one of them wait for it forever
        self.refused = dict(refused or {})
        self._seed = seed
        self._claim_names: NameGenerator | None = None
        #: pods start() created; -1 before it ran
        self._created_at_start = -1
        #: a finished run of pods created and scheduled before these, on the same snapshot: its
        #: pods are the result's ``overhead``, and this run's bind times follow its
        self.first = first
        if first is not None:
            self.binds = first.binds

    # ------------------------------------------------------------------ events

    def registrations(self, key: tuple[str, frozenset[str]]) -> dict[str, list[Any]] | None:
        """Event kind → hints of the rejecting plugins of a pool group's pods, ``key`` being
        (schedulerName, rejecting plugins) (a hint of None always says Queue); None means every
        event (a rejecting plugin without EnqueueExtensions is registered for WildCardEvent)."""
        found = self._registrations.get(key, False)
        if found is not False:
            return found  # type: ignore[return-value]
        fw = self.handle.frameworks[key[0]]
        by_kind: dict[str, list[Any]] = {}
        for name in sorted(key[1]):
            plugin = fw.enqueue_extensions.get(name)
            if plugin is None:
                self._registrations[key] = None
                return None
            for kind, hint in plugin.events_to_register():
                by_kind.setdefault(kind, []).append(hint)
        self._registrations[key] = by_kind
        return by_kind

    def offer(self, event: ClusterEvent, max_priority: int | None = None) -> None:
        """An event reaches the unschedulable pool (its pods of at most ``max_priority``): the
        hints of a pod's rejecting plugins for the event's kind decide whether it moves. Pods
        whose plugins did not register for the kind are not looked at (the pool is grouped by
        rejecting plugins); the order of the moves does not matter, as both queues order their
        pods by keys that end in the pod's sequence number."""
        kind = event.kind
        queue = self.queue
        for key, group in list(queue.pool_groups.items()):
            by_kind = self.registrations(key)
            hints = None if by_kind is None else by_kind.get(kind)
            if by_kind is not None and not hints:
                continue
            for q in list(group.values()):
                if q.held or (max_priority is not None and q.priority > max_priority):
                    continue
                if hints is None or any(hint is None or hint(q.pod, event) for hint in hints):
                    queue.move_from_pool(q)

    def listened(self, kind: str) -> bool:
        """Whether ``offer`` would ask about an event of ``kind`` for some pod of the pool: a
        bind's event is made only then (an event that no pod's plugins registered for moves
        nothing, and with the pool empty or holding pods that wait for other events, as for most
        of a run, making it is the only cost it has)."""
        for key in self.queue.pool_groups:
            by_kind = self.registrations(key)
            if by_kind is None or by_kind.get(kind):
                return True
        return False

    def offer_claim_events(self) -> None:
        """The ResourceClaim writes since the last call (scheduler, resourceclaim controller)."""
        dra = self.snapshot.dra
        if dra is None:
            return
        for kind, old, new in dra.drain_events():
            self.offer(ClusterEvent(kind, obj=(old, new)))

    def nomination_left(self, pod: Pod, old: str) -> None:
        """hasNominatedNodeNameChanged: offered as the deletion of an unassigned, nominated pod."""
        self.offer(ClusterEvent(ASSIGNED_POD_DELETE, pod, "", old), pod.priority)

    def set_nomination(self, pod: Pod, node: str) -> None:
        self.handle.nominations[pod.uid] = node
        if node:
            self.handle.nominator.add(pod, node)
        else:
            self.handle.nominator.remove(pod)

    # ------------------------------------------------------------------ run

    def run(self) -> SimulationResult:
        self.start()
        self.drain()
        return self.result()

    def start(self) -> None:
        """Create the input's pending pods, in order (reference 12.3 step 0)."""
        for i, pod in enumerate(self.pending, 1):
            q = QueuedPod(pod, i, i * US)
            self.records[pod.uid] = q
            if pod.uid in self.refused:
                q.where = Location.WAITING
                continue
            first = self.created_after.get(pod.uid)
            if first is not None:
                q.where = Location.WAITING
                self.waiting.setdefault(first, []).append(q)
                continue
            self.enqueue(q)
        self.queue.now = len(self.pending) * US
        self._created_at_start = len(self.pending)
        self._changed_since_error = True

    def add_pending(self, pod: Pod) -> QueuedPod:
        """Create one more pending pod now, after everything so far (capacity's replicas).

        The clock advances 1 µs for the creation, as for the input's pods; nothing else reacts to
        the creation of an unscheduled pod. The resourceclaim controller first makes the pod's
        claims from its templates, as for the input's pods (scheduler-reference.md 13.1); their
        names draw on a generator of their own, seeded by the run's seed.
        """
        dra = self.snapshot.dra
        if dra is not None and pod.resource_claims:
            if self._claim_names is None:
                self._claim_names = NameGenerator(self._seed, "ResourceClaim/added")
            dra.create_template_claims(pod, self._claim_names.generate)
            self.offer_claim_events()
        self.pending.append(pod)
        self.queue.now += US
        q = QueuedPod(pod, len(self.pending), self.queue.now)
        self.records[pod.uid] = q
        self.enqueue(q)
        self._changed_since_error = True
        return q

    def create_claims(self, claims: Sequence[PersistentVolumeClaim]) -> None:
        """A controller creates PersistentVolumeClaims now, before the pod that uses them (a
        StatefulSet's claims of a replica it adds): each one whose name is not taken, through
        DefaultStorageClass admission and the PV controller (StorageState.create_claim: a claim
        that does not wait for a consumer is bound or provisioned at once, as at the start of a
        run). Their writes are offered to the waiting pods."""
        storage = self.snapshot.storage
        if storage is None or not claims:
            return
        table = self.snapshot.table

        def node(name: str) -> Node | None:
            row = table.row_of.get(name)
            return table.nodes[row] if row is not None else None

        for claim in claims:
            storage.create_claim(claim, node)
        for kind, obj in storage.drain_events():
            self.offer(ClusterEvent(kind, obj=obj))
        self._changed_since_error = True

    def enqueue(self, q: QueuedPod) -> None:
        """A pod is created: PreEnqueue, then activeQ or the pool."""
        pod = q.pod
        fw = self.handle.frameworks.get(pod.scheduler_name)
        if fw is None:
            q.where = Location.IGNORED
            return
        nominated = self.handle.nominated_node(pod)
        gate = fw.run_pre_enqueue(pod)
        if nominated and (gate.ok or self.handle.release.nomination.gated_pods_nominated):
            # the input's nomination holds room from the pod's creation; a gated pod's only from
            # 1.37 (before, the nominator learns it when the pod enters activeQ)
            self.handle.nominator.add(pod, nominated)
        if not gate.ok:
            q.gate = gate.plugin
            q.message, q.fit = gate.message, None
            q.rejectors = frozenset({gate.plugin})
            self.queue.add_pool(q)
        else:
            self.queue.add_active(q)

    def drain(self, until: Callable[[QueuedPod], bool] | None = None) -> bool:
        """Run cycles until activeQ and backoffQ are empty (reference 12.3 step 1), or until the
        next pod to pop is one that ``until`` picks, left in its queue: then True."""
        queue = self.queue
        while True:
            if not queue.has_runnable():
                if queue.errors_waiting() and self._changed_since_error:
                    self._changed_since_error = False
                    queue.flush_errors()
                    continue
                break
            if until is not None:
                head = queue.peek()
                assert head is not None
                if until(head):
                    return True
            queue.now += US
            q = queue.pop()
            assert q is not None
            q.attempts += 1
            if q.first_pop < 0:
                q.first_pop = len(self.popped)
                self.popped.append(q)
                if self.progress is not None:
                    self.progress(len(self.popped), len(self.pending))
            if self.cycle(q):
                self._changed_since_error = True
            if self._stop:
                break
        return False

    def stop(self) -> None:
        """End ``drain`` after the current cycle (an observer that has seen what it needed)."""
        self._stop = True

    def cycle(self, q: QueuedPod) -> bool:
        """One scheduling cycle and everything it causes. True when the cluster changed."""
        pod = q.pod
        fw = self.handle.frameworks[pod.scheduler_name]
        r = self.scheduler.schedule(fw, pod)
        if self.keep_cycles:
            self.cycles.setdefault(pod.uid, []).append(r)
        if self.observer is not None:
            self.observer(self, q, r)
        if r.node is not None:
            self.bind(q, fw, r)
            return True
        self.fail(q, r)
        return bool(r.preemption and r.preemption.victims)

    def bind(self, q: QueuedPod, fw: Framework, r: CycleResult) -> None:
        pod = q.pod
        node = r.node
        assert node is not None
        row = self.snapshot.row_of(node)
        assert row is not None
        state = r.state
        assert state is not None
        for reserve in fw.reserve_plugins:
            reserve.reserve(state, pod, node)
        for pre_bind in fw.pre_bind_plugins:
            pre_bind.pre_bind(state, pod, node)
        for binder in fw.bind_plugins:
            if binder.bind(state, pod, node).ok:
                break
        self.binds += 1
        nominated = self.handle.nominated_node(pod)
        rules = self._nomination_rules
        if nominated and rules.bind_clears:
            # the API server's binding clears status.nominatedNodeName (1.35+)
            self.handle.nominations[pod.uid] = ""
        # the pending pod stays as the input gave it: the cluster gets a copy, bound, with its start
        # time (reference 12.1)
        placed = evolve_pod(pod, node_name=node, start_time=BIND_EPOCH + self.binds,
                            nominated_node="" if rules.bind_clears else nominated)
        self.handle.nominator.remove(pod)
        self.snapshot.add_pod(placed, row)
        self.bound[pod.uid] = node
        q.where = Location.DONE
        q.message = q.fit = None
        storage = self.snapshot.storage
        if storage is not None:
            # the attach/detach controller attaches the bound pod's volumes (no event: no plugin
            # waits for an attachment to appear)
            storage.pod_bound(pod, node)
            # PreBind's volume writes (PV and PVC updates, provisioned PVs) come before the bind
            for kind, obj in storage.drain_events():
                self.offer(ClusterEvent(kind, obj=obj))
        # PreBind's claim writes (allocation and reservation) come before the bind too
        self.offer_claim_events()
        if self.listened(ASSIGNED_POD_ADD):
            self.offer(ClusterEvent(ASSIGNED_POD_ADD, placed, node))
        if nominated and rules.bind_moves_pods:
            # binding does not clear status.nominatedNodeName in 1.34: the pod leaves the queue
            # as a pod with a nominated node (deletePodFromSchedulingQueue)
            self.offer(ClusterEvent(ASSIGNED_POD_DELETE, pod, "", nominated), pod.priority)
        if self.waiting:
            for nxt in self.waiting.pop(pod.uid, []):
                nxt.timestamp = self.queue.now
                self.enqueue(nxt)

    def fail(self, q: QueuedPod, r: CycleResult) -> None:
        queue = self.queue
        pod = q.pod
        old = self.handle.nominated_node(pod)
        q.timestamp = queue.now
        q.last_failure = queue.now
        q.message, q.fit = r.message, r.fit
        if r.rejectors:
            q.fails += 1
            q.errs = 0
            q.rejectors = frozenset(r.rejectors)
            queue.add_pool(q)
        else:
            q.errs += 1
            q.rejectors = frozenset()
            queue.add_error(q)
        # DynamicResources' PostFilter may have deallocated a claim: its update event comes now
        self.offer_claim_events()
        pre = r.preemption
        preempted = bool(pre and pre.victims and r.nomination_override and r.nominated_node)
        if preempted:
            self.set_nomination(pod, r.nominated_node)
        elif (r.fit_error and r.nomination_override and r.nominated_node == "") or not r.fit_error:
            self.set_nomination(pod, "")
        if old and self.handle.nominated_node(pod) != old:
            if preempted:
                q.held = True
            self.nomination_left(pod, old)
        if preempted:
            assert pre is not None
            node = r.nominated_node
            for other in list(self.handle.nominator.get(node, ())):
                if other.priority < pod.priority:
                    self.set_nomination(other, "")
                    self.nomination_left(other, node)
            q.held = True
            for k, victim in enumerate(pre.victims):
                if k == len(pre.victims) - 1:
                    q.held = False
                self.evict(victim, pod)

    def evict(self, victim: Pod, preemptor: Pod) -> None:
        row = self.snapshot.remove_pod(victim)
        node = self.snapshot.table.names[row]
        self.evictions.append(Eviction(victim, node, preemptor))
        rec = self.records.get(victim.uid)
        if rec is not None:
            rec.where = Location.PREEMPTED
            self.bound.pop(victim.uid, None)
        self.offer(ClusterEvent(ASSIGNED_POD_DELETE, victim, node))
        storage = self.snapshot.storage
        if storage is not None:
            # then the attach/detach controller deletes the attachments the victim alone used
            storage.pod_deleted(victim, node, self.snapshot.table.pods[row])
            for kind, obj in storage.drain_events():
                self.offer(ClusterEvent(kind, obj=obj))
        if self.snapshot.dra is not None:
            # the resourceclaim controller frees the victim's claims (scheduler-reference.md 13.1)
            self.snapshot.dra.pod_deleted(victim)
            self.offer_claim_events()

    # ------------------------------------------------------------------ forks

    def without(self, left_out: Collection[str]) -> Simulation | None:
        """A copy of this run as it would stand had the pending pods of these uids never been
        created, to run on from here; None when kplan cannot tell that it would (below).

        A run of the other pending pods pops the same pods in the same order as this run, until
        this run is about to pop a left-out one: before then every cycle, bind and event is the
        same, and the left-out pods only wait in activeQ or the pool, where nothing reads them
        (``drain(until=…)`` stops there). What differs is the numbering: the other run created
        its pods 1 µs apart without the left-out ones, so a pod's sequence number and creation
        time are its place among the others, and the clock, with every time it stamped on a pod
        since, is as many µs earlier as pods were left out. While the clock is under a second (no
        error flush has jumped it) that changes no backoff, whose expiries are whole seconds, nor
        the order of any queue, so renumbering gives the other run's state exactly.

        The resource claims the resourceclaim controller made from a left-out pod's templates
        leave with it: nothing reads a claim but its pod until it is allocated or reserved. The
        controller names claims in pending order, so a kept pod's claims after a left-out pod's
        would have had other names: no fork then.

        None as well when a left-out pod was tried already or is waiting for another's bind, when
        its claims are in use, when its volumes use claims (a generic ephemeral volume's claim is
        made, and may be bound, before its pod runs), or when a nomination of its input is in the
        nominator: then the other run's cluster may differ from the start; or when a plugin's
        state cannot be copied. kplan sweep runs those points alone.
        """
        created = self._created_at_start
        uids = set(left_out)
        if (not uids or created < 0 or len(self.pending) != created or self.queue.now >= SECOND
                or self.waiting or self.created_after or self.refused or not uids <= self.records.keys()):
            return None
        dra = self.snapshot.dra
        left: list[Pod] = []
        claims_left = False
        for pod in self.pending:
            if pod.uid not in uids:
                if claims_left and pod.resource_claims:
                    return None
                continue
            q = self.records[pod.uid]
            made = dra.made_for(pod) if dra is not None and pod.resource_claims else []
            if (q.attempts or q.first_pop >= 0 or q.where not in (Location.ACTIVE, Location.POOL, Location.IGNORED) or made is None
                    or pod.claim_statuses or pod.nominated_node or any(v.claim_name for v in pod.volumes)):
                return None
            claims_left = claims_left or bool(made)
            left.append(pod)
        # the inputs' objects (pods, nodes, …) are immutable and shared; the run's state is copied
        try:
            fork = copy.deepcopy(self)
        except TypeError:
            # a plugin of the user's whose state cannot be copied (a lock, an open file): no fork
            return None
        fork.pending = [p for p in fork.pending if p.uid not in uids]
        for uid in uids:
            del fork.records[uid]
        fork.queue.forget(uids)
        if fork.snapshot.dra is not None:
            fork.snapshot.dra.forget_pods(left)
        # times the clock stamped are after every creation time (start() leaves the clock at the
        # last creation); a creation time is the pod's place among the pods created
        n = len(uids) * US
        for k, pod in enumerate(fork.pending, 1):
            q = fork.records[pod.uid]
            q.seq = k
            q.timestamp = k * US if q.timestamp <= created * US else q.timestamp - n
            if q.last_failure > created * US:
                q.last_failure -= n
        fork._created_at_start = len(fork.pending)
        fork.queue.rekey(n)
        return fork

    # ------------------------------------------------------------------ result

    def result(self) -> SimulationResult:
        order = self.popped + [q for q in self.records.values() if q.first_pop < 0]
        outcomes = []
        for q in order:
            pod = q.pod
            if q.where == Location.DONE:
                status, node, msg = PodStatus.SCHEDULED, self.bound[pod.uid], None
            elif q.where == Location.PREEMPTED:
                ev = next(e for e in self.evictions if e.pod.uid == pod.uid)
                status, node, msg = PodStatus.PREEMPTED, ev.node, f"preempted by {ev.preemptor.key}"
            elif pod.uid in self.refused:
                status, node, msg = PodStatus.NOT_CREATED, None, self.refused[pod.uid]
            elif q.where == Location.WAITING:
                first = next(r.pod for r in self.records.values() if r.pod.uid == self.created_after[pod.uid])
                status, node = PodStatus.NOT_CREATED, None
                msg = (f"not created: its controller creates it once {first.key} is running and ready "
                       "(podManagementPolicy OrderedReady)")
            elif q.where == Location.IGNORED:
                status, node = PodStatus.UNSCHEDULABLE, None
                msg = f'no profile of the scheduler configuration has schedulerName "{pod.scheduler_name}"'
            elif q.gate == "SchedulingGates" and q.attempts == 0:
                status, node, msg = PodStatus.GATED, None, q.message
            elif q.gate == "DynamicResources" and q.attempts == 0:
                # a PreEnqueue rejection writes nothing to the pod (its claims do not exist yet)
                status, node, msg = PodStatus.UNSCHEDULABLE, None, None
            else:
                status, node, msg = PodStatus.UNSCHEDULABLE, None, q.message
            fit = q.fit if msg is not None and msg is q.message else None
            outcomes.append(PodOutcome(pod, status, node, msg, q.attempts, self.handle.nominated_node(pod) or None,
                                       fit))
        if self.first is None:
            return SimulationResult(outcomes, self.evictions, self.snapshot, self.cycles, list(self.replaced))
        earlier = self.first.result()
        evicted = {e.pod.uid: e for e in self.evictions}
        overhead = []
        for o in earlier.pods:
            e = evicted.get(o.pod.uid)
            if e is not None and o.status == PodStatus.SCHEDULED:  # a pod of this run preempted it
                o = dataclasses.replace(o, status=PodStatus.PREEMPTED, node=e.node,
                                        message=f"preempted by {e.preemptor.key}", fit_error=None)
            overhead.append(o)
        return SimulationResult(outcomes, earlier.preempted + self.evictions, self.snapshot,
                                {**earlier.cycles, **self.cycles}, list(self.replaced), overhead)


def run_simulation(snapshot: Snapshot, setup: SchedulerSetup, pending: Sequence[Pod], **kw: Any) -> SimulationResult:
    return Simulation(snapshot, setup, pending, **kw).run()
