"""Disruption's values: candidates, commands and their decisions.

Mirrors pkg/controllers/disruption/types.go of sigs.k8s.io/karpenter v1.15.0 (Candidate,
Command, Decision, Command.EstimatedSavings). Replacements are the NodeClaims the scheduling
simulation asked for, reduced here to what a command needs (``Replacement``); the simulation
itself is behind ``helpers.Simulator``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kplan.autoscaler.karpenter.disruption.disruptioncost import PER_NODE_BASE_DISRUPTION_COST, savings_ratio
from kplan.autoscaler.karpenter.disruption.state import (
    CAPACITY_TYPE_LABEL,
    INSTANCE_TYPE_LABEL,
    ZONE_LABEL,
    InstanceTypeLike,
    NodePoolView,
    StateNode,
)
from kplan.model.objects import Pod

#: disruption classes (types.go)
GRACEFUL = "graceful"
EVENTUAL = "eventual"

#: decisions (types.go Decision)
NO_OP, REPLACE, DELETE = "no-op", "replace", "delete"


@dataclass(frozen=True, eq=False)
class Candidate:
    """A node disruption may take, with what it would cost and save."""

    state: StateNode
    node_pool: NodePoolView
    #: the NodePool's instance type of the node's instance-type label (None: not found)
    instance_type: InstanceTypeLike | None
    #: every pod bound to the node, and those that move elsewhere (IsReschedulable)
    pods: tuple[Pod, ...]
    reschedulable_pods: tuple[Pod, ...]
    disruption_cost: float
    price: float
    reschedule_disruption_cost: float

    @property
    def name(self) -> str:
        return self.state.name

    @property
    def labels(self) -> Mapping[str, str]:
        return self.state.labels

    @property
    def zone(self) -> str:
        return self.labels.get(ZONE_LABEL, "")

    @property
    def capacity_type(self) -> str:
        return self.labels.get(CAPACITY_TYPE_LABEL, "")

    @property
    def instance_type_name(self) -> str:
        return self.labels.get(INSTANCE_TYPE_LABEL, "")

    def savings_ratio(self) -> float:
        return savings_ratio(self.price, self.reschedule_disruption_cost)

    def is_empty(self) -> bool:
        """No moving pod adds to the per-node base cost."""
        return self.reschedule_disruption_cost <= PER_NODE_BASE_DISRUPTION_COST


class ClaimOptions(Protocol):
    """A NodeClaim the simulation asks for, as consolidation narrows it (scheduling.NodeClaim with
    its InstanceTypeOptions and Requirements). Each call changes the claim in place, as upstream."""

    @property
    def node_pool(self) -> str: ...
    @property
    def pods(self) -> tuple[str, ...]: ...
    def instance_type_names(self) -> list[str]: ...
    def allows_capacity_type(self, capacity_type: str) -> bool:
        """Requirements.Get(karpenter.sh/capacity-type).Has(capacity_type)."""
    def order_by_price(self) -> None:
        """InstanceTypeOptions = InstanceTypeOptions.OrderByPrice(Requirements)."""
    def require_capacity_type(self, capacity_type: str) -> None:
        """Requirements.Add(capacity-type In [capacity_type])."""
    def keep_compatible(self) -> None:
        """InstanceTypeOptions = InstanceTypeOptions.Compatible(Requirements)."""
    def remove_by_price(self, max_price: float) -> str | None:
        """RemoveInstanceTypeOptionsByPriceAndMinValues: keep the types whose worst launch price is
        below ``max_price``; the minValues error's text, or None."""
    def has_min_values(self) -> bool: ...
    def min_instance_types(self) -> int:
        """SatisfiesMinValues' first value: how many of the options minValues needs."""
    def truncate(self, n: int) -> None: ...
    def launch_price(self) -> float | None:
        """The cheapest launchable offering of the first option compatible with the requirements
        (EstimatedSavings' destination price); None when there is none."""
    def capacity_types(self) -> tuple[str, ...]:
        """The capacity types the requirements allow, reserved, spot, on-demand first."""


@dataclass(frozen=True)
class Replacement:
    """A NodeClaim a command launches: its NodePool, the instance types it may launch as (in the
    order Karpenter hands them to the cloud provider), the cheapest launchable price of the
    first of them under the claim's requirements (what EstimatedSavings subtracts; None when
    that type has no such offering), and the pods the simulation put on it."""

    node_pool: str
    instance_types: tuple[str, ...]
    price: float | None
    pods: tuple[str, ...] = ()
    #: the capacity types the claim's requirements allow, in Karpenter's preference order
    capacity_types: tuple[str, ...] = ()
    #: the claim the simulation returned, for launching the node
    claim: ClaimOptions | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Command:
    """A disruption decision: the candidates it takes and what replaces them."""

    method: str = ""
    reason: str = ""
    candidates: tuple[Candidate, ...] = ()
    replacements: tuple[Replacement, ...] = ()
    #: where the simulation put the candidates' pods on existing nodes: pod key -> node name
    moved: Mapping[str, str] = field(default_factory=dict)

    def decision(self) -> str:
        if self.candidates and self.replacements:
            return REPLACE
        if self.candidates:
            return DELETE
        return NO_OP

    def source_cost(self) -> float:
        total = 0.0
        for c in self.candidates:
            total += c.price
        return total

    def estimated_savings(self) -> float:
        """EstimatedSavings: the candidates' prices less the replacements' (a replacement without a
        launchable offering counts 0, as upstream)."""
        source = self.source_cost()
        if not self.replacements:
            return source
        dest = 0.0
        for r in self.replacements:
            if r.price is not None:
                dest += r.price
        return source - dest

    def pool_disruption_cost(self, pool: str) -> float:
        cost = 0.0
        for c in self.candidates:
            if c.node_pool.name == pool:
                cost += c.reschedule_disruption_cost
        return cost


def candidate_names(candidates: Sequence[Candidate]) -> list[str]:
    return [c.name for c in candidates]
