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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from kplan.errors import InputError
from kplan.framework.config import SchedulerConfig
from kplan.framework.cycle_state import CycleState
from kplan.framework.registry import Registry
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
from kplan.scheduler.simulate import Observer, Simulation, SimulationResult
from kplan.whatif.capacity import CapacityOutcome, fill
from kplan.whatif.changes import Applied, Change, CloneNode, apply_changes
from kplan.whatif.diff import WhatIfDiff, diff_results, running_on_nodes
from kplan.whatif.search import SearchResult, smallest_passing

DEFAULT_SEARCH_LIMIT = 1024
T = TypeVar("T")


@dataclass
class Run:
    inputs: Inputs
    built: Scenario
    result: SimulationResult
    applied: Applied | None = None

    @property
    def running(self) -> list[Pod]:
        return running_on_nodes(self.inputs.running, self.result.snapshot.table)


@dataclass
class WhatIf:
    before: Run
    after: Run
    diff: WhatIfDiff
    until_fit: UntilFit | None = None


@dataclass
class UntilFit:
    template: str
    #: the smallest number of nodes like the template that fits every pending pod; None: none does
    count: int | None
    reason: str = ""
    probes: dict[int, bool] = dataclasses.field(default_factory=dict)
    #: fewer template nodes than this cannot fit the pods (None: not computed, pods may preempt)
    lower_bound: int | None = None


def all_fit(result: SimulationResult) -> bool:
    """Every pending pod that the scheduler tries is scheduled (gated pods are never tried)."""
    return all(o.status == PodStatus.SCHEDULED for o in result.pods if o.status != PodStatus.GATED)


class Planner:
    def __init__(self, inputs: Inputs, config: SchedulerConfig, registry: Registry, *,
                 seed: int = 0, lowest_name: bool = False, keep_base: bool = True) -> None:
        self.inputs = inputs
        self.config = config
        self.registry = registry
        self.seed = seed
        self.lowest_name = lowest_name
        # built now for its warnings; the first unchanged run reuses it (a snapshot serves one
        # run: the simulation binds pods into it), unless the planner only runs changed inputs
        # (kplan sweep) and would hold a whole snapshot it never reads
        base = build_scenario(inputs, seed=seed)
        self.warnings = list(base.warnings)
        self._base: Scenario | None = base if keep_base else None
        #: told (what the run is, pods tried, pods created) as each run goes: the CLI's progress
        #: bar; the planner prints nothing
        self.progress: Callable[[str, int, int], None] | None = None

    # -------------------------------------------------------------------------- runs

    def _built(self, inputs: Inputs | None, seed: int) -> tuple[Inputs, Scenario]:
        """The scenario of ``inputs`` (default: the unchanged ones) for a run with ``seed``, which
        also names the claims made from templates."""
        if inputs is None:
            inputs = self.inputs
            if self._base is not None and seed == self.seed:
                built, self._base = self._base, None
                return inputs, built
        return inputs, build_scenario(inputs, seed=seed)

    def simulation(self, inputs: Inputs | None = None, *, config: SchedulerConfig | None = None,
                   observer: Observer | None = None, keep_cycles: bool = False,
                   stage: str = "scheduling", seed: int | None = None) -> tuple[Inputs, Scenario, Simulation]:
        """A simulation of ``inputs`` (default: the unchanged inputs); ``seed`` overrides the
        planner's for this run (kplan sweep runs one planner with many seeds)."""
        seed = self.seed if seed is None else seed
        inputs, built = self._built(inputs, seed)
        report = self.progress
        sim = Simulation(built.snapshot, config or self.config, self.registry, built.pending, seed=seed,
                         lowest_name=self.lowest_name, pdb_allowed=built.pdb_allowed, keep_cycles=keep_cycles,
                         observer=observer, created_after=built.inputs.created_after, replaced=built.inputs.replaced,
                         progress=None if report is None else lambda done, total: report(stage, done, total))
        return inputs, built, sim

    def simulate(self, inputs: Inputs | None = None, *, config: SchedulerConfig | None = None,
                 observer: Observer | None = None, keep_cycles: bool = False, applied: Applied | None = None,
                 stage: str = "scheduling", seed: int | None = None) -> Run:
        inputs, built, sim = self.simulation(inputs, config=config, observer=observer, keep_cycles=keep_cycles,
                                             stage=stage, seed=seed)
        return Run(inputs, built, sim.run(), applied)

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
        return apply_changes(inputs if inputs is not None else self.inputs, changes)

    # -------------------------------------------------------------------------- cheap check

    def blocked_on_empty_node(self, template: str | Node, pods: Sequence[str] | None = None,
                              inputs: Inputs | None = None) -> dict[str, Status]:
        """Pods (by namespace/name) that do not pass the filters on one new empty node like ``template``.

        The node is added to the cluster as it is before any pending pod is placed. Such a pod
        can never fit on nodes like it: adding more of them changes nothing it is rejected for
        (its labels, taints or size). ``pods`` limits the check to some pods.
        """
        changed, applied = self.changed([CloneNode(template, 1)], inputs)
        _, built, sim = self.simulation(changed)
        row = built.snapshot.row_of(applied.added_nodes[0])
        assert row is not None
        rows = np.array([row], dtype=np.int64)
        wanted = set(pods) if pods is not None else None
        out: dict[str, Status] = {}
        for pod in built.pending:
            if wanted is not None and pod.key not in wanted:
                continue
            fw = sim.handle.frameworks.get(pod.scheduler_name)
            if fw is None:
                out[pod.key] = Status(Code.UNRESOLVABLE, (f'no profile of the scheduler configuration has '
                                                          f'schedulerName "{pod.scheduler_name}"',))
                continue
            state = CycleState()
            pre, status, _ = fw.run_pre_filter(state, pod)
            if not status.ok:
                out[pod.key] = status
                continue
            if pre is not None and pre.node_names is not None and applied.added_nodes[0] not in pre.node_names:
                out[pod.key] = Status(Code.UNRESOLVABLE, ("the pod is restricted to other nodes by name",), "NodeAffinity")
                continue
            verdict = fw.run_filters(state, pod, built.snapshot.table, rows)
            if verdict.codes[0] != 0:
                out[pod.key] = verdict.status(0, fw.filter_names)
        return out

    # -------------------------------------------------------------------------- what-if

    def whatif(self, changes: Sequence[Change], *, after_config: SchedulerConfig | None = None,
               until_fit: str | Node | None = None, limit: int = DEFAULT_SEARCH_LIMIT) -> WhatIf:
        before = self.simulate(stage="before")
        changed, applied = self.changed(changes)
        fit: UntilFit | None = None
        if until_fit is None:
            after = self.simulate(changed, config=after_config, applied=applied, stage="after")
        else:
            after, fit = self._until_fit(changed, applied, until_fit, after_config, limit)
        deleted = [f.pod for f in (after.applied or applied).deleted]
        diff = diff_results(before.result, before.running, after.result, after.running, deleted)
        return WhatIf(before, after, diff, fit)

    def _until_fit(self, changed: Inputs, applied: Applied, template: str | Node, config: SchedulerConfig | None,
                   limit: int) -> tuple[Run, UntilFit]:
        name = template if isinstance(template, str) else template.name
        if isinstance(template, str) and all(n.name != template for n in changed.nodes):
            # even when every pod already fits: a mistyped template is not "no change needed"
            raise InputError(f"--until-fit like={template}: no node named {template!r} in the cluster")
        base = self.simulate(changed, config=config, applied=applied, stage="after")
        if all_fit(base.result):
            return base, UntilFit(name, 0, "every pending pod already fits", {0: True})
        misfits = [o.pod.key for o in base.result.pods if o.status not in (PodStatus.SCHEDULED, PodStatus.GATED)]
        blocked = self.blocked_on_empty_node(template, misfits, changed)
        if blocked:
            why = [f"{key} ({s.plugin + ': ' if s.plugin else ''}{s.message})" for key, s in list(blocked.items())[:5]]
            more = f" and {len(blocked) - 5} more" if len(blocked) > 5 else ""
            reason = (f"no number of nodes like {name} helps: on an empty node like it these pods still do not fit: "
                      f"{'; '.join(why)}{more}")
            return base, UntilFit(name, None, reason, {0: False})

        bound = self.lower_bound(base, template, changed)
        if bound is not None and bound > limit:
            return base, UntilFit(name, None, f"at least {bound} nodes like {name} are needed (the pending pods' "
                                  f"requests exceed the free room), above the limit of {limit}", {0: False}, bound)

        def probe(k: int) -> tuple[bool, Run]:
            if k == 0:
                return False, base
            more, more_applied = self.changed([CloneNode(template, k)], changed)
            merged = Applied(applied.changes + more_applied.changes, applied.added_nodes + more_applied.added_nodes,
                             applied.removed_nodes, applied.cordoned_nodes, applied.pods)
            run = self.simulate(more, config=config, applied=merged, stage=f"until fit: {k} more")
            return all_fit(run.result), run

        found: SearchResult[Run] = smallest_passing(probe, limit, start=bound or 1)
        probes = {0: False, **found.probes}
        run = found.value if found.value is not None else base
        if found.count is None:
            return run, UntilFit(name, None, f"no number of nodes like {name} up to {limit} makes every pending pod "
                                             "fit", probes, bound)
        return run, UntilFit(name, found.count, "", probes, bound)

    def lower_bound(self, base: Run, template: str | Node, inputs: Inputs) -> int | None:
        """Fewer nodes like the template than this cannot fit every pod: the pending pods that did
        not fit need more of some resource than all free room plus that many template nodes.

        Only valid when no pod is evicted (then the room of running pods never frees up), so
        None when a pending pod could preempt one of the placed pods.
        """
        node = template if isinstance(template, Node) else next(n for n in inputs.nodes if n.name == template)
        result = base.result
        table = result.snapshot.table
        placed = [p for row in table.pods for p in row]
        lowest = min((p.priority for p in placed), default=None)
        if lowest is not None and any(o.pod.priority > lowest and o.pod.preemption_policy != PREEMPT_NEVER
                                      for o in result.pods):
            return None
        need: dict[str, int] = {}
        misfits = [o.pod for o in result.pods if o.status not in (PodStatus.SCHEDULED, PodStatus.GATED)]
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
        bound = 1
        for r, want in need.items():
            if r == "pods":
                free = int(np.maximum(table.allowed_pods - table.pod_count, 0)[usable].sum())
                per_node = int(node.allocatable.get("pods", 0))
            else:
                col = table.res.get(r)
                free = (int(np.maximum(table.alloc[:, col] - table.requested[:, col], 0)[usable].sum())
                        if col is not None else 0)
                per_node = int(node.allocatable.get(r, 0))
            if want > free and per_node > 0:
                bound = max(bound, -(-(want - free) // per_node))
        return bound

    # -------------------------------------------------------------------------- explain

    def nodes_for_pod(self, key: str, template: str, limit: int) -> SearchResult[Run]:
        """The smallest number of nodes like ``template`` with which pod ``key`` is scheduled."""
        def stop_once_bound(sim: Simulation, q: QueuedPod, r: CycleResult) -> None:
            # what happens after the pod is bound cannot unbind it: the rest of the run is not needed
            if r.node is not None and q.pod.key == key:
                sim.stop()

        def probe(k: int) -> tuple[bool, Run]:
            changed, applied = self.changed([CloneNode(template, k)])
            run = self.simulate(changed, applied=applied, observer=stop_once_bound, stage=f"node search: {k} more")
            o = run.result.outcome(*key.split("/", 1))
            return o is not None and o.status == PodStatus.SCHEDULED, run

        return smallest_passing(probe, limit, start=1)

    # -------------------------------------------------------------------------- capacity

    def capacity(self, make_replica: Callable[[int], Pod], limit: int) -> CapacityOutcome:
        _, _, sim = self.simulation(stage="capacity")
        sim.start()
        return fill(sim, make_replica, limit)
