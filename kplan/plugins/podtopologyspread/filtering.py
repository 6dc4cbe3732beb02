"""PodTopologySpread PreFilter, Filter and AddPod/RemovePod
(pkg/scheduler/framework/plugins/podtopologyspread/filtering.go, v1.34.1; reference 3.6).

PreFilter, per DoNotSchedule constraint, over every node that has the keys of all the
constraints and passes this constraint's inclusion policies (nodeAffinityPolicy Honor: the pod's
nodeSelector and required node affinity; nodeTaintsPolicy Honor: no untolerated
NoSchedule/NoExecute taint): each node's value of the key is a domain, counting the node's pods
in the pod's namespace, not terminating, that the selector matches (an empty selector counts
nothing up to 1.37, every pod of the namespace from 1.38: #141340). Filter, per constraint in
order: a node without the key fails U&U "(missing required label)"; otherwise the node fails
(Unschedulable) when ``count(domain) + selfMatch - minMatch > maxSkew``, minMatch being 0 when
there are fewer domains than minDomains. AddPod/RemovePod change the count of the node's domain for a pod of the same
namespace the selector matches (here an empty selector matches, and terminating pods count).

Upstream tracks the minimum with two "critical paths" (the two smallest domains), which is exact
as long as one state only sees changes to one domain, as with nominated pods and preemption (one
node each); kplan computes the exact minimum, the same value there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from kplan.cluster.node_table import LabelColumn, NodeTable
from kplan.framework.cycle_state import StateData
from kplan.framework.status import Code, Verdicts, reason_id
from kplan.model.objects import Node, Pod, SpreadConstraint
from kplan.model.selectors import LabelSelector, selector_matches
from kplan.plugins.podindex import PodIndex, PodQuery, TermScope, read_by_value
from kplan.plugins.podtopologyspread.common import (
    InclusionMasks,
    has_every_key,
    matches_inclusion_policies,
    node_labels_match,
)

PRE_FILTER_KEY = "PreFilterPodTopologySpread"
REASON_CONSTRAINTS = "node(s) didn't match pod topology spread constraints"
REASON_LABEL = REASON_CONSTRAINTS + " (missing required label)"
_CONSTRAINTS_ID = reason_id(REASON_CONSTRAINTS)
_LABEL_ID = reason_id(REASON_LABEL)
MAX_INT32 = 2**31 - 1


#: countPodsMatchSelector as a release has it: the pods a constraint counts, or None for none
MatchingQuery = Callable[[Pod, SpreadConstraint], "PodQuery | None"]


def matching_query(pod: Pod, c: SpreadConstraint) -> PodQuery | None:
    """countPodsMatchSelector's pods up to 1.37: same namespace, not terminating, selector matches;
    None when the selector is nil (matches nothing) or empty (selector.Empty(): counts nothing)."""
    if c.selector is None or c.selector.is_empty:
        return None
    return _query(pod.namespace, c.selector)


def matching_query_empty_counts_all(pod: Pod, c: SpreadConstraint) -> PodQuery | None:
    """countPodsMatchSelector from 1.38 (#141340: labels.MatchesNothing instead of
    selector.Empty()): an empty selector counts every pod of the namespace; only a nil one
    counts none."""
    if c.selector is None:
        return None
    return _query(pod.namespace, c.selector)


@lru_cache(maxsize=4096)
def _query(namespace: str, selector: LabelSelector) -> PodQuery:
    # one object per (namespace, selector), twice a cycle: building it cost more than the lookup,
    # and PodIndex finds its counter of an identical key without comparing the parts
    return PodQuery((TermScope(frozenset((namespace,)), None, selector),), skip_terminating=True)


class Domains:
    """TpValueToMatchNum of one constraint at PreFilter: counts and domain flags per value code of
    the snapshot's label column (trailing slot: nodes without the key)."""

    __slots__ = ("col", "counts", "present", "n_domains", "min", "_sorted")

    def __init__(self, col: LabelColumn, counts: np.ndarray, present: np.ndarray) -> None:
        self.col, self.counts, self.present = col, counts, present
        self.n_domains = int(present.sum())
        self.min = int(counts[present].min()) if self.n_domains else MAX_INT32
        self._sorted: np.ndarray | None = None

    def base(self, value: str) -> tuple[bool, int]:
        code = self.col.code_of.get(value)
        if code is None:
            return False, 0
        return bool(self.present[code]), int(self.counts[code])

    def sorted_counts(self) -> np.ndarray:
        if self._sorted is None:
            self._sorted = np.sort(self.counts[self.present])
        return self._sorted


class PreFilterState(StateData):
    __slots__ = ("constraints", "domains", "self_match", "delta")

    def __init__(self, constraints: tuple[SpreadConstraint, ...], domains: list[Domains],
                 self_match: list[int]) -> None:
        self.constraints = constraints
        self.domains = domains
        self.self_match = self_match
        #: per constraint: value → what AddPod/RemovePod added on a fork (the domain exists from then on)
        self.delta: list[dict[str, int]] = [{} for _ in constraints]

    def clone(self) -> PreFilterState:
        out = PreFilterState(self.constraints, self.domains, self.self_match)
        out.delta = [dict(d) for d in self.delta]
        return out

    def min_match(self, i: int) -> int:
        """minMatchNum: the smallest domain count, 0 with fewer domains than minDomains."""
        dom = self.domains[i]
        changes = self.delta[i]
        if not changes:
            n, m = dom.n_domains, dom.min
        else:
            n = dom.n_domains
            new: list[int] = []
            replaced: Counter[int] = Counter()
            for value, d in changes.items():
                present, base = dom.base(value)
                if present:
                    replaced[base] += 1
                else:
                    n, base = n + 1, 0
                new.append(base + d)
            m = min(new)
            for v in dom.sorted_counts():  # the smallest count among the domains left unchanged
                v = int(v)
                if replaced[v] > 0:
                    replaced[v] -= 1
                    continue
                m = min(m, v)
                break
        if n < self.constraints[i].min_domains:
            return 0
        return m


def compute(index: PodIndex, masks: InclusionMasks, pod: Pod, constraints: tuple[SpreadConstraint, ...],
            query_of: MatchingQuery) -> PreFilterState:
    table = index.table
    has_all = has_every_key(table, constraints)
    domains = []
    for c in constraints:
        eligible = has_all
        policies = masks.eligible(table, pod, c)
        if policies is not None:
            eligible = eligible & policies
        idx, v = index.value_index(c.topology_key)
        present = np.bincount(idx[eligible], minlength=v + 1) > 0
        present[v] = False
        query = query_of(pod, c)
        if query is None:
            counts = np.zeros(v + 1, dtype=np.int64)
        else:
            counts = index.by_value(c.topology_key, index.counter(query).rows, eligible)
        domains.append(Domains(table.labels(c.topology_key), counts, present))
    self_match = [int(selector_matches(c.selector, pod.labels)) for c in constraints]
    return PreFilterState(constraints, domains, self_match)


def filter_rows(s: PreFilterState, table: NodeTable, rows: np.ndarray) -> Verdicts:
    n = len(rows)
    codes = np.zeros(n, dtype=np.int8)
    reasons = np.zeros(n, dtype=np.int32)
    for i, c in enumerate(s.constraints):
        undecided = codes == 0
        if not undecided.any():
            break
        col = table.labels(c.topology_key)
        value_codes = col.codes[rows]
        missing = undecided & (value_codes < 0)
        codes[missing] = Code.UNRESOLVABLE
        reasons[missing] = _LABEL_ID
        dom = s.domains[i]
        count = read_by_value(dom.counts, dom.col, col, rows)
        for value, d in s.delta[i].items():
            code = col.code_of.get(value)
            if d and code is not None:
                count = count + np.where(value_codes == code, d, 0)
        skew = count + s.self_match[i] - s.min_match(i)
        bad = undecided & ~missing & (skew > c.max_skew)
        codes[bad] = Code.UNSCHEDULABLE
        reasons[bad] = _CONSTRAINTS_ID
    return Verdicts(codes, reasons)


def filter_rows_with_pods(s: PreFilterState, pod: Pod, table: NodeTable, rows: np.ndarray, masks: InclusionMasks,
                          examples: Sequence[Pod], counts: np.ndarray) -> Verdicts | None:
    """filter_rows on a state where, for each row on its own, ``counts[k, j]`` pods like
    ``examples[j]`` were added (negative: removed) through update_with_pod on the node of
    ``rows[k]``: each changes only the row's own domain, by the matching pods of the pod's
    namespace where the node has every key and passes the constraint's inclusion policies.
    With one domain changed, minMatchNum is the smaller of that domain's new count and the
    smallest count of the other domains (as min_match computes for such a delta). None when
    the state holds changes already (a fork's)."""
    if any(s.delta):
        return None
    n = len(rows)
    k = len(s.constraints)
    match = np.zeros((len(examples), k), dtype=np.int64)
    for j, other in enumerate(examples):
        if other.namespace == pod.namespace:
            for i, c in enumerate(s.constraints):
                match[j, i] = selector_matches(c.selector, other.labels)
    added = (np.asarray(counts, dtype=np.int64).reshape(n, len(examples)) @ match) if len(examples) else (
        np.zeros((n, k), dtype=np.int64))
    has_all = np.ones(n, dtype=bool)
    for c in s.constraints:
        has_all &= table.labels(c.topology_key).codes[rows] >= 0
    codes = np.zeros(n, dtype=np.int8)
    reasons = np.zeros(n, dtype=np.int32)
    for i, c in enumerate(s.constraints):
        undecided = codes == 0
        if not undecided.any():
            break
        col = table.labels(c.topology_key)
        missing = undecided & (col.codes[rows] < 0)
        codes[missing] = Code.UNRESOLVABLE
        reasons[missing] = _LABEL_ID
        dom = s.domains[i]
        count = read_by_value(dom.counts, dom.col, col, rows)
        d = added[:, i] * has_all
        policies = masks.eligible(table, pod, c)
        if policies is not None:
            d = d * policies[rows]
        changed = d != 0
        n_domains = np.full(n, dom.n_domains, dtype=np.int64)
        low = np.full(n, dom.min, dtype=np.int64)
        if changed.any():
            present = read_by_value(dom.present, dom.col, col, rows)
            ordered = dom.sorted_counts()
            first = int(ordered[0]) if len(ordered) else MAX_INT32
            second = int(ordered[1]) if len(ordered) > 1 else MAX_INT32
            # the smallest count of the domains other than the row's
            others = np.where(present & (count == first), second, first)
            new = count + d
            low = np.where(changed, np.where(present, np.minimum(new, others), np.minimum(d, dom.min)), low)
            n_domains = np.where(changed & ~present, n_domains + 1, n_domains)
        low = np.where(n_domains < c.min_domains, 0, low)
        skew = count + d + s.self_match[i] - low
        bad = undecided & ~missing & (skew > c.max_skew)
        codes[bad] = Code.UNSCHEDULABLE
        reasons[bad] = _CONSTRAINTS_ID
    return Verdicts(codes, reasons)


def update_with_pod(s: PreFilterState, pod: Pod, other: Pod, node: Node, d: int) -> None:
    """updateWithPod: ``other`` added to (d=1) or removed from (d=-1) ``node`` on a fork."""
    if other.namespace != pod.namespace or not node_labels_match(node.labels, s.constraints):
        return
    for i, c in enumerate(s.constraints):
        # Selector.Matches: here an empty selector matches every pod
        if not selector_matches(c.selector, other.labels):
            continue
        if not matches_inclusion_policies(c, pod, node):
            continue
        value = node.labels[c.topology_key]
        s.delta[i][value] = s.delta[i].get(value, 0) + d
