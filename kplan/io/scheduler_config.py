"""Reading a KubeSchedulerConfiguration file."""

from __future__ import annotations

from kplan.errors import ConfigError, InputError
from kplan.framework.config import SchedulerConfig, load_config
from kplan.framework.registry import Registry
from kplan.io.manifests import parse_documents, read_text


def read_scheduler_config(path: str | None, registry: Registry) -> SchedulerConfig:
    if path is None:
        return load_config(None, registry)
    docs = [d for d in parse_documents(read_text(path), path) if d is not None]
    if len(docs) != 1:
        raise InputError(f"{path}: expected one KubeSchedulerConfiguration document, found {len(docs)}")
    try:
        return load_config(docs[0], registry)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
