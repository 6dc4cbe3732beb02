"""What kube-apiserver v1.34 would refuse, before kplan schedules anything: API versions and
the validation of every kind kplan reads (pkg/apis/{core,apps,batch,policy,scheduling,storage}/
validation), worded as the API server words its field errors.

Engine-free and below io: the loaders call ``validate_objects`` on what ``kubectl apply`` would
send (the manifests and node files); objects read from a cluster were accepted by its API
server already and are parsed as they come. One line per invalid object, every field error of
the object joined as the API server joins them (``[a: …, b: …]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from kplan.errors import InputError
from kplan.validation import core, dra, workloads
from kplan.validation.field import FieldError

Validator = Callable[[Mapping[str, Any]], list[FieldError]]

#: the served version of each kind kplan validates (kube-apiserver v1.34), and its validator
KINDS: dict[str, tuple[str, Validator]] = {
    "Pod": ("v1", core.validate_pod),
    "Node": ("v1", core.validate_node),
    "Namespace": ("v1", core.validate_namespace),
    "LimitRange": ("v1", core.validate_limit_range),
    "Service": ("v1", workloads.validate_service),
    "ReplicationController": ("v1", workloads.validate_replication_controller),
    "PersistentVolumeClaim": ("v1", workloads.validate_claim),
    "PersistentVolume": ("v1", workloads.validate_volume),
    "Deployment": ("apps/v1", workloads.validate_deployment),
    "ReplicaSet": ("apps/v1", workloads.validate_replica_set),
    "StatefulSet": ("apps/v1", workloads.validate_stateful_set),
    "DaemonSet": ("apps/v1", workloads.validate_daemon_set),
    "Job": ("batch/v1", workloads.validate_job),
    "CronJob": ("batch/v1", workloads.validate_cron_job),
    "PodDisruptionBudget": ("policy/v1", workloads.validate_pdb),
    "PriorityClass": ("scheduling.k8s.io/v1", workloads.validate_priority_class),
    "StorageClass": ("storage.k8s.io/v1", workloads.validate_storage_class),
    "CSINode": ("storage.k8s.io/v1", workloads.validate_meta_only),
    "CSIDriver": ("storage.k8s.io/v1", workloads.validate_meta_only),
    "CSIStorageCapacity": ("storage.k8s.io/v1", workloads.validate_meta_only_namespaced),
    "DeviceClass": ("resource.k8s.io/v1", dra.validate_device_class),
    "ResourceClaim": ("resource.k8s.io/v1", dra.validate_resource_claim),
    "ResourceClaimTemplate": ("resource.k8s.io/v1", dra.validate_resource_claim_template),
    "ResourceSlice": ("resource.k8s.io/v1", dra.validate_resource_slice),
}

#: versions the API server serves besides the one above: in v1.34 only resource.k8s.io has others
#: (extensions/v1beta1 and apps/v1beta* workloads went in 1.16, batch/v1beta1 CronJob and
#: policy/v1beta1 PodDisruptionBudget in 1.25, storage.k8s.io/v1beta1 CSIStorageCapacity in 1.27)
_RESOURCE_BETAS = ("resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")
ALSO_SERVED: dict[str, tuple[str, ...]] = {k: _RESOURCE_BETAS for k in
                                           ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")}


class Located(Protocol):
    doc: dict[str, Any]
    source: str


def api_version_error(d: Mapping[str, Any]) -> str | None:
    """``no matches for kind "CronJob" in version "batch/v1beta1"``, with the served version named."""
    kind = d.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        return None
    served = KINDS[kind][0]
    version = d.get("apiVersion")
    if version == served or version in ALSO_SERVED.get(kind, ()):
        return None
    if version is None or version == "":
        return f"apiVersion: Required value: {kind} is served as apiVersion: {served}"
    return (f'no matches for kind "{kind}" in version "{version}": kube-apiserver v1.34 serves {kind} as '
            f"apiVersion: {served}")


def validate(d: Mapping[str, Any]) -> list[FieldError]:
    """The field errors of one object (empty: valid, or a kind kplan does not read)."""
    kind = d.get("kind")
    entry = KINDS.get(kind) if isinstance(kind, str) else None
    if entry is None:
        return []
    return entry[1](d)


def describe(d: Mapping[str, Any]) -> str:
    """``Pod default/web``: the kind and the name (with its namespace when it has one)."""
    md = d.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    name = md.get("name") or md.get("generateName") or "?"
    ns = md.get("namespace")
    return f"{d.get('kind')} {ns}/{name}" if ns else f"{d.get('kind')} {name}"


def problems(objects: Iterable[Located], *, api_versions: bool = True) -> list[str]:
    """One line per invalid object: ``file: Kind ns/name: field: problem`` (or ``[…, …]``)."""
    lines = []
    for obj in objects:
        d = obj.doc
        where = f"{obj.source}: {describe(d)}"
        version = api_version_error(d) if api_versions else None
        if version is not None:
            lines.append(f"{where}: {version}")
            continue
        errs = validate(d)
        if len(errs) == 1:
            lines.append(f"{where}: {errs[0]}")
        elif errs:
            lines.append(f"{where}: [{', '.join(str(e) for e in errs)}]")
    return lines


def validate_objects(objects: Iterable[Located]) -> None:
    """Raise one InputError with a line per invalid object (the CLI prints each as an error)."""
    lines = problems(objects)
    if lines:
        raise InputError("\n".join(lines))
