"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) → effective profiles.

Follows reference 1.5: strict decode, defaults, the merge of ``plugins`` with the default
MultiPoint set, validation (all errors together), then per profile the effective plugin list of
every extension point and the score weights. Messages use kube-scheduler's own wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kplan.errors import ConfigError
from kplan.framework.interfaces import POINT_IFACE
from kplan.framework.registry import ArgsError, Registry

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

#: reference 1.2: the default MultiPoint set and weights (DynamicResources inserted, DRA is GA)
DEFAULT_MULTIPOINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 0), ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
)

#: the order in which upstream fills the extension points (framework.go NewFramework)
POINTS_ORDER = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind",
                "bind", "postBind", "permit", "preEnqueue", "queueSort")
_PLUGIN_SET_FIELDS = ("multiPoint",) + POINTS_ORDER
_REMOVED = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

_TOP_FIELDS = {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "healthzBindAddress",
               "metricsBindAddress", "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
               "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
               "delayCacheUntilActive"}
_PROFILE_FIELDS = {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int = 0


@dataclass
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass
class ProfileSpec:
    """One profile after steps 1–4: what to build at every extension point."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    points: dict[str, list[str]]
    weights: dict[str, int]
    #: typed args of every plugin that has an args kind and is enabled somewhere
    args: dict[str, Any]
    #: raw pluginConfig of plugins without an args kind (custom plugins read it)
    raw_args: dict[str, Any]


@dataclass
class SchedulerConfig:
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: list[ProfileSpec] = field(default_factory=list)

    def profile(self, scheduler_name: str) -> ProfileSpec | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None


def _strict(obj: Mapping[str, Any], known: set[str], path: str) -> None:
    for k in obj:
        if k not in known:
            raise ConfigError(f'strict decoding error: unknown field "{path}{k}"')


def _as_map(v: Any, path: str) -> Mapping[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise ConfigError(f"{path or 'config'}: expected an object, got {type(v).__name__}")
    return v


def _as_list(v: Any, path: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise ConfigError(f"{path}: expected a list, got {type(v).__name__}")
    return v


def _as_int(v: Any, path: str, bits: int = 32) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise ConfigError(f"{path}: expected an integer, got {v!r}")
    n = int(v)
    if not -(2 ** (bits - 1)) <= n < 2 ** (bits - 1):
        raise ConfigError(f"{path}: cannot unmarshal number {n} into an int{bits}")
    return n


def _plugin_set(v: Any, path: str) -> PluginSet:
    m = _as_map(v, path)
    _strict(m, {"enabled", "disabled"}, f"{path}.")
    out = PluginSet()
    for which in ("enabled", "disabled"):
        for i, e in enumerate(_as_list(m.get(which), f"{path}.{which}")):
            p = f"{path}.{which}[{i}]"
            e = _as_map(e, p)
            _strict(e, {"name", "weight"}, f"{p}.")
            name = str(e.get("name") or "")
            weight = _as_int(e["weight"], f"{p}.weight") if e.get("weight") is not None else 0
            if which == "enabled":
                out.enabled.append(PluginRef(name, weight))
            else:
                out.disabled.append(name)
    return out


def merge_plugin_set(default: PluginSet, user: PluginSet) -> PluginSet:
    """mergePluginSet (reference 1.5.2)."""
    disabled = list(user.disabled) + list(default.disabled)
    last = {p.name: i for i, p in enumerate(user.enabled)}
    used: set[int] = set()
    out: list[PluginRef] = []
    if "*" not in disabled:
        for d in default.enabled:
            if d.name in disabled:
                continue
            if d.name in last:
                used.add(last[d.name])
                d = user.enabled[last[d.name]]
            out.append(d)
    out += [p for i, p in enumerate(user.enabled) if i not in used]
    return PluginSet(out, disabled)


def _field_errors(errors: list[str]) -> ConfigError:
    return ConfigError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def load_config(doc: Mapping[str, Any] | None, registry: Registry) -> SchedulerConfig:
    """The effective configuration of a KubeSchedulerConfiguration document (None = defaults)."""
    doc = doc or {"apiVersion": API_VERSION, "kind": KIND}
    if not isinstance(doc, Mapping):
        raise ConfigError("expected a KubeSchedulerConfiguration object")
    kind, version = doc.get("kind"), doc.get("apiVersion")
    if not kind:
        raise ConfigError("Object 'Kind' is missing in the scheduler configuration")
    if version != API_VERSION or kind != KIND:
        raise ConfigError(f'no kind "{kind}" is registered for version "{version}" in scheme '
                          f'"pkg/scheduler/apis/config/scheme/scheme.go:33"')
    _strict(doc, _TOP_FIELDS, "")
    cfg = SchedulerConfig()
    # validation.go collects errors in this order: parallelism, each profile (then duplicate
    # names), the common queue sort, and only then the global percentage, backoffs and extenders
    errors: list[str] = []
    tail: list[str] = []
    if doc.get("parallelism") is not None:
        cfg.parallelism = _as_int(doc["parallelism"], "parallelism")
    if doc.get("percentageOfNodesToScore") is not None:
        cfg.percentage_of_nodes_to_score = _as_int(doc["percentageOfNodesToScore"], "percentageOfNodesToScore")
    if doc.get("podInitialBackoffSeconds") is not None:
        cfg.pod_initial_backoff_seconds = _as_int(doc["podInitialBackoffSeconds"], "podInitialBackoffSeconds", 64)
    if doc.get("podMaxBackoffSeconds") is not None:
        cfg.pod_max_backoff_seconds = _as_int(doc["podMaxBackoffSeconds"], "podMaxBackoffSeconds", 64)
    if cfg.parallelism <= 0:
        errors.append(f"parallelism: Invalid value: {cfg.parallelism}: should be an integer value greater than zero")
    if not 0 <= cfg.percentage_of_nodes_to_score <= 100:
        tail.append(f"percentageOfNodesToScore: Invalid value: {cfg.percentage_of_nodes_to_score}: "
                    "not in valid range [0-100]")
    if cfg.pod_initial_backoff_seconds <= 0:
        tail.append(f"podInitialBackoffSeconds: Invalid value: {cfg.pod_initial_backoff_seconds}: "
                    "must be greater than 0")
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        tail.append(f"podMaxBackoffSeconds: Invalid value: {cfg.pod_max_backoff_seconds}: "
                    "must be greater than or equal to PodInitialBackoffSeconds")
    for i, _ext in enumerate(_as_list(doc.get("extenders"), "extenders")):
        tail.append(f"extenders[{i}]: Unsupported value: kplan does not call scheduler extenders")

    raw_profiles = _as_list(doc.get("profiles"), "profiles") or [{}]
    default_mp = PluginSet([PluginRef(n, w) for n, w in DEFAULT_MULTIPOINT])
    merged_profiles = []
    names_seen: set[str] = set()
    for i, rp in enumerate(raw_profiles):
        path = f"profiles[{i}]"
        rp = _as_map(rp, path)
        _strict(rp, _PROFILE_FIELDS, f"{path}.")
        name = str(rp.get("schedulerName") or "")
        if not name and len(raw_profiles) == 1:
            name = "default-scheduler"
        pct = rp.get("percentageOfNodesToScore")
        pct = _as_int(pct, f"{path}.percentageOfNodesToScore") if pct is not None else None
        if not name:
            errors.append(f"{path}.schedulerName: Required value")
        if pct is not None and not 0 <= pct <= 100:
            errors.append(f"{path}.percentageOfNodesToScore: Invalid value: {pct}: not in valid range [0-100]")
        plugins_raw = _as_map(rp.get("plugins"), f"{path}.plugins")
        _strict(plugins_raw, set(_PLUGIN_SET_FIELDS), f"{path}.plugins.")
        sets: dict[str, PluginSet] = {}
        for point in _PLUGIN_SET_FIELDS:
            user = _plugin_set(plugins_raw.get(point), f"{path}.plugins.{point}")
            if point != "multiPoint":
                for j, ref in enumerate(user.enabled):
                    if ref.name in _REMOVED:
                        errors.append(f'{path}.plugins.{point}.enabled[{j}]: Invalid value: "{ref.name}": was invalid '
                                      f'in version "v1" (KubeSchedulerConfiguration is version "{API_VERSION}")')
            sets[point] = merge_plugin_set(default_mp if point == "multiPoint" else PluginSet(), user)
        enabled_anywhere = {r.name for s in sets.values() for r in s.enabled}
        args, raw_args, arg_errors = _plugin_config(rp.get("pluginConfig"), path, enabled_anywhere, registry)
        errors += arg_errors
        if name in names_seen:
            errors.append(f"{path}.schedulerName: Duplicate value: {{}}")
        names_seen.add(name)
        merged_profiles.append((name, pct, sets, args, raw_args, plugins_raw.get("queueSort")))

    # validateCommonQueueSort compares the merged (defaulted) queueSort sets, so an absent section
    # and an empty one are the same
    first_qs = merged_profiles[0][2]["queueSort"]
    if len(first_qs.enabled) > 1:
        errors.append(f"profiles[0].plugins.queueSort.Enabled: Invalid value: {len(first_qs.enabled)}: "
                      "only one queue sort plugin can be enabled")
    for i, mp in enumerate(merged_profiles[1:], 1):
        if mp[2]["queueSort"] != first_qs:
            errors.append(f"profiles[{i}].plugins.queueSort: Invalid value: {mp[5]!r}: must be the same for all profiles")
    errors += tail
    if errors:
        raise _field_errors(errors)

    for name, pct, sets, args, raw_args, _ in merged_profiles:
        try:
            points, weights = effective_points(sets, registry, name)
            for pname in {n for lst in points.values() for n in lst}:
                spec = registry.get(pname)
                if spec is not None and spec.validate_on_build and spec.validate_args is not None:
                    problems = spec.validate_args(args.get(pname))
                    if problems:
                        msg = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
                        raise ConfigError(f'initializing plugin "{pname}": {msg}')
        except ConfigError as e:
            raise ConfigError(f"initializing profiles: creating profile for scheduler name {name}: {e}") from None
        cfg.profiles.append(ProfileSpec(name, pct, points, weights, args, raw_args))
    return cfg


def _plugin_config(v: Any, path: str, enabled: set[str], registry: Registry
                   ) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    args: dict[str, Any] = {}
    raw_args: dict[str, Any] = {}
    errors: list[str] = []
    seen: set[str] = set()
    for j, entry in enumerate(_as_list(v, f"{path}.pluginConfig")):
        p = f"{path}.pluginConfig[{j}]"
        entry = _as_map(entry, p)
        _strict(entry, {"name", "args"}, f"{p}.")
        name = str(entry.get("name") or "")
        if name in seen:
            # reported, and the entry is still checked like any other (validatePluginConfig)
            errors.append(f'{p}: Duplicate value: "{name}"')
        seen.add(name)
        if name in _REMOVED:
            errors.append(f'{p}: Invalid value: "{name}": was invalid in version "v1" '
                          f'(KubeSchedulerConfiguration is version "{API_VERSION}")')
            continue
        spec = registry.get(name)
        raw = entry.get("args")
        if spec is None or spec.decode_args is None:
            raw_args[name] = raw
            continue
        raw_map = _as_map(raw, f"{p}.args")
        if raw_map.get("kind") and raw_map.get("kind") != spec.args_kind:
            raise ConfigError(f"args for plugin {name} were not of type {spec.args_kind}.kubescheduler.config.k8s.io, "
                              f"got {raw_map.get('kind')}")
        try:
            decoded = spec.decode_args({k: x for k, x in raw_map.items() if k not in ("kind", "apiVersion")})
        except ArgsError as e:
            raise ConfigError(f"strict decoding error: decoding .{p}: strict decoding error: "
                              f"decoding args for plugin {name}: strict decoding error: {e}") from None
        args[name] = decoded
        if spec.validate_args is not None and not spec.validate_on_build:
            errors += [f"{p}.args.{problem}" for problem in spec.validate_args(decoded)]
    for name in sorted(enabled):
        spec = registry.get(name)
        if name not in args and spec is not None and spec.decode_args is not None:
            args[name] = spec.decode_args(None)
    return args, raw_args, errors


def _unknown_plugin(iface: str, name: str) -> ConfigError:
    """kube-scheduler's "does not exist", plus where kplan looks for plugins it does not ship."""
    return ConfigError(f'{iface} "{name}" does not exist (it is not built into kplan, and no installed package '
                       'registers it in the "kplan.plugins" entry-point group)')


def effective_points(sets: dict[str, PluginSet], registry: Registry, profile_name: str
                     ) -> tuple[dict[str, list[str]], dict[str, int]]:
    """updatePluginList / expandMultiPointPlugins and getScoreWeights (reference 1.5.3–1.5.4)."""

    def implements(name: str, point: str) -> bool:
        spec = registry.get(name)
        return spec is not None and point in spec.points

    for point in POINTS_ORDER:
        seen: set[str] = set()
        for ref in sets[point].enabled:
            if ref.name not in registry:
                raise _unknown_plugin(POINT_IFACE[point], ref.name)
            if not implements(ref.name, point):
                raise ConfigError(f'plugin "{ref.name}" does not extend {POINT_IFACE[point]} plugin')
            if ref.name in seen:
                raise ConfigError(f'plugin "{ref.name}" already registered as "{POINT_IFACE[point]}"')
            seen.add(ref.name)
    mp = sets["multiPoint"]
    points: dict[str, list[str]] = {}
    for point in POINTS_ORDER:
        own = [r.name for r in sets[point].enabled]
        if "*" in sets[point].disabled:
            points[point] = own
            continue
        from_mp: list[str] = []
        overriding: set[str] = set()
        for ref in mp.enabled:
            if ref.name not in registry:
                raise _unknown_plugin("PreFilterPlugin", ref.name)
            if not implements(ref.name, point) or ref.name in sets[point].disabled:
                continue
            if ref.name in own:
                overriding.add(ref.name)
                continue
            if ref.name in from_mp:
                raise ConfigError(f'plugin "{ref.name}" already registered as "{POINT_IFACE[point]}"')
            from_mp.append(ref.name)
        points[point] = [n for n in own if n in overriding] + from_mp + [n for n in own if n not in overriding]
    if len(points["queueSort"]) != 1:
        raise ConfigError("only one queue sort plugin required for profile with scheduler name "
                          f'"{profile_name}", but got {len(points["queueSort"])}')
    if not points["bind"]:
        raise ConfigError(f'at least one bind plugin is needed for profile with scheduler name "{profile_name}"')

    weights: dict[str, int] = {}
    running = 0
    for ref in sets["score"].enabled + mp.enabled:
        if not implements(ref.name, "score") or ref.name in weights:
            continue
        w = ref.weight or 1
        limit = (2**63 - 1 - running)
        limit = ((limit + 2**63) % 2**64) - 2**63  # int64 wrap-around, as Go computes it
        if w * 100 > limit:
            raise ConfigError("total score of Score plugins could overflow")
        weights[ref.name] = w
        running += w * 100
    for name in points["score"]:
        weights.setdefault(name, 1)
    return points, weights
