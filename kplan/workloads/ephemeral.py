"""Generic ephemeral volumes (pkg/controller/volume/ephemeral/controller.go, v1.34).

For every ``ephemeral`` volume of a new pod the ephemeral volume controller creates the claim
``<pod>-<volume>`` (``ephemeral.VolumeClaimName``) from ``volumeClaimTemplate``: its labels,
annotations and spec, owned by the pod (controller reference), which is what
``ephemeral.VolumeIsForPod`` checks at scheduling. The owner reference carries the UID the pod
is known by in the run (``Pod.uid``: the input's, else the one kplan gives it), not the
input's possibly empty ``metadata.uid``: the real pod always has one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.model.json_tree import copy_tree
from kplan.workloads.common import Obj, sub


def claim_name(pod_name: str, volume_name: str) -> str:
    return f"{pod_name}-{volume_name}"


def ephemeral_claims(pod: Mapping[str, Any], pod_uid: str) -> list[Obj]:
    """The claims of the pod's generic ephemeral volumes, owned by the pod of UID ``pod_uid``."""
    md, spec = sub(pod, "metadata"), sub(pod, "spec")
    name = str(md.get("name") or "")
    out: list[Obj] = []
    for v in spec.get("volumes") or []:
        if not isinstance(v, Mapping) or not isinstance(v.get("ephemeral"), Mapping):
            continue
        template = v["ephemeral"].get("volumeClaimTemplate")
        if not isinstance(template, Mapping):
            continue
        tmeta = sub(template, "metadata")
        meta: Obj = {"name": claim_name(name, str(v.get("name") or "")),
                     "namespace": str(md.get("namespace") or "default"),
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": pod_uid,
                                          "controller": True, "blockOwnerDeletion": True}]}
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                    "spec": copy_tree(dict(template.get("spec") or {}))})
    return out
