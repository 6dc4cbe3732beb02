"""The one module that knows Kubernetes field names: dicts in, typed objects out.

Every error names where it happened: ``file: document N: Kind ns/name: field.path: problem``.
The pod's requests are computed here, once, exactly as reference section 2 describes
(component-helpers resource/helpers.go PodRequests, scheduler framework/types.go).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any

from kplan.errors import InputError
from kplan.model.dra import DEVICE_CLASS_RESOURCE_PREFIX, PodClaim
from kplan.model.objects import (
    EMPTY,
    HONOR,
    IGNORE,
    NO_FEATURE_FACTS,
    ContainerDeviceRequests,
    FeatureFacts,
    HostPort,
    ImageState,
    Namespace,
    Node,
    OwnerRef,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    PriorityClass,
    SelectingObject,
    SpreadConstraint,
    Taint,
    Toleration,
    Volume,
    WeightedPodAffinityTerm,
)
from kplan.model.quantity import (
    Quantity,
    QuantityError,
    fits_int64,
    nanos_to_milli,
    nanos_to_value,
    parse_nanos,
)
from kplan.model.quota import QuotaContainer, QuotaPod, ResourceQuota, ScopeRequirement
from kplan.model.resize import (
    CONTAINER,
    INIT,
    SIDECAR,
    ContainerResize,
    ResizeAccounting,
    ResizeFacts,
    aggregate_requests,
    effective_requests,
    supported_pod_level,
)
from kplan.model.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    IN,
    LABEL_OPERATORS,
    NODE_OPERATORS,
    NOT_IN,
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Requirement,
    parse_int64,
)
from kplan.model.storage import (
    ANN_BETA_DEFAULT_CLASS,
    ANN_DEFAULT_CLASS,
    ANN_MIGRATED_PLUGINS,
    ClaimRef,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    StorageObject,
    TopologySelectorTerm,
    VolumeAttachment,
)

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
_NANO = 10**9
#: quantities are handled as exact integer counts of 1e-9 units (apimachinery's precision)
_NONZERO_DEFAULTS = {"cpu": DEFAULT_MILLI_CPU_REQUEST * 10**6, "memory": DEFAULT_MEMORY_REQUEST * _NANO}


class Where:
    """Names the object being parsed, for one-line errors."""

    __slots__ = ("source", "kind", "name")

    def __init__(self, source: str, kind: str, name: str) -> None:
        self.source, self.kind, self.name = source, kind, name

    def fail(self, path: str, problem: str) -> InputError:
        prefix = f"{self.source}: " if self.source else ""
        return InputError(f"{prefix}{self.kind} {self.name}: {path}: {problem}")


def _map(v: Any, where: Where, path: str) -> Mapping[str, Any]:
    if type(v) is dict:  # the parsers' own type: skip the abstract-class check
        return v
    if v is None:
        return EMPTY
    if not isinstance(v, Mapping):
        raise where.fail(path, f"expected an object, got {type(v).__name__}")
    return v


def _list(v: Any, where: Where, path: str) -> list[Any]:
    if type(v) is list:
        return v
    if v is None:
        return []
    if not isinstance(v, list):
        raise where.fail(path, f"expected a list, got {type(v).__name__}")
    return v


def _str(v: Any, where: Where, path: str, default: str = "") -> str:
    if type(v) is str:
        return v
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise where.fail(path, f"expected a string, got {type(v).__name__}")
    return str(v)


def _int(v: Any, where: Where, path: str, default: int = 0) -> int:
    if v is None:
        return default
    if isinstance(v, bool):
        raise where.fail(path, "expected an integer, got a boolean")
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            pass
    raise where.fail(path, f"expected an integer, got {v!r}")


def _labels(v: Any, where: Where, path: str) -> Mapping[str, str]:
    m = _map(v, where, path)
    if not m:
        return EMPTY
    if all(type(x) is str for x in m.values()):
        return MappingProxyType(dict(m))
    return MappingProxyType({str(k): _str(x, where, f"{path}.{k}") for k, x in m.items()})


def parse_time(v: Any, where: Where, path: str) -> float | None:
    """RFC 3339 timestamp → seconds since the epoch."""
    if v is None or v == "":
        return None
    if not isinstance(v, str):
        raise where.fail(path, f"expected an RFC 3339 timestamp, got {v!r}")
    t = _times.get(v)
    if t is None:
        try:
            t = datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise where.fail(path, f"expected an RFC 3339 timestamp, got {v!r}") from None
        if len(_times) < 65536:  # a cluster's pods share few distinct timestamps
            _times[v] = t
    return t


_times: dict[str, float] = {}


def _cluster_scoped(d: Mapping[str, Any], source: str, kind: str) -> tuple[str, Where]:
    """The name of a cluster-scoped object (required) and where it is, for errors."""
    _, name = meta_name(d)
    where = Where(source, kind, name or "?")
    if not name:
        raise where.fail("metadata.name", "Required value")
    return name, where


def meta_name(d: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of an object, tolerating a missing metadata block."""
    md = d.get("metadata")
    if not isinstance(md, Mapping):
        return "", ""
    return str(md.get("namespace") or ""), str(md.get("name") or "")


# ----------------------------------------------------------------------------------- selectors

def parse_requirements(v: Any, where: Where, path: str, operators: tuple[str, ...],
                       strict: bool = True) -> tuple[Requirement, ...]:
    """Selector requirements. ``strict`` rejects what API validation rejects; node selector terms
    are parsed leniently and judged by ``requirement_valid`` instead (an invalid term never matches)."""
    out = []
    for i, e in enumerate(_list(v, where, path)):
        p = f"{path}[{i}]"
        e = _map(e, where, p)
        key = _str(e.get("key"), where, f"{p}.key")
        op = _str(e.get("operator"), where, f"{p}.operator")
        if op not in operators:
            raise where.fail(f"{p}.operator", f"Unsupported value: {op!r}: supported values: "
                             + ", ".join(f'"{o}"' for o in operators))
        values = tuple(_str(x, where, f"{p}.values") for x in _list(e.get("values"), where, f"{p}.values"))
        if strict and op in (IN, NOT_IN) and not values:
            raise where.fail(f"{p}.values", "Required value: must be specified when `operator` is 'In' or 'NotIn'")
        if strict and op in (EXISTS, DOES_NOT_EXIST) and values:
            raise where.fail(f"{p}.values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        out.append(Requirement(key, op, values))
    return tuple(out)


def requirement_valid(r: Requirement, field: bool = False) -> bool:
    """Whether nodeaffinity.go can turn the requirement into a selector (else its term never matches)."""
    if field:
        return r.key == "metadata.name" and r.operator in (IN, NOT_IN) and len(r.values) == 1
    if r.operator in (IN, NOT_IN):
        return len(r.values) > 0
    if r.operator in (EXISTS, DOES_NOT_EXIST):
        return len(r.values) == 0
    return len(r.values) == 1 and parse_int64(r.values[0]) is not None


def parse_label_selector(v: Any, where: Where, path: str) -> LabelSelector | None:
    """A ``metav1.LabelSelector``; ``None`` for a nil selector (which matches nothing)."""
    if v is None:
        return None
    m = _map(v, where, path)
    labels = _labels(m.get("matchLabels"), where, f"{path}.matchLabels")
    exprs = parse_requirements(m.get("matchExpressions"), where, f"{path}.matchExpressions", LABEL_OPERATORS)
    return LabelSelector(tuple(sorted(labels.items())), exprs)


def parse_node_selector_term(v: Any, where: Where, path: str) -> NodeSelectorTerm:
    m = _map(v, where, path)
    exprs = parse_requirements(m.get("matchExpressions"), where, f"{path}.matchExpressions", NODE_OPERATORS, False)
    fields = parse_requirements(m.get("matchFields"), where, f"{path}.matchFields", NODE_OPERATORS, False)
    valid = all(requirement_valid(r) for r in exprs) and all(requirement_valid(r, True) for r in fields)
    return NodeSelectorTerm(exprs, fields, valid)


def parse_node_affinity(v: Any, where: Where, path: str) -> tuple[NodeSelector | None, tuple[PreferredSchedulingTerm, ...]]:
    m = _map(v, where, path)
    required = None
    req = m.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
        terms = _list(_map(req, where, rp).get("nodeSelectorTerms"), where, f"{rp}.nodeSelectorTerms")
        required = NodeSelector(tuple(parse_node_selector_term(t, where, f"{rp}.nodeSelectorTerms[{i}]")
                                      for i, t in enumerate(terms)))
    preferred = []
    pp = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, t in enumerate(_list(m.get("preferredDuringSchedulingIgnoredDuringExecution"), where, pp)):
        t = _map(t, where, f"{pp}[{i}]")
        preferred.append(PreferredSchedulingTerm(
            _int(t.get("weight"), where, f"{pp}[{i}].weight"),
            parse_node_selector_term(t.get("preference"), where, f"{pp}[{i}].preference")))
    return required, tuple(preferred)


def _merge_label_keys(selector: LabelSelector | None, labels: Mapping[str, str],
                      match_keys: list[Any], mismatch_keys: list[Any]) -> LabelSelector | None:
    """What the API server does at pod creation with matchLabelKeys / mismatchLabelKeys."""
    if selector is None or (not match_keys and not mismatch_keys):
        return selector
    extra = [Requirement(str(k), IN, (labels[str(k)],)) for k in match_keys if str(k) in labels]
    extra += [Requirement(str(k), NOT_IN, (labels[str(k)],)) for k in mismatch_keys if str(k) in labels]
    return selector.with_requirements(tuple(extra)) if extra else selector


def _affinity_term(v: Any, where: Where, path: str, labels: Mapping[str, str]) -> PodAffinityTerm:
    m = _map(v, where, path)
    selector = parse_label_selector(m.get("labelSelector"), where, f"{path}.labelSelector")
    selector = _merge_label_keys(selector, labels, _list(m.get("matchLabelKeys"), where, f"{path}.matchLabelKeys"),
                                 _list(m.get("mismatchLabelKeys"), where, f"{path}.mismatchLabelKeys"))
    key = _str(m.get("topologyKey"), where, f"{path}.topologyKey")
    if not key:
        raise where.fail(f"{path}.topologyKey", "Required value: can not be empty")
    namespaces = tuple(_str(x, where, f"{path}.namespaces") for x in _list(m.get("namespaces"), where, f"{path}.namespaces"))
    ns_selector = parse_label_selector(m.get("namespaceSelector"), where, f"{path}.namespaceSelector")
    return PodAffinityTerm(selector, key, namespaces, ns_selector)


def _affinity_terms(m: Mapping[str, Any], where: Where, path: str, labels: Mapping[str, str]
                    ) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    required = tuple(_affinity_term(t, where, f"{rp}[{i}]", labels)
                     for i, t in enumerate(_list(m.get("requiredDuringSchedulingIgnoredDuringExecution"), where, rp)))
    pp = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    preferred = []
    for i, t in enumerate(_list(m.get("preferredDuringSchedulingIgnoredDuringExecution"), where, pp)):
        t = _map(t, where, f"{pp}[{i}]")
        preferred.append(WeightedPodAffinityTerm(
            _int(t.get("weight"), where, f"{pp}[{i}].weight"),
            _affinity_term(t.get("podAffinityTerm"), where, f"{pp}[{i}].podAffinityTerm", labels)))
    return required, tuple(preferred)


def parse_spread_constraints(v: Any, where: Where, path: str, labels: Mapping[str, str]) -> tuple[SpreadConstraint, ...]:
    out = []
    for i, c in enumerate(_list(v, where, path)):
        p = f"{path}[{i}]"
        c = _map(c, where, p)
        max_skew = _int(c.get("maxSkew"), where, f"{p}.maxSkew")
        if max_skew <= 0:
            raise where.fail(f"{p}.maxSkew", f"Invalid value: {max_skew}: must be greater than zero")
        key = _str(c.get("topologyKey"), where, f"{p}.topologyKey")
        if not key:
            raise where.fail(f"{p}.topologyKey", "Required value: can not be empty")
        when = _str(c.get("whenUnsatisfiable"), where, f"{p}.whenUnsatisfiable")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise where.fail(f"{p}.whenUnsatisfiable", f'Unsupported value: "{when}": supported values: '
                             '"DoNotSchedule", "ScheduleAnyway"')
        selector = parse_label_selector(c.get("labelSelector"), where, f"{p}.labelSelector")
        mlk = _list(c.get("matchLabelKeys"), where, f"{p}.matchLabelKeys")
        selector = _merge_label_keys(selector, labels, mlk, [])
        min_domains = _int(c.get("minDomains"), where, f"{p}.minDomains", 1)
        if c.get("minDomains") is not None and min_domains <= 0:
            raise where.fail(f"{p}.minDomains", f"Invalid value: {min_domains}: must be greater than zero")
        nap = _str(c.get("nodeAffinityPolicy"), where, f"{p}.nodeAffinityPolicy", HONOR)
        ntp = _str(c.get("nodeTaintsPolicy"), where, f"{p}.nodeTaintsPolicy", IGNORE)
        for field, val in (("nodeAffinityPolicy", nap), ("nodeTaintsPolicy", ntp)):
            if val not in (HONOR, IGNORE):
                raise where.fail(f"{p}.{field}", f'Unsupported value: "{val}": supported values: "Honor", "Ignore"')
        out.append(SpreadConstraint(max_skew, key, when, selector, min_domains, nap, ntp))
    return tuple(out)


def parse_taints(v: Any, where: Where, path: str) -> tuple[Taint, ...]:
    out = []
    for i, t in enumerate(_list(v, where, path)):
        t = _map(t, where, f"{path}[{i}]")
        effect = _str(t.get("effect"), where, f"{path}[{i}].effect")
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise where.fail(f"{path}[{i}].effect", f'Unsupported value: "{effect}": supported values: '
                             '"NoSchedule", "PreferNoSchedule", "NoExecute"')
        out.append(Taint(_str(t.get("key"), where, f"{path}[{i}].key"),
                         _str(t.get("value"), where, f"{path}[{i}].value"), effect))
    return tuple(out)


_tolerations: dict[tuple[Any, ...], Toleration] = {}


def parse_tolerations(v: Any, where: Where, path: str) -> tuple[Toleration, ...]:
    out = []
    for i, t in enumerate(_list(v, where, path)):
        if type(t) is dict:
            # most pods carry the same few tolerations: reuse the parsed ones
            raw = (t.get("key"), t.get("operator"), t.get("value"), t.get("effect"))
            try:
                known = _tolerations.get(raw)
            except TypeError:  # a list or map where a string belongs: the parse below says so
                known = None
            if known is not None:
                out.append(known)
                continue
        t = _map(t, where, f"{path}[{i}]")
        out.append(Toleration(_str(t.get("key"), where, f"{path}[{i}].key"),
                              _str(t.get("operator"), where, f"{path}[{i}].operator", "Equal"),
                              _str(t.get("value"), where, f"{path}[{i}].value"),
                              _str(t.get("effect"), where, f"{path}[{i}].effect")))
        if len(_tolerations) < 4096:
            _tolerations[(t.get("key"), t.get("operator"), t.get("value"), t.get("effect"))] = out[-1]
    return tuple(out)


# ----------------------------------------------------------------------------------- resources

def is_scalar_resource(name: str) -> bool:
    """pkg/scheduler/util/utils.go IsScalarResourceName (and the helpers it calls)."""
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    if "kubernetes.io/" in name:
        return True
    # extended resource: fully qualified, not in the kubernetes.io namespace, not "requests."-prefixed
    return "/" in name and not name.startswith("requests.")


def is_tracked_resource(name: str) -> bool:
    return name in ("cpu", "memory", "ephemeral-storage") or is_scalar_resource(name)


ResourceList = dict[str, int]  # resource name → nanos
_NANOS = 10**9


def _resource_list(v: Any, where: Where, path: str) -> ResourceList:
    out: ResourceList = {}
    for k, q in _map(v, where, path).items():
        try:
            nanos = parse_nanos(q)
        except QuantityError as e:
            raise where.fail(f"{path}[{k}]", str(e)) from None
        if not fits_int64(_to_int(str(k), nanos)):
            unit = "millicores" if k == "cpu" else "units"
            raise where.fail(f"{path}[{k}]", f"Invalid value: {_shown(q)}: must be less than 2^63 {unit} (the "
                             "scheduler counts in int64)")
        out[str(k)] = nanos
    return out


def _shown(q: Any) -> str:
    """A value as the API server's field errors show it: strings quoted, numbers bare."""
    return f'"{q}"' if isinstance(q, str) else str(q)


class _Container:
    __slots__ = ("name", "requests", "limits", "sidecar")

    def __init__(self, name: str, requests: ResourceList, limits: ResourceList, sidecar: bool) -> None:
        self.name, self.requests, self.limits, self.sidecar = name, requests, limits, sidecar


def _containers(spec: Mapping[str, Any], where: Where) -> tuple[list[_Container], list[_Container]]:
    """(containers, initContainers) with API-server defaulting: a missing request takes the limit."""
    out: tuple[list[_Container], list[_Container]] = ([], [])
    for field, bucket in (("containers", out[0]), ("initContainers", out[1])):
        for i, c in enumerate(_list(spec.get(field), where, f"spec.{field}")):
            p = f"spec.{field}[{i}]"
            c = _map(c, where, p)
            res = _map(c.get("resources"), where, f"{p}.resources")
            req = _resource_list(res.get("requests"), where, f"{p}.resources.requests")
            lim = _resource_list(res.get("limits"), where, f"{p}.resources.limits")
            for k, q in lim.items():
                req.setdefault(k, q)
            sidecar = field == "initContainers" and c.get("restartPolicy") == "Always"
            bucket.append(_Container(str(c.get("name") or ""), req, lim, sidecar))
    return out


def aggregate(containers: list[_Container], inits: list[_Container], *, limits: bool = False,
              nonmissing: Mapping[str, int] | None = None) -> ResourceList:
    """AggregateContainerRequests (reference 2.1), optionally with non-zero defaults per container."""
    def of(c: _Container) -> ResourceList:
        r = c.limits if limits else c.requests
        if nonmissing:
            r = dict(r)
            for k, q in nonmissing.items():
                r.setdefault(k, q)
        return r

    return aggregate_requests((of(c) for c in containers), [(of(c), c.sidecar) for c in inits])


def pod_requests(containers: list[_Container], inits: list[_Container], pod_level: ResourceList,
                 overhead: ResourceList, *, use_pod_level: bool,
                 nonmissing: Mapping[str, int] | None = None) -> ResourceList:
    """PodRequests of component-helpers: containers, then pod-level values, then overhead."""
    reqs = aggregate(containers, inits, nonmissing=nonmissing)
    if use_pod_level and any(supported_pod_level(k) for k in pod_level):
        for k, q in pod_level.items():
            if supported_pod_level(k):
                reqs[k] = q
    for k, q in overhead.items():
        reqs[k] = reqs.get(k, 0) + q
    return reqs


def _to_int(name: str, nanos: int) -> int:
    return nanos_to_milli(nanos) if name == "cpu" else nanos_to_value(nanos)


def to_resources(rl: ResourceList) -> dict[str, int]:
    """Integer resources the scheduler tracks (Resource.Add): cpu in millis, the rest in units."""
    return {k: _to_int(k, q) for k, q in rl.items() if is_tracked_resource(k)}


def parse_resource_map(v: Any, where: Where, path: str) -> dict[str, int]:
    """Node allocatable/capacity: every entry, integers, ``pods`` included."""
    return {k: _to_int(k, q) for k, q in _resource_list(v, where, path).items()}


def _host_ports(spec: Mapping[str, Any], where: Where) -> tuple[HostPort, ...]:
    """GetHostPorts: regular containers and restartable init containers, hostPort > 0 only."""
    ports = []
    for field in ("containers", "initContainers"):
        for i, c in enumerate(_list(spec.get(field), where, f"spec.{field}")):
            c = _map(c, where, f"spec.{field}[{i}]")
            if field == "initContainers" and c.get("restartPolicy") != "Always":
                continue
            for j, port in enumerate(_list(c.get("ports"), where, f"spec.{field}[{i}].ports")):
                p = f"spec.{field}[{i}].ports[{j}]"
                port = _map(port, where, p)
                hp = _int(port.get("hostPort"), where, f"{p}.hostPort")
                if hp > 0:
                    ports.append(HostPort(_str(port.get("hostIP"), where, f"{p}.hostIP") or "0.0.0.0",
                                          _str(port.get("protocol"), where, f"{p}.protocol") or "TCP", hp))
    return tuple(ports)


def _volumes(spec: Mapping[str, Any], pod_name: str, where: Where) -> tuple[Volume, ...]:
    out = []
    for i, v in enumerate(_list(spec.get("volumes"), where, "spec.volumes")):
        p = f"spec.volumes[{i}]"
        v = _map(v, where, p)
        name = _str(v.get("name"), where, f"{p}.name")
        if "persistentVolumeClaim" in v:
            pvc = _map(v.get("persistentVolumeClaim"), where, f"{p}.persistentVolumeClaim")
            out.append(Volume(name, claim_name=_str(pvc.get("claimName"), where, f"{p}.persistentVolumeClaim.claimName"),
                              read_only=bool(pvc.get("readOnly"))))
        elif "ephemeral" in v:
            # generic ephemeral volumes are backed by a PVC named <pod>-<volume> (ephemeral.VolumeClaimName)
            out.append(Volume(name, claim_name=f"{pod_name}-{name}", ephemeral=True))
        elif "gcePersistentDisk" in v:
            d = _map(v["gcePersistentDisk"], where, f"{p}.gcePersistentDisk")
            out.append(Volume(name, disk=("gce", _str(d.get("pdName"), where, f"{p}.gcePersistentDisk.pdName"),
                                          bool(d.get("readOnly")))))
        elif "awsElasticBlockStore" in v:
            d = _map(v["awsElasticBlockStore"], where, f"{p}.awsElasticBlockStore")
            out.append(Volume(name, disk=("aws", _str(d.get("volumeID"), where, f"{p}.awsElasticBlockStore.volumeID"),
                                          bool(d.get("readOnly")))))
        elif "rbd" in v:
            d = _map(v["rbd"], where, f"{p}.rbd")
            mons = tuple(_str(x, where, f"{p}.rbd.monitors") for x in _list(d.get("monitors"), where, f"{p}.rbd.monitors"))
            # the API server defaults the pool to "rbd"
            ident = f"{_str(d.get('pool'), where, f'{p}.rbd.pool') or 'rbd'}/{_str(d.get('image'), where, f'{p}.rbd.image')}"
            out.append(Volume(name, disk=("rbd", ident, bool(d.get("readOnly"))), monitors=mons))
        elif "iscsi" in v:
            d = _map(v["iscsi"], where, f"{p}.iscsi")
            out.append(Volume(name, disk=("iscsi", _str(d.get("iqn"), where, f"{p}.iscsi.iqn"), bool(d.get("readOnly")))))
        elif "azureDisk" in v:
            d = _map(v["azureDisk"], where, f"{p}.azureDisk")
            out.append(Volume(name, disk=("azure-disk", _str(d.get("diskURI"), where, f"{p}.azureDisk.diskURI"),
                                          bool(d.get("readOnly")))))
    return tuple(out)


def _feature_facts(spec: Mapping[str, Any]) -> FeatureFacts:
    """What NodeDeclaredFeatures reads of a pod spec (FeatureFacts); malformed parts count as
    absent, as they do not reach the scheduler through the API server."""
    host_network = spec.get("hostNetwork") is True
    host_users = spec.get("hostUsers")
    restart_all = bind_mounts = False
    for field in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(field) or ():
            if not isinstance(c, Mapping):
                continue
            rules = c.get("restartPolicyRules")
            if isinstance(rules, list) and field != "ephemeralContainers":
                restart_all = restart_all or any(isinstance(r, Mapping) and r.get("action") == "RestartAllContainers"
                                                 for r in rules)
            mounts = c.get("volumeMounts")
            if isinstance(mounts, list):
                bind_mounts = bind_mounts or any(isinstance(m, Mapping) and m.get("bindMountOptions") for m in mounts)
    if not (host_network or restart_all or bind_mounts):
        return NO_FEATURE_FACTS
    return FeatureFacts(host_network, host_users if isinstance(host_users, bool) else None, restart_all, bind_mounts)


def _local_volumes(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the volumes that keep data on the node: hostPath, and emptyDir not in memory
    (what cluster-autoscaler's drain rules call local storage, utils/drain isLocalVolume)."""
    out = []
    volumes = spec.get("volumes")
    for v in volumes if isinstance(volumes, list) else ():
        if not isinstance(v, dict) or not isinstance(v.get("name"), str):
            continue
        empty = v.get("emptyDir")
        if v.get("hostPath") is not None or (empty is not None and not (
                isinstance(empty, dict) and empty.get("medium") == "Memory")):
            out.append(v["name"])
    return tuple(out)


def _owners(md: Mapping[str, Any], where: Where) -> tuple[OwnerRef, ...]:
    out = []
    for i, o in enumerate(_list(md.get("ownerReferences"), where, "metadata.ownerReferences")):
        o = _map(o, where, f"metadata.ownerReferences[{i}]")
        out.append(OwnerRef(_str(o.get("kind"), where, "kind"), _str(o.get("name"), where, "name"),
                            bool(o.get("controller")), _str(o.get("uid"), where, "uid"),
                            _str(o.get("apiVersion"), where, f"metadata.ownerReferences[{i}].apiVersion")))
    return tuple(out)


# ----------------------------------------------------------------------------------- objects

class _PodResources:
    """What a pod's containers, pod-level resources and overhead give the scheduler."""

    __slots__ = ("requests", "limits", "nonzero_cpu", "nonzero_mem", "score_cpu", "score_mem", "device_requests")

    def __init__(self, requests: dict[str, int], limits: dict[str, int], nonzero_cpu: int, nonzero_mem: int,
                 score_cpu: int, score_mem: int, device_requests: tuple[ContainerDeviceRequests, ...] = ()) -> None:
        self.requests, self.limits = requests, limits
        self.nonzero_cpu, self.nonzero_mem = nonzero_cpu, nonzero_mem
        self.score_cpu, self.score_mem = score_cpu, score_mem
        self.device_requests = device_requests


def is_dra_extended_resource_name(name: str) -> bool:
    """IsDRAExtendedResourceName (pkg/scheduler/util): an extended resource, or a device class's
    implicit ``deviceclass.resource.kubernetes.io/<class>``."""
    return name.startswith(DEVICE_CLASS_RESOURCE_PREFIX) or (
        "/" in name and "kubernetes.io/" not in name and not name.startswith("requests."))


def _device_requests(containers: list[_Container], inits: list[_Container]) -> tuple[ContainerDeviceRequests, ...]:
    """The containers (init containers first) that request extended resources DRA may serve."""
    out = []
    for i, c in enumerate(inits + containers):
        amounts = {k: (q // _NANOS if q % _NANOS == 0 else None)
                   for k, q in c.requests.items() if is_dra_extended_resource_name(k)}
        if amounts:
            out.append(ContainerDeviceRequests(i, i < len(inits) and not c.sidecar, tuple(sorted(c.requests)),
                                               MappingProxyType(amounts)))
    return tuple(out)


def _pod_level(spec: Mapping[str, Any], containers: list[_Container], inits: list[_Container],
               where: Where) -> tuple[ResourceList, ResourceList]:
    """spec.resources' requests (API-defaulted) and limits."""
    pres = _map(spec.get("resources"), where, "spec.resources")
    pod_req = _resource_list(pres.get("requests"), where, "spec.resources.requests")
    pod_lim = _resource_list(pres.get("limits"), where, "spec.resources.limits")
    if pod_lim:
        # API defaulting of pod-level requests (pkg/apis/core/v1/defaults.go defaultPodRequests)
        for k, q in aggregate(containers, inits).items():
            if supported_pod_level(k):
                pod_req.setdefault(k, q)
        for k, q in pod_lim.items():
            if supported_pod_level(k):
                pod_req.setdefault(k, q)
    return pod_req, pod_lim


def _pod_resources(spec: Mapping[str, Any], where: Where) -> _PodResources:
    containers, inits = _containers(spec, where)
    pod_req, pod_lim = _pod_level(spec, containers, inits, where)
    overhead = _resource_list(spec.get("overhead"), where, "spec.overhead")

    exact = pod_requests(containers, inits, pod_req, overhead, use_pod_level=True)
    score_nonzero = pod_requests(containers, inits, pod_req, overhead, use_pod_level=False,
                                 nonmissing=_NONZERO_DEFAULTS)
    if any(supported_pod_level(k) for k in pod_req):
        # with pod-level requests, defaults fill only what neither level requests (calculateResource)
        nonmissing = {k: q for k, q in _NONZERO_DEFAULTS.items() if k not in exact}
        node_nonzero = (pod_requests(containers, inits, pod_req, overhead, use_pod_level=True, nonmissing=nonmissing)
                        if nonmissing else exact)
    else:
        node_nonzero = score_nonzero
    limits = aggregate(containers, inits, limits=True)
    for k, q in pod_lim.items():
        if supported_pod_level(k):
            limits[k] = q

    return _PodResources(to_resources(exact), to_resources(limits),
                         _to_int("cpu", node_nonzero.get("cpu", 0)), _to_int("memory", node_nonzero.get("memory", 0)),
                         _to_int("cpu", score_nonzero.get("cpu", 0)), _to_int("memory", score_nonzero.get("memory", 0)),
                         _device_requests(containers, inits))



def _status_lists(status: Mapping[str, Any], where: Where,
                  path: str) -> tuple[bool, ResourceList | None, ResourceList | None]:
    """(``resources`` is set, its ``requests``, ``allocatedResources``) of a pod or container status."""
    res = status.get("resources")
    actuated = None
    if res is not None:
        req = _map(res, where, f"{path}.resources").get("requests")
        actuated = None if req is None else _resource_list(req, where, f"{path}.resources.requests")
    alloc = status.get("allocatedResources")
    allocated = None if alloc is None else _resource_list(alloc, where, f"{path}.allocatedResources")
    return res is not None, actuated, allocated


def _within(rl: ResourceList | None, spec: ResourceList) -> bool:
    """A status list that names the spec's resources and no more than the spec asks."""
    return rl is None or (rl.keys() == spec.keys() and all(q <= spec[k] for k, q in rl.items()))


def _resize_facts(spec: Mapping[str, Any], status: Mapping[str, Any], where: Where) -> ResizeFacts | None:
    """What the resize rules read of a pod (kplan/model/resize.py); None when no release's rule
    could count it otherwise than by its spec: no Infeasible resize, no pod-level status, and every
    container status names the spec's resources at no more than the spec."""
    infeasible = False
    for c in _list(status.get("conditions"), where, "status.conditions"):
        if isinstance(c, Mapping) and c.get("type") == "PodResizePending":
            infeasible = c.get("reason") == "Infeasible"
            break
    statuses: dict[str, tuple[bool, ResourceList | None, ResourceList | None]] = {}
    for field in ("containerStatuses", "initContainerStatuses"):
        for i, cs in enumerate(_list(status.get(field), where, f"status.{field}")):
            cs = _map(cs, where, f"status.{field}[{i}]")
            statuses[_str(cs.get("name"), where, f"status.{field}[{i}].name")] = _status_lists(
                cs, where, f"status.{field}[{i}]")
    pod_has, pod_actuated, pod_allocated = _status_lists(status, where, "status")
    if not infeasible and not pod_has and pod_allocated is None and not any(
            st[1] is not None or st[2] is not None for st in statuses.values()):
        return None
    containers, inits = _containers(spec, where)
    rows = []
    trivial = not infeasible and not pod_has and pod_allocated is None
    for c, role in [(c, CONTAINER) for c in containers] + [(c, SIDECAR if c.sidecar else INIT) for c in inits]:
        st = statuses.get(c.name)
        if st is None:
            rows.append(ContainerResize(role, MappingProxyType(c.requests)))
            continue
        has_resources, actuated, allocated = st
        trivial = trivial and _within(actuated, c.requests) and _within(allocated, c.requests)
        rows.append(ContainerResize(role, MappingProxyType(c.requests), True, has_resources,
                                    None if actuated is None else MappingProxyType(actuated),
                                    None if allocated is None else MappingProxyType(allocated)))
    if trivial:
        return None
    pod_req, _ = _pod_level(spec, containers, inits, where)
    return ResizeFacts(tuple(rows), MappingProxyType(pod_req),
                       MappingProxyType(_resource_list(spec.get("overhead"), where, "spec.overhead")), infeasible,
                       pod_has, None if pod_actuated is None else MappingProxyType(pod_actuated),
                       None if pod_allocated is None else MappingProxyType(pod_allocated))


def resized_resources(facts: ResizeFacts, accounting: ResizeAccounting,
                      pod_level: bool) -> tuple[dict[str, int], int, int]:
    """What a running pod counts on its node under a release's resize rule, as
    PodInfo.CalculateResource computes it: the requests the scheduler tracks, and the non-zero cpu
    and memory (defaults per container for what is missing; with pod-level requests only for what
    neither level requests)."""
    exact = effective_requests(facts, accounting, pod_level, {})
    if any(supported_pod_level(k) for k in facts.pod_spec):
        nonmissing = {k: q for k, q in _NONZERO_DEFAULTS.items() if k not in exact}
    else:
        nonmissing = _NONZERO_DEFAULTS
    nonzero = effective_requests(facts, accounting, pod_level, nonmissing) if nonmissing else exact
    return to_resources(exact), _to_int("cpu", nonzero.get("cpu", 0)), _to_int("memory", nonzero.get("memory", 0))


def _spec_claims(spec: Mapping[str, Any], where: Where) -> tuple[PodClaim, ...]:
    """``spec.resourceClaims``, in order."""
    claims = []
    for i, c in enumerate(_list(spec.get("resourceClaims"), where, "spec.resourceClaims")):
        m = _map(c, where, f"spec.resourceClaims[{i}]")
        claims.append(PodClaim(_str(m.get("name"), where, f"spec.resourceClaims[{i}].name"),
                               _str(m.get("resourceClaimName"), where, f"spec.resourceClaims[{i}].resourceClaimName"),
                               _str(m.get("resourceClaimTemplateName"), where,
                                    f"spec.resourceClaims[{i}].resourceClaimTemplateName")))
    return tuple(claims)


def _claim_statuses(status: Mapping[str, Any], where: Where) -> tuple[tuple[str, str | None], ...]:
    """``status.resourceClaimStatuses``: (pod claim name, claim name or None), in order."""
    statuses: list[tuple[str, str | None]] = []
    for i, st in enumerate(_list(status.get("resourceClaimStatuses"), where, "status.resourceClaimStatuses")):
        m = _map(st, where, f"status.resourceClaimStatuses[{i}]")
        cn = m.get("resourceClaimName")
        statuses.append((_str(m.get("name"), where, f"status.resourceClaimStatuses[{i}].name"),
                         None if cn is None else _str(cn, where, f"status.resourceClaimStatuses[{i}].resourceClaimName")))
    return tuple(statuses)


class _SpecFields:
    """What a pod's spec gives the scheduler, apart from its node: the same for every replica of a
    template (parsed values are immutable, so replicas share them; requests and limits are copied
    per pod, each pod its own dicts as if parsed alone). Parsed in two steps, ``__init__`` and
    ``finish``, so that a pod's first error is the one the fields' order gives (parse_pod parses
    the pod's own metadata and status fields between them)."""

    __slots__ = ("resources", "required_na", "preferred_na", "aff_req", "aff_pref", "anti_req", "anti_pref",
                 "images", "volume_images", "gates", "claims", "scheduler_name", "priority", "priority_class_name",
                 "preemption_policy", "host_ports", "node_selector", "tolerations", "spread", "volumes",
                 "local_volumes")

    def __init__(self, spec: Mapping[str, Any], labels: Mapping[str, str], where: Where) -> None:
        self.resources = _pod_resources(spec, where)
        affinity = _map(spec.get("affinity"), where, "spec.affinity")
        self.required_na: NodeSelector | None = None
        self.preferred_na: tuple[PreferredSchedulingTerm, ...] = ()
        self.aff_req: tuple[PodAffinityTerm, ...] = ()
        self.anti_req: tuple[PodAffinityTerm, ...] = ()
        self.aff_pref: tuple[WeightedPodAffinityTerm, ...] = ()
        self.anti_pref: tuple[WeightedPodAffinityTerm, ...] = ()
        if affinity:
            self.required_na, self.preferred_na = parse_node_affinity(affinity.get("nodeAffinity"), where,
                                                                      "spec.affinity.nodeAffinity")
            self.aff_req, self.aff_pref = _affinity_terms(
                _map(affinity.get("podAffinity"), where, "spec.affinity.podAffinity"), where,
                "spec.affinity.podAffinity", labels)
            self.anti_req, self.anti_pref = _affinity_terms(
                _map(affinity.get("podAntiAffinity"), where, "spec.affinity.podAntiAffinity"), where,
                "spec.affinity.podAntiAffinity", labels)
        self.images = tuple(str(_map(c, where, "spec").get("image") or "")
                            for field in ("initContainers", "containers")
                            for c in _list(spec.get(field), where, f"spec.{field}"))
        self.volume_images = tuple(str(_map(v.get("image"), where, "spec.volumes.image").get("reference") or "")
                                   for v in _list(spec.get("volumes"), where, "spec.volumes")
                                   if isinstance(v, Mapping) and v.get("image") is not None)
        self.gates = tuple(_str(_map(g, where, "spec.schedulingGates").get("name"), where, "spec.schedulingGates.name")
                           for g in _list(spec.get("schedulingGates"), where, "spec.schedulingGates"))
        self.claims = _spec_claims(spec, where)

    def finish(self, spec: Mapping[str, Any], labels: Mapping[str, str], name: str, where: Where) -> _SpecFields:
        self.scheduler_name = _str(spec.get("schedulerName"), where, "spec.schedulerName") or "default-scheduler"
        self.priority = _int(spec.get("priority"), where, "spec.priority")
        self.priority_class_name = _str(spec.get("priorityClassName"), where, "spec.priorityClassName")
        self.preemption_policy = (_str(spec.get("preemptionPolicy"), where, "spec.preemptionPolicy")
                                  or "PreemptLowerPriority")
        self.host_ports = _host_ports(spec, where)
        self.node_selector = _labels(spec.get("nodeSelector"), where, "spec.nodeSelector")
        self.tolerations = parse_tolerations(spec.get("tolerations"), where, "spec.tolerations")
        self.spread = parse_spread_constraints(spec.get("topologySpreadConstraints"), where,
                                               "spec.topologySpreadConstraints", labels)
        self.volumes = _volumes(spec, name, where)
        self.local_volumes = _local_volumes(spec)
        return self


#: spec fingerprint → its _SpecFields: a cluster's running pods are mostly replicas, and parsing
#: each template once saves most of the parsing of 150,000 pods
_SPEC_FIELDS: dict[str, _SpecFields] = {}
_SPEC_FIELDS_KEPT = 4096


def _spec_fingerprint(spec: Mapping[str, Any], raw_labels: Any, name: str) -> str | None:
    """Everything _SpecFields reads, as one string: the repr of JSON-like data is faithful, so two
    pods with one fingerprint parse to the same fields. The pod's labels count only where
    matchLabelKeys or mismatchLabelKeys may read them (pod affinity, spread constraints), its name
    only where an ephemeral volume's claim is named after it. None for a spec too malformed to
    fingerprint, which the uncached path then reports."""
    try:
        get = spec.get
        containers = [(c.get("resources"), c.get("restartPolicy"), c.get("image"), c.get("ports"))
                      for c in get("containers") or ()]
        inits = [(c.get("resources"), c.get("restartPolicy"), c.get("image"), c.get("ports"))
                 for c in get("initContainers") or ()]
        volumes = get("volumes")
        ephemeral = any(type(v) is dict and "ephemeral" in v for v in volumes or ())
        key = repr((get("resources"), get("overhead"), containers, inits, get("affinity"),
                    get("topologySpreadConstraints"), volumes, get("schedulingGates"), get("resourceClaims"),
                    get("priority"), get("schedulerName"), get("priorityClassName"), get("preemptionPolicy"),
                    get("nodeSelector"), get("tolerations"), name if ephemeral else None))
    except (AttributeError, TypeError):
        return None
    # a string that merely contains the word costs only a miss; a field that reads labels always has it
    return key + repr(raw_labels) if "LabelKeys" in key else key


#: repr of metadata.ownerReferences → the parsed owners (replicas share their owner)
_OWNERS: dict[str, tuple[OwnerRef, ...]] = {}


def _cached_owners(md: Mapping[str, Any], where: Where) -> tuple[OwnerRef, ...]:
    raw = md.get("ownerReferences")
    if not raw:
        return _owners(md, where)
    key = repr(raw)
    found = _OWNERS.get(key)
    if found is None:
        found = _owners(md, where)
        if len(_OWNERS) >= _SPEC_FIELDS_KEPT:
            _OWNERS.clear()
        _OWNERS[key] = found
    return found


def parse_pod(d: Mapping[str, Any], source: str = "", *, keep_raw: bool = False) -> Pod:
    md = d.get("metadata")
    if not isinstance(md, Mapping) or not md.get("name"):
        raise Where(source, "Pod", "?").fail("metadata.name", "Required value")
    ns = str(md.get("namespace") or "default")
    name = str(md["name"])
    where = Where(source, "Pod", f"{ns}/{name}")
    spec = _map(d.get("spec"), where, "spec")
    status = _map(d.get("status"), where, "status")
    raw_labels = md.get("labels")
    labels = _labels(raw_labels, where, "metadata.labels")
    key = _spec_fingerprint(spec, raw_labels, name)
    fields = _SPEC_FIELDS.get(key) if key is not None else None
    parsed = fields is None
    if fields is None:
        fields = _SpecFields(spec, labels, where)
    claim_statuses = _claim_statuses(status, where)
    resize = _resize_facts(spec, status, where) if status else None
    annotations = _labels(md.get("annotations"), where, "metadata.annotations")
    owners = _cached_owners(md, where)
    node_name = _str(spec.get("nodeName"), where, "spec.nodeName")
    if parsed:
        fields.finish(spec, labels, name, where)
        if key is not None:
            if len(_SPEC_FIELDS) >= _SPEC_FIELDS_KEPT:
                _SPEC_FIELDS.clear()
            _SPEC_FIELDS[key] = fields
    resources = fields.resources
    return Pod(
        namespace=ns,
        name=name,
        uid=str(md.get("uid") or f"{ns}/{name}"),
        labels=labels,
        annotations=annotations,
        owners=owners,
        node_name=node_name,
        scheduler_name=fields.scheduler_name,
        priority=fields.priority,
        priority_class_name=fields.priority_class_name,
        preemption_policy=fields.preemption_policy,
        requests=dict(resources.requests),   # each pod its own dicts, as if parsed alone
        nonzero_cpu=resources.nonzero_cpu,
        nonzero_mem=resources.nonzero_mem,
        score_cpu=resources.score_cpu,
        score_mem=resources.score_mem,
        limits=dict(resources.limits),
        host_ports=fields.host_ports,
        node_selector=fields.node_selector,
        required_node_affinity=fields.required_na,
        preferred_node_affinity=fields.preferred_na,
        tolerations=fields.tolerations,
        affinity_required=fields.aff_req,
        affinity_preferred=fields.aff_pref,
        anti_affinity_required=fields.anti_req,
        anti_affinity_preferred=fields.anti_pref,
        spread_constraints=fields.spread,
        scheduling_gates=fields.gates,
        images=fields.images,
        volume_images=fields.volume_images,
        volumes=fields.volumes,
        feature_facts=_feature_facts(spec),
        local_volumes=fields.local_volumes,
        resource_claims=fields.claims,
        device_requests=resources.device_requests,
        claim_statuses=claim_statuses,
        resize=resize,
        start_time=parse_time(status.get("startTime"), where, "status.startTime"),
        creation_time=parse_time(md.get("creationTimestamp"), where, "metadata.creationTimestamp"),
        deletion_time=parse_time(md.get("deletionTimestamp"), where, "metadata.deletionTimestamp"),
        nominated_node=_str(status.get("nominatedNodeName"), where, "status.nominatedNodeName"),
        phase=_str(status.get("phase"), where, "status.phase"),
        source=source,
        raw=dict(d) if keep_raw else None,
    )


def parse_node(d: Mapping[str, Any], source: str = "", *, keep_raw: bool = False) -> Node:
    md = d.get("metadata")
    if not isinstance(md, Mapping) or not md.get("name"):
        raise Where(source, "Node", "?").fail("metadata.name", "Required value")
    name = str(md["name"])
    where = Where(source, "Node", name)
    spec = _map(d.get("spec"), where, "spec")
    status = _map(d.get("status"), where, "status")
    capacity = parse_resource_map(status.get("capacity"), where, "status.capacity")
    alloc_raw = status.get("allocatable")
    allocatable = parse_resource_map(alloc_raw, where, "status.allocatable") if alloc_raw is not None else dict(capacity)
    images = []
    for i, im in enumerate(_list(status.get("images"), where, "status.images")):
        im = _map(im, where, f"status.images[{i}]")
        names = tuple(_str(n, where, f"status.images[{i}].names") for n in _list(im.get("names"), where, "names"))
        images.append(ImageState(names, _int(im.get("sizeBytes"), where, f"status.images[{i}].sizeBytes")))
    declared = tuple(_str(f, where, "status.declaredFeatures")
                     for f in _list(status.get("declaredFeatures"), where, "status.declaredFeatures"))
    ready = ""
    for c in _list(status.get("conditions"), where, "status.conditions"):
        if isinstance(c, Mapping) and c.get("type") == "Ready":
            ready = str(c.get("status") or "")
    return Node(
        name=name,
        labels=_labels(md.get("labels"), where, "metadata.labels"),
        annotations=_labels(md.get("annotations"), where, "metadata.annotations"),
        taints=parse_taints(spec.get("taints"), where, "spec.taints"),
        unschedulable=bool(spec.get("unschedulable")),
        allocatable=MappingProxyType(allocatable),
        capacity=MappingProxyType(capacity),
        images=tuple(images),
        declared_features=declared,
        ready=ready,
        provider_id=_str(spec.get("providerID"), where, "spec.providerID"),
        creation_time=parse_time(md.get("creationTimestamp"), where, "metadata.creationTimestamp"),
        source=source,
        raw=dict(d) if keep_raw else None,
    )


def parse_namespace(d: Mapping[str, Any], source: str = "") -> Namespace:
    name, where = _cluster_scoped(d, source, "Namespace")
    labels = dict(_labels(_map(d.get("metadata"), where, "metadata").get("labels"), where, "metadata.labels"))
    # the API server always sets this label (NamespaceDefaultLabelName)
    labels.setdefault("kubernetes.io/metadata.name", name)
    return Namespace(name, MappingProxyType(labels))


def parse_priority_class(d: Mapping[str, Any], source: str = "") -> PriorityClass:
    name, where = _cluster_scoped(d, source, "PriorityClass")
    if d.get("value") is None:
        raise where.fail("value", "Required value")
    return PriorityClass(name, _int(d.get("value"), where, "value"), bool(d.get("globalDefault")),
                         _str(d.get("preemptionPolicy"), where, "preemptionPolicy") or "PreemptLowerPriority")


def _int_or_percent(v: Any, where: Where, path: str) -> int | str | None:
    if v is None:
        return None
    if isinstance(v, str) and v.endswith("%"):
        if _int(v[:-1], where, path) < 0:
            raise where.fail(path, f"Invalid value: {v!r}: must be non-negative")
        return v
    return _int(v, where, path)


def parse_pdb(d: Mapping[str, Any], source: str = "") -> PodDisruptionBudget:
    ns, name = meta_name(d)
    ns = ns or "default"
    where = Where(source, "PodDisruptionBudget", f"{ns}/{name}")
    spec = _map(d.get("spec"), where, "spec")
    status = d.get("status")
    allowed = None
    disrupted: frozenset[str] = frozenset()
    if isinstance(status, Mapping) and status:
        allowed = _int(status.get("disruptionsAllowed"), where, "status.disruptionsAllowed")
        disrupted = frozenset(str(k) for k in _map(status.get("disruptedPods"), where, "status.disruptedPods"))
    return PodDisruptionBudget(
        ns, name, parse_label_selector(spec.get("selector"), where, "spec.selector"), allowed, disrupted,
        _int_or_percent(spec.get("minAvailable"), where, "spec.minAvailable"),
        _int_or_percent(spec.get("maxUnavailable"), where, "spec.maxUnavailable"))


def parse_selecting_object(d: Mapping[str, Any], source: str = "") -> SelectingObject:
    kind = str(d.get("kind"))
    ns, name = meta_name(d)
    ns = ns or "default"
    where = Where(source, kind, f"{ns}/{name}")
    spec = _map(d.get("spec"), where, "spec")
    sel = spec.get("selector")
    if kind in ("Service", "ReplicationController"):
        # map selectors; an empty map selects nothing for a Service (helper/spread.go skips it)
        m = _labels(sel, where, "spec.selector")
        if kind == "ReplicationController" and not m:
            tmpl = _map(_map(spec.get("template"), where, "spec.template").get("metadata"), where, "spec.template.metadata")
            m = _labels(tmpl.get("labels"), where, "spec.template.metadata.labels")
        selector = LabelSelector(tuple(sorted(m.items()))) if m else None
    else:
        selector = parse_label_selector(sel, where, "spec.selector")
    return SelectingObject(kind, ns, name, selector)


# ----------------------------------------------------------------------------------- storage

def _storage_bytes(v: Any, where: Where, path: str) -> int | None:
    """A ``storage`` quantity as integer bytes (Quantity.Value), None when absent."""
    if v is None:
        return None
    try:
        amount = nanos_to_value(parse_nanos(v))
    except QuantityError as e:
        raise where.fail(path, str(e)) from None
    if not fits_int64(amount):
        raise where.fail(path, f"Invalid value: {_shown(v)}: must be less than 2^63 bytes")
    return amount


def _access_modes(v: Any, where: Where, path: str) -> tuple[str, ...]:
    return tuple(_str(m, where, path) for m in _list(v, where, path))


def _optional_str(v: Any, where: Where, path: str) -> str | None:
    return None if v is None else _str(v, where, path)


def parse_persistent_volume_claim(d: Mapping[str, Any], source: str = "") -> PersistentVolumeClaim:
    ns, name = meta_name(d)
    ns = ns or "default"
    where = Where(source, "PersistentVolumeClaim", f"{ns}/{name or '?'}")
    if not name:
        raise where.fail("metadata.name", "Required value")
    md = _map(d.get("metadata"), where, "metadata")
    spec = _map(d.get("spec"), where, "spec")
    status = _map(d.get("status"), where, "status")
    res = _map(spec.get("resources"), where, "spec.resources")
    requests = _map(res.get("requests"), where, "spec.resources.requests")
    return PersistentVolumeClaim(
        namespace=ns,
        name=name,
        uid=_str(md.get("uid"), where, "metadata.uid") or f"{ns}/{name}",
        storage_class_name=_optional_str(spec.get("storageClassName"), where, "spec.storageClassName"),
        access_modes=_access_modes(spec.get("accessModes"), where, "spec.accessModes"),
        request=_storage_bytes(requests.get("storage"), where, "spec.resources.requests.storage"),
        selector=parse_label_selector(spec.get("selector"), where, "spec.selector"),
        volume_name=_str(spec.get("volumeName"), where, "spec.volumeName"),
        volume_mode=_str(spec.get("volumeMode"), where, "spec.volumeMode") or "Filesystem",
        volume_attributes_class=_str(spec.get("volumeAttributesClassName"), where, "spec.volumeAttributesClassName"),
        labels=_labels(md.get("labels"), where, "metadata.labels"),
        annotations=_labels(md.get("annotations"), where, "metadata.annotations"),
        owners=_owners(md, where),
        phase=_str(status.get("phase"), where, "status.phase") or "Pending",
        deleting=md.get("deletionTimestamp") is not None,
        source=source,
    )


#: in-tree volume sources of a PV that the CSI translation library can migrate, by plugin name
_IN_TREE_PV_SOURCES = (
    ("awsElasticBlockStore", "kubernetes.io/aws-ebs", "volumeID"),
    ("gcePersistentDisk", "kubernetes.io/gce-pd", "pdName"),
    ("azureDisk", "kubernetes.io/azure-disk", "diskURI"),
    ("azureFile", "kubernetes.io/azure-file", "shareName"),
    ("cinder", "kubernetes.io/cinder", "volumeID"),
    ("vsphereVolume", "kubernetes.io/vsphere-volume", "volumePath"),
    ("portworxVolume", "kubernetes.io/portworx-volume", "volumeID"),
)


def parse_persistent_volume(d: Mapping[str, Any], source: str = "") -> PersistentVolume:
    name, where = _cluster_scoped(d, source, "PersistentVolume")
    md = _map(d.get("metadata"), where, "metadata")
    spec = _map(d.get("spec"), where, "spec")
    status = _map(d.get("status"), where, "status")
    cap = _map(spec.get("capacity"), where, "spec.capacity")
    claim_ref = None
    if spec.get("claimRef") is not None:
        cr = _map(spec.get("claimRef"), where, "spec.claimRef")
        claim_ref = ClaimRef(_str(cr.get("namespace"), where, "spec.claimRef.namespace"),
                             _str(cr.get("name"), where, "spec.claimRef.name"),
                             _str(cr.get("uid"), where, "spec.claimRef.uid"))
    affinity = None
    na = _map(spec.get("nodeAffinity"), where, "spec.nodeAffinity")
    if na.get("required") is not None:
        req = _map(na.get("required"), where, "spec.nodeAffinity.required")
        terms = _list(req.get("nodeSelectorTerms"), where, "spec.nodeAffinity.required.nodeSelectorTerms")
        affinity = NodeSelector(tuple(parse_node_selector_term(t, where, f"spec.nodeAffinity.required.nodeSelectorTerms[{i}]")
                                      for i, t in enumerate(terms)))
    csi = None
    if spec.get("csi") is not None:
        c = _map(spec.get("csi"), where, "spec.csi")
        csi = (_str(c.get("driver"), where, "spec.csi.driver"), _str(c.get("volumeHandle"), where, "spec.csi.volumeHandle"))
    in_tree = None
    for field, plugin, id_field in _IN_TREE_PV_SOURCES:
        if spec.get(field) is not None:
            src = _map(spec.get(field), where, f"spec.{field}")
            in_tree = (plugin, _str(src.get(id_field), where, f"spec.{field}.{id_field}"))
            break
    phase = _str(status.get("phase"), where, "status.phase")
    if not phase:
        # without a status (a hand-written object) the PV controller's view: bound once claimed
        phase = "Bound" if claim_ref is not None else "Available"
    return PersistentVolume(
        name=name,
        capacity=_storage_bytes(cap.get("storage"), where, "spec.capacity.storage") or 0,
        access_modes=_access_modes(spec.get("accessModes"), where, "spec.accessModes"),
        storage_class_name=_str(spec.get("storageClassName"), where, "spec.storageClassName"),
        claim_ref=claim_ref,
        node_affinity=affinity,
        volume_mode=_str(spec.get("volumeMode"), where, "spec.volumeMode") or "Filesystem",
        volume_attributes_class=_str(spec.get("volumeAttributesClassName"), where, "spec.volumeAttributesClassName"),
        phase=phase,
        deleting=md.get("deletionTimestamp") is not None,
        labels=_labels(md.get("labels"), where, "metadata.labels"),
        annotations=_labels(md.get("annotations"), where, "metadata.annotations"),
        csi=csi,
        in_tree=in_tree,
        source=source,
    )


def parse_storage_class(d: Mapping[str, Any], source: str = "") -> StorageClass:
    name, where = _cluster_scoped(d, source, "StorageClass")
    md = _map(d.get("metadata"), where, "metadata")
    mode = _str(d.get("volumeBindingMode"), where, "volumeBindingMode") or "Immediate"
    if mode not in ("Immediate", "WaitForFirstConsumer"):
        raise where.fail("volumeBindingMode", f'Unsupported value: "{mode}": supported values: "Immediate", '
                         '"WaitForFirstConsumer"')
    terms = []
    for i, t in enumerate(_list(d.get("allowedTopologies"), where, "allowedTopologies")):
        p = f"allowedTopologies[{i}].matchLabelExpressions"
        exprs = []
        for j, e in enumerate(_list(_map(t, where, f"allowedTopologies[{i}]").get("matchLabelExpressions"), where, p)):
            e = _map(e, where, f"{p}[{j}]")
            exprs.append((_str(e.get("key"), where, f"{p}[{j}].key"),
                          tuple(_str(v, where, f"{p}[{j}].values") for v in _list(e.get("values"), where, f"{p}[{j}].values"))))
        terms.append(TopologySelectorTerm(tuple(exprs)))
    ann = _labels(md.get("annotations"), where, "metadata.annotations")
    default = ann.get(ANN_DEFAULT_CLASS) == "true" or ann.get(ANN_BETA_DEFAULT_CLASS) == "true"
    return StorageClass(name, _str(d.get("provisioner"), where, "provisioner"), mode, tuple(terms), default,
                        parse_time(md.get("creationTimestamp"), where, "metadata.creationTimestamp"), source)


def parse_csi_node(d: Mapping[str, Any], source: str = "") -> CSINode:
    name, where = _cluster_scoped(d, source, "CSINode")
    md = _map(d.get("metadata"), where, "metadata")
    spec = _map(d.get("spec"), where, "spec")
    drivers = []
    for i, dr in enumerate(_list(spec.get("drivers"), where, "spec.drivers")):
        p = f"spec.drivers[{i}]"
        dr = _map(dr, where, p)
        alloc = _map(dr.get("allocatable"), where, f"{p}.allocatable")
        count = None if alloc.get("count") is None else _int(alloc.get("count"), where, f"{p}.allocatable.count")
        drivers.append(CSINodeDriver(
            _str(dr.get("name"), where, f"{p}.name"), _str(dr.get("nodeID"), where, f"{p}.nodeID"),
            tuple(_str(k, where, f"{p}.topologyKeys") for k in _list(dr.get("topologyKeys"), where, f"{p}.topologyKeys")),
            count))
    migrated = _labels(md.get("annotations"), where, "metadata.annotations").get(ANN_MIGRATED_PLUGINS, "")
    return CSINode(name, tuple(drivers), frozenset(p.strip() for p in migrated.split(",") if p.strip()), source)


def parse_csi_driver(d: Mapping[str, Any], source: str = "") -> CSIDriver:
    name, where = _cluster_scoped(d, source, "CSIDriver")
    spec = _map(d.get("spec"), where, "spec")
    attach = spec.get("attachRequired")
    return CSIDriver(name, bool(spec.get("storageCapacity")), attach is None or bool(attach),
                     spec.get("preventPodSchedulingIfMissing") is True, source)


def parse_volume_attachment(d: Mapping[str, Any], source: str = "") -> VolumeAttachment:
    name, where = _cluster_scoped(d, source, "VolumeAttachment")
    spec = _map(d.get("spec"), where, "spec")
    src = _map(spec.get("source"), where, "spec.source")
    pv = src.get("persistentVolumeName")
    return VolumeAttachment(
        name=name,
        attacher=_str(spec.get("attacher"), where, "spec.attacher"),
        node_name=_str(spec.get("nodeName"), where, "spec.nodeName"),
        pv_name=_str(pv, where, "spec.source.persistentVolumeName") if pv is not None else None,
        source=source,
    )


def parse_csi_storage_capacity(d: Mapping[str, Any], source: str = "") -> CSIStorageCapacity:
    ns, name = meta_name(d)
    ns = ns or "default"
    where = Where(source, "CSIStorageCapacity", f"{ns}/{name or '?'}")
    if not name:
        raise where.fail("metadata.name", "Required value")
    return CSIStorageCapacity(
        ns, name, _str(d.get("storageClassName"), where, "storageClassName"),
        parse_label_selector(d.get("nodeTopology"), where, "nodeTopology"),
        _storage_bytes(d.get("capacity"), where, "capacity"),
        _storage_bytes(d.get("maximumVolumeSize"), where, "maximumVolumeSize"),
        source)


#: kind → the parser of a storage object
STORAGE_PARSERS: dict[str, Callable[[Mapping[str, Any], str], StorageObject]] = {
    "PersistentVolumeClaim": parse_persistent_volume_claim,
    "PersistentVolume": parse_persistent_volume,
    "StorageClass": parse_storage_class,
    "CSINode": parse_csi_node,
    "CSIDriver": parse_csi_driver,
    "CSIStorageCapacity": parse_csi_storage_capacity,
    "VolumeAttachment": parse_volume_attachment,
}


# ------------------------------------------------------------------ ResourceQuota

def _quota_list(v: Any, where: Where, path: str) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for k, q in _map(v, where, path).items():
        try:
            out[str(k)] = Quantity.parse(q)
        except QuantityError as e:
            raise where.fail(f"{path}[{k}]", str(e)) from None
    return out


def parse_resource_quota(d: Mapping[str, Any], source: str = "") -> ResourceQuota:
    """A ResourceQuota: its hard limits (status.hard, else spec.hard), status.used when the object
    has it, and its scopes (spec.scopes as Exists requirements, then spec.scopeSelector's)."""
    ns, name = meta_name(d)
    ns = ns or "default"
    where = Where(source, "ResourceQuota", f"{ns}/{name}")
    spec = _map(d.get("spec"), where, "spec")
    status = _map(d.get("status"), where, "status")
    hard = _quota_list(status.get("hard"), where, "status.hard") if status.get("hard") is not None else \
        _quota_list(spec.get("hard"), where, "spec.hard")
    used = _quota_list(status.get("used"), where, "status.used") if status.get("used") is not None else None
    scopes = [ScopeRequirement(_str(s, where, f"spec.scopes[{i}]"), "Exists")
              for i, s in enumerate(_list(spec.get("scopes"), where, "spec.scopes"))]
    selector = _map(spec.get("scopeSelector"), where, "spec.scopeSelector")
    for i, e in enumerate(_list(selector.get("matchExpressions"), where, "spec.scopeSelector.matchExpressions")):
        p = f"spec.scopeSelector.matchExpressions[{i}]"
        e = _map(e, where, p)
        values = tuple(_str(v, where, f"{p}.values") for v in _list(e.get("values"), where, f"{p}.values"))
        scopes.append(ScopeRequirement(_str(e.get("scopeName"), where, f"{p}.scopeName"),
                                       _str(e.get("operator"), where, f"{p}.operator"), values))
    return ResourceQuota(ns, name, MappingProxyType(hard), None if used is None else MappingProxyType(used),
                         tuple(scopes), source)


def parse_quota_pod(d: Mapping[str, Any], source: str = "") -> QuotaPod:
    """What quota admission reads of a pod being created; container requests defaulted from their
    limits as the API server defaults them before admission."""
    md = _map(d.get("metadata"), Where(source, "Pod", "?"), "metadata")
    where = Where(source, "Pod", f"{md.get('namespace') or 'default'}/{md.get('name') or '?'}")
    spec = _map(d.get("spec"), where, "spec")

    def containers(field: str) -> tuple[QuotaContainer, ...]:
        out = []
        for i, c in enumerate(_list(spec.get(field), where, f"spec.{field}")):
            p = f"spec.{field}[{i}]"
            c = _map(c, where, p)
            res = _map(c.get("resources"), where, f"{p}.resources")
            req = _quota_list(res.get("requests"), where, f"{p}.resources.requests")
            lim = _quota_list(res.get("limits"), where, f"{p}.resources.limits")
            for k, q in lim.items():
                req.setdefault(k, q)
            out.append(QuotaContainer(_str(c.get("name"), where, f"{p}.name"), MappingProxyType(req),
                                      MappingProxyType(lim), field == "initContainers" and
                                      c.get("restartPolicy") == "Always"))
        return tuple(out)

    pres = spec.get("resources")
    pod_level = _map(pres, where, "spec.resources")
    overhead = spec.get("overhead")
    deadline = spec.get("activeDeadlineSeconds")
    return QuotaPod(
        containers("containers"), containers("initContainers"),
        None if pres is None else MappingProxyType(_quota_list(pod_level.get("requests"), where,
                                                               "spec.resources.requests")),
        None if pres is None else MappingProxyType(_quota_list(pod_level.get("limits"), where,
                                                               "spec.resources.limits")),
        None if overhead is None else MappingProxyType(_quota_list(overhead, where, "spec.overhead")),
        None if deadline is None else _int(deadline, where, "spec.activeDeadlineSeconds"),
        _str(_map(d.get("status"), where, "status").get("phase"), where, "status.phase"))
