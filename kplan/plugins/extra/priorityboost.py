"""PriorityBoost: give critical pods the nodes with the most headroom. kplan's own plugin.

kube-scheduler v1.34.1 uses a pod's priority only for queue order and preemption; no score plugin
looks at it (reference §4, §8). This opt-in plugin scores only pods whose priority is at least
``minPriority``; for every other pod PreScore returns Skip, so it adds 0 to every node.

Score (no NormalizeScore): the mean free percentage of cpu and memory left on the node after the
pod is placed, counted with real requests (those NodeResourcesFit's filter adds up, not the
non-zero defaults its LeastAllocated score uses). For r in (cpu, memory), skipping a resource the
node does not advertise (allocatable 0)::

    used_r = requested on the node + the pod's request
    free_r = 0 if used_r > allocatable_r else 100 * (allocatable_r - used_r) // allocatable_r
    score  = (sum of free_r) // (number of resources counted)       0 when none is counted

Both divisions round down. Args (``PriorityBoostArgs``):
  ``minPriority``  int32, default 1000000000 (the highest user-definable PriorityClass value, so by
                   default only pods of that class and of the system-* classes are boosted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.cluster.resources import CPU, MEMORY
from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import MAX_NODE_SCORE, PreScorePlugin, ScoreExplainer, ScorePlugin
from kplan.framework.status import OK, Status, skip
from kplan.model.objects import Pod
from kplan.plugins.extra.common import as_int, check_fields
from kplan.plugins.helper import PluginBase

NAME = "PriorityBoost"
ARGS_KIND = "PriorityBoostArgs"
DEFAULT_MIN_PRIORITY = 1_000_000_000
_RESOURCES = (("cpu", CPU), ("memory", MEMORY))


@dataclass(frozen=True)
class PriorityBoostArgs:
    min_priority: int = DEFAULT_MIN_PRIORITY


def decode_args(raw: Mapping[str, Any] | None) -> PriorityBoostArgs:
    raw = raw or {}
    check_fields(raw, {"minPriority"})
    if raw.get("minPriority") is None:
        return PriorityBoostArgs()
    return PriorityBoostArgs(as_int(raw["minPriority"], "minPriority"))


def validate_args(args: PriorityBoostArgs) -> list[str]:
    if not -(2**31) <= args.min_priority < 2**31:
        return [f"minPriority: Invalid value: {args.min_priority}: must be a 32-bit integer"]
    return []


def free_percentages(table: NodeTable, rows: np.ndarray, pod: Pod) -> tuple[np.ndarray, np.ndarray]:
    """(free percentage per resource [2, n], counted mask [2, n]) after placing the pod."""
    free = np.zeros((len(_RESOURCES), len(rows)), dtype=np.int64)
    counted = np.zeros((len(_RESOURCES), len(rows)), dtype=bool)
    for i, (name, col) in enumerate(_RESOURCES):
        alloc = table.alloc[rows, col]
        used = table.requested[rows, col] + pod.requests.get(name, 0)
        live = alloc > 0
        pct = MAX_NODE_SCORE * (alloc - used) // np.where(live, alloc, 1)
        free[i] = np.where(live & (used <= alloc), pct, 0)
        counted[i] = live
    return free, counted


def boost_scores(free: np.ndarray, counted: np.ndarray) -> np.ndarray:
    n = counted.sum(axis=0)
    total = (free * counted).sum(axis=0)
    return np.where(n > 0, total // np.maximum(n, 1), 0).astype(np.int64)


class PriorityBoost(PluginBase, PreScorePlugin, ScorePlugin, ScoreExplainer):
    name = NAME

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        if pod.priority < self.args.min_priority:
            return skip(NAME)
        return OK

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        if pod.priority < self.args.min_priority:  # PreScore does not run when enabled at score only
            return np.zeros(len(rows), dtype=np.int64)
        return boost_scores(*free_percentages(table, rows, pod))

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> list[str]:
        if pod.priority < self.args.min_priority:
            return [f"0: priority {pod.priority} is below minPriority {self.args.min_priority} (skipped)"] * len(rows)
        free, counted = free_percentages(table, rows, pod)
        scores = boost_scores(free, counted)
        out = []
        for k in range(len(rows)):
            parts = [f"{name} {int(free[i, k])}% free" for i, (name, _) in enumerate(_RESOURCES) if counted[i, k]]
            detail = ", ".join(parts) if parts else "no cpu or memory allocatable"
            out.append(f"{int(scores[k])}: {detail} after placing the pod (mean, rounded down)")
        return out
