"""The versioned WhatIfResult document (apiVersion kplan.dev/v1alpha1) of ``kplan whatif``.

Fields may be added; none are renamed. ``before`` and ``after`` are SimulationResult documents;
``changes`` lists every pod whose (status, node) differs between them; ``untilFit`` is null
unless ``--until-fit`` was given, and its ``count`` is null when no number of such nodes helps.
"""

from __future__ import annotations

from typing import Any

from kplan.model.quantity import format_resource
from kplan.report.document import API_VERSION, simulation_document
from kplan.scheduler.simulate import SimulationResult
from kplan.whatif.diff import (
    DELETED_KIND,
    EVICTED,
    MOVED,
    NEW,
    NO_LONGER_PREEMPTED,
    NOW_SCHEDULABLE,
    NOW_UNSCHEDULABLE,
    PLACED_ELSEWHERE,
    PREEMPTED_KIND,
    REMOVED,
    Usage,
    UsageChange,
)
from kplan.whatif.plan import WhatIf


def _pct(used: int, total: int) -> int | None:
    return used * 100 // total if total > 0 else None


def usage_doc(u: Usage | None) -> dict[str, Any] | None:
    if u is None:
        return None
    return {
        "cpu": {"requested": format_resource("cpu", u.cpu), "allocatable": format_resource("cpu", u.cpu_alloc),
                "percent": _pct(u.cpu, u.cpu_alloc)},
        "memory": {"requested": format_resource("memory", u.memory),
                   "allocatable": format_resource("memory", u.memory_alloc), "percent": _pct(u.memory, u.memory_alloc)},
        "pods": {"requested": u.pods, "allocatable": u.pods_alloc, "percent": _pct(u.pods, u.pods_alloc)},
    }


def _usage_change(c: UsageChange, key: str) -> dict[str, Any]:
    d: dict[str, Any] = {key: c.name}
    if key == "name":
        d["zone"] = c.zone
    d["before"] = usage_doc(c.before)
    d["after"] = usage_doc(c.after)
    return d


def _counts(result: SimulationResult) -> dict[str, int]:
    doc = simulation_document(result)["summary"]
    return {k: doc[k] for k in ("nodes", "pending", "scheduled", "unschedulable", "gated", "preempted")}


def whatif_document(w: WhatIf, timing: dict[str, float] | None = None) -> dict[str, Any]:
    applied = w.after.applied
    d = w.diff
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "WhatIfResult",
        "modifications": applied.changes if applied else [],
        "podsAffected": [{"namespace": f.pod.namespace, "name": f.pod.name, "node": f.node, "fate": f.fate,
                          "reason": f.reason} for f in (applied.pods if applied else [])],
        "summary": {
            "before": _counts(w.before.result),
            "after": _counts(w.after.result),
            "changed": len(d.changes),
            "moved": d.count(MOVED),
            "evicted": d.count(EVICTED),
            "nowSchedulable": d.count(NOW_SCHEDULABLE),
            "nowUnschedulable": d.count(NOW_UNSCHEDULABLE),
            "preempted": d.count(PREEMPTED_KIND),
            "noLongerPreempted": d.count(NO_LONGER_PREEMPTED),
            "deleted": d.count(DELETED_KIND),
            "new": d.count(NEW),
            "removed": d.count(REMOVED),
            "placedElsewhere": d.count(PLACED_ELSEWHERE),
        },
        "changes": [{"namespace": c.namespace, "name": c.name, "change": c.kind,
                     "before": {"status": c.before.status.value, "node": c.before.node},
                     "after": {"status": c.after.status.value, "node": c.after.node}} for c in d.changes],
        "utilization": {
            "nodes": [_usage_change(c, "name") for c in d.utilisation.nodes],
            "zones": [_usage_change(c, "zone") for c in d.utilisation.zones],
            "total": {"before": usage_doc(d.utilisation.total_before), "after": usage_doc(d.utilisation.total_after)},
        },
        "untilFit": None,
        "before": simulation_document(w.before.result),
        "after": simulation_document(w.after.result),
    }
    if w.until_fit is not None:
        u = w.until_fit
        doc["untilFit"] = {"template": u.template, "count": u.count, "reason": u.reason or None,
                           "lowerBound": u.lower_bound,
                           "probes": [{"count": k, "fits": v} for k, v in u.probes.items()]}
    if timing is not None:
        doc["timing"] = timing
    return doc
