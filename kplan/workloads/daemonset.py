"""DaemonSet (pkg/controller/daemon/daemon_controller.go, util/daemonset_util.go, v1.34).

One pod per eligible node. ``NodeShouldRunDaemonPod``: the template's ``nodeName`` (if any) is
the node, the template's nodeSelector and required node affinity match the node
(``GetRequiredNodeAffinity(pod).Match``), and no NoSchedule/NoExecute taint of the node is left
untolerated by the template's tolerations plus the ones ``AddOrUpdateDaemonPodTolerations``
adds: ``node.kubernetes.io/not-ready`` and ``unreachable`` (NoExecute), ``disk-pressure``,
``memory-pressure``, ``pid-pressure``, ``unschedulable`` and, with hostNetwork,
``network-unavailable`` (NoSchedule), all ``Exists``. So a daemon pod goes to a cordoned node
or a node under pressure, but not to a NotReady node, which also carries
``node.kubernetes.io/not-ready:NoSchedule``.

Each pod is ``CreatePodTemplate`` (those tolerations, labels ``controller-revision-hash`` and
``pod-template-generation``: the ``deprecated.daemonset.template.generation`` annotation, 1 for a new
DaemonSet, one more than the cluster's for a changed template) with ``ReplaceDaemonSetPodNodeNameNodeAffinity``: the required
node affinity becomes one term ``matchFields metadata.name In [<node>]`` (kept preferred terms
and nodeSelector untouched), ``generateName: <daemonset>-``, the DaemonSet as controller.
Nodes are visited in name order (upstream: informer order).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from kplan.model.json_tree import copy_tree
from kplan.model.objects import UNSCHEDULABLE_TAINT_KEY, Node, Toleration, untolerated_taints
from kplan.model.parse import parse_node_affinity, parse_tolerations
from kplan.workloads.common import (
    Obj,
    Reader,
    check_selector,
    controller_ref,
    create_pod,
    pod_from_template,
    template_labels,
)
from kplan.workloads.expansion import Expansion
from kplan.workloads.names import NameGenerator, compute_hash

REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"


def _daemon_tolerations(host_network: bool) -> list[Obj]:
    out = [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": UNSCHEDULABLE_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"},
    ]
    if host_network:
        out.append({"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"})
    return out


def _add_or_update_toleration(tolerations: list[Obj], new: Obj) -> list[Obj]:
    """v1helper.AddOrUpdateTolerationInPodSpec: tolerations with the same key, effect, operator and
    value are replaced by the new one (nothing changes when one already equals it); otherwise the
    new one is appended."""
    out: list[Obj] = []
    updated = False
    for t in tolerations:
        same = (str(t.get("key") or "") == new["key"] and str(t.get("effect") or "") == new["effect"]
                and str(t.get("operator") or "") == new["operator"] and str(t.get("value") or "") == "")
        if same:
            if {k: v for k, v in t.items() if v not in (None, "")} == new:
                return tolerations
            out.append(dict(new))
            updated = True
            continue
        out.append(t)
    if not updated:
        out.append(dict(new))
    return out


def add_daemon_tolerations(spec: dict[str, Any]) -> None:
    """AddOrUpdateDaemonPodTolerations."""
    tolerations = [dict(t) for t in spec.get("tolerations") or [] if isinstance(t, Mapping)]
    for new in _daemon_tolerations(bool(spec.get("hostNetwork"))):
        tolerations = _add_or_update_toleration(tolerations, new)
    spec["tolerations"] = tolerations


def should_run(template_spec: Mapping[str, Any], node: Node, r: Reader) -> bool:
    """NodeShouldRunDaemonPod's first answer (shouldRun) for a template with daemon tolerations."""
    node_name = str(template_spec.get("nodeName") or "")
    if node_name and node_name != node.name:
        return False
    selector = r.map(template_spec.get("nodeSelector"), "spec.template.spec.nodeSelector")
    if any(node.labels.get(str(k)) != str(v) for k, v in selector.items()):
        return False
    affinity = r.map(template_spec.get("affinity"), "spec.template.spec.affinity")
    required, _ = parse_node_affinity(affinity.get("nodeAffinity"), r.where, "spec.template.spec.affinity.nodeAffinity")
    if required is not None and not required.matches(node.name, node.labels):
        return False
    tolerations: tuple[Toleration, ...] = parse_tolerations(template_spec.get("tolerations"), r.where,
                                                            "spec.template.spec.tolerations")
    return not untolerated_taints(node.taints, tolerations)


def replace_node_affinity(spec: dict[str, Any], node_name: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    affinity = dict(spec.get("affinity") or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    required = dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    required["nodeSelectorTerms"] = [term]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    affinity["nodeAffinity"] = node_affinity
    spec["affinity"] = affinity


def expand_daemonset(obj: Mapping[str, Any], source: str, names: NameGenerator, nodes: Sequence[Node], *,
                     existing: Mapping[str, Any] | None = None, skip: Collection[str] = ()) -> Expansion:
    """The pods of the DaemonSet for ``nodes`` (those that should run one). Generated names in
    ``skip`` exist already (the pods of the nodes the DaemonSet covered before): they are not
    given again."""
    r = Reader(obj, source)
    spec = r.spec()
    template = r.template()
    labels = template_labels(template)
    check_selector(r, spec.get("selector"), labels)
    meta_uid = r.meta.get("uid") or ((existing or {}).get("metadata") or {}).get("uid")
    uid = str(meta_uid or names.uid())
    status = r.map(obj.get("status"), "status") or r.map((existing or {}).get("status"), "status")
    collision = r.int(status.get("collisionCount"), "status.collisionCount", None)
    hash_value = compute_hash(template, collision)
    annotations = r.map(r.meta.get("annotations"), "metadata.annotations")
    generation = str(annotations.get(GENERATION_ANNOTATION) or "1")
    if GENERATION_ANNOTATION not in annotations and existing is not None:
        # an update keeps counting: the generation grows when the template changes
        old_ann = r.map(r.map(existing.get("metadata"), "metadata").get("annotations"), "metadata.annotations")
        old_template = r.map(existing.get("spec"), "spec").get("template")
        old_generation = r.int(old_ann.get(GENERATION_ANNOTATION), "metadata.annotations", 1) or 1
        generation = str(old_generation + (0 if old_template == template else 1))

    pod_template = copy_tree(template)
    add_daemon_tolerations(pod_template["spec"])
    md = pod_template.setdefault("metadata", {})
    md["labels"] = {**labels, GENERATION_LABEL: generation, REVISION_LABEL: hash_value}

    names.reserve(skip)
    out = Expansion("DaemonSet", r.namespace, r.name, uid)
    owner = controller_ref("apps/v1", "DaemonSet", r.name, uid)
    for node in sorted(nodes, key=lambda n: n.name):
        if not should_run(pod_template["spec"], node, r):
            continue
        pod = pod_from_template(pod_template, r.namespace, owner)
        replace_node_affinity(pod["spec"], node.name)
        out.pods.append(create_pod(pod, names, generate_name=f"{r.name}-"))
    return out
