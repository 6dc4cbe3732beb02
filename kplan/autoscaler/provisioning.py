"""The role a node autoscaler plays between two kube-scheduler passes (kplan.whatif.autoscale).

After kube-scheduler has left pods unschedulable, an autoscaler is shown the cluster as that pass
left it (every node with the pods bound to it) and the pods it may help, and answers with the
nodes it launches and, for each pod it cannot help, why, in its own words. Karpenter plays it
(kplan.autoscaler.karpenter); the cluster-autoscaler will play it the same way, so that both fill
the same ``launched[]`` of the documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kplan.model.objects import Node, Pod

#: AWS prices a month as 730 hours (365 days x 24 h / 12): the monthly figures kplan prints
HOURS_PER_MONTH = 730


@dataclass(frozen=True, slots=True)
class NewNode:
    """One node an autoscaler launches: the Node it will be once it joins, and what it costs."""

    node: Node
    #: what it was launched from: a Karpenter NodePool (a cluster-autoscaler node group later)
    group: str
    instance_type: str
    #: "on-demand", "spot" or "reserved", as Karpenter's karpenter.sh/capacity-type label says
    capacity_type: str
    zone: str
    price_per_hour: float
    #: the other instance types the launch could have chosen, in the autoscaler's order
    other_instance_types: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.node.name


@dataclass(frozen=True)
class Provisioning:
    """An autoscaler's answer for one pass: the nodes it launches, and why it helps no other pod."""

    launched: tuple[NewNode, ...] = ()
    #: namespace/name of each pod the autoscaler cannot help → its reason, in the autoscaler's words
    unhelped: Mapping[str, str] = field(default_factory=dict)
    #: what the autoscaler weighed, for the documents (the cluster-autoscaler's ScaleUp); None: nothing to show
    decision: object | None = None


class Autoscaler(Protocol):
    """A node autoscaler as the planner calls it."""

    #: the name the documents give it ("karpenter")
    name: str

    def provision(self, nodes: Sequence[Node], bound: Mapping[str, Sequence[Pod]],
                  pending: Sequence[Pod], round: int) -> Provisioning:
        """The nodes to launch for ``pending`` (pods kube-scheduler left unschedulable, in its queue's
        order) on a cluster of ``nodes`` with ``bound`` (node name → the pods on it, the nodes'
        DaemonSet pods included). ``round``: which time it is asked during this run (1 first: a new
        run, whose new nodes are named afresh, so that two runs of one cluster name them alike). The
        new nodes' names are not among ``nodes``'."""
        ...
