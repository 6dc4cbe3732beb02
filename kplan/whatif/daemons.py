"""The DaemonSet pods of the nodes a what-if adds, as the DaemonSet controller creates them.

When a node joins, the DaemonSet controller creates, for each DaemonSet whose template should
run there (kplan.workloads.daemonset: the template's nodeName, nodeSelector and required node
affinity match the node, and its tolerations, with the ones the controller adds, tolerate every
NoSchedule and NoExecute taint of it), one pod whose required node affinity is the single term
``matchFields metadata.name In [<node>]``. The pods go through admission like any new pod
(kplan.workloads.creation). These are the DaemonSets of the cluster input and of the
manifests (a manifest's configures the cluster's of the same name).

A new node carries ``node.kubernetes.io/not-ready`` until its network DaemonSet runs, so on a
real cluster the daemon pods are placed before the pods waiting for room are retried on it:
each run schedules them first (kplan.whatif.plan), and a run's result lists them apart, as the
new nodes' overhead. One that does not fit (too big for the node, a host port taken) stays
pending, as it would.

Names: ``<daemonset>-`` and five characters, drawn from the run's seed and the DaemonSet's
identity, never one a pod of the namespace already has.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kplan.errors import KplanError
from kplan.model.objects import Node, Pod, evolve_pod
from kplan.model.raw import RawObject
from kplan.scenario import Inputs
from kplan.workloads import expand
from kplan.workloads.creation import Created, create_pod_object
from kplan.workloads.names import NameGenerator


@dataclass
class NodeDaemons:
    """The pods created for some added nodes, and what kept a DaemonSet from creating any."""

    created: list[Created] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _meta(doc: Mapping[str, Any]) -> tuple[str, str]:
    md = doc.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    return str(md.get("namespace") or "default"), str(md.get("name") or "")


def missing_daemonsets(inputs: Inputs) -> list[str]:
    """``namespace/name`` of the DaemonSets whose pods run in the cluster input but whose object
    is not in the inputs: an added node gets none of their pods."""
    known = {_meta(obj.doc) for obj, _ in inputs.daemonsets()}
    owners = set()
    for pod in inputs.running:
        ref = pod.controller()
        if ref is not None and ref.kind == "DaemonSet" and (pod.namespace, ref.name) not in known:
            owners.add(f"{pod.namespace}/{ref.name}")
    return sorted(owners)


def daemon_pods(inputs: Inputs, nodes: Sequence[Node], seed: int, in_use: Iterable[Pod]) -> NodeDaemons:
    """The pods every DaemonSet of ``inputs`` creates for the new ``nodes``, in DaemonSet order
    (namespace, name), each DaemonSet's in node-name order. ``in_use``: the pods that exist (their
    names are not given again)."""
    out = NodeDaemons()
    if not nodes:
        return out
    daemonsets = inputs.daemonsets()
    if not daemonsets:
        return out
    names: dict[str, set[str]] = {}
    for p in in_use:
        names.setdefault(p.namespace, set()).add(p.name)
    ranges: dict[str, list[Mapping[str, Any]]] = {}
    for lr in inputs.other.get("LimitRange", []):
        ranges.setdefault(_meta(lr.doc)[0], []).append(lr.doc)
    claim_uids = NameGenerator(seed, "PersistentVolumeClaim/node-daemons")
    for obj, existing in daemonsets:
        out.created += _for_daemonset(obj, existing, nodes, seed, names, ranges, claim_uids, out.notes)
    return out


def _for_daemonset(obj: RawObject, existing: Mapping[str, Any] | None, nodes: Sequence[Node], seed: int,
                   names: dict[str, set[str]], ranges: Mapping[str, list[Mapping[str, Any]]],
                   claim_uids: NameGenerator, notes: list[str]) -> list[Created]:
    ns, name = _meta(obj.doc)
    taken = names.setdefault(ns, set())
    try:
        exp = expand(obj.doc, obj.source, seed=seed, nodes=nodes, existing=existing, skip_pod_names=taken)
    except KplanError as e:
        # a cluster's DaemonSet was accepted by its API server; one kplan cannot read is reported
        # rather than stopping the what-if
        notes.append(f"{e}: the added nodes get no pod of DaemonSet {ns}/{name}")
        return []
    out = []
    for d in exp.pods:
        created = create_pod_object(d, f"{obj.source}: {exp.key}", ranges.get(ns, []), claim_uids.uid)
        taken.add(created.pod.name)
        out.append(created)
    return out


def daemonset_template_pods(inputs: Inputs) -> list[Pod]:
    """One pod per DaemonSet of ``inputs``, as Karpenter's provisioner counts DaemonSet overhead on
    a new node (provisioner.go getDaemonSetPods): a running pod of the DaemonSet when the cluster
    has one (its cluster state keeps one per DaemonSet; kplan takes the first by namespace and
    name), else a pod of the template, in either case with the template's required node affinity
    (the controller's ``metadata.name`` term is a node's, not the DaemonSet's)."""
    from kplan.model.parse import parse_pod

    running: dict[tuple[str, str], Pod] = {}
    for pod in sorted(inputs.running, key=lambda p: (p.namespace, p.name)):
        ref = pod.controller()
        if ref is not None and ref.kind == "DaemonSet":
            running.setdefault((pod.namespace, ref.name), pod)
    out = []
    for obj, _ in inputs.daemonsets():
        ns, name = _meta(obj.doc)
        spec = obj.doc.get("spec")
        template = spec.get("template") if isinstance(spec, Mapping) else None
        template = template if isinstance(template, Mapping) else {}
        tmd = template.get("metadata")
        tmd = tmd if isinstance(tmd, Mapping) else {}
        pod_spec = template.get("spec")
        pod_spec = dict(pod_spec) if isinstance(pod_spec, Mapping) else {}
        doc = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {**tmd, "name": name, "namespace": ns,
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": name,
                                                 "uid": "", "controller": True}]},
               "spec": pod_spec}
        template_pod = parse_pod(doc, f"{obj.source}: DaemonSet {ns}/{name}")
        seen = running.get((ns, name))
        if seen is None:
            out.append(template_pod)
        else:
            out.append(evolve_pod(seen, node_name="", required_node_affinity=template_pod.required_node_affinity))
    return out
