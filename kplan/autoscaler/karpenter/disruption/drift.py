"""Drift: replace the drifted nodes one at a time, oldest drift first, empty ones before others.

Mirrors pkg/controllers/disruption/drift.go of sigs.k8s.io/karpenter v1.15.0 (ShouldDisrupt,
ComputeCommands). Which NodeClaims have drifted (ClaimView.drifted) is decided where the views
are built, as the NodeClaim disruption controller decides it (cluster.drift_reason).

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
from kplan.autoscaler.karpenter.disruption.types import EVENTUAL, Candidate, Command


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
