"""VolumeRestrictions (plugins/volumerestrictions/volume_restrictions.go, v1.34.1).

PreFilter: looks up (through the lister) every ``persistentVolumeClaim`` volume's claim: a
missing one → U&U with the lister's text (``persistentvolumeclaim "x" not found``). It keeps the
pod's claims with the ReadWriteOncePod access mode and counts those already used by a pod on a
node (the snapshot's PVC reference counts). Skip when the pod has no in-tree disk to check and
no such conflict.

Filter: ``node(s) had no available disk`` (Unschedulable) when a GCE PD (same pdName, unless
both read-only), AWS EBS (same volumeID), iSCSI (same IQN, unless both read-only) or Ceph RBD
volume (an overlapping monitor, same pool and image, unless both read-only) of the pod is used
by a pod on the node; then ``node(s) unavailable due to PersistentVolumeClaim with
ReadWriteOncePod access mode already in-use by another pod`` (Unschedulable) on every node when
the count is positive. AddPod/RemovePod keep the count right for preemption and nominated pods.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kplan.cluster.node_table import NodeTable, PodTally
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState, StateData
from kplan.framework.events import ASSIGNED_POD_DELETE, NODE_ADD, PVC_ADD, ClusterEvent
from kplan.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
)
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id, skip
from kplan.model.objects import Pod, Volume
from kplan.model.storage import READ_WRITE_ONCE_POD, PersistentVolumeClaim
from kplan.plugins.helper import PluginBase
from kplan.plugins.volumebinding import not_found, storage_of

NAME = "VolumeRestrictions"
_STATE = "PreFilterVolumeRestrictions"
ERR_DISK_CONFLICT = "node(s) had no available disk"
ERR_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
                     "in-use by another pod")
_DISK_ID = reason_id(ERR_DISK_CONFLICT)
_RWOP_ID = reason_id(ERR_RWOP_CONFLICT)
_CHECKED_DISKS = ("gce", "aws", "rbd", "iscsi")


@dataclass
class _State(StateData):
    rwop_claims: frozenset[str]
    conflicts: int

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicts)

    def refs(self, pod: Pod) -> int:
        return sum(1 for v in pod.volumes if v.claim_name and not v.ephemeral and v.claim_name in self.rwop_claims)


def needs_check(v: Volume) -> bool:
    return v.disk is not None and v.disk[0] in _CHECKED_DISKS


def volumes_conflict(v: Volume, e: Volume) -> bool:
    """isVolumeConflict for one pair of volumes."""
    if v.disk is None or e.disk is None or v.disk[0] != e.disk[0]:
        return False
    kind, ident, ro = v.disk
    _, eident, ero = e.disk
    if ident != eident:
        return False
    if kind == "aws":
        return True
    if kind == "rbd":
        return bool(set(v.monitors) & set(e.monitors)) and not (ro and ero)
    return not (ro and ero)  # gce, iscsi


def pod_conflicts(pod: Pod, other: Pod) -> bool:
    return any(volumes_conflict(v, e) for v in pod.volumes if needs_check(v) for e in other.volumes)


def _has_checked_disk(pod: Pod) -> int:
    """1 if a volume of the pod is a disk the conflict check reads (a PodTally weight), else 0."""
    return int(any(needs_check(v) for v in pod.volumes))


class VolumeRestrictions(PluginBase, PreFilterPlugin, PreFilterExtensions, FilterPlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.VOLUMES, signers.volumes(pod)),)

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        st = storage_of(self.handle)
        check = bool(_has_checked_disk(pod))
        rwop = set()
        for v in pod.volumes:
            if not v.claim_name or v.ephemeral:
                continue
            claim: PersistentVolumeClaim | None = st.pvc(pod.namespace, v.claim_name)
            if claim is None:
                return None, Status(Code.UNRESOLVABLE, (not_found("persistentvolumeclaim", v.claim_name),))
            if READ_WRITE_ONCE_POD in claim.access_modes:
                rwop.add(claim.name)
        conflicts = sum(1 for name in rwop if st.is_pvc_used_by_pods(f"{pod.namespace}/{name}"))
        if not check and conflicts == 0:
            return None, skip(NAME)
        state.write(_STATE, _State(frozenset(rwop), conflicts))
        return None, OK

    def add_pod(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None:
        s: _State | None = state.read(_STATE)
        if s is not None:
            # updateWithPod matches claim names only, whatever the other pod's namespace
            s.conflicts += s.refs(other)

    def remove_pod(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None:
        s: _State | None = state.read(_STATE)
        if s is not None:
            s.conflicts -= s.refs(other)

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        codes = np.zeros(len(rows), dtype=np.int8)
        reasons = np.zeros(len(rows), dtype=np.int32)
        if _has_checked_disk(pod):
            # only a node running a pod with a checked disk can hold a conflicting one
            for k in np.flatnonzero(PodTally.of(table, _has_checked_disk).per_row.take(rows)).tolist():
                if any(pod_conflicts(pod, other) for other in table.pods[int(rows[k])]):
                    codes[k], reasons[k] = Code.UNSCHEDULABLE, _DISK_ID
        s: _State | None = state.read(_STATE)
        if s is not None and s.conflicts > 0:
            rest = codes == 0
            codes[rest], reasons[rest] = Code.UNSCHEDULABLE, _RWOP_ID
        return Verdicts(codes, reasons)

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(ASSIGNED_POD_DELETE, _deleted_pod_frees), (NODE_ADD, None), (PVC_ADD, _claim_of_pod)]


def _deleted_pod_frees(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterPodDeleted: a deleted pod of the namespace with a conflicting disk or a
    claim of this pod."""
    deleted = event.pod
    if deleted is None or deleted.namespace != pod.namespace:
        return False
    if pod_conflicts(pod, deleted):
        return True
    claims = {v.claim_name for v in pod.volumes if v.claim_name and not v.ephemeral}
    return any(v.claim_name in claims for v in deleted.volumes if v.claim_name and not v.ephemeral)


def _claim_of_pod(pod: Pod, event: ClusterEvent) -> bool:
    claim = event.obj
    if not isinstance(claim, PersistentVolumeClaim) or claim.namespace != pod.namespace:
        return False
    return any(v.claim_name == claim.name and not v.ephemeral for v in pod.volumes)
