"""InterPodAffinity PreFilter, Filter and AddPod/RemovePod
(pkg/scheduler/framework/plugins/interpodaffinity/filtering.go, v1.34.1; reference 3.7).

PreFilter counts, per (topology key, value):
* ``affinity``: running pods that match ALL of the incoming pod's required affinity terms, once
  per term, at the value of the term's key on the pod's node;
* ``anti``: running pods that match each required anti-affinity term of the incoming pod;
* ``existing``: the required anti-affinity terms of running pods that match the incoming pod
  (namespaceSelector evaluated against the incoming pod's namespace labels).
Terminating pods count. Skip when ``existing`` is empty and the pod has no required terms.

Filter, in this order: a node without the key of some required affinity term fails, and one whose
domains do not all hold a matching pod fails unless ``affinity`` is empty and the pod matches all
its own terms (the first pod of a self-affine group) — U&U "node(s) didn't match pod affinity
rules"; a node in a domain with a pod matching an anti-affinity term fails — "node(s) didn't match
pod anti-affinity rules"; a node with a (key, value) label pair of a positive ``existing`` count
fails — "node(s) didn't satisfy existing pods anti-affinity rules" (both Unschedulable).

The counts come from the incremental pod index (podindex.py) as arrays over the label value
codes of the snapshot's table; AddPod/RemovePod on forks record their changes on top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from kplan.cluster.node_table import LabelColumn, NodeTable
from kplan.framework.cycle_state import StateData
from kplan.framework.status import Code, Verdicts, reason_id
from kplan.model.objects import Pod
from kplan.plugins.podindex import (
    REQUIRED_ANTI_AFFINITY,
    Carrier,
    PodIndex,
    PodQuery,
    TermScope,
    read_by_value,
    scope_of,
)

PRE_FILTER_KEY = "PreFilterInterPodAffinity"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
_AFFINITY_ID = reason_id(REASON_AFFINITY)
_ANTI_ID = reason_id(REASON_ANTI_AFFINITY)
_EXISTING_ID = reason_id(REASON_EXISTING_ANTI_AFFINITY)


class PairCounts:
    """topologyToMatchedTermCount: a count per (topology key, value).

    ``base`` holds, per key, an int64 array over the value codes of the snapshot's label column
    (one extra trailing slot that stays 0, so code -1 — label absent — reads 0). ``delta`` holds
    what AddPod/RemovePod changed on a fork, by value; clones share ``base``.
    """

    __slots__ = ("base", "delta", "_nonzero")

    def __init__(self) -> None:
        self.base: dict[str, tuple[np.ndarray, LabelColumn]] = {}
        self.delta: dict[str, dict[str, int]] = {}
        self._nonzero = 0

    def add_array(self, key: str, col: LabelColumn, arr: np.ndarray) -> None:
        """Add per-value counts (built in PreFilter, before any clone)."""
        cur = self.base.get(key)
        if cur is None:
            self.base[key] = (arr.copy(), col)
        else:
            cur[0][:] += arr
        self._nonzero = sum(int(np.count_nonzero(a)) for a, _ in self.base.values())

    def _base_value(self, key: str, value: str) -> int:
        cur = self.base.get(key)
        if cur is None:
            return 0
        code = cur[1].code_of.get(value)
        return 0 if code is None else int(cur[0][code])

    def add(self, key: str, value: str, d: int) -> None:
        """m[pair] += d (the entry disappears when it reaches 0)."""
        per_key = self.delta.setdefault(key, {})
        base = self._base_value(key, value)
        old = base + per_key.get(value, 0)
        per_key[value] = per_key.get(value, 0) + d
        new = old + d
        self._nonzero += (new != 0) - (old != 0)

    @property
    def empty(self) -> bool:
        """len(m) == 0."""
        return self._nonzero == 0

    def keys(self) -> set[str]:
        return set(self.base) | {k for k, d in self.delta.items() if any(d.values())}

    def counts(self, table: NodeTable, key: str, rows: np.ndarray) -> np.ndarray:
        """The count of each row's (key, value) pair; 0 where the row lacks the label."""
        col = table.labels(key)
        cur = self.base.get(key)
        out = np.zeros(len(rows), dtype=np.int64) if cur is None else read_by_value(cur[0], cur[1], col, rows)
        changes = self.delta.get(key)
        if changes:
            codes = col.codes[rows]
            for value, d in changes.items():
                code = col.code_of.get(value)
                if d and code is not None:
                    out = out + np.where(codes == code, d, 0)
        return out

    def clone(self) -> PairCounts:
        out = PairCounts()
        out.base = self.base
        out.delta = {k: dict(v) for k, v in self.delta.items()}
        out._nonzero = self._nonzero
        return out


class PreFilterState(StateData):
    """What Filter and AddPod/RemovePod read (preFilterState of filtering.go)."""

    __slots__ = ("affinity_keys", "anti_scopes", "affinity_query", "self_match", "ns_labels",
                 "affinity", "anti", "existing")

    def __init__(self, pod: Pod, ns_labels: Mapping[str, str]) -> None:
        self.affinity_keys = tuple(t.topology_key for t in pod.affinity_required)
        #: (scope, topology key) of each required anti-affinity term, the namespaces merged
        self.anti_scopes = tuple((scope_of(t, pod.namespace), t.topology_key) for t in pod.anti_affinity_required)
        self.affinity_query: PodQuery | None = None
        if pod.affinity_required:
            self.affinity_query = PodQuery(tuple(scope_of(t, pod.namespace) for t in pod.affinity_required))
        self.ns_labels = ns_labels
        self.self_match = self.affinity_query is not None and all(
            p.matches(pod.namespace, pod.labels, ns_labels) for p in self.affinity_query.parts)
        self.affinity = PairCounts()
        self.anti = PairCounts()
        self.existing = PairCounts()

    def clone(self) -> PreFilterState:
        out = PreFilterState.__new__(PreFilterState)
        out.affinity_keys, out.anti_scopes = self.affinity_keys, self.anti_scopes
        out.affinity_query, out.self_match, out.ns_labels = self.affinity_query, self.self_match, self.ns_labels
        out.affinity, out.anti, out.existing = self.affinity.clone(), self.anti.clone(), self.existing.clone()
        return out


def compute(index: PodIndex, pod: Pod, ns_labels: Mapping[str, str]) -> PreFilterState:
    table = index.table
    s = PreFilterState(pod, ns_labels)
    # existing pods' required anti-affinity terms that match the incoming pod, summed per key
    per_key: dict[str, list[Carrier]] = {}
    for c in index.matching_carriers(REQUIRED_ANTI_AFFINITY, pod):
        if c.total:
            per_key.setdefault(c.term.topology_key, []).append(c)
    for k, carriers in per_key.items():
        s.existing.add_array(k, table.labels(k), index.carriers_by_value(k, carriers))
    if s.affinity_query is not None:
        # a pod counts once per term when it matches ALL terms
        rows = index.counter(s.affinity_query).rows
        for k in s.affinity_keys:
            s.affinity.add_array(k, table.labels(k), index.by_value(k, rows))
    for scope, k in s.anti_scopes:
        rows = index.counter(PodQuery((scope,))).rows
        s.anti.add_array(k, table.labels(k), index.by_value(k, rows))
    return s


def filter_rows(s: PreFilterState, table: NodeTable, rows: np.ndarray) -> Verdicts:
    n = len(rows)
    codes = np.zeros(n, dtype=np.int8)
    reasons = np.zeros(n, dtype=np.int32)
    if s.affinity_keys:
        missing = np.zeros(n, dtype=bool)
        exist = np.ones(n, dtype=bool)
        for k in s.affinity_keys:
            missing |= table.labels(k).codes[rows] < 0
            exist &= s.affinity.counts(table, k, rows) > 0
        first_of_group = s.affinity.empty and s.self_match
        bad = missing | (~exist & (not first_of_group))
        codes[bad] = Code.UNRESOLVABLE
        reasons[bad] = _AFFINITY_ID
    if s.anti_scopes and not s.anti.empty:
        bad = np.zeros(n, dtype=bool)
        for k in dict.fromkeys(k for _, k in s.anti_scopes):
            bad |= s.anti.counts(table, k, rows) > 0
        bad &= codes == 0
        codes[bad] = Code.UNSCHEDULABLE
        reasons[bad] = _ANTI_ID
    if not s.existing.empty:
        bad = np.zeros(n, dtype=bool)
        for k in sorted(s.existing.keys()):
            bad |= s.existing.counts(table, k, rows) > 0
        bad &= codes == 0
        codes[bad] = Code.UNSCHEDULABLE
        reasons[bad] = _EXISTING_ID
    return Verdicts(codes, reasons)


def filter_rows_with_pods(s: PreFilterState, pod: Pod, table: NodeTable, rows: np.ndarray,
                          examples: Sequence[Pod], ns_labels_of: Sequence[Mapping[str, str]], counts: np.ndarray
                          ) -> Verdicts | None:
    """filter_rows on a state where, for each row on its own, ``counts[k, j]`` pods like
    ``examples[j]`` (their namespaces' labels ``ns_labels_of[j]``) were added (negative:
    removed) through update_with_pod on the node of ``rows[k]``: each changes only the pairs of
    that node's own label values. Only the affinity check reads beyond the row's pairs (whether
    any pair is counted at all, for the first pod of a self-affine group); that is the state's
    count of nonzero pairs with the row's own pairs changed. None when the state holds changes
    already (a fork's)."""
    if s.affinity.delta or s.anti.delta or s.existing.delta:
        return None
    n, m = len(rows), len(examples)
    weights = np.asarray(counts, dtype=np.int64).reshape(n, m)
    # per pair-count map and topology key: how many times one pod like examples[j] adds to it
    per_key: list[dict[str, np.ndarray]] = [{}, {}, {}]   # existing, affinity, anti

    def add(which: int, key: str, j: int) -> None:
        column = per_key[which].get(key)
        if column is None:
            column = per_key[which][key] = np.zeros(m, dtype=np.int64)
        column[j] += 1

    for j, other in enumerate(examples):
        for t in other.anti_affinity_required:
            if scope_of(t, other.namespace).matches(pod.namespace, pod.labels, s.ns_labels):
                add(0, t.topology_key, j)
        if s.affinity_query is not None and all(
                p.matches(other.namespace, other.labels, ns_labels_of[j]) for p in s.affinity_query.parts):
            for k in s.affinity_keys:
                add(1, k, j)
        for scope, k in s.anti_scopes:
            if scope.matches(other.namespace, other.labels, ns_labels_of[j]):
                add(2, k, j)

    def changed(which: int, key: str) -> np.ndarray:
        """What the row's pair of ``key`` gains (0 where the node lacks the key)."""
        column = per_key[which].get(key)
        if column is None:
            return np.zeros(n, dtype=np.int64)
        out: np.ndarray = (weights @ column) * (table.labels(key).codes[rows] >= 0)
        return out

    codes = np.zeros(n, dtype=np.int8)
    reasons = np.zeros(n, dtype=np.int32)
    if s.affinity_keys:
        missing = np.zeros(n, dtype=bool)
        exist = np.ones(n, dtype=bool)
        nonzero = np.full(n, s.affinity._nonzero, dtype=np.int64)
        for k in dict.fromkeys(s.affinity_keys):
            missing |= table.labels(k).codes[rows] < 0
            old = s.affinity.counts(table, k, rows)
            new = old + changed(1, k)
            exist &= new > 0
            nonzero += (new != 0).astype(np.int64) - (old != 0)
        first_of_group = (nonzero == 0) & s.self_match
        bad = missing | (~exist & ~first_of_group)
        codes[bad] = Code.UNRESOLVABLE
        reasons[bad] = _AFFINITY_ID
    # a map with no nonzero pair has every count 0: its check rejects nothing either way
    if s.anti_scopes:
        bad = np.zeros(n, dtype=bool)
        for k in dict.fromkeys(k for _, k in s.anti_scopes):
            bad |= s.anti.counts(table, k, rows) + changed(2, k) > 0
        bad &= codes == 0
        codes[bad] = Code.UNSCHEDULABLE
        reasons[bad] = _ANTI_ID
    bad = np.zeros(n, dtype=bool)
    for k in sorted(s.existing.keys() | set(per_key[0])):
        bad |= s.existing.counts(table, k, rows) + changed(0, k) > 0
    bad &= codes == 0
    codes[bad] = Code.UNSCHEDULABLE
    reasons[bad] = _EXISTING_ID
    return Verdicts(codes, reasons)


def update_with_pod(s: PreFilterState, pod: Pod, other: Pod, node_labels: Mapping[str, str],
                    ns_labels_of_other: Mapping[str, str], d: int) -> None:
    """updateWithPod: ``other`` is added to (d=1) or removed from (d=-1) a node of a fork."""
    for t in other.anti_affinity_required:
        if scope_of(t, other.namespace).matches(pod.namespace, pod.labels, s.ns_labels):
            v = node_labels.get(t.topology_key)
            if v is not None:
                s.existing.add(t.topology_key, v, d)
    if s.affinity_query is not None and all(
            p.matches(other.namespace, other.labels, ns_labels_of_other) for p in s.affinity_query.parts):
        for k in s.affinity_keys:
            v = node_labels.get(k)
            if v is not None:
                s.affinity.add(k, v, d)
    for scope, k in s.anti_scopes:
        if scope.matches(other.namespace, other.labels, ns_labels_of_other):
            v = node_labels.get(k)
            if v is not None:
                s.anti.add(k, v, d)


def matches_all(scopes: tuple[TermScope, ...], pod: Pod, ns_labels: Mapping[str, str]) -> bool:
    """podMatchesAllAffinityTerms: false for no terms."""
    return bool(scopes) and all(sc.matches(pod.namespace, pod.labels, ns_labels) for sc in scopes)
