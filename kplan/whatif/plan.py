"""Running simulations of the parsed inputs, changed or not: the planner behind every command
(``kplan simulate``, ``whatif``, ``capacity`` and the node-count search of ``kplan explain``).

The inputs and their pods are immutable (kplan.scenario.settle decided the pods' priorities and
start times once, at load). Every run builds its own snapshot from them
(kplan.scenario.build_scenario), and a simulation keeps what it decides (nominations,
placements) in its own state, so runs cannot leak into each other.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from kplan.autoscaler.provisioning import Autoscaler
from kplan.framework.cycle_state import CycleState
from kplan.framework.release import Release
from kplan.framework.status import Code, Status
from kplan.model.objects import (
    PREEMPT_NEVER,
    UNSCHEDULABLE_TAINT,
    Node,
    Pod,
    tolerates,
    untolerated_taints,
)
from kplan.scenario import Inputs, Scenario, build_scenario
from kplan.scheduler.cycle import CycleResult
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.queue import QueuedPod
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import Observer, Simulation, SimulationResult
from kplan.whatif.autoscale import Autoscaling, autoscale_run
from kplan.whatif.capacity import CapacityOutcome, Replica, fill
from kplan.whatif.changes import Applied, Change, CloneNode, apply_changes, unknown_node
from kplan.whatif.diff import WhatIfDiff, diff_results, running_on_nodes
from kplan.whatif.search import Placed, SearchResult, fewest_for_most, smallest_passing

DEFAULT_SEARCH_LIMIT = 1024
T = TypeVar("T")


@dataclass
class Run:
    inputs: Inputs
    built: Scenario
    result: SimulationResult
    applied: Applied | None = None
    #: what the node autoscaler did during the run (None: the planner has none)
    autoscaling: Autoscaling | None = None

    @property
    def running(self) -> list[Pod]:
        return running_on_nodes(self.inputs.running, self.result.snapshot.table)


@dataclass
class WhatIf:
    before: Run
    after: Run
    diff: WhatIfDiff
    #: the answer for the first --until-fit template (its run is ``after``)
    until_fit: UntilFit | None = None
    #: one answer per --until-fit template, in the order given
    until_fits: list[UntilFit] = dataclasses.field(default_factory=list)


@dataclass(frozen=True)
class FreshNode:
    """One new node like a template, with the DaemonSet pods it starts with."""

    #: pending pods (namespace/name) that its filters reject, each with the first rejecting status
    blocked: dict[str, Status]
    #: resource name (and "pods") → what its daemon pods leave of its allocatable
    room: dict[str, int]


@dataclass(frozen=True)
class NeverFits:
    """A pending pod that no number of nodes like the template places: the filter that rejects
    it on a fresh, empty node like the template."""

    pod: str
    status: Status


@dataclass
class UntilFit:
    template: str
    #: the smallest number of nodes like the template that places as many of the pending pods as
    #: any number the search tried; None: no number places any pod more than the cluster does
    count: int | None
    reason: str = ""
    probes: dict[int, bool] = dataclasses.field(default_factory=dict)
    #: fewer template nodes than this cannot fit the pods (None: not computed, pods may preempt)
    lower_bound: int | None = None
    #: every pending pod (gated ones aside) is scheduled with ``count`` nodes
    all_fit: bool = False
    #: pods not scheduled without the nodes and scheduled with ``count`` of them
    placed: tuple[str, ...] = ()
    #: pods that never fit on a node like the template, with the rejecting filter
    never: tuple[NeverFits, ...] = ()
    #: pods that fit on an empty node like the template yet are not scheduled with ``count``
    #: nodes (the search stopped: more nodes placed no more pods, or the limit)
    still_pending: tuple[str, ...] = ()
    #: pods placed at each count probed
    placed_at: dict[int, int] = dataclasses.field(default_factory=dict)


def _placed(result: SimulationResult) -> int:
    return sum(1 for o in result.pods if o.status == PodStatus.SCHEDULED)


def _misfits(result: SimulationResult) -> list[str]:
    """The pending pods the run tried and did not schedule, in the run's order."""
    return [o.pod.key for o in result.pods if o.status not in (PodStatus.SCHEDULED, PodStatus.GATED)]


def _waits_for_room(sim: Simulation, pods: Sequence[Pod], added: Sequence[str]) -> bool:
    """Some pod is rejected by an added node for its resources alone (NodeResourcesFit is the
    first filter to reject it there), or passes one: more such nodes may still place it. Pods of
    one template are judged once."""
    rows = [r for r in (sim.snapshot.row_of(n) for n in added) if r is not None]
    if not rows:
        return False
    seen: set[tuple[str, ...]] = set()
    for pod in pods:
        owner = pod.controller()
        sig = (pod.namespace, owner.kind, owner.name) if owner is not None else (pod.namespace, pod.name)
        if sig in seen:
            continue
        seen.add(sig)
        if any(s is None or s.plugin == "NodeResourcesFit" for s in rejections(sim, pod, rows)):
            return True
    return False


def all_fit(result: SimulationResult) -> bool:
    """Every pending pod that the scheduler tries is scheduled (gated pods are never tried)."""
    return all(o.status == PodStatus.SCHEDULED for o in result.pods if o.status != PodStatus.GATED)


class Planner:
    def __init__(self, inputs: Inputs, setup: SchedulerSetup, *,
                 seed: int = 0, lowest_name: bool = False, keep_base: bool = True,
                 autoscaler: Autoscaler | None = None) -> None:
        self.inputs = inputs
        #: the release, plugin registry and configuration of its runs (a whatif's run after may
        #: have its own: ``setup=`` of simulate)
        self.setup = setup
        self.seed = seed
        self.lowest_name = lowest_name
        #: the node autoscaler (--autoscaler) that launches nodes for the pods each run leaves
        #: unschedulable (kplan.whatif.autoscale); None: the cluster's nodes are all there is
        self.autoscaler = autoscaler
        # built now for its warnings; the first unchanged run reuses it (a snapshot serves one
        # run: the simulation binds pods into it), unless the planner only runs changed inputs
        # (kplan sweep) and would hold a whole snapshot it never reads
        base = build_scenario(inputs, seed=seed, release=setup.release)
        self.warnings = list(base.warnings)
        self._base: Scenario | None = base if keep_base else None
        #: told (what the run is, pods tried, pods created) as each run goes: the CLI's progress
        #: bar; the planner prints nothing
        self.progress: Callable[[str, int, int], None] | None = None

    # -------------------------------------------------------------------------- runs

    def _built(self, inputs: Inputs | None, seed: int, release: Release | None = None) -> tuple[Inputs, Scenario]:
        """The scenario of ``inputs`` (default: the unchanged ones) for a run with ``seed``, which
        also names the claims made from templates, modelling ``release`` (None: the planner's)."""
        release = release or self.setup.release
        if inputs is None:
            inputs = self.inputs
            if self._base is not None and seed == self.seed and release == self.setup.release:
                built, self._base = self._base, None
                return inputs, built
        return inputs, build_scenario(inputs, seed=seed, release=release)

    def simulation(self, inputs: Inputs | None = None, *, setup: SchedulerSetup | None = None,
                   observer: Observer | None = None, keep_cycles: bool = False,
                   stage: str = "scheduling", seed: int | None = None) -> tuple[Inputs, Scenario, Simulation]:
        """A simulation of ``inputs`` (default: the unchanged inputs); ``seed`` overrides the
        planner's for this run (kplan sweep runs one planner with many seeds); ``setup`` the
        planner's scheduler (whatif's run after under another configuration)."""
        seed = self.seed if seed is None else seed
        setup = setup or self.setup
        inputs, built = self._built(inputs, seed, setup.release)
        report = self.progress
        first = None
        if built.daemons:
            # the new nodes' DaemonSet pods run before the pending pods are retried on them (a new
            # node is not ready until its network DaemonSet runs): scheduled first, into the snapshot
            first = Simulation(built.snapshot, setup, built.daemons, seed=seed,
                               lowest_name=self.lowest_name, pdb_allowed=built.pdb_allowed, keep_cycles=keep_cycles,
                               refused=built.refused)
            first.run()
        sim = Simulation(built.snapshot, setup, built.pending, seed=seed,
                         lowest_name=self.lowest_name, pdb_allowed=built.pdb_allowed, keep_cycles=keep_cycles,
                         observer=observer, created_after=built.inputs.created_after, replaced=built.inputs.replaced,
                         progress=None if report is None else lambda done, total: report(stage, done, total),
                         first=first, refused=built.refused)
        return inputs, built, sim

    def simulate(self, inputs: Inputs | None = None, *, setup: SchedulerSetup | None = None,
                 observer: Observer | None = None, keep_cycles: bool = False, applied: Applied | None = None,
                 stage: str = "scheduling", seed: int | None = None, autoscale: bool = True) -> Run:
        """A run of ``inputs`` (default: the unchanged inputs); with the planner's autoscaler (unless
        ``autoscale`` is False), kube-scheduler and the autoscaler in turn (kplan.whatif.autoscale)."""
        inputs, built, sim = self.simulation(inputs, setup=setup, observer=observer, keep_cycles=keep_cycles,
                                             stage=stage, seed=seed)
        result = sim.run()
        if self.autoscaler is None or not autoscale:
            return Run(inputs, built, result, applied)

        def run_pass(changed: Inputs, what: str) -> SimulationResult:
            return self.simulate(changed, setup=setup, keep_cycles=keep_cycles, stage=what, seed=seed,
                                 autoscale=False).result

        result, record, _ = autoscale_run(inputs, result, self.autoscaler, run_pass,
                                      seed=self.seed if seed is None else seed)
        return Run(inputs, built, result, applied, record)

    def simulate_subsets(self, inputs: Inputs, subsets: Sequence[Collection[int]], then: Callable[[SimulationResult], T],
                         *, seed: int | None = None) -> list[T]:
        """For each subset (indices of ``inputs.pending``), ``then`` of the run of ``inputs`` with
        only those pending pods, as ``simulate`` gives it, computed together: one run of all the
        pending pods, forked (Simulation.without) for each subset as it is about to pop a pod the
        subset lacks. Then a run of 4,550 of a Deployment's 5,450 replicas costs a copy of the
        run's state (0.06 s) instead of a simulation (1.6 s). A subset that a fork cannot serve
        exactly, or would serve before a twentieth of its pods were tried (the copy would cost more
        than it saves), is simulated on its own. Each result is handed to ``then`` as soon as it
        is complete, so that a caller who keeps a summary does not hold a snapshot per subset."""
        _, built, sim = self.simulation(inputs, seed=seed)
        uids = [p.uid for p in built.pending]
        lacking: dict[int, set[str]] = {}
        for i, subset in enumerate(subsets):
            kept = set(subset)
            if not kept <= set(range(len(uids))):
                raise ValueError(f"pending pod indices {sorted(kept)} of {len(uids)} pending pods")
            lacking[i] = {u for j, u in enumerate(uids) if j not in kept}
        #: per pod uid, how many subsets still waiting for their fork lack it
        lacked = Counter(u for missing in lacking.values() for u in missing)
        found: dict[int, T] = {}

        def finish(i: int, result: SimulationResult) -> None:
            found[i] = then(result)

        sim.start()
        waiting = {i: missing for i, missing in lacking.items() if missing}
        while waiting:
            stopped = sim.drain(until=lambda q: lacked[q.pod.uid] > 0)
            head = sim.queue.peek() if stopped else None
            for i in [i for i, missing in waiting.items() if head is None or head.pod.uid in missing]:
                missing = waiting.pop(i)
                lacked.subtract(missing)
                fork = (sim.without(missing) if len(sim.popped) * 20 >= len(uids) - len(missing) else None)
                if fork is None:
                    alone = dataclasses.replace(inputs, pending=[p for j, p in enumerate(inputs.pending)
                                                                 if uids[j] not in missing])
                    found[i] = then(self.simulate(alone, seed=seed).result)
                    continue
                fork.drain()
                finish(i, fork.result())
        if len(found) < len(subsets):
            sim.drain()
            result = sim.result()
            for i in range(len(subsets)):
                if i not in found:
                    finish(i, result)
        return [found[i] for i in range(len(subsets))]

    def changed(self, changes: Sequence[Change], inputs: Inputs | None = None) -> tuple[Inputs, Applied]:
        return apply_changes(inputs if inputs is not None else self.inputs, changes, seed=self.seed)

    # -------------------------------------------------------------------------- cheap check

    def blocked_on_empty_node(self, template: str | Node, pods: Sequence[str] | None = None,
                              inputs: Inputs | None = None) -> dict[str, Status]:
        """Pods (by namespace/name) that do not pass the filters on one new empty node like ``template``.

        The node is added to the cluster as it is before any pending pod is placed, with the
        DaemonSet pods it starts with. Such a pod can never fit on nodes like it: adding more of
        them changes nothing it is rejected for (its labels, taints or size). ``pods`` limits the
        check to some pods.
        """
        return self.fresh_node(template, pods, inputs).blocked

    def fresh_node(self, template: str | Node, pods: Sequence[str] | None = None,
                   inputs: Inputs | None = None) -> FreshNode:
        """One new node like ``template`` as a pending pod finds it: ``blocked_on_empty_node``'s
        pods, and the room its DaemonSet pods leave (they run before the pending pods are retried
        on it)."""
        changed, applied = self.changed([CloneNode(template, 1)], inputs)
        _, built, sim = self.simulation(changed)
        row = built.snapshot.row_of(applied.added_nodes[0])
        assert row is not None
        wanted = set(pods) if pods is not None else None
        out: dict[str, Status] = {}
        for pod in built.pending:
            if wanted is not None and pod.key not in wanted:
                continue
            status = rejections(sim, pod, [row])[0]
            if status is not None:
                out[pod.key] = status
        table = built.snapshot.table
        room = {r: max(int(table.alloc[row, col]) - int(table.requested[row, col]), 0)
                for col, r in enumerate(table.res.names)}
        room["pods"] = max(int(table.allowed_pods[row]) - int(table.pod_count[row]), 0)
        return FreshNode(out, room)

    # -------------------------------------------------------------------------- what-if

    def whatif(self, changes: Sequence[Change], *, after: SchedulerSetup | None = None,
               until_fit: str | Node | Sequence[str | Node] | None = None, limit: int = DEFAULT_SEARCH_LIMIT,
               stop_early: bool = True) -> WhatIf:
        """Before and after the changes; with ``until_fit`` (one template or several), the search
        for each template on top of the changes, the first template's run as ``after``. ``after``:
        the scheduler of the runs after the changes (default: the planner's).
        ``stop_early=False`` searches on while more nodes place no more pods (benchmarks compare)."""
        before = self.simulate(stage="before")
        changed, applied = self.changed(changes)
        templates = [until_fit] if isinstance(until_fit, (str, Node)) else list(until_fit or [])
        fits: list[UntilFit] = []
        run_after: Run | None = None
        base = self.unchanged_run(before, changes, changed, applied, after)
        if not templates:
            run_after = base or self.simulate(changed, setup=after, applied=applied, stage="after")
        for template in templates:
            run, fit, base = self._until_fit(changed, applied, template, after, limit, base, stop_early)
            fits.append(fit)
            run_after = run_after or run
        assert run_after is not None
        deleted = [f.pod for f in (run_after.applied or applied).deleted]
        diff = diff_results(before.result, before.running, run_after.result, run_after.running, deleted)
        return WhatIf(before, run_after, diff, fits[0] if fits else None, fits)

    def unchanged_run(self, before: Run, changes: Sequence[Change], changed: Inputs, applied: Applied,
                      setup: SchedulerSetup | None = None) -> Run | None:
        """``before`` (a run of the unchanged inputs with the planner's seed) as the run after
        ``changes`` (``changed``, ``applied``) under ``setup``, when that is the same run: no change
        and the planner's own scheduler. A run is a function of its inputs, scheduler and seed, so
        simulating it again would only repeat ``before`` (at 20,000 pending pods, a quarter of an
        until-fit search). None when the run after differs."""
        if changes or (setup is not None and setup is not self.setup):
            return None
        return Run(changed, before.built, before.result, applied, before.autoscaling)

    def _until_fit(self, changed: Inputs, applied: Applied, template: str | Node, setup: SchedulerSetup | None,
                   limit: int, base: Run | None = None, stop_early: bool = True) -> tuple[Run, UntilFit, Run]:
        """(the run at the answer, the answer, the run without template nodes: the next
        template's search starts from it)."""
        name = template if isinstance(template, str) else template.name
        if isinstance(template, str) and all(n.name != template for n in changed.nodes):
            # even when every pod already fits: a mistyped template is not "no change needed"
            raise unknown_node("--until-fit like=", template, [n.name for n in changed.nodes])
        if base is None:
            base = self.simulate(changed, setup=setup, applied=applied, stage="after")
        if all_fit(base.result):
            return base, UntilFit(name, 0, "every pending pod already fits", {0: True}, all_fit=True,
                                  placed_at={0: _placed(base.result)}), base
        misfits = _misfits(base.result)
        fresh = self.fresh_node(template, misfits, changed)
        blocked = fresh.blocked
        never = tuple(NeverFits(key, status) for key, status in blocked.items())
        hopeful = [key for key in misfits if key not in blocked]
        if not hopeful:
            why = [f"{n.pod} ({n.status.plugin + ': ' if n.status.plugin else ''}{n.status.message})" for n in never[:5]]
            more = f" and {len(never) - 5} more" if len(never) > 5 else ""
            reason = (f"no number of nodes like {name} helps: on an empty node like it these pods still do not fit: "
                      f"{'; '.join(why)}{more}")
            return base, UntilFit(name, None, reason, {0: False}, never=never,
                                  placed_at={0: _placed(base.result)}), base

        bound = self.lower_bound(base, template, changed, hopeful, fresh.room)
        if bound is not None and bound > limit:
            return base, UntilFit(name, None, f"at least {bound} nodes like {name} are needed (the pending pods' "
                                  f"requests exceed the free room), above the limit of {limit}", {0: False}, bound,
                                  never=never, still_pending=tuple(hopeful),
                                  placed_at={0: _placed(base.result)}), base
        never_keys = {n.pod for n in never}
        placed_at = {0: _placed(base.result)}

        def probe(k: int) -> Placed[Run]:
            if k == 0:
                return Placed(placed_at[0], False, True, base)
            more, more_applied = self.changed([CloneNode(template, k)], changed)
            merged = applied.merged(more_applied)
            _, built, sim = self.simulation(more, setup=setup, stage=f"until fit: {k} more")
            run = Run(more, built, sim.run(), merged)
            left = [o.pod for o in run.result.pods
                    if o.status not in (PodStatus.SCHEDULED, PodStatus.GATED) and o.pod.key not in never_keys]
            done = not left
            waiting = (not done and stop_early
                       and _waits_for_room(sim, left, more_applied.added_nodes))
            placed_at[k] = _placed(run.result)
            return Placed(placed_at[k], done, waiting, run)

        found: SearchResult[Run] = fewest_for_most(probe, limit, start=0, first=bound, stop_early=stop_early)
        probes = {0: False, **found.probes}
        run = found.value if found.value is not None else base
        if found.count is None:
            reason = (f"no number of nodes like {name} up to {limit} places a pending pod" if not never else
                      f"no number of nodes like {name} up to {limit} places a pending pod; some never fit on it")
            return base, UntilFit(name, None, reason, probes, bound, never=never, still_pending=tuple(hopeful),
                                  placed_at=placed_at), base
        left = set(_misfits(run.result))
        placed = tuple(key for key in misfits if key not in left)
        still = tuple(key for key in hopeful if key in left)
        return run, UntilFit(name, found.count, "", probes, bound, all_fit=not left, placed=placed, never=never,
                             still_pending=still, placed_at=placed_at), base

    def lower_bound(self, base: Run, template: str | Node, inputs: Inputs,
                    only: Collection[str] | None = None, room: Mapping[str, int] | None = None) -> int | None:
        """Fewer nodes like the template than this cannot fit every pod: the pending pods that did
        not fit need more of some resource than all free room plus that many template nodes.

        A template node's room is what its DaemonSet pods leave of its allocatable (``room``, as
        ``fresh_node`` measures it on one new node; each added node runs the same daemon pods:
        they are bound to their node and the new nodes are alike); without ``room``, it is
        measured here. Only valid when no pod is evicted (then the room of running pods never
        frees up), so None when a pending pod could preempt one of the placed pods.
        """
        result = base.result
        table = result.snapshot.table
        placed = [p for row in table.pods for p in row]
        lowest = min((p.priority for p in placed), default=None)
        if lowest is not None and any(o.pod.priority > lowest and o.pod.preemption_policy != PREEMPT_NEVER
                                      for o in result.pods):
            return None
        need: dict[str, int] = {}
        misfits = [o.pod for o in result.pods if o.status not in (PodStatus.SCHEDULED, PodStatus.GATED)
                   and (only is None or o.pod.key in only)]
        for pod in misfits:
            need["pods"] = need.get("pods", 0) + 1
            for r, q in pod.requests.items():
                need[r] = need.get(r, 0) + q
        # room counts only on nodes at least one of these pods may use: not cordoned, and no
        # NoSchedule/NoExecute taint that all of them leave untolerated
        usable = np.ones(len(table), dtype=bool)
        tolerations = {p.tolerations for p in misfits}
        for tid, taints in enumerate(table.taint_sets):
            if not any(untolerated_taints(taints, tols) == () for tols in tolerations):
                usable &= table.taint_ids != tid
        if not any(tolerates(tols, UNSCHEDULABLE_TAINT) for tols in tolerations):
            usable &= ~table.unschedulable
        if room is None:
            room = self.fresh_node(template, [], inputs).room
        bound = 1
        for r, want in need.items():
            per_node = room.get(r, 0)
            if r == "pods":
                free = int(np.maximum(table.allowed_pods - table.pod_count, 0)[usable].sum())
            else:
                col = table.res.get(r)
                free = (int(np.maximum(table.alloc[:, col] - table.requested[:, col], 0)[usable].sum())
                        if col is not None else 0)
            if want > free and per_node > 0:
                bound = max(bound, -(-(want - free) // per_node))
        return bound

    # -------------------------------------------------------------------------- explain

    def nodes_for_pod(self, key: str, template: str, limit: int) -> SearchResult[Run]:
        """The smallest number of nodes like ``template`` with which pod ``key`` is scheduled."""
        stop_once_bound = _StopOnceBound(key)

        def probe(k: int) -> tuple[bool, Run]:
            changed, applied = self.changed([CloneNode(template, k)])
            run = self.simulate(changed, applied=applied, observer=stop_once_bound, stage=f"node search: {k} more")
            o = run.result.outcome(*key.split("/", 1))
            return o is not None and o.status == PodStatus.SCHEDULED, run

        return smallest_passing(probe, limit, start=1)

    # -------------------------------------------------------------------------- capacity

    def capacity(self, make_replica: Callable[[int], Replica], limit: int, *,
                 ordered_after: Sequence[str] = (), inputs: Inputs | None = None) -> CapacityOutcome:
        """Replicas of ``make_replica`` after the pending pods of ``inputs`` (default: the unchanged ones)."""
        _, _, sim = self.simulation(inputs, stage="capacity")
        sim.start()
        return fill(sim, make_replica, limit, ordered_after=ordered_after)


def rejections(sim: Simulation, pod: Pod, rows: Sequence[int]) -> list[Status | None]:
    """Per row of ``sim``'s snapshot as it stands, the status of the first filter that rejects
    ``pod`` there (PreFilter's, for every row, when PreFilter rejects the pod), None where the
    pod passes every filter: the scheduler's own diagnosis, as a cycle would give it."""
    fw = sim.handle.frameworks.get(pod.scheduler_name)
    if fw is None:
        return [Status(Code.UNRESOLVABLE, (f'no profile of the scheduler configuration has '
                                           f'schedulerName "{pod.scheduler_name}"',))] * len(rows)
    state = CycleState()
    pre, status, _ = fw.run_pre_filter(state, pod)
    if not status.ok:
        return [status] * len(rows)
    table = sim.snapshot.table
    out: list[Status | None] = []
    restricted = pre is not None and pre.node_names is not None
    verdict = fw.run_filters(state, pod, table, np.asarray(rows, dtype=np.int64))
    for k, row in enumerate(rows):
        if restricted and pre is not None and pre.node_names is not None and table.names[row] not in pre.node_names:
            out.append(Status(Code.UNRESOLVABLE, ("the pod is restricted to other nodes by name",), "NodeAffinity"))
        elif verdict.codes[k] != 0:
            out.append(verdict.status(k, fw.filter_names))
        else:
            out.append(None)
    return out


class _StopOnceBound:
    """An observer that ends a run once pod ``key`` is bound: what happens after cannot unbind
    it, so the rest of the run is not needed. It reads only the outcome (DetailObserver)."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, sim: Simulation, q: QueuedPod, r: CycleResult) -> None:
        if r.node is not None and q.pod.key == self.key:
            sim.stop()

    def wants_detail(self, pod: Pod) -> bool:
        return False
