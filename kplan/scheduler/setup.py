"""The scheduler a run is made with: its release, its plugin registry and its configuration, built
once into one frozen value.

``SchedulerSetup.of`` is the one place they are put together: the release's in-tree registry
(kplan.plugins.in_tree_registry, kplan's own opt-in plugins included), the third-party plugins the
configuration names (found by kplan.io.scheduler_config, which reads the file, and handed here),
and the configuration decoded against that registry at that release. The Planner and the
Simulation take this value; nothing changes it afterwards (a registry with more plugins is a new
registry, Registry.with_plugins).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kplan.framework.config import SchedulerConfig, load_config
from kplan.framework.registry import PluginSpec, Registry
from kplan.framework.release import Release, default_release
from kplan.plugins import in_tree_registry


@dataclass(frozen=True)
class SchedulerSetup:
    """The release, the plugin registry and the effective configuration of a run (the
    configuration carries the same release, as upstream's profiles carry ``feature.Features``)."""

    release: Release
    registry: Registry
    config: SchedulerConfig

    @classmethod
    def of(cls, release: Release | None = None, document: Mapping[str, Any] | None = None,
           plugins: Sequence[PluginSpec] = ()) -> SchedulerSetup:
        """The setup of ``release`` (None: the default one) under the KubeSchedulerConfiguration
        ``document`` (None: the defaults), with the third-party ``plugins`` it names joining the
        release's registry. Raises ConfigError for a configuration the release refuses."""
        release = release or default_release()
        registry = in_tree_registry(release).with_plugins(plugins)
        return cls(release, registry, load_config(document, registry, release))

    def __deepcopy__(self, memo: dict[int, Any]) -> SchedulerSetup:
        """Itself: nothing changes a set-up, so a forked run (Simulation.without) shares it."""
        return self
