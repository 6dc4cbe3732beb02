"""NodeUnschedulable (plugins/nodeunschedulable/node_unschedulable.go, v1.34.1).

Filter: a node with ``spec.unschedulable`` rejects pods that do not tolerate the taint
``node.kubernetes.io/unschedulable:NoSchedule``. UnschedulableAndUnresolvable.
"""

from __future__ import annotations

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import NODE_ADD, NODE_UPDATE_TAINT, UPDATE_POD_TOLERATION, ClusterEvent
from kplan.framework.interfaces import EnqueueExtensions, FixedInputFilter, QueueingHint
from kplan.framework.status import Code, Verdicts, reason_id
from kplan.model.objects import UNSCHEDULABLE_TAINT, Pod, tolerates
from kplan.plugins.helper import PluginBase

NAME = "NodeUnschedulable"
REASON = "node(s) were unschedulable"
_TAINT = UNSCHEDULABLE_TAINT
_REASON_ID = reason_id(REASON)


class NodeUnschedulable(PluginBase, FixedInputFilter, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.TOLERATIONS, signers.tolerations(pod)),)

    def filter_signature(self, pod: Pod) -> bool:
        return tolerates(pod.tolerations, _TAINT)

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        if tolerates(pod.tolerations, _TAINT):
            return Verdicts.passing(len(rows))
        return Verdicts.where(table.unschedulable[rows], Code.UNRESOLVABLE, _REASON_ID)

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(NODE_ADD, _node_schedulable), (NODE_UPDATE_TAINT, _node_schedulable),
                (UPDATE_POD_TOLERATION, _pod_tolerates)]


def _node_schedulable(pod: Pod, event: ClusterEvent) -> bool:
    return event.node is not None and not event.node.unschedulable


def _pod_tolerates(pod: Pod, event: ClusterEvent) -> bool:
    return event.pod is pod and tolerates(pod.tolerations, _TAINT)

