"""NodePool disruption budgets: how many of a NodePool's nodes one disruption reason may take now.

Mirrors pkg/apis/v1/nodepool.go of sigs.k8s.io/karpenter v1.15.0 (Budget.IsActive,
Budget.GetAllowedDisruptions, NodePool.GetAllowedDisruptionsByReason and
MustGetAllowedDisruptions):

* a budget without schedule and duration is always active; one with a schedule is active when
  the schedule's next hit after ``now - duration`` is not after ``now`` (a schedule that never
  fires within the cron library's five years reads as the zero time, which is never after now:
  such a budget is always active, as upstream);
* an active budget allows ``nodes`` disruptions, an integer or a percentage of the NodePool's
  counted nodes rounded up (intstr.GetScaledValueFromIntOrPercent with roundUp); an inactive
  one allows any number (MaxInt32);
* the NodePool allows the smallest value among the budgets that name the reason or name none;
* any budget that does not parse (a bad schedule or ``nodes``), whichever reason it names, makes
  the NodePool allow 0 for every reason (upstream fails closed: MustGetAllowedDisruptions
  returns 0 on the joined error).

Time is seconds since the epoch, handed in (the engine reads no clock).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kplan.autoscaler.karpenter.disruption.cron import CronError, parse_standard

MAX_INT32 = 2**31 - 1

#: the disruption reasons of budgets (v1.DisruptionReason)
UNDERUTILIZED = "Underutilized"
EMPTY = "Empty"
DRIFTED = "Drifted"
UNHEALTHY = "Unhealthy"

#: consolidation policies (v1.ConsolidationPolicy)
WHEN_EMPTY = "WhenEmpty"
WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
BALANCED = "Balanced"
#: Balanced's scoring parameter: a move passes with score >= 1/k (v1.BalancedK)
BALANCED_K = 2


@dataclass(frozen=True)
class Budget:
    """One entry of ``spec.disruption.budgets``."""

    nodes: str = "10%"
    schedule: str | None = None
    #: seconds; None when not set
    duration: float | None = None
    #: None: the budget applies to every reason
    reasons: tuple[str, ...] | None = None


#: the API server's default when a NodePool gives no budgets
DEFAULT_BUDGETS = (Budget(nodes="10%"),)


class BudgetError(ValueError):
    """A budget upstream cannot evaluate (it then allows no disruption)."""


def is_active(budget: Budget, now: float) -> bool:
    """Budget.IsActive."""
    if budget.schedule is None and budget.duration is None:
        return True
    try:
        schedule = parse_standard(budget.schedule or "")
    except CronError as e:
        raise BudgetError(f"invariant violated, invalid cron, {e}") from None
    next_hit = schedule.next(now - (budget.duration or 0.0))
    return next_hit is None or next_hit <= now


def scaled_value(nodes: str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent(GetIntStrFromValue(nodes), total, roundUp=true)."""
    if re.fullmatch(r"[+-]?[0-9]+", nodes):
        return int(nodes)
    if not nodes.endswith("%"):
        raise BudgetError("invalid type: string is not a percentage")
    number = nodes[:-1]
    if not re.fullmatch(r"[+-]?[0-9]+", number):
        raise BudgetError(f"invalid value for IntOrString: invalid value {nodes!r}")
    return math.ceil(float(int(number)) * float(total) / 100)


def allowed_by_budget(budget: Budget, now: float, num_nodes: int) -> int:
    """Budget.GetAllowedDisruptions."""
    if not is_active(budget, now):
        return MAX_INT32
    return scaled_value(budget.nodes, num_nodes)


def allowed_disruptions(budgets: Sequence[Budget], now: float, num_nodes: int, reason: str) -> int:
    """NodePool.MustGetAllowedDisruptions: the most restrictive budget for ``reason``; 0 when any
    budget cannot be evaluated."""
    allowed = MAX_INT32
    failed = False
    for budget in budgets:
        try:
            value = allowed_by_budget(budget, now, num_nodes)
        except BudgetError:
            failed, value = True, 0
        if budget.reasons is None or reason in budget.reasons:
            allowed = min(allowed, value)
    return 0 if failed else allowed
