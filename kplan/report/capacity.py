"""The versioned CapacityResult document (apiVersion kplan.dev/v1alpha1) of ``kplan capacity``.

Fields may be added; none are renamed. ``replicas`` is how many more replicas fit,
``placements`` where they go (node → count), ``message`` why the next one does not (its
FitError) or that the limit was reached; ``evictions`` the pods the replicas preempted.
"""

from __future__ import annotations

from typing import Any

from kplan.model.objects import Pod
from kplan.report.document import API_VERSION
from kplan.whatif.capacity import CapacityOutcome


def capacity_document(template: Pod, workload: str, out: CapacityOutcome, limit: int) -> dict[str, Any]:
    if out.failed is not None:
        message = out.failed.message
    else:
        message = f"stopped at the limit of {limit} replicas; more may fit"
    return {
        "apiVersion": API_VERSION,
        "kind": "CapacityResult",
        "workload": workload,
        "pod": {"namespace": template.namespace, "name": template.name, "priority": template.priority},
        "replicas": out.replicas,
        "placements": out.placements,
        "message": message,
        "limitReached": out.limit_reached,
        "limit": limit,
        "evictions": [{"namespace": e.pod.namespace, "name": e.pod.name, "node": e.node, "priority": e.pod.priority,
                       "preemptor": e.preemptor.name} for e in out.evictions],
    }
