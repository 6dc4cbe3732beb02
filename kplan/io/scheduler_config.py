"""Reading a KubeSchedulerConfiguration file."""

from __future__ import annotations

from kplan.errors import ConfigError, InputError
from kplan.framework.config import SchedulerConfig, load_config
from kplan.framework.registry import Registry
from kplan.framework.release import Release
from kplan.io.manifests import parse_documents, read_text
from kplan.io.plugin_entry_points import add_entry_point_plugins


def read_scheduler_config(path: str | None, registry: Registry, release: Release | None = None) -> SchedulerConfig:
    """The effective configuration of a file (None = defaults) for ``release`` (None: the default).

    Third-party plugins the file names are added to ``registry`` in place (``kplan.plugins``
    entry points), so the caller builds its frameworks from the same registry.
    """
    if path is None:
        return load_config(None, registry, release)
    docs = [d for d in parse_documents(read_text(path), path) if d is not None]
    if len(docs) != 1:
        raise InputError(f"{path}: expected one KubeSchedulerConfiguration document, found {len(docs)}")
    try:
        add_entry_point_plugins(docs[0], registry)  # a no-op unless the file names an unknown plugin
        return load_config(docs[0], registry, release)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
