"""NodeName (plugins/nodename/node_name.go, v1.34.1 and v1.37.2).

Filter: a pod that names a node in ``spec.nodeName`` fits only that node. Pods created with a
nodeName never reach the queue, so this only matters for pods the user forces into it.

From 1.37 (its release rule ``pre_filter``) PreFilter also restricts the cycle to the named node
(a PreFilterResult), so the other nodes are not filtered at all: they count as "didn't satisfy
plugin(s) [NodeName]" and are never preemption candidates. Before, the plugin has no PreFilter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import NODE_ADD
from kplan.framework.interfaces import EnqueueExtensions, FixedInputFilter, PreFilterResult, QueueingHint
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id
from kplan.model.objects import Pod
from kplan.plugins.helper import PluginBase

NAME = "NodeName"
REASON = "node(s) didn't match the requested node name"
_REASON_ID = reason_id(REASON)


class NodeName(PluginBase, FixedInputFilter, EnqueueExtensions):
    name = NAME
    #: PreFilter is a point of the plugin only where its release rule ``pre_filter`` is on (1.37)
    ruled_points: ClassVar[Mapping[str, str]] = {"preFilter": "pre_filter"}

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.NODE_NAME, pod.node_name),)

    def filter_signature(self, pod: Pod) -> str:
        return pod.node_name

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        if not pod.node_name:
            return Verdicts.passing(len(rows))
        wanted = table.row_of.get(pod.node_name, -1)  # no such node: every row fails
        failed = np.asarray(rows) != wanted
        return Verdicts.where(failed, Code.UNRESOLVABLE, _REASON_ID)

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        if pod.node_name:
            return PreFilterResult(frozenset({pod.node_name})), OK
        return None, OK

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(NODE_ADD, None)]
