"""The priority expander (cluster-autoscaler expander/priority/priority.go): the configuration maps a
priority (an integer) to regular expressions of node-group names, as the ConfigMap
``cluster-autoscaler-priority-expander`` (namespace of the autoscaler, key ``priorities``) holds it.
An option's priority is the highest of those whose expressions match its group's name anywhere
(Go's regexp FindStringIndex: a search, not a full match); the options of the highest priority are
kept. When no option matches, all are kept (upstream falls back to the random choice among them).
Node groups' ``priority`` in ``--node-groups`` is the same thing given per group.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kplan.autoscaler.clusterautoscaler.expander import Option

#: the ConfigMap the priority expander reads, and its key
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
PRIORITY_KEY = "priorities"


def group_priority(name: str, priorities: Mapping[int, Sequence[re.Pattern[str]]]) -> int | None:
    matched = [prio for prio, patterns in priorities.items() if any(p.search(name) for p in patterns)]
    return max(matched) if matched else None


def highest_priority(options: Sequence[Option], priorities: Mapping[int, Sequence[re.Pattern[str]]]) -> list[Option]:
    best: list[Option] = []
    top: int | None = None
    for option in options:
        prio = group_priority(option.node_group, priorities)
        if prio is None:
            continue
        if top is None or prio > top:
            top, best = prio, [option]
        elif prio == top:
            best.append(option)
    return best if best else list(options)
