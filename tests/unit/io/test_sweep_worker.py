"""A ``kplan sweep`` worker keeps its planner and the scale changes it resolved from point to point:
every point it runs is the same as on a worker that just started (no state of one point reaches
another), on clones with DRA slices, a StatefulSet with claims, and scaling down and up."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import kplan.io.sweep as worker
from kplan.cli.simulate import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.io.scale import resolve_scale
from kplan.io.sweep import SweepInputs, run_point
from kplan.whatif.changes import ScaleWorkload
from kplan.whatif.sweep import AxisStep, NodeAxis, ScaleAxis, SweepPlan

ROOT = Path(__file__).resolve().parents[3]
DRA = ([str(ROOT / "fixtures/dra/cluster.yaml")], [str(ROOT / "fixtures/dra/serve.yaml")], None)
APP = ([str(ROOT / "fixtures/cluster.yaml"), str(ROOT / "fixtures/storage.yaml")],
       [str(ROOT / "fixtures/app/deployment.yaml"), str(ROOT / "fixtures/app/statefulset.yaml")], "shop")
# (inputs, axes): the llm-serve Deployment has 4 replicas, each with a claim from a template, and
# gpu-2 has a ResourceSlice its clones get; web and db have 3 replicas, db a claim per replica
CASES = [
    ("gpu clones with slices, llm-serve scaled down and up", DRA,
     (NodeAxis("gpu-2", (0, 1, 2)), ScaleAxis("deployment/ml/llm-serve", (2, 4, 6)))),
    ("clones, web scaled up, db scaled down and up with claims", APP,
     (NodeAxis("gen-c-3", (0, 2)), ScaleAxis("deployment/shop/web", (3, 9)), ScaleAxis("statefulset/shop/db", (1, 5)))),
]
SEEDS = (0, 1)


def value(x: Any) -> Any:
    """``x`` compared by value all the way down (a Pod's own equality is its identity)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return type(x).__name__, tuple(value(getattr(x, f.name)) for f in dataclasses.fields(x))
    if isinstance(x, list | tuple):
        return tuple(value(v) for v in x)
    if isinstance(x, Mapping):
        return tuple((k, value(v)) for k, v in x.items())
    if isinstance(x, set | frozenset):
        return frozenset(x)
    return x


def sweep_inputs(files: tuple[list[str], list[str], str | None], axes: tuple[NodeAxis | ScaleAxis, ...]
                 ) -> SweepInputs:
    cluster, manifests, namespace = files
    loaded = load_inputs(cluster, manifests, namespace=namespace, progress=False)
    planner = open_planner(loaded, None, seed=0, tie_break=TieBreak.random)
    plan = SweepPlan(axes, tuple(AxisStep(i) for i in range(len(axes))))
    return SweepInputs(loaded.inputs, loaded.workloads, planner.config, planner.registry, False, plan)


@pytest.mark.parametrize(("files", "axes"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_worker_that_ran_other_points_gives_what_a_fresh_worker_gives(
        files: tuple[list[str], list[str], str | None], axes: tuple[NodeAxis | ScaleAxis, ...]) -> None:
    kept = sweep_inputs(files, axes)
    points = kept.plan.points()
    # every point twice, the second pass backwards: each scale change and the planner are reused
    order = [(p, s) for p in points + points[::-1] for s in SEEDS]
    runs = [run_point(kept, p, s) for p, s in order]
    fresh = {(p, s): run_point(pickle.loads(pickle.dumps(kept)), p, s) for p in points for s in SEEDS}
    assert runs == [fresh[key] for key in order]
    assert len({r.pending for r in runs}) > 1, "the grid should span points that differ"


@pytest.mark.parametrize(("files", "axes"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_kept_scale_change_is_the_one_resolved_afresh_and_changes_the_inputs_alike(
        files: tuple[list[str], list[str], str | None], axes: tuple[NodeAxis | ScaleAxis, ...]) -> None:
    kept = sweep_inputs(files, axes)
    planner = kept.planner()
    for values in kept.plan.points():
        for seed in SEEDS:
            first = kept.changes(values, seed)
            again = kept.changes(values, seed)
            afresh = kept.plan.changes(values, lambda spec, s=seed: resolve_scale(kept.inputs, kept.workloads, spec,
                                                                                 seed=s))
            assert all(c is d for c, d in zip(again, first, strict=True) if isinstance(c, ScaleWorkload)), "kept"
            assert value(again) == value(afresh)
            a, _ = planner.changed(again)
            b, _ = planner.changed(afresh)
            for attr in ("nodes", "running", "pending", "pdbs", "storage", "dra", "created_after", "explicit",
                         "admitted"):
                assert value(getattr(a, attr)) == value(getattr(b, attr)), (values, seed, attr)
    scaled = [a for a in axes if isinstance(a, ScaleAxis)]
    assert len(kept._scales) == sum(len(a.values) for a in scaled) * len(SEEDS)
    assert not pickle.loads(pickle.dumps(kept))._scales, "each worker resolves its own"


def test_beyond_the_bound_the_oldest_scale_changes_are_dropped_and_the_points_stay_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    kept = sweep_inputs(DRA, (ScaleAxis("deployment/ml/llm-serve", (5, 6, 7)),))
    fresh = pickle.loads(pickle.dumps(kept))
    monkeypatch.setattr(worker, "MAX_KEPT_PODS", 4)  # 1, 2 and 3 pods created: 7 drops 5 and 6, 5 comes back
    runs = [run_point(kept, (n,), 0) for n in (5, 6, 7, 5)]
    assert list(kept._scales) == [("deployment/ml/llm-serve=7", 0), ("deployment/ml/llm-serve=5", 0)]
    assert runs == [run_point(fresh, (n,), 0) for n in (5, 6, 7, 5)]
