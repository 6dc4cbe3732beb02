"""What single- and multi-node consolidation share: which nodes they take, in which order, and
the command one simulation of their removal yields.

Mirrors pkg/controllers/disruption/consolidation.go of sigs.k8s.io/karpenter v1.15.0:

* ShouldDisrupt: not a static NodePool's node; the node's instance type is among its NodePool's
  and it has capacity-type and zone labels; consolidation is enabled (``consolidateAfter`` not
  ``Never``); the node is not empty (emptiness takes those); the policy is not ``WhenEmpty``;
  and the NodeClaim is Consolidatable: initialized, and ``consolidateAfter`` has passed since
  its last pod event (or since it initialized, without one) — the NodeClaim disruption
  controller's rule (nodeclaim/disruption/consolidation.go), evaluated at ``now``;
* candidates in descending savings ratio (price over reschedule disruption cost), with Go's
  unstable sort (the input in node-name order: upstream's is cluster-state map order);
* computeConsolidation: every moving pod must schedule; no new NodeClaim: delete; more than one:
  no; one: its instance types by price, then either spot-to-spot (every candidate spot and the
  claim may be spot) or the price filter (only types whose worst launch price is below the
  candidates' total), and a claim that may be spot or on-demand is pinned to spot;
* computeSpotToSpotConsolidation: the SpotToSpotConsolidation feature gate (off by default),
  spot pinned, options compatible, price filter; for a single candidate at least 15 cheaper
  options, and the launch gets the 15 cheapest (or as many as minValues needs, if more).

The messages are Karpenter's Unconsolidatable events for a single candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kplan.autoscaler.gosort import sort_slice
from kplan.autoscaler.karpenter.disruption.balanced import BalancedEvaluator
from kplan.autoscaler.karpenter.disruption.helpers import Simulator, sentence
from kplan.autoscaler.karpenter.disruption.nodepool import WHEN_EMPTY
from kplan.autoscaler.karpenter.disruption.state import (
    CAPACITY_TYPE_LABEL,
    ON_DEMAND,
    SPOT,
    ZONE_LABEL,
    ClaimView,
    NodePoolView,
)
from kplan.autoscaler.karpenter.disruption.types import Candidate, ClaimOptions, Command, Replacement

#: MinInstanceTypesForSpotToSpotConsolidation
MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT = 15


def _duration(seconds: float) -> str:
    """A duration as Go prints one (time.Duration.String) for whole seconds: 1h2m3s, 5m0s, 0s."""
    s = int(seconds)
    if s == 0:
        return "0s"
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h}h{m}m{sec}s"
    if m:
        return f"{m}m{sec}s"
    return f"{sec}s"


def under_consolidate_after(pool: NodePoolView, claim: ClaimView | None, now: float) -> bool:
    """disruptionutils.IsUnderConsolidateAfter."""
    if claim is None or pool.consolidate_after is None or pool.consolidate_after == 0:
        return False
    if claim.initialized is None:
        return False
    since = claim.last_pod_event if claim.last_pod_event is not None else claim.initialized
    return now - since < pool.consolidate_after


def not_consolidatable(pool: NodePoolView, claim: ClaimView, now: float) -> str | None:
    """Why the NodeClaim's Consolidatable condition is not True at ``now`` (None when it is)."""
    if pool.consolidate_after is None:
        return f'NodePool "{pool.name}" has consolidation disabled'
    if claim.initialized is None:
        return "Node isn't initialized"
    if under_consolidate_after(pool, claim, now):
        since = claim.last_pod_event if claim.last_pod_event is not None else claim.initialized
        return (f"ConsolidateAfter ({_duration(pool.consolidate_after)}) has not passed since the last pod event "
                f"({_duration(now - since)} ago)")
    return None


@dataclass
class Consolidation:
    """The state consolidation methods share in one disruption pass."""

    simulate: Simulator
    now: float
    evaluator: BalancedEvaluator
    spot_to_spot: bool = False
    #: node name -> the last message a method published for it this pass
    notes: dict[str, str] = field(default_factory=dict)

    def should_disrupt(self, c: Candidate) -> str | None:
        pool = c.node_pool
        if pool.static:
            return ""
        if c.instance_type is None:
            return f'Instance Type "{c.instance_type_name}" not found'
        if CAPACITY_TYPE_LABEL not in c.labels:
            return f'Node does not have label "{CAPACITY_TYPE_LABEL}"'
        if ZONE_LABEL not in c.labels:
            return f'Node does not have label "{ZONE_LABEL}"'
        if pool.consolidate_after is None:
            return f'NodePool "{pool.name}" has consolidation disabled'
        if c.is_empty():
            return ""
        if pool.consolidation_policy == WHEN_EMPTY:
            return f'NodePool "{pool.name}" has consolidation policy WhenEmpty, but node is not empty'
        assert c.state.claim is not None
        return not_consolidatable(pool, c.state.claim, self.now)

    def sort_candidates(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        ordered = sorted(candidates, key=lambda c: c.name)
        sort_slice(ordered, lambda a, b: a.savings_ratio() > b.savings_ratio())
        return ordered

    def _note(self, candidates: Sequence[Candidate], message: str) -> None:
        if len(candidates) == 1:
            self.notes[candidates[0].name] = message

    def compute_consolidation(self, candidates: Sequence[Candidate]) -> Command:
        results = self.simulate(candidates, True)
        if not results.all_non_pending_pods_scheduled():
            self._note(candidates, sentence(results.non_pending_pod_scheduling_errors()))
            return Command()
        if not results.new_claims:
            return Command(candidates=tuple(candidates), moved=dict(results.existing))
        if len(results.new_claims) != 1:
            self._note(candidates, f"Can't remove without creating {len(results.new_claims)} candidates")
            return Command()
        price = 0.0
        for c in candidates:
            price += c.price
        claim = results.new_claims[0]
        claim.order_by_price()
        if all(c.capacity_type == SPOT for c in candidates) and claim.allows_capacity_type(SPOT):
            return self._spot_to_spot(candidates, claim, price, results.existing)
        err = claim.remove_by_price(price)
        if err is not None:
            self._note(candidates, f"Filtering by price: {err}")
            return Command()
        if not claim.instance_type_names():
            self._note(candidates, "Can't replace with a cheaper node")
            return Command()
        if claim.allows_capacity_type(SPOT) and claim.allows_capacity_type(ON_DEMAND):
            claim.require_capacity_type(SPOT)
        return Command(candidates=tuple(candidates), replacements=(replacement(claim),), moved=dict(results.existing))

    def _spot_to_spot(self, candidates: Sequence[Candidate], claim: ClaimOptions, price: float,
                      existing: dict[str, str]) -> Command:
        if not self.spot_to_spot:
            self._note(candidates, "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node")
            return Command()
        claim.require_capacity_type(SPOT)
        claim.keep_compatible()
        err = claim.remove_by_price(price)
        if err is not None:
            self._note(candidates, f"Filtering by price: {err}")
            return Command()
        options = claim.instance_type_names()
        if not options:
            self._note(candidates, "Can't replace with a cheaper node")
            return Command()
        if len(candidates) > 1:
            return Command(candidates=tuple(candidates), replacements=(replacement(claim),), moved=dict(existing))
        if len(options) < MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT:
            self._note(candidates, f"SpotToSpotConsolidation requires {MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT} cheaper "
                                   f"instance type options than the current candidate to consolidate, got {len(options)}")
            return Command()
        keep = MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT
        if claim.has_min_values():
            keep = max(keep, claim.min_instance_types())
        claim.truncate(keep)
        return Command(candidates=tuple(candidates), replacements=(replacement(claim),), moved=dict(existing))


def replacement(claim: ClaimOptions) -> Replacement:
    return Replacement(node_pool=claim.node_pool, instance_types=tuple(claim.instance_type_names()),
                       price=claim.launch_price(), pods=tuple(claim.pods), capacity_types=claim.capacity_types(),
                       claim=claim)
