"""The node a NodeClaim becomes: which instance type, capacity type and zone the cloud provider
launches, at what price, and the Node that registers.

Mirrors sigs.k8s.io/karpenter v1.15.0 kwok/cloudprovider/cloudprovider.go (Create, toNode,
addInstanceLabels: the cheapest available offering the claim's requirements allow, over its
instance types in order, a strictly lower price replacing the one found) and the AWS provider's
choice of capacity type (reserved, then spot, then on-demand, whichever the claim allows and an
offering offers). For spot EC2 itself picks among the offerings (price-capacity-optimized), so
the result names the cheapest and lists every spot option. Deviation: where KWOK samples among
offerings of one type at the same price, kplan takes the first in catalog order and lists the
others as options.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kplan.autoscaler.karpenter.instancetypes import compatible_offerings, instance_type_requirements
from kplan.autoscaler.karpenter.requirements import from_spec
from kplan.autoscaler.karpenter.results import NewNodeClaim
from kplan.model.karpenter import (
    CAPACITY_TYPE_LABEL,
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_RESERVED,
    CAPACITY_TYPE_SPOT,
    HOSTNAME_LABEL,
    IN,
    INSTANCE_TYPE_LABEL,
    NODE_POOL_LABEL,
    Catalog,
    InstanceType,
    Offering,
)
from kplan.model.objects import Node, Pod

#: the order the AWS provider prefers capacity types in (getCapacityType)
CAPACITY_TYPE_PREFERENCE = (CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT, CAPACITY_TYPE_ON_DEMAND)


@dataclass(frozen=True, slots=True)
class LaunchOption:
    """One offering the launch could take."""

    instance_type: str
    zone: str
    capacity_type: str
    price: float


@dataclass(frozen=True, eq=False)
class LaunchedNode:
    name: str
    node_pool: str
    instance_type: InstanceType
    capacity_type: str
    zone: str
    #: dollars per hour of the chosen offering
    price: float
    #: spot: every compatible spot offering, cheapest first (EC2 picks among them); on-demand and
    #: reserved: the other offerings at the same lowest price (a tie the provider breaks at random)
    options: tuple[LaunchOption, ...]
    #: whether the cloud (EC2's price-capacity-optimized strategy), not the price alone, picks
    cloud_picks: bool
    #: the claim's other instance-type options, in Karpenter's order
    other_instance_types: tuple[str, ...]
    #: the node as it registers: labels, capacity, allocatable, taints
    node: Node
    pods: tuple[Pod, ...]


def launch(claim: NewNodeClaim, catalog: Catalog, name: str) -> LaunchedNode | None:
    """The node ``claim`` becomes, named ``name``; None when no offering is left (the provider
    would fail with insufficient capacity)."""
    reqs = from_spec(claim.requirements)
    wk = catalog.well_known_labels
    per_type: list[tuple[InstanceType, list[Offering]]] = []
    allowed_types = reqs.get(INSTANCE_TYPE_LABEL)
    for it in claim.instance_types:
        if not allowed_types.has(it.name):
            continue
        offs = [o for o in compatible_offerings(it.offerings, reqs, wk) if o.available]
        if offs:
            per_type.append((it, offs))
    if not per_type:
        return None
    offered = {o.capacity_type for _, offs in per_type for o in offs}
    capacity_type = next((ct for ct in CAPACITY_TYPE_PREFERENCE if ct in offered), "")
    best: tuple[InstanceType, Offering] | None = None
    for it, offs in per_type:
        mine = [o for o in offs if o.capacity_type == capacity_type] if capacity_type else offs
        if not mine:
            continue
        cheapest = min(mine, key=lambda o: o.price)
        if best is None or cheapest.price < best[1].price:
            best = (it, cheapest)
    assert best is not None  # some type offers the chosen capacity type
    it, offering = best
    if capacity_type == CAPACITY_TYPE_SPOT:
        options = sorted((LaunchOption(t.name, o.zone, o.capacity_type, o.price)
                          for t, offs in per_type for o in offs if o.capacity_type == CAPACITY_TYPE_SPOT),
                         key=lambda x: x.price)
    else:
        options = [LaunchOption(t.name, o.zone, o.capacity_type, o.price) for t, offs in per_type for o in offs
                   if o.capacity_type == capacity_type and o.price == offering.price and o is not offering]
    return LaunchedNode(
        name=name,
        node_pool=claim.node_pool,
        instance_type=it,
        capacity_type=capacity_type or offering.capacity_type,
        zone=offering.zone,
        price=offering.price,
        options=tuple(options),
        cloud_picks=capacity_type == CAPACITY_TYPE_SPOT,
        other_instance_types=tuple(t.name for t in claim.instance_types if t is not it),
        node=_node(claim, it, offering, name),
        pods=claim.pods,
    )


def _node(claim: NewNodeClaim, it: InstanceType, offering: Offering, name: str) -> Node:
    """addInstanceLabels: the claim's labels, its single-valued In requirements, the type's and
    the offering's single-valued requirements, the hostname; capacity and allocatable the type's;
    the claim's taints (startup taints are gone once the node is initialized)."""
    labels: dict[str, str] = dict(claim.labels)
    for r in claim.requirements:
        if r.operator == IN and len(r.values) == 1:
            labels[r.key] = r.values[0]
    labels[INSTANCE_TYPE_LABEL] = it.name
    labels.update(instance_type_requirements(it).labels())
    for r in offering.requirements:
        if r.operator == IN and len(r.values) == 1:
            labels[r.key] = r.values[0]
    if offering.capacity_type:
        labels[CAPACITY_TYPE_LABEL] = offering.capacity_type
    labels[HOSTNAME_LABEL] = name
    labels[NODE_POOL_LABEL] = claim.node_pool
    capacity: Mapping[str, int] = MappingProxyType(dict(it.capacity))
    return Node(name=name, labels=MappingProxyType(labels), taints=claim.taints, allocatable=it.allocatable,
                capacity=capacity, ready="True")
