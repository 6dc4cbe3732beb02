"""Small builders for what-if tests: nodes, pods and budgets."""

from __future__ import annotations

from kplan.model.objects import Node, OwnerRef, Pod, PodDisruptionBudget, Taint
from kplan.model.quantity import resource_value
from kplan.model.selectors import LabelSelector


def node(name: str, cpu: str = "4", memory: str = "8Gi", zone: str = "zone-a", pods: int = 110,
         taints: tuple[Taint, ...] = (), unschedulable: bool = False, **labels: str) -> Node:
    alloc = {"cpu": resource_value("cpu", cpu), "memory": resource_value("memory", memory), "pods": pods}
    all_labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone, **labels}
    return Node(name, labels=all_labels, taints=taints, unschedulable=unschedulable, allocatable=alloc,
                capacity=alloc)


def pod(name: str, node_name: str = "", cpu: str = "1", ns: str = "default", owner: str | None = None,
        priority: int = 0, annotations: dict[str, str] | None = None, **labels: str) -> Pod:
    owners = ()
    if owner is not None:
        kind, _, oname = owner.partition("/")
        owners = (OwnerRef(kind, oname, True),)
    req = {"cpu": resource_value("cpu", cpu)}
    return Pod(ns, name, f"{ns}/{name}", labels=labels, annotations=annotations or {}, owners=owners,
               node_name=node_name, priority=priority, requests=req, nonzero_cpu=req["cpu"], score_cpu=req["cpu"])


def pdb(name: str, allowed: int | None, ns: str = "default", **match: str) -> PodDisruptionBudget:
    return PodDisruptionBudget(ns, name, LabelSelector(tuple(match.items())), allowed)
