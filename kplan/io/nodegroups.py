"""Reads ``--node-groups FILE`` (YAML or JSON; "-" for stdin) into node groups."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from kplan.errors import InputError
from kplan.io.manifests import parse_documents, read_text
from kplan.model.clusterautoscaler import NodeGroup
from kplan.model.parse_clusterautoscaler import parse_node_groups
from kplan.model.raw import RawObject
from kplan.whatif.autoscale import ClusterAutoscalerSettings


def read_node_groups(path: str) -> tuple[NodeGroup, ...]:
    docs = [d for d in parse_documents(read_text(path), path) if d is not None]
    if len(docs) != 1:
        raise InputError(f"{path}: expected one document with a list nodeGroups:, got {len(docs)}")
    return parse_node_groups(docs[0], path)


#: the priority expander's ConfigMap and its key (expander/priority)
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
PRIORITY_KEY = "priorities"


def priority_config(configmaps: Sequence[RawObject]) -> dict[int, list[str]]:
    """The priorities of the ``cluster-autoscaler-priority-expander`` ConfigMap among ``configmaps``
    (any namespace: kplan does not know the autoscaler's), as the priority expander reads them: its
    ``priorities`` key, YAML mapping an integer to a list of regular expressions of node-group names.
    None there: {}. A bad one is one line naming the ConfigMap and the problem (upstream ignores the
    update and logs it)."""
    found = [c for c in configmaps if (c.doc.get("metadata") or {}).get("name") == PRIORITY_CONFIGMAP]
    if not found:
        return {}
    cm = found[0]
    where = f"{cm.source}: ConfigMap {PRIORITY_CONFIGMAP}: data.{PRIORITY_KEY}"
    text = (cm.doc.get("data") or {}).get(PRIORITY_KEY)
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: priority configuration is empty; please provide valid configuration")
    docs = parse_documents(text, where)
    config = docs[0] if docs else None
    if not isinstance(config, Mapping):
        raise InputError(f"{where}: expected a mapping of priority to a list of regular expressions")
    out: dict[int, list[str]] = {}
    for prio, patterns in config.items():
        if isinstance(prio, bool) or not isinstance(prio, int):
            raise InputError(f"{where}: priority {prio!r} is not an integer")
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise InputError(f"{where}: priority {prio}: expected a list of regular expressions")
        for p in patterns:
            try:
                re.compile(p)
            except re.error as e:
                raise InputError(f"{where}: can't compile regexp rule for priority {prio} and rule {p}: {e}") from None
        out[prio] = list(patterns)
    return out


#: the cluster-autoscaler's status ConfigMap (clusterstate/api): data.status
STATUS_CONFIGMAP = "cluster-autoscaler-status"


def status_sizes(configmaps: Sequence[RawObject]) -> dict[str, int]:
    """Each node group's target size as the ``cluster-autoscaler-status`` ConfigMap among
    ``configmaps`` reports it (``data.status``, the YAML of cluster-autoscaler 1.30 and later:
    ``nodeGroups[].name`` and ``nodeGroups[].health.cloudProviderTarget``); {} without one or when its
    status is the older plain text, which kplan does not read."""
    found = [c for c in configmaps if (c.doc.get("metadata") or {}).get("name") == STATUS_CONFIGMAP]
    if not found:
        return {}
    cm = found[0]
    text = (cm.doc.get("data") or {}).get("status")
    if not isinstance(text, str) or not text.lstrip().startswith(("time:", "autoscalerStatus:", "{", "nodeGroups:")):
        return {}
    where = f"{cm.source}: ConfigMap {STATUS_CONFIGMAP}: data.status"
    docs = parse_documents(text, where)
    status = docs[0] if docs else None
    groups = status.get("nodeGroups") if isinstance(status, Mapping) else None
    out: dict[str, int] = {}
    for i, g in enumerate(groups if isinstance(groups, list) else []):
        name = g.get("name") if isinstance(g, Mapping) else None
        health = g.get("health") if isinstance(g, Mapping) else None
        target = health.get("cloudProviderTarget") if isinstance(health, Mapping) else None
        if not isinstance(name, str) or isinstance(target, bool) or not isinstance(target, int) or target < 0:
            raise InputError(f"{where}: nodeGroups[{i}]: expected a name and health.cloudProviderTarget (a count)")
        out[name] = target
    return out


def with_configmaps(settings: ClusterAutoscalerSettings, configmaps: Sequence[RawObject]) -> ClusterAutoscalerSettings:
    """The cluster-autoscaler's settings with what its ConfigMaps among the inputs say: the node
    groups' sizes (status) and, for the priority expander, its priorities."""
    priorities = priority_config(configmaps) if "priority" in settings.expanders else {}
    return dataclasses.replace(settings, priorities=priorities or settings.priorities,
                               status_sizes=status_sizes(configmaps))
