"""apply_changes: node additions, cordons, drains and removals as pure deltas."""

from __future__ import annotations

import pytest
from planning_builders import node, pdb, pod

from kplan.errors import InputError
from kplan.model.objects import Taint
from kplan.scenario import Inputs
from kplan.whatif.changes import (
    AddNodes,
    CloneNode,
    CordonNode,
    DrainNode,
    RemoveNode,
    apply_changes,
    clone_node,
)


def cluster() -> Inputs:
    return Inputs(
        nodes=[node("n1", disk="ssd"), node("n2")],
        running=[
            pod("web-a", "n1", owner="ReplicaSet/web", app="web"),
            pod("web-b", "n1", owner="ReplicaSet/web", app="web"),
            pod("db-0", "n1", owner="StatefulSet/db", app="db"),
            pod("bare", "n1", app="bare"),
            pod("logger", "n1", ns="kube-system", owner="DaemonSet/logger", app="logger"),
            pod("static", "n1", ns="kube-system", annotations={"kubernetes.io/config.mirror": "x"}),
            pod("other", "n2", owner="ReplicaSet/other", app="other"),
        ],
        pending=[pod("new")],
        pdbs=[pdb("web-pdb", 1, app="web"), pdb("db-pdb", 0, app="db")],
    )


def fates(applied) -> dict[str, str]:
    return {f.pod.name: f.fate for f in applied.pods}


DRAIN_CASES = [
    ("a ReplicaSet pod within its budget is evicted and comes back pending", "web-a", "replaced"),
    ("the budget is spent by the first eviction, so the second pod stays", "web-b", "kept"),
    ("a pod whose budget allows no disruption stays", "db-0", "kept"),
    ("a bare pod is evicted and gone", "bare", "deleted"),
    ("a DaemonSet pod stays", "logger", "kept"),
    ("a mirror pod stays", "static", "kept"),
]


@pytest.mark.parametrize("name, fate", [c[1:] for c in DRAIN_CASES], ids=[c[0] for c in DRAIN_CASES])
def test_drain_evicts_as_the_eviction_api_would(name, fate):
    _, applied = apply_changes(cluster(), [DrainNode("n1")])
    assert fates(applied)[name] == fate


def test_drain_cordons_the_node_and_leaves_the_input_untouched():
    before = cluster()
    after, _ = apply_changes(before, [DrainNode("n1")])
    assert [n.unschedulable for n in after.nodes] == [True, False]
    assert [n.unschedulable for n in before.nodes] == [False, False]
    assert len(before.running) == 7 and len(before.pending) == 1


def test_drained_replacements_are_pending_admitted_and_on_no_node():
    after, _ = apply_changes(cluster(), [DrainNode("n1")])
    names = [p.name for p in after.pending]
    assert names == ["new", "web-a"]
    replacement = after.pending[1]
    assert replacement.node_name == "" and replacement.uid in after.admitted
    assert {p.name for p in after.running} == {"web-b", "db-0", "logger", "static", "other"}


def test_spent_budgets_are_pinned_for_the_after_run():
    after, _ = apply_changes(cluster(), [DrainNode("n1")])
    allowed = {b.name: b.disruptions_allowed for b in after.pdbs}
    assert allowed == {"web-pdb": 0, "db-pdb": 0}


def test_a_pod_under_two_budgets_cannot_be_evicted():
    inputs = cluster()
    inputs.pdbs.append(pdb("all-web", 5, app="web"))
    _, applied = apply_changes(inputs, [DrainNode("n1")])
    assert fates(applied)["web-a"] == "kept"
    assert "more than one PodDisruptionBudget" in next(f.reason for f in applied.pods if f.pod.name == "web-a")


def test_removing_a_node_ignores_budgets_and_replaces_controller_pods():
    after, applied = apply_changes(cluster(), [RemoveNode("n1")])
    assert [n.name for n in after.nodes] == ["n2"]
    assert fates(applied) == {"web-a": "replaced", "web-b": "replaced", "db-0": "replaced", "bare": "deleted",
                              "logger": "deleted", "static": "deleted"}
    assert [p.name for p in after.running] == ["other"]


def test_removals_and_drains_together_keep_the_running_pods_order_and_the_inputs():
    # the running pods are indexed by node once and the lost ones dropped at the end: the result
    # is what removing them one by one from the list gives, and the inputs are not touched
    inputs = cluster()
    inputs.nodes.append(node("n3"))
    inputs.running += [pod("z-last", "n3", owner="ReplicaSet/z"), pod("a-first", "n3", owner="ReplicaSet/a"),
                       pod("kept", "n2", owner="ReplicaSet/kept")]
    running = list(inputs.running)
    after, applied = apply_changes(inputs, [RemoveNode("n3"), DrainNode("n2")])
    assert [p.name for p in after.running] == ["web-a", "web-b", "db-0", "bare", "logger", "static"]
    assert [p.name for p in after.pending] == ["new", "a-first", "z-last", "kept", "other"]
    assert [(f.pod.name, f.node) for f in applied.pods] == [
        ("a-first", "n3"), ("z-last", "n3"), ("kept", "n2"), ("other", "n2")]
    after, _ = apply_changes(inputs, [RemoveNode("n3"), DrainNode("n2"), RemoveNode("n1")])
    assert after.running == [] and len(after.pending) == 8
    assert inputs.running == running


def test_cordon_keeps_the_pods():
    after, applied = apply_changes(cluster(), [CordonNode("n2")])
    assert after.nodes[1].unschedulable and not applied.pods
    assert len(after.running) == 7


CLONE_CASES = [
    ("the hostname label is the new name", "kubernetes.io/hostname", "n1-whatif-1"),
    ("other labels are kept", "disk", "ssd"),
    ("the zone is kept", "topology.kubernetes.io/zone", "zone-a"),
]


@pytest.mark.parametrize("key, value", [c[1:] for c in CLONE_CASES], ids=[c[0] for c in CLONE_CASES])
def test_clones_get_sensible_labels(key, value):
    after, _ = apply_changes(cluster(), [CloneNode("n1", 2)])
    assert after.nodes[2].labels[key] == value


def test_clones_are_numbered_after_existing_clones():
    after, applied = apply_changes(cluster(), [CloneNode("n1", 2), CloneNode("n1", 1)])
    assert applied.added_nodes == ["n1-whatif-1", "n1-whatif-2", "n1-whatif-3"]
    assert [n.name for n in after.nodes][2:] == applied.added_nodes


def test_a_clone_is_empty_uncordoned_and_drops_lifecycle_taints():
    template = node("t", taints=(Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"),
                                 Taint("dedicated", "gpu", "NoSchedule")), unschedulable=True)
    c = clone_node(template, "t-whatif-1")
    assert not c.unschedulable and c.images == ()
    assert c.taints == (Taint("dedicated", "gpu", "NoSchedule"),)


def test_an_added_node_may_not_reuse_a_name():
    with pytest.raises(InputError, match="already exists"):
        apply_changes(cluster(), [AddNodes((node("n1"),))])


@pytest.mark.parametrize("change", [CordonNode("nope"), DrainNode("nope"), RemoveNode("nope"), CloneNode("nope")],
                         ids=["cordon", "drain", "remove", "clone"])
def test_an_unknown_node_is_a_one_line_input_error(change):
    with pytest.raises(InputError, match="no node named 'nope'"):
        apply_changes(cluster(), [change])
