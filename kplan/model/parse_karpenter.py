"""Parsers for Karpenter's inputs (model/karpenter.py): NodePools and NodeClaims (karpenter.sh/v1)
and the instance-type catalog in the JSON format of Karpenter's KWOK cloud provider. The only
module that knows their field names.

Validation follows sigs.k8s.io/karpenter v1.15.0: the CRD's OpenAPI and CEL rules
(pkg/apis/v1/nodepool.go, nodeclaim.go) and the runtime validation (nodepool_validation.go,
nodeclaim_validation.go ValidateRequirement, labels.go IsRestrictedLabel); the words are kplan's.
Each error is one line naming the file, the object and the field.

The catalog is read as kwok/cloudprovider/helpers.go reads it (ConstructInstanceTypes,
setDefaultOptions, newInstanceType): ``pods`` defaults to 110, the overhead is kube-reserved 100m cpu and 10Mi memory, and the type gets the KWOK provider's
instance-size/family/cpu/memory labels. Unlike KWOK, an offering's ``Available: false`` is kept
(KWOK marks every offering available). Two kplan extensions, which the KWOK reader ignores, let
the built-in AWS catalog say what the AWS provider computes: ``overhead`` (kubeReserved,
systemReserved, evictionThreshold resource lists) and ``labels``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from kplan.model.karpenter import (
    API_VERSION,
    CAPACITY_TYPE_LABEL,
    CAPACITY_TYPES,
    CONSOLIDATION_POLICIES,
    DISRUPTION_REASONS,
    DOES_NOT_EXIST,
    EXISTS,
    GROUP,
    GT,
    GTE,
    IN,
    LT,
    LTE,
    NODE_CLAIM_KIND,
    NODE_POOL_KIND,
    NODE_POOL_LABEL,
    NORMALIZED_LABELS,
    OPERATORS,
    RESTRICTED_LABEL_DOMAINS,
    RESTRICTED_LABELS,
    WELL_KNOWN_LABELS,
    ZONE_LABEL,
    Budget,
    Catalog,
    Disruption,
    InstanceType,
    NodeClaim,
    NodeClassRef,
    NodePool,
    Offering,
    Requirement,
)
from kplan.model.name_rules import label_value, qualified_name
from kplan.model.objects import Taint
from kplan.model.parse import (
    Where,
    _int,
    _labels,
    _list,
    _map,
    _str,
    parse_resource_map,
    parse_taints,
    parse_time,
)
from kplan.model.quantity import parse_nanos

# KWOK's provider labels (kwok/apis/v1alpha1/labels.go), well known once the provider is loaded
KWOK_GROUP = "karpenter.kwok.sh"
KWOK_INSTANCE_SIZE_LABEL = KWOK_GROUP + "/instance-size"
KWOK_INSTANCE_FAMILY_LABEL = KWOK_GROUP + "/instance-family"
KWOK_INSTANCE_CPU_LABEL = KWOK_GROUP + "/instance-cpu"
KWOK_INSTANCE_MEMORY_LABEL = KWOK_GROUP + "/instance-memory"
KWOK_LABELS = (KWOK_INSTANCE_SIZE_LABEL, KWOK_INSTANCE_FAMILY_LABEL, KWOK_INSTANCE_CPU_LABEL,
               KWOK_INSTANCE_MEMORY_LABEL)
#: the KWOK provider's overhead for every instance type (newInstanceType)
KWOK_KUBE_RESERVED: Mapping[str, int] = MappingProxyType({"cpu": 100, "memory": 10 * 2**20})
#: the pods capacity a type without one gets (setDefaultOptions: Kubernetes' default 110)
KWOK_DEFAULT_PODS = 110

_DURATION = re.compile(r"^([0-9]+(s|m|h))+$")
_DURATION_PART = re.compile(r"([0-9]+)(s|m|h)")
_BUDGET_NODES = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
_BUDGET_DURATION = re.compile(r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$")
_BUDGET_SCHEDULE = re.compile(r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$")
_AWS_SIZE = re.compile(r"^\w+\.(nano|micro|small|medium|large|\d*xlarge|metal)$")
_FAMILY_DELIM = re.compile(r"[.-]")


def _quoted(values: Any) -> str:
    return ", ".join(f'"{v}"' for v in values)


# ------------------------------------------------------------------------------ shared parts

def _duration(v: Any, where: Where, path: str, *, never: bool) -> int | None:
    """A Go duration of the CRD's pattern ``([0-9]+(s|m|h))+`` (or ``Never``) → seconds."""
    text = _str(v, where, path)
    if never and text == "Never":
        return None
    if not _DURATION.fullmatch(text):
        allowed = '"Never" or ' if never else ""
        raise where.fail(path, f'Invalid value: "{text}": must be {allowed}a duration such as "30s", "10m" or "720h"')
    unit = {"s": 1, "m": 60, "h": 3600}
    return sum(int(n) * unit[u] for n, u in _DURATION_PART.findall(text))


def _domain(key: str) -> str:
    return key.split("/", 1)[0] if "/" in key else ""


def restricted_label_problem(key: str, well_known: frozenset[str] = WELL_KNOWN_LABELS,
                             restricted_domains: frozenset[str] = RESTRICTED_LABEL_DOMAINS) -> str:
    """IsRestrictedLabel: "" when a requirement or template label may use ``key``."""
    if key in well_known:
        return ""
    domain = _domain(key)
    if any(domain == d or domain.endswith("." + d) for d in restricted_domains) or key in RESTRICTED_LABELS:
        return (f"using label {key} is not allowed as it might interfere with the internal provisioning logic; "
                f"specify a well known label or a custom label that does not use a restricted domain "
                f"({', '.join(sorted(restricted_domains))})")
    return ""


def parse_requirement(v: Any, where: Where, path: str, *, restricted: bool,
                      well_known: frozenset[str] = WELL_KNOWN_LABELS) -> Requirement:
    """A NodeSelectorRequirementWithMinValues, checked as the CRD and ValidateRequirement check it."""
    m = _map(v, where, path)
    key = _str(m.get("key"), where, f"{path}.key")
    key = NORMALIZED_LABELS.get(key, key)
    op = _str(m.get("operator"), where, f"{path}.operator")
    values = tuple(_str(x, where, f"{path}.values[{i}]") for i, x in enumerate(_list(m.get("values"), where,
                                                                                       f"{path}.values")))
    mv = m.get("minValues")
    min_values = None if mv is None else _int(mv, where, f"{path}.minValues")
    if not key:
        raise where.fail(f"{path}.key", "Required value")
    for problem in qualified_name(key):
        raise where.fail(f"{path}.key", f'Invalid value: "{key}": {problem}')
    if op not in OPERATORS:
        raise where.fail(f"{path}.operator", f'Unsupported value: "{op}": supported values: {_quoted(OPERATORS)}')
    if restricted:
        problem = restricted_label_problem(key, well_known)
        if problem:
            raise where.fail(f"{path}.key", problem)
    if op in (GT, LT, GTE, LTE) and (len(values) != 1 or not values[0].isdigit()):
        raise where.fail(f"{path}.values", f"requirements operator '{op}' must have a single positive integer value")
    for i, value in enumerate(values):
        for problem in label_value(value):
            raise where.fail(f"{path}.values[{i}]", f'Invalid value: "{value}": {problem}')
    if min_values is not None and not 1 <= min_values <= 50:
        raise where.fail(f"{path}.minValues", f"Invalid value: {min_values}: must be between 1 and 50")
    if op == IN and not values:
        raise where.fail(f"{path}.values", "requirements with operator 'In' must have a value defined")
    if op == IN and min_values is not None and len(values) < min_values:
        raise where.fail(f"{path}.values", "requirements with 'minValues' must have at least that many values "
                         "specified in the 'values' field")
    if op in (EXISTS, DOES_NOT_EXIST) and values:
        raise where.fail(f"{path}.values", f"must be empty for operator '{op}'")
    if key == CAPACITY_TYPE_LABEL and op == IN:
        valid = [x for x in values if x in CAPACITY_TYPES]
        if not valid:
            raise where.fail(f"{path}.values", f"no valid values found in [{' '.join(values)}] for {key}, expected "
                             f"one of: {_quoted(CAPACITY_TYPES)}")
        if min_values is not None and len(valid) < min_values:
            raise where.fail(f"{path}.values", f"not enough valid values found for {key}: expected at least "
                             f"{min_values} of {_quoted(CAPACITY_TYPES)}")
    return Requirement(key, op, values, min_values)


def _requirements(v: Any, where: Where, path: str, *, restricted: bool) -> tuple[Requirement, ...]:
    items = _list(v, where, path)
    if len(items) > 100:
        raise where.fail(path, f"Too many: {len(items)}: must have at most 100 items")
    return tuple(parse_requirement(x, where, f"{path}[{i}]", restricted=restricted) for i, x in enumerate(items))


def _taints(v: Any, where: Where, path: str, seen: set[tuple[str, str]]) -> tuple[Taint, ...]:
    """validateTaintsField: qualified keys and values, no key/effect pair twice (across taints and
    startupTaints)."""
    taints = parse_taints(v, where, path)
    for i, t in enumerate(taints):
        if not t.key:
            raise where.fail(f"{path}[{i}].key", "Required value")
        for problem in qualified_name(t.key):
            raise where.fail(f"{path}[{i}].key", f'Invalid value: "{t.key}": {problem}')
        if t.value:
            for problem in qualified_name(t.value):
                raise where.fail(f"{path}[{i}].value", f'Invalid value: "{t.value}": {problem}')
        if (t.key, t.effect) in seen:
            raise where.fail(f"{path}[{i}]", f"duplicate taint Key/Effect pair {t.key}={t.effect}")
        seen.add((t.key, t.effect))
    return taints


def _node_class_ref(v: Any, where: Where, path: str, *, required: bool) -> NodeClassRef | None:
    if v is None:
        if required:
            raise where.fail(path, "Required value")
        return None
    m = _map(v, where, path)
    out = []
    for f in ("group", "kind", "name"):
        text = _str(m.get(f), where, f"{path}.{f}")
        if not text:
            raise where.fail(f"{path}.{f}", f"{f} may not be empty")
        out.append(text)
    return NodeClassRef(*out)


def _limits(v: Any, where: Where, path: str) -> Mapping[str, int]:
    return MappingProxyType(parse_resource_map(v, where, path))


def _meta(d: Mapping[str, Any], source: str, kind: str) -> tuple[str, Mapping[str, Any], Where]:
    md = _map(d.get("metadata"), Where(source, kind, "?"), "metadata")
    name = _str(md.get("name"), Where(source, kind, "?"), "metadata.name")
    where = Where(source, kind, name or "?")
    if not name:
        raise where.fail("metadata.name", "Required value")
    api = _str(d.get("apiVersion"), where, "apiVersion", API_VERSION)
    if api != API_VERSION:
        raise where.fail("apiVersion", f'Unsupported value: "{api}": supported values: "{API_VERSION}" '
                         "(Karpenter v1; convert v1beta1 objects with Karpenter's upgrade guide)")
    return name, md, where


# ------------------------------------------------------------------------------ NodePool

def _budgets(v: Any, where: Where, path: str) -> tuple[Budget, ...]:
    if v is None:
        return (Budget(),)
    items = _list(v, where, path)
    if len(items) > 50:
        raise where.fail(path, f"Too many: {len(items)}: must have at most 50 items")
    out = []
    for i, b in enumerate(items):
        p = f"{path}[{i}]"
        m = _map(b, where, p)
        nodes = _str(m.get("nodes"), where, f"{p}.nodes", "10%")
        if not _BUDGET_NODES.fullmatch(nodes):
            raise where.fail(f"{p}.nodes", f'Invalid value: "{nodes}": must be a count or a percentage such as "10%"')
        reasons = tuple(_str(r, where, f"{p}.reasons[{j}]") for j, r in enumerate(_list(m.get("reasons"), where,
                                                                                           f"{p}.reasons")))
        for j, r in enumerate(reasons):
            if r not in DISRUPTION_REASONS:
                raise where.fail(f"{p}.reasons[{j}]", f'Unsupported value: "{r}": supported values: '
                                 + _quoted(DISRUPTION_REASONS))
        schedule = m.get("schedule")
        duration = m.get("duration")
        if (schedule is None) != (duration is None):
            raise where.fail(p, "'schedule' must be set with 'duration'")
        sched = None
        dur = None
        if schedule is not None:
            sched = _str(schedule, where, f"{p}.schedule")
            if not _BUDGET_SCHEDULE.fullmatch(sched):
                raise where.fail(f"{p}.schedule", f'Invalid value: "{sched}": must be a cron schedule')
            text = _str(duration, where, f"{p}.duration")
            if not _BUDGET_DURATION.fullmatch(text):
                raise where.fail(f"{p}.duration", f'Invalid value: "{text}": must be hours and minutes such as "1h30m"')
            dur = _duration(text.removesuffix("0s") or text, where, f"{p}.duration", never=False)
        out.append(Budget(nodes, reasons, sched, dur))
    return tuple(out)


def parse_node_pool(d: Mapping[str, Any], source: str = "") -> NodePool:
    name, md, where = _meta(d, source, NODE_POOL_KIND)
    spec = _map(d.get("spec"), where, "spec")
    if "template" not in spec:
        raise where.fail("spec.template", "Required value")
    template = _map(spec.get("template"), where, "spec.template")
    tmd = _map(template.get("metadata"), where, "spec.template.metadata")
    tspec = _map(template.get("spec"), where, "spec.template.spec")
    labels = _labels(tmd.get("labels"), where, "spec.template.metadata.labels")
    for key, value in labels.items():
        path = f"spec.template.metadata.labels[{key}]"
        if key == NODE_POOL_LABEL:
            raise where.fail(path, f'invalid key name "{key}" in labels, restricted')
        for problem in qualified_name(key):
            raise where.fail(path, f'invalid key name "{key}" in labels: {problem}')
        for problem in label_value(value):
            raise where.fail(path, f'Invalid value: "{value}": {problem}')
        problem = restricted_label_problem(key)
        if problem:
            raise where.fail(path, problem)
    if "requirements" not in tspec:
        raise where.fail("spec.template.spec.requirements", "Required value")
    reqs = _requirements(tspec.get("requirements"), where, "spec.template.spec.requirements", restricted=True)
    for i, r in enumerate(reqs):
        if r.key == NODE_POOL_LABEL:
            raise where.fail(f"spec.template.spec.requirements[{i}].key",
                             f'invalid key: "{r.key}" in requirements, restricted')
    seen: set[tuple[str, str]] = set()
    taints = _taints(tspec.get("taints"), where, "spec.template.spec.taints", seen)
    startup = _taints(tspec.get("startupTaints"), where, "spec.template.spec.startupTaints", seen)
    ref = _node_class_ref(tspec.get("nodeClassRef"), where, "spec.template.spec.nodeClassRef", required=True)
    expire = _duration(tspec.get("expireAfter", "720h"), where, "spec.template.spec.expireAfter", never=True)
    tgp = tspec.get("terminationGracePeriod")
    grace = None if tgp is None else _duration(tgp, where, "spec.template.spec.terminationGracePeriod", never=False)
    dis = _map(spec.get("disruption"), where, "spec.disruption")
    policy = _str(dis.get("consolidationPolicy"), where, "spec.disruption.consolidationPolicy",
                  "WhenEmptyOrUnderutilized")
    if policy not in CONSOLIDATION_POLICIES:
        raise where.fail("spec.disruption.consolidationPolicy", f'Unsupported value: "{policy}": supported values: '
                         + _quoted(CONSOLIDATION_POLICIES))
    after = _duration(dis.get("consolidateAfter", "0s"), where, "spec.disruption.consolidateAfter", never=True)
    disruption = Disruption(policy, after, _budgets(dis.get("budgets"), where, "spec.disruption.budgets"))
    limits = _limits(spec.get("limits"), where, "spec.limits")
    weight = spec.get("weight")
    w = None if weight is None else _int(weight, where, "spec.weight")
    if w is not None and not 1 <= w <= 100:
        raise where.fail("spec.weight", f"Invalid value: {w}: must be between 1 and 100")
    replicas = spec.get("replicas")
    n = None if replicas is None else _int(replicas, where, "spec.replicas")
    if n is not None:
        if n < 0:
            raise where.fail("spec.replicas", f"Invalid value: {n}: must be at least 0")
        if w is not None:
            raise where.fail("spec.weight", "'weight' is not supported on static NodePools")
        if any(k != "nodes" for k in limits):
            raise where.fail("spec.limits", "only 'limits.nodes' is supported on static NodePools")
    return NodePool(
        name=name,
        labels=labels,
        annotations=_labels(tmd.get("annotations"), where, "spec.template.metadata.annotations"),
        requirements=reqs,
        taints=taints,
        startup_taints=startup,
        node_class_ref=ref,
        expire_after=expire,
        termination_grace_period=grace,
        disruption=disruption,
        limits=limits,
        weight=w,
        replicas=n,
        creation_time=parse_time(md.get("creationTimestamp"), where, "metadata.creationTimestamp"),
        source=source,
    )


# ------------------------------------------------------------------------------ NodeClaim

def _condition_true(status: Mapping[str, Any], kind: str, where: Where) -> bool:
    for i, c in enumerate(_list(status.get("conditions"), where, "status.conditions")):
        c = _map(c, where, f"status.conditions[{i}]")
        if c.get("type") == kind:
            return _str(c.get("status"), where, f"status.conditions[{i}].status") == "True"
    return False


def _true_condition(status: Mapping[str, Any], kind: str, where: Where) -> tuple[float | None, str] | None:
    """A condition of type ``kind`` with status "True": (its lastTransitionTime, its reason); None
    when there is none."""
    for i, c in enumerate(_list(status.get("conditions"), where, "status.conditions")):
        c = _map(c, where, f"status.conditions[{i}]")
        if c.get("type") == kind:
            if _str(c.get("status"), where, f"status.conditions[{i}].status") != "True":
                return None
            return (parse_time(c.get("lastTransitionTime"), where, f"status.conditions[{i}].lastTransitionTime"),
                    _str(c.get("reason"), where, f"status.conditions[{i}].reason"))
    return None


def parse_node_claim(d: Mapping[str, Any], source: str = "") -> NodeClaim:
    name, md, where = _meta(d, source, NODE_CLAIM_KIND)
    spec = _map(d.get("spec"), where, "spec")
    status = _map(d.get("status"), where, "status")
    labels = _labels(md.get("labels"), where, "metadata.labels")
    # a NodeClaim's requirements come from its NodePool and the pods (the nodepool key included)
    reqs = _requirements(spec.get("requirements"), where, "spec.requirements", restricted=False)
    seen: set[tuple[str, str]] = set()
    taints = _taints(spec.get("taints"), where, "spec.taints", seen)
    startup = _taints(spec.get("startupTaints"), where, "spec.startupTaints", seen)
    resources = _map(spec.get("resources"), where, "spec.resources")
    expire = _duration(spec.get("expireAfter", "720h"), where, "spec.expireAfter", never=True)
    tgp = spec.get("terminationGracePeriod")
    grace = None if tgp is None else _duration(tgp, where, "spec.terminationGracePeriod", never=False)
    initialized = _true_condition(status, "Initialized", where)
    drifted = _true_condition(status, "Drifted", where)
    return NodeClaim(
        name=name,
        node_pool=labels.get(NODE_POOL_LABEL, ""),
        labels=labels,
        annotations=_labels(md.get("annotations"), where, "metadata.annotations"),
        requirements=reqs,
        taints=taints,
        startup_taints=startup,
        requests=MappingProxyType(parse_resource_map(resources.get("requests"), where, "spec.resources.requests")),
        node_class_ref=_node_class_ref(spec.get("nodeClassRef"), where, "spec.nodeClassRef", required=False),
        expire_after=expire,
        termination_grace_period=grace,
        node_name=_str(status.get("nodeName"), where, "status.nodeName"),
        provider_id=_str(status.get("providerID"), where, "status.providerID"),
        capacity=MappingProxyType(parse_resource_map(status.get("capacity"), where, "status.capacity")),
        allocatable=MappingProxyType(parse_resource_map(status.get("allocatable"), where, "status.allocatable")),
        launched=_condition_true(status, "Launched", where),
        registered=_condition_true(status, "Registered", where),
        initialized=_condition_true(status, "Initialized", where),
        creation_time=parse_time(md.get("creationTimestamp"), where, "metadata.creationTimestamp"),
        deletion_time=parse_time(md.get("deletionTimestamp"), where, "metadata.deletionTimestamp"),
        initialized_time=initialized[0] if initialized else None,
        last_pod_event_time=parse_time(status.get("lastPodEventTime"), where, "status.lastPodEventTime"),
        drifted=drifted is not None,
        drifted_time=drifted[0] if drifted else None,
        drift_reason=drifted[1] if drifted else "",
        source=source,
    )


#: kind → parser, for objects of apiVersion karpenter.sh/v1
KARPENTER_PARSERS = {NODE_POOL_KIND: parse_node_pool, NODE_CLAIM_KIND: parse_node_claim}


def is_karpenter_object(d: Mapping[str, Any]) -> bool:
    """A NodePool or NodeClaim of the karpenter.sh group (any version: others are refused by name)."""
    return d.get("kind") in KARPENTER_PARSERS and str(d.get("apiVersion", "")).startswith(GROUP + "/")


# ------------------------------------------------------------------------------ the catalog

_SUFFIXES_DECIMAL = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""), (-3, "m"), (-6, "u"),
                     (-9, "n"))
_SUFFIXES_BINARY = ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"))


def quantity_string(text: str) -> str:
    """resource.Quantity's canonical String() of a quantity as written: binary quantities (Ki, Mi,
    …) of at least 1024 in the largest binary unit that keeps them whole, the rest in the largest
    decimal unit that does ("1000" → "1k", "0.5" → "500m"). The KWOK provider labels types with it."""
    nanos = parse_nanos(text)
    s = text.strip()
    binary = s.endswith("i") and len(s) > 2 and s[-2] in "KMGTPE"
    if binary and nanos % 10**9 == 0 and abs(nanos) >= 1024 * 10**9:
        whole = nanos // 10**9
        for bits, suffix in _SUFFIXES_BINARY:
            if whole % (1 << bits) == 0:
                return f"{whole >> bits}{suffix}"
        return str(whole)
    if nanos == 0:
        return "0"
    for exp, suffix in _SUFFIXES_DECIMAL:
        unit = 10 ** (exp + 9)
        if nanos % unit == 0:
            return f"{nanos // unit}{suffix}"
    return f"{nanos}n"


def kwok_size(name: str, cpu: str) -> str:
    """parseSizeFromType: the AWS size of ``family.size`` names, else the cpu count."""
    m = _AWS_SIZE.match(name)
    return m.group(1) if m else cpu


def kwok_family(name: str) -> str:
    """parseFamilyFromType: the part before the first "." or "-", else the first character."""
    parts = _FAMILY_DELIM.split(name, maxsplit=1)
    return parts[0] if len(parts) == 2 else name[:1]


def _offering(v: Any, where: Where, path: str, well_known: set[str]) -> Offering:
    m = _map(v, where, path)
    price = m.get("Price")
    if isinstance(price, bool) or not isinstance(price, (int, float)):
        raise where.fail(f"{path}.Price", f"expected a number (dollars per hour), got {price!r}")
    if price < 0:
        raise where.fail(f"{path}.Price", f"Invalid value: {price}: must not be negative")
    available = m.get("Available", True)
    if not isinstance(available, bool):
        raise where.fail(f"{path}.Available", f"expected true or false, got {available!r}")
    reqs = []
    for i, r in enumerate(_list(m.get("Requirements"), where, f"{path}.Requirements")):
        req = _offering_requirement(r, where, f"{path}.Requirements[{i}]")
        if req.operator in (GT, LT, GTE, LTE):
            raise where.fail(f"{path}.Requirements[{i}].operator", f'Unsupported value: "{req.operator}": an '
                             "offering's requirements use In, NotIn, Exists or DoesNotExist")
        reqs.append(req)
        well_known.add(req.key)
    zone = next((r.values[0] for r in reqs if r.key == ZONE_LABEL and r.operator == IN and r.values), "")
    capacity_type = next((r.values[0] for r in reqs if r.key == CAPACITY_TYPE_LABEL and r.operator == IN and r.values),
                         "")
    rc = _int(m.get("ReservationCapacity"), where, f"{path}.ReservationCapacity")
    # KWOK's setDefaultOptions marks every offering available; kplan keeps the file's word (absent:
    # available), as the oracle does, so a catalog can take an offering away
    return Offering(float(price), available, tuple(reqs), zone, capacity_type, rc)


_offering_requirements: dict[tuple[object, ...], Requirement] = {}


def _offering_requirement(r: Any, where: Where, path: str) -> Requirement:
    """parse_requirement, kept for the few distinct requirements a catalog's offerings repeat (a
    zone and a capacity type, thousands of times)."""
    if type(r) is dict and type(r.get("values")) is list and "minValues" not in r:
        try:
            raw = (r.get("key"), r.get("operator"), tuple(r["values"]))
            got = _offering_requirements.get(raw)
        except TypeError:  # an unhashable value: the parse below says what is wrong
            got = None
        if got is not None:
            return got
        req = parse_requirement(r, where, path, restricted=False)
        if len(_offering_requirements) < 4096:
            _offering_requirements[raw] = req
        return req
    return parse_requirement(r, where, path, restricted=False)


def _overhead(v: Any, where: Where, path: str) -> Mapping[str, int]:
    if v is None:
        return KWOK_KUBE_RESERVED
    m = _map(v, where, path)
    total: dict[str, int] = {}
    for part in ("kubeReserved", "systemReserved", "evictionThreshold"):
        for k, q in parse_resource_map(m.get(part), where, f"{path}.{part}").items():
            total[k] = total.get(k, 0) + q
    return MappingProxyType(total)


def parse_instance_type(v: Any, source: str, index: int, well_known: set[str]) -> InstanceType:
    m = _map(v, Where(source, "instance type", f"[{index}]"), f"[{index}]")
    name = _str(m.get("name"), Where(source, "instance type", f"[{index}]"), "name")
    where = Where(source, "instance type", name or f"[{index}]")
    if not name:
        raise where.fail("name", "Required value")
    for problem in label_value(name):
        raise where.fail("name", f'Invalid value: "{name}": {problem} (it becomes the node\'s instance-type label)')
    arch = _str(m.get("architecture"), where, "architecture")
    if not arch:
        raise where.fail("architecture", "Required value")
    oses = tuple(_str(x, where, f"operatingSystems[{i}]")
                 for i, x in enumerate(_list(m.get("operatingSystems"), where, "operatingSystems")))
    raw_resources = _map(m.get("resources"), where, "resources")
    capacity = {"pods": KWOK_DEFAULT_PODS}
    capacity.update(parse_resource_map(raw_resources, where, "resources"))
    for k, q in capacity.items():
        if q < 0:
            raise where.fail(f"resources[{k}]", f"Invalid value: {q}: must not be negative")
    offerings = tuple(_offering(o, where, f"offerings[{i}]", well_known)
                      for i, o in enumerate(_list(m.get("offerings"), where, "offerings")))
    cpu = quantity_string(str(raw_resources["cpu"])) if "cpu" in raw_resources else ""
    memory = quantity_string(str(raw_resources["memory"])) if "memory" in raw_resources else ""
    labels = {
        KWOK_INSTANCE_SIZE_LABEL: kwok_size(name, cpu),
        KWOK_INSTANCE_FAMILY_LABEL: kwok_family(name),
        KWOK_INSTANCE_CPU_LABEL: cpu,
        KWOK_INSTANCE_MEMORY_LABEL: memory,
    }
    for key, value in _labels(m.get("labels"), where, "labels").items():
        labels[key] = value
        well_known.add(key)
    return InstanceType(
        name=name,
        architecture=arch,
        operating_systems=oses,
        capacity=MappingProxyType(capacity),
        overhead=_overhead(m.get("overhead"), where, "overhead"),
        offerings=offerings,
        labels=MappingProxyType(labels),
    )


def parse_catalog(doc: Any, source: str) -> Catalog:
    """A KWOK instance-types document (a JSON list) → the catalog."""
    if not isinstance(doc, list):
        raise Where(source, "instance types", "file").fail(
            "(top level)", f"expected a JSON list of instance types, got {type(doc).__name__}")
    well_known: set[str] = set(WELL_KNOWN_LABELS) | set(KWOK_LABELS)
    types = []
    seen: set[str] = set()
    for i, v in enumerate(doc):
        it = parse_instance_type(v, source, i, well_known)
        if it.name in seen:
            raise Where(source, "instance type", it.name).fail("name", "Duplicate value: listed twice")
        seen.add(it.name)
        types.append(it)
    if not types:
        raise Where(source, "instance types", "file").fail("(top level)", "the catalog lists no instance types")
    return Catalog(tuple(types), source, frozenset(well_known), RESTRICTED_LABEL_DOMAINS | {KWOK_GROUP})
