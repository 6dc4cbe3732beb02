"""What a ``kplan sweep`` worker holds and runs: the parsed inputs, sent once, and chains of points.

A ``SweepInputs`` is pickled once to each worker (Dask's scatter); each task names a chain of grid
points (SweepPlan.chains: points that differ only in one workload's replicas) and a seed, and
returns a ``RunSummary`` of a few integers per point. The worker turns a point into changes
exactly as ``kplan whatif`` does (``--scale`` resolved with the run's seed by kplan.io.scale,
nodes cloned by kplan.whatif.changes) and simulates them with a Planner it keeps for every later
task. Where a point's changed inputs are the chain's largest point's with only some of their
pending pods, one run of the largest serves it (run_chain). The inputs arrive settled (kplan.io.workspace settles them at
load: the running pods' start times, which rank a scale-down's deletions, are already theirs).

A scale change is a pure function of the inputs, the ``--scale`` value and the seed, and the
costliest part of a point besides its simulation: scaling up expands the workload at its new
size to find the pods to create (0.3-0.5 s for a Deployment of 5,000 replicas, a tenth of the
point). A worker keeps the changes it resolved and reuses them for the other points of the same
value and seed (ten times each on a 10 x 10 grid), up to MAX_KEPT_PODS created pods held.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kplan.io.scale import resolve_scale
from kplan.model.karpenter import Catalog
from kplan.model.raw import RawObject
from kplan.scenario import Inputs
from kplan.scheduler.setup import SchedulerSetup
from kplan.whatif.autoscale import ClusterAutoscalerSettings
from kplan.whatif.changes import Change, ScaleWorkload
from kplan.whatif.plan import Planner
from kplan.whatif.sweep import RunSummary, SweepPlan, summarize

#: the most created pods (and their claims) a worker keeps in resolved scale changes; beyond it the
#: oldest are dropped and resolved again when asked (a grid of large workloads times many seeds)
MAX_KEPT_PODS = 200_000


@dataclass
class SweepInputs:
    """The parsed inputs of one load (one per distinct naming seed) and how to run them."""

    inputs: Inputs
    #: workload objects by (kind, namespace, name), for --scale
    workloads: Mapping[tuple[str, str, str], RawObject]
    #: the scheduler set-up of each release of the plan's release axis (one without it): a point
    #: runs with its release's (SweepPlan.release_index)
    setups: tuple[SchedulerSetup, ...]
    lowest_name: bool
    plan: SweepPlan
    #: --autoscaler karpenter's instance-type catalog, or --autoscaler cluster-autoscaler's settings
    #: (None: no autoscaler): each worker's planners get the autoscaler, made from the inputs
    catalog: Catalog | ClusterAutoscalerSettings | None = None
    #: a planner per release index, made on first use
    _planners: dict[int, Planner] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: scale changes resolved so far, by (--scale value, seed)
    _scales: dict[tuple[str, int], ScaleWorkload] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        # the planner holds a built snapshot and the lock cannot travel: each worker makes its own,
        # and resolves its own scale changes
        state = dict(self.__dict__)
        state["_planners"] = {}
        state["_scales"] = {}
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def planner(self, values: Sequence[int] = ()) -> Planner:
        """The planner of the point ``values``'s release (the only one without a release axis)."""
        release = self.plan.release_index(values) if values else 0
        with self._lock:  # a Dask worker may run tasks in several threads
            found = self._planners.get(release)
            if found is None:
                found = self._planners[release] = Planner(self.inputs, self.setups[release],
                                                          lowest_name=self.lowest_name, keep_base=False)
                if isinstance(self.catalog, ClusterAutoscalerSettings):
                    from kplan.whatif.autoscale import cluster_autoscaler

                    found.autoscaler = cluster_autoscaler(self.inputs, self.catalog, self.setups[release], seed=0)
                elif self.catalog is not None:
                    from kplan.autoscaler.karpenter.scheduler import solve
                    from kplan.whatif.autoscale import karpenter

                    found.autoscaler = karpenter(self.inputs, self.catalog, solve, seed=0)
            return found

    def scale(self, spec: str, seed: int) -> ScaleWorkload:
        """``resolve_scale`` of the value ``spec`` with ``seed``, resolved once per worker."""
        key = (spec, seed)
        found = self._scales.get(key)
        if found is not None:
            return found
        found = resolve_scale(self.inputs, self.workloads, spec, seed=seed)  # outside the lock: it may be long
        with self._lock:
            self._scales[key] = found
            kept = sum(_held(s) for s in self._scales.values())
            while kept > MAX_KEPT_PODS and len(self._scales) > 1:
                oldest = next(iter(self._scales))
                kept -= _held(self._scales.pop(oldest))
        return found

    def changes(self, values: Sequence[int], seed: int) -> list[Change]:
        return self.plan.changes(values, lambda spec: self.scale(spec, seed))


def _held(change: ScaleWorkload) -> int:
    """The objects a kept scale change holds that the inputs do not (its deleted pods are theirs)."""
    return len(change.add) + len(change.claims)


def run_point(ctx: SweepInputs, values: tuple[int, ...], seed: int) -> RunSummary:
    """One simulation of the sweep: the point ``values`` with ``seed``."""
    planner = ctx.planner(values)
    changed, applied = planner.changed(ctx.changes(values, seed))
    run = planner.simulate(changed, applied=applied, seed=seed)
    return summarize(seed, run.result, run.autoscaling)


def run_chain(ctx: SweepInputs, chain: Sequence[tuple[int, ...]], seed: int) -> list[RunSummary]:
    """The points of ``chain`` with ``seed`` (a Dask task): points that differ only in the value of
    the plan's chain axis, from the smallest to the largest (SweepPlan.chains). Each point's
    summary is the one ``run_point`` gives.

    A workload scaled to more replicas adds new ones after the others, and to fewer deletes some,
    so a point's changed inputs are often the largest point's with only some of their pending
    pods (nothing else differs: no running pod deleted, no claim, no StatefulSet order). One run
    of the largest then serves all such points (Planner.simulate_subsets); the others run alone.
    """
    if len(chain) == 1 or ctx.catalog is not None:
        # with an autoscaler each point has its own passes (a fork of one run cannot add nodes)
        return [run_point(ctx, values, seed) for values in chain]
    planner = ctx.planner(chain[-1])  # the points of a chain differ in one scale axis: one release
    head = ctx.changes(chain[-1], seed)
    changed, _ = planner.changed(head)
    subsets: dict[int, list[int]] = {}
    for i, values in enumerate(chain[:-1]):
        kept = _kept_pods(planner, ctx.changes(values, seed), head, changed)
        if kept is not None:
            subsets[i] = kept
    runs = planner.simulate_subsets(changed, [*subsets.values(), range(len(changed.pending))],
                                    lambda result: summarize(seed, result), seed=seed)
    by_point = dict(zip(subsets, runs[:-1], strict=True))
    out = [by_point[i] if i in by_point else run_point(ctx, values, seed) for i, values in enumerate(chain[:-1])]
    return [*out, runs[-1]]


def _kept_pods(planner: Planner, changes: Sequence[Change], head: Sequence[Change], head_changed: Any
               ) -> list[int] | None:
    """The indices of the head's changed pending pods (``head_changed``, from ``head``) that the
    point with ``changes`` has, when its changed inputs are the head's with only those pending
    pods, in the same order; else None. The changes may differ in the scale of one workload only."""
    if len(changes) != len(head):
        return None
    differ = [(c, h) for c, h in zip(changes, head, strict=True) if c != h]
    if len(differ) != 1:
        return None
    c, h = differ[0]
    if not (isinstance(c, ScaleWorkload) and isinstance(h, ScaleWorkload) and c.label == h.label
            and not (c.claims or h.claims or c.created_after or h.created_after)):
        return None
    changed, _ = planner.changed(changes)
    if len(changed.running) != len(head_changed.running) or any(
            a is not b for a, b in zip(changed.running, head_changed.running, strict=True)):
        return None
    pending = head_changed.pending
    kept: list[int] = []
    j = 0
    for a in changed.pending:
        while j < len(pending) and pending[j].uid != a.uid:
            j += 1
        if j == len(pending):
            return None
        b = pending[j]
        # the same pod of the inputs, or the same new replica (kplan.io.scale draws every
        # replica's name and uid in order, whatever the count), admitted alike
        if a is not b and a.name != b.name:
            return None
        if (changed.explicit.get(a.uid) != head_changed.explicit.get(b.uid)
                or (a.uid in changed.admitted) != (b.uid in head_changed.admitted)):
            return None
        kept.append(j)
        j += 1
    return kept
