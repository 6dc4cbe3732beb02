"""The versioned SweepResult document (apiVersion kplan.dev/v1alpha1) of ``kplan sweep``.

Fields may be added; none are renamed. ``points`` lists every grid point in grid order (the
product of the axes, the last axis varying fastest); each has its runs, one per seed, in seed
order. ``fitProbability`` is the share of seeds in which every pending pod was scheduled (gated
pods aside). ``cost`` is the price per hour of the nodes the axes add (null without --price).
``cheapest`` names up to three points whose fit probability reaches ``confidence``: the cheapest
first (by cost, then nodes added, then grid order). ``cheapestPerScale`` gives, for each
combination of the scaled workloads' replica counts, the cheapest such point (null when none
fits): the node mix for that growth.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from kplan.model.quantity import format_resource
from kplan.report.document import API_VERSION
from kplan.whatif.sweep import (
    NodeAxis,
    PointResult,
    ScaleAxis,
    SweepPlan,
    cheapest,
    cheapest_by_scale,
    percent,
)


def _number(x: Decimal | Fraction | float | None) -> float | int | None:
    if x is None:
        return None
    f = float(x)
    return int(f) if f == int(f) else f


def _axis(a: Any) -> dict[str, Any]:
    if isinstance(a, NodeAxis):
        return {"change": "addNodes", "template": a.template_name, "values": list(a.values),
                "pricePerNode": _number(a.price)}
    return {"change": "scale", "workload": a.workload or a.target, "values": list(a.values)}


def _run(r: Any) -> dict[str, Any]:
    return {"seed": r.seed, "fits": r.fits, "pending": r.pending, "scheduled": r.scheduled, "gated": r.gated,
            "preempted": r.preempted, "nodes": r.nodes,
            "cpu": {"requested": format_resource("cpu", r.cpu_requested),
                    "allocatable": format_resource("cpu", r.cpu_allocatable),
                    "percent": percent(r.cpu_requested, r.cpu_allocatable)},
            "memory": {"requested": format_resource("memory", r.memory_requested),
                       "allocatable": format_resource("memory", r.memory_allocatable),
                       "percent": percent(r.memory_requested, r.memory_allocatable)}}


def _point(plan: SweepPlan, p: PointResult) -> dict[str, Any]:
    lo, med, hi = p.pending()
    cpu, mem = p.share("cpu"), p.share("memory")
    return {
        "index": p.index,
        "values": list(p.values),
        "changes": plan.describe(p.values),
        "addedNodes": p.added_nodes,
        "cost": _number(p.cost),
        "fits": p.fits,
        "fitProbability": _number(p.fit_probability),
        "pending": {"min": lo, "median": _number(med), "max": hi},
        "cpuPercent": {"min": cpu[0], "max": cpu[1]},
        "memoryPercent": {"min": mem[0], "max": mem[1]},
        "runs": [_run(r) for r in p.runs],
    }


def _choice(plan: SweepPlan, p: PointResult) -> dict[str, Any]:
    return {"index": p.index, "changes": plan.describe(p.values), "cost": _number(p.cost),
            "addedNodes": p.added_nodes, "fitProbability": _number(p.fit_probability)}


def sweep_document(plan: SweepPlan, fixed: Sequence[str], seeds: Sequence[int], tie_break: str,
                   confidence: Fraction, points: Sequence[PointResult], timing: dict[str, Any] | None = None
                   ) -> dict[str, Any]:
    best = cheapest(points, confidence)
    scale_axes = [a for a in plan.axes if isinstance(a, ScaleAxis)]
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "SweepResult",
        "seeds": list(seeds),
        "tieBreak": tie_break,
        "confidence": _number(confidence),
        "axes": [_axis(a) for a in plan.axes],
        "fixedChanges": list(fixed),
        "summary": {
            "points": len(points),
            "simulations": sum(len(p.runs) for p in points),
            "pointsThatFit": sum(1 for p in points if p.fit_probability >= confidence),
        },
        "cheapest": [_choice(plan, p) for p in best],
        "cheapestPerScale": [
            {"replicas": {a.workload or a.target: v for a, v in zip(scale_axes, key, strict=True)},
             "cheapest": _choice(plan, p) if p is not None else None}
            for key, p in cheapest_by_scale(plan, points, confidence)],
        "points": [_point(plan, p) for p in points],
    }
    if timing is not None:
        doc["timing"] = timing
    return doc
