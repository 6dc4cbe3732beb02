"""What disruption reads of the cluster: Karpenter's state nodes, NodePools and prices.

Mirrors the parts of pkg/controllers/state/statenode.go (StateNode: a Node and the NodeClaim
behind it), pkg/apis/v1 (NodePool's disruption block, NodeClaim conditions) and
pkg/cloudprovider (an instance type's offerings and their prices) that
pkg/controllers/disruption of sigs.k8s.io/karpenter v1.15.0 reads. These are views built once
from the parsed inputs (kplan.model.karpenter) so that the disruption engine does not depend on
how they were read; times are seconds since the epoch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kplan.autoscaler.karpenter.disruption.nodepool import (
    DEFAULT_BUDGETS,
    WHEN_EMPTY_OR_UNDERUTILIZED,
    Budget,
)
from kplan.model.objects import Node, Pod

NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
INITIALIZED_LABEL = "karpenter.sh/initialized"
REGISTERED_LABEL = "karpenter.sh/registered"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
NODEPOOL_HASH = "karpenter.sh/nodepool-hash"
NODEPOOL_HASH_VERSION = "karpenter.sh/nodepool-hash-version"
SPOT, ON_DEMAND, RESERVED = "spot", "on-demand", "reserved"


class OfferingLike(Protocol):
    """An offering of an instance type (cloudprovider.Offering): its zone, capacity type, price."""

    @property
    def zone(self) -> str: ...
    @property
    def capacity_type(self) -> str: ...
    @property
    def price(self) -> float: ...
    @property
    def available(self) -> bool: ...


class InstanceTypeLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def offerings(self) -> Sequence[OfferingLike]: ...


def offering_price(instance_type: InstanceTypeLike | None, labels: Mapping[str, str]) -> float:
    """disruptionutils.ResolveOfferingPrice: the price of the first offering of the node's zone and
    capacity type (InstanceType.OfferingPrice, available or not); 0 when there is none."""
    if instance_type is None:
        return 0.0
    zone, capacity_type = labels.get(ZONE_LABEL, ""), labels.get(CAPACITY_TYPE_LABEL, "")
    for o in instance_type.offerings:
        if o.zone == zone and o.capacity_type == capacity_type:
            return 0.0 if o.price != o.price else float(o.price)
    return 0.0


@dataclass(frozen=True)
class NodePoolView:
    """A NodePool as disruption reads it."""

    name: str
    #: spec.disruption.consolidateAfter in seconds; None for "Never"
    consolidate_after: float | None = 0.0
    consolidation_policy: str = WHEN_EMPTY_OR_UNDERUTILIZED
    budgets: tuple[Budget, ...] = DEFAULT_BUDGETS
    #: spec.replicas: set for a static NodePool (disruption leaves those to static drift)
    replicas: int | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)
    #: the instance types this NodePool may launch, by name (cloudProvider.GetInstanceTypes)
    instance_types: Mapping[str, InstanceTypeLike] = field(default_factory=dict)

    @property
    def static(self) -> bool:
        return self.replicas is not None


@dataclass(frozen=True)
class ClaimView:
    """A NodeClaim as disruption reads it."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    created: float = 0.0
    #: lastTransitionTime of the Initialized condition when it is True; None: not initialized
    initialized: float | None = 0.0
    #: status.lastPodEventTime; None when unset (zero)
    last_pod_event: float | None = None
    #: spec.expireAfter in seconds; None for "Never"
    expire_after: float | None = None
    #: lastTransitionTime of a Drifted=True condition; None when not drifted
    drifted: float | None = None
    #: the Drifted condition's reason when drifted (NodePoolDrifted, RequirementsDrifted, ...)
    drift_reason: str = ""
    #: metadata.deletionTimestamp is set
    deleting: bool = False
    #: the InstanceTerminating condition is True
    instance_terminating: bool = False
    #: spec.terminationGracePeriod in seconds; None when unset
    termination_grace_period: float | None = None


@dataclass(frozen=True)
class StateNode:
    """state.StateNode: a Node, its NodeClaim (None for a node Karpenter does not manage) and the
    pods bound to it."""

    name: str
    node: Node | None
    claim: ClaimView | None
    pods: tuple[Pod, ...] = ()

    @property
    def labels(self) -> Mapping[str, str]:
        """StateNode.Labels: the NodeClaim's until the node has registered, then the Node's."""
        if self.node is None:
            return self.claim.labels if self.claim is not None else {}
        if self.claim is None or self.registered:
            return self.node.labels
        return self.claim.labels

    @property
    def annotations(self) -> Mapping[str, str]:
        if self.node is None:
            return self.claim.annotations if self.claim is not None else {}
        if self.claim is None or self.registered:
            return self.node.annotations
        return self.claim.annotations

    @property
    def managed(self) -> bool:
        return self.claim is not None

    @property
    def initialized(self) -> bool:
        """StateNode.Initialized: a managed node once its Node carries karpenter.sh/initialized=true;
        an unmanaged node always."""
        if self.claim is None:
            return True
        return self.node is not None and self.node.labels.get(INITIALIZED_LABEL) == "true"

    @property
    def registered(self) -> bool:
        """StateNode.Registered: a managed node once its Node carries karpenter.sh/registered=true."""
        if self.claim is None:
            return True
        return self.node is not None and self.node.labels.get(REGISTERED_LABEL) == "true"

    @property
    def marked_for_deletion(self) -> bool:
        return self.claim is not None and self.claim.deleting

    @property
    def ready(self) -> bool:
        return self.node is not None and self.node.ready == "True"

    @property
    def node_pool(self) -> str:
        return self.labels.get(NODEPOOL_LABEL, "")
