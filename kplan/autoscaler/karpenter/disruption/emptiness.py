"""Emptiness: delete the empty nodes, as many as the budgets allow, in one command.

Mirrors pkg/controllers/disruption/emptiness.go of sigs.k8s.io/karpenter v1.15.0: a candidate of
a non-static NodePool with consolidation enabled (any policy) that is empty (no moving pod adds to
the per-node disruption cost) and Consolidatable; in consolidation's order, each one its
NodePool's Empty budget still allows joins the command and uses one disruption. The command's
validation after 15 s is not modelled (the cluster does not change offline).
"""

from __future__ import annotations

from collections.abc import Sequence

from kplan.autoscaler.karpenter.disruption.consolidation import Consolidation, not_consolidatable
from kplan.autoscaler.karpenter.disruption.nodepool import EMPTY
from kplan.autoscaler.karpenter.disruption.types import GRACEFUL, Candidate, Command

BUDGET_BLOCKED = "No allowed disruptions for disruption reason {reason} due to blocking budget"


class Emptiness:
    name = "emptiness"
    reason = EMPTY
    disruption_class = GRACEFUL

    def __init__(self, c: Consolidation) -> None:
        self.c = c

    def should_disrupt(self, cand: Candidate) -> str | None:
        pool = cand.node_pool
        if pool.static:
            return ""
        if pool.consolidate_after is None:
            return f'NodePool "{pool.name}" has consolidation disabled'
        if not cand.is_empty():
            return ""
        assert cand.state.claim is not None
        return not_consolidatable(pool, cand.state.claim, self.c.now)

    def compute_commands(self, budgets: dict[str, int], candidates: Sequence[Candidate]) -> list[Command]:
        empty: list[Candidate] = []
        for cand in self.c.sort_candidates(candidates):
            if not cand.is_empty():
                continue
            if budgets.get(cand.node_pool.name, 0) == 0:
                self.c.notes[cand.name] = BUDGET_BLOCKED.format(reason=self.reason)
                continue
            empty.append(cand)
            budgets[cand.node_pool.name] -= 1
        if not empty:
            return []
        return [Command(method=self.name, reason=self.reason, candidates=tuple(empty))]
