"""The replicas ``kplan capacity`` counts: identical pods made from a Pod or a workload manifest.

The file's object goes through what creating it would do (io/apply.py): a Pod through
admission (LimitRange defaults, ephemeral claims, priority); a Deployment, ReplicaSet,
ReplicationController, StatefulSet or Job through its controller's expansion, so the replicas
carry the controller's labels and owner (a ReplicaSet's selector switches on default topology
spreading, as it does for the real pods). The existing pods of the same workload stay. Replica k
is named ``<name>-capacity-<k>``; a StatefulSet's replicas take the next ordinals instead, with
their pod-name and pod-index labels. Replicas of a pod with resource claims from templates get
claims of their own when they are created (Simulation.add_pending, as the resourceclaim
controller makes them); claims named by ``resourceClaimName`` are shared by every replica.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from kplan.errors import InputError
from kplan.io.apply import Applier
from kplan.model.admission import admit_priority, with_builtin_classes
from kplan.model.json_tree import copy_tree
from kplan.model.objects import Pod
from kplan.model.parse import parse_selecting_object
from kplan.model.raw import RawObject
from kplan.scenario import Inputs
from kplan.workloads import expand
from kplan.workloads.statefulset import POD_INDEX_LABEL, POD_NAME_LABEL

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


#: why a StatefulSet with volumeClaimTemplates gets no extra replicas
CLAIMS_NOT_ADDED = ("more replicas of a StatefulSet with volumeClaimTemplates would each need claims of their own, "
                    "which kplan capacity does not create: only the declared replicas are counted")


def replica_factory(inputs: Inputs, obj: RawObject, *, seed: int) -> tuple[Pod, Callable[[int], Pod] | None, str]:
    """(the template pod, replica k → a fresh pod, "Kind namespace/name"). ``inputs`` gains what creating the workload adds
    (the selectors of its ReplicaSets); its pending pods are unchanged. No replica function (None)
    for a StatefulSet with volumeClaimTemplates: see CLAIMS_NOT_ADDED."""
    doc = obj.doc
    kind = str(doc.get("kind"))
    raw_md = doc.get("metadata")
    md: dict[str, Any] = dict(raw_md) if isinstance(raw_md, dict) else {}
    applier = Applier(inputs, keep_existing=True, seed=seed)
    if kind == "Pod":
        d = copy_tree(doc)
        d["metadata"] = {**md, "namespace": str(md.get("namespace") or "default")}
        if (d.get("spec") or {}).get("nodeName"):
            raise InputError(f"{obj.source}: Pod {d['metadata']['namespace']}/{md.get('name')}: spec.nodeName is set; "
                             "the scheduler never places such a pod")
        template = applier.create_pod(d, obj.source)
        base, ordinal = template.name, None
    elif kind in REPLICATED_KINDS:
        ns = str(md.get("namespace") or "default")
        name = str(md.get("name") or "")
        d = _one({**doc, "metadata": {**md, "namespace": ns}}, kind)
        replica_sets = [o.doc for o in inputs.other.get("ReplicaSet", [])
                        if (o.doc.get("metadata") or {}).get("namespace", "default") == ns]
        exp = expand(d, obj.source, seed=seed, nodes=inputs.nodes, existing=d, existing_replicasets=replica_sets)
        if not exp.pods:
            raise InputError(f"{obj.source}: {exp.key}: its controller creates no pod (suspended or paused?)")
        if kind in ("ReplicaSet", "StatefulSet", "ReplicationController"):
            applier._select(parse_selecting_object(d, obj.source))
        for created in exp.created:
            if created.get("kind") == "ReplicaSet":
                applier._select(parse_selecting_object(created, f"{obj.source}: {exp.key}"))
        template = applier.create_pod(exp.pods[0], f"{obj.source}: {exp.key}")
        base = name
        ordinal = None
        if kind == "StatefulSet":
            taken = [int(p.name.rsplit("-", 1)[1]) for p in inputs.running + inputs.pending
                     if p.namespace == ns and p.name.rsplit("-", 1)[0] == name and p.name.rsplit("-", 1)[1].isdigit()]
            ordinal = max(taken, default=-1) + 1
    else:
        raise InputError(f"{obj.source}: expected a Pod or one of {', '.join(REPLICATED_KINDS)}, found kind {kind!r}")
    explicit = inputs.explicit.get(template.uid, (False, False))
    template = admit_priority(template, with_builtin_classes(inputs.priority_classes), *explicit)

    def replica(k: int) -> Pod:
        if ordinal is not None:
            n = ordinal + k - 1
            labels = {**template.labels, POD_NAME_LABEL: f"{base}-{n}", POD_INDEX_LABEL: str(n)}
            return dataclasses.replace(template, name=f"{base}-{n}", uid=f"{template.uid}-capacity-{k}",
                                       labels=labels, nominated_node="")
        return dataclasses.replace(template, name=f"{base}-capacity-{k}", uid=f"{template.uid}-capacity-{k}",
                                   nominated_node="")

    claims = kind == "StatefulSet" and bool((doc.get("spec") or {}).get("volumeClaimTemplates"))
    return template, None if claims else replica, f"{kind} {template.namespace}/{base}"
