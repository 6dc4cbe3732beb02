"""The ``shrink`` member of the WhatIfResult document (``kplan whatif --shrink``).

Fields may be added; none are renamed. ``removed`` lists the nodes that can go, in the order the
search removes them (least utilised first), each with the pods that move and where they go;
``kept`` the nodes considered that stay, each with why (the autoscaler's reason) and the pods
that block it; ``cost`` is null without ``--price``. The WhatIfResult's ``after`` run is the
cluster without the removed nodes, replayed from the inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from kplan.report.document import PodKey
from kplan.whatif.shrink import NodeVerdict, ShrinkResult, Utilization


def _number(x: Decimal) -> float:
    f = float(x)
    return int(f) if f == int(f) else f


@dataclass(frozen=True, kw_only=True)
class ShrinkSettings:
    """cluster-autoscaler's settings the search used, under its flag names."""

    scale_down_utilization_threshold: float
    scale_down_gpu_utilization_threshold: float
    skip_nodes_with_system_pods: bool
    skip_nodes_with_local_storage: bool
    skip_nodes_with_custom_controller_pods: bool
    ignore_daemonsets_utilization: bool
    ignore_mirror_pods_utilization: bool
    #: the nodes considered (null: every node)
    candidates: tuple[str, ...] | None


@dataclass(frozen=True, kw_only=True)
class NodeUtilization:
    """Requests over allocatable (fractions): ``value`` is the one that decides, from ``resource``
    (the larger of cpu and memory, or the GPU share on a GPU node)."""

    value: float
    resource: str
    cpu: float
    memory: float


@dataclass(frozen=True, kw_only=True)
class MovedPod(PodKey):
    """A pod of a removed node and the node the scheduler put it on."""

    node: str


@dataclass(frozen=True, kw_only=True)
class RemovedNode:
    name: str
    utilization: NodeUtilization
    #: its price per hour (null when --price gives it none)
    price: float | None
    moved: tuple[MovedPod, ...]


@dataclass(frozen=True, kw_only=True)
class BlockingPod:
    """What keeps a node: a pod (null for a reason of the node's own), the autoscaler's reason
    and the message."""

    pod: PodKey | None
    reason: str
    message: str


@dataclass(frozen=True, kw_only=True)
class KeptNode:
    name: str
    utilization: NodeUtilization
    #: ScaleDownDisabledAnnotation, NotUnderutilized, BlockedByPod, NoPlaceToMovePods,
    #: NodeGroupMinSizeReached, ScaleDownInCooldown (--autoscaler cluster-autoscaler) or DroppedInReplay
    reason: str
    blockers: tuple[BlockingPod, ...]


@dataclass(frozen=True, kw_only=True)
class ShrinkCost:
    """Price per hour of the priced nodes, before and after the removals."""

    before: float
    after: float
    saved: float
    priced_nodes: int
    unpriced_nodes: int


@dataclass(frozen=True, kw_only=True)
class ShrinkDoc:
    """Which nodes can go with every running pod rescheduled and every pending pod placed."""

    settings: ShrinkSettings
    removed: tuple[RemovedNode, ...]
    kept: tuple[KeptNode, ...]
    #: pending pods that fit nowhere even before any removal (no removal can place them)
    unplaced_before: tuple[PodKey, ...]
    #: nodes removable one at a time that the replay of all removals together put back
    dropped: tuple[str, ...]
    cost: ShrinkCost | None


def _key(key: str) -> PodKey:
    namespace, _, name = key.partition("/")
    return PodKey(namespace=namespace, name=name)


def _util(u: Utilization) -> NodeUtilization:
    return NodeUtilization(value=round(u.value, 4), resource=u.resource, cpu=round(u.cpu, 4),
                           memory=round(u.memory, 4))


def _price(prices: Mapping[str, Decimal], name: str) -> float | None:
    p = prices.get(name)
    return None if p is None else _number(p)


def _kept(v: NodeVerdict) -> KeptNode:
    return KeptNode(name=v.node, utilization=_util(v.utilization), reason=v.reason,
                    blockers=tuple(BlockingPod(pod=_key(b.pod) if b.pod else None, reason=b.reason, message=b.message)
                                   for b in v.blockers))


def shrink_doc(r: ShrinkResult, node_names: tuple[str, ...]) -> ShrinkDoc:
    """``node_names``: every node of the cluster the search started from (for the cost)."""
    o = r.options
    cost = None
    if r.prices:
        before = sum((r.prices[n] for n in node_names if n in r.prices), Decimal(0))
        saved = sum((r.prices[v.node] for v in r.removed if v.node in r.prices), Decimal(0))
        priced = sum(1 for n in node_names if n in r.prices)
        cost = ShrinkCost(before=_number(before), after=_number(before - saved), saved=_number(saved),
                          priced_nodes=priced, unpriced_nodes=len(node_names) - priced)
    return ShrinkDoc(
        settings=ShrinkSettings(
            scale_down_utilization_threshold=o.scale_down_utilization_threshold,
            scale_down_gpu_utilization_threshold=o.scale_down_gpu_utilization_threshold,
            skip_nodes_with_system_pods=o.skip_nodes_with_system_pods,
            skip_nodes_with_local_storage=o.skip_nodes_with_local_storage,
            skip_nodes_with_custom_controller_pods=o.skip_nodes_with_custom_controller_pods,
            ignore_daemonsets_utilization=o.ignore_daemonsets_utilization,
            ignore_mirror_pods_utilization=o.ignore_mirror_pods_utilization,
            candidates=tuple(sorted(o.candidates)) if o.candidates is not None else None),
        removed=tuple(RemovedNode(name=v.node, utilization=_util(v.utilization), price=_price(r.prices, v.node),
                                  moved=tuple(MovedPod(namespace=_key(p).namespace, name=_key(p).name, node=n)
                                              for p, n in v.moved)) for v in r.removed),
        kept=tuple(_kept(v) for v in r.kept),
        unplaced_before=tuple(_key(k) for k in r.unplaced_before),
        dropped=tuple(r.dropped),
        cost=cost,
    )
