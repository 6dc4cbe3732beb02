"""Simulation.without: a run forked as it is about to pop a pod that some subset of its pending
pods lacks, with the lacking pods taken out, goes on exactly as a run of only that subset (kplan
sweep's chains).

Prefixes and other subsets of the conformance scenarios' pending pods (real kube-scheduler
behaviour: retries, backoff, preemption and nominations, affinity and spread, gates, storage, DRA)
and of the shipped fixtures are forked and compared, document and claims, with a fresh run of the
subset: every prefix (10 spread over the scenarios with more pods, two of the 2,000-3,000-node
ones), every third pod left out past the first third, and single pods left out (5 spread). A fork
the engine refuses must be one it names: a left-out pod whose volumes use claims, or a kept pod with
resource claims after a left-out one with claims made from templates.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest

from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.model.objects import Volume
from kplan.report.document import SimulationDocument, simulation_document
from kplan.scheduler.queue import SECOND
from kplan.scheduler.simulate import Simulation, SimulationResult
from kplan.whatif.plan import Planner
from tests.conformance.locate import location, present

ROOT = Path(__file__).resolve().parents[3]
PLANNING = ROOT / "tests" / "fixtures" / "planning"
CONFORMANCE = location()
ALL = sorted(p.name for p in CONFORMANCE.iterdir() if (p / "pods.yaml").is_file()) if present() else []
SCENARIOS = [s for s in ALL if not s.startswith("scale-")]
#: 2,000 to 3,000 nodes: a third and two thirds of their pending pods
LARGE = [s for s in ALL if s.startswith("scale-")]
FIXTURES = [
    ("shipped example", [str(ROOT / "fixtures" / "cluster.yaml")], [str(ROOT / "fixtures" / "manifests")]),
    ("planning burst", [str(PLANNING / "cluster.yaml"), str(PLANNING / "workloads.yaml")], [str(PLANNING / "burst.yaml")]),
    ("high-priority replicas that preempt", [str(PLANNING / "cluster.yaml"), str(PLANNING / "workloads.yaml")],
     [str(PLANNING / "replica-high.yaml")]),
]


def planner_for(cluster: list[str], pods: list[str], config: str | None, tie_break: TieBreak) -> tuple[Any, Planner]:
    workspace = load_inputs(cluster, pods, progress=False)
    return workspace.inputs, open_planner(workspace, config, seed=3, tie_break=tie_break)


def lacking(inputs: Any, kept: list[int]) -> set[str]:
    keep = set(kept)
    return {p.uid for j, p in enumerate(inputs.pending) if j not in keep}


def fork_without(planner: Planner, inputs: Any, kept: list[int]) -> Simulation | None:
    _, _, sim = planner.simulation(inputs)
    sim.start()
    missing = lacking(inputs, kept)
    sim.drain(until=lambda q: q.pod.uid in missing)
    return sim.without(missing)


def outcome(result: SimulationResult) -> tuple[SimulationDocument, Any]:
    """The run's document, and its resource claims as the run left them (the document names a
    pod's claims, not the claims the controller made for pods)."""
    dra = result.snapshot.dra
    claims = None if dra is None else {k: (c.uid, c.allocation, c.reserved_for, c.owner_uid)
                                       for k, c in dra.claims.items()}
    return simulation_document(result), claims


def subset_of(inputs: Any, kept: list[int]) -> Any:
    """The inputs with only the pending pods of these indices."""
    subset = copy.copy(inputs)
    subset.pending = [inputs.pending[j] for j in kept]
    return subset


def alone(planner: Planner, inputs: Any, kept: list[int]) -> tuple[dict[str, Any], Any]:
    return outcome(planner.simulate(subset_of(inputs, kept)).result)


def refusable(inputs: Any, kept: list[int]) -> bool:
    """A left-out pod whose volumes use claims, which the PV controller may bind before it runs, or
    a kept pod with resource claims after a left-out one with claims from templates, whose names
    the controller drew first."""
    keep = set(kept)
    templated = False
    for j, p in enumerate(inputs.pending):
        if j in keep:
            if templated and p.resource_claims:
                return True
            continue
        if any(v.claim_name for v in p.volumes):
            return True
        templated = templated or any(c.template_name for c in p.resource_claims)
    return False


#: the most prefixes and single pods left out compared per scenario (the sampling ones have 100-200
#: pending pods, each subset costs three runs)
MOST, SINGLES = 10, 5


def spread(n: int, k: int) -> list[int]:
    """Every number below ``n`` when there are at most ``k``, else ``k`` of them spread evenly."""
    return list(range(n)) if n <= k else sorted({round((i + 1) * n / (k + 1)) for i in range(k)})


def subsets(n: int, prefixes: int, singles: int) -> list[list[int]]:
    """Prefixes, every third pod left out past the first third, single pods left out."""
    kept = [list(range(length)) for length in spread(n, prefixes)]
    if n >= 3:
        kept.append([j for j in range(n) if j < n // 3 or j % 3])
    kept += [[j for j in range(n) if j != k] for k in spread(n, singles)] if singles else []
    return [s for s in kept if len(s) < n]


def queue_state(sim: Simulation) -> tuple[Any, ...]:
    """What the queue holds, pod by pod: where, its keys and counters, and the clock."""
    records = {uid: (q.where, q.seq, q.timestamp, q.last_failure, q.attempts, q.fails, q.errs, q.rejectors, q.held)
               for uid, q in sim.records.items()}
    return sim.queue.now, records, list(sim.records), [q.pod.uid for q in sim.popped]


def state_at_the_fork(planner: Planner, inputs: Any, kept: list[int], pops: int) -> tuple[Any, ...]:
    """The subset's own run after as many pops as the fork's run made."""
    _, _, sim = planner.simulation(subset_of(inputs, kept))
    sim.start()
    seen = [0]

    def enough(q: Any) -> bool:
        seen[0] += 1
        return seen[0] > pops

    sim.drain(until=enough)
    return queue_state(sim)


def check_subsets(inputs: Any, planner: Planner, kept_lists: list[list[int]]) -> int:
    """Forks each subset and compares it: the queue at the fork with the subset's own run after as
    many pops, and the runs' outcomes; the number forked. A fork is refused exactly when
    ``refusable`` says so."""
    forked = 0
    for kept in kept_lists:
        fork = fork_without(planner, inputs, kept)
        where = f"{len(kept)} of {len(inputs.pending)} pods, {sorted(set(range(len(inputs.pending))) - set(kept))[:8]} out"
        assert (fork is None) == refusable(inputs, kept), where
        if fork is None:
            continue
        pops = sum(q.attempts for q in fork.records.values())
        assert queue_state(fork) == state_at_the_fork(planner, inputs, kept, pops), where
        fork.drain()
        assert outcome(fork.result()) == alone(planner, inputs, kept), where
        forked += 1
    return forked


@pytest.mark.skipif(not SCENARIOS, reason=f"no conformance suite at {CONFORMANCE}")
@pytest.mark.parametrize("scenario", SCENARIOS + LARGE)
def test_subsets_of_a_conformance_scenario_fork_into_the_runs_of_the_subsets(scenario: str) -> None:
    d = CONFORMANCE / scenario
    inputs, planner = planner_for([str(d / "cluster.yaml")], [str(d / "pods.yaml")], str(d / "scheduler-config.yaml"),
                                  TieBreak.lowest_name)
    check_subsets(inputs, planner, subsets(len(inputs.pending), *((2, 0) if scenario in LARGE else (MOST, SINGLES))))


@pytest.mark.skipif(not SCENARIOS, reason=f"no conformance suite at {CONFORMANCE}")
def test_every_family_but_storage_has_subsets_that_fork() -> None:
    """The storage scenarios' last pods use volume claims; every other family (DRA's resource
    claims included) forks every prefix, so that the comparisons above are of forks."""
    forkable: dict[str, int] = {}
    for scenario in SCENARIOS:
        d = CONFORMANCE / scenario
        inputs = load_inputs([str(d / "cluster.yaml")], [str(d / "pods.yaml")], progress=False).inputs
        family = scenario.split("-")[0]
        forkable[family] = forkable.get(family, 0) + sum(
            1 for kept in subsets(len(inputs.pending), MOST, SINGLES) if not refusable(inputs, kept))
    assert {f for f, n in forkable.items() if n == 0} <= {"storage"}, forkable


@pytest.mark.parametrize(("cluster", "pods"), [f[1:] for f in FIXTURES], ids=[f[0] for f in FIXTURES])
@pytest.mark.parametrize("tie_break", [TieBreak.random, TieBreak.lowest_name])
def test_subsets_of_a_fixture_fork_into_the_runs_of_the_subsets(cluster: list[str], pods: list[str],
                                                                 tie_break: TieBreak) -> None:
    inputs, planner = planner_for(cluster, pods, None, tie_break)
    kept_lists = subsets(len(inputs.pending), len(inputs.pending), len(inputs.pending))
    assert check_subsets(inputs, planner, kept_lists) == len(kept_lists)


def test_the_fork_leaves_the_run_it_came_from_as_it_was() -> None:
    inputs, planner = planner_for(*FIXTURES[2][1:], None, TieBreak.random)
    length = len(inputs.pending) // 2
    _, built, sim = planner.simulation(inputs)
    sim.start()
    beyond = {p.uid for p in built.pending[length:]}
    assert sim.drain(until=lambda q: q.pod.uid in beyond), "stopped before a pod beyond the prefix"
    fork = sim.without(beyond)
    assert fork is not None
    fork.drain()
    sim.drain()
    assert simulation_document(sim.result()) == simulation_document(planner.simulate(inputs).result)


def test_a_fork_is_refused_when_the_other_run_would_differ_from_the_start() -> None:
    inputs, planner = planner_for(*FIXTURES[1][1:], None, TieBreak.random)
    uids = [p.uid for p in inputs.pending]
    last = {uids[-1]}
    _, _, sim = planner.simulation(inputs)
    assert sim.without(last) is None, "before start()"
    sim.start()
    assert sim.without(set()) is None and sim.without({"no-such-uid"}) is None
    sim.drain(until=lambda q: q.pod.uid in last)
    assert sim.without(last) is not None
    assert sim.records[uids[0]].attempts == 1
    assert sim.without({uids[0]}) is None, "a left-out pod was tried already"
    sim.queue.now += SECOND
    assert sim.without(last) is None, "the clock is past its first second"
    sim.queue.now -= SECOND
    fw = next(iter(sim.handle.frameworks.values()))
    fw.score_plugins[0].lock = threading.Lock()  # type: ignore[attr-defined]
    assert sim.without(last) is None, "a plugin's state cannot be copied"
    del fw.score_plugins[0].lock  # type: ignore[attr-defined]
    assert sim.without(last) is not None
    claimed = copy.copy(inputs)
    claimed.pending = [*inputs.pending[:-1], dataclasses.replace(inputs.pending[-1],
                                                                 volumes=(Volume("data", claim_name="data"),))]
    _, _, other = planner.simulation(claimed)
    other.start()
    assert other.without(last) is None, "a left-out pod uses a volume claim"
