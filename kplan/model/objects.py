"""Small typed Kubernetes objects, parsed once from dicts (see parse.py).

Resources are integers: millicores for ``cpu``, bytes for memory and storage, units for the rest.
Pods and nodes compare and hash by identity: two distinct objects are two distinct pods.
"""

from __future__ import annotations

import copyreg
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kplan.model.dra import PodClaim
from kplan.model.resize import ResizeFacts
from kplan.model.selectors import LabelSelector, NodeSelector, PreferredSchedulingTerm
from kplan.model.shared import share_frozen_dataclasses

EMPTY: Mapping[str, str] = MappingProxyType({})


def _mapping_proxy(items: dict[str, object]) -> MappingProxyType[str, object]:
    return MappingProxyType(items)


def _reduce_mapping_proxy(m: MappingProxyType[str, object]) -> tuple[
        Callable[[dict[str, object]], MappingProxyType[str, object]], tuple[dict[str, object]]]:
    return _mapping_proxy, (dict(m),)


# the read-only mappings of the parsed objects must survive pickling: ``kplan sweep`` sends the
# parsed inputs to worker processes (Dask) once instead of having every worker parse the files
copyreg.pickle(MappingProxyType, _reduce_mapping_proxy)


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


def _empty_amounts() -> Mapping[str, int]:
    return MappingProxyType({})

NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "PreferNoSchedule", "NoExecute"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"
PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER = "PreemptLowerPriority", "Never"
DEFAULT_SCHEDULER = "default-scheduler"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def render(self) -> str:
        """How the scheduler prints a taint in a FitError: ``{key: value}``."""
        return f"{{{self.key}: {self.value}}}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """toleration.go ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


def tolerates(tolerations: tuple[Toleration, ...], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def untolerated_taints(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> tuple[Taint, ...]:
    """The taints that keep a pod off a node: the NoSchedule and NoExecute ones its tolerations do
    not tolerate (TaintToleration's Filter, the DaemonSet controller's predicate). The one place
    that rule is written."""
    return tuple(t for t in taints if t.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerates(tolerations, t))


#: the taint the scheduler sees on a node with spec.unschedulable (a cordoned node)
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
UNSCHEDULABLE_TAINT = Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE)


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """A pod (anti-)affinity term with matchLabelKeys already merged into ``selector``."""

    selector: LabelSelector | None
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """A topologySpreadConstraint; ``selector`` already includes matchLabelKeys."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: LabelSelector | None
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str
    protocol: str
    port: int


@dataclass(frozen=True, slots=True)
class OwnerRef:
    kind: str
    name: str
    controller: bool
    uid: str = ""
    #: apiVersion; PodTopologySpread's default selector only follows "v1" ReplicationControllers and
    #: "apps/v1" ReplicaSets and StatefulSets (helper/spread.go matches the group/version/kind)
    api_version: str = ""


@dataclass(frozen=True, slots=True)
class Volume:
    """A pod volume, reduced to what the volume plugins read."""

    name: str
    #: persistentVolumeClaim.claimName, or the generated claim of an ephemeral volume
    claim_name: str = ""
    #: for in-tree disks: (kind, id, readOnly) with kind "gce" (pdName), "aws" (volumeID),
    #: "rbd" ("pool/image"), "iscsi" (iqn) or "azure-disk" (diskURI)
    disk: tuple[str, str, bool] | None = None
    read_only: bool = False
    #: the claim belongs to a generic ephemeral volume (named <pod>-<volume>)
    ephemeral: bool = False
    #: an RBD volume's Ceph monitors (two RBD volumes are the same image if these overlap)
    monitors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FeatureFacts:
    """The parts of a pod spec from which NodeDeclaredFeatures infers the node features the pod
    needs (k8s.io/component-helpers/nodedeclaredfeatures: each feature's InferForScheduling)."""

    host_network: bool = False
    #: spec.hostUsers (None: not set)
    host_users: bool | None = None
    #: a container or init container has a restartPolicyRules entry with action RestartAllContainers
    restart_all_containers: bool = False
    #: a container, init container or ephemeral container mounts a volume with bindMountOptions
    bind_mount_options: bool = False


NO_FEATURE_FACTS = FeatureFacts()


@dataclass(frozen=True, slots=True)
class ContainerDeviceRequests:
    """One container's requests of extended resources that DRA may serve (DRAExtendedResource,
    KEP-5004): what the scheduler turns into the requests of the claim it creates for the pod."""

    #: the container's index in initContainers followed by containers
    index: int
    #: a non-sidecar init container (it runs before the others and may reuse their devices)
    short_lived: bool
    #: every resource the container requests, sorted by name: a request's position names the
    #: claim's device request (``container-<index>-request-<position>``)
    requested: tuple[str, ...]
    #: extended resource name → the request as an integer, None where it is not one (such a
    #: request gets no devices, as Quantity.AsInt64 fails upstream)
    amounts: Mapping[str, int | None]


@dataclass(frozen=True, eq=False, slots=True)
class Pod:
    """A pod as the scheduler sees it, immutable: admission and binding make new Pods
    (dataclasses.replace), and what a run decides (nominations, placements) lives in the run's
    own state. Equality and hashing are by identity, as for any one object of the input."""

    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str] = field(default_factory=_empty)
    annotations: Mapping[str, str] = field(default_factory=_empty)
    owners: tuple[OwnerRef, ...] = ()
    node_name: str = ""
    scheduler_name: str = DEFAULT_SCHEDULER
    priority: int = 0
    priority_class_name: str = ""
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    #: request A/B of reference 2.3: exact aggregated requests, by resource name
    requests: Mapping[str, int] = field(default_factory=_empty_amounts)
    #: request C: node-side non-zero cpu/memory (pod-level resources honoured)
    nonzero_cpu: int = 0
    nonzero_mem: int = 0
    #: request D: incoming pod in NodeResourcesFit scoring (pod-level resources ignored)
    score_cpu: int = 0
    score_mem: int = 0
    #: limits aggregated like requests (for kplan's ResourceLimits plugin)
    limits: Mapping[str, int] = field(default_factory=_empty_amounts)
    host_ports: tuple[HostPort, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=_empty)
    required_node_affinity: NodeSelector | None = None
    preferred_node_affinity: tuple[PreferredSchedulingTerm, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    affinity_required: tuple[PodAffinityTerm, ...] = ()
    affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    spread_constraints: tuple[SpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    #: container images in initContainers + containers order (duplicates kept)
    images: tuple[str, ...] = ()
    #: image volumes' image.reference, in volume order (ImageLocality counts them from 1.36)
    volume_images: tuple[str, ...] = ()
    volumes: tuple[Volume, ...] = ()
    feature_facts: FeatureFacts = NO_FEATURE_FACTS
    #: names of the volumes that keep data on the node (hostPath; emptyDir not in memory)
    local_volumes: tuple[str, ...] = ()
    #: spec.resourceClaims, in order
    resource_claims: tuple[PodClaim, ...] = ()
    #: the containers that request extended resources, in initContainers + containers order
    device_requests: tuple[ContainerDeviceRequests, ...] = ()
    #: status.resourceClaimStatuses: (pod claim name, claim name or None), in order
    claim_statuses: tuple[tuple[str, str | None], ...] = ()
    #: what its status says of an in-place resize, for the releases' rules of what a running pod
    #: counts (kplan/model/resize.py); None when every rule counts its spec, as for most pods
    resize: ResizeFacts | None = None
    #: seconds since the epoch (float), or None when the input has none
    start_time: float | None = None
    creation_time: float | None = None
    deletion_time: float | None = None
    nominated_node: str = ""
    phase: str = ""
    #: where the object came from, for error messages ("file.yaml: document 3")
    source: str = ""
    #: the input object, kept only for pending pods (workload expansion, output)
    raw: dict[str, object] | None = field(default=None, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def has_affinity(self) -> bool:
        return bool(self.affinity_required or self.affinity_preferred
                    or self.anti_affinity_required or self.anti_affinity_preferred)

    @property
    def terminating(self) -> bool:
        return self.deletion_time is not None

    def controller(self) -> OwnerRef | None:
        for o in self.owners:
            if o.controller:
                return o
        return None


@dataclass(frozen=True, slots=True)
class ImageState:
    names: tuple[str, ...]
    size: int


@dataclass(frozen=True, eq=False, slots=True)
class Node:
    name: str
    labels: Mapping[str, str] = field(default_factory=_empty)
    annotations: Mapping[str, str] = field(default_factory=_empty)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Mapping[str, int] = field(default_factory=_empty_amounts)
    capacity: Mapping[str, int] = field(default_factory=_empty_amounts)
    images: tuple[ImageState, ...] = ()
    #: status.declaredFeatures as the node gives them (NodeDeclaredFeatures, KEP-5328)
    declared_features: tuple[str, ...] = ()
    #: Ready condition status ("True", "False", "Unknown", "" when absent)
    ready: str = ""
    #: spec.providerID ("" when absent): how Karpenter pairs a Node with its NodeClaim
    provider_id: str = ""
    #: metadata.creationTimestamp in seconds since the epoch (None when absent)
    creation_time: float | None = None
    source: str = ""
    raw: dict[str, object] | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY


def _pod_copier(changed: tuple[str, ...]) -> Callable[..., Pod]:
    """A function ``(pod, *values)`` that copies ``pod`` with the fields ``changed`` set to
    ``values``: one straight line of slot stores, written out here as ``dataclasses`` writes its
    ``__init__``, so that a copy runs no loop and no ``__init__``."""
    unknown = [name for name in changed if name not in Pod.__slots__]
    if unknown:
        raise TypeError(f"Pod has no field {unknown[0]!r}")
    given = {name: f"v{k}" for k, name in enumerate(changed)}
    scope: dict[str, Any] = {"_new": object.__new__, "Pod": Pod}
    lines = [f"def copy(pod, {', '.join(given.values())}):", "    new = _new(Pod)"]
    for k, name in enumerate(Pod.__slots__):
        scope[f"set{k}"] = getattr(Pod, name).__set__
        lines.append(f"    set{k}(new, {given.get(name, f'pod.{name}')})")
    lines.append("    return new")
    exec("\n".join(lines), scope)  # noqa: S102 - code made here from Pod's own slot names
    copy: Callable[..., Pod] = scope["copy"]
    return copy


#: changed field names → their copier (_pod_copier)
_POD_COPIERS: dict[tuple[str, ...], Callable[..., Pod]] = {}


def evolve_pod(pod: Pod, **changes: Any) -> Pod:
    """``dataclasses.replace(pod, **changes)`` without running ``__init__`` again: Pod has no
    ``__post_init__`` and no derived fields, so copying the slots is the same object, about four
    times faster (twice again with the copier written out for the fields changed). Binding and
    loading make one per pod (10,000s of them in a large run)."""
    names = tuple(changes)
    copier = _POD_COPIERS.get(names)
    if copier is None:
        copier = _POD_COPIERS[names] = _pod_copier(names)
    return copier(pod, *changes.values())


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector | None
    #: status.disruptionsAllowed when the object has a status; None means "compute it"
    disruptions_allowed: int | None
    disrupted_pods: frozenset[str] = frozenset()
    min_available: int | str | None = None
    max_unavailable: int | str | None = None


@dataclass(frozen=True, slots=True)
class SelectingObject:
    """A Service, ReplicaSet, ReplicationController or StatefulSet: only its selector matters here.

    These objects switch on PodTopologySpread's system default constraints for the pods they
    select (plugins/helper/spread.go DefaultSelector).
    """

    kind: str
    namespace: str
    name: str
    selector: LabelSelector | None


@dataclass(frozen=True, slots=True)
class Replaced:
    """A pod of the cluster that an applied workload replaces (its old pods leave, or stay with
    --keep-existing): the run's result lists them."""

    pod: Pod
    node: str
    #: "Deployment default/web"
    workload: str
    #: still running (--keep-existing)
    kept: bool


share_frozen_dataclasses(globals())
