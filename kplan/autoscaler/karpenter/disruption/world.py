"""Disruption on kplan's inputs, end to end: the scheduling simulation on K2's solve() and the
answer for a KarpenterCluster (``consolidate``).

SimulateScheduling (pkg/controllers/disruption/helpers.go of sigs.k8s.io/karpenter v1.15.0): the
cluster without the candidates, the pending pods and the candidates' currently reschedulable pods
(still bound to the candidate: not Pending, so the consolidateAfter rule applies to them), the
consolidation option when asked; the errors kept are those of the candidates' pods, and a pod
placed on an uninitialized node is an error (UninitializedNodeError's words).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from kplan.autoscaler.karpenter.disruption.cluster import (
    KarpenterClaim,
    launch_replacement,
    node_claims_by_node,
    node_pool_view,
    state_nodes,
    with_state_labels,
)
from kplan.autoscaler.karpenter.disruption.controller import (
    ConsolidationResult,
    DisruptionOptions,
    LaunchedNode,
    disrupt,
)
from kplan.autoscaler.karpenter.disruption.helpers import SimulationResults, Simulator
from kplan.autoscaler.karpenter.disruption.pdb import Limits
from kplan.autoscaler.karpenter.disruption.state import StateNode
from kplan.autoscaler.karpenter.disruption.types import Candidate, ClaimOptions, Replacement
from kplan.autoscaler.karpenter.results import KarpenterCluster
from kplan.autoscaler.karpenter.scheduler import solve
from kplan.model.karpenter import NodeClaim
from kplan.model.objects import Pod, PodDisruptionBudget


class KarpenterWorld:
    """The cluster disruption works on, pass after pass: the input's KarpenterCluster, the
    NodeClaim of each node (made for Karpenter nodes given without one, launched for
    replacements), the PodDisruptionBudgets and the pending pods."""

    def __init__(self, cluster: KarpenterCluster, pending: Sequence[Pod], pdbs: Limits, now: float) -> None:
        cluster = dataclasses.replace(cluster, nodes=tuple(with_state_labels(n) for n in cluster.nodes))
        self.cluster = cluster
        self.pending = tuple(pending)
        #: each bound pod's position in the input: the moving pods go to solve in that order, as
        #: Karpenter's queue breaks ties of equal requests and age by UID, which the oracle numbers
        #: in input order for pods given without one (kplan's queue: by position in its list)
        self.position = {p.uid: i for i, p in enumerate(cluster.bound_pods)}
        self.pdbs = pdbs
        self.now = now
        self.claims: dict[str, NodeClaim] = dict(node_claims_by_node(cluster))
        self.pools = {p.name: p for p in cluster.node_pools}
        self.views = {p.name: node_pool_view(p, cluster.catalog) for p in cluster.node_pools}

    def karpenter_cluster(self, nodes: Sequence[StateNode]) -> KarpenterCluster:
        """The KarpenterCluster solve() reads for the cluster made of ``nodes`` (a later pass: the
        replacements in, the candidates out, the moved pods bound where they went, their nodes'
        last pod event as the views say)."""
        node_objs = tuple(n.node for n in nodes if n.node is not None)
        bound = tuple(p for n in nodes for p in n.pods)
        claims = []
        for n in nodes:
            nc = self.claims.get(n.name)
            if nc is None or n.claim is None:
                continue
            if nc.last_pod_event_time != n.claim.last_pod_event:
                nc = dataclasses.replace(nc, last_pod_event_time=n.claim.last_pod_event)
            claims.append(nc)
        in_flight = tuple(nc for nc in self.cluster.node_claims if not nc.node_name)
        return dataclasses.replace(self.cluster, nodes=node_objs, bound_pods=bound,
                                   node_claims=tuple(claims) + in_flight)

    def simulator(self, nodes: Sequence[StateNode]) -> Simulator:
        """SimulateScheduling on the cluster made of ``nodes`` (helpers.Simulator)."""
        def simulate(candidates: Sequence[Candidate], consolidation: bool) -> SimulationResults:
            gone = {c.name for c in candidates}
            rest = [n for n in nodes if n.name not in gone]
            moving = sorted((p for c in candidates for p in c.reschedulable_pods
                             if self.pdbs.is_currently_reschedulable(p, self.now)),
                            key=lambda p: self.position.get(p.uid, len(self.position)))
            result = solve(self.karpenter_cluster(rest), [*self.pending, *moving],
                           consolidation_now=self.now if consolidation else None)
            keys = {p.key for p in moving}
            errors = {k: v for k, v in result.pod_errors.items() if k in keys}
            existing: dict[str, str] = {}
            for e in result.existing_nodes:
                for p in e.pods:
                    if p.key not in keys:
                        continue
                    if not e.initialized:
                        where = [f"nodeclaim/{e.node_claim}"] if e.node_claim else []
                        if any(n.name == e.name and n.node is not None for n in rest):
                            where.append(f"node/{e.name}")
                        errors[p.key] = f"would schedule against uninitialized {', '.join(where)}"
                    else:
                        existing[p.key] = e.name
            claims: list[ClaimOptions] = [KarpenterClaim(c, self.cluster.catalog) for c in result.new_node_claims]
            return SimulationResults(new_claims=claims, errors=errors, existing=existing)
        return simulate

    def launch(self, r: Replacement, name: str, now: float) -> tuple[StateNode, LaunchedNode]:
        state, info, nc = launch_replacement(r, name, now, self.cluster.catalog, self.pools)
        self.claims[name] = nc
        return state, info


def consolidate(cluster: KarpenterCluster, pending: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget],
                pdb_allowed: Mapping[tuple[str, str], int], now: float,
                opts: DisruptionOptions | None = None) -> ConsolidationResult:
    """What Karpenter's disruption does to ``cluster`` at ``now`` (seconds since the epoch): every
    node deleted, replaced or kept, with why (controller.disrupt). ``pending``: the pods still
    pending (Karpenter's simulation places them too); ``pdb_allowed``: each budget's allowed
    disruptions where its object has no status."""
    world = KarpenterWorld(cluster, pending, Limits(pdbs, pdb_allowed), now)
    nodes = state_nodes(world.cluster, world.claims, now)
    return disrupt(nodes, world.views, world.pdbs, now, world.simulator, world.launch, opts)
