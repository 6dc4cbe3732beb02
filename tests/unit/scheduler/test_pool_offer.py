"""Two shortcuts of a run against the plain way, on random clusters:

* an event reaches only the pool pods whose rejecting plugins registered for its kind
  (SchedulingQueue.pool_groups), where the plain way asks every pool pod's hints;
* a bind makes its ASSIGNED_POD_ADD event only when some pool pod's plugins registered for
  it (Simulation.listened), where the plain way offers every bind's event;
* the first chunk of nodes a cycle filters grows by the share the node-attribute filters
  reject (Framework.fixed_filters_share), where the plain way starts with k + k/4 + 32 nodes.

Every pod's outcome, message, attempts and nomination and every eviction must be the same.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kplan.framework.events import ClusterEvent
from kplan.framework.runtime import Framework
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import Simulation, SimulationResult
from tests.builders import make_node, make_pod, scenario

CLASSES = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value} for name, value in (("low", 10), ("high", 1000))]


class EveryPoolPod(Simulation):
    """The plain way: every pool pod's hints are asked about every event."""

    def listened(self, kind: str) -> bool:
        return True

    def offer(self, event: ClusterEvent, max_priority: int | None = None) -> None:
        for q in list(self.queue.pool.values()):
            if q.held or (max_priority is not None and q.priority > max_priority):
                continue
            by_kind = self.registrations((q.pod.scheduler_name, q.rejectors))
            if by_kind is None:
                self.queue.move_from_pool(q)
                continue
            hints = by_kind.get(event.kind)
            if hints and any(hint is None or hint(q.pod, event) for hint in hints):
                self.queue.move_from_pool(q)


def cluster(draw: Any, n_nodes: int) -> tuple[list[Any], list[Any], list[Any]]:
    nodes, running, pending = [], [], []
    for i in range(n_nodes):
        node = make_node(f"n{i:03d}").alloc(cpu=str(draw(st.sampled_from((2, 4, 8)))), memory="16Gi", pods=8)
        node = node.zone(f"z{i % 3}").labels(pool=draw(st.sampled_from(("a", "b", "c"))))
        if draw(st.integers(0, 9)) == 0:
            node = node.taint("dedicated", "x")
        nodes.append(node)
    for j in range(draw(st.integers(0, 2 * n_nodes))):
        pod = make_pod(f"r{j}").req(cpu=draw(st.sampled_from(("500m", "1", "2")))).priority_class(
            draw(st.sampled_from(("low", "high")))).node_name(f"n{draw(st.integers(0, n_nodes - 1)):03d}")
        running.append(pod)
    for j in range(draw(st.integers(1, 30))):
        pod = make_pod(f"p{j:02d}").req(cpu=draw(st.sampled_from(("500m", "1", "3", "7", "9"))))
        pod = pod.priority_class(draw(st.sampled_from(("low", "high"))))
        kind = draw(st.integers(0, 4))
        if kind == 1:
            pod = pod.node_selector(pool=draw(st.sampled_from(("a", "b", "c"))))
        elif kind == 2:
            pod = pod.toleration("dedicated", "x", "NoSchedule", operator="Equal").node_selector(pool="a")
        elif kind == 3:
            # waits in the pool for a leader's bind (InterPodAffinity registers ASSIGNED_POD_ADD)
            pod = pod.spec(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "leader"}}, "topologyKey": "topology.kubernetes.io/zone"}]}})
        elif kind == 4 and draw(st.booleans()):
            pod = pod.labels(app="leader")
        pending.append(pod)
    return nodes, running, pending


def run(kind: type[Simulation], objects: tuple[list[Any], list[Any], list[Any]], lowest_name: bool,
        plain_chunks: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    nodes, running, pending = objects
    sc = scenario(nodes, pending, running, CLASSES)
    with monkeypatch.context() as m:
        if plain_chunks:
            m.setattr(Framework, "fixed_filters_share", lambda self, state, pod, table: 1.0)
        result: SimulationResult = kind(sc.snapshot, SchedulerSetup.of(), sc.pending, seed=3,
                                        lowest_name=lowest_name, pdb_allowed=sc.pdb_allowed).run()
    return ([(o.pod.name, o.status, o.node, o.message, o.attempts, o.nominated_node) for o in result.pods]
            + [(e.pod.name, e.node, e.preemptor.name) for e in result.preempted])


@st.composite
def clusters(draw: Any) -> tuple[tuple[list[Any], list[Any], list[Any]], bool]:
    # past 100 nodes the cycle examines only some of them, so the chunk sizes take part
    n_nodes = draw(st.sampled_from((3, 6, 120)))
    return cluster(draw, n_nodes), draw(st.booleans())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=clusters())
def test_shortcuts_give_the_plain_outcome(drawn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    objects, lowest_name = drawn
    plain = run(EveryPoolPod, objects, lowest_name, True, monkeypatch)
    assert run(Simulation, objects, lowest_name, False, monkeypatch) == plain
