"""Disruption on kplan's Karpenter inputs: the views it reads, built from a KarpenterCluster; the
NodeClaims of the scheduling simulation (``KarpenterClaim``), and the launch of a replacement.

* Every node labelled ``karpenter.sh/nodepool`` is Karpenter's; its NodeClaim is the input's one
  of that node (same providerID, else status.nodeName), or else one made from the node (launched,
  registered and initialized when the node was created), as the oracle does. Such a node without the
  ``karpenter.sh/registered`` / ``karpenter.sh/initialized`` labels gets them ("true"), as the
  oracle gives them: Karpenter reads a node's state from these labels (StateNode.Initialized),
  which a node given by hand rarely carries. Other nodes are not Karpenter's; NodeClaims without
  a node are in flight once launched (status.providerID set).
* Drift is found as the NodeClaim disruption controller finds it at ``now`` (``drift_reason``);
  Consolidatable is decided by the disruption methods at ``now`` (consolidation.not_consolidatable).
* A NodePool's instance types are the whole catalog (the KWOK provider offers every type to every
  NodePool; the requirements filter them in the scheduler).
* A NodePool's budget that names no reason applies to every reason (kplan's model does not keep
  an explicit empty ``reasons: []`` apart, which upstream applies to none).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping

from kplan.autoscaler.gosort import sort_slice
from kplan.autoscaler.karpenter.disruption.controller import (
    LaunchedNode,
)
from kplan.autoscaler.karpenter.disruption.nodepool import Budget
from kplan.autoscaler.karpenter.disruption.state import (
    INITIALIZED_LABEL,
    NODEPOOL_HASH,
    NODEPOOL_HASH_VERSION,
    REGISTERED_LABEL,
    ClaimView,
    NodePoolView,
    StateNode,
)
from kplan.autoscaler.karpenter.disruption.types import Replacement
from kplan.autoscaler.karpenter.instancetypes import (
    cheapest_launch_price,
    compatible_offerings,
    has_compatible_offering,
    instance_type_requirements,
    launchable,
)
from kplan.autoscaler.karpenter.launch import CAPACITY_TYPE_PREFERENCE, launch
from kplan.autoscaler.karpenter.requirements import Requirements, from_labels, from_spec, new_requirement
from kplan.autoscaler.karpenter.results import KarpenterCluster, NewNodeClaim
from kplan.model.karpenter import (
    CAPACITY_TYPE_LABEL,
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_RESERVED,
    CAPACITY_TYPE_SPOT,
    IN,
    INSTANCE_TYPE_LABEL,
    NODE_POOL_LABEL,
    Catalog,
    InstanceType,
    NodeClaim,
    NodePool,
)
from kplan.model.objects import Node, Pod

MAX_FLOAT64 = sys.float_info.max


# ------------------------------------------------------------------------------ views

def node_pool_view(pool: NodePool, catalog: Catalog) -> NodePoolView:
    d = pool.disruption
    return NodePoolView(
        name=pool.name,
        consolidate_after=None if d.consolidate_after is None else float(d.consolidate_after),
        consolidation_policy=d.consolidation_policy,
        budgets=tuple(Budget(nodes=b.nodes, schedule=b.schedule,
                             duration=None if b.duration is None else float(b.duration),
                             reasons=b.reasons or None) for b in d.budgets),
        replicas=pool.replicas, annotations=pool.annotations,
        instance_types={it.name: it for it in catalog.instance_types})


def drift_reason(pool: NodePool, nc: NodeClaim, catalog: Catalog, now: float) -> str:
    """The NodeClaim disruption controller's drift check at ``now`` (nodeclaim/disruption/drift.go):
    a launched NodeClaim has drifted when its NodePool's hash differs (same hash version), when its
    labels do not meet the NodePool's requirements, or, an hour after its creation, when its
    instance type or an offering for its zone and capacity type is gone from the catalog. The
    provider's own drift check finds nothing offline (the oracle's provider reports none)."""
    if not nc.launched:
        return ""
    hash_keys = (NODEPOOL_HASH, NODEPOOL_HASH_VERSION)
    if (all(k in pool.annotations and k in nc.annotations for k in hash_keys)
            and pool.annotations[NODEPOOL_HASH_VERSION] == nc.annotations[NODEPOOL_HASH_VERSION]
            and pool.annotations[NODEPOOL_HASH] != nc.annotations[NODEPOOL_HASH]):
        return "NodePoolDrifted"
    if from_labels(nc.labels).compatible(from_spec(pool.requirements)) is not None:
        return "RequirementsDrifted"
    if now - (nc.creation_time or 0.0) > 3600:
        it = next((t for t in catalog.instance_types if t.name == nc.labels.get(INSTANCE_TYPE_LABEL)), None)
        if it is None:
            return "InstanceTypeNotFound"
        reqs = from_labels(nc.labels)
        if nc.labels.get(CAPACITY_TYPE_LABEL) == CAPACITY_TYPE_RESERVED:
            reqs = from_labels({k: v for k, v in nc.labels.items() if k != CAPACITY_TYPE_LABEL})
            reqs.add(new_requirement(CAPACITY_TYPE_LABEL, IN, (CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_ON_DEMAND)))
        if not compatible_offerings(it.offerings, reqs, catalog.well_known_labels):
            return "InstanceTypeNotFound"
    return ""


def claim_view(nc: NodeClaim, drifted: str = "", now: float = 0.0) -> ClaimView:
    """``drifted``: the drift reason found at ``now`` ("" for none): a drift the input already
    records keeps its time, a new one starts now."""
    initialized = None
    if nc.initialized:
        initialized = nc.initialized_time if nc.initialized_time is not None else 0.0
    return ClaimView(
        name=nc.name, labels=nc.labels, annotations=nc.annotations,
        created=nc.creation_time if nc.creation_time is not None else 0.0,
        initialized=initialized, last_pod_event=nc.last_pod_event_time,
        expire_after=None if nc.expire_after is None else float(nc.expire_after),
        drifted=None if not drifted else (nc.drifted_time or 0.0) if nc.drifted else now,
        drift_reason=drifted, deleting=nc.deletion_time is not None,
        termination_grace_period=None if nc.termination_grace_period is None else float(nc.termination_grace_period))


def claim_for_node(node: Node) -> NodeClaim:
    """The NodeClaim beside a Karpenter node the input gives without one: launched, registered and
    initialized when the node was created (the epoch when the node gives no creationTimestamp), as
    the oracle makes it."""
    created = node.creation_time if node.creation_time is not None else 0.0
    return NodeClaim(name=node.name, node_pool=node.labels.get(NODE_POOL_LABEL, ""), labels=node.labels,
                     node_name=node.name, provider_id=node.provider_id, capacity=node.capacity,
                     allocatable=node.allocatable, launched=True, registered=True, initialized=True,
                     initialized_time=created, creation_time=created)


def with_state_labels(node: Node) -> Node:
    """A Karpenter node with karpenter.sh/registered and karpenter.sh/initialized set when absent."""
    if NODE_POOL_LABEL not in node.labels or all(k in node.labels for k in (REGISTERED_LABEL, INITIALIZED_LABEL)):
        return node
    labels = {**node.labels}
    labels.setdefault(REGISTERED_LABEL, "true")
    labels.setdefault(INITIALIZED_LABEL, "true")
    return dataclasses.replace(node, labels=labels)


def node_claims_by_node(cluster: KarpenterCluster) -> dict[str, NodeClaim]:
    """The NodeClaim of each Karpenter node: the one of the same providerID, else the one whose
    status.nodeName is the node (state.Cluster's join, as the scheduler's), else one made for it."""
    by_node = {nc.node_name: nc for nc in cluster.node_claims if nc.node_name}
    by_provider = {nc.provider_id: nc for nc in cluster.node_claims if nc.provider_id}
    out = {}
    for n in cluster.nodes:
        if NODE_POOL_LABEL not in n.labels:
            continue
        found = by_provider.get(n.provider_id) if n.provider_id else None
        out[n.name] = found or by_node.get(n.name) or claim_for_node(n)
    return out


def state_nodes(cluster: KarpenterCluster, claims: Mapping[str, NodeClaim], now: float) -> list[StateNode]:
    """The state nodes in the input's node order, then the NodeClaims in flight; each NodeClaim's
    drift as the NodeClaim disruption controller finds it at ``now``."""
    pools = {p.name: p for p in cluster.node_pools}

    def view(nc: NodeClaim) -> ClaimView:
        pool = pools.get(nc.labels.get(NODE_POOL_LABEL, ""))
        if pool is None or nc.deletion_time is not None:
            return claim_view(nc, nc.drift_reason if nc.drifted else "", now)
        return claim_view(nc, drift_reason(pool, nc, cluster.catalog, now), now)

    pods: dict[str, list[Pod]] = {}
    for p in cluster.bound_pods:
        pods.setdefault(p.node_name, []).append(p)
    out = []
    for n in cluster.nodes:
        nc = claims.get(n.name)
        out.append(StateNode(n.name, n, view(nc) if nc is not None else None, tuple(pods.get(n.name, ()))))
    backing = {nc.name for nc in claims.values()}
    for nc in cluster.node_claims:
        # a NodeClaim without a Node is in Karpenter's state once launched (status.providerID set)
        if nc.name not in backing and nc.provider_id:
            out.append(StateNode(nc.name, None, view(nc)))
    return out


# ------------------------------------------------------------------------------ the simulated NodeClaim

class KarpenterClaim:
    """A NodeClaim of the scheduling simulation as consolidation narrows it (types.ClaimOptions):
    its instance-type options and requirements change in place, as upstream's do."""

    def __init__(self, claim: NewNodeClaim, catalog: Catalog) -> None:
        self.claim = claim
        self.types: list[InstanceType] = list(claim.instance_types)
        self.reqs: Requirements = from_spec(claim.requirements)
        self.well_known = catalog.well_known_labels

    @property
    def node_pool(self) -> str:
        return self.claim.node_pool

    @property
    def pods(self) -> tuple[str, ...]:
        return tuple(p.key for p in self.claim.pods)

    def instance_type_names(self) -> list[str]:
        return [it.name for it in self.types]

    def allows_capacity_type(self, capacity_type: str) -> bool:
        return self.reqs.get(CAPACITY_TYPE_LABEL).has(capacity_type)

    def order_by_price(self) -> None:
        price = {id(it): cheapest_launch_price(it, self.reqs, self.well_known) for it in self.types}
        sort_slice(self.types, lambda a, b: price[id(a)] < price[id(b)])

    def require_capacity_type(self, capacity_type: str) -> None:
        self.reqs.add(new_requirement(CAPACITY_TYPE_LABEL, IN, (capacity_type,)))

    def keep_compatible(self) -> None:
        self.types = [it for it in self.types if has_compatible_offering(it, self.reqs, self.well_known)]

    def worst_launch_price(self, it: InstanceType) -> float:
        """Offerings.Launchable().WorstLaunchPrice(reqs): the dearest compatible offering of the first
        capacity type of reserved, spot, on-demand that has one; MaxFloat64 when none does."""
        offers = [o for o in compatible_offerings(it.offerings, self.reqs, self.well_known) if launchable(o)]
        for ct in (CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT, CAPACITY_TYPE_ON_DEMAND):
            mine = [o.price for o in offers if o.capacity_type == ct]
            if mine:
                return max(mine)
        return MAX_FLOAT64

    def remove_by_price(self, max_price: float) -> str | None:
        self.types = [it for it in self.types if self.worst_launch_price(it) < max_price]
        _, unmet = self.satisfies_min_values()
        if unmet:
            return f"minValues requirement is not met for label(s) (label(s)=[{' '.join(sorted(unmet))}])"
        return None

    def satisfies_min_values(self) -> tuple[int, list[str]]:
        """InstanceTypes.SatisfiesMinValues: how many of the options (in order) meet every minValues,
        and the keys left unmet when all of them do not."""
        wanted = [r for r in self.reqs.values() if r.min_values is not None]
        if not wanted:
            return 0, []
        seen: dict[str, set[str]] = {r.key: set() for r in wanted}
        unmet: list[str] = []
        for i, it in enumerate(self.types):
            own = instance_type_requirements(it)
            for r in wanted:
                seen[r.key].update(v for v in own.get(r.key).values if r.has(v))
            unmet = [r.key for r in wanted if len(seen[r.key]) < (r.min_values or 0)]
            if not unmet:
                return i + 1, []
        return len(self.types), unmet if self.types else [r.key for r in wanted]

    def has_min_values(self) -> bool:
        return self.reqs.has_min_values()

    def min_instance_types(self) -> int:
        return self.satisfies_min_values()[0]

    def truncate(self, n: int) -> None:
        del self.types[n:]

    def launch_price(self) -> float | None:
        if not self.types:
            return None
        offers = [o.price for o in compatible_offerings(self.types[0].offerings, self.reqs, self.well_known)
                  if launchable(o)]
        return min(offers) if offers else None

    def capacity_types(self) -> tuple[str, ...]:
        return tuple(ct for ct in CAPACITY_TYPE_PREFERENCE if self.allows_capacity_type(ct))

    def narrowed(self) -> NewNodeClaim:
        """The NodeClaim as consolidation left it: the options kept, the requirements added."""
        return dataclasses.replace(self.claim, instance_types=tuple(self.types), requirements=self.reqs.spec())


# ------------------------------------------------------------------------------ launching a replacement

def launch_replacement(r: Replacement, name: str, now: float, catalog: Catalog,
                       pools: Mapping[str, NodePool]) -> tuple[StateNode, LaunchedNode, NodeClaim]:
    """The node a replacement becomes (the provisioner's launch of the narrowed NodeClaim), ready and
    initialized now, with its NodeClaim."""
    assert isinstance(r.claim, KarpenterClaim)
    got = launch(r.claim.narrowed(), catalog, name)
    if got is None:
        raise RuntimeError(f"consolidation chose a replacement for NodePool {r.node_pool} that no offering can "
                           "launch")  # the price filter keeps only types with a launchable offering
    node = dataclasses.replace(got.node, ready="True",
                               labels={**got.node.labels, REGISTERED_LABEL: "true", INITIALIZED_LABEL: "true"})
    pool = pools.get(r.node_pool)
    nc = NodeClaim(name=name, node_pool=r.node_pool, labels=node.labels, node_name=name,
                   capacity=node.capacity, allocatable=node.allocatable, launched=True, registered=True,
                   initialized=True, initialized_time=now, creation_time=now, last_pod_event_time=now,
                   expire_after=pool.expire_after if pool is not None else None,
                   termination_grace_period=pool.termination_grace_period if pool is not None else None)
    state = StateNode(name, node, claim_view(nc))
    info = LaunchedNode(name=name, node_pool=r.node_pool, instance_type=got.instance_type.name,
                        capacity_type=got.capacity_type, zone=got.zone, price=got.price,
                        instance_type_options=r.instance_types, pods=r.pods, round=0, node=node)
    return state, info, nc
