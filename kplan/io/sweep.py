"""What a ``kplan sweep`` worker holds and runs: the parsed inputs, sent once, and one simulation per task.

A ``SweepInputs`` is pickled once to each worker (Dask's scatter); each task names a grid point
and a seed and returns a ``RunSummary`` of a few integers. The worker turns the point into
changes exactly as ``kplan whatif`` does (``--scale`` resolved with the run's seed by
kplan.io.scale, nodes cloned by kplan.whatif.changes) and simulates them with a Planner it keeps
for every later task. The inputs arrive settled (kplan.io.workspace settles them at load: the
running pods' start times, which rank a scale-down's deletions, are already theirs).

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

from kplan.framework.config import SchedulerConfig
from kplan.framework.registry import Registry
from kplan.io.inputs import Inputs, build_scenario
from kplan.io.manifests import RawObject
from kplan.io.scale import resolve_scale
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
    config: SchedulerConfig
    registry: Registry
    lowest_name: bool
    plan: SweepPlan
    _planner: Planner | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: scale changes resolved so far, by (--scale value, seed)
    _scales: dict[tuple[str, int], ScaleWorkload] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        # the planner holds a built snapshot and the lock cannot travel: each worker makes its own,
        # and resolves its own scale changes
        state = dict(self.__dict__)
        state["_planner"] = None
        state["_scales"] = {}
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def planner(self) -> Planner:
        with self._lock:  # a Dask worker may run tasks in several threads
            if self._planner is None:
                self._planner = Planner(self.inputs, build_scenario, self.config, self.registry,
                                        lowest_name=self.lowest_name, keep_base=False)
            return self._planner

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
    """One simulation of the sweep: the point ``values`` with ``seed`` (a Dask task)."""
    planner = ctx.planner()
    changed, applied = planner.changed(ctx.changes(values, seed))
    run = planner.simulate(changed, applied=applied, seed=seed)
    return summarize(seed, run.result)
