"""From raw objects to what a simulation needs: the cluster snapshot and the pending pods.

Kinds used: Node, Pod, Namespace, PriorityClass, PodDisruptionBudget, and Service, ReplicaSet,
StatefulSet, ReplicationController (their selectors switch on default topology spreading),
the storage kinds (PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver,
CSIStorageCapacity, VolumeAttachment), the resource.k8s.io kinds (DeviceClass, ResourceSlice,
ResourceClaim, ResourceClaimTemplate) and LimitRange. Other kinds are reported once per kind as skipped. Pods
with ``spec.nodeName`` are running; pods without are pending, in the order given (cluster files
first, then manifests). Manifests are applied by io/apply.py: workloads become the pods their
controllers create, and replace the same workloads of the cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kplan.cluster.disruption import disruptions_allowed, pdb_key
from kplan.cluster.dra import DraState
from kplan.cluster.snapshot import Snapshot
from kplan.cluster.storage import StorageState
from kplan.errors import InputError
from kplan.io.apply import HANDLED_KINDS, STORAGE_PARSERS, Replaced
from kplan.io.manifests import RawObject
from kplan.model.admission import admit_priority, with_builtin_classes
from kplan.model.objects import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    SelectingObject,
    evolve_pod,
)
from kplan.model.parse import (
    parse_namespace,
    parse_node,
    parse_pdb,
    parse_pod,
    parse_priority_class,
    parse_selecting_object,
)
from kplan.model.parse_dra import DRA_PARSERS
from kplan.workloads.names import NameGenerator

#: start of the input's running pods without a start time (reference 12.1)
RUNNING_EPOCH = datetime(2024, 12, 31, tzinfo=UTC).timestamp()
SELECTING_KINDS = ("Service", "ReplicaSet", "StatefulSet", "ReplicationController")


@dataclass
class Inputs:
    nodes: list[Node] = field(default_factory=list)
    running: list[Pod] = field(default_factory=list)
    pending: list[Pod] = field(default_factory=list)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    selecting: list[SelectingObject] = field(default_factory=list)
    #: objects of kinds other plugins or expansions read, by kind
    other: dict[str, list[RawObject]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: (explicit spec.priority, explicit spec.preemptionPolicy) per pending pod uid
    explicit: dict[str, tuple[bool, bool]] = field(default_factory=dict)
    #: typed storage objects (model/storage.py), in input order
    storage: list[Any] = field(default_factory=list)
    #: cluster pods that applied workloads replace (io/apply.py)
    replaced: list[Replaced] = field(default_factory=list)
    #: pending pod uid → the pod that must run first (a StatefulSet's OrderedReady policy)
    created_after: dict[str, str] = field(default_factory=dict)
    #: uids of pods whose priority is already final (settled at load; what-if replacements)
    admitted: set[str] = field(default_factory=set)
    #: one line per invalid object of the validated cluster kinds (kplan.validation)
    invalid: list[str] = field(default_factory=list)
    #: typed resource.k8s.io objects (model/dra.py), in input order
    dra: list[Any] = field(default_factory=list)

    def storage_of(self, kind: str) -> list[Any]:
        return [x for x in self.storage if type(x).__name__ == kind]


#: cluster kinds whose objects are validated as they are classified: they are few (a cluster's
#: pods and workloads, up to 150,000, were accepted by its API server and are parsed as they come)
VALIDATED_CLUSTER_KINDS = frozenset({"Node", "Namespace", "PriorityClass", "PodDisruptionBudget", "LimitRange",
                                     "StorageClass", "PersistentVolume", "PersistentVolumeClaim"})


def classify(objects: Iterable[RawObject], into: Inputs | None = None, *, pending_role: bool = False) -> Inputs:
    """Parse each object once into its typed form."""
    from kplan.validation import problems

    out = into or Inputs()
    for obj in objects:
        d, src = obj.doc, obj.source
        kind = d.get("kind")
        if kind in VALIDATED_CLUSTER_KINDS:
            # a hand-written cluster file can hold what no API server would have accepted (a
            # negative allocatable); the API version is not judged: exports often omit it
            found = problems([obj], api_versions=False)
            if found:
                out.invalid += found
                continue  # not parsed: build_scenario reports every invalid object at once
        if kind == "Pod":
            spec = d.get("spec")
            spec = spec if isinstance(spec, dict) else {}
            status = d.get("status")
            phase = status.get("phase") if isinstance(status, dict) else None
            if phase in ("Succeeded", "Failed"):
                continue  # the scheduler's informer ignores finished pods
            running = bool(spec.get("nodeName"))
            pod = parse_pod(d, src, keep_raw=not running)
            (out.running if running else out.pending).append(pod)
            out.explicit[pod.uid] = (spec.get("priority") is not None, spec.get("preemptionPolicy") is not None)
        elif kind == "Node":
            out.nodes.append(parse_node(d, src))
        elif kind == "Namespace":
            ns = parse_namespace(d, src)
            out.namespaces[ns.name] = ns
        elif kind == "PriorityClass":
            pc = parse_priority_class(d, src)
            out.priority_classes[pc.name] = pc
        elif kind == "PodDisruptionBudget":
            out.pdbs.append(parse_pdb(d, src))
        elif kind in STORAGE_PARSERS:
            out.storage.append(STORAGE_PARSERS[kind](d, src))
        elif kind in DRA_PARSERS and str(d.get("apiVersion", "")).startswith("resource.k8s.io/"):
            out.dra.append(DRA_PARSERS[kind](d, src))
        elif kind in SELECTING_KINDS:
            out.selecting.append(parse_selecting_object(d, src))
            out.other.setdefault(str(kind), []).append(obj)
        else:
            out.other.setdefault(str(kind), []).append(obj)
    return out


@dataclass
class Scenario:
    snapshot: Snapshot
    pending: list[Pod]
    #: disruptions allowed per budget, by pdb_key (namespace, name)
    pdb_allowed: dict[tuple[str, str], int]
    warnings: list[str]
    inputs: Inputs


def _check_unique(inputs: Inputs) -> None:
    pods = inputs.running + inputs.pending
    if len({pod.key for pod in pods}) == len(pods):  # every build checks: the common case first
        return
    seen: dict[str, str] = {}
    for pod in pods:
        if pod.key in seen:
            raise InputError(f"{pod.source}: Pod {pod.key}: metadata.name: Duplicate value: the pod is also defined "
                             f"in {seen[pod.key]}")
        seen[pod.key] = pod.source or "the input"


def _admitted_pending(inputs: Inputs, pod: Pod, classes: dict[str, PriorityClass]) -> Pod:
    if pod.uid in inputs.admitted:
        return pod
    explicit_priority, explicit_policy = inputs.explicit.get(pod.uid, (False, False))
    return admit_priority(pod, classes, explicit_priority, explicit_policy)


def _admitted_running(inputs: Inputs, pod: Pod, i: int, classes: dict[str, PriorityClass],
                      warnings: list[str] | None) -> Pod:
    """A running pod as the scheduler sees it: its priority resolved, its start time known. One
    whose PriorityClass is missing keeps priority 0 and is warned about (into ``warnings``)."""
    if pod.uid not in inputs.admitted and not inputs.explicit.get(pod.uid, (False, False))[0]:
        # a running pod went through admission when it was created: its spec.priority, when the
        # input carries it, is the truth; otherwise resolve its class now
        if pod.priority_class_name and pod.priority_class_name not in classes:
            if warnings is not None:
                warnings.append(f"{pod.source}: Pod {pod.key}: spec.priorityClassName: no PriorityClass with name "
                                f"{pod.priority_class_name} was found; its priority is taken as 0")
        else:
            pod = admit_priority(pod, classes, False, False)
    if pod.start_time is None:
        pod = evolve_pod(pod, start_time=pod.creation_time if pod.creation_time is not None else RUNNING_EPOCH + i)
    return pod


def settle(inputs: Inputs) -> None:
    """What loading decides once about the pods, written into the inputs as new Pod objects:
    priority admission of the pending and running pods and the running pods' start times (by
    their order once the manifests are applied). Every build, and every what-if's build, then
    starts from the same pods; no build changes them."""
    if inputs.invalid:
        # invalid objects are reported before anything else, as build_scenario does
        raise InputError("\n".join(inputs.invalid))
    _check_unique(inputs)
    classes = with_builtin_classes(inputs.priority_classes)
    inputs.pending = [_admitted_pending(inputs, pod, classes) for pod in inputs.pending]
    inputs.running = [_admitted_running(inputs, pod, i, classes, None) for i, pod in enumerate(inputs.running)]
    # a running pod whose class is missing stays unadmitted: every build warns about it
    inputs.admitted |= {p.uid for p in inputs.pending}
    inputs.admitted |= {p.uid for p in inputs.running
                        if not (p.priority_class_name and p.priority_class_name not in classes)}


def build_scenario(inputs: Inputs, *, handled_kinds: Iterable[str] = (), seed: int = 0) -> Scenario:
    """The snapshot with the running pods on their nodes, the pending pods, PDB budgets. The inputs
    are only read: pods that ``settle`` has not seen (a what-if's new pods) are admitted into
    this scenario's own copies."""
    if inputs.invalid:
        raise InputError("\n".join(inputs.invalid))
    warnings = list(inputs.warnings)
    skipped = sorted(k for k in inputs.other if k not in SELECTING_KINDS and k not in HANDLED_KINDS
                     and k not in set(handled_kinds))
    for kind in skipped:
        n = len(inputs.other[kind])
        warnings.append(f"skipped {n} object{'s' if n != 1 else ''} of kind {kind}: kplan does not use this kind")
    classes = with_builtin_classes(inputs.priority_classes)
    _check_unique(inputs)
    pending = [_admitted_pending(inputs, pod, classes) for pod in inputs.pending]
    running = [_admitted_running(inputs, pod, i, classes, warnings) for i, pod in enumerate(inputs.running)]
    storage = storage_state(inputs)
    snapshot = Snapshot.build(inputs.nodes, namespaces=dict(inputs.namespaces), pdbs=list(inputs.pdbs),
                              priority_classes=classes, selecting=list(inputs.selecting), storage=storage,
                              dra=dra_state(inputs, seed, running, pending))
    snapshot.table.listeners.append(storage)
    names = {n.name for n in inputs.nodes}
    if not inputs.nodes:
        warnings.append("the cluster has no nodes: no pod can be scheduled (is a Node list missing from --cluster?)")
    warnings += unheard_of(inputs, snapshot.dra, pending) if snapshot.dra is not None else []
    if len(names) != len(inputs.nodes):
        dup = next(n.name for n in inputs.nodes if sum(1 for m in inputs.nodes if m.name == n.name) > 1)
        raise InputError(f"Node {dup}: metadata.name: Duplicate value: the node is defined twice")
    placed = []
    for pod in running:
        if pod.node_name not in names:
            warnings.append(f"{pod.source}: Pod {pod.key} runs on node {pod.node_name}, which is not in the "
                            "cluster; it is ignored")
            continue
        placed.append(pod)
    placed_in_order = sorted(placed, key=lambda p: (p.namespace, p.name))
    row_of = snapshot.table.row_of
    snapshot.add_pods(placed_in_order, [row_of[pod.node_name] for pod in placed_in_order])
    allowed = {pdb_key(pdb): disruptions_allowed(pdb, placed) for pdb in snapshot.pdbs}
    return Scenario(snapshot, pending, allowed, warnings, inputs)


def _names(items: Sequence[str], most: int = 3) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def unheard_of(inputs: Inputs, dra: DraState, pending: Sequence[Pod]) -> list[str]:
    """What the run takes as kube-scheduler would though the result says nothing of it: a pending
    pod whose ResourceClaim (or template) does not exist waits at PreEnqueue with no condition; a
    pending pod in a namespace the cluster does not list could not have been created; a node
    without allocatable (or capacity, which the API server copies into it) takes no pod at all."""
    out = []
    for pod in pending:
        if pod.resource_claims:
            for what in dra.missing(pod):
                out.append(f"{pod.source}: Pod {pod.key}: {what}: kube-scheduler keeps the pod out of its queue "
                           "(DynamicResources PreEnqueue) and reports no reason")
    if inputs.namespaces:
        absent: dict[str, list[str]] = {}
        for pod in pending:
            if pod.namespace not in inputs.namespaces:
                absent.setdefault(pod.namespace, []).append(pod.name)
        for ns, pods in sorted(absent.items()):
            out.append(f"namespace {ns} is not among the cluster's {len(inputs.namespaces)} namespaces: the API "
                       f'server would refuse its pending pod{"s" if len(pods) != 1 else ""} {_names(pods)} '
                       f'(namespaces "{ns}" not found); simulated as if it existed')
    bare = [n.name for n in inputs.nodes if not n.allocatable]
    if bare:
        out.append(f"node{'s' if len(bare) != 1 else ''} {_names(bare)} "
                   f"{'have' if len(bare) != 1 else 'has'} neither status.allocatable nor status.capacity: "
                   "kube-scheduler sees no cpu, memory or pods there, so no pod fits (is the nodes' status missing "
                   "from the cluster file?)")
    no_pods = [n.name for n in inputs.nodes if n.allocatable and "pods" not in n.allocatable]
    if no_pods:
        out.append(f"node{'s' if len(no_pods) != 1 else ''} {_names(no_pods)}: status.allocatable has no pods "
                   "entry: kube-scheduler allows 0 pods there (Too many pods)")
    return out


def dra_state(inputs: Inputs, seed: int, running: list[Pod], pending: list[Pod]) -> DraState:
    """The DRA objects, with the claims the resourceclaim controller creates from templates for
    each pending pod before the pod exists (scheduler-reference.md 13.1)."""
    dra = DraState(*(([x for x in inputs.dra if type(x).__name__ == kind]) for kind in
                     ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")))
    for pod in running + pending:
        if pod.claim_statuses:  # most pods have none: every build walks them all
            dra.set_pod_statuses(pod, pod.claim_statuses)
    names = NameGenerator(seed, "ResourceClaim")
    for pod in pending:
        if pod.resource_claims:
            dra.create_template_claims(pod, names.generate)
    dra.drain_events()
    return dra


def storage_state(inputs: Inputs) -> StorageState:
    """The storage objects, with the claims the PV controller would already have bound."""
    storage = StorageState(inputs.storage_of("PersistentVolumeClaim"), inputs.storage_of("PersistentVolume"),
                           inputs.storage_of("StorageClass"), inputs.storage_of("CSINode"),
                           inputs.storage_of("CSIDriver"), inputs.storage_of("CSIStorageCapacity"),
                           inputs.storage_of("VolumeAttachment"))
    storage.settle({n.name: n for n in inputs.nodes})
    return storage
