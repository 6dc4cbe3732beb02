"""Drift: replace the drifted nodes one at a time, oldest drift first, empty ones before others.

Mirrors pkg/controllers/disruption/drift.go of sigs.k8s.io/karpenter v1.15.0 (ShouldDisrupt,
ComputeCommands), and of the NodeClaim disruption controller's drift checks
(nodeclaim/disruption/drift.go) what is knowable offline: a NodeClaim whose input already has a
Drifted=True condition, and static drift (``karpenter.sh/nodepool-hash`` of the NodeClaim differs
from its NodePool's, the hash versions being equal and present). Requirement drift and the cloud
provider's own drift (images, security groups, ...) need the provider: not modelled.

Drift is an eventual disruption: a NodeClaim with a ``terminationGracePeriod`` is a candidate
even when pods block its eviction. The simulation is the plain one (no consolidateAfter rule);
every pod must schedule; the replacements are every NodeClaim it asks for. Terminate-first for
reserved capacity (TerminateFirstDrift, off by default) is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence

from kplan.autoscaler.gosort import sort_slice
from kplan.autoscaler.karpenter.disruption.consolidation import Consolidation, replacement
from kplan.autoscaler.karpenter.disruption.helpers import sentence
from kplan.autoscaler.karpenter.disruption.nodepool import DRIFTED
from kplan.autoscaler.karpenter.disruption.state import (
    NODEPOOL_HASH,
    NODEPOOL_HASH_VERSION,
    ClaimView,
    NodePoolView,
)
from kplan.autoscaler.karpenter.disruption.types import EVENTUAL, Candidate, Command


def static_fields_drifted(pool: NodePoolView, claim: ClaimView) -> bool:
    """areStaticFieldsDrifted: both hashes and hash versions present, versions equal, hashes differ."""
    keys = (NODEPOOL_HASH, NODEPOOL_HASH_VERSION)
    if not all(k in pool.annotations and k in claim.annotations for k in keys):
        return False
    if pool.annotations[NODEPOOL_HASH_VERSION] != claim.annotations[NODEPOOL_HASH_VERSION]:
        return False
    return pool.annotations[NODEPOOL_HASH] != claim.annotations[NODEPOOL_HASH]


class Drift:
    name = "drift"
    reason = DRIFTED
    disruption_class = EVENTUAL

    def __init__(self, c: Consolidation) -> None:
        self.c = c

    def should_disrupt(self, cand: Candidate) -> str | None:
        claim = cand.state.claim
        if cand.node_pool.static or claim is None or claim.drifted is None:
            return ""
        return None

    def compute_commands(self, budgets: dict[str, int], candidates: Sequence[Candidate]) -> list[Command]:
        ordered = sorted(candidates, key=lambda c: c.name)

        def drifted_at(c: Candidate) -> float:
            assert c.state.claim is not None and c.state.claim.drifted is not None
            return c.state.claim.drifted

        sort_slice(ordered, lambda a, b: drifted_at(a) < drifted_at(b))
        empty = [c for c in ordered if not c.reschedulable_pods]
        busy = [c for c in ordered if c.reschedulable_pods]
        for cand in empty + busy:
            if budgets.get(cand.node_pool.name, 0) == 0:
                continue
            results = self.c.simulate([cand], False)
            if not results.all_non_pending_pods_scheduled():
                self.c.notes[cand.name] = sentence(results.non_pending_pod_scheduling_errors())
                continue
            return [Command(method=self.name, reason=self.reason, candidates=(cand,),
                            replacements=tuple(replacement(r) for r in results.new_claims),
                            moved=dict(results.existing))]
        return []
