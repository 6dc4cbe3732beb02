"""The parsed inputs of a run: every object of the cluster and the manifests, parsed once into its
typed form (``classify``).

Kinds used: Node, Pod, Namespace, PriorityClass, PodDisruptionBudget, and Service, ReplicaSet,
StatefulSet, ReplicationController (their selectors switch on default topology spreading),
the storage kinds (PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver,
CSIStorageCapacity, VolumeAttachment), the resource.k8s.io kinds (DeviceClass, ResourceSlice,
ResourceClaim, ResourceClaimTemplate), HorizontalPodAutoscaler (autoscaling/v1 and v2, for
``--hpa``), LimitRange, ResourceQuota (kplan.workloads.resourcequota), and Karpenter's NodePool
and NodeClaim (karpenter.sh/v1, for ``--autoscaler karpenter``). Other kinds are reported once per kind as
skipped (kplan.scenario.build). Pods with ``spec.nodeName`` are running; pods without are
pending, in the order given (cluster files first, then manifests, which kplan.io.apply applies).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kplan.model.autoscaling import KIND as HPA_KIND
from kplan.model.autoscaling import HorizontalPodAutoscaler, parse_hpa
from kplan.model.dra import DraObject
from kplan.model.karpenter import NodeClaim, NodePool
from kplan.model.objects import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    Replaced,
    SelectingObject,
)
from kplan.model.parse import (
    STORAGE_PARSERS,
    parse_namespace,
    parse_node,
    parse_pdb,
    parse_pod,
    parse_priority_class,
    parse_resource_quota,
    parse_selecting_object,
)
from kplan.model.parse_dra import DRA_PARSERS
from kplan.model.parse_karpenter import is_karpenter_object, parse_node_claim, parse_node_pool
from kplan.model.quota import ResourceQuota
from kplan.model.raw import RawObject
from kplan.model.storage import StorageObject
from kplan.workloads import WORKLOAD_KINDS

SELECTING_KINDS = ("Service", "ReplicaSet", "StatefulSet", "ReplicationController")
#: kinds kplan reads but does not turn into typed objects itself (kplan.io.apply expands them)
HANDLED_KINDS = ("LimitRange", *WORKLOAD_KINDS)
#: cluster kinds whose objects are validated as they are classified: they are few (a cluster's
#: pods and workloads, up to 150,000, were accepted by its API server and are parsed as they come)
VALIDATED_CLUSTER_KINDS = frozenset({"Node", "Namespace", "PriorityClass", "PodDisruptionBudget", "LimitRange",
                                     "StorageClass", "PersistentVolume", "PersistentVolumeClaim"})

S = TypeVar("S", bound=StorageObject)
D = TypeVar("D", bound=DraObject)


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
    storage: list[StorageObject] = field(default_factory=list)
    #: cluster pods that applied workloads replace (kplan.io.apply)
    replaced: list[Replaced] = field(default_factory=list)
    #: pending pod uid → the pod that must run first (a StatefulSet's OrderedReady policy)
    created_after: dict[str, str] = field(default_factory=dict)
    #: uids of pods whose priority is already final (settled at load; what-if replacements)
    admitted: set[str] = field(default_factory=set)
    #: one line per invalid object of the validated cluster kinds (kplan.validation)
    invalid: list[str] = field(default_factory=list)
    #: typed resource.k8s.io objects (model/dra.py), in input order
    dra: list[DraObject] = field(default_factory=list)
    #: the manifests' DaemonSets by (namespace, name), as applied (kplan.io.apply)
    applied_daemonsets: dict[tuple[str, str], RawObject] = field(default_factory=dict)
    #: the pods the DaemonSet controller creates for nodes a what-if adds (kplan.whatif.changes):
    #: each run schedules them before the pending pods (kplan.whatif.plan)
    node_daemons: list[Pod] = field(default_factory=list)
    #: HorizontalPodAutoscalers by (namespace, name): the cluster's, then the manifests' (which
    #: configure one of the same name, as kubectl apply would)
    hpas: dict[tuple[str, str], HorizontalPodAutoscaler] = field(default_factory=dict)
    #: Karpenter's NodePools and NodeClaims (karpenter.sh), in input order
    node_pools: list[NodePool] = field(default_factory=list)
    node_claims: list[NodeClaim] = field(default_factory=list)
    #: ResourceQuotas by (namespace, name): the cluster's, then the manifests' (which configure one
    #: of the same name, as kubectl apply would)
    quotas: dict[tuple[str, str], ResourceQuota] = field(default_factory=dict)
    #: the cluster's pods before the manifests are applied (kplan.io.workspace): what quotas were
    #: charged for; every other pending pod is one kplan creates, and goes through quota admission
    cluster_pods: tuple[Pod, ...] = ()

    def daemonsets(self) -> list[tuple[RawObject, Mapping[str, Any] | None]]:
        """Every DaemonSet, by namespace and name: the cluster's, and the manifests' (which
        configure a cluster one of the same name), each with the cluster's object it replaces."""
        cluster: dict[tuple[str, str], RawObject] = {}
        for obj in self.other.get("DaemonSet", []):
            md = obj.doc.get("metadata")
            md = md if isinstance(md, Mapping) else {}
            cluster[(str(md.get("namespace") or "default"), str(md.get("name") or ""))] = obj
        out: dict[tuple[str, str], tuple[RawObject, Mapping[str, Any] | None]] = {
            key: (obj, None) for key, obj in cluster.items()}
        for key, obj in self.applied_daemonsets.items():
            old = cluster.get(key)
            out[key] = (obj, old.doc if old is not None else None)
        return [out[key] for key in sorted(out)]

    def storage_of(self, kind: type[S]) -> list[S]:
        """The storage objects of one type, in input order."""
        return [x for x in self.storage if isinstance(x, kind)]

    def dra_of(self, kind: type[D]) -> list[D]:
        """The resource.k8s.io objects of one type, in input order."""
        return [x for x in self.dra if isinstance(x, kind)]


def classify(objects: Iterable[RawObject], into: Inputs | None = None) -> Inputs:
    """Parse each object once into its typed form, into ``into`` (default: new inputs)."""
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
                continue  # not parsed: building reports every invalid object at once
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
        elif kind == HPA_KIND and str(d.get("apiVersion", "autoscaling/")).startswith("autoscaling/"):
            hpa = parse_hpa(d, src)
            out.hpas[(hpa.namespace, hpa.name)] = hpa
        elif is_karpenter_object(d):
            if kind == "NodePool":
                out.node_pools.append(parse_node_pool(d, src))
            else:
                out.node_claims.append(parse_node_claim(d, src))
        elif kind == "ResourceQuota":
            quota = parse_resource_quota(d, src)
            out.quotas[(quota.namespace, quota.name)] = quota
        elif kind in SELECTING_KINDS:
            out.selecting.append(parse_selecting_object(d, src))
            out.other.setdefault(str(kind), []).append(obj)
        else:
            out.other.setdefault(str(kind), []).append(obj)
    return out
