"""StatefulSet (pkg/controller/statefulset/stateful_set_utils.go, stateful_set_control.go, v1.34).

Pods are named ``<set>-<ordinal>`` for ordinals ``spec.ordinals.start`` (default 0) onwards,
``spec.replicas`` of them (default 1), created in ordinal order. ``newStatefulSetPod``:
``GetPodFromTemplate`` with the set as controller, then ``initIdentity`` (labels
``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``, hostname = pod
name, subdomain = ``spec.serviceName``), ``updateStorage`` (every volumeClaimTemplate becomes a
``persistentVolumeClaim`` volume of claim ``<template>-<set>-<ordinal>``, replacing a template
volume of the same name) and the revision label ``controller-revision-hash: <set>-<hash>``.

The claims are ``getPersistentVolumeClaims``: the template with that name, the set's namespace,
and the set's ``selector.matchLabels`` added to its labels; the controller creates a claim only
if it does not exist yet (the caller keeps existing claims).

``podManagementPolicy: OrderedReady`` (the default) creates pod N+1 only when pod N is Running
and Ready: ``Expansion.ordered``. Deviation: upstream orders the claim volumes by Go map
iteration (random); kplan keeps the templates' order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.model.json_tree import copy_tree
from kplan.workloads.common import (
    Reader,
    check_selector,
    controller_ref,
    create_pod,
    pod_from_template,
    template_labels,
)
from kplan.workloads.expansion import Expansion
from kplan.workloads.names import NameGenerator, revision_hash

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"


def claim_name(template_name: str, set_name: str, ordinal: int) -> str:
    """getPersistentVolumeClaimName."""
    return f"{template_name}-{set_name}-{ordinal}"


def expand_statefulset(obj: Mapping[str, Any], source: str, names: NameGenerator, *,
                       existing: Mapping[str, Any] | None = None) -> Expansion:
    r = Reader(obj, source)
    spec = r.spec()
    template = r.template()
    labels = template_labels(template)
    selector = check_selector(r, spec.get("selector"), labels)
    replicas = r.count(spec.get("replicas"), "spec.replicas")
    start = r.int(r.map(spec.get("ordinals"), "spec.ordinals").get("start"), "spec.ordinals.start", 0) or 0
    meta_uid = r.meta.get("uid") or ((existing or {}).get("metadata") or {}).get("uid")
    uid = str(meta_uid or names.uid())
    status = r.map(obj.get("status"), "status") or r.map((existing or {}).get("status"), "status")
    collision = r.int(status.get("collisionCount"), "status.collisionCount", 0)
    revision = f"{r.name}-{revision_hash(template, collision)}"
    policy = str(spec.get("podManagementPolicy") or "OrderedReady")
    if policy not in ("OrderedReady", "Parallel"):
        raise r.fail("spec.podManagementPolicy", f'Unsupported value: "{policy}": supported values: '
                     '"OrderedReady", "Parallel"')

    templates = []
    for i, t in enumerate(r.list(spec.get("volumeClaimTemplates"), "spec.volumeClaimTemplates")):
        t = r.map(t, f"spec.volumeClaimTemplates[{i}]")
        tname = str(r.map(t.get("metadata"), f"spec.volumeClaimTemplates[{i}].metadata").get("name") or "")
        if not tname:
            raise r.fail(f"spec.volumeClaimTemplates[{i}].metadata.name", "Required value")
        templates.append((tname, t))
    match_labels = {str(k): str(v) for k, v in dict(selector.get("matchLabels") or {}).items()}

    out = Expansion("StatefulSet", r.namespace, r.name, uid, ordered=policy == "OrderedReady")
    owner = controller_ref("apps/v1", "StatefulSet", r.name, uid)
    for ordinal in range(start, start + replicas):
        pod_name = f"{r.name}-{ordinal}"
        pod = pod_from_template(template, r.namespace, owner)
        pod_labels = pod["metadata"].setdefault("labels", {})
        pod_labels[POD_NAME_LABEL] = pod_name
        pod_labels[POD_INDEX_LABEL] = str(ordinal)
        pod_labels[REVISION_LABEL] = revision
        pod_spec = pod["spec"]
        pod_spec["hostname"] = pod_name
        if spec.get("serviceName"):
            pod_spec["subdomain"] = str(spec["serviceName"])
        claim_volumes = []
        for tname, t in templates:
            cname = claim_name(tname, r.name, ordinal)
            claim_volumes.append({"name": tname, "persistentVolumeClaim": {"claimName": cname}})
            claim = copy_tree(dict(t))
            meta = dict(claim.get("metadata") or {})
            meta["name"] = cname
            meta["namespace"] = r.namespace
            meta["uid"] = names.uid()
            meta["labels"] = {**dict(meta.get("labels") or {}), **match_labels}
            claim["metadata"] = meta
            claim["apiVersion"] = "v1"
            claim["kind"] = "PersistentVolumeClaim"
            out.claims.append(claim)
        names_of_claims = {tname for tname, _ in templates}
        kept = [v for v in pod_spec.get("volumes") or [] if not (isinstance(v, Mapping) and v.get("name") in names_of_claims)]
        if claim_volumes or kept:
            pod_spec["volumes"] = claim_volumes + kept
        out.pods.append(create_pod(pod, names, name=pod_name))
    return out
