"""PodDisruptionBudget allowance (pkg/controller/disruption/disruption.go).

``status.disruptionsAllowed`` is used when the object has a status. Otherwise it is computed as
the disruption controller would from the running pods it selects: expected = matching pods,
healthy = matching pods that are not terminating; desired from minAvailable or maxUnavailable
(percentages rounded up against expected); allowed = max(0, healthy - desired).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from kplan.model.objects import Pod, PodDisruptionBudget
from kplan.model.selectors import selector_matches


def pdb_key(pdb: PodDisruptionBudget) -> tuple[str, str]:
    """A budget's stable key (namespace, name): budgets are looked up by it across the copies a
    what-if makes, never by object identity."""
    return (pdb.namespace, pdb.name)


def _scaled(v: int | str, total: int) -> int:
    if isinstance(v, str) and v.endswith("%"):
        return math.ceil(int(v[:-1]) * total / 100)
    return int(v)


def disruptions_allowed(pdb: PodDisruptionBudget, running: Iterable[Pod]) -> int:
    if pdb.disruptions_allowed is not None:
        return pdb.disruptions_allowed
    if pdb.selector is None or pdb.selector.is_empty:
        return 0
    pods = [p for p in running if p.namespace == pdb.namespace and selector_matches(pdb.selector, p.labels)]
    expected = len(pods)
    healthy = sum(1 for p in pods if not p.terminating)
    if pdb.max_unavailable is not None:
        desired = expected - _scaled(pdb.max_unavailable, expected)
    elif pdb.min_available is not None:
        desired = _scaled(pdb.min_available, expected)
    else:
        desired = 0
    return max(0, healthy - desired)
