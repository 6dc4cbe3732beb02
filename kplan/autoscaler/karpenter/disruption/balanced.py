"""The Balanced consolidation policy's scoring of a move.

Mirrors pkg/controllers/disruption/balanced.go of sigs.k8s.io/karpenter v1.15.0: per NodePool,
the total cost (the prices of its NodeClaims; the candidates' prices when that is 0) and the total
disruption cost (every node of the pool: 1 plus its non-DaemonSet pods' positive eviction costs);
a move passes for a Balanced pool when (savings / total cost) / (disruption / total disruption)
>= 1/k with k = 2, savings split among pools by their share of the source price. Pools of other
policies always pass. ``can_pass_threshold``: a deletion, the best case, would pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kplan.autoscaler.karpenter.disruption.disruptioncost import PER_NODE_BASE_DISRUPTION_COST, eviction_cost
from kplan.autoscaler.karpenter.disruption.nodepool import BALANCED, BALANCED_K
from kplan.autoscaler.karpenter.disruption.pod import is_owned_by_daemonset, is_terminal
from kplan.autoscaler.karpenter.disruption.state import (
    INSTANCE_TYPE_LABEL,
    NODEPOOL_LABEL,
    NodePoolView,
    StateNode,
    offering_price,
)
from kplan.autoscaler.karpenter.disruption.types import Candidate, Command


@dataclass(frozen=True)
class NodePoolTotals:
    total_cost: float
    total_disruption_cost: float


@dataclass(frozen=True)
class ScoreResult:
    savings_fraction: float = 0.0
    disruption_fraction: float = 0.0
    k: int = BALANCED_K

    def score(self) -> float:
        if self.savings_fraction <= 0:
            return 0.0
        if self.disruption_fraction == 0:
            return math.inf
        return self.savings_fraction / self.disruption_fraction

    def threshold(self) -> float:
        return 1.0 / float(self.k)

    def approved(self) -> bool:
        return self.score() >= self.threshold()


def node_disruption_cost(node: StateNode) -> float:
    """StateNode.DisruptionCost: 1 plus the positive eviction costs of the non-DaemonSet pods that
    are not terminal (as the state has them after its Node's last update; the oracle feeds the
    Nodes again after each NodeClaim update, which drops them upstream)."""
    cost = PER_NODE_BASE_DISRUPTION_COST
    for p in node.pods:
        # cluster state tracks the pods that are not terminal (a completed pod leaves the node's usage)
        if not is_owned_by_daemonset(p) and not is_terminal(p):
            c = eviction_cost(p)
            if c > 0:
                cost += c
    return cost


def node_pool_totals(all_candidates: Sequence[Candidate], nodes: Sequence[StateNode],
                     node_pools: Mapping[str, NodePoolView]) -> dict[str, NodePoolTotals]:
    """computeNodePoolTotals, with ClusterCost's per-pool cost taken as the sum of the offering
    prices of the pool's NodeClaims."""
    by_name = {c.name: c for c in all_candidates}
    fallback: dict[str, float] = {}
    for c in all_candidates:
        fallback[c.node_pool.name] = fallback.get(c.node_pool.name, 0.0) + c.price
    disruption: dict[str, float] = {}
    cluster_cost: dict[str, float] = {}
    for n in nodes:
        pool = n.labels.get(NODEPOOL_LABEL)
        if pool is None:
            continue
        found = by_name.get(n.name)
        disruption[pool] = disruption.get(pool, 0.0) + (
            found.reschedule_disruption_cost if found is not None else node_disruption_cost(n))
        if n.claim is not None and pool in node_pools:
            it = node_pools[pool].instance_types.get(n.claim.labels.get(INSTANCE_TYPE_LABEL, ""))
            cluster_cost[pool] = cluster_cost.get(pool, 0.0) + offering_price(it, n.claim.labels)
    totals = {}
    for pool, fb in fallback.items():
        cost = cluster_cost.get(pool, 0.0)
        totals[pool] = NodePoolTotals(cost if cost > 0 else fb, disruption.get(pool, 0.0))
    return totals


def score_move(savings: float, disruption_cost: float, totals: NodePoolTotals, k: int = BALANCED_K) -> ScoreResult:
    if totals.total_cost <= 0 or totals.total_disruption_cost <= 0:
        return ScoreResult(k=k)
    return ScoreResult(savings / totals.total_cost, disruption_cost / totals.total_disruption_cost, k)


class BalancedEvaluator:
    """balancedEvaluator: ApproveCommand and CanPassThreshold."""

    def __init__(self, totals: Mapping[str, NodePoolTotals]) -> None:
        self.totals = totals

    def approve(self, cmd: Command) -> bool:
        if not cmd.candidates:
            return False
        pools: dict[str, list[Candidate]] = {}
        for c in cmd.candidates:
            pools.setdefault(c.node_pool.name, []).append(c)
        savings = cmd.estimated_savings()
        total_source = cmd.source_cost()
        approved = True
        for name, members in pools.items():
            if members[0].node_pool.consolidation_policy != BALANCED:
                continue
            pool_cost = 0.0
            for c in members:
                pool_cost += c.price
            pool_savings = savings * (pool_cost / total_source) if total_source > 0 and len(pools) > 1 else savings
            result = score_move(pool_savings, cmd.pool_disruption_cost(name),
                                self.totals.get(name, NodePoolTotals(0.0, 0.0)))
            approved = approved and result.approved()
        return approved

    def can_pass_threshold(self, c: Candidate) -> bool:
        if c.node_pool.consolidation_policy != BALANCED:
            return True
        totals = self.totals.get(c.node_pool.name)
        if totals is None or totals.total_cost <= 0:
            return True
        return score_move(c.price, c.reschedule_disruption_cost, totals).approved()
