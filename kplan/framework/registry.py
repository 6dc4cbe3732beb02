"""Plugin registry (pkg/scheduler/framework/runtime/registry.go): plugin name → factory.

A plugin's extension points are not written down anywhere: they come from its type, as a Go
type satisfies an interface by having its methods (``points_of``). The same rule holds for
kplan's in-tree plugins (kplan/plugins/__init__.py), its own opt-in ones (kplan/plugins/extra)
and third-party plugins found through the ``kplan.plugins`` entry-point group
(kplan/io/plugin_entry_points.py). An entry also names the plugin's args kind, which
upstream's configuration scheme registers beside the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kplan.framework.interfaces import POINT_METHODS, Handle, Plugin

#: decode(raw args dict or None) → typed args (defaults applied); raises ArgsError
ArgsDecoder = Callable[[Mapping[str, Any] | None], Any]
#: validate(args) → the problems found, each "field path relative to args: message"
ArgsValidator = Callable[[Any], list[str]]
#: upstream's PluginFactory: (args, handle) → the plugin
PluginFactory = Callable[[Any, Handle], Plugin]


def in_tree(plugin: object) -> bool:
    """Whether the plugin is one of kplan's own (kplan/plugins/), not an out-of-tree one: the
    framework trusts only those to keep the promises of its protocols (a NormalizeScore that
    leaves its input as it was, a FixedInputScore's signature)."""
    return type(plugin).__module__.startswith("kplan.plugins.")


class ArgsError(Exception):
    """A strict-decoding problem in plugin args (unknown field, wrong type)."""


def points_of(plugin_type: type, rules: Mapping[str, Any] | None = None) -> frozenset[str]:
    """The extension points a plugin type implements: those whose method it has, but for a point
    its ``ruled_points`` (point -> the name of one of its release rules) ties to a rule that the
    release's ``rules`` for the plugin leave off (DynamicResources scores from 1.35)."""
    ruled: Mapping[str, str] = getattr(plugin_type, "ruled_points", {})
    return frozenset(p for p, m in POINT_METHODS.items() if callable(getattr(plugin_type, m, None))
                     and (p not in ruled or bool((rules or {}).get(ruled[p]))))


@dataclass(frozen=True)
class ArgsKind:
    """A plugin's ``<Name>Args`` kind: how its pluginConfig args decode and validate."""

    kind: str
    decode: ArgsDecoder
    validate: ArgsValidator | None = None
    #: NodeResourcesFit's args are validated only when the plugin is built (reference 1.5.5)
    validate_on_build: bool = False


@dataclass(frozen=True)
class PluginSpec:
    """One registry entry: a plugin's name, its type (built as ``plugin_type(args, handle)``) and
    its args kind. Its extension points are ``points_of(plugin_type)``."""

    name: str
    plugin_type: type
    args: ArgsKind | None = None
    #: a plugin of kube-scheduler's own (False: one of kplan's or a third party's)
    upstream: bool = True
    #: where a third-party plugin came from ("" for plugins that ship with kplan)
    origin: str = ""
    #: how to build it when not plain ``plugin_type(args, handle)`` (a third party's, guarded)
    build: PluginFactory | None = None
    #: the plugin's rules at the release (``release.plugin_rules``), which may leave points out
    rules: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def factory(self) -> PluginFactory:
        return self.build if self.build is not None else self.plugin_type

    @property
    def points(self) -> frozenset[str]:
        return points_of(self.plugin_type, self.rules)

    @property
    def in_tree(self) -> bool:
        return not self.origin


class Registry:
    """Plugin name → its entry (framework/runtime.Registry). Not changed once built: a registry
    with more plugins is a new one (``with_plugins``), so every framework built from a registry
    sees the same plugins."""

    def __init__(self, specs: Sequence[PluginSpec] = ()) -> None:
        self._specs: dict[str, PluginSpec] = {s.name: s for s in specs}

    def with_plugins(self, specs: Sequence[PluginSpec]) -> Registry:
        """This registry and ``specs`` (a spec of a name already here replaces its entry)."""
        return Registry([*self._specs.values(), *specs]) if specs else self

    def get(self, name: str) -> PluginSpec | None:
        return self._specs.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return list(self._specs)

    def implements(self, name: str, point: str) -> bool:
        spec = self._specs.get(name)
        return spec is not None and point in spec.points
