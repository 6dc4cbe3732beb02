"""ResourceLimits: prefer nodes whose allocatable covers the pod's cpu or memory *limit*.

kplan's own plugin, not part of kube-scheduler v1.34.1. It brings back the behaviour of the
NodeResourceLimits score plugin that kube-scheduler had until v1.18
(pkg/scheduler/framework/plugins/noderesources/resource_limits.go, behind the alpha gate
ResourceLimitsPriorityFunction since v1.9 as ResourceLimitsPriorityMap; removed in v1.19,
kubernetes/kubernetes#91883). Upstream scored a node 1 when its allocatable cpu or memory
satisfied the pod's limit and 0 otherwise, as a tie-breaker; kplan maps that to its 0..100 scale:

    satisfies(limit, allocatable) = limit != 0 and allocatable != 0 and limit <= allocatable
    score = 100 if satisfies(cpu limit, allocatable cpu) or satisfies(memory limit, allocatable memory)
            else 0

Allocatable is the node's whole allocatable, not what is left free, as upstream compared it.
No NormalizeScore. Deviations, both deliberate: PreScore returns Skip when the pod has neither a
cpu nor a memory limit (upstream scored such pods 0 on every node, which adds the same 0 to every
total); the pod's limits are ``Pod.limits`` (containers summed, init and sidecar containers as for
requests, pod-level limits honoured), where the v1.18 code summed containers and took the max with
each init container, before sidecars and pod-level resources existed.
Args (``ResourceLimitsArgs``): none; any field is rejected.
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
from kplan.plugins.extra.common import check_fields
from kplan.plugins.helper import PluginBase

NAME = "ResourceLimits"
ARGS_KIND = "ResourceLimitsArgs"


@dataclass(frozen=True)
class ResourceLimitsArgs:
    pass


def decode_args(raw: Mapping[str, Any] | None) -> ResourceLimitsArgs:
    check_fields(raw or {}, set())
    return ResourceLimitsArgs()


def validate_args(args: ResourceLimitsArgs) -> list[str]:
    return []


def satisfies(limit: int, allocatable: np.ndarray) -> np.ndarray:
    """computeScore of the v1.18 plugin, as a mask."""
    if limit == 0:
        return np.zeros(len(allocatable), dtype=bool)
    return np.asarray((allocatable != 0) & (limit <= allocatable), dtype=bool)


class ResourceLimits(PluginBase, PreScorePlugin, ScorePlugin, ScoreExplainer):
    name = NAME

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        if not pod.limits.get("cpu") and not pod.limits.get("memory"):
            return skip(NAME)
        return OK

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        ok = (satisfies(pod.limits.get("cpu", 0), table.alloc[rows, CPU])
              | satisfies(pod.limits.get("memory", 0), table.alloc[rows, MEMORY]))
        return np.where(ok, MAX_NODE_SCORE, 0).astype(np.int64)

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> list[str]:
        cpu, mem = pod.limits.get("cpu", 0), pod.limits.get("memory", 0)
        if not cpu and not mem:
            return ["0: the pod sets no cpu or memory limit (skipped)"] * len(rows)
        out = []
        for row in rows:
            a_cpu, a_mem = int(table.alloc[row, CPU]), int(table.alloc[row, MEMORY])
            parts = []
            if cpu:
                parts.append(f"cpu limit {cpu}m {'<=' if 0 < cpu <= a_cpu else '>'} allocatable {a_cpu}m")
            if mem:
                parts.append(f"memory limit {mem} {'<=' if 0 < mem <= a_mem else '>'} allocatable {a_mem}")
            fits = (cpu and 0 < cpu <= a_cpu) or (mem and 0 < mem <= a_mem)
            out.append(f"{MAX_NODE_SCORE if fits else 0}: " + ", ".join(parts))
        return out
