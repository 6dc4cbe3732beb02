"""Karpenter in the autoscaler's role (kplan.autoscaler.provisioning): one provisioning loop of
its controller (sigs.k8s.io/karpenter v1.15.0 pkg/controllers/provisioning/provisioner.go:
Schedule, then Create for each new NodeClaim) on the cluster kube-scheduler's pass left.

``solve`` packs the pods into existing nodes and new NodeClaims; each new NodeClaim is launched
(``launch``: the cloud provider's instance-type, capacity-type and zone choice) as a node named as
Karpenter's NodeClaims are, ``<nodepool>-`` and five characters (metadata.generateName; the node
of a KWOK or most providers' NodeClaim takes its claim's name), drawn from the run's seed. A
claim no offering is left for is not launched; its pods get the provider's error. Pods Karpenter
expects on existing nodes get no new node and no reason: kube-scheduler's message stands.

The DaemonSet pods Karpenter counts on each new node are made from each DaemonSet's pod template,
as its provisioner lists them (getDaemonSetPods: the template's spec and metadata, no node).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kplan.autoscaler.karpenter.launch import launch
from kplan.autoscaler.karpenter.results import KarpenterCluster, ProvisioningResult
from kplan.autoscaler.provisioning import NewNode, Provisioning
from kplan.model.karpenter import Catalog, NodeClaim, NodePool
from kplan.model.objects import Node, Pod
from kplan.workloads.names import NameGenerator

#: ``solve(cluster, pending) -> ProvisioningResult`` (kplan.autoscaler.karpenter.scheduler)
Solve = Callable[[KarpenterCluster, Sequence[Pod]], ProvisioningResult]

#: the provider's error when no offering of a claim's instance types is left (cloudprovider's
#: InsufficientCapacityError, as the KWOK provider words it)
NO_OFFERING = "all requested instance types were unavailable during launch"


@dataclass
class KarpenterAutoscaler:
    node_pools: tuple[NodePool, ...]
    node_claims: tuple[NodeClaim, ...]
    daemonset_pods: tuple[Pod, ...]
    catalog: Catalog
    solve: Solve
    seed: int = 0
    name: str = "karpenter"
    _names: NameGenerator | None = field(default=None, repr=False)

    def provision(self, nodes: Sequence[Node], bound: Mapping[str, Sequence[Pod]],
                  pending: Sequence[Pod], round: int) -> Provisioning:
        cluster = KarpenterCluster(nodes=tuple(nodes), bound_pods=tuple(p for n in nodes for p in bound.get(n.name, ())),
                                   node_pools=self.node_pools, node_claims=self.node_claims,
                                   daemonset_pods=self.daemonset_pods, catalog=self.catalog)
        result = self.solve(cluster, pending)
        if self._names is None or round == 1:  # each run names its nodes from the seed alone
            self._names = NameGenerator(self.seed, "NodeClaim/karpenter")
        self._names.reserve(n.name for n in nodes)
        self._names.reserve(c.name for c in self.node_claims)
        launched: list[NewNode] = []
        unhelped = dict(result.pod_errors)
        for claim in result.new_node_claims:
            node = launch(claim, self.catalog, self._names.generate(f"{claim.node_pool}-"))
            if node is None:
                unhelped.update((p.key, NO_OFFERING) for p in claim.pods)
                continue
            launched.append(NewNode(node.node, node.node_pool, node.instance_type.name, node.capacity_type, node.zone,
                                    node.price, node.other_instance_types))
        return Provisioning(tuple(launched), unhelped)
