"""The planner on the planning fixtures: until-fit, the empty-node check, its lower bound, capacity."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.io.manifests import load_objects
from kplan.io.replicas import replica_factory
from kplan.scheduler.pod_status import PodStatus

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "planning"
CLUSTER = [str(FIX / "cluster.yaml"), str(FIX / "workloads.yaml")]


def planner(*manifests: str):
    loaded = load_inputs(CLUSTER, [str(FIX / m) for m in manifests])
    return open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name), loaded


UNTIL_FIT_CASES = [
    ("four 2-cpu pods need two more 4-cpu nodes", "burst.yaml", "node-a1", 2, ""),
    ("a cordoned 8-cpu node's copies are not cordoned", "burst.yaml", "node-c1", 1, ""),
    ("a pod selecting a label no template node has never fits", "pending.yaml", "node-a1", None,
     "default/gpu-1 (NodeAffinity"),
    ("a tainted template fits nobody without the toleration", "burst.yaml", "node-b2", None,
     "TaintToleration"),
]


@pytest.mark.parametrize("manifest, template, count, reason", [c[1:] for c in UNTIL_FIT_CASES],
                         ids=[c[0] for c in UNTIL_FIT_CASES])
def test_until_fit(manifest, template, count, reason):
    p, _ = planner(manifest)
    w = p.whatif([], until_fit=template, limit=64)
    assert w.until_fit is not None
    assert w.until_fit.count == count
    assert reason in w.until_fit.reason
    if count is not None:
        assert all(o.status == PodStatus.SCHEDULED for o in w.after.result.pods)
        assert sum(1 for n in w.after.result.snapshot.table.names if "-whatif-" in n) == count


def test_the_lower_bound_never_exceeds_the_answer_and_skips_probes():
    p, _ = planner("burst.yaml")
    w = p.whatif([], until_fit="node-a1", limit=64)
    assert w.until_fit.lower_bound is not None and w.until_fit.lower_bound <= w.until_fit.count
    assert 1 not in w.until_fit.probes or w.until_fit.lower_bound == 1


def test_no_lower_bound_when_a_pending_pod_could_preempt():
    p, _ = planner("pending.yaml")
    base = p.simulate()
    assert p.lower_bound(base, "node-a1", p.inputs) is None


def test_the_empty_node_check_reports_each_blocked_pod_with_its_reason():
    p, _ = planner("pending.yaml")
    blocked = p.blocked_on_empty_node("node-a1")
    assert set(blocked) == {"default/gpu-1", "default/wide-1"}
    assert blocked["default/wide-1"].plugin == "NodeResourcesFit"


CAPACITY_CASES = [
    ("a 1-cpu pod fills the free room", "replica.yaml", 4, {"node-a2": 2, "node-b1": 2}, 0),
    ("a high-priority pod preempts the lower-priority pods", "replica-high.yaml", 12,
     {"node-a1": 4, "node-a2": 4, "node-b1": 4}, 6),
    ("a StatefulSet with anti-affinity gets one replica per node", "api-statefulset.yaml", 3,
     {"node-a1": 1, "node-a2": 1, "node-b1": 1}, 0),
]


@pytest.mark.parametrize("manifest, replicas, placements, evictions", [c[1:] for c in CAPACITY_CASES],
                         ids=[c[0] for c in CAPACITY_CASES])
def test_capacity(manifest, replicas, placements, evictions):
    loaded = load_inputs(CLUSTER, [])
    template, replica, _ = replica_factory(loaded.inputs, load_objects([str(FIX / manifest)])[0], seed=0)
    p = open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)
    out = p.capacity(replica, 100)
    assert (out.replicas, out.placements, len(out.evictions)) == (replicas, placements, evictions)
    assert out.failed is not None and out.failed.message.startswith("0/5 nodes are available")


def test_capacity_stops_at_the_limit():
    loaded = load_inputs(CLUSTER, [])
    _, replica, _ = replica_factory(loaded.inputs, load_objects([str(FIX / "replica.yaml")])[0], seed=0)
    out = open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name).capacity(replica, 3)
    assert out.replicas == 3 and out.limit_reached and out.failed is None


def test_a_pod_added_after_the_run_is_scheduled_on_the_cluster_as_left():
    p, loaded = planner("burst.yaml")
    _, _, sim = p.simulation()
    sim.start()
    sim.drain()
    late = dataclasses.replace(loaded.inputs.pending[0], name="late", uid="late")
    q = sim.add_pending(late)
    sim.drain()
    assert q.timestamp > max(r.timestamp for r in sim.records.values() if r is not q and r.attempts == 1)
    assert q.where == "pool" and q.attempts == 1  # the burst has filled every node
