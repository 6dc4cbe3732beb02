"""DefaultPreemption's shortcut for a pod that no candidate node holds anything to evict for
(Evaluator.nothing_to_evict: every pod there has at least its priority): the dry run's answer
without walking the nodes. On random clusters, pods of equal and of higher priority among
them, a run gives what the dry run over every node gives: outcomes, messages (the preemption
postscript counts "No preemption victims found" per node), nominations and evictions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kplan.framework.preemption import Evaluator
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import Simulation
from tests.builders import make_node, make_pod, scenario

CLASSES = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value} for name, value in (("low", 10), ("high", 1000))]


@st.composite
def clusters(draw: Any) -> tuple[list[Any], list[Any], list[Any], bool]:
    n = draw(st.integers(1, 12))
    nodes = []
    for i in range(n):
        node = make_node(f"n{i:02d}").alloc(cpu=str(draw(st.sampled_from((2, 4)))), memory="8Gi", pods=6)
        if draw(st.integers(0, 5)) == 0:
            node = node.taint("dedicated", "x")
        nodes.append(node)
    running = [make_pod(f"r{j}").req(cpu=draw(st.sampled_from(("500m", "1", "2"))))
               .priority_class(draw(st.sampled_from(("low", "high", "high"))))
               .node_name(f"n{draw(st.integers(0, n - 1)):02d}") for j in range(draw(st.integers(0, 3 * n)))]
    pending = [make_pod(f"p{j:02d}").req(cpu=draw(st.sampled_from(("500m", "1", "3", "5"))))
               .priority_class(draw(st.sampled_from(("low", "high")))) for j in range(draw(st.integers(1, 12)))]
    return nodes, running, pending, draw(st.booleans())


def run(drawn: Any, shortcut: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    nodes, running, pending, lowest_name = drawn
    sc = scenario(nodes, pending, running, CLASSES)
    with monkeypatch.context() as m:
        if not shortcut:
            m.setattr(Evaluator, "nothing_to_evict", staticmethod(lambda pod, table, rows: False))
        result = Simulation(sc.snapshot, SchedulerSetup.of(None, None), sc.pending, seed=5,
                            lowest_name=lowest_name, pdb_allowed=sc.pdb_allowed).run()
    return ([(o.pod.name, o.status, o.node, o.message, o.attempts, o.nominated_node) for o in result.pods]
            + [(e.pod.name, e.node, e.preemptor.name) for e in result.preempted])


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=clusters())
def test_nothing_to_evict_gives_what_the_dry_run_gives(drawn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(drawn, True, monkeypatch) == run(drawn, False, monkeypatch)


def test_the_postscript_counts_every_candidate_node() -> None:
    nodes = [make_node(f"n{i}").alloc(cpu="2", pods=4) for i in range(3)] + [make_node("small").alloc(cpu="1", pods=4)]
    running = [make_pod(f"r{i}").req(cpu="1").priority_class("high").node_name(f"n{i}") for i in range(3)]
    drawn = (nodes, running, [make_pod("p").req(cpu="2").priority_class("high")], True)
    message = run(drawn, True, pytest.MonkeyPatch())[0][3]
    assert message == ("0/4 nodes are available: 4 Insufficient cpu. preemption: "
                       "0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
                       "3 No preemption victims found for incoming pod.")
