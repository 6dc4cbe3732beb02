"""Unknown fields, reported as ``kubectl apply`` reports them (server-side field validation in
its default ``Warn`` mode): ``unknown field "spec.containers[0].imagePullPolcy"``, a warning,
not an error. The field names are those of the v1.34 API types, for the parts of an object a
typo most often hides in: the object itself, its metadata, the workload specs, pod templates,
pod specs, containers, their ports and resources, and tolerations. Deeper structures (probes,
volumes, security contexts) are not walked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

META = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields"})
POD_SPEC = frozenset({
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy", "terminationGracePeriodSeconds",
    "activeDeadlineSeconds", "dnsPolicy", "nodeSelector", "serviceAccountName", "serviceAccount",
    "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace",
    "securityContext", "imagePullSecrets", "hostname", "subdomain", "affinity", "schedulerName", "tolerations",
    "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates", "runtimeClassName",
    "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints", "setHostnameAsFQDN", "os",
    "hostUsers", "schedulingGates", "resourceClaims", "resources", "hostnameOverride"})
CONTAINER = frozenset({
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
    "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
    "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
    "securityContext", "stdin", "stdinOnce", "tty"})
PORT = frozenset({"name", "hostPort", "containerPort", "protocol", "hostIP"})
RESOURCES = frozenset({"limits", "requests", "claims"})
TOLERATION = frozenset({"key", "operator", "value", "effect", "tolerationSeconds"})
TEMPLATE = frozenset({"metadata", "spec"})
#: the fields of each kind's object and of its spec
OBJECT: dict[str, frozenset[str]] = {
    "PriorityClass": frozenset({"value", "globalDefault", "description", "preemptionPolicy"}),
    "StorageClass": frozenset({"provisioner", "parameters", "reclaimPolicy", "mountOptions", "allowVolumeExpansion",
                               "volumeBindingMode", "allowedTopologies"}),
    "CSIStorageCapacity": frozenset({"nodeTopology", "storageClassName", "capacity", "maximumVolumeSize"}),
}
SPEC: dict[str, frozenset[str]] = {
    "Deployment": frozenset({"replicas", "selector", "template", "strategy", "minReadySeconds", "revisionHistoryLimit",
                             "paused", "progressDeadlineSeconds"}),
    "ReplicaSet": frozenset({"replicas", "minReadySeconds", "selector", "template"}),
    "ReplicationController": frozenset({"replicas", "minReadySeconds", "selector", "template"}),
    "StatefulSet": frozenset({"replicas", "selector", "template", "volumeClaimTemplates", "serviceName",
                              "podManagementPolicy", "updateStrategy", "revisionHistoryLimit", "minReadySeconds",
                              "persistentVolumeClaimRetentionPolicy", "ordinals"}),
    "DaemonSet": frozenset({"selector", "template", "updateStrategy", "minReadySeconds", "revisionHistoryLimit"}),
    "Job": frozenset({"parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy", "successPolicy",
                      "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector", "manualSelector",
                      "template", "ttlSecondsAfterFinished", "completionMode", "suspend", "podReplacementPolicy",
                      "managedBy"}),
    "CronJob": frozenset({"schedule", "timeZone", "startingDeadlineSeconds", "concurrencyPolicy", "suspend",
                          "jobTemplate", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"}),
    "PodDisruptionBudget": frozenset({"minAvailable", "selector", "maxUnavailable", "unhealthyPodEvictionPolicy"}),
}


def _extra(m: Any, known: frozenset[str], path: str, out: list[str]) -> None:
    if isinstance(m, Mapping):
        out.extend(f"{path}{'.' if path else ''}{k}" for k in m if k not in known)


def _pod_spec(spec: Any, path: str, out: list[str]) -> None:
    if not isinstance(spec, Mapping):
        return
    _extra(spec, POD_SPEC, path, out)
    for field in ("containers", "initContainers"):
        containers = spec.get(field)
        for i, c in enumerate(containers if isinstance(containers, list) else []):
            cp = f"{path}.{field}[{i}]"
            _extra(c, CONTAINER, cp, out)
            if not isinstance(c, Mapping):
                continue
            _extra(c.get("resources"), RESOURCES, f"{cp}.resources", out)
            ports = c.get("ports")
            for j, p in enumerate(ports if isinstance(ports, list) else []):
                _extra(p, PORT, f"{cp}.ports[{j}]", out)
    tolerations = spec.get("tolerations")
    for i, t in enumerate(tolerations if isinstance(tolerations, list) else []):
        _extra(t, TOLERATION, f"{path}.tolerations[{i}]", out)


def _template(t: Any, path: str, out: list[str]) -> None:
    if isinstance(t, Mapping):
        _extra(t, TEMPLATE, path, out)
        _extra(t.get("metadata"), META, f"{path}.metadata", out)
        _pod_spec(t.get("spec"), f"{path}.spec", out)


def unknown_fields(d: Mapping[str, Any]) -> list[str]:
    """The paths of the fields the API server would warn about, for the kinds in SPEC, Pod and OBJECT."""
    kind = d.get("kind")
    if not isinstance(kind, str) or (kind not in SPEC and kind not in OBJECT and kind != "Pod"):
        return []
    out: list[str] = []
    _extra(d, frozenset({"apiVersion", "kind", "metadata", "spec", "status"}) | OBJECT.get(kind, frozenset()), "", out)
    _extra(d.get("metadata"), META, "metadata", out)
    spec = d.get("spec")
    if kind == "Pod":
        _pod_spec(spec, "spec", out)
    elif kind in SPEC and isinstance(spec, Mapping):
        _extra(spec, SPEC[kind], "spec", out)
        if "template" in SPEC[kind]:
            _template(spec.get("template"), "spec.template", out)
        job = spec.get("jobTemplate")
        if kind == "CronJob" and isinstance(job, Mapping):
            _extra(job.get("spec"), SPEC["Job"], "spec.jobTemplate.spec", out)
            jspec = job.get("spec")
            if isinstance(jspec, Mapping):
                _template(jspec.get("template"), "spec.jobTemplate.spec.template", out)
    return out
