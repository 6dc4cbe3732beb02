"""``consolidation`` of a WhatIfResult (``kplan whatif --shrink --autoscaler karpenter``): each node
as Karpenter's disruption leaves it (deleted, replaced and by which nodes, or kept with Karpenter's
reason), the replacements it launches, the commands in order, and the saving."""

from __future__ import annotations

from dataclasses import dataclass

from kplan.autoscaler.karpenter.disruption.controller import ConsolidationResult
from kplan.autoscaler.provisioning import HOURS_PER_MONTH
from kplan.report.codec import is_empty, member
from kplan.report.document import PodKey


def _key(key: str) -> PodKey:
    namespace, _, name = key.partition("/")
    return PodKey(namespace=namespace, name=name)


@dataclass(frozen=True, kw_only=True)
class MovedPod(PodKey):
    """A pod of a disrupted node and where Karpenter's simulation expects it."""

    node: str


@dataclass(frozen=True, kw_only=True)
class ConsolidatedNode:
    """A node of the cluster, as Karpenter's disruption leaves it."""

    name: str
    #: its NodePool ("" for a node Karpenter does not manage)
    node_pool: str
    instance_type: str
    capacity_type: str
    zone: str
    #: its offering's price per hour (0 when the catalog has none)
    price_per_hour: float
    verdict: str = member(enum=("deleted", "replaced", "kept"))
    #: deleted or replaced: the disruption reason (Empty, Underutilized, Drifted); kept: Karpenter's
    #: message saying why
    reason: str
    #: the method that took it: emptiness, drift, multi-node or single-node consolidation ("" when kept)
    method: str
    #: which command (1: the first) took it; 0 when kept
    round: int
    #: the new nodes of the command that took it
    replaced_by: tuple[str, ...] = member(omit=is_empty, default=())
    moved: tuple[MovedPod, ...] = member(omit=is_empty, default=())


@dataclass(frozen=True, kw_only=True)
class ReplacementNode:
    """A node a consolidation command launches."""

    name: str
    node_pool: str
    instance_type: str
    capacity_type: str
    zone: str
    price_per_hour: float
    #: the instance types the replacement NodeClaim allowed, in Karpenter's order
    instance_type_options: tuple[str, ...]
    #: the pods Karpenter's simulation put on it
    pods: tuple[PodKey, ...]
    round: int


@dataclass(frozen=True, kw_only=True)
class ConsolidationDoc:
    autoscaler: str = member(enum=("karpenter",))
    #: the time the disruption was judged at (seconds since the epoch): consolidateAfter and
    #: budget schedules read it
    now: float
    nodes: tuple[ConsolidatedNode, ...]
    launched: tuple[ReplacementNode, ...]
    #: the cluster's nodes' prices per hour before and after (replacements included)
    price_per_hour_before: float
    price_per_hour_after: float
    saving_per_hour: float
    #: 730 hours
    saving_per_month: float


def consolidation_doc(r: ConsolidationResult) -> ConsolidationDoc:
    return ConsolidationDoc(
        autoscaler="karpenter", now=r.now,
        nodes=tuple(ConsolidatedNode(
            name=n.name, node_pool=n.node_pool, instance_type=n.instance_type, capacity_type=n.capacity_type,
            zone=n.zone, price_per_hour=n.price, verdict=n.verdict, reason=n.reason, method=n.method, round=n.round,
            replaced_by=n.replaced_by,
            moved=tuple(MovedPod(namespace=_key(p).namespace, name=_key(p).name, node=node) for p, node in n.moved))
            for n in r.nodes),
        launched=tuple(ReplacementNode(
            name=n.name, node_pool=n.node_pool, instance_type=n.instance_type, capacity_type=n.capacity_type,
            zone=n.zone, price_per_hour=n.price, instance_type_options=n.instance_type_options,
            pods=tuple(_key(p) for p in n.pods), round=n.round) for n in r.launched),
        price_per_hour_before=round(r.cost_before, 6), price_per_hour_after=round(r.cost_after, 6),
        saving_per_hour=round(r.saving, 6), saving_per_month=round(r.saving * HOURS_PER_MONTH, 4))
