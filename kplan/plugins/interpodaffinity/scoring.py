"""InterPodAffinity PreScore, Score and NormalizeScore
(pkg/scheduler/framework/plugins/interpodaffinity/scoring.go, v1.34.1; reference 4.6).

PreScore builds ``topologyScore[key][value]`` from every running pod P on a node that has the
term's key (so nodes without labels never contribute):
* +w / -w for each preferred affinity / anti-affinity term of the incoming pod that P matches;
* +hardPodAffinityWeight for each required affinity term of P the incoming pod matches (when the
  weight is > 0), +w / -w for each preferred affinity / anti-affinity term of P it matches
  (namespaceSelector against the incoming pod's namespace labels).
Skip when ignorePreferredTermsOfExistingPods is set and the pod has no preferred terms, and when
nothing contributed. Score sums the node's entries (it may be negative); NormalizeScore maps
[min, max] of the scored nodes to [0, 100] with float math, all 0 when max == min.
"""

from __future__ import annotations

import numpy as np

from kplan.cluster.node_table import LabelColumn, NodeTable
from kplan.framework.cycle_state import StateData
from kplan.framework.interfaces import MAX_NODE_SCORE
from kplan.model.objects import Pod
from kplan.plugins.podindex import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    PodIndex,
    PodQuery,
    read_by_value,
    scope_of,
)

PRE_SCORE_KEY = "PreScoreInterPodAffinity"


class PreScoreState(StateData):
    """topologyScore as one int64 array per key over the value codes of the snapshot's label
    column (trailing slot 0 for nodes without the key)."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: dict[str, tuple[np.ndarray, LabelColumn]]) -> None:
        self.topology_score = topology_score

    def clone(self) -> PreScoreState:
        return self


def compute(index: PodIndex, pod: Pod, hard_weight: int, ignore_existing_preferred: bool
            ) -> PreScoreState | None:
    """The state, or None for Skip."""
    has_constraints = bool(pod.affinity_preferred or pod.anti_affinity_preferred)
    if ignore_existing_preferred and not has_constraints:
        return None
    # (weight, topology key, matching pods per value of the key)
    parts: list[tuple[int, str, np.ndarray]] = []
    for sign, terms in ((1, pod.affinity_preferred), (-1, pod.anti_affinity_preferred)):
        for w in terms:
            key = w.term.topology_key
            rows = index.counter(PodQuery((scope_of(w.term, pod.namespace),))).rows
            parts.append((sign * w.weight, key, index.by_value(key, rows)))
    kinds: list[tuple[str, int]] = [(PREFERRED_AFFINITY, 1), (PREFERRED_ANTI_AFFINITY, -1)]
    if hard_weight > 0:
        kinds.insert(0, (REQUIRED_AFFINITY, 1))
    for kind, sign in kinds:
        for c in index.matching_carriers(kind, pod):
            if c.total:
                weight = hard_weight if kind == REQUIRED_AFFINITY else c.weight
                key = c.term.topology_key
                parts.append((sign * weight, key, index.carriers_by_value(key, [c])))
    scores: dict[str, tuple[np.ndarray, LabelColumn]] = {}
    contributed = False
    for weight, key, by_value in parts:
        if not by_value.any():
            continue
        contributed = True  # an entry exists even when the weight is 0
        cur = scores.get(key)
        scores[key] = (weight * by_value if cur is None else cur[0] + weight * by_value, index.table.labels(key))
    if not contributed:
        return None
    return PreScoreState(scores)


def score_rows(s: PreScoreState, table: NodeTable, rows: np.ndarray) -> np.ndarray:
    total = np.zeros(len(rows), dtype=np.int64)
    for key, (arr, col) in s.topology_score.items():
        total += read_by_value(arr, col, table.labels(key), rows)
    return total


def normalize(s: PreScoreState, scores: np.ndarray) -> np.ndarray:
    if not s.topology_score or len(scores) == 0:
        return scores
    lo, hi = int(scores.min()), int(scores.max())
    diff = hi - lo
    if diff <= 0:
        return np.zeros_like(scores)
    # float64(MaxNodeScore) * (float64(s-min) / float64(max-min)), then int64()
    f = float(MAX_NODE_SCORE) * ((scores - lo).astype(np.float64) / float(diff))
    return f.astype(np.int64)

