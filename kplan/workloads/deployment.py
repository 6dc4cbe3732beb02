"""Deployment (pkg/controller/deployment/sync.go ``getNewReplicaSet``, v1.34).

A new Deployment gets one ReplicaSet named ``<deployment>-<pod-template-hash>``: the hash is
``controller.ComputeHash(template, status.collisionCount)`` (see names.py), added as the
``pod-template-hash`` label to the ReplicaSet, to its template and to its selector's
matchLabels; the ReplicaSet is owned by the Deployment (controller reference) and scaled to
``spec.replicas`` (default 1). Its pods are the ReplicaSet's (replicaset.py).

``FindNewReplicaSet``: when the cluster already holds a ReplicaSet of this Deployment whose
template equals the new one apart from the ``pod-template-hash`` label (oldest first), that
ReplicaSet is the new one and keeps its name. A paused Deployment gets no new ReplicaSet.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from kplan.model.json_tree import copy_tree
from kplan.workloads.common import Obj, Reader, check_selector, controller_ref, template_labels
from kplan.workloads.expansion import Expansion
from kplan.workloads.names import NameGenerator, compute_hash
from kplan.workloads.replicaset import replica_pods

HASH_LABEL = "pod-template-hash"


def _without_hash(template: Mapping[str, Any]) -> Any:
    t = copy_tree(dict(template))
    md = t.get("metadata")
    if isinstance(md, dict) and isinstance(md.get("labels"), dict):
        md["labels"].pop(HASH_LABEL, None)
        if not md["labels"]:
            del md["labels"]
    return t


def _owned_by(rs: Mapping[str, Any], kind: str, name: str) -> bool:
    md = rs.get("metadata")
    refs = md.get("ownerReferences") if isinstance(md, Mapping) else None
    return any(isinstance(o, Mapping) and o.get("controller") and o.get("kind") == kind and o.get("name") == name
               for o in (refs or []))


def find_new_replicaset(template: Mapping[str, Any], existing: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """FindNewReplicaSet: the oldest existing ReplicaSet whose template is EqualIgnoreHash."""
    want = _without_hash(template)

    def created(rs: Mapping[str, Any]) -> str:
        md = rs.get("metadata")
        return str(md.get("creationTimestamp") or "") if isinstance(md, Mapping) else ""

    for rs in sorted(existing, key=created):
        spec = rs.get("spec")
        t = spec.get("template") if isinstance(spec, Mapping) else None
        if isinstance(t, Mapping) and _without_hash(t) == want:
            return rs
    return None


def expand_deployment(obj: Mapping[str, Any], source: str, names: NameGenerator, *,
                      existing: Mapping[str, Any] | None = None,
                      existing_replicasets: Sequence[Mapping[str, Any]] = (),
                      skip: Collection[str] = (), limit: int | None = None) -> Expansion:
    r = Reader(obj, source)
    spec = r.spec()
    template = r.template()
    labels = template_labels(template)
    selector = check_selector(r, spec.get("selector"), labels)
    replicas = r.count(spec.get("replicas"), "spec.replicas")
    meta_uid = r.meta.get("uid") or ((existing or {}).get("metadata") or {}).get("uid")
    uid = str(meta_uid or names.uid())
    out = Expansion("Deployment", r.namespace, r.name, uid)
    if spec.get("paused"):
        out.warnings.append(f"{source}: Deployment {r.namespace}/{r.name} is paused: the deployment controller "
                            "creates no ReplicaSet for it")
        return out

    status = r.map(obj.get("status"), "status") or r.map((existing or {}).get("status"), "status")
    collision = r.int(status.get("collisionCount"), "status.collisionCount", None)
    owned = [rs for rs in existing_replicasets if _owned_by(rs, "Deployment", r.name)]
    reuse = find_new_replicaset(template, owned)
    if reuse is not None:
        rs_name = str(reuse["metadata"]["name"])
        rs_uid = str(reuse["metadata"].get("uid") or names.uid())
        hash_value = template_labels(reuse["spec"]["template"]).get(HASH_LABEL) or rs_name.rsplit("-", 1)[-1]
    else:
        hash_value = compute_hash(template, collision)
        rs_name = f"{r.name}-{hash_value}"
        rs_uid = names.uid()

    rs_labels = {**labels, HASH_LABEL: hash_value}
    rs_template = copy_tree(template)
    rs_template.setdefault("metadata", {})["labels"] = dict(rs_labels)
    rs_selector: Obj = copy_tree(dict(selector))
    rs_selector["matchLabels"] = {**dict(rs_selector.get("matchLabels") or {}), HASH_LABEL: hash_value}
    replicaset: Obj = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": rs_name,
            "namespace": r.namespace,
            "uid": rs_uid,
            "labels": dict(rs_labels),
            "ownerReferences": [controller_ref("apps/v1", "Deployment", r.name, uid)],
        },
        "spec": {
            "replicas": replicas,
            "minReadySeconds": spec.get("minReadySeconds") or 0,
            "selector": rs_selector,
            "template": rs_template,
        },
    }
    out.created.append(replicaset)
    owner = controller_ref("apps/v1", "ReplicaSet", rs_name, rs_uid)
    out.pods = replica_pods(rs_template, r.namespace, rs_name, owner, replicas, names, skip, limit)
    return out
