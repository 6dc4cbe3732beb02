"""Third-party plugins, found through the ``kplan.plugins`` entry-point group (importlib.metadata).

An installed distribution declares, in its pyproject.toml::

    [project.entry-points."kplan.plugins"]
    LabelPreference = "kplan_example_plugin:LabelPreference"

The entry point's name is the plugin's name in a KubeSchedulerConfiguration. It resolves to one of:
  * a plugin class: built as ``cls(args, handle)``; optional class attributes ``decode_args`` /
    ``validate_args`` (static functions, as the in-tree plugins' module functions) and
    ``args_kind``; without ``decode_args`` the plugin receives its raw ``args`` mapping (or None);
  * a ``PluginSpec`` (``kplan.framework.registry``: the name, the plugin class and an ``ArgsKind``),
    or a function without parameters returning one.
Either way the plugin's extension points are the methods its class has
(``kplan.framework.registry.points_of``), the rule kplan's own plugins follow too.
Third-party plugins may implement PreFilter (with AddPod/RemovePod), Filter, PreScore, Score and
NormalizeScore; other points are refused. A name that is in kplan's own registry always means
kplan's plugin: entry points are consulted only for names it does not know.

Discovery is lazy: it runs only when a configuration names a plugin kplan does not know, so the
default path never scans the installed distributions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from kplan.errors import ConfigError, KplanError
from kplan.framework.interfaces import POINT_IFACE
from kplan.framework.registry import ArgsError, ArgsKind, PluginSpec, Registry

GROUP = "kplan.plugins"
#: the extension points kplan runs for third-party plugins
CUSTOM_POINTS = frozenset({"preFilter", "filter", "preScore", "score"})
_POINT_NAMES = ", ".join(POINT_IFACE[p].removesuffix("Plugin") for p in ("preFilter", "filter", "preScore", "score"))
_SET_FIELDS = ("multiPoint", "preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
               "postBind", "permit", "preEnqueue", "queueSort")


def configured_plugin_names(doc: Any) -> set[str]:
    """Every plugin name a KubeSchedulerConfiguration enables or configures (malformed parts skipped:
    the configuration loader reports them)."""
    names: set[str] = set()
    if not isinstance(doc, Mapping):
        return names
    profiles = doc.get("profiles")
    for profile in profiles if isinstance(profiles, list) else []:
        if not isinstance(profile, Mapping):
            continue
        plugins = profile.get("plugins")
        for point in _SET_FIELDS:
            pset = plugins.get(point) if isinstance(plugins, Mapping) else None
            enabled = pset.get("enabled") if isinstance(pset, Mapping) else None
            for ref in enabled if isinstance(enabled, list) else []:
                if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
                    names.add(ref["name"])
        config = profile.get("pluginConfig")
        for entry in config if isinstance(config, list) else []:
            if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                names.add(entry["name"])
    return names


def entry_point_plugins(doc: Any, registry: Registry) -> list[PluginSpec]:
    """The installed plugins that ``doc`` names and ``registry`` lacks, by name (they join the
    registry in kplan.scheduler.setup.SchedulerSetup.of). Names no entry point provides are left
    for the configuration loader, which reports them in kube-scheduler's words."""
    wanted = {n for n in configured_plugin_names(doc) if n and n not in registry}
    if not wanted:
        return []
    from importlib.metadata import entry_points  # only now: scanning distributions costs time

    found: dict[str, Any] = {}
    for ep in entry_points(group=GROUP):
        if ep.name not in wanted:
            continue
        seen = found.get(ep.name)
        if seen is not None and seen.value != ep.value:
            raise ConfigError(f'plugin "{ep.name}" is provided by two entry points of group "{GROUP}": '
                              f'"{seen.value}" and "{ep.value}"; uninstall one of them')
        found[ep.name] = ep
    return [spec_from_entry_point(found[name]) for name in sorted(found)]


def spec_from_entry_point(ep: Any) -> PluginSpec:
    origin = f'entry point "{ep.name} = {ep.value}" (group "{GROUP}")'
    try:
        obj = ep.load()
    except Exception as e:  # any import-time failure of someone else's package: one line, no traceback
        raise ConfigError(f'plugin "{ep.name}": loading {origin} failed: {type(e).__name__}: {e}') from None
    return plugin_spec_of(ep.name, obj, origin)


def plugin_spec_of(name: str, obj: Any, origin: str) -> PluginSpec:
    """The registry entry of a third-party plugin object (class, PluginSpec or spec factory)."""
    if isinstance(obj, PluginSpec):
        spec = obj
    elif isinstance(obj, type):
        spec = _spec_of_class(name, obj)
    elif callable(obj):
        try:
            spec = obj()
        except Exception as e:
            raise ConfigError(f'plugin "{name}": {origin}: calling it failed: {type(e).__name__}: {e}') from None
        if not isinstance(spec, PluginSpec):
            raise ConfigError(f'plugin "{name}": {origin} returned {type(spec).__name__}, not a PluginSpec')
    else:
        raise ConfigError(f'plugin "{name}": {origin} resolves to {type(obj).__name__}, '
                          "not a plugin class or a PluginSpec")
    if spec.name != name:
        raise ConfigError(f'plugin "{name}": {origin} provides a plugin named "{spec.name}"; '
                          "the entry point must be named after the plugin")
    unsupported = sorted(spec.points - CUSTOM_POINTS)
    if unsupported:
        raise ConfigError(f'plugin "{name}": {origin} implements {", ".join(POINT_IFACE[p] for p in unsupported)}; '
                          f"kplan runs third-party plugins only at {_POINT_NAMES}")
    if not spec.points:
        raise ConfigError(f'plugin "{name}": {origin} implements none of {_POINT_NAMES}')
    args = spec.args
    if args is not None:
        args = ArgsKind(args.kind or f"{name}Args", _guarded_decode(args.decode),
                        _guarded_validate(args.validate) if args.validate else None)
    return dataclasses.replace(spec, build=_guarded_factory(name, spec.factory), args=args, upstream=False,
                               origin=origin)


def _spec_of_class(name: str, cls: type) -> PluginSpec:
    own = getattr(cls, "name", None)
    if own not in (None, "", name):
        raise ConfigError(f'plugin "{name}": class {cls.__module__}.{cls.__qualname__} is named "{own}"; '
                          "the entry point must be named after the plugin")
    decode = getattr(cls, "decode_args", None)
    args = None
    if decode is not None:
        args = ArgsKind(getattr(cls, "args_kind", None) or f"{name}Args", decode, getattr(cls, "validate_args", None))
    return PluginSpec(name, cls, args)


def _guarded_factory(name: str, factory: Any) -> Any:
    def build(args: Any, handle: Any) -> Any:
        try:
            plugin = factory(args, handle)
        except KplanError:
            raise
        except Exception as e:  # a constructor rejecting its args: upstream's "initializing plugin" error
            raise ConfigError(f'initializing plugin "{name}": {type(e).__name__}: {e}') from None
        if getattr(plugin, "name", "") in (None, ""):
            plugin.name = name  # plugins without a name attribute still need one in statuses
        elif plugin.name != name:
            raise ConfigError(f'initializing plugin "{name}": the plugin calls itself "{plugin.name}"')
        if not hasattr(plugin, "events_to_register"):
            # upstream registers every cluster event for a plugin without EnqueueExtensions, so a pod
            # it rejected is retried after any change
            plugin.events_to_register = _every_event
        return plugin
    return build


def _every_event() -> list[tuple[str, None]]:
    from kplan.framework import events

    return [(v, None) for k, v in sorted(vars(events).items()) if k.isupper() and isinstance(v, str)]


def _guarded_decode(decode: Any) -> Any:
    def run(raw: Mapping[str, Any] | None) -> Any:
        try:
            return decode(raw)
        except ArgsError:
            raise
        except Exception as e:  # reported like a strict-decoding error, with the plugin's own words
            raise ArgsError(f"{type(e).__name__}: {e}") from None
    return run


def _guarded_validate(validate: Any) -> Any:
    def run(args: Any) -> list[str]:
        try:
            return list(validate(args))
        except Exception as e:
            return [f"{type(e).__name__}: {e}"]
    return run
