"""A NodePool as the scheduler's template for new NodeClaims: sigs.k8s.io/karpenter v1.15.0
pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go (NewNodeClaimTemplate, ToNodeClaim)
and pkg/utils/nodepool (OrderByWeight)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kplan.autoscaler.karpenter.catalogindex import CatalogIndex
from kplan.autoscaler.karpenter.instancetypes import (
    compatible_offerings,
    launchable,
    order_by_price,
)
from kplan.autoscaler.karpenter.requirements import Req, Requirements, from_labels, from_spec
from kplan.model.karpenter import (
    CAPACITY_TYPE_LABEL,
    HOSTNAME_LABEL,
    INSTANCE_TYPE_LABEL,
    NODE_INITIALIZED_LABEL,
    NODE_POOL_LABEL,
    NODE_REGISTERED_LABEL,
    RESTRICTED_LABELS,
    InstanceType,
    NodePool,
)
from kplan.model.objects import Taint

#: MaxInstanceTypes: the most instance types a NodeClaim lists
MAX_INSTANCE_TYPES = 600
#: schedulingSimulationKeys: requirements that only exist while simulating
SIMULATION_KEYS = frozenset({NODE_REGISTERED_LABEL, NODE_INITIALIZED_LABEL})


def order_by_weight(pools: Sequence[NodePool]) -> list[NodePool]:
    """OrderByWeight: heavier first (unset = 0); equal weights by name, descending."""
    return sorted(sorted(pools, key=lambda p: p.name, reverse=True), key=lambda p: -(p.weight or 0))


def node_class_label(pool: NodePool) -> tuple[str, str] | None:
    """NodeClassLabelKey: ``<group>/<kind, lower case>`` = the class's name."""
    ref = pool.node_class_ref
    if ref is None:
        return None
    return f"{ref.group}/{ref.kind.lower()}", ref.name


@dataclass
class NodeClaimTemplate:
    node_pool: NodePool
    labels: dict[str, str]
    requirements: Requirements
    taints: tuple[Taint, ...]
    startup_taints: tuple[Taint, ...]
    instance_type_options: list[InstanceType] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.node_pool.name


def new_node_claim_template(pool: NodePool) -> NodeClaimTemplate:
    """NewNodeClaimTemplate: the template's labels plus the NodePool and node-class labels; its
    requirements are the NodePool's, the labels', and registered/initialized = true."""
    labels = dict(pool.labels)
    labels[NODE_POOL_LABEL] = pool.name
    ncl = node_class_label(pool)
    if ncl is not None:
        labels[ncl[0]] = ncl[1]
    reqs = from_spec(pool.requirements)
    reqs.add(*from_labels(labels).values())
    reqs.add(Req(NODE_REGISTERED_LABEL, False, frozenset({"true"})), Req(NODE_INITIALIZED_LABEL, False,
                                                                        frozenset({"true"})))
    return NodeClaimTemplate(pool, labels, reqs, pool.taints, pool.startup_taints)


def custom_labels(reqs: Requirements, well_known: frozenset[str]) -> dict[str, str]:
    """resolveCustomLabelsFromRequirements: a value for every requirement on a label that is not
    well known, restricted or a simulation key. Deviation: upstream picks a random allowed value;
    kplan the smallest listed one (or the smallest allowed integer for NotIn/Exists)."""
    out: dict[str, str] = {}
    for key in sorted(reqs.keys()):
        if key in well_known or key in RESTRICTED_LABELS or key in SIMULATION_KEYS:
            continue
        value = reqs.get(key).any_value()
        if value:
            out[key] = value
    return out


def to_node_claim(requirements: Requirements, instance_types: Sequence[InstanceType], labels: dict[str, str],
                  well_known: frozenset[str], index: CatalogIndex | None = None,
                  ) -> tuple[list[InstanceType], Requirements, dict[str, str]]:
    """ToNodeClaim: the types ordered by price and cut to MaxInstanceTypes, named in an
    instance-type requirement; the capacity types their launchable offerings allow; the labels
    with the custom ones; the requirements without the simulation keys and the hostname."""
    reqs = requirements.copy()
    types = order_by_price(instance_types, reqs, well_known, index)[:MAX_INSTANCE_TYPES]
    mv = reqs.get(INSTANCE_TYPE_LABEL).min_values
    reqs.add(Req(INSTANCE_TYPE_LABEL, False, frozenset(t.name for t in types), None, None, mv))
    capacity_types: list[str] = []
    for it in types:
        for o in compatible_offerings([o for o in it.offerings if launchable(o)], reqs, well_known):
            if o.capacity_type and o.capacity_type not in capacity_types:
                capacity_types.append(o.capacity_type)
    if capacity_types:
        reqs.add(Req(CAPACITY_TYPE_LABEL, False, frozenset(capacity_types)))
    out_labels = dict(labels)
    out_labels.update(custom_labels(reqs, well_known))
    final = Requirements(r for r in reqs.values() if r.key not in SIMULATION_KEYS and r.key != HOSTNAME_LABEL)
    return types, final, out_labels
