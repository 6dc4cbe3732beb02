"""Candidates, budgets and the scheduling simulation of disruption.

Mirrors pkg/controllers/disruption/helpers.go and the candidate checks of types.go
(NewCandidate) and pkg/controllers/state/statenode.go (ValidateNodeDisruptable,
ValidatePodsDisruptable) of sigs.k8s.io/karpenter v1.15.0.

A node that is not a candidate gets the message Karpenter publishes for it (the ``Blocked``
event's text: the error with its first letter upper-cased), so that the answer says in
Karpenter's words why a node stays. Checks upstream makes that have no offline counterpart are
left out: the orchestration queue (nothing is in flight), rebooting nodes and nominations by a
recent provisioning pass (kplan runs no provisioning loop before disruption).

The scheduling simulation (SimulateScheduling) is behind ``Simulator``: the caller runs
Karpenter's provisioning scheduler without the candidates, on the pending pods plus the
candidates' currently reschedulable pods, and reports per pod where it went or why not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kplan.autoscaler.karpenter.disruption.disruptioncost import (
    lifetime_remaining,
    reschedule_disruption_cost,
    rescheduling_cost,
)
from kplan.autoscaler.karpenter.disruption.nodepool import UNHEALTHY, allowed_disruptions
from kplan.autoscaler.karpenter.disruption.pdb import Limits
from kplan.autoscaler.karpenter.disruption.pod import is_disruptable, is_reschedulable
from kplan.autoscaler.karpenter.disruption.state import (
    DO_NOT_DISRUPT,
    INSTANCE_TYPE_LABEL,
    NODEPOOL_LABEL,
    NodePoolView,
    StateNode,
    offering_price,
)
from kplan.autoscaler.karpenter.disruption.types import EVENTUAL, Candidate, ClaimOptions


def sentence(text: str) -> str:
    """pretty.Sentence: the first letter upper-cased."""
    return text[:1].upper() + text[1:]


@dataclass
class SimulationResults:
    """What SimulateScheduling returns, for the pods that are not pending."""

    new_claims: list[ClaimOptions] = field(default_factory=list)
    #: pod key -> Karpenter's error, for the candidates' pods (and pods of deleting nodes) that
    #: did not schedule, including those placed on an uninitialized node
    errors: dict[str, str] = field(default_factory=dict)
    #: pod key -> existing node, for the candidates' pods placed on existing nodes
    existing: dict[str, str] = field(default_factory=dict)

    def all_non_pending_pods_scheduled(self) -> bool:
        return not self.errors

    def non_pending_pod_scheduling_errors(self) -> str:
        """Results.NonPendingPodSchedulingErrors (pods by key: upstream walks a map, in no order)."""
        if not self.errors:
            return "No Pod Scheduling Errors"
        parts = ["not all pods would schedule, "]
        keys = sorted(self.errors)
        for n, key in enumerate(keys, 1):
            parts.append(f"{key} => {self.errors[key]} ")
            if n >= 5:
                parts.append(f" and {len(keys) - 5} other(s)")
                break
        return "".join(parts)


class Simulator(Protocol):
    def __call__(self, candidates: Sequence[Candidate], consolidation: bool) -> SimulationResults:
        """SimulateScheduling without ``candidates``; ``consolidation``: with the
        IsConsolidationSimulation option (existing nodes under consolidateAfter take no moving pod)."""


# ------------------------------------------------------------------------------ candidates

def validate_node_disruptable(node: StateNode) -> str | None:
    """StateNode.ValidateNodeDisruptable: the error's text, or None."""
    if node.claim is None:
        return "node isn't managed by karpenter"
    if node.node is None:
        return "nodeclaim does not have an associated node"
    if node.marked_for_deletion:
        return "node is deleting or marked for deletion"
    if not node.initialized:
        return "node isn't initialized" if node.registered else "node isn't initialized nor registered"
    if node.annotations.get(DO_NOT_DISRUPT) == "true":
        return f'disruption is blocked through the "{DO_NOT_DISRUPT}" annotation'
    if NODEPOOL_LABEL not in node.labels:
        return f"node doesn't have required label (label={NODEPOOL_LABEL})"
    return None


def validate_pods_disruptable(node: StateNode, pdbs: Limits, now: float) -> str | None:
    """StateNode.ValidatePodsDisruptable: the error's text, or None."""
    for pod in node.pods:
        if not is_disruptable(pod, now):
            return f'pod has "{DO_NOT_DISRUPT}" annotation (Pod={pod.key})'
    keys = pdbs.can_evict_pods(node.pods, now)
    if len(keys) > 1:
        return f"eviction does not support multiple PDBs (PodDisruptionBudget(s)=[{' '.join(keys)}])"
    if keys:
        return f"pdb prevents pod evictions (PodDisruptionBudget=[{keys[0]}])"
    return None


def new_candidate(node: StateNode, node_pools: Mapping[str, NodePoolView], pdbs: Limits, now: float,
                  disruption_class: str) -> Candidate | str:
    """NewCandidate: the candidate, or the message Karpenter publishes for a node that is not one."""
    err = validate_node_disruptable(node)
    if err is not None:
        return sentence(err)
    assert node.claim is not None
    pool_name = node.labels[NODEPOOL_LABEL]
    pool = node_pools.get(pool_name)
    if pool is None or not pool.instance_types:
        return f"NodePool not found (NodePool={pool_name})"
    instance_type = pool.instance_types.get(node.labels.get(INSTANCE_TYPE_LABEL, ""))
    err = validate_pods_disruptable(node, pdbs, now)
    if err is not None and not (disruption_class == EVENTUAL and node.claim.termination_grace_period is not None):
        return sentence(err)
    reschedulable = tuple(p for p in node.pods if is_reschedulable(p))
    return Candidate(
        state=node, node_pool=pool, instance_type=instance_type, pods=node.pods, reschedulable_pods=reschedulable,
        disruption_cost=rescheduling_cost(node.pods) * lifetime_remaining(node.claim, now),
        price=offering_price(instance_type, node.labels),
        reschedule_disruption_cost=reschedule_disruption_cost(reschedulable))


@dataclass
class CandidateSet:
    """GetCandidatesWithTotals' answer: the candidates the method wants, in cluster order, and per
    node that is not one the message why (``kept``)."""

    candidates: list[Candidate]
    #: every node that passed NewCandidate, whether the method wants it or not
    all_candidates: list[Candidate]
    kept: dict[str, str]


#: NewCandidate's answers by (id of the state node, disruption class), each with its node (which
#: keeps the id from being reused): a node unchanged from one method or pass to the next is the
#: same object, and its answer depends on nothing else that changes during a run
CandidateCache = dict[tuple[int, str], tuple[StateNode, "Candidate | str"]]


def get_candidates(nodes: Sequence[StateNode], node_pools: Mapping[str, NodePoolView], pdbs: Limits, now: float,
                   should_disrupt: Callable[[Candidate], str | None], disruption_class: str,
                   cache: CandidateCache | None = None) -> CandidateSet:
    """GetCandidates. ``should_disrupt`` returns None for a wanted candidate, else the message
    (Karpenter's Unconsolidatable event text, or a description where it publishes none).
    ``cache``: NewCandidate's answers kept for the run (same NodePools, budgets and time)."""
    all_candidates: list[Candidate] = []
    wanted: list[Candidate] = []
    kept: dict[str, str] = {}
    for node in nodes:
        key = (id(node), disruption_class)
        hit = cache.get(key) if cache is not None else None
        if hit is not None and hit[0] is node:
            c = hit[1]
        else:
            c = new_candidate(node, node_pools, pdbs, now, disruption_class)
            if cache is not None:
                cache[key] = (node, c)
        if isinstance(c, str):
            kept[node.name] = c
            continue
        all_candidates.append(c)
        why = should_disrupt(c)
        if why is None:
            wanted.append(c)
        else:
            kept[node.name] = why
    return CandidateSet(wanted, all_candidates, kept)


# ------------------------------------------------------------------------------ budgets

def node_pool_stats(nodes: Sequence[StateNode], reason: str) -> tuple[dict[str, int], dict[str, int]]:
    """NodePoolStatsFromNodes: per NodePool, the nodes counted (managed, initialized, not
    terminating) and those already disrupting (deleting, or NotReady unless for Unhealthy)."""
    counted: dict[str, int] = {}
    disrupting: dict[str, int] = {}
    for node in nodes:
        if node.claim is None or not node.initialized or node.claim.instance_terminating:
            continue
        pool = node.labels.get(NODEPOOL_LABEL, "")
        counted[pool] = counted.get(pool, 0) + 1
        if node.marked_for_deletion or (not node.ready and reason != UNHEALTHY):
            disrupting[pool] = disrupting.get(pool, 0) + 1
    return counted, disrupting


def build_disruption_budget_mapping(nodes: Sequence[StateNode], node_pools: Mapping[str, NodePoolView], now: float,
                                    reason: str) -> dict[str, int]:
    """BuildDisruptionBudgetMapping: per NodePool, the disruptions still allowed for ``reason``."""
    counted, disrupting = node_pool_stats(nodes, reason)
    mapping = {}
    for name, pool in node_pools.items():
        allowed = allowed_disruptions(pool.budgets, now, counted.get(name, 0), reason)
        mapping[name] = max(allowed - disrupting.get(name, 0), 0)
    return mapping
