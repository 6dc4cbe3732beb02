"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) → effective profiles.

Follows reference 1.5 in upstream's stages, one function each: ``decode`` (strict, the first
problem raises), ``set_defaults`` (the merge of ``plugins`` with the default MultiPoint set,
default names and plugin args), ``validate`` (all problems together) and ``build_profile`` (per
profile the effective plugin list of every extension point and the score weights).
Messages use kube-scheduler's own wording.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kplan.errors import ConfigError
from kplan.framework.interfaces import POINT_IFACE
from kplan.framework.registry import ArgsError, Registry
from kplan.framework.release import Release, default_release

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

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
    #: the Kubernetes release and feature gates of the run (handed to plugins as handle.release)
    release: Release = field(default_factory=default_release)

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


# ------------------------------------------------------------------------------ stage 1: decode

@dataclass(frozen=True)
class PluginConfigEntry:
    """One ``pluginConfig`` entry as decoded: its args typed when the plugin has an args kind."""

    name: str
    #: "profiles[i].pluginConfig[j]", as messages print it
    path: str
    #: the args as written
    raw: Any
    #: the typed args (None when the plugin has no args kind, or is a removed one)
    args: Any = None
    decoded: bool = False


@dataclass(frozen=True)
class DecodedProfile:
    """One profile as written: nothing defaulted yet."""

    path: str
    scheduler_name: str = ""
    percentage_of_nodes_to_score: int | None = None
    #: each plugin-set field ("multiPoint", "filter", …) as written (absent: empty)
    plugins: Mapping[str, PluginSet] = field(default_factory=dict)
    #: the queueSort section as written, for the message of validateCommonQueueSort
    queue_sort_raw: Any = None
    plugin_config: tuple[PluginConfigEntry, ...] = ()


@dataclass(frozen=True)
class DecodedConfig:
    """The file as written, strictly decoded (upstream: the v1 object before SetDefaults)."""

    parallelism: int | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    extenders: int = 0
    profiles: tuple[DecodedProfile, ...] = ()


def decode(doc: Mapping[str, Any] | None, registry: Registry) -> DecodedConfig:
    """Strict decoding (reference 1.5 step 1): the type, unknown fields, value types, plugin args.
    Raises ConfigError at the first problem."""
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

    def opt_int(key: str, bits: int = 32) -> int | None:
        return _as_int(doc[key], key, bits) if doc.get(key) is not None else None

    return DecodedConfig(
        parallelism=opt_int("parallelism"),
        percentage_of_nodes_to_score=opt_int("percentageOfNodesToScore"),
        pod_initial_backoff_seconds=opt_int("podInitialBackoffSeconds", 64),
        pod_max_backoff_seconds=opt_int("podMaxBackoffSeconds", 64),
        extenders=len(_as_list(doc.get("extenders"), "extenders")),
        profiles=tuple(_decode_profile(rp, f"profiles[{i}]", registry)
                       for i, rp in enumerate(_as_list(doc.get("profiles"), "profiles"))),
    )


def _decode_profile(raw: Any, path: str, registry: Registry) -> DecodedProfile:
    rp = _as_map(raw, path)
    _strict(rp, _PROFILE_FIELDS, f"{path}.")
    pct = rp.get("percentageOfNodesToScore")
    plugins_raw = _as_map(rp.get("plugins"), f"{path}.plugins")
    _strict(plugins_raw, set(_PLUGIN_SET_FIELDS), f"{path}.plugins.")
    return DecodedProfile(
        path=path,
        scheduler_name=str(rp.get("schedulerName") or ""),
        percentage_of_nodes_to_score=_as_int(pct, f"{path}.percentageOfNodesToScore") if pct is not None else None,
        plugins={point: _plugin_set(plugins_raw.get(point), f"{path}.plugins.{point}") for point in _PLUGIN_SET_FIELDS},
        queue_sort_raw=plugins_raw.get("queueSort"),
        plugin_config=tuple(_decode_plugin_config(e, f"{path}.pluginConfig[{j}]", registry)
                            for j, e in enumerate(_as_list(rp.get("pluginConfig"), f"{path}.pluginConfig"))),
    )


def _decode_plugin_config(raw: Any, path: str, registry: Registry) -> PluginConfigEntry:
    entry = _as_map(raw, path)
    _strict(entry, {"name", "args"}, f"{path}.")
    name = str(entry.get("name") or "")
    spec = registry.get(name)
    kind = spec.args if spec is not None else None
    if name in _REMOVED or kind is None:
        return PluginConfigEntry(name, path, entry.get("args"))
    raw_map = _as_map(entry.get("args"), f"{path}.args")
    if raw_map.get("kind") and raw_map.get("kind") != kind.kind:
        raise ConfigError(f"args for plugin {name} were not of type {kind.kind}.kubescheduler.config.k8s.io, "
                          f"got {raw_map.get('kind')}")
    try:
        args = kind.decode({k: x for k, x in raw_map.items() if k not in ("kind", "apiVersion")})
    except ArgsError as e:
        raise ConfigError(f"strict decoding error: decoding .{path}: strict decoding error: "
                          f"decoding args for plugin {name}: strict decoding error: {e}") from None
    return PluginConfigEntry(name, path, entry.get("args"), args, decoded=True)


# ------------------------------------------------------------------------------ stage 2: defaults

@dataclass(frozen=True)
class DefaultedProfile:
    """A profile after SetDefaults: its name, its plugin sets merged with the default MultiPoint
    set, and the args of every enabled plugin that has an args kind."""

    decoded: DecodedProfile
    scheduler_name: str
    sets: Mapping[str, PluginSet]
    #: typed args of every plugin that has an args kind and is enabled somewhere
    args: Mapping[str, Any]
    #: raw pluginConfig of plugins without an args kind (custom plugins read it)
    raw_args: Mapping[str, Any]


@dataclass(frozen=True)
class DefaultedConfig:
    parallelism: int
    percentage_of_nodes_to_score: int
    pod_initial_backoff_seconds: int
    pod_max_backoff_seconds: int
    extenders: int
    profiles: tuple[DefaultedProfile, ...]
    release: Release


def set_defaults(decoded: DecodedConfig, registry: Registry, release: Release | None = None) -> DefaultedConfig:
    """SetDefaults_KubeSchedulerConfiguration (reference 1.1, 1.2, 1.3, 1.5 step 2) of ``release``
    (None: the default one): its default MultiPoint set and default plugin args."""
    release = release or default_release()
    base = SchedulerConfig()
    profiles = decoded.profiles or (DecodedProfile("profiles[0]"),)
    default_mp = PluginSet([PluginRef(n, w) for n, w in release.default_profile])
    return DefaultedConfig(
        parallelism=_or(decoded.parallelism, base.parallelism),
        percentage_of_nodes_to_score=_or(decoded.percentage_of_nodes_to_score, base.percentage_of_nodes_to_score),
        pod_initial_backoff_seconds=_or(decoded.pod_initial_backoff_seconds, base.pod_initial_backoff_seconds),
        pod_max_backoff_seconds=_or(decoded.pod_max_backoff_seconds, base.pod_max_backoff_seconds),
        extenders=decoded.extenders,
        profiles=tuple(_default_profile(p, len(profiles) == 1, registry, default_mp, release) for p in profiles),
        release=release,
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _default_profile(p: DecodedProfile, only: bool, registry: Registry, default_mp: PluginSet,
                     release: Release) -> DefaultedProfile:
    sets = {point: merge_plugin_set(default_mp if point == "multiPoint" else PluginSet(),
                                    p.plugins.get(point, PluginSet()))
            for point in _PLUGIN_SET_FIELDS}
    args: dict[str, Any] = {}
    raw_args: dict[str, Any] = {}
    for entry in p.plugin_config:
        if entry.decoded:
            args[entry.name] = entry.args
        elif entry.name not in _REMOVED:
            raw_args[entry.name] = entry.raw
    for name in sorted({r.name for s in sets.values() for r in s.enabled}):
        spec = registry.get(name)
        if name not in args and spec is not None and spec.args is not None:
            # setDefaults_KubeSchedulerProfile: the release's default args of a plugin left unconfigured
            args[name] = spec.args.decode(release.default_args.get(name))
    name = p.scheduler_name or ("default-scheduler" if only else "")
    return DefaultedProfile(p, name, sets, args, raw_args)


# ------------------------------------------------------------------------------ stage 3: validate

def validate(cfg: DefaultedConfig, registry: Registry) -> list[str]:
    """ValidateKubeSchedulerConfiguration: every problem, in the order validation.go collects them
    (parallelism, each profile then duplicate names, the common queue sort, and only then the
    global percentage, backoffs and extenders)."""
    errors: list[str] = []
    if cfg.parallelism <= 0:
        errors.append(f"parallelism: Invalid value: {cfg.parallelism}: should be an integer value greater than zero")
    names_seen: set[str] = set()
    for p in cfg.profiles:
        errors += _validate_profile(p, registry)
        if p.scheduler_name in names_seen:
            errors.append(f"{p.decoded.path}.schedulerName: Duplicate value: {{}}")
        names_seen.add(p.scheduler_name)
    errors += _validate_queue_sort(cfg.profiles)
    if not 0 <= cfg.percentage_of_nodes_to_score <= 100:
        errors.append(f"percentageOfNodesToScore: Invalid value: {cfg.percentage_of_nodes_to_score}: "
                      "not in valid range [0-100]")
    if cfg.pod_initial_backoff_seconds <= 0:
        errors.append(f"podInitialBackoffSeconds: Invalid value: {cfg.pod_initial_backoff_seconds}: "
                      "must be greater than 0")
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errors.append(f"podMaxBackoffSeconds: Invalid value: {cfg.pod_max_backoff_seconds}: "
                      "must be greater than or equal to PodInitialBackoffSeconds")
    errors += [f"extenders[{i}]: Unsupported value: kplan does not call scheduler extenders"
               for i in range(cfg.extenders)]
    return errors


def _removed(name: str) -> str:
    return f'"{name}": was invalid in version "v1" (KubeSchedulerConfiguration is version "{API_VERSION}")'


def _validate_profile(p: DefaultedProfile, registry: Registry) -> list[str]:
    path, pct = p.decoded.path, p.decoded.percentage_of_nodes_to_score
    errors: list[str] = []
    if not p.scheduler_name:
        errors.append(f"{path}.schedulerName: Required value")
    if pct is not None and not 0 <= pct <= 100:
        errors.append(f"{path}.percentageOfNodesToScore: Invalid value: {pct}: not in valid range [0-100]")
    for point in POINTS_ORDER:
        user = p.decoded.plugins.get(point, PluginSet())
        errors += [f"{path}.plugins.{point}.enabled[{j}]: Invalid value: {_removed(ref.name)}"
                   for j, ref in enumerate(user.enabled) if ref.name in _REMOVED]
    seen: set[str] = set()
    for entry in p.decoded.plugin_config:
        if entry.name in seen:
            # reported, and the entry is still checked like any other (validatePluginConfig)
            errors.append(f'{entry.path}: Duplicate value: "{entry.name}"')
        seen.add(entry.name)
        if entry.name in _REMOVED:
            errors.append(f"{entry.path}: Invalid value: {_removed(entry.name)}")
            continue
        spec = registry.get(entry.name)
        kind = spec.args if spec is not None else None
        if entry.decoded and kind is not None and kind.validate is not None and not kind.validate_on_build:
            errors += [f"{entry.path}.args.{problem}" for problem in kind.validate(entry.args)]
    return errors


def _validate_queue_sort(profiles: Sequence[DefaultedProfile]) -> list[str]:
    """validateCommonQueueSort: it compares the merged (defaulted) queueSort sets, so an absent
    section and an empty one are the same."""
    errors: list[str] = []
    first = profiles[0].sets["queueSort"]
    if len(first.enabled) > 1:
        errors.append(f"profiles[0].plugins.queueSort.Enabled: Invalid value: {len(first.enabled)}: "
                      "only one queue sort plugin can be enabled")
    for i, p in enumerate(profiles[1:], 1):
        if p.sets["queueSort"] != first:
            errors.append(f"profiles[{i}].plugins.queueSort: Invalid value: {p.decoded.queue_sort_raw!r}: "
                          "must be the same for all profiles")
    return errors


# ------------------------------------------------------------------------------ stage 4: build profiles

def build_profile(p: DefaultedProfile, registry: Registry) -> ProfileSpec:
    """profile.NewMap for one profile: the effective plugin list of every extension point and the
    score weights, and the args validated only when a plugin is built. Raises ConfigError."""
    try:
        points, weights = effective_points(p.sets, registry, p.scheduler_name)
        for name in {n for lst in points.values() for n in lst}:
            spec = registry.get(name)
            kind = spec.args if spec is not None else None
            if kind is not None and kind.validate_on_build and kind.validate is not None:
                problems = kind.validate(p.args.get(name))
                if problems:
                    msg = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
                    raise ConfigError(f'initializing plugin "{name}": {msg}')
    except ConfigError as e:
        raise ConfigError(f"initializing profiles: creating profile for scheduler name {p.scheduler_name}: {e}"
                          ) from None
    return ProfileSpec(p.scheduler_name, p.decoded.percentage_of_nodes_to_score, points, weights,
                       dict(p.args), dict(p.raw_args))


def load_config(doc: Mapping[str, Any] | None, registry: Registry, release: Release | None = None
                ) -> SchedulerConfig:
    """The effective configuration of a KubeSchedulerConfiguration document (None = defaults) for
    ``release`` (None: the default one): decode → defaults → validate → build profiles."""
    cfg = set_defaults(decode(doc, registry), registry, release)
    errors = validate(cfg, registry)
    if errors:
        raise _field_errors(errors)
    return SchedulerConfig(cfg.parallelism, cfg.percentage_of_nodes_to_score, cfg.pod_initial_backoff_seconds,
                           cfg.pod_max_backoff_seconds, [build_profile(p, registry) for p in cfg.profiles],
                           cfg.release)


def _unknown_plugin(iface: str, name: str) -> ConfigError:
    """kube-scheduler's "does not exist", plus where kplan looks for plugins it does not ship."""
    return ConfigError(f'{iface} "{name}" does not exist (it is not built into kplan, and no installed package '
                       'registers it in the "kplan.plugins" entry-point group)')


def effective_points(sets: Mapping[str, PluginSet], registry: Registry, profile_name: str
                     ) -> tuple[dict[str, list[str]], dict[str, int]]:
    """NewFramework's plugin lists and score weights for one profile (reference 1.5.3–1.5.4)."""
    check_point_lists(sets, registry)
    points = expand_multipoint(sets, registry)
    if len(points["queueSort"]) != 1:
        raise ConfigError("only one queue sort plugin required for profile with scheduler name "
                          f'"{profile_name}", but got {len(points["queueSort"])}')
    if not points["bind"]:
        raise ConfigError(f'at least one bind plugin is needed for profile with scheduler name "{profile_name}"')
    return points, score_weights(sets, points, registry)


def check_point_lists(sets: Mapping[str, PluginSet], registry: Registry) -> None:
    """updatePluginList: each plugin enabled at a point exists, implements it, and is there once."""
    for point in POINTS_ORDER:
        seen: set[str] = set()
        for ref in sets[point].enabled:
            if ref.name not in registry:
                raise _unknown_plugin(POINT_IFACE[point], ref.name)
            if not registry.implements(ref.name, point):
                raise ConfigError(f'plugin "{ref.name}" does not extend {POINT_IFACE[point]} plugin')
            if ref.name in seen:
                raise ConfigError(f'plugin "{ref.name}" already registered as "{POINT_IFACE[point]}"')
            seen.add(ref.name)


def expand_multipoint(sets: Mapping[str, PluginSet], registry: Registry) -> dict[str, list[str]]:
    """expandMultiPointPlugins: every point's list, the MultiPoint plugins that implement it
    joined with those enabled there explicitly (which keep their place when they override one)."""
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
            if not registry.implements(ref.name, point) or ref.name in sets[point].disabled:
                continue
            if ref.name in own:
                overriding.add(ref.name)
                continue
            if ref.name in from_mp:
                raise ConfigError(f'plugin "{ref.name}" already registered as "{POINT_IFACE[point]}"')
            from_mp.append(ref.name)
        points[point] = [n for n in own if n in overriding] + from_mp + [n for n in own if n not in overriding]
    return points


def score_weights(sets: Mapping[str, PluginSet], points: Mapping[str, list[str]], registry: Registry
                  ) -> dict[str, int]:
    """getScoreWeights: the Score set's weights first, then MultiPoint's (0 counts as 1), with
    Go's int64 overflow check of the total; a score plugin without a weight gets 1."""
    weights: dict[str, int] = {}
    running = 0
    for ref in sets["score"].enabled + sets["multiPoint"].enabled:
        if not registry.implements(ref.name, "score") or ref.name in weights:
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
    return weights
