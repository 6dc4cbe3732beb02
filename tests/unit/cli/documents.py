"""Small builders of result documents for the renderer tests: a SimulationResult with the pods,
evictions and nodes a test names, nothing else. Written as the JSON document reads, then read
into the typed document the renderers take (``typed``)."""

from __future__ import annotations

from typing import Any

from kplan.framework.diagnosis import fit_error_message
from kplan.report.codec import decode, encode
from kplan.report.document import PendingPod, SimulationDocument


def pod(name: str, status: str = "Scheduled", node: str | None = "node-1", message: str | None = None,
        namespace: str = "default", priority: int = 0, fit: dict[str, Any] | None = None) -> PendingPod:
    return decode(PendingPod, pod_json(name, status, node, message, namespace, priority, fit))


def fit_error(nodes: int, reasons: dict[str, int], post_filter: str | None = None,
              pre_filter: str | None = None) -> dict[str, Any]:
    """A FitError's parts as the document writes them (``fitError``)."""
    out: dict[str, Any] = {"nodes": nodes, "reasons": reasons}
    if pre_filter:
        out["preFilter"] = pre_filter
    if post_filter:
        out["postFilter"] = post_filter
    return out


def unschedulable(name: str, nodes: int, reasons: dict[str, int], post_filter: str | None = None,
                  namespace: str = "default", priority: int = 0) -> PendingPod:
    """An Unschedulable pod whose message is the FitError of these parts, as kplan writes it."""
    fit = fit_error(nodes, reasons, post_filter)
    message = fit_error_message(nodes, "", tuple(reasons.items()), post_filter or "")
    return pod(name, "Unschedulable", None, message, namespace, priority, fit)


def pod_json(name: str, status: str = "Scheduled", node: str | None = "node-1", message: str | None = None,
             namespace: str = "default", priority: int = 0, fit: dict[str, Any] | None = None) -> dict[str, Any]:
    if status != "Scheduled" and node == "node-1":
        node = None
    out = {"namespace": namespace, "name": name, "status": status, "node": node, "message": message,
           "attempts": 1, "nominatedNode": None, "priority": priority}
    if fit is not None:
        out["fitError"] = fit
    return out


def eviction(name: str, preemptor: str, node: str = "node-1", namespace: str = "default") -> dict[str, Any]:
    return {"namespace": namespace, "name": name, "node": node, "preemptor": preemptor}


def node(name: str = "node-1", cpu: tuple[str, str, int | None] = ("1", "4", 25),
         memory: tuple[str, str, int | None] = ("1Gi", "8Gi", 12), pods: tuple[int, int] = (1, 110)) -> dict[str, Any]:
    return {"name": name, "pool": None, "allocatable": {"cpu": cpu[1], "memory": memory[1], "pods": str(pods[1])},
            "requested": {"cpu": cpu[0], "memory": memory[0]}, "pods": pods[0],
            "percent": {"cpu": cpu[2], "memory": memory[2], "pods": pods[0] * 100 // pods[1] if pods[1] else None}}


def simulation(*pods: PendingPod, preempted: tuple[dict[str, Any], ...] = (),
               nodes: tuple[dict[str, Any], ...] | None = None, timing: dict[str, float] | None = None
               ) -> SimulationDocument:
    return decode(SimulationDocument, simulation_json(*(encode(p) for p in pods), preempted=preempted, nodes=nodes,
                                                      timing=timing))


def simulation_json(*pods: dict[str, Any], preempted: tuple[dict[str, Any], ...] = (),
                    nodes: tuple[dict[str, Any], ...] | None = None, timing: dict[str, float] | None = None
                    ) -> dict[str, Any]:
    nodes = nodes if nodes is not None else (node(),)

    def count(status: str) -> int:
        return sum(1 for p in pods if p["status"] == status)

    doc: dict[str, Any] = {
        "apiVersion": "kplan.dev/v1alpha1", "kind": "SimulationResult",
        "summary": {"nodes": len(nodes), "pending": len(pods), "scheduled": count("Scheduled"),
                    "unschedulable": count("Unschedulable"), "gated": count("Gated"), "preempted": len(preempted),
                    "notCreated": count("NotCreated"), "replaced": 0},
        "pods": list(pods), "preempted": list(preempted), "replaced": [], "nodes": list(nodes),
    }
    if timing is not None:
        doc["timing"] = timing
    return doc
