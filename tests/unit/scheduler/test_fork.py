"""Simulation.without_last: a run forked as it is about to pop a pod beyond its first L pending pods,
with the others taken out, goes on exactly as a run of only those L pods (kplan sweep's chains).

Every prefix of the conformance scenarios' pending pods (real kube-scheduler behaviour: retries,
backoff, preemption and nominations, affinity and spread, gates, storage, DRA; 40 prefixes spread
over the scenarios with more pods, a third and two thirds of the 2,000-3,000-node ones) and of the shipped fixtures is forked and compared, document
for document, with a fresh run of the prefix. A fork the engine refuses must be one it names: a
pod beyond the prefix whose volumes use claims.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest

from kplan.cli.simulate import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.model.objects import Volume
from kplan.report.document import simulation_document
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


def fork_at(planner: Planner, inputs: Any, length: int) -> Simulation | None:
    _, built, sim = planner.simulation(inputs)
    sim.start()
    beyond = {p.uid for p in built.pending[length:]}
    sim.drain(until=lambda q: q.pod.uid in beyond)
    return sim.without_last(len(built.pending) - length)


def outcome(result: SimulationResult) -> tuple[dict[str, Any], Any]:
    """The run's document, and its resource claims as the run left them (the document names a
    pod's claims, not the claims the controller made for pods)."""
    dra = result.snapshot.dra
    claims = None if dra is None else {k: (c.uid, c.allocation, c.reserved_for, c.owner_uid)
                                       for k, c in dra.claims.items()}
    return simulation_document(result), claims


def alone(planner: Planner, inputs: Any, length: int) -> tuple[dict[str, Any], Any]:
    prefix = copy.copy(inputs)
    prefix.pending = list(inputs.pending[:length])
    return outcome(planner.simulate(prefix).result)


def refusable(inputs: Any, length: int) -> bool:
    """A pod beyond the prefix whose volumes use claims, which the PV controller may bind before it runs."""
    return any(any(v.claim_name for v in p.volumes) for p in inputs.pending[length:])


#: the most prefixes compared per scenario (the sampling ones have 100-200 pending pods)
MOST = 40


def spread(n: int, k: int) -> list[int] | None:
    """Every prefix length of ``n`` pods (None) when there are at most ``k``, else ``k`` spread evenly."""
    return None if n <= k else sorted({round((i + 1) * n / (k + 1)) for i in range(k)})


def check_every_prefix(inputs: Any, planner: Planner, lengths: list[int] | None = None) -> int:
    """Forks every prefix (or those of ``lengths``) and compares it; the number forked. A fork is
    refused exactly when a pod beyond the prefix has volume claims."""
    forked = 0
    for length in range(len(inputs.pending)) if lengths is None else lengths:
        fork = fork_at(planner, inputs, length)
        assert (fork is None) == refusable(inputs, length), f"fork at {length} of {len(inputs.pending)}"
        if fork is None:
            continue
        fork.drain()
        assert outcome(fork.result()) == alone(planner, inputs, length), f"prefix of {length}"
        forked += 1
    return forked


@pytest.mark.skipif(not SCENARIOS, reason=f"no conformance suite at {CONFORMANCE}")
@pytest.mark.parametrize("scenario", SCENARIOS + LARGE)
def test_prefixes_of_a_conformance_scenario_fork_into_the_runs_of_the_prefixes(scenario: str) -> None:
    d = CONFORMANCE / scenario
    inputs, planner = planner_for([str(d / "cluster.yaml")], [str(d / "pods.yaml")], str(d / "scheduler-config.yaml"),
                                  TieBreak.lowest_name)
    check_every_prefix(inputs, planner, spread(len(inputs.pending), 2 if scenario in LARGE else MOST))


@pytest.mark.skipif(not SCENARIOS, reason=f"no conformance suite at {CONFORMANCE}")
def test_every_family_but_storage_has_prefixes_that_fork() -> None:
    """The storage scenarios' last pods use volume claims; every other family (DRA's resource
    claims included) forks every prefix, so that the comparisons above are of forks."""
    forkable: dict[str, int] = {}
    for scenario in SCENARIOS:
        d = CONFORMANCE / scenario
        inputs = load_inputs([str(d / "cluster.yaml")], [str(d / "pods.yaml")], progress=False).inputs
        family = scenario.split("-")[0]
        forkable[family] = forkable.get(family, 0) + sum(
            1 for n in range(len(inputs.pending)) if not refusable(inputs, n))
    assert {f for f, n in forkable.items() if n == 0} <= {"storage"}, forkable


@pytest.mark.parametrize(("cluster", "pods"), [f[1:] for f in FIXTURES], ids=[f[0] for f in FIXTURES])
@pytest.mark.parametrize("tie_break", [TieBreak.random, TieBreak.lowest_name])
def test_every_prefix_of_a_fixture_forks_into_the_run_of_the_prefix(cluster: list[str], pods: list[str],
                                                                     tie_break: TieBreak) -> None:
    inputs, planner = planner_for(cluster, pods, None, tie_break)
    forked = check_every_prefix(inputs, planner)
    assert forked == len(inputs.pending)


def test_the_fork_leaves_the_run_it_came_from_as_it_was() -> None:
    inputs, planner = planner_for(*FIXTURES[2][1:], None, TieBreak.random)
    length = len(inputs.pending) // 2
    _, built, sim = planner.simulation(inputs)
    sim.start()
    beyond = {p.uid for p in built.pending[length:]}
    assert sim.drain(until=lambda q: q.pod.uid in beyond), "stopped before a pod beyond the prefix"
    fork = sim.without_last(len(built.pending) - length)
    assert fork is not None
    fork.drain()
    sim.drain()
    assert simulation_document(sim.result()) == simulation_document(planner.simulate(inputs).result)


def test_a_fork_is_refused_when_the_prefix_run_would_differ_from_the_start() -> None:
    inputs, planner = planner_for(*FIXTURES[1][1:], None, TieBreak.random)
    n = len(inputs.pending)
    _, built, sim = planner.simulation(inputs)
    assert sim.without_last(1) is None, "before start()"
    sim.start()
    assert sim.without_last(0) is None and sim.without_last(n + 1) is None
    sim.drain(until=lambda q: q.pod.uid == built.pending[-1].uid)
    assert sim.without_last(1) is not None
    popped = built.pending[0].uid
    assert sim.records[popped].attempts == 1
    assert sim.without_last(n) is None, "a pod beyond the prefix was tried already"
    sim.queue.now += SECOND
    assert sim.without_last(1) is None, "the clock is past its first second"
    sim.queue.now -= SECOND
    fw = next(iter(sim.handle.frameworks.values()))
    fw.score_plugins[0].lock = threading.Lock()  # type: ignore[attr-defined]
    assert sim.without_last(1) is None, "a plugin's state cannot be copied"
    del fw.score_plugins[0].lock  # type: ignore[attr-defined]
    assert sim.without_last(1) is not None
    claimed = copy.copy(inputs)
    claimed.pending = [*inputs.pending[:-1], dataclasses.replace(inputs.pending[-1],
                                                                 volumes=(Volume("data", claim_name="data"),))]
    _, _, other = planner.simulation(claimed)
    other.start()
    assert other.without_last(1) is None, "a pod beyond the prefix uses a claim"
