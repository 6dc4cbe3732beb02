"""Remediation pieces: the label changes that make a node match, and what a node lacks."""

from __future__ import annotations

import pytest

from kplan.cluster.node_table import NodeTable
from kplan.model.objects import Node, Pod, Taint
from kplan.model.selectors import NodeSelector, NodeSelectorTerm, Requirement
from kplan.scheduler.remedy import NodePatch, labels_to_match, patched_fork


def term(*reqs: tuple[str, str, tuple[str, ...]], fields: tuple[Requirement, ...] = ()) -> NodeSelectorTerm:
    return NodeSelectorTerm(tuple(Requirement(k, op, v) for k, op, v in reqs), fields)


def pod_with(selector: dict[str, str] | None = None, *terms: NodeSelectorTerm) -> Pod:
    return Pod("default", "p", "p", node_selector=selector or {},
               required_node_affinity=NodeSelector(tuple(terms)) if terms else None)


LABEL_CASES = [
    ("a missing nodeSelector label is added", pod_with({"disk": "ssd"}), {}, {"disk": "ssd"}),
    ("a wrong nodeSelector value is replaced", pod_with({"disk": "ssd"}), {"disk": "hdd"}, {"disk": "ssd"}),
    ("a matching node needs nothing", pod_with({"disk": "ssd"}), {"disk": "ssd"}, {}),
    ("In takes the first value", pod_with(None, term(("zone", "In", ("a", "b")))), {}, {"zone": "a"}),
    ("NotIn removes the label", pod_with(None, term(("spot", "NotIn", ("true",)))), {"spot": "true"},
     {"spot": None}),
    ("DoesNotExist removes the label", pod_with(None, term(("spot", "DoesNotExist", ()))), {"spot": "x"},
     {"spot": None}),
    ("Exists adds the label with an empty value", pod_with(None, term(("gpu", "Exists", ()))), {}, {"gpu": ""}),
    ("Gt sets a larger number", pod_with(None, term(("gen", "Gt", ("3",)))), {"gen": "2"}, {"gen": "4"}),
    ("the term needing fewest changes wins",
     pod_with(None, term(("a", "In", ("1",)), ("b", "In", ("2",))), term(("c", "In", ("3",)))), {}, {"c": "3"}),
    ("a term naming another node cannot be met by labels",
     pod_with(None, term(fields=(Requirement("metadata.name", "In", ("other",)),))), {}, None),
]


@pytest.mark.parametrize("pod, labels, fix", [c[1:] for c in LABEL_CASES], ids=[c[0] for c in LABEL_CASES])
def test_labels_to_match(pod, labels, fix):
    assert labels_to_match(pod, "n1", labels) == fix


def test_a_patch_describes_what_the_node_lacks_in_plain_words():
    patch = NodePatch(extra={"cpu": 350, "memory": 2**30}, extra_pods=1, labels={"disk": "ssd", "spot": None},
                      untolerated=(Taint("dedicated", "gpu", "NoSchedule"),), uncordon=True)
    assert patch.describe() == ["350m cpu", "1Gi memory", "1 pod slot",
                                "a toleration for taint dedicated=gpu:NoSchedule", "label disk=ssd", "no label spot",
                                "to be uncordoned"]


def test_a_patched_fork_changes_a_copy_only():
    n = Node("n1", labels={"disk": "hdd"}, taints=(Taint("dedicated", "gpu", "NoSchedule"),), unschedulable=True,
             allocatable={"cpu": 1000, "memory": 2**30, "pods": 10})
    table = NodeTable([n])
    fork = patched_fork(table, 0, NodePatch(extra={"cpu": 500}, extra_pods=2, labels={"disk": "ssd"},
                                            untolerated=n.taints, uncordon=True))
    assert int(fork.alloc[0, 0]) == 1500 and int(fork.allowed_pods[0]) == 12
    assert fork.labels("disk").values[fork.labels("disk").codes[0]] == "ssd"
    assert fork.taint_sets[fork.taint_ids[0]] == () and not fork.unschedulable[0]
    assert int(table.alloc[0, 0]) == 1000 and table.unschedulable[0]
    assert table.labels("disk").values[table.labels("disk").codes[0]] == "hdd"
