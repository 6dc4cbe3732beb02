"""Plugin registry: name → how to build it, which points it implements, how its args decode.

The in-tree registry is written out by hand in kplan/plugins/__init__.py; third-party plugins
join it through the ``kplan.plugins`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kplan.framework.interfaces import POINT_METHODS, Handle, Plugin

#: decode(raw args dict or None, path for errors) → typed args (defaults applied); raises ArgsError
ArgsDecoder = Callable[[Mapping[str, Any] | None], Any]
#: validate(args) → list of (field path relative to args, message) problems
ArgsValidator = Callable[[Any], list[str]]


class ArgsError(Exception):
    """A strict-decoding problem in plugin args (unknown field, wrong type)."""


@dataclass(frozen=True)
class PluginSpec:
    name: str
    factory: Callable[[Any, Handle], Plugin]
    points: frozenset[str]
    #: the args kind ("NodeResourcesFitArgs") when the plugin has typed args
    args_kind: str | None = None
    decode_args: ArgsDecoder | None = None
    validate_args: ArgsValidator | None = None
    #: NodeResourcesFit's args are validated only when the plugin is built (reference 1.5.5)
    validate_on_build: bool = False
    in_tree: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)


class Registry:
    def __init__(self, specs: list[PluginSpec] | None = None) -> None:
        self._specs: dict[str, PluginSpec] = {}
        for s in specs or []:
            self.add(s)

    def add(self, spec: PluginSpec) -> None:
        self._specs[spec.name] = spec

    def get(self, name: str) -> PluginSpec | None:
        return self._specs.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return list(self._specs)

    def merged(self, other: Registry) -> Registry:
        out = Registry(list(self._specs.values()))
        for s in other._specs.values():
            out.add(s)
        return out


def points_of(cls: type) -> frozenset[str]:
    """The extension points a plugin class implements, judged by its methods."""
    return frozenset(p for p, m in POINT_METHODS.items() if callable(getattr(cls, m, None)))
