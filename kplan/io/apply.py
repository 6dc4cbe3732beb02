"""Applying manifests to the cluster: what the API server and the controllers would create.

The manifests (after the cluster) are applied in two passes, as ``kubectl apply`` followed by
the controllers: first every object that is not a pod or a workload (namespaces, priority
classes, LimitRanges, storage, services, budgets), then the pods and workloads in file order.
A workload becomes the pods its controllers create (kplan/workloads); every new pod goes
through LimitRange defaults (admission) and gets the claims of its generic ephemeral volumes.

A workload (or a bare pod) whose kind, namespace and name are already in the cluster input
replaces it: the pods it controls through the ReplicaSet / StatefulSet / DaemonSet / Job chain
leave before scheduling starts, unless ``keep_existing``, in which case they stay and the new
pods are scheduled next to them. The pods a workload controls are found through the cluster's
ReplicaSet and Job objects, or, when the input holds only pods, through the names the
controllers give (``<deployment>-<pod-template-hash>``, ``<cronjob>-<minutes>``).

Objects a Helm chart marks as test hooks (``helm.sh/hook: test``) are skipped: only
``helm test`` creates them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kplan.errors import InputError
from kplan.model.json_tree import copy_tree
from kplan.model.objects import Pod, Replaced
from kplan.model.parse import STORAGE_PARSERS, parse_persistent_volume_claim
from kplan.model.raw import RawObject
from kplan.model.storage import StorageObject
from kplan.scenario import Inputs, classify
from kplan.workloads import WORKLOAD_KINDS, NameGenerator, expand
from kplan.workloads.common import sub
from kplan.workloads.creation import create_pod_object

CLUSTER_SCOPED = frozenset({
    "Node", "Namespace", "PersistentVolume", "StorageClass", "PriorityClass", "CSINode", "CSIDriver",
    "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "APIService", "IngressClass",
    "RuntimeClass", "VolumeAttachment", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
    "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "PodSecurityPolicy", "VolumeSnapshotClass",
})


def with_namespace(objects: Iterable[RawObject], namespace: str) -> list[RawObject]:
    """``-n``: namespaced objects that name no namespace get this one."""
    out = []
    for obj in objects:
        d = obj.doc
        md = d.get("metadata")
        if str(d.get("kind")) not in CLUSTER_SCOPED and (not isinstance(md, Mapping) or not md.get("namespace")):
            d = {**d, "metadata": {**(md if isinstance(md, Mapping) else {}), "namespace": namespace}}
        out.append(RawObject(d, obj.source))
    return out


def is_helm_test_hook(d: Mapping[str, Any]) -> bool:
    md = d.get("metadata")
    ann = md.get("annotations") if isinstance(md, Mapping) else None
    hooks = str(ann.get("helm.sh/hook") or "") if isinstance(ann, Mapping) else ""
    return any(h.strip() in ("test", "test-success", "test-failure") for h in hooks.split(","))


def _meta(d: Mapping[str, Any]) -> tuple[str, str]:
    md = d.get("metadata")
    if not isinstance(md, Mapping):
        return "default", ""
    return str(md.get("namespace") or "default"), str(md.get("name") or "")


def _controller(d: Mapping[str, Any]) -> tuple[str, str] | None:
    md = d.get("metadata")
    for o in (md.get("ownerReferences") or []) if isinstance(md, Mapping) else []:
        if isinstance(o, Mapping) and o.get("controller"):
            return str(o.get("kind") or ""), str(o.get("name") or "")
    return None


class Applier:
    """Applies manifest objects onto classified cluster inputs (see the module docstring)."""

    def __init__(self, inputs: Inputs, *, keep_existing: bool, seed: int) -> None:
        self.inputs = inputs
        self.keep_existing = keep_existing
        self.seed = seed
        self.claim_names = NameGenerator(seed, "PersistentVolumeClaim")
        #: pods by (namespace, name), rebuilt when the pod lists change size behind its back
        self._by_name: dict[tuple[str, str], Pod] = {}
        self._by_name_size = -1
        #: running pods by the workloads that may control them (_owner_keys), and the running
        #: list it was built from (rebuilt when that list is replaced or grows)
        self._owned: dict[tuple[str, str, str], list[Pod]] = {}
        self._owned_of: tuple[list[Pod] | None, int] = (None, -1)
        #: _identity of every storage object in inputs.storage, read up to _storage_seen
        self._storage_ids: set[tuple[str, str]] = set()
        self._storage_seen: tuple[list[StorageObject] | None, int] = (None, 0)   # (the list, items read)
        #: cluster objects by (kind, namespace, name), as given in the cluster input
        self.cluster: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        for kind, objs in inputs.other.items():
            for o in objs:
                ns, name = _meta(o.doc)
                self.cluster[(kind, ns, name)] = o.doc

    # ------------------------------------------------------------------ ownership

    def controls(self, kind: str, ns: str, name: str, pod: Pod) -> bool:
        """Whether the workload ``kind ns/name`` controls ``pod`` (directly or through a ReplicaSet/Job)."""
        if pod.namespace != ns:
            return False
        ref = pod.controller()
        if ref is None:
            return False
        if (ref.kind, ref.name) == (kind, name):
            return True
        middle = {"Deployment": "ReplicaSet", "CronJob": "Job"}.get(kind)
        if middle is None or ref.kind != middle:
            return False
        obj = self.cluster.get((middle, ns, ref.name))
        if obj is not None:
            return _controller(obj) == (kind, name)
        if kind == "Deployment":
            h = pod.labels.get("pod-template-hash")
            return h is not None and ref.name == f"{name}-{h}"
        return re.fullmatch(re.escape(name) + r"-[0-9]+", ref.name) is not None

    def _owner_keys(self, pod: Pod) -> set[tuple[str, str, str]]:
        """(namespace, kind, name) of every workload that ``controls`` could find controlling the pod:
        its controller, and the Deployment or CronJob above a ReplicaSet or Job controller."""
        ref = pod.controller()
        if ref is None:
            return set()
        ns = pod.namespace
        keys = {(ns, ref.kind, ref.name)}
        middle_of = {"ReplicaSet": "Deployment", "Job": "CronJob"}.get(ref.kind)
        if middle_of is None:
            return keys
        obj = self.cluster.get((ref.kind, ns, ref.name))
        if obj is not None:
            above = _controller(obj)
            if above is not None:
                keys.add((ns, above[0], above[1]))
        elif middle_of == "Deployment":
            h = pod.labels.get("pod-template-hash")
            if h is not None and ref.name.endswith(f"-{h}"):
                keys.add((ns, middle_of, ref.name[:-len(h) - 1]))
        else:
            keys.add((ns, middle_of, ref.name.rsplit("-", 1)[0]))
        return keys

    def controlled(self, kind: str, ns: str, name: str) -> list[Pod]:
        """The pods (running, then pending) that the workload ``kind ns/name`` controls. The running
        pods come from an index by owner, so applying many workloads onto a large cluster stays
        linear; the index only narrows the search, ``controls`` decides."""
        running: list[Pod] = self.inputs.running
        built_from, built_len = self._owned_of
        if built_from is not running or built_len != len(running):
            owned: dict[tuple[str, str, str], list[Pod]] = {}
            for p in running:
                for key in self._owner_keys(p):
                    owned.setdefault(key, []).append(p)
            self._owned, self._owned_of = owned, (running, len(running))
        pool = self._owned.get((ns, kind, name), []) + self.inputs.pending
        return [p for p in pool if self.controls(kind, ns, name, p)]

    def replace(self, kind: str, ns: str, name: str, match: Any, candidates: list[Pod] | None = None) -> None:
        """Remove (or keep, with --keep-existing) the cluster's pods that ``match``.

        ``candidates`` narrows the search when the caller knows which pods can match (a bare pod
        can only replace the pod of the same name), so applying many pods stays linear.
        """
        inputs = self.inputs
        label = f"{kind} {ns}/{name}"
        pool = candidates if candidates is not None else inputs.running + inputs.pending
        old = [p for p in pool if match(p)]
        if not old:
            return
        for p in old:
            inputs.replaced.append(Replaced(p, p.node_name, label, self.keep_existing))
        if not self.keep_existing:
            gone = {p.uid for p in old}
            inputs.running = [p for p in inputs.running if p.uid not in gone]
            inputs.pending = [p for p in inputs.pending if p.uid not in gone]
            for p in old:
                self._by_name.pop((p.namespace, p.name), None)

    def _named(self, ns: str, name: str) -> list[Pod]:
        if self._by_name_size != len(self.inputs.running) + len(self.inputs.pending):
            self._by_name = {(p.namespace, p.name): p for p in self.inputs.running + self.inputs.pending}
            self._by_name_size = len(self._by_name)
        p = self._by_name.get((ns, name))
        return [p] if p is not None else []

    # ------------------------------------------------------------------ pods

    def _limit_ranges(self, ns: str) -> list[Mapping[str, Any]]:
        return [o.doc for o in self.inputs.other.get("LimitRange", []) if _meta(o.doc)[0] == ns]

    def create_pod(self, d: dict[str, Any], source: str) -> Pod:
        """Admission of one new pod (LimitRange defaults), its ephemeral claims, its parse."""
        ns, _ = _meta(d)
        created = create_pod_object(d, source, self._limit_ranges(ns), self.claim_names.uid)
        for claim in created.claims:
            self.add_claim(claim, f"{source}: ephemeral volume claim")
        self.inputs.explicit[created.pod.uid] = created.explicit
        return created.pod

    def add_claim(self, d: Mapping[str, Any], source: str) -> None:
        claim = parse_persistent_volume_claim(d, source)
        if self._has_storage(_identity(claim)):
            return  # the controllers create a claim only if it does not exist yet
        self.inputs.storage.append(claim)

    def apply_pod(self, obj: RawObject) -> None:
        d = copy_tree(obj.doc)  # admission changes the pod; the input stays as read
        md = dict(d.get("metadata") or {})
        ns = str(md.get("namespace") or "default")
        md["namespace"] = ns
        if not md.get("name") and md.get("generateName"):
            md["name"] = NameGenerator(self.seed, f"Pod/{ns}/{obj.source}").generate(str(md["generateName"]))
        d["metadata"] = md
        spec = sub(d, "spec")
        phase = sub(d, "status").get("phase")
        if phase in ("Succeeded", "Failed"):
            return
        if spec.get("nodeName"):
            classify([RawObject(d, obj.source)], self.inputs)  # created bound: it bypasses the scheduler
            return
        name = str(md.get("name") or "")
        self.replace("Pod", ns, name, lambda p: p.namespace == ns and p.name == name, self._named(ns, name))
        pod = self.create_pod(d, obj.source)
        self.inputs.pending.append(pod)
        self._by_name[(pod.namespace, pod.name)] = pod
        self._by_name_size += 1

    def apply_workload(self, obj: RawObject) -> None:
        from kplan.model.parse import parse_selecting_object

        inputs = self.inputs
        d = obj.doc
        kind = str(d.get("kind"))
        ns, name = _meta(d)
        existing = self.cluster.get((kind, ns, name))
        replica_sets = [o.doc for o in inputs.other.get("ReplicaSet", []) if _meta(o.doc)[0] == ns]
        exp = expand(d, obj.source, seed=self.seed, nodes=inputs.nodes, existing=existing,
                     existing_replicasets=replica_sets)
        inputs.warnings.extend(exp.warnings)
        self.replace(kind, ns, name, lambda p: self.controls(kind, ns, name, p), self.controlled(kind, ns, name))
        if kind in ("ReplicaSet", "StatefulSet", "ReplicationController"):
            self._select(parse_selecting_object(d, obj.source))
        if kind == "DaemonSet":  # it creates pods on the nodes a what-if adds too
            inputs.applied_daemonsets[(ns, name)] = obj
        for created in exp.created:
            if created.get("kind") == "ReplicaSet":
                self._select(parse_selecting_object(created, f"{obj.source}: {exp.key}"))
        for claim in exp.claims:
            self.add_claim(claim, f"{obj.source}: {exp.key}")
        previous: Pod | None = None
        for pd in exp.pods:
            pod = self.create_pod(pd, f"{obj.source}: {exp.key}")
            inputs.pending.append(pod)
            if exp.ordered and previous is not None:
                inputs.created_after[pod.uid] = previous.uid
            previous = pod

    def _select(self, so: Any) -> None:
        sel = self.inputs.selecting
        sel[:] = [s for s in sel if (s.kind, s.namespace, s.name) != (so.kind, so.namespace, so.name)]
        sel.append(so)

    # ------------------------------------------------------------------ entry point

    def apply(self, objects: Sequence[RawObject]) -> None:
        first: list[RawObject] = []
        second: list[RawObject] = []
        from kplan.validation import describe
        from kplan.validation.advice import never_matching
        from kplan.validation.unknown import unknown_fields

        for obj in objects:
            for path in unknown_fields(obj.doc):  # kubectl apply warns and drops them; so does kplan
                self.inputs.warnings.append(f'{obj.source}: {describe(obj.doc)}: unknown field "{path}"')
            for advice in never_matching(obj.doc):  # accepted by the API server, never honoured
                self.inputs.warnings.append(f"{obj.source}: {describe(obj.doc)}: {advice}")
        for obj in self._merge_duplicates(objects):
            kind = str(obj.doc.get("kind"))
            if is_helm_test_hook(obj.doc):
                ns, name = _meta(obj.doc)
                self.inputs.warnings.append(f"{obj.source}: skipped {kind} {ns}/{name}: a Helm test hook runs only "
                                            "with `helm test`")
                continue
            (second if kind == "Pod" or kind in WORKLOAD_KINDS else first).append(obj)
        for obj in first:
            kind = str(obj.doc.get("kind"))
            if kind in STORAGE_PARSERS:
                self._add_storage(obj)
            else:
                classify([obj], self.inputs)
        for obj in second:
            if obj.doc.get("kind") == "Pod":
                self.apply_pod(obj)
            else:
                self.apply_workload(obj)
        self._check_names()

    def _merge_duplicates(self, objects: Sequence[RawObject]) -> list[RawObject]:
        """An object defined twice among the manifests is applied as ``kubectl apply`` applies it
        twice: the first creates it, the later configures it (its content, at the first one's
        place in the order), with a warning naming both files. A Pod cannot be created twice:
        two pending pods of one name are an error, as the second create would be."""
        out: list[RawObject] = []
        at: dict[tuple[str, str, str], int] = {}
        for obj in objects:
            kind = str(obj.doc.get("kind"))
            ns, name = _meta(obj.doc)
            if not name:
                out.append(obj)  # a generateName: every apply creates a new object
                continue
            key = (kind, "" if kind in CLUSTER_SCOPED else ns, name)
            if key not in at:
                at[key] = len(out)
                out.append(obj)
                continue
            earlier = out[at[key]]
            label = f"{kind} {ns + '/' if kind not in CLUSTER_SCOPED else ''}{name}"
            if kind == "Pod" and not (obj.doc.get("spec") or {}).get("nodeName"):
                raise InputError(f'{obj.source}: {label}: metadata.name: Duplicate value: "{name}": the pod is also '
                                 f"defined in {earlier.source} (a second create of a pod fails: AlreadyExists)")
            self.inputs.warnings.append(f"{obj.source}: {label} is also defined in {earlier.source}; as kubectl "
                                        "apply would, the later definition configures it")
            out[at[key]] = RawObject(obj.doc, obj.source)
        return out

    def _add_storage(self, obj: RawObject) -> None:
        item = STORAGE_PARSERS[str(obj.doc.get("kind"))](obj.doc, obj.source)
        ident = _identity(item)
        if self._has_storage(ident):
            self.inputs.warnings.append(f"{obj.source}: {ident[0]} {ident[1]} already exists in the cluster; "
                                        "the cluster's object is used")
            return
        self.inputs.storage.append(item)

    def _has_storage(self, ident: tuple[str, str]) -> bool:
        """Whether inputs.storage holds an object of that identity; the set of identities is
        extended with what was appended since the last call (one StatefulSet adds a claim per
        replica, and a cluster may hold thousands of storage objects)."""
        storage = self.inputs.storage
        # the list itself is kept (not its id(), which a new list could reuse)
        seen_list, seen = self._storage_seen
        if seen > len(storage) or seen_list is not storage:
            self._storage_ids, seen = set(), 0
        for item in storage[seen:]:
            self._storage_ids.add(_identity(item))
        self._storage_seen = (storage, len(storage))
        return ident in self._storage_ids

    def _check_names(self) -> None:
        if not self.keep_existing:
            return
        running = {p.key: p for p in self.inputs.running}
        for p in self.inputs.pending:
            if p.key in running:
                raise InputError(f"{p.source}: Pod {p.key}: --keep-existing: the running pod of that name stays, so "
                                 "the new one cannot be created (a StatefulSet's or a bare pod's name is fixed); "
                                 "apply without --keep-existing to replace it")


def _identity(item: StorageObject) -> tuple[str, str]:
    kind = type(item).__name__
    ns = getattr(item, "namespace", "")
    return kind, f"{ns}/{item.name}" if ns else item.name
