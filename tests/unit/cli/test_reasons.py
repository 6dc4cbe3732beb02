"""FitError messages grouped by what they say, node counts aside (kplan.cli.render.reasons), as the
HTML report's "Pods that do not run, by reason" groups them."""

from __future__ import annotations

import pytest

from kplan.cli.render.html import pending_by_reason
from kplan.cli.render.reasons import merged, parts, shape
from tests.unit.cli.documents import pod

CPU = "0/{n} nodes are available: {a} Insufficient cpu, {b} node(s) didn't match Pod's node affinity/selector."
TAINT = "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"

PARTS = [
    ("a FitError", CPU.format(n=500, a=3, b=497),
     (500, [(3, "Insufficient cpu"), (497, "node(s) didn't match Pod's node affinity/selector")])),
    ("a taint with braces and a colon", f"0/2 nodes are available: {TAINT}, 1 Insufficient memory.",
     (2, [(1, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"),
          (1, "Insufficient memory")])),
    ("another shape", "pod has unbound immediate PersistentVolumeClaims", None),
    ("no nodes", "no nodes available to schedule pods", None),
]


@pytest.mark.parametrize(("message", "want"), [c[1:] for c in PARTS], ids=[c[0] for c in PARTS])
def test_parts(message: str, want: object) -> None:
    assert parts(message) == want


SHAPES = [
    ("other counts, one shape", CPU.format(n=500, a=3, b=497), CPU.format(n=500, a=5, b=495), True),
    ("the counts in another order", "0/3 nodes are available: 1 A, 2 B.", "0/3 nodes are available: 2 B, 1 A.", True),
    ("another reason", CPU.format(n=500, a=3, b=497), "0/500 nodes are available: 500 Insufficient cpu.", False),
    ("other messages", "pod has unbound immediate PersistentVolumeClaims", "no nodes available to schedule pods",
     False),
]


@pytest.mark.parametrize(("a", "b", "same"), [c[1:] for c in SHAPES], ids=[c[0] for c in SHAPES])
def test_shape(a: str, b: str, same: bool) -> None:
    assert (shape(a) == shape(b)) == same


def test_merged_counts_become_ranges() -> None:
    messages = [CPU.format(n=500, a=3, b=497), CPU.format(n=500, a=5, b=495), CPU.format(n=500, a=4, b=496)]
    assert merged(messages) == ("0/500 nodes are available: 3-5 Insufficient cpu, "
                                "495-497 node(s) didn't match Pod's node affinity/selector.")
    assert merged(messages[:1]) == messages[0]
    assert merged(["no nodes available to schedule pods"]) == "no nodes available to schedule pods"


def test_identical_pods_whose_counts_differ_are_one_group() -> None:
    """111 whole-node pods: the earlier ones met fewer full nodes than the later ones."""
    pods = [{"namespace": "batch", "name": f"big-{i}", "status": "Unschedulable",
             "message": CPU.format(n=120, a=9 + i % 3, b=111 - i % 3) + " preemption: 0/120 nodes are available: "
             "120 Preemption is not helpful for scheduling."} for i in range(111)]
    pods.append({"namespace": "web", "name": "api", "status": "Unschedulable",
                 "message": "0/120 nodes are available: 120 Insufficient memory."})
    pods.append({"namespace": "web", "name": "ok", "status": "Scheduled", "message": None})
    groups = pending_by_reason(pod(p["name"], p["status"], namespace=p["namespace"], message=p["message"])
                               for p in pods)
    assert [(g["count"], g["reason"]) for g in groups] == [
        (111, "0/120 nodes are available: 9-11 Insufficient cpu, 109-111 node(s) didn't match Pod's node "
              "affinity/selector."),
        (1, "0/120 nodes are available: 120 Insufficient memory."),
    ]
    assert groups[0]["pods"][:2] == ["batch/big-0", "batch/big-1"] and groups[0]["more"] == 91
