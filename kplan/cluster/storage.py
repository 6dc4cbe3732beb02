"""The cluster's storage objects as the scheduler and the storage controllers see them.

Three views, as upstream has them:

* the API objects (``pvc``, ``pv``, ``storage_class``, ``csi_node``, ...): what the informers'
  listers return to VolumeZone, VolumeRestrictions and NodeVolumeLimits;
* the assume cache (``cached_pvc``, ``cached_pv``, ``cached_pvs``): the API objects overlaid
  with the bindings VolumeBinding assumed at Reserve and has not written yet
  (plugins/volumebinding/assume_cache.go);
* PVC reference counts of the pods on nodes (``is_pvc_used_by_pods``: the snapshot's
  StorageInfos; framework/types.go ``PVCRefCounts``), kept up to date as a NodeTable listener;
* the VolumeAttachments by node (``attached_volumes``), which NodeVolumeLimits counts besides
  the volumes of the node's pods.

What kplan lets happen "instantly", like the API writes of reference section 12, is done here
by small emulations of the controllers involved, each documented where it is:
DefaultStorageClass admission (``admit_claim``), the PV controller binding claims that do not
wait for a consumer (``settle``), and, at PreBind, the PV controller completing a binding and
the external provisioner creating a volume (``bind``, ``provision``), and the attach/detach
controller attaching the CSI volumes of a pod bound to a node and detaching them when the last
pod using them there is deleted (``pod_bound``, ``pod_deleted``). Each write the scheduler
watches is also recorded as an event (``drain_events``) so that the queue can offer it to
waiting pods.
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kplan.model.objects import Node, Pod
from kplan.model.selectors import IN, NodeSelector, NodeSelectorTerm, Requirement
from kplan.model.storage import (
    ANN_BETA_STORAGE_CLASS,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NO_PROVISIONER,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimRef,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

if TYPE_CHECKING:
    from kplan.cluster.node_table import NodeTable

PV_ADD, PV_UPDATE, PVC_ADD, PVC_UPDATE = "PersistentVolumeAdd", "PersistentVolumeUpdate", \
    "PersistentVolumeClaimAdd", "PersistentVolumeClaimUpdate"
VOLUME_ATTACHMENT_DELETE = "VolumeAttachmentDelete"

#: csi-translation-lib: in-tree plugin (and in-tree provisioner) name → CSI driver name
IN_TREE_TO_CSI = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/azure-file": "file.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
    "kubernetes.io/vsphere-volume": "csi.vsphere.vmware.com",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
}


def check_access_modes(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """CheckAccessModes: every mode the claim asks for is a mode of the volume."""
    return set(claim.access_modes) <= set(pv.access_modes)


def is_volume_bound_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """IsVolumeBoundToClaim."""
    ref = pv.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
        return False
    return not ref.uid or ref.uid == claim.uid


def pv_matches_node_labels(pv: PersistentVolume, labels: Mapping[str, str]) -> bool:
    """volume.CheckNodeAffinity: the node is built from its labels only, so it has no name."""
    return pv.node_affinity is None or pv.node_affinity.matches("", labels)


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume],
                         node_labels: Mapping[str, str] | None, excluded: Iterable[str] = (),
                         delay_binding: bool = False) -> PersistentVolume | None:
    """volume.FindMatchingVolume (component-helpers/storage/volume/pv_helpers.go), with the
    VolumeAttributesClass gate on (GA). ``node_labels`` None is the PV controller's path.
    Among volumes of equal size the first one in ``volumes`` wins."""
    excluded = set(excluded)
    requested = claim.request or 0
    want_class = claim.class_name
    smallest: PersistentVolume | None = None
    for pv in volumes:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not is_volume_bound_to_claim(pv, claim):
            continue
        if pv.capacity < requested:
            continue
        if pv.volume_mode != claim.volume_mode:
            continue
        if claim.volume_attributes_class != pv.volume_attributes_class:
            continue
        if pv.deleting:
            continue
        affinity_ok = node_labels is None or pv_matches_node_labels(pv, node_labels)
        if is_volume_bound_to_claim(pv, claim):
            return pv if affinity_ok else None
        if node_labels is None and delay_binding:
            continue
        if pv.phase != "Available":
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if pv.class_name != want_class:
            continue
        if not affinity_ok:
            continue
        if node_labels is not None and not check_access_modes(claim, pv):
            continue
        if smallest is None or smallest.capacity > pv.capacity:
            smallest = pv
    return smallest


def default_class(classes: Iterable[StorageClass]) -> StorageClass | None:
    """GetDefaultClass: the newest class marked default, then the smallest name."""
    defaults = [c for c in classes if c.is_default]
    if not defaults:
        return None
    return sorted(defaults, key=lambda c: (-(c.creation_time or 0.0), c.name))[0]


class LoggedDict(dict[str, Any]):
    """A dict that logs the keys written to it, so that an index built on it can catch up with
    the writes since it last looked (None in the log: everything may have changed)."""

    __slots__ = ("log",)

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.log: list[str | None] = []

    def __setitem__(self, key: str, value: Any) -> None:
        self.log.append(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.log.append(key)
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        self.log.append(key)
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, Any]:
        self.log.append(None)
        return super().popitem()

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.log.append(key)
        return super().setdefault(key, default)

    def update(self, *args: Any, **kw: Any) -> None:
        self.log.append(None)
        super().update(*args, **kw)

    def clear(self) -> None:
        self.log.append(None)
        super().clear()


class _VolumesByClaim:
    """The volumes of the assume cache (cached_pv) by class, split the way FindMatchingVolume
    reads them: a volume whose claimRef names another claim is always passed over, so a claim
    need only see its class's volumes that name no claim and those that name it. Kept in name
    order, and brought up to date from the write logs of the two volume maps."""

    def __init__(self) -> None:
        self.read: tuple[int, int] = (0, 0)
        #: volume name → where it is filed: (class, claim (namespace, name) or None)
        self.where: dict[str, tuple[str, tuple[str, str] | None]] = {}
        #: (class, claim or None) → volume names in name order
        self.names: dict[tuple[str, tuple[str, str] | None], list[str]] = {}

    def file(self, name: str, pv: PersistentVolume | None) -> None:
        old = self.where.pop(name, None)
        if old is not None:
            names = self.names[old]
            del names[bisect.bisect_left(names, name)]
        if pv is not None:
            ref = pv.claim_ref
            place = (pv.class_name, (ref.namespace, ref.name) if ref is not None else None)
            self.where[name] = place
            bisect.insort(self.names.setdefault(place, []), name)


class StorageState:
    """PVCs, PVs, classes, CSI objects; the assume cache; PVC use by pods. See the module doc."""

    def __init__(self, claims: Sequence[PersistentVolumeClaim] = (), volumes: Sequence[PersistentVolume] = (),
                 classes: Sequence[StorageClass] = (), csi_nodes: Sequence[CSINode] = (),
                 csi_drivers: Sequence[CSIDriver] = (), capacities: Sequence[CSIStorageCapacity] = (),
                 attachments: Sequence[VolumeAttachment] = ()) -> None:
        self.pvcs: dict[str, PersistentVolumeClaim] = {c.key: c for c in claims}
        self.pvs: LoggedDict = LoggedDict((v.name, v) for v in volumes)
        self.classes: dict[str, StorageClass] = {c.name: c for c in classes}
        self.csi_nodes: dict[str, CSINode] = {n.name: n for n in csi_nodes}
        self.csi_drivers: dict[str, CSIDriver] = {d.name: d for d in csi_drivers}
        self.capacities: list[CSIStorageCapacity] = list(capacities)
        self._assumed_pvcs: dict[str, PersistentVolumeClaim] = {}
        self._assumed_pvs: LoggedDict = LoggedDict()
        self._by_claim: _VolumesByClaim | None = None
        self.pvc_refs: Counter[str] = Counter()
        self._events: list[tuple[str, Any]] = []
        #: (namespace, name) of the claims each provisioned volume was made for, in order
        self.provisioned: list[str] = []
        #: node name → (PV name or None) → the VolumeAttachments of that volume on the node
        self._attached: dict[str, dict[str | None, list[VolumeAttachment]]] = {}
        #: the nodes whose VolumeAttachments changed, in order: per-node counts catch up from it
        self.attach_log: list[str] = []
        for va in attachments:
            self._attach(va)

    # ------------------------------------------------------------------ the API objects

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def pv(self, name: str) -> PersistentVolume | None:
        return self.pvs.get(name)

    def storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self.csi_drivers.get(name)

    def is_delay_binding(self, claim: PersistentVolumeClaim) -> bool:
        """volume.IsDelayBindingMode: a class that exists and waits for the first consumer."""
        name = claim.class_name
        if not name:
            return False
        sc = self.classes.get(name)
        return sc is not None and sc.binding_mode == WAIT_FOR_FIRST_CONSUMER

    # ------------------------------------------------------------------ the assume cache

    def cached_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        key = f"{namespace}/{name}"
        return self._assumed_pvcs.get(key) or self.pvcs.get(key)

    def cached_pv(self, name: str) -> PersistentVolume | None:
        return self._assumed_pvs.get(name) or self.pvs.get(name)

    def cached_pvs(self, class_name: str) -> list[PersistentVolume]:
        """ListPVs(storageClassName), in name order (upstream: the cache index's order)."""
        names = set(self.pvs) | set(self._assumed_pvs)
        out = [self.cached_pv(n) for n in sorted(names)]
        return [pv for pv in out if pv is not None and pv.class_name == class_name]

    def volumes_for_claim(self, claim: PersistentVolumeClaim) -> list[PersistentVolume]:
        """The volumes of cached_pvs(claim's class) that FindMatchingVolume can pick for the
        claim, in name order: those that name no claim and those that name this one."""
        index = self._volumes_by_claim()
        free = index.names.get((claim.class_name, None), [])
        named = index.names.get((claim.class_name, (claim.namespace, claim.name)), [])
        names = list(heapq.merge(free, named)) if named else free
        return [pv for n in names if (pv := self.cached_pv(n)) is not None]

    def _volumes_by_claim(self) -> _VolumesByClaim:
        index = self._by_claim
        pvs_log, assumed_log = self.pvs.log, self._assumed_pvs.log
        if index is None or None in pvs_log[index.read[0]:] or None in assumed_log[index.read[1]:]:
            index = self._by_claim = _VolumesByClaim()
            for name in set(self.pvs) | set(self._assumed_pvs):
                index.file(name, self.cached_pv(name))
        else:
            for written in set(pvs_log[index.read[0]:] + assumed_log[index.read[1]:]):
                if written is not None:
                    index.file(written, self.cached_pv(written))
        index.read = (len(pvs_log), len(assumed_log))
        return index

    def assume_pv(self, pv: PersistentVolume) -> None:
        self._assumed_pvs[pv.name] = pv

    def assume_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self._assumed_pvcs[pvc.key] = pvc

    def restore_pv(self, name: str) -> None:
        self._assumed_pvs.pop(name, None)

    def restore_pvc(self, key: str) -> None:
        self._assumed_pvcs.pop(key, None)

    # ------------------------------------------------------------------ PVC use by pods

    def pod_added(self, table: NodeTable, pod: Pod, row: int) -> None:
        for v in pod.volumes:
            if v.claim_name and not v.ephemeral:
                self.pvc_refs[f"{pod.namespace}/{v.claim_name}"] += 1

    def pod_removed(self, table: NodeTable, pod: Pod, row: int) -> None:
        for v in pod.volumes:
            if v.claim_name and not v.ephemeral:
                key = f"{pod.namespace}/{v.claim_name}"
                self.pvc_refs[key] -= 1
                if self.pvc_refs[key] <= 0:
                    del self.pvc_refs[key]

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return self.pvc_refs.get(key, 0) > 0

    # ------------------------------------------------------------------ VolumeAttachments

    def _attach(self, va: VolumeAttachment) -> None:
        self._attached.setdefault(va.node_name, {}).setdefault(va.pv_name, []).append(va)
        self.attach_log.append(va.node_name)

    def attachments(self, node: str) -> list[VolumeAttachment]:
        """The VolumeAttachments naming ``node``, by volume name then attachment name."""
        by_pv = self._attached.get(node, {})
        return [va for pv in sorted(by_pv, key=lambda n: n or "") for va in sorted(by_pv[pv], key=lambda a: a.name)]

    def attachment_count(self, node: str) -> int:
        """How many VolumeAttachments name ``node``: at most what NodeVolumeLimits counts of them."""
        return sum(len(vas) for vas in self._attached.get(node, {}).values())

    def attached_volumes(self, node: str) -> dict[str, str]:
        """getNodeVolumeAttachmentInfo: unique volume name ``<attacher>/<volume handle>`` →
        attacher, for each attachment to ``node`` with an attacher and a PersistentVolume that
        exists (the API object) with a CSI source."""
        out: dict[str, str] = {}
        for pv_name, vas in self._attached.get(node, {}).items():
            pv = self.pvs.get(pv_name) if pv_name is not None else None
            if pv is None or pv.csi is None:
                continue
            for va in vas:
                if va.attacher:
                    out[f"{va.attacher}/{pv.csi[1]}"] = va.attacher
        return out

    def bound_pvs(self, pod: Pod) -> list[PersistentVolume]:
        """The volumes of ``pod``'s bound claims (a generic ephemeral volume's only if the pod owns
        its claim), CSI or not."""
        out = []
        for v in pod.volumes:
            if not v.claim_name:
                continue
            claim = self.pvcs.get(f"{pod.namespace}/{v.claim_name}")
            if claim is None or not claim.volume_name:
                continue
            if v.ephemeral and not any(o.controller and o.uid == pod.uid for o in claim.owners):
                continue
            pv = self.pvs.get(claim.volume_name)
            if pv is not None:
                out.append(pv)
        return out

    def attachable_pvs(self, pod: Pod) -> list[PersistentVolume]:
        """The volumes the attach/detach controller attaches for ``pod``: the CSI volume of each
        bound claim (a generic ephemeral volume's only if the pod owns its claim) whose
        CSIDriver does not opt out with ``attachRequired: false`` (a driver without a CSIDriver
        object needs attaching). Deviation: in-tree volumes migrated to CSI are not attached."""
        out = []
        for pv in self.bound_pvs(pod):
            if pv.csi is None:
                continue
            driver = self.csi_drivers.get(pv.csi[0])
            if driver is not None and not driver.attach_required:
                continue
            out.append(pv)
        return out

    def pod_bound(self, pod: Pod, node: str) -> None:
        """The attach/detach controller, for a pod the run binds to ``node``: an attachment
        ``csi-<pv>-<node>`` of each of its volumes that has none there yet (the real name is a
        hash of the same three parts; kplan keeps it readable). The input's running pods are
        a steady state: they have the attachments the input lists, no more."""
        if not pod.volumes:
            return
        for pv in self.attachable_pvs(pod):
            if not self._attached.get(node, {}).get(pv.name):
                assert pv.csi is not None
                self._attach(VolumeAttachment(f"csi-{pv.name}-{node}", pv.csi[0], node, pv.name,
                                              source=f"attached for Pod {pod.key}"))

    def pod_deleted(self, pod: Pod, node: str, remaining: Sequence[Pod]) -> None:
        """The attach/detach controller, for a pod deleted from ``node`` (where ``remaining`` still
        run): the attachments of its volumes go unless another pod there still uses the volume.
        Each deletion is an event (NodeVolumeLimits waits for it)."""
        on_node = self._attached.get(node)
        if not on_node or not pod.volumes:
            return
        # every volume of the pod, as the contract's controller detaches (reference 13.2): an
        # attachment the input lists for a driver that says attachRequired false goes too
        still = {pv.name for other in remaining if other.volumes for pv in self.bound_pvs(other)}
        for pv in self.bound_pvs(pod):
            if pv.name in still:
                continue
            for va in on_node.pop(pv.name, []):
                self.attach_log.append(node)
                self.emit(VOLUME_ATTACHMENT_DELETE, va)

    # ------------------------------------------------------------------ events

    def emit(self, kind: str, obj: Any) -> None:
        self._events.append((kind, obj))

    def drain_events(self) -> list[tuple[str, Any]]:
        out, self._events = self._events, []
        return out

    # ------------------------------------------------------------------ controllers

    def admit_claim(self, claim: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """DefaultStorageClass admission (and the PV controller's retroactive default class for
        an unbound claim): a claim with no class at all (nil, no beta annotation) gets the
        default StorageClass's name."""
        if claim.storage_class_name is not None or ANN_BETA_STORAGE_CLASS in claim.annotations or claim.volume_name:
            return claim
        sc = default_class(self.classes.values())
        return dataclasses.replace(claim, storage_class_name=sc.name) if sc is not None else claim

    def add_claim(self, claim: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """A claim created during the run (a StatefulSet's, an ephemeral volume's): admitted, stored."""
        claim = self.admit_claim(claim)
        self.pvcs[claim.key] = claim
        self.emit(PVC_ADD, claim)
        return claim

    def _complete_binding(self, claim: PersistentVolumeClaim, pv: PersistentVolume) -> None:
        """The PV controller's bind(): the volume claimed, the claim bound and marked complete."""
        ref = ClaimRef(claim.namespace, claim.name, claim.uid)
        if pv.claim_ref != ref or pv.phase != "Bound":
            ann = dict(pv.annotations)
            if pv.claim_ref is None:
                ann.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
            old, pv = pv, dataclasses.replace(pv, claim_ref=ref, phase="Bound", annotations=ann)
            self.pvs[pv.name] = pv
            self.emit(PV_UPDATE, (old, pv))
        ann = dict(claim.annotations)
        ann[ANN_BIND_COMPLETED] = "yes"
        if not claim.volume_name:
            ann.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
        claim = dataclasses.replace(claim, volume_name=pv.name, phase="Bound", annotations=ann)
        self.pvcs[claim.key] = claim
        self.emit(PVC_UPDATE, claim)

    def provision(self, claim: PersistentVolumeClaim, node: Node | None) -> PersistentVolume | None:
        """The external provisioner: a volume of the claim's size, class and access modes,
        named ``pvc-<claim uid>``, bound to the claim.

        Its node affinity: with a selected node, the topology of that node for the driver
        (``CSINode`` topologyKeys and the node's values of those labels); without one (an
        Immediate claim), the class's allowedTopologies. Deviations: a real driver answers with
        its own accessible topology (one segment, e.g. one zone); drivers without CSINode
        topology keys give a volume without node affinity here."""
        sc = self.classes.get(claim.class_name)
        if sc is None or not sc.provisioner or sc.provisioner == NO_PROVISIONER:
            return None
        driver = IN_TREE_TO_CSI.get(sc.provisioner, sc.provisioner)
        affinity: NodeSelector | None = None
        if node is not None:
            csi_node = self.csi_nodes.get(node.name)
            d = csi_node.driver(driver) if csi_node is not None else None
            if d is not None and d.topology_keys:
                reqs = tuple(Requirement(k, IN, (node.labels[k],)) for k in d.topology_keys if k in node.labels)
                if reqs:
                    affinity = NodeSelector((NodeSelectorTerm(reqs),))
        elif sc.allowed_topologies:
            affinity = NodeSelector(tuple(NodeSelectorTerm(tuple(Requirement(k, IN, vals) for k, vals in t.expressions))
                                          for t in sc.allowed_topologies))
        name = f"pvc-{claim.uid}" if "/" not in claim.uid else f"pvc-{claim.namespace}-{claim.name}"
        pv = PersistentVolume(
            name=name, capacity=claim.request or 0, access_modes=claim.access_modes,
            storage_class_name=claim.class_name, claim_ref=ClaimRef(claim.namespace, claim.name, claim.uid),
            node_affinity=affinity, volume_mode=claim.volume_mode,
            volume_attributes_class=claim.volume_attributes_class, phase="Bound",
            annotations={"pv.kubernetes.io/provisioned-by": sc.provisioner}, csi=(driver, name),
            source=f"provisioned for PersistentVolumeClaim {claim.key}")
        self.pvs[pv.name] = pv
        self.provisioned.append(claim.key)
        self.emit(PV_ADD, pv)
        self._complete_binding(claim, pv)
        return pv

    def bind(self, claim_key: str, pv_name: str) -> None:
        """Complete a binding the scheduler chose (PreBind, then the PV controller)."""
        claim, pv = self.pvcs.get(claim_key), self.pvs.get(pv_name)
        if claim is not None and pv is not None:
            self._complete_binding(claim, pv)

    def settle(self, nodes: Mapping[str, Node]) -> None:
        """The PV controller and provisioners, before scheduling starts: ``settle_claim`` for every
        claim, in input order. The writes are the input's steady state, not events."""
        names = sorted(self.pvs)
        for key in list(self.pvcs):
            self.settle_claim(key, nodes.get, names)
        self._events.clear()

    def create_claim(self, claim: PersistentVolumeClaim, node: Callable[[str], Node | None]) -> None:
        """A claim created during the run (a StatefulSet's for a replica it adds), unless one of
        that name exists (the controller creates it only then, and uses the existing one as it is):
        DefaultStorageClass admission, then the PV controller's ``settle_claim``. Its writes
        are events (``drain_events``)."""
        if claim.key in self.pvcs:
            return
        self.add_claim(claim)
        self.settle_claim(claim.key, node)

    def settle_claim(self, key: str, node: Callable[[str], Node | None], names: Sequence[str] | None = None) -> None:
        """The PV controller's syncUnboundClaim for one claim (and the provisioner it may call).

        A claim naming a volume is bound to it if the volume is free or already its own and
        fits (size, class, access modes, volume mode). An unbound claim that does not wait for
        a consumer is bound to the best matching volume (findBestMatchForClaim: the smallest
        set of access modes, then the smallest volume; among equals the first of ``names``,
        the PV names in order), else dynamically provisioned if its class can provision. A
        waiting claim whose provisioning already started (the selected-node annotation) is
        provisioned on that node."""
        claim = self.pvcs[key]
        if claim.fully_bound or claim.deleting:
            return
        if claim.volume_name:
            pv = self.pvs.get(claim.volume_name)
            if pv is None:
                return
            if pv.claim_ref is None:
                fits = (pv.capacity >= (claim.request or 0) and pv.class_name == claim.class_name
                        and check_access_modes(claim, pv) and pv.volume_mode == claim.volume_mode)
                if fits:
                    self._complete_binding(claim, pv)
            elif is_volume_bound_to_claim(pv, claim):
                self._complete_binding(claim, pv)
            return
        claim = self.admit_claim(claim)
        self.pvcs[key] = claim
        delay = self.is_delay_binding(claim)
        groups: dict[frozenset[str], list[PersistentVolume]] = {}
        # a waiting claim can only be bound here to a volume that already names it
        if delay:
            candidates = [v for v in self.pvs.values() if v.claim_ref is not None and is_volume_bound_to_claim(v, claim)]
        else:
            candidates = [self.pvs[n] for n in (names if names is not None else sorted(self.pvs))]
        for pv in candidates:
            modes = frozenset(pv.access_modes)
            if set(claim.access_modes) <= modes:
                groups.setdefault(modes, []).append(pv)
        best = None
        for modes in sorted(groups, key=lambda m: (len(m), sorted(m))):
            best = find_matching_volume(claim, groups[modes], None, delay_binding=delay)
            if best is not None:
                break
        if best is not None:
            self._complete_binding(claim, best)
            return
        if delay:
            selected = claim.annotations.get(ANN_SELECTED_NODE)
            chosen = node(selected) if selected else None
            if chosen is not None:
                self.provision(claim, chosen)
            return
        self.provision(claim, None)
