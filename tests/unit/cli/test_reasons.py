"""Pods that do not run grouped by what their reason says, node counts aside
(kplan.cli.render.reasons), as the HTML report's "Pods that do not run, by reason" groups them.
The counts come from the document's FitError parts, never from the message text."""

from __future__ import annotations

import pytest

from kplan.cli.render.html import pending_by_reason
from kplan.cli.render.reasons import merged, shape
from kplan.report.document import PendingPod
from tests.unit.cli.documents import pod, unschedulable

AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TAINT = "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
PREEMPTION = "preemption: 0/500 nodes are available: 500 Preemption is not helpful for scheduling."


def cpu(n: int, a: int, b: int, post_filter: str | None = None, name: str = "p", namespace: str = "default"
        ) -> PendingPod:
    return unschedulable(name, n, {"Insufficient cpu": a, AFFINITY: b}, post_filter, namespace)


def other(message: str) -> PendingPod:
    return pod("p", "Unschedulable", None, message)


def test_the_short_reason_leaves_out_postfilter_s_answer() -> None:
    p = cpu(500, 3, 497, PREEMPTION)
    assert p.message == f"0/500 nodes are available: 3 Insufficient cpu, 497 {AFFINITY}. {PREEMPTION}"
    assert p.reason == f"0/500 nodes are available: 3 Insufficient cpu, 497 {AFFINITY}."
    assert other("pod has unbound immediate PersistentVolumeClaims").reason == \
        "pod has unbound immediate PersistentVolumeClaims"


SHAPES = [
    ("other counts, one shape", cpu(500, 3, 497), cpu(500, 5, 495), True),
    ("the reasons in another order", unschedulable("p", 3, {"A": 1, "B": 2}), unschedulable("p", 3, {"B": 2, "A": 1}),
     True),
    ("a taint with braces and a colon", unschedulable("p", 2, {TAINT: 1, "Insufficient memory": 1}),
     unschedulable("p", 3, {TAINT: 1, "Insufficient memory": 2}), True),
    ("another reason", cpu(500, 3, 497), unschedulable("p", 500, {"Insufficient cpu": 500}), False),
    ("other messages", other("pod has unbound immediate PersistentVolumeClaims"),
     other("no nodes available to schedule pods"), False),
]


@pytest.mark.parametrize(("a", "b", "same"), [c[1:] for c in SHAPES], ids=[c[0] for c in SHAPES])
def test_shape(a: PendingPod, b: PendingPod, same: bool) -> None:
    assert (shape(a) == shape(b)) == same


def test_merged_counts_become_ranges() -> None:
    pods = [cpu(500, 3, 497), cpu(500, 5, 495), cpu(500, 4, 496)]
    assert merged(pods) == f"0/500 nodes are available: 3-5 Insufficient cpu, 495-497 {AFFINITY}."
    assert merged(pods[:1]) == pods[0].reason
    assert merged([other("no nodes available to schedule pods")]) == "no nodes available to schedule pods"


def test_identical_pods_whose_counts_differ_are_one_group() -> None:
    """111 whole-node pods: the earlier ones met fewer full nodes than the later ones."""
    pods = [cpu(120, 9 + i % 3, 111 - i % 3, "preemption: 0/120 nodes are available: 120 Preemption is not helpful "
                "for scheduling.", name=f"big-{i}", namespace="batch") for i in range(111)]
    pods.append(unschedulable("api", 120, {"Insufficient memory": 120}, namespace="web"))
    pods.append(pod("ok", namespace="web"))
    groups = pending_by_reason(pods)
    assert [(g["count"], g["reason"]) for g in groups] == [
        (111, f"0/120 nodes are available: 9-11 Insufficient cpu, 109-111 {AFFINITY}."),
        (1, "0/120 nodes are available: 120 Insufficient memory."),
    ]
    assert groups[0]["pods"][:2] == ["batch/big-0", "batch/big-1"] and groups[0]["more"] == 91
