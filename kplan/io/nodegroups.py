"""Reads ``--node-groups FILE`` (YAML or JSON; "-" for stdin) into node groups."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kplan.errors import InputError
from kplan.io.manifests import parse_documents, read_text
from kplan.model.clusterautoscaler import NodeGroup
from kplan.model.parse_clusterautoscaler import parse_node_groups
from kplan.model.raw import RawObject


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
