"""The versioned SimulationResult document (apiVersion kplan.dev/v1alpha1).

Fields may be added; none are renamed. ``pods`` lists every pending pod in the order the
scheduler first popped it (pods never popped, such as gated ones, follow in creation order).
Each node's ``percent`` holds requested / allocatable in whole percent (truncated; null when
nothing is allocatable) for each resource the node lists, and for pods; its ``pool`` is the value
of the first of POOL_LABELS the node has (null when none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.cluster.node_table import NodeTable
from kplan.cluster.resources import CPU, MEMORY
from kplan.model.quantity import format_resource
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.simulate import SimulationResult

API_VERSION = "kplan.dev/v1alpha1"


def _pct(used: int, total: int) -> int | None:
    """Whole percent, truncated; None when nothing is allocatable."""
    return used * 100 // total if total > 0 else None


def _percent(table: NodeTable, row: int, col: int) -> int | None:
    return _pct(int(table.requested[row, col]), int(table.alloc[row, col]))


#: labels that name a node's pool (group, node pool, agent pool), the first present wins; the
#: instance type groups the nodes of clusters that label none of them
POOL_LABELS = ("karpenter.sh/nodepool", "cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup",
               "kubernetes.azure.com/agentpool", "agentpool", "kops.k8s.io/instancegroup", "node-pool", "nodepool",
               "node.kubernetes.io/instance-type")


def node_pool(labels: Mapping[str, str]) -> str | None:
    return next((labels[k] for k in POOL_LABELS if labels.get(k)), None)


def node_usage(table: NodeTable) -> list[dict[str, Any]]:
    out = []
    for i, name in enumerate(table.names):
        alloc = {"cpu": format_resource("cpu", int(table.alloc[i, CPU])),
                 "memory": format_resource("memory", int(table.alloc[i, MEMORY]))}
        req = {"cpu": format_resource("cpu", int(table.requested[i, CPU])),
               "memory": format_resource("memory", int(table.requested[i, MEMORY]))}
        for col, res in enumerate(table.res.names):
            if col in (CPU, MEMORY):
                continue
            a, r = int(table.alloc[i, col]), int(table.requested[i, col])
            if a or r:
                alloc[res] = format_resource(res, a)
                req[res] = format_resource(res, r)
        alloc["pods"] = str(int(table.allowed_pods[i]))
        percent = {res: _percent(table, i, col) for col, res in enumerate(table.res.names) if res in alloc}
        percent["pods"] = _pct(int(table.pod_count[i]), int(table.allowed_pods[i]))
        out.append({"name": name, "pool": node_pool(table.nodes[i].labels), "allocatable": alloc, "requested": req,
                    "pods": int(table.pod_count[i]), "percent": percent})
    return sorted(out, key=lambda n: n["name"])


def simulation_document(result: SimulationResult, timing: dict[str, float] | None = None) -> dict[str, Any]:
    counts = dict.fromkeys(PodStatus, 0)
    pods = []
    for o in result.pods:
        counts[o.status] += 1
        pods.append({
            "namespace": o.pod.namespace,
            "name": o.pod.name,
            "status": o.status.value,
            "node": o.node,
            "message": o.message,
            "attempts": o.attempts,
            "nominatedNode": o.nominated_node,
            "priority": o.pod.priority,
        })
    table = result.snapshot.table
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "SimulationResult",
        "summary": {
            "nodes": len(table),
            "pending": len(result.pods),
            "scheduled": counts[PodStatus.SCHEDULED],
            "unschedulable": counts[PodStatus.UNSCHEDULABLE],
            "gated": counts[PodStatus.GATED],
            "preempted": len(result.preempted),
            "notCreated": counts[PodStatus.NOT_CREATED],
            "replaced": sum(1 for r in result.replaced if not r.kept),
        },
        "pods": pods,
        "preempted": [{"namespace": e.pod.namespace, "name": e.pod.name, "node": e.node,
                       "preemptor": e.preemptor.key} for e in result.preempted],
        # cluster pods of the workloads the manifests replace: gone before scheduling, or still
        # running next to the new pods with --keep-existing ("kept": true)
        "replaced": [{"namespace": r.pod.namespace, "name": r.pod.name, "node": r.node or None,
                      "workload": r.workload, "kept": r.kept} for r in result.replaced],
        "nodes": node_usage(table),
    }
    if timing is not None:
        doc["timing"] = timing
    return doc
