"""Single-node consolidation: the first candidate that can go alone.

Mirrors pkg/controllers/disruption/singlenodeconsolidation.go of sigs.k8s.io/karpenter v1.15.0:
candidates in consolidation's order, then interleaved by NodePool (the first of each pool, then
the second of each, ...); a candidate whose NodePool's Underutilized budget is used up, or whose
deletion could not pass a Balanced pool's score, is skipped; the first one whose removal is a
valid command (and that a Balanced pool approves) is taken. Upstream interleaves the NodePools in
Go's map order, which is random, and prefers pools a timed-out pass left unseen; kplan (and the
oracle) take them by name, and the three-minute timeout is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence

from kplan.autoscaler.karpenter.disruption.consolidation import Consolidation
from kplan.autoscaler.karpenter.disruption.emptiness import BUDGET_BLOCKED
from kplan.autoscaler.karpenter.disruption.nodepool import UNDERUTILIZED
from kplan.autoscaler.karpenter.disruption.types import GRACEFUL, NO_OP, Candidate, Command


class SingleNodeConsolidation:
    name = "single-node consolidation"
    reason = UNDERUTILIZED
    disruption_class = GRACEFUL

    def __init__(self, c: Consolidation) -> None:
        self.c = c

    def should_disrupt(self, cand: Candidate) -> str | None:
        return self.c.should_disrupt(cand)

    def sort(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        by_pool: dict[str, list[Candidate]] = {}
        for cand in self.c.sort_candidates(candidates):
            by_pool.setdefault(cand.node_pool.name, []).append(cand)
        pools = sorted(by_pool)
        longest = max((len(v) for v in by_pool.values()), default=0)
        return [by_pool[p][i] for i in range(longest) for p in pools if i < len(by_pool[p])]

    def compute_commands(self, budgets: dict[str, int], candidates: Sequence[Candidate]) -> list[Command]:
        for cand in self.sort(candidates):
            if budgets.get(cand.node_pool.name, 0) == 0:
                self.c.notes[cand.name] = BUDGET_BLOCKED.format(reason=self.reason)
                continue
            if not self.c.evaluator.can_pass_threshold(cand):
                self.c.notes[cand.name] = "Balanced: even deleting the node scores below the threshold"
                continue
            cmd = self.c.compute_consolidation([cand])
            if cmd.decision() == NO_OP:
                continue
            if not self.c.evaluator.approve(cmd):
                self.c.notes[cand.name] = "Balanced: the move scores below the threshold"
                continue
            return [Command(method=self.name, reason=self.reason, candidates=cmd.candidates,
                            replacements=cmd.replacements, moved=cmd.moved)]
        return []
