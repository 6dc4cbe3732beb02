"""Storage objects as the volume plugins read them (parsed in parse.py).

PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver,
CSIStorageCapacity and VolumeAttachment, reduced to the fields kube-scheduler's volume plugins and the controllers
kplan emulates (PV binder, external provisioner) use. Capacities are integer bytes.
Frozen values: a binding is a new object (``dataclasses.replace``), kept by cluster/storage.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kplan.model.objects import OwnerRef
from kplan.model.selectors import LabelSelector, NodeSelector
from kplan.model.shared import share_frozen_dataclasses

EMPTY: Mapping[str, str] = MappingProxyType({})

READ_WRITE_ONCE_POD = "ReadWriteOncePod"
FILESYSTEM = "Filesystem"
IMMEDIATE, WAIT_FOR_FIRST_CONSUMER = "Immediate", "WaitForFirstConsumer"
NO_PROVISIONER = "kubernetes.io/no-provisioner"

#: annotations of the PV controller and the scheduler (component-helpers/storage/volume)
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    namespace: str
    name: str
    uid: str
    #: spec.storageClassName; None (nil) differs from "" (explicitly no class)
    storage_class_name: str | None = None
    access_modes: tuple[str, ...] = ()
    #: spec.resources.requests.storage in bytes, None when absent
    request: int | None = None
    selector: LabelSelector | None = None
    volume_name: str = ""
    volume_mode: str = FILESYSTEM
    volume_attributes_class: str = ""
    labels: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    annotations: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    owners: tuple[OwnerRef, ...] = ()
    phase: str = "Pending"
    deleting: bool = False
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def class_name(self) -> str:
        """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
        if ANN_BETA_STORAGE_CLASS in self.annotations:
            return self.annotations[ANN_BETA_STORAGE_CLASS]
        return self.storage_class_name or ""

    @property
    def fully_bound(self) -> bool:
        """isPVCFullyBound: a volume name and the bind-completed annotation."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.annotations


@dataclass(frozen=True, slots=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str = ""


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    name: str
    capacity: int = 0
    access_modes: tuple[str, ...] = ()
    storage_class_name: str = ""
    claim_ref: ClaimRef | None = None
    node_affinity: NodeSelector | None = None
    volume_mode: str = FILESYSTEM
    volume_attributes_class: str = ""
    #: status.phase: Available, Bound, Released, Failed, Pending
    phase: str = "Available"
    deleting: bool = False
    labels: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    annotations: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    #: (driver, volumeHandle) of a CSI volume
    csi: tuple[str, str] | None = None
    #: (in-tree plugin name, volume id) of a migratable in-tree volume (awsElasticBlockStore, ...)
    in_tree: tuple[str, str] | None = None
    source: str = ""

    @property
    def class_name(self) -> str:
        """GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName."""
        if ANN_BETA_STORAGE_CLASS in self.annotations:
            return self.annotations[ANN_BETA_STORAGE_CLASS]
        return self.storage_class_name


@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """One allowedTopologies term: every (key, values) must match (``key In values``)."""

    #: an empty term, or a key with no values, selects no node (volumebinding._topology_mask)
    expressions: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    provisioner: str = ""
    #: volumeBindingMode, defaulted to Immediate by the API server
    binding_mode: str = IMMEDIATE
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    is_default: bool = False
    creation_time: float | None = None
    source: str = ""


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    node_id: str = ""
    topology_keys: tuple[str, ...] = ()
    #: allocatable.count, None when unset
    count: int | None = None


@dataclass(frozen=True, slots=True)
class CSINode:
    name: str
    drivers: tuple[CSINodeDriver, ...] = ()
    #: the storage.alpha.kubernetes.io/migrated-plugins annotation
    migrated_plugins: frozenset[str] = frozenset()
    source: str = ""

    def driver(self, name: str) -> CSINodeDriver | None:
        return next((d for d in self.drivers if d.name == name), None)


@dataclass(frozen=True, slots=True)
class CSIDriver:
    name: str
    storage_capacity: bool = False
    #: spec.attachRequired, true when unset (the API default): the attach/detach controller
    #: creates VolumeAttachments for the driver's volumes
    attach_required: bool = True
    #: spec.preventPodSchedulingIfMissing (VolumeLimitScaling): NodeVolumeLimits rejects a node
    #: whose CSINode does not list the driver
    prevent_scheduling_if_missing: bool = False
    source: str = ""


@dataclass(frozen=True, slots=True)
class VolumeAttachment:
    """storage.k8s.io/v1 VolumeAttachment: a volume attached, or being attached or detached."""

    name: str
    #: spec.attacher: the CSI driver's name
    attacher: str
    #: spec.nodeName
    node_name: str
    #: spec.source.persistentVolumeName, None for an inline volume source
    pv_name: str | None = None
    source: str = ""


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    namespace: str
    name: str
    storage_class_name: str
    node_topology: LabelSelector | None = None
    capacity: int | None = None
    maximum_volume_size: int | None = None
    source: str = ""

    @property
    def limit(self) -> int | None:
        """volumeLimit: maximumVolumeSize when set, else capacity."""
        return self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity


#: the storage objects of the inputs, each of its own type
StorageObject = (PersistentVolumeClaim | PersistentVolume | StorageClass | CSINode | CSIDriver | CSIStorageCapacity
                 | VolumeAttachment)

share_frozen_dataclasses(globals())
