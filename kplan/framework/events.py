"""Cluster events and queueing hints (pkg/scheduler/framework/events.go, types.go).

A plugin registers the events that may make a pod it rejected schedulable, each with a hint
function answering Queue (True) or Skip (False); a registration without a function always
answers Queue. The queue offers every event to the rejecting plugins of each waiting pod.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kplan.model.objects import Node, Pod

ASSIGNED_POD_ADD = "AssignedPodAdd"
ASSIGNED_POD_DELETE = "AssignedPodDelete"
ASSIGNED_POD_UPDATE_LABEL = "AssignedPodUpdateLabel"
ASSIGNED_POD_SCALE_DOWN = "AssignedPodUpdateScaleDown"
UPDATE_POD_TOLERATION = "UnscheduledPodUpdateToleration"
UPDATE_POD_SCHEDULING_GATES_ELIMINATED = "UpdatePodSchedulingGatesEliminated"
NODE_ADD = "NodeAdd"
NODE_DELETE = "NodeDelete"
NODE_UPDATE_LABEL = "NodeUpdateLabel"
NODE_UPDATE_TAINT = "NodeUpdateTaint"
NODE_UPDATE_ALLOCATABLE = "NodeUpdateAllocatable"
PVC_ADD = "PersistentVolumeClaimAdd"
PVC_UPDATE = "PersistentVolumeClaimUpdate"
PV_ADD = "PersistentVolumeAdd"
PV_UPDATE = "PersistentVolumeUpdate"
STORAGE_CLASS_ADD = "StorageClassAdd"
CSI_NODE_ADD = "CSINodeAdd"
CSI_NODE_UPDATE = "CSINodeUpdate"
WILDCARD = "WildCard"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """One event. For pod events ``node_name``/``nominated_node`` describe the pod as the event saw it
    (a deleted pod that only held a nomination has ``node_name == ""``); update events carry the
    object before the change in ``old_pod`` / ``old_node``."""

    kind: str
    pod: Pod | None = None
    node_name: str = ""
    nominated_node: str = ""
    node: Node | None = None
    old_node: Node | None = None
    #: the storage object of a PersistentVolume(Claim)/StorageClass/CSINode event; for a
    #: PersistentVolume update the pair (before, after)
    obj: Any = None
    #: the pod before a label update
    old_pod: Pod | None = None
