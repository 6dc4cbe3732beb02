"""NodeVolumeLimits (plugins/nodevolumelimits/csi.go and utils.go, v1.34.1).

PreFilter: Skip unless the pod has a ``persistentVolumeClaim`` or generic ephemeral volume, or
an inline in-tree volume the CSI translation can migrate (GCE PD, AWS EBS, Azure Disk here).

Filter, per node (``CSILimits.Filter``): the pod's volumes are turned into unique CSI volume
names ``<driver>/<handle>`` keyed by the driver's limit key ``attachable-volumes-csi-<driver>``
(``GetCSIAttachLimitKey``): a bound claim by its volume's CSI source (or, for an in-tree volume
of a plugin whose migration is on for the node, i.e. AWS EBS, GCE PD, Azure Disk, Cinder or
Portworx with a CSINode present, the translated driver); an unbound claim by its class's
provisioner and a per-claim handle. Volumes already used by pods on the node are not counted
twice. The limits are the node's ``attachable-volumes-*`` allocatable, overridden by the
CSINode's ``drivers[].allocatable.count``. When attached + new exceeds a limit:
``node(s) exceed max volume count`` (Unschedulable). A claim of the pod that cannot be found is
U&U (``looking up PVC <ns>/<name>: persistentvolumeclaim "<name>" not found``); VolumeRestrictions
or VolumeBinding normally reject such a pod at PreFilter first.

Deviation: in-tree volume handles are not rewritten as the translation library does (e.g. the
zone path of a GCE PD); they only need to be unique per disk for the count.
"""

from __future__ import annotations

import functools
import hashlib
import weakref
from collections import Counter
from collections.abc import Mapping

import numpy as np

from kplan.cluster.node_table import NodeTable, PodTally
from kplan.cluster.storage import IN_TREE_TO_CSI, StorageState
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import ASSIGNED_POD_DELETE, CSI_NODE_ADD, PVC_ADD, ClusterEvent
from kplan.framework.interfaces import PreFilterResult
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id, skip
from kplan.model.objects import Pod, Volume
from kplan.model.storage import CSINode, PersistentVolumeClaim
from kplan.plugins.helper import PluginBase
from kplan.plugins.volumebinding import ephemeral_owner_error, not_found, storage_of

NAME = "NodeVolumeLimits"
REASON = "node(s) exceed max volume count"
_REASON_ID = reason_id(REASON)
CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
RESOURCE_NAME_LENGTH_LIMIT = 63
#: in-tree plugins whose CSI migration is on (isCSIMigrationOn) once the node has a CSINode
MIGRATION_ON = frozenset({"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                          "kubernetes.io/cinder", "kubernetes.io/portworx-volume"})
#: inline volume kinds of Volume.disk that the translation library migrates, by plugin name
_INLINE_PLUGINS = {"gce": "kubernetes.io/gce-pd", "aws": "kubernetes.io/aws-ebs", "azure-disk": "kubernetes.io/azure-disk"}
#: stands for upstream's random per-scheduler prefix of unbound claims' handles
_UNBOUND_PREFIX = "kplan-unbound"


@functools.lru_cache(maxsize=256)
def attach_limit_key(driver: str) -> str:
    """volumeutil.GetCSIAttachLimitKey."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def migration_on(has_csi_node: bool, plugin: str) -> bool:
    """isCSIMigrationOn: the plugin migrates, and the node has a CSINode object."""
    return has_csi_node and plugin in MIGRATION_ON


def _ebs_id(volume_id: str) -> str:
    # KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<vol-id>" → "<vol-id>"
    return volume_id.rsplit("/", 1)[-1] if volume_id.startswith("aws://") else volume_id


def _driver_info(st: StorageState, has_csi_node: bool, claim: PersistentVolumeClaim) -> tuple[str, str]:
    """getCSIDriverInfo: (driver, volume handle), ("", "") when the volume is not counted."""
    if claim.volume_name:
        pv = st.pv(claim.volume_name)
        if pv is not None:
            if pv.csi is not None:
                return pv.csi
            if pv.in_tree is None:
                return "", ""
            plugin, ident = pv.in_tree
            if not migration_on(has_csi_node, plugin) or plugin not in IN_TREE_TO_CSI:
                return "", ""
            return IN_TREE_TO_CSI[plugin], _ebs_id(ident) if plugin == "kubernetes.io/aws-ebs" else ident
    # getCSIDriverInfoFromSC
    name = claim.class_name
    sc = st.storage_class(name) if name else None
    if sc is None:
        return "", ""
    handle = f"{_UNBOUND_PREFIX}-{claim.namespace}/{claim.name}"
    if sc.provisioner in IN_TREE_TO_CSI:
        if not migration_on(has_csi_node, sc.provisioner):
            return "", ""
        return IN_TREE_TO_CSI[sc.provisioner], handle
    return sc.provisioner, handle


class _Lookup(Exception):
    pass


def attachable_volumes(st: StorageState, has_csi_node: bool, pod: Pod, new_pod: bool) -> dict[str, str]:
    """filterAttachableVolumes on a node with or without a CSINode (all it reads of the node):
    unique volume name → limit key."""
    out: dict[str, str] = {}
    for v in pod.volumes:
        if not v.claim_name:
            _inline(has_csi_node, v, out)
            continue
        claim = st.pvc(pod.namespace, v.claim_name)
        if claim is None:
            if new_pod:
                raise _Lookup(f"looking up PVC {pod.namespace}/{v.claim_name}: "
                              f"{not_found('persistentvolumeclaim', v.claim_name)}")
            continue
        if v.ephemeral and ephemeral_owner_error(pod, claim):
            if new_pod:
                raise _Lookup(ephemeral_owner_error(pod, claim))
            continue
        driver, handle = _driver_info(st, has_csi_node, claim)
        if driver and handle:
            out[f"{driver}/{handle}"] = attach_limit_key(driver)
    return out


def _inline(has_csi_node: bool, v: Volume, out: dict[str, str]) -> None:
    """checkAttachableInlineVolume."""
    if v.disk is None or v.disk[0] not in _INLINE_PLUGINS:
        return
    plugin = _INLINE_PLUGINS[v.disk[0]]
    if not migration_on(has_csi_node, plugin):
        return
    driver = IN_TREE_TO_CSI[plugin]
    ident = _ebs_id(v.disk[1]) if v.disk[0] == "aws" else v.disk[1]
    out[f"{driver}/{ident}"] = attach_limit_key(driver)


def _counted(v: Volume) -> bool:
    """A volume attachable_volumes may count: a claim, or an inline disk the plugin can migrate."""
    return bool(v.claim_name) or (v.disk is not None and v.disk[0] in _INLINE_PLUGINS)


def _pod_wants_check(pod: Pod) -> bool:
    return any(_counted(v) for v in pod.volumes)


def volume_limits(allocatable: Mapping[str, int], csi_node: CSINode | None) -> dict[str, int]:
    """getVolumeLimits: the node's attachable-volumes-* allocatable, then the CSINode's counts."""
    limits = {k: v for k, v in allocatable.items() if k.startswith("attachable-volumes-")}
    if csi_node is not None:
        for d in csi_node.drivers:
            if d.count is not None:
                limits[attach_limit_key(d.name)] = d.count
    return limits


class _NodeFacts:
    """What NodeVolumeLimits reads of a table's nodes that a run never changes: whether each has a
    CSINode, and per limit key each node's limit (-1: none)."""

    def __init__(self, table: NodeTable, st: StorageState) -> None:
        self.has_csi = np.array([st.csi_node(name) is not None for name in table.names], dtype=bool)
        self._limits: dict[str, np.ndarray] = {}

    def limit(self, table: NodeTable, st: StorageState, key: str) -> np.ndarray:
        found = self._limits.get(key)
        if found is None:
            found = self._limits[key] = np.array(
                [volume_limits(node.allocatable, st.csi_node(node.name)).get(key, -1) for node in table.nodes],
                dtype=np.int64)
        return found


def _countable(pod: Pod) -> int:
    """Volume entries attachable_volumes may turn into a counted volume (at most one each).

    Summed over a node's pods (a PodTally), it bounds the node's attached count from above:
    volumes shared by pods count once, and a volume counts under one limit key only. It reads
    no storage object, so binding claims never makes it stale."""
    return sum(1 for v in pod.volumes if _counted(v))


class NodeVolumeLimits(PluginBase):
    name = NAME

    def __init__(self, args: object, handle: object) -> None:
        super().__init__(args, handle)  # type: ignore[arg-type]
        self._facts_of: weakref.WeakKeyDictionary[NodeTable, _NodeFacts] = weakref.WeakKeyDictionary()

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return (None, OK) if _pod_wants_check(pod) else (None, skip(NAME))

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        st = storage_of(self.handle)
        n = len(rows)
        if not pod.volumes:
            return Verdicts.passing(n)
        # what the pod would attach depends on the node only through whether it has a CSINode
        try:
            new_by_csi = (attachable_volumes(st, False, pod, True), attachable_volumes(st, True, pod, True))
        except _Lookup as e:
            return Verdicts.where(np.ones(n, dtype=bool), Code.UNRESOLVABLE, reason_id(str(e)))
        if not new_by_csi[0] and not new_by_csi[1]:
            return Verdicts.passing(n)
        facts = self._facts(table, st)
        has_csi = facts.has_csi.take(rows)
        failed = np.zeros(n, dtype=bool)
        # A node surely passes when, for every limit key, all its pods' countable volumes plus
        # all of the pod's would fit: the exact count (shared volumes once, one key each) can
        # only be lower. Only the other nodes are counted exactly.
        bound = PodTally.of(table, _countable).per_row.take(rows)
        surely = np.ones(n, dtype=bool)
        for csi, new in enumerate(new_by_csi):
            here = has_csi == bool(csi)
            for key, k in Counter(new.values()).items():
                limit = facts.limit(table, st, key).take(rows)
                surely &= ~(here & (limit >= 0) & (bound + k > limit))
        # the others: count what their pods attach, each unique volume once, as upstream does
        for pos in np.flatnonzero(~surely).tolist():
            r = int(rows[pos])
            node = table.nodes[r]
            csi_node = st.csi_node(node.name)
            new = dict(new_by_csi[csi_node is not None])
            if not new:
                continue
            limits = volume_limits(node.allocatable, csi_node)
            if not limits:
                continue
            attached: dict[str, str] = {}
            for other in table.pods[r]:
                if other.volumes:
                    attached.update(attachable_volumes(st, csi_node is not None, other, False))
            for unique in attached:
                new.pop(unique, None)
            counts = Counter(attached.values())
            if any(key in limits and counts[key] + k > limits[key] for key, k in Counter(new.values()).items()):
                failed[pos] = True
        return Verdicts.where(failed, Code.UNSCHEDULABLE, _REASON_ID)

    def _facts(self, table: NodeTable, st: StorageState) -> _NodeFacts:
        facts = self._facts_of.get(table)
        if facts is None:
            facts = self._facts_of[table] = _NodeFacts(table, st)
        return facts

    def events_to_register(self) -> list[tuple[str, object]]:
        return [(CSI_NODE_ADD, None), (ASSIGNED_POD_DELETE, _deleted_pod_had_volumes), (PVC_ADD, _claim_of_pod)]


def _deleted_pod_had_volumes(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterPodDeleted: an assigned pod with a claim or a migratable inline volume."""
    deleted = event.pod
    if deleted is None or not deleted.volumes or not event.node_name:
        return False
    return _pod_wants_check(deleted)


def _claim_of_pod(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterPVCAdded: a claim (or ephemeral claim) of this pod was created."""
    claim = event.obj
    if not isinstance(claim, PersistentVolumeClaim) or claim.namespace != pod.namespace:
        return False
    return any(v.claim_name == claim.name for v in pod.volumes if v.claim_name)
