"""The cluster-autoscaler in the autoscaler's role (kplan.autoscaler.provisioning): one scale-up
(orchestrator.scale_up) on the cluster kube-scheduler's pass left, its nodes launched.

The chosen group's new nodes (and those that bring groups to their minimum size) are its template
node under a name of ``<group>-`` and five characters drawn from the run's seed (cloud providers
name instances their own way; the name only has to be new). Each group's size counts the nodes
launched in the earlier rounds of the run. Each scale-up is kept in ``decisions`` for the document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kplan.autoscaler.clusterautoscaler.expander import Chain
from kplan.autoscaler.clusterautoscaler.orchestrator import ScaleUp, Template, fresh_node, scale_up
from kplan.autoscaler.provisioning import NewNode, Provisioning
from kplan.model.objects import Node, Pod
from kplan.scheduler.setup import SchedulerSetup
from kplan.workloads.names import NameGenerator

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"


@dataclass
class ClusterAutoscaler:
    setup: SchedulerSetup
    templates: tuple[Template, ...]
    #: node group → its size before the run
    sizes: Mapping[str, int]
    chain: Chain
    #: node group → dollars per hour of one node (absent: unknown, 0)
    prices: Mapping[str, float] = field(default_factory=dict)
    max_nodes_total: int = 0
    priorities: Mapping[int, Sequence[str]] = field(default_factory=dict)
    seed: int = 0
    #: --balance-similar-node-groups
    balance: bool = False
    name: str = "cluster-autoscaler"
    #: each scale-up of the current run, in order (round 1 starts afresh)
    decisions: list[ScaleUp] = field(default_factory=list)
    _launched: dict[str, int] = field(default_factory=dict, repr=False)
    _names: NameGenerator | None = field(default=None, repr=False)

    def provision(self, nodes: Sequence[Node], bound: Mapping[str, Sequence[Pod]],
                  pending: Sequence[Pod], round: int) -> Provisioning:
        if self._names is None or round == 1:  # each run names its nodes from the seed alone
            self._names = NameGenerator(self.seed, "Node/cluster-autoscaler")
            self._launched = {}
            self.decisions = []
        self._names.reserve(n.name for n in nodes)
        sizes = {g: n + self._launched.get(g, 0) for g, n in self.sizes.items()}
        decision = scale_up(self.setup, nodes, bound, pending, self.templates, sizes, self.chain,
                            max_nodes_total=self.max_nodes_total, priorities=self.priorities,
                            balance=self.balance)
        self.decisions.append(decision)
        by_name = {t.group.name: t for t in self.templates}
        grow = dict(decision.min_size_fill)
        if decision.balanced:
            for g, n in decision.balanced.items():
                grow[g] = grow.get(g, 0) + n
        elif decision.chosen is not None and decision.node_count > 0:
            grow[decision.chosen] = grow.get(decision.chosen, 0) + decision.node_count
        launched: list[NewNode] = []
        for group, count in grow.items():
            t = by_name[group]
            for _ in range(count):
                node = fresh_node(t.node, self._names.generate(f"{group}-"))
                labels = node.labels
                launched.append(NewNode(node, group, labels.get(INSTANCE_TYPE_LABEL, ""),
                                        labels.get(CAPACITY_TYPE_LABEL, "on-demand"), labels.get(ZONE_LABEL, ""),
                                        self.prices.get(group, 0.0)))
            self._launched[group] = self._launched.get(group, 0) + count
        return Provisioning(tuple(launched), decision.unhelped, decision)
