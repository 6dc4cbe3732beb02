"""VolumeZone (plugins/volumezone/volume_zone.go, v1.34.1).

PreFilter (``getPVbyPod``) reads, through the listers, the volume of every
``persistentVolumeClaim`` volume of the pod (generic ephemeral volumes are not looked at) and
keeps the zone/region labels of each bound volume (``failure-domain.beta.kubernetes.io/zone``,
``.../region``, ``topology.kubernetes.io/zone``, ``.../region``; a value is a ``__``-separated
set). An unbound claim of a WaitForFirstConsumer class is skipped. Skip when nothing is kept.
U&U at PreFilter: a missing claim, class or volume (the
lister's text), ``PersistentVolumeClaim had no pv name and storageClass name``,
``PersistentVolume had no name`` (an unbound claim that does not wait for its consumer).

Filter: a node without any of the four labels passes; otherwise every kept label must be on
the node (a beta key may be matched by its GA key) with a value in the volume's set, else
``node(s) had no available volume zone`` (U&U).

Queueing hints: a claim of the pod added or updated; a volume added, or updated with other zone
or region labels (a volume that only gets bound to some claim does not requeue the pod); a
StorageClass added with WaitForFirstConsumer; a node added or relabelled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import (
    NODE_ADD,
    NODE_UPDATE_LABEL,
    NODE_UPDATE_TAINT,
    PV_ADD,
    PV_UPDATE,
    PVC_ADD,
    PVC_UPDATE,
    STORAGE_CLASS_ADD,
    ClusterEvent,
)
from kplan.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
)
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id, skip
from kplan.model.objects import Pod
from kplan.model.storage import WAIT_FOR_FIRST_CONSUMER, PersistentVolume, PersistentVolumeClaim, StorageClass
from kplan.plugins.helper import PluginBase
from kplan.plugins.volumebinding import not_found, storage_of

NAME = "VolumeZone"
_STATE = "PreFilterVolumeZone"
REASON = "node(s) had no available volume zone"
_REASON_ID = reason_id(REASON)

BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA = {BETA_REGION: REGION, BETA_ZONE: ZONE}
MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """volumehelpers.LabelZonesToSet; None for a value with an empty element (the label is ignored)."""
    out = set()
    for z in value.split(MULTI_ZONE_DELIMITER):
        z = z.strip()
        if not z:
            return None
        out.add(z)
    return frozenset(out)


class VolumeZone(PluginBase, PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.VOLUMES, signers.volumes(pod)),)

    def _topologies(self, pod: Pod) -> tuple[list[PVTopology] | None, Status]:
        st = storage_of(self.handle)
        out: list[PVTopology] = []
        for v in pod.volumes:
            # persistentVolumeClaim volumes only; API validation already refuses an empty
            # claimName, upstream's "PersistentVolumeClaim had no name"
            if not v.claim_name or v.ephemeral:
                continue
            claim = st.pvc(pod.namespace, v.claim_name)
            if claim is None:
                return None, Status(Code.UNRESOLVABLE, (not_found("persistentvolumeclaim", v.claim_name),))
            if not claim.volume_name:
                status = self._unbound(claim)
                if status is None:
                    continue
                return None, status
            pv = st.pv(claim.volume_name)
            if pv is None:
                return None, Status(Code.UNRESOLVABLE, (not_found("persistentvolume", claim.volume_name),))
            out.extend(PVTopology(pv.name, key, values) for key, values in pv_topologies(pv))
        return out, OK

    def _unbound(self, claim: PersistentVolumeClaim) -> Status | None:
        st = storage_of(self.handle)
        name = claim.class_name
        if not name:
            return Status(Code.UNRESOLVABLE, ("PersistentVolumeClaim had no pv name and storageClass name",))
        sc = st.storage_class(name)
        if sc is None:
            return Status(Code.UNRESOLVABLE, (not_found("storageclass.storage.k8s.io", name),))
        if sc.binding_mode == WAIT_FOR_FIRST_CONSUMER:
            return None
        return Status(Code.UNRESOLVABLE, ("PersistentVolume had no name",))

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        topologies, status = self._topologies(pod)
        if topologies is None:
            return None, status
        if not topologies:
            return None, skip(NAME)
        state.write(_STATE, topologies)
        return None, OK

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        topologies: list[PVTopology] = state.read(_STATE) or []
        constrained = np.zeros(len(rows), dtype=bool)
        for key in TOPOLOGY_LABELS:
            constrained |= table.labels(key).codes[rows] >= 0
        ok = np.ones(len(rows), dtype=bool)
        for t in topologies:
            col = table.labels(t.key)
            present = col.codes[rows] >= 0
            match = col.isin(t.values)[rows]
            ga = _GA.get(t.key)
            if ga is not None:
                # the beta key absent on the node: try the node's GA label
                gcol = table.labels(ga)
                match = np.where(present, match, gcol.isin(t.values)[rows])
            ok &= match
        return Verdicts.where(constrained & ~ok, Code.UNRESOLVABLE, _REASON_ID)

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(STORAGE_CLASS_ADD, _waits_for_first_consumer), (NODE_ADD, None), (NODE_UPDATE_LABEL, None),
                (NODE_UPDATE_TAINT, None), (PVC_ADD, _claim_of_pod), (PVC_UPDATE, _claim_of_pod), (PV_ADD, None),
                (PV_UPDATE, _topology_changed)]


def _waits_for_first_consumer(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterStorageClassAdded: only a new WaitForFirstConsumer class may help."""
    sc = event.obj
    return isinstance(sc, StorageClass) and sc.binding_mode == WAIT_FOR_FIRST_CONSUMER


def pv_topologies(pv: PersistentVolume) -> list[tuple[str, frozenset[str]]]:
    """getPVTopologies: the volume's parsable zone/region labels, in TOPOLOGY_LABELS' order."""
    out = []
    for key in TOPOLOGY_LABELS:
        if key in pv.labels:
            values = label_zones_to_set(pv.labels[key])
            if values is not None:
                out.append((key, values))
    return out


def _topology_changed(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterPersistentVolumeChange for an update: Queue only when the volume's zone
    and region labels changed (a volume bound to a claim, its phase or annotations, keeps them)."""
    old, new = event.obj
    return pv_topologies(old) != pv_topologies(new)


def _claim_of_pod(pod: Pod, event: ClusterEvent) -> bool:
    """IsPVCRequestedFromPod: a persistentVolumeClaim volume of the pod names the claim."""
    claim = event.obj
    if not isinstance(claim, PersistentVolumeClaim) or claim.namespace != pod.namespace:
        return False
    return any(v.claim_name == claim.name and not v.ephemeral for v in pod.volumes)
