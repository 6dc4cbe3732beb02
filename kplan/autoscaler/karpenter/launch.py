"""The node a NodeClaim becomes: which instance type, capacity type and zone the cloud provider
launches, at what price, and the Node that registers.

The choice is the AWS provider's Create (github.com/aws/karpenter-provider-aws v1.15.2
pkg/providers/instance/instance.go and filter/filter.go):
1. the claim's instance types compatible with its requirements whose allocatable fits its requests
   and that have a launchable compatible offering (CompatibleLaunchableFilter); unless a
   requirement has minValues, "exotic" types (an instance size containing "metal", or accelerator
   capacity) dropped while others remain (ExoticInstanceTypeFilter), and, when the claim allows
   spot and on-demand and both are offered, spot offerings dearer than the cheapest on-demand one
   dropped (SpotOfferingFilter); then the 60 cheapest (Truncate, with minValues checked);
2. the capacity type: reserved, else spot, else on-demand, the first the claim allows with a
   launchable compatible offering (getCapacityType);
3. the fleet's options: each (instance type, zone) with a launchable compatible offering of that
   capacity type, cheapest first. On-demand and reserved launch with EC2 Fleet's lowest-price
   strategy, so the first option is taken (among equal prices EC2 does not say which; kplan takes
   the first in the claim's order); spot launches price-capacity-optimized: EC2 picks among the
   options by capacity data no one has offline, so ``cloud_picks`` is set and the cheapest shown.
The node's labels follow kwok/cloudprovider addInstanceLabels (sigs.k8s.io/karpenter v1.15.0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from kplan.autoscaler.gosort import sort_slice
from kplan.autoscaler.karpenter import resources as res
from kplan.autoscaler.karpenter.instancetypes import (
    compatible_offerings,
    instance_type_requirements,
    launchable,
)
from kplan.autoscaler.karpenter.nodeclaim import satisfies_min_values
from kplan.autoscaler.karpenter.requirements import Req, Requirements, from_spec
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

#: the AWS provider's maxInstanceTypes: the most types a fleet request names
MAX_LAUNCH_INSTANCE_TYPES = 60
#: the AWS provider's instance-size label, which the exotic-instance filter reads
AWS_INSTANCE_SIZE_LABEL = "karpenter.k8s.aws/instance-size"
ACCELERATOR_RESOURCES = ("aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "amd.com/gpu", "nvidia.com/gpu",
                         "habana.ai/gaudi")
NO_LAUNCH = "all requested instance types were unavailable during launch"
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
    #: every (instance type, zone) the fleet request offers EC2 for that capacity type, cheapest
    #: first (the chosen one first)
    options: tuple[LaunchOption, ...]
    #: spot: EC2's price-capacity-optimized strategy picks among the options, not the price alone
    cloud_picks: bool
    #: the claim's other instance-type options, in Karpenter's order
    other_instance_types: tuple[str, ...]
    #: the node as it registers: labels, capacity, allocatable, taints
    node: Node
    pods: tuple[Pod, ...]


def is_exotic(it: InstanceType) -> bool:
    """The exotic-instance filter's test: a metal size or accelerator capacity."""
    size = instance_type_requirements(it).get(AWS_INSTANCE_SIZE_LABEL)
    if size.operator == IN and any("metal" in s for s in size.values):
        return True
    return any(it.capacity.get(r, 0) for r in ACCELERATOR_RESOURCES)


def narrow(reqs: Requirements, capacity_type: str) -> Requirements:
    out = reqs.copy()
    out.put(Req(CAPACITY_TYPE_LABEL, False, frozenset({capacity_type})))
    return out


def _cheapest(offerings: Sequence[Offering], reqs: Requirements, wk: frozenset[str]) -> float:
    prices = [o.price for o in compatible_offerings(offerings, reqs, wk) if launchable(o)]
    return min(prices) if prices else float("inf")


def launch_candidates(claim: NewNodeClaim, reqs: Requirements,
                      wk: frozenset[str]) -> list[tuple[InstanceType, list[Offering]]] | None:
    """filterInstanceTypes: the types (with the offerings left to them) a fleet request names."""
    cands: list[tuple[InstanceType, list[Offering]]] = []
    for it in claim.instance_types:
        if not reqs.is_compatible(instance_type_requirements(it), wk):
            continue
        if not res.fits(claim.requests, it.allocatable):
            continue
        if not any(launchable(o) for o in compatible_offerings(it.offerings, reqs, wk)):
            continue
        cands.append((it, list(it.offerings)))
    if not cands:
        return None
    if not reqs.has_min_values():
        generic = [c for c in cands if not is_exotic(c[0])]
        if generic:
            cands = generic
        ct = reqs.get(CAPACITY_TYPE_LABEL)
        if ct.has(CAPACITY_TYPE_ON_DEMAND) and ct.has(CAPACITY_TYPE_SPOT):
            od = [o.price for _, offs in cands for o in compatible_offerings(offs, reqs, wk)
                  if o.available and o.capacity_type == CAPACITY_TYPE_ON_DEMAND]
            spot = any(o.available and o.capacity_type == CAPACITY_TYPE_SPOT
                       for _, offs in cands for o in compatible_offerings(offs, reqs, wk))
            if od and spot:
                cheapest_od = min(od)
                kept = []
                for it, offs in cands:
                    left = [o for o in offs if not (o.capacity_type == CAPACITY_TYPE_SPOT and o.price > cheapest_od)]
                    if left:
                        kept.append((it, left))
                cands = kept
    price = {c[0]: _cheapest(c[1], reqs, wk) for c in cands}
    sort_slice(cands, lambda a, b: price[a[0]] < price[b[0]])
    cands = cands[:MAX_LAUNCH_INSTANCE_TYPES]
    if reqs.has_min_values() and satisfies_min_values([c[0] for c in cands], reqs)[2] is not None:
        return None
    return cands or None


def launch(claim: NewNodeClaim, catalog: Catalog, name: str) -> LaunchedNode | None:
    """The node ``claim`` becomes, named ``name``; None when the provider would find no offering
    ("all requested instance types were unavailable during launch", an insufficient-capacity
    error)."""
    reqs = from_spec(claim.requirements)
    wk = catalog.well_known_labels
    cands = launch_candidates(claim, reqs, wk)
    if cands is None:
        return None
    capacity_type = CAPACITY_TYPE_ON_DEMAND
    for ct in CAPACITY_TYPE_PREFERENCE[:-1]:
        if not reqs.get(CAPACITY_TYPE_LABEL).has(ct):
            continue
        n = narrow(reqs, ct)
        if any(launchable(o) for _, offs in cands for o in compatible_offerings(offs, n, wk)):
            capacity_type = ct
            break
    n = narrow(reqs, capacity_type)
    options: list[tuple[LaunchOption, InstanceType, Offering]] = []
    seen: set[tuple[str, str]] = set()
    for it, offs in cands:
        for o in compatible_offerings(offs, n, wk):
            if not launchable(o) or (it.name, o.zone) in seen:
                continue
            seen.add((it.name, o.zone))
            options.append((LaunchOption(it.name, o.zone, capacity_type, o.price), it, o))
    options.sort(key=lambda x: x[0].price)
    if not options:
        return None
    first, it, offering = options[0]
    return LaunchedNode(
        name=name,
        node_pool=claim.node_pool,
        instance_type=it,
        capacity_type=capacity_type,
        zone=first.zone,
        price=first.price,
        options=tuple(x[0] for x in options),
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
