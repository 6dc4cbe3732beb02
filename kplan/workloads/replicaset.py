"""ReplicaSet and ReplicationController (pkg/controller/replicaset/replica_set.go, v1.34).

``manageReplicas`` creates ``spec.replicas`` pods (default 1) from the template, each through
``GetPodFromTemplate`` with ``generateName: <name>-`` and the controller reference.
A ReplicationController's selector defaults to its template's labels (API defaulting).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from kplan.workloads.common import (
    Obj,
    Reader,
    check_selector,
    controller_ref,
    named_pod,
    pod_from_template,
    template_labels,
)
from kplan.workloads.expansion import Expansion
from kplan.workloads.names import NameGenerator


def replica_pods(template: Mapping[str, Any], namespace: str, name: str, owner: Obj, replicas: int,
                 names: NameGenerator, skip: Collection[str] = (), limit: int | None = None) -> list[Obj]:
    """The ``replicas`` pods, less those whose generated name is in ``skip`` (names in use, which
    kplan.io.scale does not create again) and those after the first ``limit``. A skipped pod's name
    and uid are drawn all the same, so that the others' do not depend on which are skipped, but no
    pod is built for it."""
    generate_name = f"{name}-"
    pods: list[Obj] = []
    for _ in range(replicas):
        if limit is not None and len(pods) >= limit:
            break
        pod_name = names.generate(generate_name)
        uid = names.uid()
        if pod_name not in skip:
            pods.append(named_pod(pod_from_template(template, namespace, owner), pod_name, uid, generate_name))
    return pods


def expand_replicaset(obj: Mapping[str, Any], source: str, names: NameGenerator,
                      skip: Collection[str] = (), limit: int | None = None) -> Expansion:
    r = Reader(obj, source)
    spec = r.spec()
    template = r.template()
    labels = template_labels(template)
    if r.kind == "ReplicationController":
        sel = r.map(spec.get("selector"), "spec.selector")
        if any(labels.get(str(k)) != str(v) for k, v in sel.items()):
            shown = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
            raise r.fail("spec.template.metadata.labels", f"Invalid value: {{{shown}}}: `selector` does not match "
                         "template `labels`")
        api_version = "v1"
    else:
        check_selector(r, spec.get("selector"), labels)
        api_version = "apps/v1"
    replicas = r.count(spec.get("replicas"), "spec.replicas")
    uid = r.uid(names)
    owner = controller_ref(api_version, r.kind, r.name, uid)
    out = Expansion(r.kind, r.namespace, r.name, uid)
    out.pods = replica_pods(template, r.namespace, r.name, owner, replicas, names, skip, limit)
    return out
