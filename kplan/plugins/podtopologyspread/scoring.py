"""PodTopologySpread PreScore, Score and NormalizeScore
(pkg/scheduler/framework/plugins/podtopologyspread/scoring.go, v1.34.1; reference 4.7).

Constraints: the pod's ScheduleAnyway ones, or (a pod without any constraints) the default ones
with the default selector. When the constraints are the pod's own or the defaults come from a
``List`` defaulting, nodes must carry every key (``requireAllTopologies``): feasible nodes that
do not are "ignored" (score 0). For a key other than the hostname, the domains are the values of
the key on the feasible, non-ignored nodes (a missing label is the value "" when keys are not all
required) and each counts the matching pods (same namespace, not terminating, selector matches)
on every node of the snapshot that is in such a domain, has all keys if required and passes the
constraint's inclusion policies. The hostname key counts the node's own matching pods.

    weight_i = ln(#domains_i + 2)          (hostname: #feasible - #ignored)
    score(n) = round( sum over constraints whose key n has of count_i(n) * weight_i + maxSkew_i - 1 )
    normalise: ignored → 0; maxScore == 0 → 100; else 100 * (max + min - s) / max   (integers)

Deviation: ln is the platform's correctly rounded log rather than Go's own implementation; they
can differ in the last bit, which changes a rounded score only when the sum lies within that bit
of a half.
"""

from __future__ import annotations

import math

import numpy as np

from kplan.cluster.node_table import LabelColumn, NodeTable
from kplan.framework.cycle_state import StateData
from kplan.framework.interfaces import MAX_NODE_SCORE
from kplan.model.objects import Pod, SpreadConstraint
from kplan.plugins.helper import go_round
from kplan.plugins.podindex import PodIndex
from kplan.plugins.podtopologyspread.common import HOSTNAME, InclusionMasks, has_every_key
from kplan.plugins.podtopologyspread.filtering import MatchingQuery

PRE_SCORE_KEY = "PreScorePodTopologySpread"


class ConstraintScore:
    __slots__ = ("constraint", "weight", "col", "node_counts", "domain_scores")

    def __init__(self, constraint: SpreadConstraint, weight: float, col: LabelColumn,
                 node_counts: np.ndarray | None, domain_scores: np.ndarray | None) -> None:
        self.constraint, self.weight, self.col = constraint, weight, col
        #: per snapshot row, its own matching pods (hostname key); None when the selector counts nothing
        self.node_counts = node_counts
        #: per value code of ``col`` (non-hostname keys), the constraint's part of a node's score,
        #: count * weight + maxSkew - 1, and a trailing 0 that code -1 (no label: no part) picks
        self.domain_scores = domain_scores


class PreScoreState(StateData):
    __slots__ = ("scores", "ignored", "table")

    def __init__(self, scores: list[ConstraintScore], ignored: np.ndarray, table: NodeTable) -> None:
        self.scores, self.ignored, self.table = scores, ignored, table

    def clone(self) -> PreScoreState:
        return self


def compute(index: PodIndex, masks: InclusionMasks, pod: Pod, constraints: tuple[SpreadConstraint, ...],
            require_all: bool, rows: np.ndarray, query_of: MatchingQuery) -> PreScoreState:
    table = index.table
    has_all: np.ndarray | None = None
    if require_all:
        has_all = has_every_key(table, constraints)
        ignored = ~has_all[rows]
        kept = rows[~ignored]
    else:
        ignored, kept = np.zeros(len(rows), dtype=bool), rows
    out = []
    for c in constraints:
        col = table.labels(c.topology_key)
        query = query_of(pod, c)
        per_row = index.counter(query).rows if query is not None else None
        if c.topology_key == HOSTNAME:
            out.append(ConstraintScore(c, math.log(len(kept) + 2), col, per_row, None))
            continue
        # a node without the key is in domain "" (only possible when keys are not all required)
        v = len(col.values)
        domain_of = col.domains
        present = np.bincount(domain_of[kept], minlength=v + 1) > 0
        weight = math.log(int(present.sum()) + 2)
        counted = present[domain_of]
        if has_all is not None:
            counted &= has_all
        policies = masks.eligible(table, pod, c)
        if policies is not None:
            counted &= policies
        if per_row is None:
            counts = np.zeros(v + 1, dtype=np.int64)
        else:
            counts = np.bincount(domain_of[counted], weights=per_row[counted], minlength=v + 1).astype(np.int64)
        # a node's part depends only on its domain: computed per domain, once, and read per node
        # by its label's code (a labelled node's domain is its code)
        domain_scores = np.append(counts.astype(np.float64) * weight + float(c.max_skew - 1), 0.0)
        out.append(ConstraintScore(c, weight, col, None, domain_scores))
    return PreScoreState(out, ignored, table)


def score_rows(s: PreScoreState, table: NodeTable, rows: np.ndarray) -> np.ndarray:
    # the counts are per row of the snapshot's table, the only table scored
    src = rows if table is s.table else table.source_rows[rows]
    total = np.zeros(len(rows), dtype=np.float64)
    for cs in s.scores:
        if cs.domain_scores is not None:
            total += cs.domain_scores[cs.col.codes[src]]
            continue
        c = cs.constraint
        cnt = cs.node_counts[src] if cs.node_counts is not None else np.zeros(len(rows), dtype=np.int64)
        part = cnt.astype(np.float64) * cs.weight + float(c.max_skew - 1)
        total += part if cs.col.all_present else np.where(cs.col.present[src], part, 0.0)
    out = go_round(total).astype(np.int64)
    if len(s.ignored) == len(rows):
        out[s.ignored] = 0
    return out


def normalize(s: PreScoreState, scores: np.ndarray) -> np.ndarray:
    ignored = s.ignored if len(s.ignored) == len(scores) else np.zeros(len(scores), dtype=bool)
    if len(scores) and not ignored.any():  # the system defaults ignore no node: whole arrays
        lo, hi = int(scores.min()), max(int(scores.max()), 0)
        if hi == 0:
            return np.full_like(scores, MAX_NODE_SCORE)
        return np.asarray(MAX_NODE_SCORE * (hi + lo - scores) // hi, dtype=scores.dtype)
    out = np.zeros_like(scores)
    valid = ~ignored
    if not valid.any():
        return out
    lo = int(scores[valid].min())
    hi = max(int(scores[valid].max()), 0)
    if hi == 0:
        out[valid] = MAX_NODE_SCORE
    else:
        out[valid] = MAX_NODE_SCORE * (hi + lo - scores[valid]) // hi
    return out
