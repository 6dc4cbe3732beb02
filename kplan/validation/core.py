"""The core/v1 rules kplan's inputs meet: pkg/apis/core/validation/validation.go (v1.34) for
ObjectMeta, PodSpec (containers, resources, ports, tolerations, affinity, topology spread,
scheduling gates, volumes: one source each, and the fields kplan reads of claims, generic
ephemeral volumes and in-tree disks), Node, Namespace, LimitRange and the claim spec.

Deviations, knowingly: security contexts, probes, environment variables, the fields of volume
sources kplan does not model (secret, configMap, nfs, …), DNS config and most status fields
are not validated (kplan does not read them);
the API server's defaults are not applied here (the parsers apply the ones that matter).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.model.name_rules import dns1123_label, dns1123_subdomain, label_value, qualified_name
from kplan.model.quantity import (
    QuantityError,
    fits_int64,
    format_resource,
    nanos_to_milli,
    nanos_to_value,
    parse_nanos,
)
from kplan.validation.field import (
    FieldError,
    check,
    duplicate,
    forbidden,
    integer,
    invalid,
    nonnegative,
    not_supported,
    required,
    string,
    validate_annotations,
    validate_labels,
    wrong_type,
)

Errors = list[FieldError]
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage", "storage", "pods")


def as_map(v: Any, path: str, errs: Errors) -> Mapping[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        errs.append(wrong_type(path, v, "an object"))
        return {}
    return v


def as_list(v: Any, path: str, errs: Errors) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        errs.append(wrong_type(path, v, "a list"))
        return []
    return v


def as_str(v: Any, path: str, errs: Errors) -> str:
    s, e = string(v, path)
    errs += e
    return s or ""


# ------------------------------------------------------------------------------ metadata

def validate_meta(md: Any, *, namespaced: bool, name_rule: Any = dns1123_subdomain, path: str = "metadata") -> Errors:
    """ValidateObjectMeta: a name (or generateName), a namespace when namespaced, labels, annotations."""
    errs: Errors = []
    m = as_map(md, path, errs)
    name = m.get("name")
    if isinstance(name, str) and name:
        errs += check(f"{path}.name", name, name_rule)
    elif name is not None and not isinstance(name, str):
        errs.append(wrong_type(f"{path}.name", name, "a string"))
    elif not m.get("generateName"):
        errs.append(required(f"{path}.name", "name or generateName is required"))
    ns = m.get("namespace")
    if namespaced and ns:
        if isinstance(ns, str):
            errs += check(f"{path}.namespace", ns, dns1123_label)
        else:
            errs.append(wrong_type(f"{path}.namespace", ns, "a string"))
    errs += validate_labels(m.get("labels"), f"{path}.labels")
    errs += validate_annotations(m.get("annotations"), f"{path}.annotations")
    return errs


# ------------------------------------------------------------------------------ quantities

def quantity(v: Any, path: str, errs: Errors, *, nonneg: bool = True, bounded: bool = True) -> int | None:
    """A resource.Quantity (as nanos), refused as the decoder and ValidateNonnegativeQuantity refuse it;
    ``bounded``: also beyond what the scheduler's int64 counters hold (not a device capacity, which
    the allocator compares exactly)."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        errs.append(wrong_type(path, v, "a quantity (a string such as \"250m\" or a number)"))
        return None
    try:
        nanos = parse_nanos(v)
    except QuantityError as e:
        errs.append(invalid(path, v, str(e).split(", got ")[0]))
        return None
    if nonneg and nanos < 0:
        errs.append(invalid(path, v, "must be greater than or equal to 0"))
        return None
    if bounded and (not fits_int64(nanos_to_value(nanos)) or not fits_int64(nanos_to_milli(nanos))):
        errs.append(invalid(path, v, "must be less than 2^63 millicores or units (kube-scheduler counts in int64)"))
        return None
    return nanos


def resource_name(name: str, path: str) -> Errors:
    """validateResourceName: a standard name, or a qualified name (extended resources: domain/name)."""
    if name in _STANDARD_RESOURCES or name.startswith("hugepages-"):
        return []
    msgs = qualified_name(name)
    if msgs:
        return [invalid(path, name, "; ".join(msgs))]
    if "/" not in name:
        return [invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def resource_list(v: Any, path: str, errs: Errors) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, q in as_map(v, path, errs).items():
        key = str(k)
        errs += resource_name(key, f"{path}[{key}]")
        nanos = quantity(q, f"{path}[{key}]", errs)
        if nanos is None:
            continue
        if not _is_native(key) and nanos % 10**9:
            errs.append(invalid(f"{path}[{key}]", q, "must be an integer"))
        out[key] = nanos
    return out


def validate_resources(res: Any, path: str) -> Errors:
    """ValidateContainerResourceRequirements / ValidatePodResourceRequirements: quantities, and
    requests within limits (equal to them for extended resources, which cannot be overcommitted)."""
    errs: Errors = []
    r = as_map(res, path, errs)
    limits = resource_list(r.get("limits"), f"{path}.limits", errs)
    requests = resource_list(r.get("requests"), f"{path}.requests", errs)
    raw_req = as_map(r.get("requests"), f"{path}.requests", [])
    raw_lim = as_map(r.get("limits"), f"{path}.limits", [])
    for k, q in requests.items():
        if k in limits and q > limits[k]:
            errs.append(invalid(f"{path}.requests[{k}]", raw_req[k],
                                f"must be less than or equal to {k} limit of {raw_lim[k]}"))
        elif not _is_native(k):
            if k not in limits:
                errs.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
            elif q != limits[k]:
                errs.append(invalid(f"{path}.requests[{k}]", raw_req[k],
                                    f"must be equal to {k} limit of {raw_lim[k]}"))
    return errs


# ------------------------------------------------------------------------------ containers

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_PORT_RANGE = "must be between 1 and 65535, inclusive"


def _port_number(v: Any, path: str, errs: Errors, *, zero_ok: bool) -> None:
    n, e = integer(v, path)
    errs += e
    if n is not None and not (zero_ok and n == 0) and not 1 <= n <= 65535:
        errs.append(invalid(path, n, _PORT_RANGE))


def validate_ports(v: Any, path: str) -> Errors:
    """validateContainerPorts: containerPort required and in range, hostPort in range when set,
    a supported protocol, IANA_SVC_NAME names, each name once."""
    errs: Errors = []
    names: set[str] = set()
    for i, p in enumerate(as_list(v, path, errs)):
        pp = f"{path}[{i}]"
        port = as_map(p, pp, errs)
        if port.get("containerPort") is None:
            errs.append(required(f"{pp}.containerPort"))
        else:
            _port_number(port.get("containerPort"), f"{pp}.containerPort", errs, zero_ok=False)
        _port_number(port.get("hostPort"), f"{pp}.hostPort", errs, zero_ok=True)
        proto = port.get("protocol")
        if proto is not None and proto not in _PROTOCOLS:
            errs.append(not_supported(f"{pp}.protocol", proto, _PROTOCOLS))
        name = port.get("name")
        if name:
            if not isinstance(name, str):
                errs.append(wrong_type(f"{pp}.name", name, "a string"))
            else:
                msgs = _port_name(name)
                if msgs:
                    errs.append(invalid(f"{pp}.name", name, "; ".join(msgs)))
                elif name in names:
                    errs.append(duplicate(f"{pp}.name", name))
                names.add(name)
    return errs


def _port_name(port: str) -> list[str]:
    """IsValidPortName (IANA_SVC_NAME)."""
    import re

    errs = ["must be no more than 15 characters"] if len(port) > 15 else []
    if not re.fullmatch(r"[-a-z0-9]+", port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port[:1] == "-" or port[-1:] == "-":
        errs.append("must not begin or end with a hyphen")
    return errs


def validate_containers(v: Any, path: str, names: set[str], *, init: bool = False) -> Errors:
    errs: Errors = []
    items = as_list(v, path, errs)
    if not items and not init and not errs:
        return [required(path)]
    for i, c in enumerate(items):
        cp = f"{path}[{i}]"
        if not isinstance(c, Mapping):
            errs.append(wrong_type(cp, c, "an object"))
            continue
        name = c.get("name")
        if not name:
            errs.append(required(f"{cp}.name"))
        elif not isinstance(name, str):
            errs.append(wrong_type(f"{cp}.name", name, "a string"))
        else:
            errs += check(f"{cp}.name", name, dns1123_label)
            if name in names:
                errs.append(duplicate(f"{cp}.name", name))
            names.add(name)
        image = c.get("image")
        if image is not None and not isinstance(image, str):
            errs.append(wrong_type(f"{cp}.image", image, "a string"))
        elif not image or not str(image).strip():
            errs.append(required(f"{cp}.image"))
        errs += validate_ports(c.get("ports"), f"{cp}.ports")
        errs += validate_resources(c.get("resources"), f"{cp}.resources")
        rp = c.get("restartPolicy")
        if rp is not None:
            if not init:
                errs.append(forbidden(f"{cp}.restartPolicy", "may not be set for non-init containers"))
            elif rp != "Always":
                errs.append(not_supported(f"{cp}.restartPolicy", rp, ("Always",)))
    return errs


# ------------------------------------------------------------------------------ scheduling fields

def validate_tolerations(v: Any, path: str) -> Errors:
    """validateTolerations."""
    errs: Errors = []
    for i, t in enumerate(as_list(v, path, errs)):
        tp = f"{path}[{i}]"
        tol = as_map(t, tp, errs)
        key = as_str(tol.get("key"), f"{tp}.key", errs)
        op = as_str(tol.get("operator"), f"{tp}.operator", errs)
        value = as_str(tol.get("value"), f"{tp}.value", errs)
        effect = as_str(tol.get("effect"), f"{tp}.effect", errs)
        if key:
            errs += check(f"{tp}.key", key, qualified_name)
        if not key and op != "Exists":
            errs.append(invalid(f"{tp}.operator", op, 'operator must be Exists when `key` is empty, which means '
                                '"match all values and all keys"'))
        if tol.get("tolerationSeconds") is not None:
            errs += integer(tol.get("tolerationSeconds"), f"{tp}.tolerationSeconds", bits=64)[1]
            if effect != "NoExecute":
                errs.append(invalid(f"{tp}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            msgs = label_value(value)
            if msgs:
                errs.append(invalid(f"{tp}.operator", value, "; ".join(msgs)))
        elif op == "Exists":
            if value:
                errs.append(invalid(f"{tp}.operator", dict(tol), "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{tp}.operator", op, ("Equal", "Exists")))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{tp}.effect", effect, TAINT_EFFECTS))
    return errs


def validate_taints(v: Any, path: str) -> Errors:
    """validateNodeTaints: a qualified key, a label value, a supported effect, each key/effect once."""
    errs: Errors = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(as_list(v, path, errs)):
        tp = f"{path}[{i}]"
        taint = as_map(t, tp, errs)
        key = as_str(taint.get("key"), f"{tp}.key", errs)
        errs += check(f"{tp}.key", key, qualified_name)
        errs += check(f"{tp}.value", as_str(taint.get("value"), f"{tp}.value", errs), label_value)
        effect = as_str(taint.get("effect"), f"{tp}.effect", errs)
        if not effect:
            errs.append(required(f"{tp}.effect"))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{tp}.effect", effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            errs.append(duplicate(tp, dict(taint)))
        seen.add((key, effect))
    return errs


def validate_requirement(v: Any, path: str, operators: tuple[str, ...], *, node: bool, field: bool = False,
                         required_term: bool = False) -> Errors:
    """validateNodeSelectorRequirement / ValidateNodeFieldSelectorRequirement /
    ValidateLabelSelectorRequirement. A Gt/Lt value that is not an integer passes, as upstream:
    kube-scheduler then cannot build the selector and the term matches no node (model/parse.py;
    kplan warns, validation/advice.py). ``required_term``: a term of required node affinity, whose
    values must be label values since v1.33 (a preferred term's need not: "they can succeed when
    the cluster has only one node")."""
    errs: Errors = []
    r = as_map(v, path, errs)
    key = as_str(r.get("key"), f"{path}.key", errs)
    op = as_str(r.get("operator"), f"{path}.operator", errs)
    values = [as_str(x, f"{path}.values", errs) for x in as_list(r.get("values"), f"{path}.values", errs)]
    if field:
        if op in ("In", "NotIn"):
            if len(values) != 1:
                errs.append(required(f"{path}.values", "must be only one value when `operator` is 'In' or 'NotIn' "
                                     "for node field selector"))
        else:
            errs.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
        if key != "metadata.name":
            errs.append(invalid(f"{path}.key", key, "not a valid field selector key"))
        return errs
    if op in ("In", "NotIn"):
        if not values:
            errs.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or "
                                  "'DoesNotExist'"))
    elif op in ("Gt", "Lt") and op in operators:
        if len(values) != 1:
            errs.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
    errs += check(f"{path}.key", key, qualified_name)
    if not node:
        for j, val in enumerate(values):
            errs += check(f"{path}.values[{j}]", val, label_value)
    elif required_term:
        # one error per complaint, as ValidateNodeSelectorRequirement gives them
        errs += [invalid(f"{path}.values[{j}]", val, msg) for j, val in enumerate(values) for msg in label_value(val)]
    return errs


def validate_label_selector(v: Any, path: str) -> Errors:
    """ValidateLabelSelector."""
    errs: Errors = []
    m = as_map(v, path, errs)
    errs += validate_labels(m.get("matchLabels"), f"{path}.matchLabels")
    for i, r in enumerate(as_list(m.get("matchExpressions"), f"{path}.matchExpressions", errs)):
        errs += validate_requirement(r, f"{path}.matchExpressions[{i}]", LABEL_OPERATORS, node=False)
    return errs


def _node_selector_term(v: Any, path: str, *, required_term: bool = False) -> Errors:
    errs: Errors = []
    t = as_map(v, path, errs)
    for i, r in enumerate(as_list(t.get("matchExpressions"), f"{path}.matchExpressions", errs)):
        errs += validate_requirement(r, f"{path}.matchExpressions[{i}]", NODE_OPERATORS, node=True,
                                     required_term=required_term)
    for i, r in enumerate(as_list(t.get("matchFields"), f"{path}.matchFields", errs)):
        errs += validate_requirement(r, f"{path}.matchFields[{i}]", ("In", "NotIn"), node=True, field=True)
    return errs


def validate_node_selector(v: Any, path: str, *, label_values: bool = True) -> Errors:
    """ValidateNodeSelector of a required selector (a pod's required node affinity, a
    PersistentVolume's node affinity): at least one term, label values in the expressions
    (``label_values``; since v1.33, and ratcheted: an object stored before keeps its values)."""
    errs: Errors = []
    terms = as_list(as_map(v, path, errs).get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms", errs)
    if not terms:
        errs.append(required(f"{path}.nodeSelectorTerms", "must have at least one node selector term"))
    for i, t in enumerate(terms):
        errs += _node_selector_term(t, f"{path}.nodeSelectorTerms[{i}]", required_term=label_values)
    return errs


def _weight(v: Any, path: str, errs: Errors) -> None:
    n, e = integer(v, path)
    errs += e
    if not e and (n is None or not 1 <= n <= 100):
        errs.append(invalid(path, n if n is not None else 0, "must be in the range 1-100"))


def validate_label_keys(term: Mapping[str, Any], path: str, labels: Mapping[str, Any] | None, *,
                        mismatch: bool = True) -> Errors:
    """ValidateMatchLabelKeysAndMismatchLabelKeys, for a pod affinity term and (since v1.34's
    MatchLabelKeysInPodTopologySpreadSelectorMerge, on by default) a spread constraint: the keys
    are label names, given only with a labelSelector, and none is both a match and a mismatch
    key. kube-apiserver first merges each key the pod has a label for into the selector (``key In
    (value)``, ``NotIn`` for a mismatch key) when it creates the pod; a matchLabelKeys key then
    found twice in the selector was in it already: "exists in both matchLabelKeys and
    labelSelector". ``labels``: a Pod's own labels; None for a workload's template, which is
    validated as it is (its pods are merged when the controller creates them)."""
    errs: Errors = []
    selector = term.get("labelSelector")
    keys: dict[str, list[str]] = {}
    for field in ("matchLabelKeys", "mismatchLabelKeys") if mismatch else ("matchLabelKeys",):
        fp = f"{path}.{field}"
        keys[field] = [as_str(k, f"{fp}[{i}]", errs) for i, k in enumerate(as_list(term.get(field), fp, errs))]
        if keys[field] and selector is None:
            errs.append(forbidden(fp, "must not be specified when labelSelector is not set"))
            continue
        for i, k in enumerate(keys[field]):
            errs += check(f"{fp}[{i}]", k, qualified_name)
    match, mismatched = keys["matchLabelKeys"], keys.get("mismatchLabelKeys", [])
    if isinstance(selector, Mapping):
        seen = {str(k) for k in as_map(selector.get("matchLabels"), "", [])}
        exprs = [str(e.get("key")) for e in as_list(selector.get("matchExpressions"), "", []) if isinstance(e, Mapping)]
        if labels is not None:
            exprs += [k for k in match + mismatched if k in labels]
        index = {k: i for i, k in enumerate(match)}
        for key in exprs:
            if key in index and key in seen:
                errs.append(invalid(f"{path}.matchLabelKeys[{index[key]}]", key,
                                    "exists in both matchLabelKeys and labelSelector"))
            seen.add(key)
    errs += [invalid(f"{path}.matchLabelKeys[{i}]", k, "exists in both matchLabelKeys and mismatchLabelKeys")
             for i, k in enumerate(match) if k in set(mismatched)]
    return errs


def _pod_affinity_term(v: Any, path: str, labels: Mapping[str, Any] | None = None) -> Errors:
    errs: Errors = []
    t = as_map(v, path, errs)
    errs += validate_label_selector(t.get("labelSelector"), f"{path}.labelSelector")
    errs += validate_label_keys(t, path, labels)
    errs += validate_label_selector(t.get("namespaceSelector"), f"{path}.namespaceSelector")
    for i, ns in enumerate(as_list(t.get("namespaces"), f"{path}.namespaces", errs)):
        errs += check(f"{path}.namespaces[{i}]", as_str(ns, f"{path}.namespaces[{i}]", errs), dns1123_label)
    key = as_str(t.get("topologyKey"), f"{path}.topologyKey", errs)
    if not key:
        errs.append(required(f"{path}.topologyKey", "can not be empty"))
    else:
        errs += check(f"{path}.topologyKey", key, qualified_name)
    return errs


def validate_affinity(v: Any, path: str, labels: Mapping[str, Any] | None = None) -> Errors:
    """validateAffinity: node affinity terms, pod (anti-)affinity terms, preferred weights 1-100;
    ``labels``: a Pod's own (validate_label_keys)."""
    errs: Errors = []
    a = as_map(v, path, errs)
    na = as_map(a.get("nodeAffinity"), f"{path}.nodeAffinity", errs)
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        errs += validate_node_selector(req, f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
    pp = f"{path}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    for i, t in enumerate(as_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"), pp, errs)):
        term = as_map(t, f"{pp}[{i}]", errs)
        _weight(term.get("weight"), f"{pp}[{i}].weight", errs)
        errs += _node_selector_term(term.get("preference"), f"{pp}[{i}].preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        kp = f"{path}.{kind}"
        pa = as_map(a.get(kind), kp, errs)
        rp = f"{kp}.requiredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(as_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution"), rp, errs)):
            errs += _pod_affinity_term(t, f"{rp}[{i}]", labels)
        pp = f"{kp}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(as_list(pa.get("preferredDuringSchedulingIgnoredDuringExecution"), pp, errs)):
            term = as_map(t, f"{pp}[{i}]", errs)
            _weight(term.get("weight"), f"{pp}[{i}].weight", errs)
            errs += _pod_affinity_term(term.get("podAffinityTerm"), f"{pp}[{i}].podAffinityTerm", labels)
    return errs


def validate_spread(v: Any, path: str, labels: Mapping[str, Any] | None = None) -> Errors:
    """validateTopologySpreadConstraints; ``labels``: a Pod's own (validate_label_keys)."""
    errs: Errors = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(as_list(v, path, errs)):
        cp = f"{path}[{i}]"
        con = as_map(c, cp, errs)
        n, e = integer(con.get("maxSkew"), f"{cp}.maxSkew")
        errs += e
        if not e and (n is None or n <= 0):
            errs.append(invalid(f"{cp}.maxSkew", n or 0, "must be greater than zero"))
        key = as_str(con.get("topologyKey"), f"{cp}.topologyKey", errs)
        if not key:
            errs.append(required(f"{cp}.topologyKey", "can not be empty"))
        else:
            errs += check(f"{cp}.topologyKey", key, qualified_name)
        when = as_str(con.get("whenUnsatisfiable"), f"{cp}.whenUnsatisfiable", errs)
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{cp}.whenUnsatisfiable", when, ("DoNotSchedule", "ScheduleAnyway")))
        if (key, when) in seen:
            errs.append(duplicate(f"{cp}", f"{{{key}, {when}}}"))
        seen.add((key, when))
        if con.get("minDomains") is not None:
            m, e = integer(con.get("minDomains"), f"{cp}.minDomains")
            errs += e
            if m is not None and m <= 0:
                errs.append(invalid(f"{cp}.minDomains", m, "must be greater than zero"))
            elif m is not None and when != "DoNotSchedule":
                errs.append(invalid(f"{cp}.minDomains", m, "can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                                    "not ScheduleAnyway"))
        errs += validate_label_selector(con.get("labelSelector"), f"{cp}.labelSelector")
        errs += validate_label_keys(con, cp, labels, mismatch=False)
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            pol = con.get(field)
            if pol is not None and pol not in ("Honor", "Ignore"):
                errs.append(not_supported(f"{cp}.{field}", pol, ("Honor", "Ignore")))
    return errs


# ------------------------------------------------------------------------------ pods

#: the resources a pod's own spec.resources may name (PodLevelResources, beta and on in v1.34;
#: hugepages-* accepted: their pod-level support arrived close to v1.34, and refusing what the API
#: server accepts would be worse than accepting what it might refuse)
POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")


def _aggregate_requests(spec: Mapping[str, Any], name: str) -> int:
    """AggregateContainerRequests of one resource, in nanos: the containers and restartable
    (sidecar) init containers together, or an init container with the sidecars started before
    it, whichever is more."""
    def request(c: Any) -> int:
        res = c.get("resources") if isinstance(c, Mapping) else None
        req = res.get("requests") if isinstance(res, Mapping) else None
        lim = res.get("limits") if isinstance(res, Mapping) else None
        q = req.get(name) if isinstance(req, Mapping) and name in req else \
            lim.get(name) if isinstance(lim, Mapping) else None  # a limit alone defaults the request
        try:
            return parse_nanos(q) if q is not None else 0
        except QuantityError:
            return 0

    containers: list[Any] = as_list(spec.get("containers"), "", [])
    inits: list[Any] = as_list(spec.get("initContainers"), "", [])
    total = sum(request(c) for c in containers)
    sidecars = 0
    peak = 0
    for c in inits:
        if isinstance(c, Mapping) and c.get("restartPolicy") == "Always":
            sidecars += request(c)
            total += request(c)
            peak = max(peak, sidecars)
        else:
            peak = max(peak, sidecars + request(c))
    return max(total, peak)


def validate_pod_resources(spec: Mapping[str, Any], path: str) -> Errors:
    """validatePodResources (PodLevelResources): the requests and limits as a container's, only
    cpu, memory and hugepages, and each pod-level request at least what the containers request
    together (with a limit alone standing for the request, as the API server defaults it)."""
    errs = validate_resources(spec.get("resources"), path)
    res = as_map(spec.get("resources"), path, [])
    for side in ("requests", "limits"):
        for name in as_map(res.get(side), f"{path}.{side}", []):
            key = str(name)
            if key not in ("cpu", "memory") and not key.startswith("hugepages-"):
                errs.append(not_supported(f"{path}.{side}[{key}]", key, POD_LEVEL_RESOURCES))
    requests = as_map(res.get("requests"), f"{path}.requests", [])
    for name in ("cpu", "memory"):
        if name not in requests:
            continue
        try:
            own = parse_nanos(requests[name])
        except QuantityError:
            continue  # said by validate_resources
        together = _aggregate_requests(spec, name)
        if own < together:
            amount = format_resource(name, nanos_to_milli(together) if name == "cpu" else nanos_to_value(together))
            errs.append(invalid(f"{path}.requests[{name}]", requests[name],
                                f"must be greater than or equal to aggregate container requests of {amount}"))
    return errs

_RESTART_POLICIES = ("Always", "OnFailure", "Never")


def validate_pod_spec(v: Any, path: str = "spec", *, pod_name: str = "", labels: Mapping[str, Any] | None = None
                      ) -> Errors:
    """ValidatePodSpec, for the fields kplan reads (see the module docstring). ``pod_name``: the
    pod's own name (a template has none), which names its generic ephemeral volumes' claims;
    ``labels``: a Pod's own labels (a template: None), merged into its selectors by
    matchLabelKeys at creation."""
    errs: Errors = []
    spec = as_map(v, path, errs)
    if v is None:
        return [required(path)]
    names: set[str] = set()
    errs += validate_containers(spec.get("containers"), f"{path}.containers", names)
    errs += validate_containers(spec.get("initContainers"), f"{path}.initContainers", names, init=True)
    rp = spec.get("restartPolicy")
    if rp is not None and rp not in _RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", rp, _RESTART_POLICIES))
    errs += validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    errs += validate_tolerations(spec.get("tolerations"), f"{path}.tolerations")
    errs += validate_affinity(spec.get("affinity"), f"{path}.affinity", labels)
    errs += validate_spread(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints", labels)
    if spec.get("resources") is not None:
        errs += validate_pod_resources(spec, f"{path}.resources")
    overhead = spec.get("overhead")
    if overhead is not None:
        resource_list(overhead, f"{path}.overhead", errs)
    node = spec.get("nodeName")
    if node:
        errs += check(f"{path}.nodeName", as_str(node, f"{path}.nodeName", errs), dns1123_subdomain)
    if spec.get("priority") is not None:
        errs += integer(spec.get("priority"), f"{path}.priority")[1]
    pc = spec.get("priorityClassName")
    if pc:
        errs += check(f"{path}.priorityClassName", as_str(pc, f"{path}.priorityClassName", errs), dns1123_subdomain)
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        errs.append(not_supported(f"{path}.preemptionPolicy", policy, ("Never", "PreemptLowerPriority")))
    sched = spec.get("schedulerName")
    if sched:
        errs += check(f"{path}.schedulerName", as_str(sched, f"{path}.schedulerName", errs), dns1123_subdomain)
    gates: set[str] = set()
    for i, g in enumerate(as_list(spec.get("schedulingGates"), f"{path}.schedulingGates", errs)):
        gp = f"{path}.schedulingGates[{i}]"
        gate = as_str(as_map(g, gp, errs).get("name"), f"{gp}.name", errs)
        errs += check(f"{gp}.name", gate, qualified_name)
        if gate in gates:
            errs.append(duplicate(f"{gp}.name", gate))
        gates.add(gate)
    vols: set[str] = set()
    for i, vol in enumerate(as_list(spec.get("volumes"), f"{path}.volumes", errs)):
        vp = f"{path}.volumes[{i}]"
        vol_map = as_map(vol, vp, errs)
        name = as_str(vol_map.get("name"), f"{vp}.name", errs)
        if not name:
            errs.append(required(f"{vp}.name"))
        else:
            errs += check(f"{vp}.name", name, dns1123_label)
            if name in vols:
                errs.append(duplicate(f"{vp}.name", name))
            vols.add(name)
        if isinstance(vol, Mapping):
            errs += validate_volume_source(vol_map, vp, pod_name, name)
    return errs


ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")


def claim_spec(v: Any, path: str) -> Errors:
    """ValidatePersistentVolumeClaimSpec, for the fields kplan reads."""
    errs: Errors = []
    spec = as_map(v, path, errs)
    modes = as_list(spec.get("accessModes"), f"{path}.accessModes", errs)
    if not modes:
        errs.append(required(f"{path}.accessModes", ""))
    for m in modes:
        if m not in ACCESS_MODES:
            errs.append(not_supported(f"{path}.accessModes", m, ACCESS_MODES))
    res = as_map(spec.get("resources"), f"{path}.resources", errs)
    storage = as_map(res.get("requests"), f"{path}.resources.requests", errs).get("storage")
    if storage is None:
        errs.append(required(f"{path}.resources[storage]"))
    else:
        nanos = quantity(storage, f"{path}.resources[storage]", errs)
        if nanos is not None and nanos <= 0:
            errs.append(invalid(f"{path}.resources[storage]", storage, "must be greater than zero"))
    if spec.get("selector") is not None:
        errs += validate_label_selector(spec.get("selector"), f"{path}.selector")
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        errs.append(not_supported(f"{path}.volumeMode", mode, ("Block", "Filesystem")))
    return errs


# ------------------------------------------------------------------------------ volumes

#: the volume sources in the order ValidateVolumeSource checks them: a second one is "Forbidden"
#: at its own path (with upstream's spellings of three of them)
VOLUME_SOURCES = (("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
                  ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
                  ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"),
                  ("flocker", "flocker"), ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"),
                  ("cinder", "cinder"), ("cephfs", "cephFS"), ("quobyte", "quobyte"), ("downwardAPI", "downwarAPI"),
                  ("fc", "fc"), ("flexVolume", "flexVolume"), ("configMap", "configMap"),
                  ("azureFile", "azureFile"), ("vsphereVolume", "vsphereVolume"),
                  ("photonPersistentDisk", "photonPersistentDisk"), ("portworxVolume", "portworxVolume"),
                  ("azureDisk", "azureDisk"), ("storageos", "storageos"), ("projected", "projected"),
                  ("scaleIO", "scaleIO"), ("csi", "csi"), ("ephemeral", "ephemeral"), ("image", "image"))
_PARTITION = "must be between 1 and 255, inclusive"


def _required_strings(src: Mapping[str, Any], path: str, keys: tuple[str, ...], errs: Errors) -> None:
    for k in keys:
        if not as_str(src.get(k), f"{path}.{k}", errs):
            errs.append(required(f"{path}.{k}"))


def _in_range(src: Mapping[str, Any], key: str, path: str, low: int, high: int, detail: str, errs: Errors) -> None:
    v = src.get(key)
    if v is None:
        return
    n, bad = integer(v, f"{path}.{key}")
    errs += bad
    if n is not None and not low <= n <= high:
        errs.append(invalid(f"{path}.{key}", n, detail))


def validate_volume_source(vol: Mapping[str, Any], vp: str, pod_name: str, vol_name: str) -> Errors:
    """ValidateVolumeSource: exactly one source, and the fields kplan reads of the sources it
    models (claims, generic ephemeral volumes, the in-tree disks that volume limits and
    restrictions count). Other sources' own fields are not checked (kplan does not read them)."""
    errs: Errors = []
    seen = 0
    for key, shown_as in VOLUME_SOURCES:
        if vol.get(key) is None:
            continue
        if seen:
            errs.append(forbidden(f"{vp}.{shown_as}", "may not specify more than 1 volume type"))
            continue
        seen += 1
        src = as_map(vol.get(key), f"{vp}.{key}", errs)
        if key == "persistentVolumeClaim":
            _required_strings(src, f"{vp}.{key}", ("claimName",), errs)
        elif key == "gcePersistentDisk":
            # upstream names the path "persistentDisk" here
            _required_strings(src, f"{vp}.persistentDisk", ("pdName",), errs)
            _in_range(src, "partition", f"{vp}.persistentDisk", 0, 255, _PARTITION, errs)
        elif key == "awsElasticBlockStore":
            _required_strings(src, f"{vp}.{key}", ("volumeID",), errs)
            _in_range(src, "partition", f"{vp}.{key}", 0, 255, _PARTITION, errs)
        elif key == "rbd":
            if not as_list(src.get("monitors"), f"{vp}.rbd.monitors", errs):
                errs.append(required(f"{vp}.rbd.monitors"))
            _required_strings(src, f"{vp}.rbd", ("image",), errs)
        elif key == "iscsi":
            _required_strings(src, f"{vp}.iscsi", ("targetPortal",), errs)
            iqn = as_str(src.get("iqn"), f"{vp}.iscsi.iqn", errs)
            if not iqn:
                errs.append(required(f"{vp}.iscsi.iqn"))
            elif not iqn.startswith(("iqn", "eui", "naa")):
                errs.append(invalid(f"{vp}.iscsi.iqn", iqn, "must be valid format starting with iqn, eui, or naa"))
            _in_range(src, "lun", f"{vp}.iscsi", 0, 255, "must be between 0 and 255, inclusive", errs)
        elif key == "azureDisk":
            _required_strings(src, f"{vp}.azureDisk", ("diskName", "diskURI"), errs)
        elif key == "ephemeral":
            template = src.get("volumeClaimTemplate")
            if template is None:
                errs.append(required(f"{vp}.ephemeral.volumeClaimTemplate"))
            else:
                tp = f"{vp}.ephemeral.volumeClaimTemplate"
                errs += claim_spec(as_map(template, tp, errs).get("spec"), f"{tp}.spec")
            if pod_name and vol_name:
                # the claim is named <pod>-<volume>: that name must be valid too
                for msg in dns1123_subdomain(f"{pod_name}-{vol_name}"):
                    errs.append(invalid(f"{vp}.name", vol_name, f'PVC name "{pod_name}-{vol_name}": {msg}'))
    if not seen:
        errs.append(required(vp, "must specify a volume type"))
    return errs


def validate_pod_template(v: Any, path: str, *, restart: tuple[str, ...] = ()) -> Errors:
    """ValidatePodTemplateSpec: the template's labels and annotations, then its pod spec; workload
    controllers allow only some restart policies."""
    errs: Errors = []
    t = as_map(v, path, errs)
    if not t:
        return errs or [required(path)]
    md = as_map(t.get("metadata"), f"{path}.metadata", errs)
    errs += validate_labels(md.get("labels"), f"{path}.metadata.labels")
    errs += validate_annotations(md.get("annotations"), f"{path}.metadata.annotations")
    errs += validate_pod_spec(t.get("spec"), f"{path}.spec")
    spec = t.get("spec") if isinstance(t.get("spec"), Mapping) else {}
    rp = spec.get("restartPolicy") if isinstance(spec, Mapping) else None
    if restart and rp is not None and rp not in restart:
        errs.append(not_supported(f"{path}.spec.restartPolicy", rp, restart))
    return errs


def validate_pod(d: Mapping[str, Any]) -> Errors:
    md = d.get("metadata")
    name = md.get("name") if isinstance(md, Mapping) else None
    labels = md.get("labels") if isinstance(md, Mapping) else None
    return validate_meta(md, namespaced=True) + validate_pod_spec(
        d.get("spec"), pod_name=name if isinstance(name, str) else "",
        labels=labels if isinstance(labels, Mapping) else {})


def validate_node(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=False)
    spec = as_map(d.get("spec"), "spec", errs)
    errs += validate_taints(spec.get("taints"), "spec.taints")
    status = as_map(d.get("status"), "status", errs)
    for field in ("capacity", "allocatable"):
        # ValidateNode checks the quantities only, not the names (attachable-volumes-* and the like),
        # on a dotted path
        for k, q in as_map(status.get(field), f"status.{field}", errs).items():
            quantity(q, f"status.{field}.{k}", errs)
    return errs


def validate_namespace(d: Mapping[str, Any]) -> Errors:
    return validate_meta(d.get("metadata"), namespaced=False, name_rule=dns1123_label)


_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


def validate_limit_range(d: Mapping[str, Any]) -> Errors:
    """ValidateLimitRange: a supported type per limit, quantities, and min <= default request <=
    default <= max."""
    errs = validate_meta(d.get("metadata"), namespaced=True)
    spec = as_map(d.get("spec"), "spec", errs)
    for i, lim in enumerate(as_list(spec.get("limits"), "spec.limits", errs)):
        lp = f"spec.limits[{i}]"
        item = as_map(lim, lp, errs)
        kind = item.get("type")
        if kind not in _LIMIT_TYPES:
            errs.append(not_supported(f"{lp}.type", kind, _LIMIT_TYPES))
        got = {f: resource_list(item.get(f), f"{lp}.{f}", errs)
               for f in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")}
        for k, lo in got["min"].items():
            if k in got["max"] and lo > got["max"][k]:
                errs.append(invalid(f"{lp}.min[{k}]", item["min"][k], f"min value {item['min'][k]} is greater than "
                                    f"max value {item['max'][k]}"))
        for k, dr in got["defaultRequest"].items():
            if k in got["default"] and dr > got["default"][k]:
                errs.append(invalid(f"{lp}.defaultRequest[{k}]", item["defaultRequest"][k],
                                    f"default request value {item['defaultRequest'][k]} is greater than default "
                                    f"limit value {item['default'][k]}"))
    return errs


def is_int_or_percent(v: Any, path: str, errs: Errors) -> None:
    """An IntOrString that must be a non-negative count or a percent (IsValidPercent)."""
    if isinstance(v, str):
        import re

        if not re.fullmatch(r"[0-9]+%", v):
            errs.append(invalid(path, v, "a valid percent string must be a numeric string followed by an ending '%' "
                                "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"))
    else:
        errs += nonnegative(v, path)
