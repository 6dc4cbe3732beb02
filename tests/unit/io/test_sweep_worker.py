"""A ``kplan sweep`` worker keeps its planner and the scale changes it resolved from point to point:
every point it runs is the same as on a worker that just started (no state of one point reaches
another), on clones with DRA slices, a StatefulSet with claims, and scaling down and up. A chain of
points (one run of the largest, forked for the others) gives what each point gives alone."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import kplan.io.sweep as worker
from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.io.scale import resolve_scale
from kplan.io.sweep import SweepInputs, run_chain, run_point
from kplan.scheduler.simulate import Simulation
from kplan.whatif.changes import Change, DrainNode, ScaleWorkload
from kplan.whatif.sweep import AxisStep, Fixed, NodeAxis, ScaleAxis, SweepPlan

ROOT = Path(__file__).resolve().parents[3]
DRA = ([str(ROOT / "fixtures/dra/cluster.yaml")], [str(ROOT / "fixtures/dra/serve.yaml")], None)
APP = ([str(ROOT / "fixtures/cluster.yaml"), str(ROOT / "fixtures/storage.yaml")],
       [str(ROOT / "fixtures/app/deployment.yaml"), str(ROOT / "fixtures/app/statefulset.yaml")], "shop")
# (inputs, axes): the llm-serve Deployment has 4 replicas, each with a claim from a template, and
# gpu-2 has a ResourceSlice its clones get; web and db have 3 replicas, db a claim per replica
WEB = ([str(ROOT / "fixtures/cluster.yaml")], [str(ROOT / "fixtures/app/deployment.yaml")], "shop")
CASES = [
    ("gpu clones with slices, llm-serve scaled down and up", DRA,
     (NodeAxis("gpu-2", (0, 1, 2)), ScaleAxis("deployment/ml/llm-serve", (2, 4, 6)))),
    ("clones, web scaled up, db scaled down and up with claims", APP,
     (NodeAxis("gen-c-3", (0, 2)), ScaleAxis("deployment/shop/web", (3, 9)), ScaleAxis("statefulset/shop/db", (1, 5)))),
]
SEEDS = (0, 1)
# web has 3 replicas: scaled down, kept and up, on 0 or 2 more nodes; up to 40 some do not fit
CHAIN_CASES = [
    *CASES,
    ("clones, web scaled down and up past what fits", WEB,
     (NodeAxis("gen-c-3", (0, 2)), ScaleAxis("deployment/shop/web", (1, 2, 3, 8, 20, 40)))),
]


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


def sweep_inputs(files: tuple[list[str], list[str], str | None], axes: tuple[NodeAxis | ScaleAxis, ...],
                 fixed: tuple[Change, ...] = ()) -> SweepInputs:
    cluster, manifests, namespace = files
    loaded = load_inputs(cluster, manifests, namespace=namespace, progress=False)
    planner = open_planner(loaded, None, seed=0, tie_break=TieBreak.random)
    plan = SweepPlan(axes, tuple(AxisStep(i) for i in range(len(axes))) + tuple(Fixed(c) for c in fixed))
    return SweepInputs(loaded.inputs, loaded.workloads, (planner.setup,), False, plan)


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


def counted_forks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each fork the runs ask for is made, in order."""
    forks: list[bool] = []
    without = Simulation.without

    def counted(sim: Simulation, left_out: set[str]) -> Simulation | None:
        fork = without(sim, left_out)
        forks.append(fork is not None)
        return fork

    monkeypatch.setattr(Simulation, "without", counted)
    return forks


@pytest.mark.parametrize(("files", "axes"), [c[1:] for c in CHAIN_CASES], ids=[c[0] for c in CHAIN_CASES])
def test_a_chain_gives_for_each_point_what_the_point_gives_alone(
        files: tuple[list[str], list[str], str | None], axes: tuple[NodeAxis | ScaleAxis, ...],
        monkeypatch: pytest.MonkeyPatch) -> None:
    kept = sweep_inputs(files, axes)
    fresh = pickle.loads(pickle.dumps(kept))
    forks = counted_forks(monkeypatch)
    points = kept.plan.points()
    for chain in kept.plan.chains():
        for seed in SEEDS:
            values = [points[i] for i in chain]
            assert run_chain(kept, values, seed) == [run_point(fresh, p, seed) for p in values], (values, seed)
    if files is WEB:
        # per chain and seed, every smaller count forks from the run of 40: 3, 8 and 20 and 1 (the
        # first replicas), and 2, whose scale-down deletes the second replica, once the first is tried
        assert forks == [True] * (2 * 2 * 5), forks


def test_the_subsets_of_a_run_are_the_runs_of_the_subsets(monkeypatch: pytest.MonkeyPatch) -> None:
    import copy

    from kplan.report.document import simulation_document

    planning = ROOT / "tests/fixtures/planning"
    loaded = load_inputs([str(planning / "cluster.yaml"), str(planning / "workloads.yaml")],
                         [str(planning / "burst.yaml")], progress=False)
    planner = open_planner(loaded, None, seed=2, tie_break=TieBreak.random)
    inputs = loaded.inputs
    n = len(inputs.pending)
    assert n >= 6
    subsets = [range(n), range(3), [], range(3), range(n - 1), [0], [j for j in range(n) if j != n // 2],
               list(range(1, n))]

    def alone(kept: Any) -> dict[str, Any]:
        subset = copy.copy(inputs)
        subset.pending = [inputs.pending[j] for j in kept]
        return simulation_document(planner.simulate(subset).result)

    expected = [alone(k) for k in subsets]
    assert planner.simulate_subsets(inputs, subsets, simulation_document) == expected
    monkeypatch.setattr(Simulation, "without", lambda sim, left_out: None)  # every subset runs alone
    assert planner.simulate_subsets(inputs, subsets, simulation_document) == expected
    with pytest.raises(ValueError):
        planner.simulate_subsets(inputs, [[n]], simulation_document)


def test_a_chain_with_a_drain_in_every_point_forks_and_gives_what_each_point_gives_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the drain's replacement pods come after web's new replicas in every point's pending pods
    kept = sweep_inputs(WEB, (ScaleAxis("deployment/shop/web", (3, 8, 20, 40)),), (DrainNode("gen-b-2"),))
    fresh = pickle.loads(pickle.dumps(kept))
    forks = counted_forks(monkeypatch)
    values = [(n,) for n in (3, 8, 20, 40)]
    for seed in SEEDS:
        assert run_chain(kept, values, seed) == [run_point(fresh, p, seed) for p in values], seed
    assert forks == [True] * 3 * len(SEEDS), forks
