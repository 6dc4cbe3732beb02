"""What kube-apiserver v1.34 refuses in the resource.k8s.io kinds (pkg/apis/resource/validation):
DeviceClass, ResourceClaim, ResourceClaimTemplate and ResourceSlice, worded as its field errors.

Validation runs on the internal type, whose shape is v1's: a v1beta1 request's fields are
checked (and named) as ``exactly``'s, a v1beta1 device's ``basic`` fields as the device's. CEL
selectors are compiled as the API server compiles them on create; a compile error is the
selector's ``expression`` field error. Fields kplan refuses elsewhere because their feature
gate is off in 1.34 (device taints, partitionable devices, ...) are not judged here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kplan.model.name_rules import dns1123_label, dns1123_subdomain
from kplan.validation.core import as_list, as_map, quantity, validate_meta
from kplan.validation.field import (
    FieldError,
    check,
    duplicate,
    integer,
    invalid,
    not_supported,
    required,
    string,
    wrong_type,
)

Errors = list[FieldError]
EXACT_COUNT, ALL = "ExactCount", "All"
#: resource.CELSelectorExpressionMaxLength
CEL_MAX_LENGTH = 10 * 1024
#: resource.DeviceRequestsMaxSize, DeviceSelectorsMaxSize, FirstAvailableDeviceRequestMaxSize
MAX_REQUESTS, MAX_SELECTORS, MAX_SUBREQUESTS = 32, 32, 8
#: resource.DriverNameMaxLength, DeviceMaxIDLength, DeviceAttributeMaxValueLength,
#: ResourceSliceMaxAttributesAndCapacitiesPerDevice
DRIVER_NAME_MAX, DEVICE_ID_MAX, ATTRIBUTE_VALUE_MAX, MAX_ATTRIBUTES_AND_CAPACITIES = 63, 32, 64, 32
#: the longest valid attribute or capacity key: domain/id
ATTRIBUTE_KEY_MAX = DRIVER_NAME_MAX + 1 + DEVICE_ID_MAX
REQUEST_REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def _version(d: Mapping[str, Any]) -> str:
    return str(d.get("apiVersion") or "").partition("/")[2]


def _too_many(path: str, n: int, most: int) -> FieldError:
    return FieldError(path, f"Too many: {n}: must have at most {most} items")


# ------------------------------------------------------------------------------ selectors

def _selectors(v: Any, path: str) -> Errors:
    errs: Errors = []
    items = as_list(v, path, errs)
    for i, s in enumerate(items):
        p = f"{path}[{i}]"
        sel = as_map(s, p, errs)
        if sel.get("cel") is None:
            errs.append(required(f"{p}.cel"))
            continue
        cel = as_map(sel.get("cel"), f"{p}.cel", errs)
        expr, e = string(cel.get("expression"), f"{p}.cel.expression")
        errs += e
        if expr is None:
            if not e:
                errs.append(required(f"{p}.cel.expression", "expression is required"))
            continue
        errs += _cel(expr, f"{p}.cel.expression")
    if len(items) > MAX_SELECTORS:
        errs.append(_too_many(path, len(items), MAX_SELECTORS))
    return errs


def _cel(expr: str, path: str) -> Errors:
    if len(expr) > CEL_MAX_LENGTH:
        return [FieldError(path, f"Too long: may not be more than {CEL_MAX_LENGTH} bytes")]
    if not expr.strip():
        return [required(path, "expression is required")]
    # cel-python is loaded only when a manifest has a selector: building its parser takes seconds
    from kplan.cel import CelError, compile_selector

    try:
        compile_selector(expr)
    except CelError as e:
        return [invalid(path, expr, str(e))]
    return []


# ------------------------------------------------------------------------------ claims

def _allocation_mode(m: Mapping[str, Any], path: str) -> Errors:
    errs: Errors = []
    mode = m.get("allocationMode", EXACT_COUNT)
    count, e = integer(m.get("count"), f"{path}.count", bits=64)
    errs += e
    if mode == ALL:
        if count:
            errs.append(invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'"))
    elif mode == EXACT_COUNT:
        if count is None and not e:
            count = 1  # the default
        if count is not None and count <= 0:
            errs.append(invalid(f"{path}.count", count, "must be greater than zero"))
    else:
        errs.append(not_supported(f"{path}.allocationMode", mode, (ALL, EXACT_COUNT)))
    return errs


def _device_class(v: Any, path: str) -> Errors:
    name, errs = string(v, path)
    if errs:
        return errs
    if not name:
        return [required(path)]
    return check(path, name, dns1123_subdomain)


def _exactly(m: Mapping[str, Any], path: str) -> Errors:
    errs = _device_class(m.get("deviceClassName"), f"{path}.deviceClassName")
    errs += _selectors(m.get("selectors"), f"{path}.selectors")
    errs += _allocation_mode(m, path)
    return errs


def _request_name(v: Any, path: str) -> tuple[str, Errors]:
    name, errs = string(v, path)
    if errs:
        return "", errs
    return name or "", check(path, name or "", dns1123_label)


def _request(r: Any, path: str, beta1: bool) -> tuple[str, set[str] | None, Errors]:
    """(name, subrequest names or None, errors) of one request."""
    errs: Errors = []
    m = as_map(r, path, errs)
    name, e = _request_name(m.get("name"), f"{path}.name")
    errs += e
    if beta1:
        # v1beta1 keeps the exact request's fields on the request; the internal type has them
        # under exactly, and the errors say so
        exact_fields = {k: m[k] for k in ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess")
                        if k in m}
        exactly: Any = exact_fields if exact_fields or not m.get("firstAvailable") else None
    else:
        exactly = m.get("exactly")
    first = as_list(m.get("firstAvailable"), f"{path}.firstAvailable", errs)
    kinds = (exactly is not None) + bool(first)
    subs: set[str] | None = None
    if kinds == 0:
        errs.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif kinds > 1:
        errs.append(invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple "
                                         "fields are set"))
    elif first:
        subs = set()
        fp = f"{path}.firstAvailable"
        if len(first) > MAX_SUBREQUESTS:
            errs.append(_too_many(fp, len(first), MAX_SUBREQUESTS))
        for i, s in enumerate(first):
            sp = f"{fp}[{i}]"
            sm = as_map(s, sp, errs)
            sub, e = _request_name(sm.get("name"), f"{sp}.name")
            errs += e
            errs += _device_class(sm.get("deviceClassName"), f"{sp}.deviceClassName")
            errs += _selectors(sm.get("selectors"), f"{sp}.selectors")
            errs += _allocation_mode(sm, sp)
            if sub in subs:
                errs.append(duplicate(sp, sub))
            subs.add(sub)
    else:
        errs += _exactly(as_map(exactly, f"{path}.exactly", errs), f"{path}.exactly")
    return name, subs, errs


def _request_ref(name: Any, path: str, names: Mapping[str, set[str] | None]) -> Errors:
    if not isinstance(name, str):
        return [wrong_type(path, name, "a string")]
    parts = name.split("/")
    if len(parts) > 2:
        return [invalid(path, name, REQUEST_REF)]
    errs: Errors = []
    for p in parts:
        errs += check(path, p, dns1123_label)
    known = parts[0] in names and (len(parts) == 1 or parts[1] in (names[parts[0]] or set()))
    if not known:
        errs.append(invalid(path, name, REQUEST_REF))
    return errs


def validate_claim_spec(spec: Any, path: str, beta1: bool) -> Errors:
    errs: Errors = []
    s = as_map(spec, path, errs)
    devices = as_map(s.get("devices"), f"{path}.devices", errs)
    rp = f"{path}.devices.requests"
    requests = as_list(devices.get("requests"), rp, errs)
    names: dict[str, set[str] | None] = {}
    for i, r in enumerate(requests):
        name, subs, e = _request(r, f"{rp}[{i}]", beta1)
        errs += e
        if name in names:
            errs.append(duplicate(f"{rp}[{i}]", name))
        else:
            names[name] = subs
    if len(requests) > MAX_REQUESTS:
        errs.append(_too_many(rp, len(requests), MAX_REQUESTS))
    cp = f"{path}.devices.constraints"
    for i, c in enumerate(as_list(devices.get("constraints"), cp, errs)):
        p = f"{cp}[{i}]"
        cm = as_map(c, p, errs)
        seen: set[str] = set()
        for j, ref in enumerate(as_list(cm.get("requests"), f"{p}.requests", errs)):
            errs += _request_ref(ref, f"{p}.requests[{j}]", names)
            if isinstance(ref, str):  # anything else is a type error already
                if ref in seen:
                    errs.append(duplicate(f"{p}.requests[{j}]", ref))
                seen.add(ref)
        attr = cm.get("matchAttribute")
        if attr is None:
            if cm.get("distinctAttribute") is None:
                errs.append(required(f"{p}.matchAttribute"))
        else:
            errs += _fully_qualified(attr, f"{p}.matchAttribute")
    for i, c in enumerate(as_list(devices.get("config"), f"{path}.devices.config", errs)):
        p = f"{path}.devices.config[{i}]"
        for j, ref in enumerate(as_list(as_map(c, p, errs).get("requests"), f"{p}.requests", errs)):
            errs += _request_ref(ref, f"{p}.requests[{j}]", names)
    return errs


def _fully_qualified(v: Any, path: str) -> Errors:
    """validateFullyQualifiedName: a qualified name that has its domain."""
    name, errs = string(v, path)
    if errs:
        return errs
    if not name:
        return [required(path, "name required")]
    errs += _qualified(name, path)
    if "/" not in name:
        errs.append(invalid(path, name, "must include a domain"))
    return errs


def _qualified(name: str, path: str) -> Errors:
    """validateQualifiedName: ``id`` or ``domain/id``, the domain a driver name, the id a C identifier."""
    errs: Errors = []
    parts = name.split("/")
    if len(parts) == 1:
        errs += _c_identifier(parts[0], path)
    elif len(parts) == 2:
        if not parts[0]:
            errs.append(required(path, "the domain must not be empty"))
        else:
            errs += _driver_name(parts[0], path)
        if not parts[1]:
            errs.append(required(path, "the name must not be empty"))
        else:
            errs += _c_identifier(parts[1], path)
    return errs


def _driver_name(name: str, path: str) -> Errors:
    """ValidateCSIDriverName, which DRA reuses for driver names and attribute domains."""
    errs: Errors = []
    if len(name) > DRIVER_NAME_MAX:
        errs.append(FieldError(path, f"Too long: may not be more than {DRIVER_NAME_MAX} bytes"))
    # upper case is allowed: the rule is checked on the lower-cased name, the name shown as given
    return errs + [invalid(path, name, msg) for msg in dns1123_subdomain(name.lower())]


_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _c_identifier(ident: str, path: str) -> Errors:
    errs: Errors = []
    if len(ident) > DEVICE_ID_MAX:
        errs.append(FieldError(path, f"Too long: may not be more than {DEVICE_ID_MAX} bytes"))
    if not _C_IDENTIFIER.fullmatch(ident):
        errs.append(invalid(path, ident, "a valid C identifier must start with alphabetic character or '_', followed "
                                         "by a string of alphanumeric characters or '_' (e.g. 'my_name',  or "
                                         "'MY_NAME',  or 'MyName', regex used for validation is "
                                         "'[A-Za-z_][A-Za-z0-9_]*')"))
    return errs


# ------------------------------------------------------------------------------ the kinds

def validate_device_class(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=False)
    spec = as_map(d.get("spec"), "spec", errs)
    errs += _selectors(spec.get("selectors"), "spec.selectors")
    return errs


def validate_resource_claim(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=True)
    return errs + validate_claim_spec(d.get("spec"), "spec", _version(d) == "v1beta1")


def validate_resource_claim_template(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=True)
    spec = as_map(d.get("spec"), "spec", errs)
    return errs + validate_claim_spec(spec.get("spec"), "spec.spec", _version(d) == "v1beta1")


def validate_resource_slice(d: Mapping[str, Any]) -> Errors:
    errs = validate_meta(d.get("metadata"), namespaced=False)
    spec = as_map(d.get("spec"), "spec", errs)
    driver, e = string(spec.get("driver"), "spec.driver")
    errs += e
    if not driver and not e:
        errs.append(required("spec.driver"))
    elif driver:
        errs += _driver_name(driver, "spec.driver")
    pool = as_map(spec.get("pool"), "spec.pool", errs)
    pool_name, e = string(pool.get("name"), "spec.pool.name")
    errs += e
    if not pool_name and not e:
        errs.append(required("spec.pool.name"))
    elif pool_name:
        for part in pool_name.split("/"):
            errs += check("spec.pool.name", part, dns1123_subdomain)
    count, e = integer(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", bits=64)
    errs += e
    if count is not None and count <= 0:
        errs.append(invalid("spec.pool.resourceSliceCount", count, "must be greater than zero"))
    gen, e = integer(pool.get("generation"), "spec.pool.generation", bits=64)
    errs += e
    if gen is not None and gen < 0:
        errs.append(invalid("spec.pool.generation", gen, "must be greater than or equal to zero"))
    chosen = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name:
            chosen.append("`nodeName`")
        else:
            errs.append(invalid("spec.nodeName", node_name, "must be either unset or set to a non-empty string"))
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        terms = as_map(spec["nodeSelector"], "spec.nodeSelector", errs).get("nodeSelectorTerms")
        if not isinstance(terms, list) or len(terms) != 1:
            errs.append(invalid("spec.nodeSelector.nodeSelectorTerms", terms, "must have exactly one node selector "
                                                                              "term"))
    for flag in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(flag) is not None:
            if spec[flag] is True:
                chosen.append(f"`{flag}`")
            else:
                errs.append(invalid(f"spec.{flag}", spec[flag], "must be either unset or set to true"))
    if not chosen:
        errs.append(required("spec", _ONE_OF_NODES))
    elif len(chosen) > 1:
        errs.append(invalid("spec", "{" + ", ".join(chosen) + "}", _ONE_OF_NODES + ", but multiple fields are set"))
    beta1 = _version(d) == "v1beta1"
    seen: set[str] = set()
    for i, dev in enumerate(as_list(spec.get("devices"), "spec.devices", errs)):
        p = f"spec.devices[{i}]"
        dm = as_map(dev, p, errs)
        name, e = string(dm.get("name"), f"{p}.name")
        errs += e
        if not e:
            errs += check(f"{p}.name", name or "", dns1123_label)
            if name in seen:
                errs.append(duplicate(p, name))
            seen.add(name or "")
        # v1beta1 nests a device's fields under basic; the internal type, and its errors, do not
        body = as_map(dm.get("basic"), f"{p}.basic", errs) if beta1 else dm
        attributes = as_map(body.get("attributes"), f"{p}.attributes", errs)
        capacity = as_map(body.get("capacity"), f"{p}.capacity", errs)
        if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
            errs.append(invalid(p, len(attributes) + len(capacity), "the total number of attributes and capacities "
                                f"must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"))
        for k, v in attributes.items():
            errs += _qualified(str(k), f"{p}.attributes")
            errs += _attribute(v, f"{p}.attributes[{_truncated(str(k))}]")
        for k, v in capacity.items():
            errs += _qualified(str(k), f"{p}.capacity")
            cp = f"{p}.capacity[{_truncated(str(k))}]"
            quantity(as_map(v, cp, errs).get("value", "0"), f"{cp}.value", errs, nonneg=False, bounded=False)
    return errs


def _truncated(key: str) -> str:
    """A map key as validateMap names it in a path: cut in the middle beyond the longest valid key."""
    most = ATTRIBUTE_KEY_MAX
    if len(key) <= most:
        return key
    keep = most - 3
    return key[:(keep + 1) // 2] + "..." + key[len(key) - keep // 2:]


_ONE_OF_NODES = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
#: semver.org 2.0.0, as the API server checks a version attribute
_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
                     r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?")


def _attribute(v: Any, path: str) -> Errors:
    errs: Errors = []
    m = as_map(v, path, errs)
    set_ = [k for k in ("bool", "int", "string", "version") if m.get(k) is not None]
    text = m.get("string")
    if isinstance(text, str) and len(text) > ATTRIBUTE_VALUE_MAX:
        errs.append(FieldError(f"{path}.string", f"Too long: may not be more than {ATTRIBUTE_VALUE_MAX} bytes"))
    version = m.get("version")
    if isinstance(version, str):
        if not _SEMVER.fullmatch(version):
            errs.append(invalid(f"{path}.version", version, "must be a string compatible with semver.org spec 2.0.0"))
        if len(version) > ATTRIBUTE_VALUE_MAX:
            errs.append(FieldError(f"{path}.version", f"Too long: may not be more than {ATTRIBUTE_VALUE_MAX} bytes"))
    if not set_:
        errs.append(invalid(path, "", "exactly one value must be specified"))
    elif len(set_) > 1:
        errs.append(invalid(path, dict(m), "exactly one value must be specified"))
    return errs
