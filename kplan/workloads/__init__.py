"""Workloads in, pods out: what the controllers create when a workload is applied.

Pure functions: Kubernetes objects as dicts in, pod (and claim, ReplicaSet, Job) dicts out; no
I/O. One module per controller; ``expand`` dispatches on the kind. The pods still go through
the API server's admission afterwards (LimitRange defaults: limitrange.py; priority:
model/admission.py) and the ephemeral volume controller (ephemeral.py).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from kplan.model.objects import Node
from kplan.workloads.common import sub
from kplan.workloads.daemonset import expand_daemonset
from kplan.workloads.deployment import expand_deployment
from kplan.workloads.ephemeral import ephemeral_claims
from kplan.workloads.expansion import Expansion
from kplan.workloads.job import expand_cronjob, expand_job
from kplan.workloads.limitrange import apply_limit_ranges
from kplan.workloads.names import NameGenerator
from kplan.workloads.replicaset import expand_replicaset
from kplan.workloads.statefulset import expand_statefulset

__all__ = ["WORKLOAD_KINDS", "Expansion", "NameGenerator", "apply_limit_ranges", "ephemeral_claims", "expand"]

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job", "CronJob")


def expand(obj: Mapping[str, Any], source: str, *, seed: int, nodes: Sequence[Node] = (),
           existing: Mapping[str, Any] | None = None,
           existing_replicasets: Sequence[Mapping[str, Any]] = (),
           skip_pod_names: Collection[str] = (), max_pods: int | None = None) -> Expansion:
    """The pods (and claims, ReplicaSets, Jobs) the controllers create for one applied workload.

    ``existing`` is the cluster's object of the same kind and name, if any (its uid and
    ``status.collisionCount`` carry over, as an update keeps them); ``existing_replicasets`` are
    the cluster's ReplicaSets, for a Deployment's FindNewReplicaSet. A Deployment's, ReplicaSet's
    or ReplicationController's pods whose generated name is in ``skip_pod_names`` (in the
    workload's namespace) are left out, and all after the first ``max_pods``; the pods kept are the
    same with or without them. A DaemonSet's pods are given no name of ``skip_pod_names``.
    """
    kind = str(obj.get("kind") or "")
    md = sub(obj, "metadata")
    scope = f"{kind}/{md.get('namespace') or 'default'}/{md.get('name') or ''}"
    names = NameGenerator(seed, scope)
    if kind == "Deployment":
        return expand_deployment(obj, source, names, existing=existing, existing_replicasets=existing_replicasets,
                                 skip=skip_pod_names, limit=max_pods)
    if kind in ("ReplicaSet", "ReplicationController"):
        return expand_replicaset(obj, source, names, skip_pod_names, max_pods)
    if kind == "StatefulSet":
        return expand_statefulset(obj, source, names, existing=existing)
    if kind == "DaemonSet":
        return expand_daemonset(obj, source, names, nodes, existing=existing, skip=skip_pod_names)
    if kind == "Job":
        return expand_job(obj, source, names, existing=existing)
    if kind == "CronJob":
        return expand_cronjob(obj, source, names, existing=existing)
    raise ValueError(f"not a workload kind: {kind!r}")
