"""Multi-node consolidation: the largest prefix of the candidates that can go at once.

Mirrors pkg/controllers/disruption/multinodeconsolidation.go of sigs.k8s.io/karpenter v1.15.0:
candidates in consolidation's order, those whose NodePool's Underutilized budget is used up left
out (each one kept uses one disruption), at most 100; then a binary search over the prefix length
(from 2 to all of them, or 100 if fewer... as upstream: ``max`` is the count less one when the
count is at most 100) for the longest prefix whose removal is a valid command: a deletion, or a
replacement by one cheaper NodeClaim that still has instance types once those no cheaper than the
cheapest candidate of the same type are removed (filterOutSameInstanceType), and that a Balanced
NodePool approves. The one-minute timeout is not modelled (kplan's answer does not depend on the
machine's speed).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

from kplan.autoscaler.karpenter.disruption.consolidation import Consolidation, replacement
from kplan.autoscaler.karpenter.disruption.emptiness import BUDGET_BLOCKED
from kplan.autoscaler.karpenter.disruption.nodepool import UNDERUTILIZED
from kplan.autoscaler.karpenter.disruption.types import DELETE, GRACEFUL, REPLACE, Candidate, Command

MAX_PARALLEL = 100
#: math.MaxFloat64, upstream's "no limit" (a type without a launchable offering is priced at it)
MAX_FLOAT64 = sys.float_info.max


def cheapest_compatible_price(c: Candidate) -> float | None:
    """The cheapest offering of the node's instance type compatible with its labels (its zone and
    capacity type), available or not; None when there is none."""
    if c.instance_type is None:
        return None
    prices = [o.price for o in c.instance_type.offerings if o.zone == c.zone and o.capacity_type == c.capacity_type]
    return min(prices) if prices else None


def filter_out_same_instance_type(cmd: Command, candidates: Sequence[Candidate]) -> Command | None:
    """filterOutSameInstanceType: when the replacement may be one of the candidates' own types,
    keep only the types cheaper than the cheapest such candidate; None on a minValues error."""
    existing: dict[str, float] = {}
    types: set[str] = set()
    for c in candidates:
        name = c.instance_type.name if c.instance_type is not None else ""
        types.add(name)
        price = cheapest_compatible_price(c)
        if price is None:
            continue
        if price < existing.get(name, math.inf):
            existing[name] = price
    max_price = MAX_FLOAT64
    claim = cmd.replacements[0].claim
    assert claim is not None
    for name in claim.instance_type_names():
        if name in types and existing.get(name, 0.0) < max_price:
            max_price = existing.get(name, 0.0)
    if claim.remove_by_price(max_price) is not None:
        return None
    return Command(method=cmd.method, reason=cmd.reason, candidates=cmd.candidates,
                   replacements=(replacement(claim),), moved=cmd.moved)


class MultiNodeConsolidation:
    name = "multi-node consolidation"
    reason = UNDERUTILIZED
    disruption_class = GRACEFUL

    def __init__(self, c: Consolidation) -> None:
        self.c = c

    def should_disrupt(self, cand: Candidate) -> str | None:
        return self.c.should_disrupt(cand)

    def compute_commands(self, budgets: dict[str, int], candidates: Sequence[Candidate]) -> list[Command]:
        allowed: list[Candidate] = []
        for cand in self.c.sort_candidates(candidates):
            if budgets.get(cand.node_pool.name, 0) == 0:
                self.c.notes[cand.name] = BUDGET_BLOCKED.format(reason=self.reason)
                continue
            allowed.append(cand)
            budgets[cand.node_pool.name] -= 1
        cmd = self.first_n_consolidation_option(allowed, min(len(allowed), MAX_PARALLEL))
        if cmd.decision() == "no-op":
            return []
        return [Command(method=self.name, reason=self.reason, candidates=cmd.candidates,
                        replacements=cmd.replacements, moved=cmd.moved)]

    def first_n_consolidation_option(self, candidates: Sequence[Candidate], most: int) -> Command:
        if len(candidates) < 2:
            return Command()
        low, high = 1, most
        if len(candidates) <= most:
            high = len(candidates) - 1
        saved = Command()
        while low <= high:
            mid = (low + high) // 2
            batch = candidates[:mid + 1]
            cmd = self.c.compute_consolidation(batch)
            valid = cmd.decision() == DELETE
            if cmd.decision() == REPLACE:
                filtered = filter_out_same_instance_type(cmd, batch)
                if filtered is not None and filtered.replacements[0].instance_types:
                    cmd, valid = filtered, True
            if valid and not self.c.evaluator.approve(cmd):
                valid = False
            if valid:
                saved = cmd
                low = mid + 1
            else:
                high = mid - 1
        return saved
