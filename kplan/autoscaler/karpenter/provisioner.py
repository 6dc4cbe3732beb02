"""Which pending pods Karpenter's provisioner considers: sigs.k8s.io/karpenter v1.15.0
pkg/controllers/provisioning/provisioner.go (GetPendingPods with pod.IsProvisionable and Validate:
validateKarpenterManagedLabelCanExist, validateNodeSelector, validateAffinity with
pkg/apis/v1 ValidateRequirement) and Schedule's "no dynamic nodepools found".

Not modelled: ValidatePersistentVolumeClaims (volume topology), and the PodScheduled condition
(the pods handed to ``solve`` are by contract the ones kube-scheduler marked Unschedulable).
"""

from __future__ import annotations

from kplan.autoscaler.karpenter.existingnode import is_owned_by_daemonset
from kplan.autoscaler.karpenter.requirements import pod_requirements
from kplan.model.karpenter import (
    CAPACITY_TYPE_LABEL,
    CAPACITY_TYPES,
    DOES_NOT_EXIST,
    GT,
    GTE,
    IN,
    LT,
    LTE,
    NODE_POOL_LABEL,
    NORMALIZED_LABELS,
    OPERATORS,
    RESTRICTED_LABEL_DOMAINS,
    RESTRICTED_LABELS,
)
from kplan.model.name_rules import label_value, qualified_name
from kplan.model.objects import Pod
from kplan.model.selectors import Requirement as SelectorRequirement

NO_NODE_POOLS = "no dynamic nodepools found"
MANAGED_LABEL_DOES_NOT_EXIST = ("configured to not run on a Karpenter provisioned node "
                                f"(requirement={NODE_POOL_LABEL} DoesNotExist)")


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"


def restricted_label_error(key: str, well_known: frozenset[str], restricted_domains: frozenset[str]) -> str | None:
    """IsRestrictedLabel's error."""
    if key in well_known:
        return None
    domain = key.split("/", 1)[0] if "/" in key else ""
    if any(domain == d or domain.endswith("." + d) for d in restricted_domains) or key in RESTRICTED_LABELS:
        return (f"using label {key} is not allowed as it might interfere with the internal provisioning logic; "
                f"specify a well known label: {_go_list(sorted(well_known))}, or a custom label that does not use "
                f"a restricted domain: {_go_list(sorted(restricted_domains))}")
    return None


def validate_requirement(r: SelectorRequirement, well_known: frozenset[str],
                         restricted_domains: frozenset[str]) -> list[str]:
    """ValidateRequirement (pkg/apis/v1/nodeclaim_validation.go) on a node selector requirement."""
    key = NORMALIZED_LABELS.get(r.key, r.key)
    op, values = r.operator, list(r.values)
    errs = []
    if op not in OPERATORS:
        errs.append(f"key {key} has an unsupported operator {op} not in {_go_list(list(OPERATORS))}")
    restricted = restricted_label_error(key, well_known, restricted_domains)
    if restricted is not None:
        errs.append(restricted)
    if key == CAPACITY_TYPE_LABEL and op == IN and key in well_known:
        if not [v for v in values if v in CAPACITY_TYPES]:
            errs.append(f"no valid values found in {_go_list(values)} for {key}, expected one of: "
                        f"{_go_list(list(CAPACITY_TYPES))}, got: {_go_list(values)}")
    for problem in qualified_name(key):
        errs.append(f"key {key} is not a qualified name, {problem}")
    for v in values:
        for problem in label_value(v):
            errs.append(f"invalid value {v} for key {key}, {problem}")
    if op == IN and not values:
        errs.append(f"key {key} with operator {op} must have a value defined")
    if op in (GT, LT, GTE, LTE) and (len(values) != 1 or not values[0].isdigit()):
        errs.append(f"key {key} with operator {op} must have a single positive integer value")
    return errs


def validate(pod: Pod, well_known: frozenset[str],
             restricted_domains: frozenset[str] = RESTRICTED_LABEL_DOMAINS) -> str | None:
    """Provisioner.Validate: None, or why Karpenter ignores the pod (its errors joined)."""
    errs: list[str] = []
    reqs = pod_requirements(pod)
    if reqs.has(NODE_POOL_LABEL) and reqs.get(NODE_POOL_LABEL).operator == DOES_NOT_EXIST:
        errs.append(MANAGED_LABEL_DOES_NOT_EXIST)
    for k, v in pod.node_selector.items():
        errs += validate_requirement(SelectorRequirement(k, IN, (v,)), well_known, restricted_domains)
    if pod.required_node_affinity is not None:
        for term in pod.required_node_affinity.terms:
            if term.match_fields:
                errs.append("node selector term with matchFields is not supported")
            for r in term.match_expressions:
                errs += validate_requirement(r, well_known, restricted_domains)
    return "; ".join(errs) if errs else None


def ignored_reason(pod: Pod, well_known: frozenset[str], restricted_domains: frozenset[str]) -> str | None:
    """Why GetPendingPods leaves a pending pod out (pod.IsProvisionable, then Validate)."""
    if pod.nominated_node:
        return "preempting (status.nominatedNodeName is set)"
    if is_owned_by_daemonset(pod):
        return "owned by a DaemonSet"
    if any(o.kind == "Node" for o in pod.owners):
        return "owned by a Node (static pod)"
    err = validate(pod, well_known, restricted_domains)
    return f"ignoring pod, {err}" if err is not None else None
