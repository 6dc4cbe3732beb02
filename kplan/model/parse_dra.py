"""Parsers for the resource.k8s.io kinds (model/dra.py), one per kind, each run once per object."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kplan.model.dra import (
    ALL,
    EQUAL,
    EXACT_COUNT,
    EXISTS,
    SERVED_VERSIONS,
    TAINT_RULE_VERSIONS,
    Allocation,
    AttributeValue,
    ClaimSpec,
    Constraint,
    ConsumerRef,
    CounterSet,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceResult,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
    DraObject,
    RequestPolicy,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    SubRequest,
)
from kplan.model.name_rules import qualified_name
from kplan.model.parse import Where, _int, _labels, _list, _map, _str, parse_node_selector_term, parse_time
from kplan.model.quantity import QuantityError, nanos_to_value, parse_nanos
from kplan.model.selectors import NodeSelector

_NOT_MODELLED = "kplan does not model this feature (its feature gate is off in kube-scheduler 1.34)"
#: DeviceTaintEffect values the API accepts
_EFFECTS = ("NoExecute", "NoSchedule", "None")


def _version(d: Mapping[str, Any], where: Where, served: tuple[str, ...] = SERVED_VERSIONS) -> str:
    api = str(d.get("apiVersion") or "resource.k8s.io/v1")
    group, _, version = api.partition("/")
    if group != "resource.k8s.io" or version not in served:
        raise where.fail("apiVersion", f'Unsupported value: "{api}": supported values: '
                         + ", ".join(f'"resource.k8s.io/{v}"' for v in served))
    return version


def _effect(m: Mapping[str, Any], where: Where, path: str, *, required: bool) -> str:
    effect = _str(m.get("effect"), where, f"{path}.effect")
    if not effect and required:
        raise where.fail(f"{path}.effect", "Required value")
    if effect and effect not in _EFFECTS:
        raise where.fail(f"{path}.effect", f'Unsupported value: "{effect}": supported values: '
                         + ", ".join(f'"{e}"' for e in _EFFECTS))
    return effect


def _taint(v: Any, where: Where, path: str) -> DeviceTaint:
    """A DeviceTaint: key required, effect required (None, NoSchedule or NoExecute)."""
    m = _map(v, where, path)
    key = _str(m.get("key"), where, f"{path}.key")
    if not key:
        raise where.fail(f"{path}.key", "Required value")
    return DeviceTaint(key, _str(m.get("value"), where, f"{path}.value"), _effect(m, where, path, required=True))


def _tolerations(v: Any, where: Where, path: str) -> tuple[DeviceToleration, ...]:
    """A request's DeviceTolerations; operator defaults to Equal (API defaulting)."""
    out = []
    for i, t in enumerate(_list(v, where, path)):
        p = f"{path}[{i}]"
        m = _map(t, where, p)
        op = _str(m.get("operator"), where, f"{p}.operator", EQUAL)
        if op not in (EQUAL, EXISTS):
            raise where.fail(f"{p}.operator", f'Unsupported value: "{op}": supported values: "Equal", "Exists"')
        value = _str(m.get("value"), where, f"{p}.value")
        if op == EXISTS and value:
            raise where.fail(f"{p}.value", f'Invalid value: "{value}": must be empty for operator `Exists`')
        out.append(DeviceToleration(_str(m.get("key"), where, f"{p}.key"), op, value,
                                    _effect(m, where, p, required=False)))
    return tuple(out)


def _named(d: Mapping[str, Any], source: str, kind: str, namespaced: bool) -> tuple[str, str, Where]:
    md = _map(d.get("metadata"), Where(source, kind, "?"), "metadata")
    name = str(md.get("name") or "")
    ns = str(md.get("namespace") or "default") if namespaced else ""
    where = Where(source, kind, f"{ns}/{name}" if namespaced else (name or "?"))
    if not name:
        raise where.fail("metadata.name", "Required value")
    return ns, name, where


def _refuse(m: Mapping[str, Any], where: Where, path: str, *fields: str) -> None:
    for f in fields:
        if m.get(f) not in (None, [], {}, False):
            raise where.fail(f"{path}.{f}", _NOT_MODELLED)


_BINDING_CONDITIONS = (
    "kplan does not model device binding conditions (KEP-5007, DRADeviceBindingConditions: alpha and off in 1.34 "
    "and 1.35, beta and on from 1.36): the scheduler then waits in PreBind until the device's driver or a "
    "controller reports the conditions, up to DynamicResourcesArgs.bindingTimeout, and deallocates and retries on "
    "a failure or a timeout, none of which an input can show; remove the field to treat the device as ready at once")


def _refuse_binding_conditions(m: Mapping[str, Any], where: Where, path: str) -> None:
    """A device's bindingConditions, bindingFailureConditions and bindsToNode (KEP-5007)."""
    for f in ("bindingConditions", "bindingFailureConditions", "bindsToNode"):
        if m.get(f) not in (None, [], {}, False):
            raise where.fail(f"{path}.{f}", _BINDING_CONDITIONS)


def _selectors(v: Any, where: Where, path: str) -> tuple[str, ...]:
    out = []
    for i, s in enumerate(_list(v, where, path)):
        cel = _map(_map(s, where, f"{path}[{i}]").get("cel"), where, f"{path}[{i}].cel")
        # a selector without cel is kept as "" and reported by the allocator, as upstream does
        out.append(_str(cel.get("expression"), where, f"{path}[{i}].cel.expression"))
    return tuple(out)


# ------------------------------------------------------------------------------ DeviceClass

def parse_device_class(d: Mapping[str, Any], source: str = "") -> DeviceClass:
    _, name, where = _named(d, source, "DeviceClass", False)
    _version(d, where)
    spec = _map(d.get("spec"), where, "spec")
    extended = _str(spec.get("extendedResourceName"), where, "spec.extendedResourceName")
    if spec.get("extendedResourceName") is not None and not is_extended_resource_name(extended):
        raise where.fail("spec.extendedResourceName", f'Invalid value: "{extended}": must be a valid extended '
                         "resource name")
    md = _map(d.get("metadata"), where, "metadata")
    return DeviceClass(name, _selectors(spec.get("selectors"), where, "spec.selectors"), source, extended,
                       parse_time(md.get("creationTimestamp"), where, "metadata.creationTimestamp"))


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a resource in a domain of its own (not kubernetes.io's),
    not a quota's "requests." form, and a qualified name with that prefix."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name("requests." + name)


# ---------------------------------------------------------------------------- ResourceSlice

def _attribute(v: Any, where: Where, path: str) -> AttributeValue:
    m = _map(v, where, path)
    for t in ("string", "int", "bool", "version"):
        if t in m and m[t] is not None:
            x = m[t]
            if t == "int":
                return ("int", _int(x, where, f"{path}.int"))
            if t == "bool":
                if not isinstance(x, bool):
                    raise where.fail(f"{path}.bool", f"expected a boolean, got {x!r}")
                return ("bool", x)
            return (t, _str(x, where, f"{path}.{t}"))
    raise where.fail(path, "Required value: exactly one of string, int, bool or version must be set")


def _counters(v: Any, where: Where, path: str) -> dict[str, int]:
    out = {}
    for k, c in _map(v, where, path).items():
        q = _map(c, where, f"{path}.{k}").get("value")
        try:
            out[str(k)] = parse_nanos(q)
        except (QuantityError, ValueError, TypeError):
            raise where.fail(f"{path}.{k}.value", f"expected a quantity, got {q!r}") from None
    return out


def _counter_sets(v: Any, where: Where, path: str, name_key: str) -> tuple[CounterSet, ...]:
    """sharedCounters (``name``) or consumesCounters (``counterSet``) entries."""
    out = []
    for i, c in enumerate(_list(v, where, path)):
        m = _map(c, where, f"{path}[{i}]")
        _refuse(m, where, f"{path}[{i}]", "compatibilityGroups")
        name = _str(m.get(name_key), where, f"{path}[{i}].{name_key}")
        if not name:
            raise where.fail(f"{path}[{i}].{name_key}", "Required value")
        out.append(CounterSet(name, _counters(m.get("counters"), where, f"{path}[{i}].counters")))
    return tuple(out)


def _node_selector(v: Any, where: Where, path: str) -> NodeSelector | None:
    if v is None:
        return None
    terms = _map(v, where, path).get("nodeSelectorTerms")
    return NodeSelector(tuple(parse_node_selector_term(t, where, f"{path}.nodeSelectorTerms[{i}]")
                              for i, t in enumerate(_list(terms, where, f"{path}.nodeSelectorTerms"))))


def _device(v: Any, version: str, where: Where, path: str, per_device: bool = False) -> Device:
    m = _map(v, where, path)
    name = _str(m.get("name"), where, f"{path}.name")
    if not name:
        raise where.fail(f"{path}.name", "Required value")
    body = m
    if version == "v1beta1":
        body = _map(m.get("basic"), where, f"{path}.basic")
        path = f"{path}.basic"
    _refuse_binding_conditions(body, where, path)
    multiple = body.get("allowMultipleAllocations")
    if multiple is not None and not isinstance(multiple, bool):
        raise where.fail(f"{path}.allowMultipleAllocations", f"expected a boolean, got {multiple!r}")
    attrs = {str(k): _attribute(x, where, f"{path}.attributes.{k}")
             for k, x in _map(body.get("attributes"), where, f"{path}.attributes").items()}
    caps = {}
    policies = {}
    for k, x in _map(body.get("capacity"), where, f"{path}.capacity").items():
        cm = _map(x, where, f"{path}.capacity.{k}")
        q = cm.get("value")
        value = _nanos(q, where, f"{path}.capacity.{k}.value")
        caps[str(k)] = str(q)
        if cm.get("requestPolicy") is not None:
            p = f"{path}.capacity.{k}.requestPolicy"
            if multiple is not True:
                # validateSingleAllocatableDeviceCapacity (checked with DRAConsumableCapacity on;
                # with it off the API server drops the policy first)
                raise where.fail(p, "Forbidden: allowMultipleAllocations must be true")
            policies[str(k)] = _request_policy(cm["requestPolicy"], value, where, p)
    taints = tuple(_taint(t, where, f"{path}.taints[{i}]")
                   for i, t in enumerate(_list(body.get("taints"), where, f"{path}.taints")))
    node_name = _str(body.get("nodeName"), where, f"{path}.nodeName")
    sel = _node_selector(body.get("nodeSelector"), where, f"{path}.nodeSelector")
    all_nodes = body.get("allNodes") is True
    chosen = sum((bool(node_name), sel is not None, all_nodes))
    if per_device and chosen != 1:
        raise where.fail(path, "Invalid value: exactly one of nodeName, nodeSelector or allNodes must be set "
                               "(the slice has perDeviceNodeSelection)")
    if not per_device and chosen:
        raise where.fail(path, "Invalid value: nodeName, nodeSelector and allNodes of a device need the slice's "
                               "perDeviceNodeSelection")
    return Device(name, attrs, caps, taints,
                  _counter_sets(body.get("consumesCounters"), where, f"{path}.consumesCounters", "counterSet"),
                  node_name, sel, all_nodes, multiple is True, policies)


def _nanos(q: Any, where: Where, path: str) -> int:
    try:
        return parse_nanos(q)
    except (QuantityError, ValueError, TypeError):
        raise where.fail(path, f"expected a quantity, got {q!r}") from None


def _request_policy(v: Any, capacity: int, where: Where, path: str) -> RequestPolicy:
    """A capacity's requestPolicy, with the API server's checks (validateRequestPolicy): at most one
    of validValues (ascending, none above the capacity, the default among them) and validRange
    (min required; min, max and one step from min within the capacity; the default within the
    range and, with a step, a whole number of steps from min, as the max)."""
    m = _map(v, where, path)
    default = None if m.get("default") is None else _nanos(m["default"], where, f"{path}.default")
    values = tuple(_nanos(x, where, f"{path}.validValues[{i}]")
                   for i, x in enumerate(_list(m.get("validValues"), where, f"{path}.validValues")))
    rng = m.get("validRange")
    if values and rng is not None:
        raise where.fail(path, 'Forbidden: exactly one policy can be specified, cannot specify "validValues" and '
                               '"validRange" at the same time')
    if values:
        if default is None:
            raise where.fail(f"{path}.default", "Required value: required when validValues is defined")
        if any(a > b for a, b in zip(values, values[1:], strict=False)):
            raise where.fail(f"{path}.validValues", "Invalid value: values must be sorted in ascending order")
        if any(x > capacity for x in values):
            raise where.fail(f"{path}.validValues", "Invalid value: option is larger than capacity value")
        if default not in values:
            raise where.fail(f"{path}.validValues", "Invalid value: default value is not valid according to the "
                                                    "requestPolicy")
        return RequestPolicy(default, values)
    if rng is None:
        return RequestPolicy(default)
    p = f"{path}.validRange"
    r = _map(rng, where, p)
    if default is None:
        raise where.fail(f"{path}.default", "Required value: required when validRange is defined")
    if r.get("min") is None:
        raise where.fail(f"{p}.min", "Required value: required when validRange is defined")
    low = _nanos(r["min"], where, f"{p}.min")
    high = None if r.get("max") is None else _nanos(r["max"], where, f"{p}.max")
    step = None if r.get("step") is None else _nanos(r["step"], where, f"{p}.step")
    if low > capacity:
        raise where.fail(f"{p}.min", "Invalid value: min is larger than capacity value")
    if default < low:
        raise where.fail(f"{p}.min", "Invalid value: default is less than min")
    if high is not None and (low > high or high > capacity or default > high):
        raise where.fail(f"{p}.max", "Invalid value: max must be within min, the capacity value and the default")
    if step is not None:
        if step <= 0:
            raise where.fail(f"{p}.step", "Invalid value: step must be greater than zero")
        if low + step > capacity:
            raise where.fail(f"{p}.step", "Invalid value: one step is larger than capacity value")
        for x in (default, high):
            if x is not None and (nanos_to_value(x) - nanos_to_value(low)) % nanos_to_value(step):
                raise where.fail(f"{p}.step", "Invalid value: value is not a multiple of a given step from min")
    return RequestPolicy(default, (), low, high, step, True)


def parse_resource_slice(d: Mapping[str, Any], source: str = "") -> ResourceSlice:
    _, name, where = _named(d, source, "ResourceSlice", False)
    version = _version(d, where)
    spec = _map(d.get("spec"), where, "spec")
    driver = _str(spec.get("driver"), where, "spec.driver")
    if not driver:
        raise where.fail("spec.driver", "Required value")
    pool = _map(spec.get("pool"), where, "spec.pool")
    pool_name = _str(pool.get("name"), where, "spec.pool.name")
    if not pool_name:
        raise where.fail("spec.pool.name", "Required value")
    node_name = _str(spec.get("nodeName"), where, "spec.nodeName")
    sel = _node_selector(spec.get("nodeSelector"), where, "spec.nodeSelector")
    all_nodes = spec.get("allNodes") is True
    per_device = spec.get("perDeviceNodeSelection") is True
    if sum((bool(node_name), sel is not None, all_nodes, per_device)) != 1:
        raise where.fail("spec", "Invalid value: exactly one of nodeName, nodeSelector, allNodes or "
                                 "perDeviceNodeSelection must be set")
    shared = _counter_sets(spec.get("sharedCounters"), where, "spec.sharedCounters", "name")
    devices = tuple(_device(x, version, where, f"spec.devices[{i}]", per_device)
                    for i, x in enumerate(_list(spec.get("devices"), where, "spec.devices")))
    if shared and devices:
        raise where.fail("spec", "Invalid value: only one of `sharedCounters` or `devices` is allowed")
    return ResourceSlice(name, driver, pool_name, _int(pool.get("generation"), where, "spec.pool.generation"),
                         _int(pool.get("resourceSliceCount"), where, "spec.pool.resourceSliceCount", 1),
                         node_name, sel, all_nodes, devices, source, shared, per_device)


# ---------------------------------------------------------------------- claims and templates

def _capacity_requests(v: Any, where: Where, path: str) -> tuple[tuple[str, int], ...] | None:
    """A request's ``capacity`` (CapacityRequirements): its requests in name order."""
    if v is None:
        return None
    requests = _map(_map(v, where, path).get("requests"), where, f"{path}.requests")
    out = []
    for k, q in sorted(requests.items()):
        amount = _nanos(q, where, f"{path}.requests.{k}")
        if amount < 0:
            raise where.fail(f"{path}.requests.{k}", f"Invalid value: {q!r}: must be greater than or equal to 0")
        out.append((str(k), amount))
    return tuple(out)


def _exact(m: Mapping[str, Any], name: str, where: Where, path: str, *, sub: bool) -> SubRequest:
    mode = _str(m.get("allocationMode"), where, f"{path}.allocationMode", EXACT_COUNT)
    if mode not in (EXACT_COUNT, ALL):
        raise where.fail(f"{path}.allocationMode", f'Unsupported value: "{mode}": supported values: "All", '
                         '"ExactCount"')
    count = _int(m.get("count"), where, f"{path}.count", 1 if mode == EXACT_COUNT else 0)
    if mode == EXACT_COUNT and count <= 0:
        raise where.fail(f"{path}.count", f"Invalid value: {count}: must be greater than zero")
    admin = m.get("adminAccess") is True
    if sub and admin:
        raise where.fail(f"{path}.adminAccess", "Forbidden: not supported in firstAvailable subrequests")
    return SubRequest(name, _str(m.get("deviceClassName"), where, f"{path}.deviceClassName"),
                      _selectors(m.get("selectors"), where, f"{path}.selectors"), mode, count, admin,
                      _tolerations(m.get("tolerations"), where, f"{path}.tolerations"),
                      _capacity_requests(m.get("capacity"), where, f"{path}.capacity"))


def _request(v: Any, version: str, where: Where, path: str) -> DeviceRequest:
    m = _map(v, where, path)
    name = _str(m.get("name"), where, f"{path}.name")
    if not name:
        raise where.fail(f"{path}.name", "Required value")
    subs = tuple(
        _exact(_map(s, where, f"{path}.firstAvailable[{i}]"),
               _str(_map(s, where, f"{path}.firstAvailable[{i}]").get("name"), where,
                    f"{path}.firstAvailable[{i}].name"), where, f"{path}.firstAvailable[{i}]", sub=True)
        for i, s in enumerate(_list(m.get("firstAvailable"), where, f"{path}.firstAvailable")))
    if subs:
        return DeviceRequest(name, None, subs)
    if version == "v1beta1":
        if m.get("deviceClassName"):
            return DeviceRequest(name, _exact(m, name, where, path, sub=False))
        return DeviceRequest(name)
    if m.get("exactly") is not None:
        return DeviceRequest(name, _exact(_map(m["exactly"], where, f"{path}.exactly"), name, where,
                                          f"{path}.exactly", sub=False))
    return DeviceRequest(name)


def parse_claim_spec(spec: Mapping[str, Any], version: str, where: Where, path: str) -> ClaimSpec:
    devices = _map(spec.get("devices"), where, f"{path}.devices")
    requests = tuple(_request(r, version, where, f"{path}.devices.requests[{i}]")
                     for i, r in enumerate(_list(devices.get("requests"), where, f"{path}.devices.requests")))
    constraints = []
    for i, c in enumerate(_list(devices.get("constraints"), where, f"{path}.devices.constraints")):
        p = f"{path}.devices.constraints[{i}]"
        cm = _map(c, where, p)
        reqs = tuple(_str(r, where, f"{p}.requests") for r in _list(cm.get("requests"), where, f"{p}.requests"))
        match = _str(cm.get("matchAttribute"), where, f"{p}.matchAttribute")
        distinct = _str(cm.get("distinctAttribute"), where, f"{p}.distinctAttribute")
        if match and distinct:
            raise where.fail(p, 'Invalid value: exactly one of "matchAttribute" or "distinctAttribute" is required, '
                                "but multiple fields are set")
        constraints.append(Constraint(reqs, match, distinct))
    return ClaimSpec(requests, tuple(constraints))


def _allocation(v: Any, where: Where) -> Allocation | None:
    if v is None:
        return None
    m = _map(v, where, "status.allocation")
    devices = _map(m.get("devices"), where, "status.allocation.devices")
    results = []
    for i, r in enumerate(_list(devices.get("results"), where, "status.allocation.devices.results")):
        p = f"status.allocation.devices.results[{i}]"
        rm = _map(r, where, p)
        consumed = None
        if rm.get("consumedCapacity") is not None:
            consumed = tuple(sorted((str(k), _nanos(q, where, f"{p}.consumedCapacity.{k}")) for k, q in
                                    _map(rm["consumedCapacity"], where, f"{p}.consumedCapacity").items()))
        results.append(DeviceResult(_str(rm.get("request"), where, f"{p}.request"),
                                    _str(rm.get("driver"), where, f"{p}.driver"),
                                    _str(rm.get("pool"), where, f"{p}.pool"),
                                    _str(rm.get("device"), where, f"{p}.device"),
                                    rm.get("adminAccess") is True,
                                    _str(rm.get("shareID"), where, f"{p}.shareID"), consumed))
    sel: NodeSelector | None = None
    if m.get("nodeSelector") is not None:
        terms = _map(m["nodeSelector"], where, "status.allocation.nodeSelector").get("nodeSelectorTerms")
        sel = NodeSelector(tuple(
            parse_node_selector_term(t, where, f"status.allocation.nodeSelector.nodeSelectorTerms[{i}]")
            for i, t in enumerate(_list(terms, where, "status.allocation.nodeSelector.nodeSelectorTerms"))))
    return Allocation(tuple(results), sel)


def parse_resource_claim(d: Mapping[str, Any], source: str = "") -> ResourceClaim:
    ns, name, where = _named(d, source, "ResourceClaim", True)
    version = _version(d, where)
    md = _map(d.get("metadata"), where, "metadata")
    status = _map(d.get("status"), where, "status")
    reserved = tuple(ConsumerRef(_str(_map(r, where, "status.reservedFor").get("name"), where,
                                      "status.reservedFor.name"),
                                 _str(_map(r, where, "status.reservedFor").get("uid"), where, "status.reservedFor.uid"))
                     for r in _list(status.get("reservedFor"), where, "status.reservedFor"))
    owner = ""
    for o in _list(md.get("ownerReferences"), where, "metadata.ownerReferences"):
        om = _map(o, where, "metadata.ownerReferences")
        if om.get("controller") is True:
            owner = _str(om.get("uid"), where, "metadata.ownerReferences.uid")
    return ResourceClaim(
        ns, name, _str(md.get("uid"), where, "metadata.uid") or f"claim-uid-{ns}-{name}",
        parse_claim_spec(_map(d.get("spec"), where, "spec"), version, where, "spec"),
        _allocation(status.get("allocation"), where), reserved, md.get("deletionTimestamp") is not None,
        tuple(_str(f, where, "metadata.finalizers") for f in _list(md.get("finalizers"), where, "metadata.finalizers")),
        owner, _labels(md.get("annotations"), where, "metadata.annotations"),
        _labels(md.get("labels"), where, "metadata.labels"), source)


def parse_resource_claim_template(d: Mapping[str, Any], source: str = "") -> ResourceClaimTemplate:
    ns, name, where = _named(d, source, "ResourceClaimTemplate", True)
    version = _version(d, where)
    spec = _map(d.get("spec"), where, "spec")
    md = _map(spec.get("metadata"), where, "spec.metadata")
    return ResourceClaimTemplate(ns, name, parse_claim_spec(_map(spec.get("spec"), where, "spec.spec"), version,
                                                            where, "spec.spec"),
                                 _labels(md.get("labels"), where, "spec.metadata.labels"),
                                 _labels(md.get("annotations"), where, "spec.metadata.annotations"), source)


def parse_device_taint_rule(d: Mapping[str, Any], source: str = "") -> DeviceTaintRule:
    """A DeviceTaintRule (v1alpha3, v1beta2 or v1): spec.deviceSelector's driver, pool and device
    (each optional), spec.taint."""
    _, name, where = _named(d, source, "DeviceTaintRule", False)
    _version(d, where, TAINT_RULE_VERSIONS)
    spec = _map(d.get("spec"), where, "spec")
    _refuse(spec.get("deviceSelector") or {}, where, "spec.deviceSelector", "deviceClassName", "selectors")
    taint = _taint(spec.get("taint"), where, "spec.taint")
    if spec.get("deviceSelector") is None:
        return DeviceTaintRule(name, taint, selects_nothing=True, source=source)
    sel = _map(spec["deviceSelector"], where, "spec.deviceSelector")

    def part(key: str) -> str | None:
        return None if sel.get(key) is None else _str(sel[key], where, f"spec.deviceSelector.{key}")

    return DeviceTaintRule(name, taint, part("driver"), part("pool"), part("device"), source=source)


#: kind → the parser of a resource.k8s.io object
DRA_PARSERS: dict[str, Callable[[Mapping[str, Any], str], DraObject]] = {
    "DeviceClass": parse_device_class,
    "ResourceSlice": parse_resource_slice,
    "ResourceClaim": parse_resource_claim,
    "ResourceClaimTemplate": parse_resource_claim_template,
    "DeviceTaintRule": parse_device_taint_rule,
}
