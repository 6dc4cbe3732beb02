"""The DaemonSet pods of the nodes a what-if adds: which DaemonSets create one, and how they run."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.io.workspace import load_workspace, open_planner
from kplan.model.objects import Taint
from kplan.model.raw import RawObject
from kplan.scheduler.pod_status import PodStatus
from kplan.whatif.changes import AddNodes, CloneNode
from tests.unit.whatif.planning_builders import node


def node_doc(name: str, cpu: str = "2", taints: list[dict[str, str]] | None = None, unschedulable: bool = False,
             **labels: str) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "spec": {"taints": taints or [], "unschedulable": unschedulable},
            "status": {"allocatable": alloc, "capacity": alloc}}


def daemonset(name: str, cpu: str = "100m", ns: str = "kube-system", host_port: int | None = None,
              **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}
    if host_port is not None:
        container["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    pod_spec = {"containers": [container], **spec}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}}}


def deployment(name: str, replicas: int, cpu: str, priority_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def planner(cluster: list[dict[str, Any]], manifests: list[dict[str, Any]] = ()):  # type: ignore[assignment]
    ws = load_workspace([RawObject(d, "cluster.yaml") for d in cluster],
                        [RawObject(d, "app.yaml") for d in manifests])
    return open_planner(ws, None)


def overhead(w) -> dict[str, tuple[PodStatus, str | None]]:
    """DaemonSet name → (status, node) of its pods on the added nodes."""
    out = {}
    for o in w.after.result.overhead:
        ref = o.pod.controller()
        out[ref.name] = (o.status, o.node)
    return out


GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}

CASES = [
    ("a DaemonSet without constraints gets a pod, bound to the new node",
     [node_doc("n1")], [daemonset("agent")], "n1", {"agent": (PodStatus.SCHEDULED, "n1-whatif-1")}),
    ("a nodeSelector the clone matches", [node_doc("n1", pool="app")],
     [daemonset("agent", nodeSelector={"pool": "app"})], "n1", {"agent": (PodStatus.SCHEDULED, "n1-whatif-1")}),
    ("a nodeSelector the clone does not match creates no pod", [node_doc("n1", pool="app")],
     [daemonset("gpu-agent", nodeSelector={"pool": "gpu"})], "n1", {}),
    ("a node-local DaemonSet (affinity to the template's hostname) skips the clone", [node_doc("n1")],
     [daemonset("local", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
         "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                      "values": ["n1"]}]}]}}})], "n1", {}),
    ("a DaemonSet pinned by nodeName to another node skips the clone", [node_doc("n1")],
     [daemonset("pinned", nodeName="n1")], "n1", {}),
    ("a taint the DaemonSet does not tolerate creates no pod", [node_doc("n1", taints=[GPU_TAINT])],
     [daemonset("agent")], "n1", {}),
    ("a taint the DaemonSet tolerates", [node_doc("n1", taints=[GPU_TAINT])],
     [daemonset("agent", tolerations=[{"operator": "Exists"}])], "n1",
     {"agent": (PodStatus.SCHEDULED, "n1-whatif-1")}),
    ("a DaemonSet bigger than the node is created and stays pending", [node_doc("n1")],
     [daemonset("huge", cpu="3")], "n1", {"huge": (PodStatus.UNSCHEDULABLE, None)}),
    ("two DaemonSets on one host port: the second stays pending", [node_doc("n1")],
     [daemonset(n, host_port=9100) for n in ("exporter-a", "exporter-b")], "n1",
     {"exporter-a": (PodStatus.SCHEDULED, "n1-whatif-1"), "exporter-b": (PodStatus.UNSCHEDULABLE, None)}),
    ("the DaemonSets of the cluster and of the manifests", [node_doc("n1")],
     [daemonset("agent")], "n1",
     {"agent": (PodStatus.SCHEDULED, "n1-whatif-1"), "app-agent": (PodStatus.SCHEDULED, "n1-whatif-1")}),
]


@pytest.mark.parametrize("cluster, daemonsets, template, want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_added_nodes_get_the_pods_their_daemonsets_create(cluster, daemonsets, template, want):
    manifests = [daemonset("app-agent", ns="default")] if "app-agent" in want else []
    p = planner(cluster + daemonsets, manifests)
    w = p.whatif([CloneNode(template, 1)])
    assert overhead(w) == want
    assert set(w.after.applied.daemon_pods.values()) <= {"n1-whatif-1"}


def test_the_daemon_pod_carries_the_controllers_node_affinity_and_tolerations():
    p = planner([node_doc("n1"), daemonset("agent", hostNetwork=True)])
    w = p.whatif([CloneNode("n1", 1)])
    (o,) = w.after.result.overhead
    terms = o.pod.required_node_affinity.terms
    assert [(r.key, r.operator, r.values) for t in terms for r in t.match_fields] == [
        ("metadata.name", "In", ("n1-whatif-1",))]
    keys = {(t.key, t.effect) for t in o.pod.tolerations}
    assert {("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
            ("node.kubernetes.io/unschedulable", "NoSchedule"),
            ("node.kubernetes.io/network-unavailable", "NoSchedule")} <= keys
    assert o.pod.name.startswith("agent-") and o.pod.controller().kind == "DaemonSet"


@pytest.mark.parametrize("host_network, created", [(True, True), (False, False)],
                         ids=["a hostNetwork DaemonSet tolerates network-unavailable",
                              "another does not, and gets no pod"])
def test_the_automatic_network_unavailable_toleration(host_network, created):
    p = planner([node_doc("n1"), daemonset("agent", hostNetwork=host_network)])
    added = node("fresh", cpu="2", taints=(Taint("node.kubernetes.io/network-unavailable", "", "NoSchedule"),))
    w = p.whatif([AddNodes((added,))])
    assert bool(w.after.result.overhead) == created


def test_pressure_and_unschedulable_taints_are_tolerated_automatically():
    p = planner([node_doc("n1"), daemonset("agent")])
    taints = tuple(Taint(f"node.kubernetes.io/{k}", "", "NoSchedule")
                   for k in ("memory-pressure", "disk-pressure", "pid-pressure", "unschedulable"))
    w = p.whatif([AddNodes((node("fresh", cpu="2", taints=taints),))])
    assert overhead(w) == {"agent": (PodStatus.SCHEDULED, "fresh")}


def test_one_2cpu_node_a_1cpu_daemonset_and_three_600m_pods_need_two_more_nodes():
    # the example: each new node runs the agent first and then holds one 600m pod
    running = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "agent-abcde", "namespace": "kube-system", "labels": {"app": "agent"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u",
                             "controller": True}]},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i",
                                                   "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Running"}}
    p = planner([node_doc("n1"), daemonset("agent", cpu="1"), running], [deployment("web", 3, "600m")])
    w = p.whatif([], until_fit="n1", limit=16)
    assert w.until_fit is not None and w.until_fit.count == 2
    assert all(o.status == PodStatus.SCHEDULED for o in w.after.result.pods)
    assert sorted(o.node for o in w.after.result.overhead) == ["n1-whatif-1", "n1-whatif-2"]


BOUND_CASES = [
    # n1 (2 cpu) holds 20 of the 60 100m pods; a fresh node keeps 1 cpu after its agent: 10 pods each.
    # Counting the node's whole 2 cpu, the bound would say 2
    ("the agent's cpu is not room: the bound is the answer", "1", 4, 4),
    # an agent bigger than the node stays pending there and takes nothing: 2 cpu, 20 pods a node
    ("an agent too big for the node takes no room", "3", 2, 2),
]


@pytest.mark.parametrize("agent_cpu, bound, count", [c[1:] for c in BOUND_CASES], ids=[c[0] for c in BOUND_CASES])
def test_the_until_fit_lower_bound_leaves_out_the_room_daemon_pods_take_on_new_nodes(agent_cpu, bound, count):
    p = planner([node_doc("n1"), daemonset("agent", cpu=agent_cpu)], [deployment("web", 60, "100m")])
    w = p.whatif([], until_fit="n1", limit=16)
    assert w.until_fit is not None
    assert (w.until_fit.lower_bound, w.until_fit.count) == (bound, count)
    # the bound is a true lower bound: the search never probed below it (the count one below fails)
    assert all(k == 0 or k >= bound - 1 for k in w.until_fit.probes)
    assert w.until_fit.probes.get(count - 1) in (None, False)


def test_daemon_pods_are_placed_before_a_pending_pod_of_higher_priority_which_may_then_preempt_them():
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    # n1 is cordoned: the pending pod can only go to the clone, which its DaemonSet pod filled
    p = planner([node_doc("n1", cpu="1", unschedulable=True), daemonset("agent", cpu="1"), high],
                [deployment("web", 1, "1", priority_class="high")])
    w = p.whatif([CloneNode("n1", 1)])
    (daemon,) = w.after.result.overhead
    assert daemon.status == PodStatus.PREEMPTED and daemon.node == "n1-whatif-1"
    assert [o.status for o in w.after.result.pods] == [PodStatus.SCHEDULED]


def test_pending_counts_and_all_fit_leave_the_overhead_out():
    p = planner([node_doc("n1"), daemonset("huge", cpu="3")], [deployment("web", 1, "500m")])
    w = p.whatif([CloneNode("n1", 2)])
    assert [o.status for o in w.after.result.overhead] == [PodStatus.UNSCHEDULABLE] * 2
    assert [o.status for o in w.after.result.pods] == [PodStatus.SCHEDULED]


def test_pod_names_are_new_and_the_runs_reproducible():
    p = planner([node_doc("n1"), daemonset("agent")], [daemonset("agent", ns="kube-system")])
    names = [o.pod.name for o in p.whatif([CloneNode("n1", 3)]).after.result.overhead]
    again = [o.pod.name for o in p.whatif([CloneNode("n1", 3)]).after.result.overhead]
    existing = {q.name for q in p.inputs.pending}
    assert names == again and len(set(names)) == 3 and not set(names) & existing


def test_a_daemonset_missing_from_the_input_is_noted():
    running = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "logger-x", "namespace": "kube-system",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "logger", "uid": "u",
                             "controller": True}]},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}}
    p = planner([node_doc("n1"), running])
    w = p.whatif([CloneNode("n1", 1)])
    assert w.after.result.overhead == []
    assert any("kube-system/logger" in n for n in w.after.applied.notes)
