"""--scale: parsing the option, which pods a controller deletes first, and the delta it becomes."""

from __future__ import annotations

import dataclasses

import pytest
from planning_builders import pod

from kplan.errors import InputError
from kplan.io.scale import deletion_order, parse_scale
from kplan.scenario import Inputs
from kplan.whatif.changes import ScaleWorkload, apply_changes

PARSE_CASES = [
    ("a deployment in the default lookup", "deployment/web=5", ("Deployment", None, "web", 5)),
    ("a short kind and a namespace", "sts/shop/db=3", ("StatefulSet", "shop", "db", 3)),
    ("kinds are case-insensitive", "ReplicaSet/web-1=0", ("ReplicaSet", None, "web-1", 0)),
    ("a job's parallelism", "job/batch=4", ("Job", None, "batch", 4)),
]


@pytest.mark.parametrize("value, parsed", [c[1:] for c in PARSE_CASES], ids=[c[0] for c in PARSE_CASES])
def test_parse_scale(value, parsed):
    assert parse_scale(value) == parsed


@pytest.mark.parametrize("value, message", [
    ("web=3", "expected KIND/"), ("deployment/web=-1", "expected KIND/"), ("daemonset/logs=2", "no replica count"),
    ("pod/x=2", "unknown kind"),
], ids=["no kind", "negative count", "a daemonset cannot be scaled", "a pod cannot be scaled"])
def test_bad_scale_options_are_one_line_errors(value, message):
    with pytest.raises(InputError, match=message):
        parse_scale(value)


def started(p, t):
    return dataclasses.replace(p, start_time=t)


ORDER_CASES = [
    ("an unscheduled pod goes before a scheduled one",
     [started(pod("on-node", "n1"), 1.0), pod("pending")], ["pending", "on-node"]),
    ("a lower deletion cost goes first",
     [started(pod("dear", "n1", annotations={"controller.kubernetes.io/pod-deletion-cost": "10"}), 1.0),
      started(pod("cheap", "n2", annotations={"controller.kubernetes.io/pod-deletion-cost": "-5"}), 1.0)],
     ["cheap", "dear"]),
    ("a pod sharing its node with more of the workload goes first",
     [started(pod("alone", "n1"), 5.0), started(pod("pair-a", "n2"), 1.0), started(pod("pair-b", "n2"), 2.0)],
     ["pair-b", "pair-a", "alone"]),
    ("the most recently started goes first", [started(pod("old", "n1"), 1.0), started(pod("new", "n2"), 9.0)],
     ["new", "old"]),
]


@pytest.mark.parametrize("pods, order", [c[1:] for c in ORDER_CASES], ids=[c[0] for c in ORDER_CASES])
def test_deletion_order(pods, order):
    assert [p.name for p in deletion_order(pods)] == order


def test_a_scale_delta_adds_pending_pods_and_deletes_running_ones():
    keep, gone = pod("web-a", "n1"), pod("web-b", "n1")
    inputs = Inputs(running=[keep, gone], pending=[pod("other")])
    new = pod("web-c")
    after, applied = apply_changes(inputs, [ScaleWorkload("Deployment default/web", 2, 2, add=(new,), delete=(gone,))])
    assert [p.name for p in after.running] == ["web-a"]
    assert [p.name for p in after.pending] == ["other", "web-c"]
    assert [(f.pod.name, f.fate) for f in applied.pods] == [("web-b", "deleted")]
    assert applied.changes == ["scale Deployment default/web from 2 to 2 replicas"]
    assert len(inputs.running) == 2 and len(inputs.pending) == 1
