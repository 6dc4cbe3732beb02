"""Reading a KubeSchedulerConfiguration file into the scheduler set-up of a run."""

from __future__ import annotations

from kplan.errors import ConfigError, InputError
from kplan.framework.release import Release
from kplan.io.manifests import parse_documents, read_text
from kplan.io.plugin_entry_points import entry_point_plugins
from kplan.plugins import in_tree_registry
from kplan.scheduler.setup import SchedulerSetup


def scheduler_setup(path: str | None, release: Release | None = None) -> SchedulerSetup:
    """The scheduler set-up of a configuration file (None: the defaults) at ``release`` (None: the
    default one): the release's registry, joined by the third-party plugins (``kplan.plugins``
    entry points) the file names that kplan does not have, and the effective configuration."""
    if path is None:
        return SchedulerSetup.of(release)
    docs = [d for d in parse_documents(read_text(path), path) if d is not None]
    if len(docs) != 1:
        raise InputError(f"{path}: expected one KubeSchedulerConfiguration document, found {len(docs)}")
    try:
        # a no-op unless the file names a plugin the release's registry lacks
        plugins = entry_point_plugins(docs[0], in_tree_registry(release))
        return SchedulerSetup.of(release, docs[0], plugins)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
