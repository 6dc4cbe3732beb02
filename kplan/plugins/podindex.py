"""Incremental counts of running pods per node, shared by InterPodAffinity and PodTopologySpread.

kube-scheduler rebuilds its topology counts from every pod of every node in each PreFilter and
PreScore. kplan keeps equivalent counts current on every bind and removal instead (through
``NodeTable.listeners``), so the cost of one scheduling cycle does not grow with the number of
running pods:

* running pods are grouped into *classes* of (namespace, labels, terminating), which is all a
  label-selector query can look at;
* a ``PodQuery`` (a conjunction of ``TermScope`` parts, optionally skipping terminating pods) gets
  a ``RowCounter`` on first use, built from the classes and then kept current: the number of
  matching pods on every table row;
* every pod (anti-)affinity term carried by a running pod is a ``Carrier`` holding the rows of the
  pods that carry it (what NodeInfo's PodsWithAffinity / PodsWithRequiredAntiAffinity give
  upstream).

The index lives on the snapshot's full table. Forks (preemption, nominated pods) have no
listeners: there the plugins update their CycleState through AddPod/RemovePod, as upstream does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import count
from typing import TYPE_CHECKING

import numpy as np

from kplan.model.objects import PodAffinityTerm
from kplan.model.selectors import LabelSelector, selector_matches

if TYPE_CHECKING:
    from kplan.cluster.node_table import LabelColumn, NodeTable
    from kplan.cluster.snapshot import Snapshot
    from kplan.model.objects import Pod

#: kinds of carried terms
REQUIRED_AFFINITY, REQUIRED_ANTI_AFFINITY = "requiredAffinity", "requiredAntiAffinity"
PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY = "preferredAffinity", "preferredAntiAffinity"
#: RowCounters kept before the least recently used are dropped (each holds one int32 per node)
MAX_COUNTERS = 1024

NamespaceLabels = Callable[[str], Mapping[str, str]]


@dataclass(frozen=True, slots=True)
class TermScope:
    """The pods an affinity term or spread constraint applies to (framework AffinityTerm.Matches).

    ``namespaces`` are the term's namespaces, or the owning pod's namespace when the term names
    none and has no namespaceSelector. ``namespace_selector`` None is a nil selector (matches no
    namespace); an empty one matches every namespace. For the incoming pod's terms upstream first
    lists the namespaces the selector matches; evaluating the selector against the candidate pod's
    namespace labels is the same thing.
    """

    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    selector: LabelSelector | None

    def matches(self, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str]) -> bool:
        if namespace in self.namespaces or selector_matches(self.namespace_selector, ns_labels):
            return selector_matches(self.selector, labels)
        return False


def scope_of(term: PodAffinityTerm, owner_namespace: str) -> TermScope:
    """newAffinityTerm / getNamespacesFromPodAffinityTerm (framework/types.go)."""
    if term.namespaces or term.namespace_selector is not None:
        namespaces = frozenset(term.namespaces)
    else:
        namespaces = frozenset((owner_namespace,))
    return TermScope(namespaces, term.namespace_selector, term.selector)


@dataclass(frozen=True, slots=True)
class PodQuery:
    """Pods that match every part (a pod must match ALL required affinity terms to count)."""

    parts: tuple[TermScope, ...]
    skip_terminating: bool = False


def class_key(pod: Pod) -> tuple[str, tuple[tuple[str, str], ...], bool]:
    return (pod.namespace, tuple(sorted(pod.labels.items())), pod.terminating)


class PodClass:
    """Running pods with the same namespace, labels and terminating flag."""

    __slots__ = ("namespace", "labels", "terminating", "rows", "counters")

    def __init__(self, namespace: str, labels: Mapping[str, str], terminating: bool) -> None:
        self.namespace, self.labels, self.terminating = namespace, labels, terminating
        #: table row → pods of this class on it
        self.rows: dict[int, int] = {}
        self.counters: list[RowCounter] = []


class RowCounter:
    """Pods matching a query, per table row."""

    __slots__ = ("query", "rows", "used")

    def __init__(self, query: PodQuery, n: int) -> None:
        self.query = query
        self.rows = np.zeros(n, dtype=np.int32)
        self.used = 0


class Carrier:
    """Running pods that carry one affinity term (same term, weight and owner namespace), per row.

    Sparse: terms can be as many as pods (a selector naming each pod), but each has few rows."""

    __slots__ = ("kind", "term", "weight", "namespace", "scope", "rows", "total")

    def __init__(self, kind: str, term: PodAffinityTerm, weight: int, namespace: str) -> None:
        self.kind, self.term, self.weight, self.namespace = kind, term, weight, namespace
        self.scope = scope_of(term, namespace)
        #: table row → pods carrying the term there
        self.rows: dict[int, int] = {}
        self.total = 0


def _carried(pod: Pod) -> list[tuple[str, PodAffinityTerm, int]]:
    out = [(REQUIRED_AFFINITY, t, 0) for t in pod.affinity_required]
    out += [(REQUIRED_ANTI_AFFINITY, t, 0) for t in pod.anti_affinity_required]
    out += [(PREFERRED_AFFINITY, w.term, w.weight) for w in pod.affinity_preferred]
    out += [(PREFERRED_ANTI_AFFINITY, w.term, w.weight) for w in pod.anti_affinity_preferred]
    return out


class AffinityCarriers:
    """How many running pods of a table carry some inter-pod affinity term: the listener that
    lets InterPodAffinity skip without building the PodIndex (classes and counters over every
    running pod) while no pod has a term to count. Counting is one look at each pod."""

    def __init__(self, table: NodeTable) -> None:
        self.count = sum(1 for pods in table.pods for pod in pods if pod.has_affinity)

    @classmethod
    def of(cls, snapshot: Snapshot) -> AffinityCarriers:
        """The count of the snapshot's table, registered as its listener on first use."""
        table = snapshot.table
        return table.listener(cls, lambda: cls(table))

    def pod_added(self, table: NodeTable, pod: Pod, row: int) -> None:
        if pod.has_affinity:
            self.count += 1

    def pod_removed(self, table: NodeTable, pod: Pod, row: int) -> None:
        if pod.has_affinity:
            self.count -= 1


class PodIndex:
    """The listener that keeps classes, counters and carriers in step with one NodeTable."""

    def __init__(self, table: NodeTable, namespace_labels: NamespaceLabels) -> None:
        self.table = table
        self.n = len(table)
        self.namespace_labels = namespace_labels
        self.classes: dict[tuple[str, tuple[tuple[str, str], ...], bool], PodClass] = {}
        self._class_of_pod: dict[str, PodClass] = {}   # by pod uid
        self.counters: dict[PodQuery, RowCounter] = {}
        self.carriers: dict[str, list[Carrier]] = {k: [] for k in (
            REQUIRED_AFFINITY, REQUIRED_ANTI_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY)}
        self._carrier_of: dict[tuple[str, PodAffinityTerm, int, str], Carrier] = {}
        #: (kind, namespace, labels) of an incoming pod → (carriers checked, those matching it)
        self._matching: dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[int, list[Carrier]]] = {}
        self._value_index: dict[str, tuple[object, np.ndarray, int]] = {}
        self._clock = count(1)
        # _update for every running pod, without what a new index cannot have (counters to
        # bump, pods to remove): on 50,000 pods this runs once, before the first cycle ends
        classes, class_of_pod = self.classes, self._class_of_pod
        for row, pods in enumerate(table.pods):
            for pod in pods:
                cls = classes.get(class_key(pod))
                if cls is None:
                    cls = self._class(pod)
                class_of_pod[pod.uid] = cls
                cls.rows[row] = cls.rows.get(row, 0) + 1
                if pod.has_affinity:
                    self._carry(pod, row, 1)

    @classmethod
    def of(cls, snapshot: Snapshot) -> PodIndex:
        """The index of the snapshot's table, registered as its listener on first use."""
        table = snapshot.table
        return table.listener(cls, lambda: cls(table, snapshot.namespace_labels))

    # ------------------------------------------------------------------ listener

    def pod_added(self, table: NodeTable, pod: Pod, row: int) -> None:
        self._update(pod, row, 1)

    def pod_removed(self, table: NodeTable, pod: Pod, row: int) -> None:
        self._update(pod, row, -1)

    def _update(self, pod: Pod, row: int, delta: int) -> None:
        cls = self._class_of_pod.get(pod.uid) if delta < 0 else None
        if cls is None:
            cls = self._class(pod)
        if delta > 0:
            self._class_of_pod[pod.uid] = cls
        else:
            self._class_of_pod.pop(pod.uid, None)
        left = cls.rows.get(row, 0) + delta
        if left:
            cls.rows[row] = left
        else:
            cls.rows.pop(row, None)
        for c in cls.counters:
            c.rows[row] += delta
        if pod.has_affinity:
            self._carry(pod, row, delta)

    def _carry(self, pod: Pod, row: int, delta: int) -> None:
        """Count the pod's affinity terms on ``row`` (delta 1) or stop counting them (-1)."""
        for kind, term, weight in _carried(pod):
            carrier = self._carrier(kind, term, weight, pod.namespace)
            left = carrier.rows.get(row, 0) + delta
            if left:
                carrier.rows[row] = left
            else:
                carrier.rows.pop(row, None)
            carrier.total += delta

    def _class(self, pod: Pod) -> PodClass:
        key = class_key(pod)
        cls = self.classes.get(key)
        if cls is None:
            cls = self.classes[key] = PodClass(pod.namespace, dict(pod.labels), pod.terminating)
            ns_labels = self.namespace_labels(pod.namespace)
            for c in self.counters.values():
                if self._query_matches(c.query, cls, ns_labels):
                    cls.counters.append(c)
        return cls

    def _carrier(self, kind: str, term: PodAffinityTerm, weight: int, namespace: str) -> Carrier:
        key = (kind, term, weight, namespace)
        c = self._carrier_of.get(key)
        if c is None:
            c = self._carrier_of[key] = Carrier(kind, term, weight, namespace)
            self.carriers[kind].append(c)
        return c

    @staticmethod
    def _query_matches(query: PodQuery, cls: PodClass, ns_labels: Mapping[str, str]) -> bool:
        if query.skip_terminating and cls.terminating:
            return False
        return all(p.matches(cls.namespace, cls.labels, ns_labels) for p in query.parts)

    # ------------------------------------------------------------------ queries

    def counter(self, query: PodQuery) -> RowCounter:
        """Matching pods per row, kept current from now on."""
        c = self.counters.get(query)
        if c is None:
            if len(self.counters) >= MAX_COUNTERS:
                self._evict()
            c = self.counters[query] = RowCounter(query, self.n)
            for cls in self.classes.values():
                if self._query_matches(query, cls, self.namespace_labels(cls.namespace)):
                    cls.counters.append(c)
                    for row, k in cls.rows.items():
                        c.rows[row] += k
        c.used = next(self._clock)
        return c

    def _evict(self) -> None:
        keep = sorted(self.counters.values(), key=lambda c: c.used)[len(self.counters) // 2:]
        kept = set(map(id, keep))
        self.counters = {c.query: c for c in keep}
        for cls in self.classes.values():
            cls.counters = [c for c in cls.counters if id(c) in kept]

    def matching_carriers(self, kind: str, pod: Pod) -> list[Carrier]:
        """Carriers of ``kind`` whose term matches the pod, its namespace labels included."""
        labels = tuple(sorted(pod.labels.items()))
        key = (kind, pod.namespace, labels)
        carriers = self.carriers[kind]
        checked, found = self._matching.get(key, (0, []))
        if checked < len(carriers):
            ns_labels = self.namespace_labels(pod.namespace)
            found = found + [c for c in carriers[checked:] if c.scope.matches(pod.namespace, pod.labels, ns_labels)]
            self._matching[key] = (len(carriers), found)
        return found

    # ------------------------------------------------------------------ aggregation by label value

    def value_index(self, key: str) -> tuple[np.ndarray, int]:
        """(code per row with the absent label mapped to V, V) for the table's column of ``key``."""
        col = self.table.labels(key)
        cached = self._value_index.get(key)
        if cached is None or cached[0] is not col:
            v = len(col.values)
            idx = np.where(col.codes < 0, v, col.codes).astype(np.int64)
            cached = self._value_index[key] = (col, idx, v)
        return cached[1], cached[2]

    def by_value(self, key: str, per_row: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Per-row counts summed per value of label ``key`` (length V+1, the last slot 0: rows
        without the label count nowhere)."""
        idx, v = self.value_index(key)
        if mask is None:
            out = np.bincount(idx, weights=per_row, minlength=v + 1)
        else:
            out = np.bincount(idx[mask], weights=per_row[mask], minlength=v + 1)
        out = out.astype(np.int64)
        out[v] = 0
        return out

    def carriers_by_value(self, key: str, carriers: list[Carrier]) -> np.ndarray:
        """The rows of several carriers summed per value of label ``key``, as ``by_value``."""
        idx, v = self.value_index(key)
        n = sum(len(c.rows) for c in carriers)
        rows = np.fromiter((r for c in carriers for r in c.rows), dtype=np.int64, count=n)
        weights = np.fromiter((k for c in carriers for k in c.rows.values()), dtype=np.float64, count=n)
        out = np.bincount(idx[rows], weights=weights, minlength=v + 1).astype(np.int64)
        out[v] = 0
        return out


def read_by_value(arr: np.ndarray, base: LabelColumn, col: LabelColumn, rows: np.ndarray) -> np.ndarray:
    """``arr`` (per value code of ``base``, plus a trailing slot for "absent") read for the rows of
    another view of the same nodes; a fork's column shares the codes, any other is translated."""
    codes = col.codes[rows]
    if col.values is not base.values:
        v = len(base.values)
        remap = np.array([base.code_of.get(x, v) for x in col.values] + [v], dtype=np.int64)
        codes = remap[codes]
    out: np.ndarray = arr[codes]
    return out
