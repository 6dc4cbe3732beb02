"""The versioned CapacityResult document (apiVersion kplan.dev/v1alpha1) of ``kplan capacity``.

Fields may be added; none are renamed. ``declared`` counts the replicas the manifests declare
(``replicas``; 1 for a Pod) and how many of them fit (``fit``): they are placed first.
``replicas`` is how many more replicas fit,
``placements`` where they go (node → count), ``message`` why the next one does not (its
FitError) or that the limit was reached; ``evictions`` the pods the replicas preempted;
``nodes`` the nodes' utilisation with the replicas placed (as in a SimulationResult).
"""

from __future__ import annotations

from typing import Any

from kplan.model.objects import Pod
from kplan.report.document import API_VERSION, node_usage
from kplan.whatif.capacity import CapacityOutcome


def capacity_document(template: Pod, workload: str, out: CapacityOutcome, limit: int, *, declared: int = 0,
                      declared_fit: int = 0, message: str | None = None) -> dict[str, Any]:
    more_counted = message is None
    if message is not None:
        pass
    elif out.failed is not None:
        message = out.failed.message
    else:
        message = f"stopped at the limit of {limit} replicas; more may fit"
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "CapacityResult",
        "workload": workload,
        "pod": {"namespace": template.namespace, "name": template.name, "priority": template.priority},
        "declared": {"replicas": declared, "fit": declared_fit},
        #: false when no replica beyond the declared ones was tried (``message`` says why)
        "moreCounted": more_counted,
        "replicas": out.replicas,
        "placements": out.placements,
        "message": message,
        "limitReached": out.limit_reached,
        "limit": limit,
        "evictions": [{"namespace": e.pod.namespace, "name": e.pod.name, "node": e.node, "priority": e.pod.priority,
                       "preemptor": e.preemptor.name} for e in out.evictions],
        # the nodes' requested share with the replicas placed
        "nodes": node_usage(out.result.snapshot.table) if out.result is not None else [],
    }
    return doc
