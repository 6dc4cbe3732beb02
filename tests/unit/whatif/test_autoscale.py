"""kube-scheduler and a node autoscaler in turn (kplan.whatif.autoscale), with an autoscaler of the
test's own: it launches, for the pods it is shown, nodes of a fixed size, as many as asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from kplan.autoscaler.provisioning import NewNode, Provisioning
from kplan.io.workspace import load_workspace, open_planner
from kplan.model.objects import Node, Pod
from kplan.model.raw import RawObject
from kplan.scheduler.pod_status import PodStatus
from kplan.whatif.autoscale import MAX_ROUNDS
from kplan.whatif.plan import Planner, Run
from tests.unit.whatif.planning_builders import node
from tests.unit.whatif.test_node_daemons import daemonset, node_doc


def pod_doc(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}], **spec}}


@dataclass
class Launcher:
    """Launches ``per_round`` nodes of ``cpu`` cores each time it is shown pods (none once ``budget``
    nodes are out); says ``why`` for each pod whose name starts with "never"."""

    cpu: str = "4"
    per_round: int = 1
    budget: int = 100
    why: str = "no instance type satisfied resources"
    name: str = "test-autoscaler"
    shown: list[list[str]] = field(default_factory=list)
    #: the pods bound to each node when it was last asked
    saw_bound: dict[str, list[str]] = field(default_factory=dict)

    def provision(self, nodes: Sequence[Node], bound: Mapping[str, Sequence[Pod]],
                  pending: Sequence[Pod], round: int) -> Provisioning:
        self.shown.append([p.name for p in pending])
        self.saw_bound = {n: [p.name for p in pods] for n, pods in bound.items()}
        taken = {n.name for n in nodes}
        helpable = [p for p in pending if not p.name.startswith("never")]
        unhelped = {p.key: self.why for p in pending if p.name.startswith("never")}
        out = []
        k = len(taken)
        while helpable and len(out) < self.per_round and self.budget > 0:
            while f"new-{k}" in taken:
                k += 1
            name = f"new-{k}"
            taken.add(name)
            self.budget -= 1
            out.append(NewNode(node(name, cpu=self.cpu, zone="zone-b"), "general", "m5.xlarge", "on-demand",
                               "zone-b", 0.192, ("m5a.xlarge",)))
        return Provisioning(tuple(out), unhelped)


def planner(cluster: list[dict[str, Any]], manifests: list[dict[str, Any]], launcher: Launcher) -> Planner:
    ws = load_workspace([RawObject(d, "cluster.yaml") for d in cluster],
                        [RawObject(d, "app.yaml") for d in manifests])
    p = open_planner(ws, None)
    p.autoscaler = launcher
    return p


def where(run: Run) -> dict[str, str | None]:
    return {o.pod.name: o.node for o in run.result.pods}


def test_pods_that_fit_stay_where_the_first_pass_put_them_and_the_rest_go_to_the_new_node() -> None:
    # a rerun from scratch would put "a" on the empty new node (LeastAllocated favours it); bound
    # pods do not move when a node joins
    launcher = Launcher()
    run = planner([node_doc("n1", cpu="2")], [pod_doc("a", "1500m"), pod_doc("b", "1500m")], launcher).simulate()
    assert where(run) == {"a": "n1", "b": "new-1"}
    assert launcher.shown == [["b"]]
    assert run.autoscaling is not None and [n.new.name for n in run.autoscaling.launched] == ["new-1"]
    assert run.autoscaling.rounds == 1 and run.autoscaling.unhelped == {}
    assert [o.attempts for o in run.result.pods] == [1, 2]


def test_the_autoscaler_sees_the_pods_bound_by_the_pass_before() -> None:
    launcher = Launcher()
    planner([node_doc("n1", cpu="2")], [pod_doc("a", "1500m"), pod_doc("b", "1500m")], launcher).simulate()
    assert launcher.saw_bound == {"n1": ["a"]}


def test_the_new_nodes_get_their_daemonset_pods_before_the_pending_pods() -> None:
    launcher = Launcher(cpu="2")
    run = planner([node_doc("n1", cpu="1"), daemonset("agent", cpu="500m")], [pod_doc("b", "1500m")],
                  launcher).simulate()
    assert run.autoscaling is not None
    [launched] = run.autoscaling.launched
    assert len(launched.daemon_pods) == 1 and launched.daemon_pods[0].startswith("kube-system/agent-")
    assert [(o.status, o.node) for o in run.result.overhead] == [(PodStatus.SCHEDULED, "new-1")]
    assert where(run) == {"b": "new-1"}


def test_the_turns_repeat_while_the_autoscaler_launches_and_pods_are_left() -> None:
    launcher = Launcher(cpu="1")
    run = planner([node_doc("n1", cpu="1")], [pod_doc(f"p{i}", "1") for i in range(4)], launcher).simulate()
    assert launcher.shown == [["p1", "p2", "p3"], ["p2", "p3"], ["p3"]]
    assert where(run) == {"p0": "n1", "p1": "new-1", "p2": "new-2", "p3": "new-3"}
    assert run.autoscaling is not None and [n.round for n in run.autoscaling.launched] == [1, 2, 3]
    assert run.autoscaling.price_per_hour == pytest.approx(3 * 0.192)
    assert run.autoscaling.price_per_month == pytest.approx(3 * 0.192 * 730)


def test_the_turns_stop_after_the_bound() -> None:
    launcher = Launcher(cpu="1")
    run = planner([node_doc("n1", cpu="1")], [pod_doc(f"p{i}", "1") for i in range(MAX_ROUNDS + 3)],
                  launcher).simulate()
    assert run.autoscaling is not None and run.autoscaling.rounds == MAX_ROUNDS
    assert run.autoscaling.stopped_at_bound
    assert sum(1 for o in run.result.pods if o.status == PodStatus.SCHEDULED) == MAX_ROUNDS + 1


def test_the_reasons_of_pods_the_autoscaler_cannot_help_are_kept_for_those_still_pending() -> None:
    launcher = Launcher(cpu="2")
    run = planner([node_doc("n1", cpu="1")], [pod_doc("b", "1500m"), pod_doc("never", "1500m")],
                  launcher).simulate()
    assert run.autoscaling is not None
    # the second pass puts "never" nowhere: "b" took the new node
    assert run.autoscaling.unhelped == {"default/never": "no instance type satisfied resources"}
    assert where(run) == {"b": "new-1", "never": None}


def test_an_autoscaler_that_launches_nothing_leaves_the_run_as_it_was() -> None:
    launcher = Launcher(budget=0)
    run = planner([node_doc("n1", cpu="1")], [pod_doc("b", "1500m")], launcher).simulate()
    assert run.autoscaling is not None and run.autoscaling.launched == [] and run.autoscaling.rounds == 1
    [o] = run.result.pods
    assert o.status == PodStatus.UNSCHEDULABLE and o.message and "Insufficient cpu" in o.message


@pytest.mark.parametrize(("name", "spec"), [
    ("a gated pod is never tried, so never marked Unschedulable", {"schedulingGates": [{"name": "wait"}]}),
    ("a pod of no profile is never tried", {"schedulerName": "other"}),
])
def test_pods_kube_scheduler_did_not_mark_unschedulable_are_not_shown(name: str, spec: dict[str, Any]) -> None:
    launcher = Launcher()
    planner([node_doc("n1", cpu="1")], [pod_doc("x", "1500m", **spec)], launcher).simulate()
    assert launcher.shown == []


def test_pods_owned_by_a_daemonset_are_not_shown() -> None:
    owned = pod_doc("d", "1500m")
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds",
                                             "uid": "u1", "controller": True}]
    launcher = Launcher()
    planner([node_doc("n1", cpu="1")], [owned, pod_doc("b", "1500m")], launcher).simulate()
    assert launcher.shown == [["b"]]


def test_without_an_autoscaler_a_run_has_no_record() -> None:
    p = planner([node_doc("n1", cpu="1")], [pod_doc("b", "1500m")], Launcher())
    p.autoscaler = None
    assert p.simulate().autoscaling is None
