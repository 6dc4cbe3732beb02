"""Runs of one loaded input cannot leak into each other: the inputs' pods are immutable and every
run keeps its nominations and placements in its own state (issue «seams»)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.report.document import simulation_document
from kplan.whatif.changes import CloneNode, CordonNode, DrainNode, RemoveNode

ROOT = Path(__file__).resolve().parents[3]
PLANNING = ROOT / "tests" / "fixtures" / "planning"

CASES = [
    ("the shipped example, draining a node and cloning another",
     [str(ROOT / "fixtures" / "cluster.yaml")], [str(ROOT / "fixtures" / "manifests")],
     [DrainNode("gen-b-2"), CloneNode("gen-a-1", 2)]),
    ("the planning cluster, removing and cordoning nodes under a burst",
     [str(PLANNING / "cluster.yaml"), str(PLANNING / "workloads.yaml")], [str(PLANNING / "burst.yaml")],
     [RemoveNode("node-a1"), CordonNode("node-a2")]),
    ("high-priority replicas that preempt, with a node removed",
     [str(PLANNING / "cluster.yaml"), str(PLANNING / "workloads.yaml")], [str(PLANNING / "replica-high.yaml")],
     [RemoveNode("node-a1")]),
]


def pod_states(pods: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(getattr(p, f.name) for f in dataclasses.fields(p)) for p in pods]


@pytest.mark.parametrize("cluster, manifests, changes", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_simulate_then_whatif_then_simulate_gives_identical_output(cluster: list[str], manifests: list[str],
                                                                    changes: list[Any]) -> None:
    workspace = load_inputs(cluster, manifests, progress=False)
    inputs = workspace.inputs
    before = (pod_states(inputs.pending), pod_states(inputs.running), list(inputs.nodes))
    planner = open_planner(workspace, None, seed=0, tie_break=TieBreak.lowest_name)
    first = simulation_document(planner.simulate().result)
    whatif = planner.whatif(changes)
    assert whatif.after.result.pods, "the what-if ran"
    second = simulation_document(planner.simulate().result)
    assert second == first
    assert (pod_states(inputs.pending), pod_states(inputs.running), list(inputs.nodes)) == before


def test_a_run_leaves_the_pods_it_binds_as_they_were_loaded() -> None:
    workspace = load_inputs([str(ROOT / "fixtures" / "cluster.yaml")], [str(ROOT / "fixtures" / "manifests")],
                            progress=False)
    planner = open_planner(workspace, None, seed=0, tie_break=TieBreak.lowest_name)
    result = planner.simulate().result
    bound = [o for o in result.pods if o.node]
    assert bound, "some pods are scheduled"
    assert all(o.pod.node_name == "" and o.pod.start_time is None for o in bound)
    placed = {p.uid: p for pods in result.snapshot.table.pods for p in pods}
    assert all(placed[o.pod.uid].node_name == o.node for o in bound)
