"""NodePorts (plugins/nodeports/node_ports.go, v1.34.1).

PreFilter: Skip for pods without host ports. Filter: a wanted (hostIP, protocol, hostPort)
conflicts with one in use on the node (reference 3.5) → Unschedulable.
"""

from __future__ import annotations

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import ASSIGNED_POD_DELETE, NODE_ADD, ClusterEvent
from kplan.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
)
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id, skip
from kplan.model.objects import HostPort, Pod
from kplan.plugins.helper import PluginBase

NAME = "NodePorts"
REASON = "node(s) didn't have free ports for the requested pod ports"
_REASON_ID = reason_id(REASON)


def ports_conflict(wanted: tuple[HostPort, ...], used: tuple[HostPort, ...]) -> bool:
    for w in wanted:
        for u in used:
            if w.protocol != u.protocol or w.port != u.port:
                continue
            if w.ip == "0.0.0.0" or u.ip == "0.0.0.0" or w.ip == u.ip:
                return True
    return False


class NodePorts(PluginBase, PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.HOST_PORTS, signers.host_ports(pod)),)

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        if not pod.host_ports:
            return None, skip(NAME)
        return None, OK

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        # only the nodes where some pod uses one of the pod's (protocol, port) pairs can conflict
        conflicting = set()
        for p in pod.host_ports:
            for r in table.port_rows.get((p.protocol, p.port), ()):
                used = table.ports[r]
                if used is not None and used.conflicts(p):
                    conflicting.add(r)
        if not conflicting:
            return Verdicts.passing(len(rows))
        failed = np.isin(rows, np.fromiter(conflicting, dtype=np.int64, count=len(conflicting)))
        return Verdicts.where(failed, Code.UNSCHEDULABLE, _REASON_ID)

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(ASSIGNED_POD_DELETE, _freed_port), (NODE_ADD, None)]


def _freed_port(pod: Pod, event: ClusterEvent) -> bool:
    other = event.pod
    if other is None or not (event.node_name or event.nominated_node):
        return False
    return ports_conflict(pod.host_ports, other.host_ports)
