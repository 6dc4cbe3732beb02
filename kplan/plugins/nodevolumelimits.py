"""NodeVolumeLimits (plugins/nodevolumelimits/csi.go, v1.34.1 and v1.37.2).

PreFilter: Skip unless the pod has a ``persistentVolumeClaim`` or generic ephemeral volume, or
an inline in-tree volume the CSI translation can migrate (GCE PD, AWS EBS, Azure Disk here).

Filter, per node (``CSILimits.Filter``): the pod's volumes are turned into unique CSI volume
names ``<driver>/<handle>`` with their driver (``filterAttachableVolumes``): a bound claim by its
volume's CSI source (or, for an in-tree volume of a plugin whose migration is on for the node,
i.e. AWS EBS, GCE PD, Azure Disk, Cinder or Portworx with a CSINode present, the translated
driver); an unbound claim by its class's provisioner and a per-claim handle. The limits are the
node's CSINode ``drivers[].allocatable.count`` by driver name (1.34 no longer reads the node's
``attachable-volumes-*`` allocatable). The attached count of a driver is the unique volumes of
the node's pods, plus the node's VolumeAttachments (``getNodeVolumeAttachmentInfo``: attacher
and the CSI handle of the named PersistentVolume) that no pod there uses; a volume of the pod
that a pod of the node already uses is not new. When attached + new exceeds a limit:
``node(s) exceed max volume count`` (Unschedulable).

The attachments are the cluster's (cluster/storage.py: the input's and those the attach/detach
controller makes for bound pods), not the node view's, so a preemption dry run that removes a
pod still counts the attachment of its volume: evicting it does not free the slot. A volume
attached through an attachment only is also still new for the pod (upstream removes only pods'
volumes from the new ones).

A claim of the pod that cannot be found is U&U (``looking up PVC <ns>/<name>:
persistentvolumeclaim "<name>" not found``); VolumeRestrictions or VolumeBinding normally reject
such a pod at PreFilter first.

From 1.37 (VolumeLimitScaling, KEP-5030, beta and on; a gate from 1.35), before
the limits: a node whose CSINode does not list the driver of one of the pod's new volumes, where
that driver's CSIDriver says ``preventPodSchedulingIfMissing: true``, is rejected
Unschedulable with ``<driver> CSI driver is not installed on the node`` (a node without a
CSINode lists none). Upstream walks the new volumes in map order; here the first such driver
in the pod's volume order is named (they differ only when several drivers are missing).

Deviation: in-tree volume handles are not rewritten as the translation library does (e.g. the
zone path of a GCE PD); they only need to be unique per disk for the count.
"""

from __future__ import annotations

import weakref
from collections import Counter
from dataclasses import dataclass

import numpy as np

from kplan.cluster.node_table import NodeTable, PodTally
from kplan.cluster.storage import IN_TREE_TO_CSI, VOLUME_ATTACHMENT_DELETE, StorageState
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import ASSIGNED_POD_DELETE, CSI_NODE_ADD, PVC_ADD, ClusterEvent
from kplan.framework.features import Gate
from kplan.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    RejectionExplainer,
)
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id, skip
from kplan.model.objects import Pod, Volume
from kplan.model.storage import CSINode, PersistentVolumeClaim
from kplan.plugins.helper import PluginBase
from kplan.plugins.volumebinding import ephemeral_owner_error, not_found, storage_of

NAME = "NodeVolumeLimits"
REASON = "node(s) exceed max volume count"
_REASON_ID = reason_id(REASON)
#: in-tree plugins whose CSI migration is on (isCSIMigrationOn) once the node has a CSINode
MIGRATION_ON = frozenset({"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                          "kubernetes.io/cinder", "kubernetes.io/portworx-volume"})
#: inline volume kinds of Volume.disk that the translation library migrates, by plugin name
_INLINE_PLUGINS = {"gce": "kubernetes.io/gce-pd", "aws": "kubernetes.io/aws-ebs", "azure-disk": "kubernetes.io/azure-disk"}
#: stands for upstream's random per-scheduler prefix of unbound claims' handles
_UNBOUND_PREFIX = "kplan-unbound"


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
    unique volume name → driver name."""
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
            out[f"{driver}/{handle}"] = driver
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
    out[f"{driver}/{ident}"] = driver


def _counted(v: Volume) -> bool:
    """A volume attachable_volumes may count: a claim, or an inline disk the plugin can migrate."""
    return bool(v.claim_name) or (v.disk is not None and v.disk[0] in _INLINE_PLUGINS)


def _pod_wants_check(pod: Pod) -> bool:
    return any(_counted(v) for v in pod.volumes)


def volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    """getVolumeLimits: driver name → the CSINode's allocatable count, for the drivers that set one."""
    if csi_node is None:
        return {}
    return {d.name: d.count for d in csi_node.drivers if d.count is not None}


@dataclass(frozen=True)
class AttachCount:
    """One driver's count on one node, as the Filter made it: what is attached (volumes of the
    node's pods, and attachments no pod there uses), what the pod adds, and the limit."""

    driver: str
    by_pods: int
    by_attachments: int
    new: int
    limit: int

    @property
    def exceeded(self) -> bool:
        return self.by_pods + self.by_attachments + self.new > self.limit

    def __str__(self) -> str:
        return (f"{self.driver}: {self.by_pods + self.by_attachments} attached ({self.by_pods} by pods, "
                f"{self.by_attachments} by attachments no pod here uses) + {self.new} new > limit {self.limit}")


def attach_counts(st: StorageState, pod: Pod, node_name: str, pods: list[Pod]) -> list[AttachCount]:
    """CSILimits.Filter's count on one node (``node_name`` running ``pods``), per limited driver
    the pod has new volumes of, in driver order; [] when the filter passes without counting."""
    csi_node = st.csi_node(node_name)
    has_csi = csi_node is not None
    new = attachable_volumes(st, has_csi, pod, True)
    limits = volume_limits(csi_node)
    if not new or not limits:
        return []
    attached: dict[str, str] = {}
    for other in pods:
        if other.volumes:
            attached.update(attachable_volumes(st, has_csi, other, False))
    for unique in attached:
        new.pop(unique, None)
    by_pods = Counter(attached.values())
    by_attachments = Counter(driver for unique, driver in st.attached_volumes(node_name).items()
                             if unique not in attached)
    wanted = Counter(new.values())
    return [AttachCount(d, by_pods[d], by_attachments[d], wanted[d], limits[d]) for d in sorted(wanted) if d in limits]


class _NodeFacts:
    """What NodeVolumeLimits reads of a table's nodes: whether each has a CSINode and each
    driver's limit (-1: none), which a run never changes; and how many VolumeAttachments name
    each node, brought up to date from StorageState.attach_log."""

    def __init__(self, table: NodeTable, st: StorageState) -> None:
        self.has_csi = np.array([st.csi_node(name) is not None for name in table.names], dtype=bool)
        self._limits: dict[str, np.ndarray] = {}
        self._attachments = np.array([st.attachment_count(name) for name in table.names], dtype=np.int64)
        self._log_read = len(st.attach_log)

    def limit(self, table: NodeTable, st: StorageState, driver: str) -> np.ndarray:
        found = self._limits.get(driver)
        if found is None:
            found = self._limits[driver] = np.array(
                [volume_limits(st.csi_node(name)).get(driver, -1) for name in table.names], dtype=np.int64)
        return found

    def attachments(self, table: NodeTable, st: StorageState) -> np.ndarray:
        log = st.attach_log
        if self._log_read < len(log):
            for name in set(log[self._log_read:]):
                r = table.row_of.get(name)
                if r is not None:
                    self._attachments[r] = st.attachment_count(name)
            self._log_read = len(log)
        return self._attachments


def _countable(pod: Pod) -> int:
    """Volume entries attachable_volumes may turn into a counted volume (at most one each).

    Summed over a node's pods (a PodTally) and added to the node's attachments, it bounds the
    node's attached count from above: volumes shared by pods count once, and a volume counts
    under one driver only. It reads no storage object, so binding claims never makes it stale."""
    return sum(1 for v in pod.volumes if _counted(v))


class NodeVolumeLimits(PluginBase, PreFilterPlugin, FilterPlugin, EnqueueExtensions, RejectionExplainer):
    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.VOLUMES, signers.volumes(pod)),)

    def __init__(self, args: object, handle: Handle) -> None:
        super().__init__(args, handle)
        self._facts_of: weakref.WeakKeyDictionary[NodeTable, _NodeFacts] = weakref.WeakKeyDictionary()
        #: the CSI-driver check of VolumeLimitScaling (KEP-5030; the gate exists from 1.35)
        self._driver_check = Gate.VOLUME_LIMIT_SCALING in handle.release.gates and handle.release.enabled(
            Gate.VOLUME_LIMIT_SCALING)

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return (None, OK) if _pod_wants_check(pod) else (None, skip(NAME))

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        st = storage_of(self.handle)
        n = len(rows)
        if not pod.volumes:
            return Verdicts.passing(n)
        # what the pod would attach depends on the node only through whether it has a CSINode
        try:
            # the volumes of a node with a CSINode; the claims looked up are the same on any node
            new = attachable_volumes(st, True, pod, True)
        except _Lookup as e:
            return Verdicts.where(np.ones(n, dtype=bool), Code.UNRESOLVABLE, reason_id(str(e)))
        if not new:
            # a node without a CSINode has no limits: only nodes with one can fail
            return Verdicts.passing(n)
        missing = self._driver_missing(st, pod, new, table, rows)
        facts = self._facts(table, st)
        # A node surely passes when, for every driver, all its pods' countable volumes and all its
        # attachments plus all of the pod's volumes fit: the exact count (shared volumes once,
        # one driver each) can only be lower. Only the other nodes are counted exactly.
        bound = PodTally.of(table, _countable).per_row.take(rows) + facts.attachments(table, st).take(rows)
        fits = np.ones(n, dtype=bool)
        for driver, k in Counter(new.values()).items():
            limit = facts.limit(table, st, driver).take(rows)
            fits &= ~((limit >= 0) & (bound + k > limit))
        surely = fits | ~facts.has_csi.take(rows)
        failed = np.zeros(n, dtype=bool)
        for pos in np.flatnonzero(~surely).tolist():
            r = int(rows[pos])
            failed[pos] = missing is None or not missing[pos]
            failed[pos] &= any(c.exceeded for c in attach_counts(st, pod, table.names[r], table.pods[r]))
        verdicts = Verdicts.where(failed, Code.UNSCHEDULABLE, _REASON_ID)
        if missing is None or not missing.any():
            return verdicts
        codes, reasons = verdicts.codes.copy(), verdicts.reasons.copy()
        codes[missing != 0] = np.int8(Code.UNSCHEDULABLE)
        reasons[missing != 0] = missing[missing != 0]
        return Verdicts(codes, reasons)

    def _driver_missing(self, st: StorageState, pod: Pod, new: dict[str, str], table: NodeTable,
                        rows: np.ndarray) -> np.ndarray | None:
        """checkCSIDriverOnNode over the pod's new volumes, per row: the reason id of the first
        driver that opts into preventPodSchedulingIfMissing and that the node's CSINode does not
        list (0: none). None when the check is off (VolumeLimitScaling off, or a release without it)."""
        if not self._driver_check:
            return None
        missing = np.zeros(len(rows), dtype=np.int32)
        drivers = [d for d in dict.fromkeys(new.values())
                   if (driver := st.csi_driver(d)) is not None and driver.prevent_scheduling_if_missing]
        if not drivers:
            return missing
        # a node without a CSINode reads the pod's volumes without migrating in-tree ones
        plain = set(attachable_volumes(st, False, pod, True).values())
        for pos, r in enumerate(map(int, rows)):
            csi_node = st.csi_node(table.names[r])
            for d in drivers if csi_node is not None else [d for d in drivers if d in plain]:
                if csi_node is None or csi_node.driver(d) is None:
                    missing[pos] = reason_id(f"{d} CSI driver is not installed on the node")
                    break
        return missing

    def explain_rejection(self, pod: Pod, table: NodeTable, row: int) -> str:
        """The attach counts behind ``node(s) exceed max volume count`` on one node."""
        counts = attach_counts(storage_of(self.handle), pod, table.names[row], table.pods[row])
        return "; ".join(str(c) for c in counts if c.exceeded)

    def _facts(self, table: NodeTable, st: StorageState) -> _NodeFacts:
        facts = self._facts_of.get(table)
        if facts is None:
            facts = self._facts_of[table] = _NodeFacts(table, st)
        return facts

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(CSI_NODE_ADD, None), (ASSIGNED_POD_DELETE, _deleted_pod_had_volumes), (PVC_ADD, _claim_of_pod),
                (VOLUME_ATTACHMENT_DELETE, _pod_has_claim)]


def _deleted_pod_had_volumes(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterPodDeleted: a pod with a claim or a migratable inline volume that was
    assigned or held a nomination (a nominated pod leaving the queue as it is bound counts: its
    reservation on the node goes)."""
    deleted = event.pod
    if deleted is None or not deleted.volumes or not (event.node_name or event.nominated_node):
        return False
    return _pod_wants_check(deleted)


def _claim_of_pod(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterPVCAdded: a claim (or ephemeral claim) of this pod was created."""
    claim = event.obj
    if not isinstance(claim, PersistentVolumeClaim) or claim.namespace != pod.namespace:
        return False
    return any(v.claim_name == claim.name for v in pod.volumes if v.claim_name)


def _pod_has_claim(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterVolumeAttachmentDeleted: the pod has a ``persistentVolumeClaim`` volume
    (generic ephemeral ones do not count there), or an inline volume of the deleted
    attachment's driver."""
    va = event.obj
    for v in pod.volumes:
        if v.claim_name and not v.ephemeral:
            return True
        if v.disk is not None and v.disk[0] in _INLINE_PLUGINS and va is not None \
                and IN_TREE_TO_CSI[_INLINE_PLUGINS[v.disk[0]]] == getattr(va, "attacher", None):
            return True
    return False

