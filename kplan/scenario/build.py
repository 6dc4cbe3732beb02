"""From the parsed inputs to what a simulation needs: the snapshot and the pending pods.

``settle`` decides once, at load, what admission decides about the pods (priorities, the running
pods' start times); ``build_scenario`` builds a run's snapshot from the inputs and only reads
them. Both take the same steps first (``_admitted``): invalid objects refused, pod names
unique, PriorityClasses with the built-in ones, every pod admitted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kplan.cluster.disruption import disruptions_allowed, pdb_key
from kplan.cluster.dra import DraState
from kplan.cluster.snapshot import Snapshot
from kplan.cluster.storage import StorageState
from kplan.errors import InputError
from kplan.framework.release import Release
from kplan.model import storage as kinds
from kplan.model.admission import admit_priority, with_builtin_classes
from kplan.model.dra import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kplan.model.objects import Node, Pod, PriorityClass, evolve_pod
from kplan.scenario.inputs import HANDLED_KINDS, SELECTING_KINDS, Inputs
from kplan.workloads.names import NameGenerator
from kplan.workloads.resourcequota import refusals

#: start of the input's running pods without a start time (reference 12.1)
RUNNING_EPOCH = datetime(2024, 12, 31, tzinfo=UTC).timestamp()


@dataclass
class Scenario:
    """One run's cluster: the snapshot with the running pods on their nodes, the pending pods in
    order, and the disruptions each PodDisruptionBudget allows."""

    snapshot: Snapshot
    pending: list[Pod]
    #: disruptions allowed per budget, by pdb_key (namespace, name)
    pdb_allowed: dict[tuple[str, str], int]
    warnings: list[str]
    #: what it was built from (created_after: a StatefulSet's creation order; replaced pods)
    inputs: Inputs
    #: the DaemonSet pods of the nodes a what-if added (Inputs.node_daemons), admitted: scheduled
    #: before ``pending``
    daemons: list[Pod] = field(default_factory=list)
    #: pod uid → the API server's error, for the new pods ResourceQuota admission refuses: never
    #: created, so never queued (kplan.workloads.resourcequota)
    refused: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Admission:
    classes: dict[str, PriorityClass]
    pending: list[Pod]
    running: list[Pod]
    daemons: list[Pod]


def _admitted(inputs: Inputs, warnings: list[str] | None) -> _Admission:
    """The steps settling and building share: invalid objects are reported before anything else,
    pod names are unique, and every pod is admitted against the PriorityClasses (the built-in
    ones added). A running pod whose class is missing is warned about into ``warnings``."""
    if inputs.invalid:
        raise InputError("\n".join(inputs.invalid))
    _check_unique(inputs)
    classes = with_builtin_classes(inputs.priority_classes)
    pending = [_admitted_pending(inputs, pod, classes) for pod in inputs.pending]
    running = [_admitted_running(inputs, pod, i, classes, warnings) for i, pod in enumerate(inputs.running)]
    daemons = [_admitted_pending(inputs, pod, classes) for pod in inputs.node_daemons]
    return _Admission(classes, pending, running, daemons)


def _check_unique(inputs: Inputs) -> None:
    pods = inputs.running + inputs.pending + inputs.node_daemons
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
    admission = _admitted(inputs, None)
    inputs.pending, inputs.running = admission.pending, admission.running
    # a running pod whose class is missing stays unadmitted: every build warns about it
    inputs.admitted |= {p.uid for p in inputs.pending}
    inputs.admitted |= {p.uid for p in inputs.running
                        if not (p.priority_class_name and p.priority_class_name not in admission.classes)}


def quota_refusals(inputs: Inputs, running: Sequence[Pod], pending: Sequence[Pod], daemons: Sequence[Pod]
                   ) -> dict[str, str]:
    """ResourceQuota admission of the pods this run creates (the pending pods that were not the
    cluster's, then the new nodes' DaemonSet pods), after the cluster's pods the changes deleted
    gave back what they used."""
    if not inputs.quotas:
        return {}
    cluster = {p.uid for p in inputs.cluster_pods}
    present = {p.uid for p in running} | {p.uid for p in pending}
    gone = [p for p in inputs.cluster_pods if p.uid not in present]
    created = [p for p in (*pending, *daemons) if p.uid not in cluster]
    return refusals(inputs.quotas.values(), inputs.cluster_pods, gone, created, inputs.created_after)


def duplicate_node(nodes: Iterable[Node]) -> str:
    """The error of the first node defined a second time, naming both places (a cluster holds one
    Node of a name: two cluster files, or one file twice, that each list it)."""
    first: dict[str, Node] = {}
    for n in nodes:
        seen = first.setdefault(n.name, n)
        if seen is not n:
            return (f"{n.source or '<input>'}: Node {n.name}: metadata.name: Duplicate value: \"{n.name}\": the node "
                    f"is also defined in {seen.source or '<input>'} (a cluster holds one Node of a name)")
    raise AssertionError("no node is defined twice")


def build_scenario(inputs: Inputs, *, handled_kinds: Iterable[str] = (), seed: int = 0,
                   release: Release | None = None) -> Scenario:
    """The snapshot with the running pods on their nodes, the pending pods, PDB budgets. The inputs
    are only read: pods that ``settle`` has not seen (a what-if's new pods) are admitted into
    this scenario's own copies. A running pod counts on its node what ``release`` (None: the
    default) counts for it, its spec's requests unless its status reports an in-place resize."""
    skipped = sorted(k for k in inputs.other if k not in SELECTING_KINDS and k not in HANDLED_KINDS
                     and k not in set(handled_kinds))
    warnings = list(inputs.warnings)
    for kind in skipped:
        n = len(inputs.other[kind])
        warnings.append(f"skipped {n} object{'s' if n != 1 else ''} of kind {kind}: kplan does not use this kind")
    admission = _admitted(inputs, warnings)
    pending, running = admission.pending, admission.running
    storage = storage_state(inputs)
    snapshot = Snapshot.build(inputs.nodes, namespaces=dict(inputs.namespaces), pdbs=list(inputs.pdbs),
                              priority_classes=admission.classes, selecting=list(inputs.selecting), storage=storage,
                              dra=dra_state(inputs, seed, running, pending + admission.daemons))
    snapshot.table.listeners.append(storage)
    names = {n.name for n in inputs.nodes}
    if not inputs.nodes:
        warnings.append("the cluster has no nodes: no pod can be scheduled (is a Node list missing from --cluster?)")
    warnings += unheard_of(inputs, snapshot.dra, pending) if snapshot.dra is not None else []
    if len(names) != len(inputs.nodes):
        raise InputError(duplicate_node(inputs.nodes))
    placed = []
    counted = (release or Release.of()).resized
    for pod in running:
        if pod.node_name not in names:
            warnings.append(f"{pod.source}: Pod {pod.key} runs on node {pod.node_name}, which is not in the "
                            "cluster; it is ignored")
            continue
        placed.append(counted(pod) if pod.resize is not None else pod)
    placed_in_order = sorted(placed, key=lambda p: (p.namespace, p.name))
    row_of = snapshot.table.row_of
    snapshot.add_pods(placed_in_order, [row_of[pod.node_name] for pod in placed_in_order])
    allowed = {pdb_key(pdb): disruptions_allowed(pdb, placed) for pdb in snapshot.pdbs}
    return Scenario(snapshot, pending, allowed, warnings, inputs, admission.daemons,
                    quota_refusals(inputs, running, pending, admission.daemons))


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
    dra = DraState(inputs.dra_of(DeviceClass), inputs.dra_of(ResourceSlice), inputs.dra_of(ResourceClaim),
                   inputs.dra_of(ResourceClaimTemplate), inputs.dra_of(DeviceTaintRule))
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
    storage = StorageState(inputs.storage_of(kinds.PersistentVolumeClaim), inputs.storage_of(kinds.PersistentVolume),
                           inputs.storage_of(kinds.StorageClass), inputs.storage_of(kinds.CSINode),
                           inputs.storage_of(kinds.CSIDriver), inputs.storage_of(kinds.CSIStorageCapacity),
                           inputs.storage_of(kinds.VolumeAttachment))
    storage.settle({n.name: n for n in inputs.nodes})
    return storage
