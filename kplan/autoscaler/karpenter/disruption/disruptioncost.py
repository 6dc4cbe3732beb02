"""How much disrupting a node costs, and what it saves per unit of disruption.

Mirrors pkg/utils/disruption/disruption.go of sigs.k8s.io/karpenter v1.15.0, in float64 as
upstream:

* EvictionCost of a pod: 1, plus ``karpenter.sh/disruption-cost`` / 2^27 (an int32; when absent,
  ``controller.kubernetes.io/pod-deletion-cost`` / 2^27, as with the PodDeletionCostManagement
  gate off, its default), plus the priority / 2^25, clamped to [-10, 10]; a value that is not an
  int32 is skipped (upstream logs it);
* ReschedulingCost of a node: the sum over all its pods; Candidate.DisruptionCost multiplies it by
  the share of the NodeClaim's lifetime left (``expireAfter`` from its creation; 1 without one);
* RescheduleDisruptionCost: 1 (the per-node base) plus the positive eviction costs of the pods
  that move; a node is *empty* when that is still 1;
* SavingsRatio: price over RescheduleDisruptionCost (higher: consolidate first).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kplan.autoscaler.karpenter.disruption.state import ClaimView
from kplan.model.objects import Pod

DISRUPTION_COST = "karpenter.sh/disruption-cost"
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
PER_NODE_BASE_DISRUPTION_COST = 1.0
_INT32 = re.compile(r"[+-]?[0-9]+")


def _int32(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 32); None on error."""
    if not _INT32.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**31) <= value < 2**31 else None


def eviction_cost(pod: Pod) -> float:
    cost = 1.0
    if DISRUPTION_COST in pod.annotations:
        value = _int32(pod.annotations[DISRUPTION_COST])
        if value is not None:
            cost += float(value) / 2.0**27
    elif POD_DELETION_COST in pod.annotations:
        value = _int32(pod.annotations[POD_DELETION_COST])
        if value is not None:
            cost += float(value) / 2.0**27
    cost += float(pod.priority) / 2.0**25
    return min(max(cost, -10.0), 10.0)


def rescheduling_cost(pods: Iterable[Pod]) -> float:
    total = 0.0
    for p in pods:
        total += eviction_cost(p)
    return total


def lifetime_remaining(claim: ClaimView, now: float) -> float:
    if claim.expire_after is None:
        return 1.0
    total = claim.expire_after
    left = total - (now - claim.created)
    return min(max(left / total, 0.0), 1.0) if total else 0.0


def reschedule_disruption_cost(reschedulable: Iterable[Pod]) -> float:
    cost = PER_NODE_BASE_DISRUPTION_COST
    for p in reschedulable:
        cost += max(0.0, eviction_cost(p))
    return cost


def savings_ratio(price: float, reschedule_cost: float) -> float:
    return price / reschedule_cost
