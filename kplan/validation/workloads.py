"""The rules of the other kinds kplan reads: pkg/apis/apps/validation (Deployment, ReplicaSet,
StatefulSet, DaemonSet), batch (Job, CronJob), policy (PodDisruptionBudget), scheduling
(PriorityClass), storage (StorageClass, CSI objects) and core's Service, ReplicationController
and persistent volume (claim) checks, v1.34, for the fields kplan reads.

Deviations, knowingly: update strategies, history limits, the CronJob schedule's syntax beyond
being present, and the PV/PVC volume sources are not validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.model.name_rules import dns1123_label
from kplan.validation.core import (
    ACCESS_MODES,
    Errors,
    as_list,
    as_map,
    claim_spec,
    is_int_or_percent,
    quantity,
    validate_label_selector,
    validate_meta,
    validate_node_selector,
    validate_pod_template,
)
from kplan.validation.field import (
    Printed,
    integer,
    invalid,
    nonnegative,
    not_supported,
    required,
    shown,
)

_ALWAYS = ("Always",)
_JOB_RESTART = ("OnFailure", "Never")


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Whether a LabelSelector selects the given labels (for "selector does not match template labels")."""
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for r in selector.get("matchExpressions") or []:
        if not isinstance(r, Mapping):
            return False
        key, op, values = str(r.get("key")), r.get("operator"), r.get("values") or []
        has = key in labels
        if (op == "In" and (not has or labels[key] not in values)) or (op == "NotIn" and has and labels[key] in values) \
                or (op == "Exists" and not has) or (op == "DoesNotExist" and has):
            return False
    return True


def _labels_shown(labels: Mapping[str, Any]) -> str:
    """A label map as Go's %v prints a map[string]string in the selector error."""
    return "map[string]string{" + ", ".join(f'"{k}":{shown(v)}' for k, v in sorted(labels.items())) + "}"


def _replicated(d: Mapping[str, Any], *, restart: tuple[str, ...] = _ALWAYS, selector_required: bool = True,
                map_selector: bool = False) -> Errors:
    """What every replicated workload shares: replicas >= 0, a non-empty selector that selects the
    template's labels, a valid template."""
    errs = validate_meta(d.get("metadata"), namespaced=True)
    spec = as_map(d.get("spec"), "spec", errs)
    errs += nonnegative(spec.get("replicas"), "spec.replicas")
    template = as_map(spec.get("template"), "spec.template", errs)
    tmd = as_map(template.get("metadata"), "spec.template.metadata", errs)
    labels = as_map(tmd.get("labels"), "spec.template.metadata.labels", errs)
    sel = spec.get("selector")
    if map_selector:
        sel = {"matchLabels": sel} if isinstance(sel, Mapping) and sel else None
    if sel is None or not isinstance(sel, Mapping) or not (sel.get("matchLabels") or sel.get("matchExpressions")):
        if selector_required and not map_selector:
            errs.append(required("spec.selector") if sel is None else invalid("spec.selector", sel,
                                                                                "empty selector is invalid for deployment"))
    else:
        selector_errs = validate_label_selector(sel, "spec.selector")
        errs += selector_errs
        # as upstream, a selector that does not parse is not matched against the labels
        if template and not selector_errs and not _selector_matches(sel, labels):
            errs.append(invalid("spec.template.metadata.labels", Printed(_labels_shown(labels)),
                                "`selector` does not match template `labels`"))
    if "template" not in spec:
        errs.append(required("spec.template"))
    else:
        errs += validate_pod_template(spec.get("template"), "spec.template", restart=restart)
    return errs


def validate_deployment(d: Mapping[str, Any]) -> Errors:
    errs = _replicated(d)
    spec = as_map(d.get("spec"), "spec", [])
    strategy = as_map(spec.get("strategy"), "spec.strategy", errs)
    kind = strategy.get("type")
    if kind is not None and kind not in ("Recreate", "RollingUpdate"):
        errs.append(not_supported("spec.strategy.type", kind, ("Recreate", "RollingUpdate")))
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    return errs


def validate_replica_set(d: Mapping[str, Any]) -> Errors:
    return _replicated(d)


def validate_replication_controller(d: Mapping[str, Any]) -> Errors:
    return _replicated(d, map_selector=True)


def validate_stateful_set(d: Mapping[str, Any]) -> Errors:
    errs = _replicated(d)
    spec = as_map(d.get("spec"), "spec", [])
    policy = spec.get("podManagementPolicy")
    if policy is not None and policy not in ("OrderedReady", "Parallel"):
        errs.append(not_supported("spec.podManagementPolicy", policy, ("OrderedReady", "Parallel")))
    ordinals = as_map(spec.get("ordinals"), "spec.ordinals", errs)
    errs += nonnegative(ordinals.get("start"), "spec.ordinals.start")
    for i, t in enumerate(as_list(spec.get("volumeClaimTemplates"), "spec.volumeClaimTemplates", errs)):
        tp = f"spec.volumeClaimTemplates[{i}]"
        claim = as_map(t, tp, errs)
        name = as_map(claim.get("metadata"), f"{tp}.metadata", errs).get("name")
        if not name:
            errs.append(required(f"{tp}.metadata.name"))
        errs += claim_spec(claim.get("spec"), f"{tp}.spec")
    return errs


def validate_daemon_set(d: Mapping[str, Any]) -> Errors:
    return _replicated(d)


def _job_spec(spec: Mapping[str, Any], path: str, errs: Errors) -> None:
    for field in ("parallelism", "completions", "backoffLimit"):
        errs += nonnegative(spec.get(field), f"{path}.{field}")
    errs += nonnegative(spec.get("activeDeadlineSeconds"), f"{path}.activeDeadlineSeconds", bits=64)
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errs.append(not_supported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed")))
    if mode == "Indexed" and spec.get("completions") is None:
        errs.append(required(f"{path}.completions", "when completion mode is Indexed"))
    template = as_map(spec.get("template"), f"{path}.template", errs)
    if spec.get("selector") is not None:
        errs += validate_label_selector(spec.get("selector"), f"{path}.selector")
    if not template:
        errs.append(required(f"{path}.template"))
        return
    errs += validate_pod_template(template, f"{path}.template", restart=_JOB_RESTART)
    tspec = template.get("spec")
    if isinstance(tspec, Mapping) and tspec.get("restartPolicy") is None:
        errs.append(required(f"{path}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))


def validate_job(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=True)
    _job_spec(as_map(d.get("spec"), "spec", errs), "spec", errs)
    return errs


def validate_cron_job(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=True)
    md = d.get("metadata")
    name = md.get("name") if isinstance(md, Mapping) else None
    if isinstance(name, str) and len(name) > 52:
        errs.append(invalid("metadata.name", name, "must be no more than 52 characters"))
    spec = as_map(d.get("spec"), "spec", errs)
    if not spec.get("schedule"):
        errs.append(required("spec.schedule"))
    policy = spec.get("concurrencyPolicy")
    if policy is not None and policy not in ("Allow", "Forbid", "Replace"):
        errs.append(not_supported("spec.concurrencyPolicy", policy, ("Allow", "Forbid", "Replace")))
    jt = as_map(spec.get("jobTemplate"), "spec.jobTemplate", errs)
    if not jt:
        errs.append(required("spec.jobTemplate"))
    else:
        _job_spec(as_map(jt.get("spec"), "spec.jobTemplate.spec", errs), "spec.jobTemplate.spec", errs)
    return errs


def validate_pdb(d: Mapping[str, Any]) -> Errors:
    """ValidatePodDisruptionBudgetSpec."""
    errs = validate_meta(d.get("metadata"), namespaced=True)
    spec = as_map(d.get("spec"), "spec", errs)
    lo, hi = spec.get("minAvailable"), spec.get("maxUnavailable")
    if lo is not None and hi is not None:
        errs.append(invalid("spec", dict(spec), "minAvailable and maxUnavailable cannot be both set"))
    for field, v in (("minAvailable", lo), ("maxUnavailable", hi)):
        if v is not None:
            is_int_or_percent(v, f"spec.{field}", errs)
            if isinstance(v, str) and v.endswith("%") and v[:-1].isdigit() and int(v[:-1]) > 100:
                errs.append(invalid(f"spec.{field}", v, "must not be greater than 100%"))
    if spec.get("selector") is not None:
        errs += validate_label_selector(spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("IfHealthyBudget", "AlwaysAllow"):
        errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, ("AlwaysAllow", "IfHealthyBudget")))
    return errs


#: HighestUserDefinablePriority (pkg/apis/scheduling/types.go)
HIGHEST_USER_PRIORITY = 1_000_000_000


def validate_priority_class(d: Mapping[str, Any]) -> Errors:
    """ValidatePriorityClass: a user-defined class has a value up to one billion and a name not
    starting with "system-"."""
    errs = validate_meta(d.get("metadata"), namespaced=False)
    md = d.get("metadata")
    name = str(md.get("name") or "") if isinstance(md, Mapping) else ""
    if d.get("value") is None:
        errs.append(required("value"))
    value, e = integer(d.get("value"), "value")
    errs += e
    builtin = name in ("system-node-critical", "system-cluster-critical")
    if name.startswith("system-") and not builtin:
        errs.append(invalid("metadata.name", name, "priority class names with 'system-' prefix are reserved"))
    if value is not None and value > HIGHEST_USER_PRIORITY and not builtin:
        errs.append(invalid("value", value, f"maximum allowed value of a user defined priority is "
                            f"{HIGHEST_USER_PRIORITY}"))
    policy = d.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        errs.append(not_supported("preemptionPolicy", policy, ("Never", "PreemptLowerPriority")))
    return errs


def validate_service(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=True, name_rule=dns1123_label)
    spec = as_map(d.get("spec"), "spec", errs)
    sel = spec.get("selector")
    if sel is not None:
        from kplan.validation.field import validate_labels

        errs += validate_labels(sel, "spec.selector")
    return errs


def validate_claim(d: Mapping[str, Any]) -> Errors:
    return validate_meta(d.get("metadata"), namespaced=True) + claim_spec(d.get("spec"), "spec")


def validate_volume(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=False)
    spec = as_map(d.get("spec"), "spec", errs)
    cap = as_map(spec.get("capacity"), "spec.capacity", errs)
    if cap.get("storage") is None:
        errs.append(required("spec.capacity[storage]"))
    else:
        quantity(cap.get("storage"), "spec.capacity[storage]", errs)
    for m in as_list(spec.get("accessModes"), "spec.accessModes", errs):
        if m not in ACCESS_MODES:
            errs.append(not_supported("spec.accessModes", m, ACCESS_MODES))
    affinity = spec.get("nodeAffinity")
    if affinity is not None:
        # validateVolumeNodeAffinity: the required selector is all a volume's affinity has
        req = as_map(affinity, "spec.nodeAffinity", errs).get("required")
        if req is None:
            errs.append(required("spec.nodeAffinity.required", "must specify required node constraints"))
        else:
            # not the label values: a cluster's volumes are validated here too, and one created
            # before v1.33 keeps values the API server has refused to new volumes since
            errs += validate_node_selector(req, "spec.nodeAffinity.required", label_values=False)
    return errs


def validate_storage_class(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=False)
    if not d.get("provisioner"):
        errs.append(required("provisioner"))
    mode = d.get("volumeBindingMode")
    if mode is not None and mode not in ("Immediate", "WaitForFirstConsumer"):
        errs.append(not_supported("volumeBindingMode", mode, ("Immediate", "WaitForFirstConsumer")))
    return errs


def validate_meta_only(d: Mapping[str, Any]) -> Errors:
    return validate_meta(d.get("metadata"), namespaced=False)


def validate_meta_only_namespaced(d: Mapping[str, Any]) -> Errors:
    return validate_meta(d.get("metadata"), namespaced=True)
