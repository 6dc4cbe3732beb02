"""``kplan whatif --scale KIND/[NAMESPACE/]NAME=REPLICAS``: what the controller does when a
workload's replica count changes, resolved against the parsed inputs into a pure delta.

* The workload is looked up among the cluster's objects and the applied manifests; its current
  pods are the running and pending pods it controls (through its ReplicaSets for a Deployment).
* Scaling up: the workload is expanded with the new count (kplan/workloads, the same seed as
  the manifests, so an applied workload's pods keep their names) and the pods whose names do not
  exist yet are created, through the same admission as applied pods (LimitRange defaults,
  ephemeral claims). A StatefulSet creates the missing ordinals, with their claims, one after
  the other under OrderedReady. For a Job the count is ``spec.parallelism``; it runs
  ``min(parallelism, completions)`` pods.
* Scaling down: a StatefulSet deletes its highest ordinals. The other controllers delete the
  pods ranked first by ``controller.ActivePodsWithRanks`` (replica_set.go getPodsToDelete):
  unscheduled before scheduled, pending before running, lower ``controller.kubernetes.io/
  pod-deletion-cost`` first, pods sharing their node with more pods of the workload first, then
  the most recently started. Deviation: the logarithmic age buckets and restart counts are not
  modelled (kplan's pods carry neither readiness times nor restarts); the newest start goes first.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from typing import Any

from kplan.errors import InputError, UnsupportedError
from kplan.io.apply import Applier
from kplan.model.json_tree import copy_tree
from kplan.model.objects import Pod
from kplan.model.raw import RawObject
from kplan.model.storage import PersistentVolumeClaim
from kplan.scenario import Inputs
from kplan.whatif.changes import ScaleWorkload
from kplan.workloads import expand

KIND_ALIASES = {
    "deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
    "replicaset": "ReplicaSet", "replicasets": "ReplicaSet", "rs": "ReplicaSet",
    "statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet",
    "replicationcontroller": "ReplicationController", "replicationcontrollers": "ReplicationController",
    "rc": "ReplicationController",
    "job": "Job", "jobs": "Job",
}
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
SPEC = re.compile(r"^(?P<kind>[A-Za-z]+)/(?:(?P<ns>[^/=]+)/)?(?P<name>[^/=]+)=(?P<n>[0-9]+)$")


def parse_scale(value: str) -> tuple[str, str | None, str, int]:
    m = SPEC.match(value)
    if m is None:
        raise InputError(f"--scale {value}: expected KIND/[NAMESPACE/]NAME=REPLICAS, e.g. deployment/web=5")
    kind = KIND_ALIASES.get(m["kind"].lower())
    if kind is None:
        if m["kind"].lower() in ("daemonset", "daemonsets", "ds", "cronjob", "cronjobs", "cj"):
            raise InputError(f"--scale {value}: a {m['kind']} has no replica count to scale")
        raise InputError(f"--scale {value}: unknown kind {m['kind']!r}; scalable kinds: Deployment, ReplicaSet, "
                         "StatefulSet, ReplicationController, Job")
    from kplan.workloads.common import MAX_PODS_PER_WORKLOAD

    if len(m["n"]) > 7 or int(m["n"]) > MAX_PODS_PER_WORKLOAD:
        raise InputError(f"--scale {value}: REPLICAS must be at most {MAX_PODS_PER_WORKLOAD} (the most pods kplan "
                         "simulates for one workload)")
    return kind, m["ns"], m["name"], int(m["n"])


def _find(workloads: Mapping[tuple[str, str, str], RawObject], kind: str, ns: str | None, name: str,
          value: str) -> RawObject:
    hits = [(k, o) for k, o in workloads.items() if k[0] == kind and k[2] == name and (ns is None or k[1] == ns)]
    if len(hits) == 1:
        return hits[0][1]
    if len(hits) > 1:
        raise InputError(f"--scale {value}: {kind} {name} exists in namespaces "
                         f"{', '.join(sorted(k[1] for k, _ in hits))}; write {kind.lower()}/NAMESPACE/{name}=N")
    where = f" in namespace {ns}" if ns else ""
    raise InputError(f"--scale {value}: no {kind} named {name}{where} in the cluster or the manifests")


def _with_count(doc: Mapping[str, Any], kind: str, n: int) -> dict[str, Any]:
    d = copy_tree(dict(doc))
    spec = d.setdefault("spec", {})
    spec["parallelism" if kind == "Job" else "replicas"] = n
    return d


def _ordinal(pod: Pod) -> int:
    tail = pod.name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def deletion_order(pods: list[Pod]) -> list[Pod]:
    """The pods in the order the controller deletes them (see the module docstring)."""
    per_node: dict[str, int] = {}
    for p in pods:
        if p.node_name:
            per_node[p.node_name] = per_node.get(p.node_name, 0) + 1

    def cost(p: Pod) -> int:
        try:
            return int(p.annotations.get(DELETION_COST, "0"))
        except ValueError:
            return 0

    def key(p: Pod) -> tuple[Any, ...]:
        started = p.start_time if p.start_time is not None else math.inf
        return (bool(p.node_name), p.phase == "Running" or bool(p.node_name), cost(p),
                -per_node.get(p.node_name, 0), -started, p.namespace, p.name)

    return sorted(pods, key=key)


def resolve_scale(inputs: Inputs, workloads: Mapping[tuple[str, str, str], RawObject], value: str, *,
                  seed: int) -> ScaleWorkload:
    kind, ns, name, n = parse_scale(value)
    obj = _find(workloads, kind, ns, name, value)
    md = obj.doc.get("metadata") or {}
    ns = str(md.get("namespace") or "default")
    label = f"{kind} {ns}/{name}"
    applier = Applier(_scratch(inputs), keep_existing=True, seed=seed)
    current = applier.controlled(kind, ns, name)
    if kind == "Job":
        spec = obj.doc.get("spec") or {}
        completions = spec.get("completions")
        want = min(n, int(completions)) if completions is not None else n
    else:
        want = n
    if want == len(current):
        return ScaleWorkload(label, n, len(current))
    if want < len(current):
        if kind == "StatefulSet":
            doomed = sorted(current, key=lambda p: -_ordinal(p))[:len(current) - want]
        else:
            doomed = deletion_order(current)[:len(current) - want]
        return ScaleWorkload(label, n, len(current), delete=tuple(doomed))
    return _scale_up(inputs, applier, obj, kind, ns, name, n, want, current, label, seed)


def _scratch(inputs: Inputs) -> Inputs:
    """A copy of the inputs the Applier may write into (claims, explicit flags) without touching them."""
    return dataclasses.replace(inputs, storage=list(inputs.storage), explicit=dict(inputs.explicit),
                               pending=list(inputs.pending), warnings=[])


def _scale_up(inputs: Inputs, applier: Applier, obj: RawObject, kind: str, ns: str, name: str, n: int, want: int,
              current: list[Pod], label: str, seed: int) -> ScaleWorkload:
    in_use = {p.name for p in inputs.running + inputs.pending if p.namespace == ns}
    replica_sets = [o.doc for o in inputs.other.get("ReplicaSet", [])
                    if (o.doc.get("metadata") or {}).get("namespace", "default") == ns]
    # the expansion names pods from a seeded sequence: ask for enough to skip the names in use (a
    # Deployment's or ReplicaSet's expansion builds neither those, all the current replicas, nor
    # any pod beyond the ones wanted)
    ask = want if kind == "StatefulSet" else want + len(current)
    try:
        exp = expand(_with_count(obj.doc, kind, ask if kind != "Job" else max(ask, want)), obj.source, seed=seed,
                     nodes=inputs.nodes, existing=obj.doc, existing_replicasets=replica_sets, skip_pod_names=in_use,
                     max_pods=want - len(current))
    except ValueError as e:  # pragma: no cover - kinds are checked by parse_scale
        raise UnsupportedError(f"--scale: {e}") from None
    fresh = [d for d in exp.pods if (d.get("metadata") or {}).get("name") not in in_use]
    fresh = fresh[:want - len(current)]
    scratch = applier.inputs
    before_claims = len(scratch.storage)
    wanted_claims = {str(v["persistentVolumeClaim"]["claimName"]) for d in fresh
                     for v in (d.get("spec") or {}).get("volumes") or []
                     if isinstance(v, Mapping) and isinstance(v.get("persistentVolumeClaim"), Mapping)}
    for claim in exp.claims:
        if str((claim.get("metadata") or {}).get("name")) in wanted_claims:
            applier.add_claim(claim, f"{obj.source}: {exp.key}")
    pods = [applier.create_pod(d, f"{obj.source}: {exp.key}") for d in fresh]
    claims = tuple(c for c in scratch.storage[before_claims:] if isinstance(c, PersistentVolumeClaim))
    order: list[tuple[str, str]] = []
    if exp.ordered and pods:
        last = max(current, key=_ordinal, default=None)
        previous = last if last is not None and not last.node_name else None
        for p in pods:
            if previous is not None:
                order.append((p.uid, previous.uid))
            previous = p
    explicit = tuple((p.uid, scratch.explicit[p.uid]) for p in pods if p.uid in scratch.explicit)
    return ScaleWorkload(label, n, len(current), add=tuple(pods), claims=claims, created_after=tuple(order),
                         explicit=explicit)
