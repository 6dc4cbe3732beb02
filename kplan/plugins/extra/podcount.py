"""PodCount: prefer nodes that run fewer pods. kplan's own plugin; kube-scheduler has none like it.

Upstream v1.34.1 counts pods only in NodeResourcesFit's "Too many pods" filter (reference §11);
no score plugin looks at the number of pods. This one is opt-in and never in the default profile.

Score (no NormalizeScore), for each node, with ``pods`` the pods already bound to the node (the
incoming pod not counted) and ``allowed`` its allocatable ``pods``::

    score = 100 * max(allowed - pods, 0) // allowed      (integer division: rounds down)
    score = 0 when allowed == 0

so 3 of 110 pods scores 97 (97.27 rounded down) and 1 of 3 scores 66 (66.67 rounded down).
Args (``PodCountArgs``): none; any field is rejected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import MAX_NODE_SCORE, ScoreExplainer, ScorePlugin
from kplan.model.objects import Pod
from kplan.plugins.extra.common import check_fields
from kplan.plugins.helper import PluginBase

NAME = "PodCount"
ARGS_KIND = "PodCountArgs"


@dataclass(frozen=True)
class PodCountArgs:
    pass


def decode_args(raw: Mapping[str, Any] | None) -> PodCountArgs:
    check_fields(raw or {}, set())
    return PodCountArgs()


def validate_args(args: PodCountArgs) -> list[str]:
    return []


def pod_count_scores(pods: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    free = np.maximum(allowed - pods, 0)
    return np.where(allowed > 0, MAX_NODE_SCORE * free // np.maximum(allowed, 1), 0).astype(np.int64)


class PodCount(PluginBase, ScorePlugin, ScoreExplainer):
    name = NAME

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        return pod_count_scores(table.pod_count[rows], table.allowed_pods[rows])

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> list[str]:
        scores = self.score(state, pod, table, rows)
        out = []
        for row, s in zip(rows, scores, strict=True):
            pods, allowed = int(table.pod_count[row]), int(table.allowed_pods[row])
            if allowed <= 0:
                out.append(f"0: the node allows no pods (allocatable pods is {allowed})")
            else:
                out.append(f"{s}: {pods} of {allowed} allowed pods running, 100 × {max(allowed - pods, 0)}/{allowed} "
                           "rounded down")
        return out
