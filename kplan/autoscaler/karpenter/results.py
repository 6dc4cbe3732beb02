"""The engine API's values: what ``solve`` reads (KarpenterCluster) and returns
(ProvisioningResult), mirroring sigs.k8s.io/karpenter v1.15.0
pkg/controllers/provisioning/scheduling/scheduler.go ``Results`` (NewNodeClaims, ExistingNodes,
PodErrors) and the NodeClaims provisioner.go creates from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kplan.model.karpenter import Catalog, InstanceType, NodeClaim, NodePool, Requirement
from kplan.model.objects import Node, Pod, Taint


def _empty_amounts() -> Mapping[str, int]:
    return MappingProxyType({})


def _empty_labels() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True)
class KarpenterCluster:
    """The cluster as Karpenter's state sees it."""

    #: every node of the cluster (Karpenter-managed ones carry karpenter.sh/nodepool)
    nodes: tuple[Node, ...]
    #: the pods bound to those nodes (spec.nodeName set)
    bound_pods: tuple[Pod, ...]
    node_pools: tuple[NodePool, ...]
    #: NodeClaims: those backing nodes (status.nodeName) and those in flight (not registered yet)
    node_claims: tuple[NodeClaim, ...]
    #: one pod per DaemonSet, as its controller would create it (no node yet): Karpenter adds the
    #: compatible ones to each new node's requests
    daemonset_pods: tuple[Pod, ...]
    catalog: Catalog
    #: names of nodes (or NodeClaims) being deleted: not places for pods (consolidation passes its
    #: candidates here and their pods as pending)
    deleting: frozenset[str] = frozenset()
    #: namespace name → labels, for pod-affinity terms with a namespaceSelector
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, eq=False)
class NewNodeClaim:
    """A NodeClaim Karpenter would create (scheduling.NodeClaim after Solve, truncated as
    ToNodeClaim does to the 600 cheapest instance types, MaxInstanceTypes)."""

    node_pool: str
    #: the instance-type options in Karpenter's order (cheapest compatible offering first)
    instance_types: tuple[InstanceType, ...]
    #: the pending pods Karpenter packed into it, in the order it packed them
    pods: tuple[Pod, ...]
    #: spec.requirements: the NodePool's, the pods', and the instance-type names, sorted by key
    requirements: tuple[Requirement, ...]
    #: metadata.labels: the template's, karpenter.sh/nodepool, and single-valued requirements
    labels: Mapping[str, str] = field(default_factory=_empty_labels)
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()
    #: spec.resources.requests: the pods' requests plus the compatible daemons' (pods counted)
    requests: Mapping[str, int] = field(default_factory=_empty_amounts)
    #: the karpenter.sh/nodeclaim-min-values-relaxed annotation
    min_values_relaxed: bool = False


@dataclass(frozen=True, eq=False)
class ExistingNodePods:
    """An existing node or in-flight NodeClaim that Karpenter expects pending pods to land on."""

    #: the node's name, or for a NodeClaim not registered yet its claim's name
    name: str
    #: the NodeClaim behind it ("" for a node Karpenter does not manage)
    node_claim: str
    pods: tuple[Pod, ...]
    #: the node is initialized (Karpenter tries initialized nodes first)
    initialized: bool = True


@dataclass(frozen=True)
class ProvisioningResult:
    new_node_claims: tuple[NewNodeClaim, ...]
    #: only the nodes that received pods, in Karpenter's order of existing nodes
    existing_nodes: tuple[ExistingNodePods, ...]
    #: pod key (namespace/name) → Karpenter's reason, in the order the pods were given
    pod_errors: Mapping[str, str]
    #: pending pods Karpenter does not consider (GetPendingPods): pod key → why
    ignored: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
