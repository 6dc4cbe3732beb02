"""The replicas ``kplan capacity`` counts: identical pods made from a Pod or a workload manifest.

The file's object goes through what creating it would do (io/apply.py): a Pod through
admission (LimitRange defaults, ephemeral claims, priority); a Deployment, ReplicaSet,
ReplicationController, StatefulSet or Job through its controller's expansion, so the replicas
carry the controller's labels and owner (a ReplicaSet's selector switches on default topology
spreading, as it does for the real pods). The existing pods of the same workload stay. Each
replica is created as the first one was (admission included), named ``<name>-capacity-<k>``; a
StatefulSet's replicas are its controller's pods of the next ordinals instead (pod-name and
pod-index labels, hostname), each with the claims of its volumeClaimTemplates
(``<template>-<set>-<ordinal>``). A replica's PersistentVolumeClaims (those, and its ephemeral
volumes' ``<pod>-<volume>``) come with it and are created in the run just before it
(Simulation.create_claims), unless a claim of that name exists. Replicas of a pod with resource
claims from templates get claims of their own when they are created (Simulation.add_pending, as
the resourceclaim controller makes them); claims named by ``resourceClaimName`` are shared by
every replica.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kplan.errors import InputError
from kplan.io.apply import Applier
from kplan.model.admission import admit_priority, with_builtin_classes
from kplan.model.json_tree import copy_tree
from kplan.model.objects import Pod
from kplan.model.parse import parse_persistent_volume_claim, parse_selecting_object
from kplan.model.raw import RawObject
from kplan.scenario import Inputs
from kplan.whatif.capacity import Replica
from kplan.workloads import NameGenerator, expand
from kplan.workloads.creation import create_pod_object

REPLICATED_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job", "CronJob")


def choose_target(objects: Sequence[RawObject], wanted: str | None) -> RawObject:
    """The Pod or workload of a bundle whose replicas ``kplan capacity`` counts: the one named by
    ``--workload KIND/[NS/]NAME``, or the only Pod or workload of the bundle."""
    candidates = [o for o in objects if o.doc.get("kind") in ("Pod", *REPLICATED_KINDS)]
    if wanted is None:
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            kinds = sorted({str(o.doc.get("kind")) for o in objects})
            raise InputError(f"no Pod or workload ({', '.join(REPLICATED_KINDS)}) to count in the manifests "
                             f"(found {', '.join(kinds) or 'nothing'})")
        raise InputError(f"{len(candidates)} Pods and workloads in the manifests ({_names(candidates)}); "
                         "choose one with --workload KIND/[NAMESPACE/]NAME")
    kind, _, rest = wanted.partition("/")
    ns, _, name = rest.rpartition("/")
    if not kind or not name:
        raise InputError(f"--workload {wanted}: give KIND/NAME or KIND/NAMESPACE/NAME, e.g. Deployment/shop/web")
    hits = [o for o in candidates if str(o.doc.get("kind")).lower() == kind.lower()
            and _meta(o)[1] == name and (not ns or _meta(o)[0] == ns)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise InputError(f"--workload {wanted}: no such Pod or workload in the manifests "
                         f"(there: {_names(candidates) or 'none'})")
    raise InputError(f"--workload {wanted}: {len(hits)} objects match ({_names(hits)}); give its namespace")


def _meta(o: RawObject) -> tuple[str, str]:
    md = o.doc.get("metadata")
    md = md if isinstance(md, dict) else {}
    return str(md.get("namespace") or "default"), str(md.get("name") or "")


def _names(objects: Sequence[RawObject]) -> str:
    return ", ".join(f"{o.doc.get('kind')}/{'/'.join(_meta(o))}" for o in objects)


def declared_pods(inputs: Inputs, target: RawObject, seed: int) -> list[Pod]:
    """The pending pods the target itself declares (a workload's replicas, or the Pod), which
    were applied with the rest of the manifests: they are placed before any extra replica."""
    kind = str(target.doc.get("kind"))
    ns, name = _meta(target)
    if kind == "Pod":
        return [p for p in inputs.pending if (p.namespace, p.name) == (ns, name)]
    applier = Applier(inputs, keep_existing=True, seed=seed)
    return [p for p in inputs.pending if applier.controls(kind, ns, name, p)]


def ordered_ready(target: RawObject) -> bool:
    """A StatefulSet whose controller creates a pod only once the one before it runs (OrderedReady,
    the default podManagementPolicy)."""
    spec = target.doc.get("spec")
    policy = spec.get("podManagementPolicy") if isinstance(spec, dict) else None
    return target.doc.get("kind") == "StatefulSet" and (policy or "OrderedReady") == "OrderedReady"


def _one(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    d = copy_tree(doc)
    spec = d.setdefault("spec", {})
    if kind == "CronJob":
        # the replicas are pods of the Job the CronJob creates from its template, one at a time
        spec["suspend"] = False
        job_spec = spec.setdefault("jobTemplate", {}).setdefault("spec", {})
        job_spec.update({"parallelism": 1, "completions": None, "suspend": False})
    elif kind == "Job":
        spec["parallelism"] = 1
        spec["completions"] = None
        spec["suspend"] = False
    else:
        spec["replicas"] = 1
    return d


def replica_factory(inputs: Inputs, obj: RawObject, *, seed: int) -> tuple[Pod, Callable[[int], Replica], str]:
    """(the template pod, replica k → a fresh Replica, "Kind namespace/name"). ``inputs`` gains what
    creating the workload adds (the selectors of its ReplicaSets); its pending pods and storage are
    unchanged: a replica's claims are created in the run, just before it."""
    doc = obj.doc
    kind = str(doc.get("kind"))
    raw_md = doc.get("metadata")
    md: dict[str, Any] = dict(raw_md) if isinstance(raw_md, dict) else {}
    applier = Applier(inputs, keep_existing=True, seed=seed)
    ns = str(md.get("namespace") or "default")
    name = str(md.get("name") or "")
    if kind == "Pod":
        d = copy_tree(doc)
        d["metadata"] = {**md, "namespace": ns}
        if (d.get("spec") or {}).get("nodeName"):
            raise InputError(f"{obj.source}: Pod {ns}/{md.get('name')}: spec.nodeName is set; "
                             "the scheduler never places such a pod")
        pod_doc, source = d, obj.source
        ordinal = None
    elif kind in REPLICATED_KINDS:
        one = _one({**doc, "metadata": {**md, "namespace": ns}}, kind)
        replica_sets = [o.doc for o in inputs.other.get("ReplicaSet", [])
                        if (o.doc.get("metadata") or {}).get("namespace", "default") == ns]
        exp = expand(one, obj.source, seed=seed, nodes=inputs.nodes, existing=one, existing_replicasets=replica_sets)
        if not exp.pods:
            raise InputError(f"{obj.source}: {exp.key}: its controller creates no pod (suspended or paused?)")
        if kind in ("ReplicaSet", "StatefulSet", "ReplicationController"):
            applier._select(parse_selecting_object(one, obj.source))
        for created in exp.created:
            if created.get("kind") == "ReplicaSet":
                applier._select(parse_selecting_object(created, f"{obj.source}: {exp.key}"))
        source = f"{obj.source}: {exp.key}"
        pod_doc = exp.pods[0]
        ordinal = None
        if kind == "StatefulSet":
            taken = [int(p.name.rsplit("-", 1)[1]) for p in inputs.running + inputs.pending
                     if p.namespace == ns and p.name.rsplit("-", 1)[0] == name and p.name.rsplit("-", 1)[1].isdigit()]
            ordinal = max(taken, default=-1) + 1
    else:
        raise InputError(f"{obj.source}: expected a Pod or one of {', '.join(REPLICATED_KINDS)}, found kind {kind!r}")
    classes = with_builtin_classes(inputs.priority_classes)
    limit_ranges = applier._limit_ranges(ns)
    first = create_pod_object(copy_tree(pod_doc), source, limit_ranges, lambda: "")
    explicit = first.explicit
    template = admit_priority(first.pod, classes, *explicit)
    claim_uids = NameGenerator(seed, f"PersistentVolumeClaim/capacity/{kind}/{ns}/{name}")

    def replica(k: int) -> Replica:
        uid = f"{template.uid}-capacity-{k}"
        claims: list[dict[str, Any]] = []
        if ordinal is not None:
            # the StatefulSet controller's pod and claims for the next ordinal, as for its declared replicas
            one = _one({**doc, "metadata": {**md, "namespace": ns}}, kind)
            one["spec"]["ordinals"] = {"start": ordinal + k - 1}
            exp = expand(one, obj.source, seed=seed, nodes=inputs.nodes, existing=one)
            d = exp.pods[0]
            claims = exp.claims
            for claim in claims:
                claim["metadata"]["uid"] = claim_uids.uid()
        else:
            d = copy_tree(pod_doc)
            d["metadata"] = {**d["metadata"], "name": f"{template.name if kind == 'Pod' else name}-capacity-{k}"}
        d["metadata"] = {**d["metadata"], "uid": uid}
        status = d.get("status")
        if isinstance(status, dict):
            d["status"] = {k2: v for k2, v in status.items() if k2 != "nominatedNodeName"}
        created = create_pod_object(d, source, limit_ranges, claim_uids.uid)
        pod = admit_priority(created.pod, classes, *explicit)
        parsed = tuple(parse_persistent_volume_claim(c, f"{source}: claim") for c in [*claims, *created.claims])
        return Replica(pod, parsed)

    return template, replica, f"{kind} {template.namespace}/{template.name if kind == 'Pod' else name}"
