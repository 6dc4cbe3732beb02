"""Node state in numpy columns, so that a filter or score runs over all nodes at once.

Rows are in the scheduler's node-tree order (reference 5.2), which is the order filtering visits.
A row holds: allocatable and requested resources ``[N, R]``, the non-zero cpu/memory that
scoring uses, the pod count, the pods themselves, host ports in use, labels (encoded per key on
first use) and taints (encoded as the id of the node's taint list).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from itertools import count
from typing import Any, Protocol, TypeVar

import numpy as np

from kplan.cluster.resources import CPU, MEMORY, ResourceIndex
from kplan.model.objects import HostPort, Node, Pod, Taint
from kplan.model.parse import is_tracked_resource

I64 = np.int64
#: larger than any pod priority (they are int32)
NO_PODS = 2**40
_TAINT_SET_KEYS = count(1)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class LabelColumn:
    """One label key over all rows: ``codes[i]`` is the value's code, -1 where the label is absent."""

    __slots__ = ("key", "codes", "values", "code_of", "_ints", "_present", "_domains", "_all_present")

    def __init__(self, key: str, codes: np.ndarray, values: list[str], code_of: dict[str, int]) -> None:
        self.key, self.codes, self.values, self.code_of = key, codes, values, code_of
        self._ints: tuple[np.ndarray, np.ndarray] | None = None
        self._present: np.ndarray | None = None
        self._domains: np.ndarray | None = None
        self._all_present: bool | None = None

    @classmethod
    def build(cls, key: str, nodes: Sequence[Node]) -> LabelColumn:
        code_of: dict[str, int] = {}
        values: list[str] = []
        codes = np.empty(len(nodes), dtype=np.int32)
        for i, n in enumerate(nodes):
            v = n.labels.get(key)
            if v is None:
                codes[i] = -1
                continue
            c = code_of.get(v)
            if c is None:
                c = code_of[v] = len(values)
                values.append(v)
            codes[i] = c
        return cls(key, codes, values, code_of)

    def take(self, rows: np.ndarray) -> LabelColumn:
        return LabelColumn(self.key, self.codes[rows], self.values, self.code_of)

    @property
    def present(self) -> np.ndarray:
        """Rows with the label. A column never changes, so this (and ``domains``) is computed once
        and read-only: PodTopologySpread reads both in every cycle."""
        if self._present is None:
            self._present = _frozen(self.codes >= 0)
        return self._present

    @property
    def all_present(self) -> bool:
        """Every row has the label (the hostname on every node, as a rule)."""
        if self._all_present is None:
            self._all_present = bool(self.present.all())
        return self._all_present

    @property
    def domains(self) -> np.ndarray:
        """Per row, its value's code as int64, where rows without the label take the code of the
        value "" when some node has the label empty, else ``len(values)``: a node without the key
        is in the domain "" (topology spreading whose keys are not all required)."""
        if self._domains is None:
            missing = self.code_of.get("", len(self.values))
            self._domains = _frozen(np.where(self.codes < 0, missing, self.codes).astype(np.int64))
        return self._domains

    def isin(self, values: Iterable[str]) -> np.ndarray:
        wanted = [self.code_of[v] for v in values if v in self.code_of]
        if not wanted:
            return np.zeros(len(self.codes), dtype=bool)
        if len(wanted) == 1:
            return np.asarray(self.codes == wanted[0])
        return np.isin(self.codes, wanted)

    def as_int64(self) -> tuple[np.ndarray, np.ndarray]:
        """(valid, value): the label parsed as a base-10 int64 where it parses (Gt/Lt)."""
        if self._ints is None:
            from kplan.model.selectors import parse_int64
            parsed = [parse_int64(v) for v in self.values]
            ok = np.array([p is not None for p in parsed] + [False], dtype=bool)
            num = np.array([p if p is not None else 0 for p in parsed] + [0], dtype=np.int64)
            self._ints = (ok[self.codes], num[self.codes])  # code -1 picks the trailing sentinel
        return self._ints


class PodListener(Protocol):
    """Keeps an index (e.g. per-domain counts) in step with the pods on the nodes. It reads the
    pod and its row, not the table's columns: NodeTable.add_pods tells it after summing them."""

    def pod_added(self, table: NodeTable, pod: Pod, row: int) -> None: ...

    def pod_removed(self, table: NodeTable, pod: Pod, row: int) -> None: ...


Listener = TypeVar("Listener", bound=PodListener)


class PortSet:
    """Host ports in use on one node (HostPortInfo of kube-scheduler's framework types).

    A set, as upstream's map of IP → set of (protocol, port): two pods on one node may hold the
    same host port (the API server does not stop it), yet the set records it once, and removing
    either pod deletes the entry, so the other's port counts as free from then on. Preemption's
    dry run sees this when it removes a lower-priority pod beside a higher-priority one holding
    the same port: NodePorts passes the node, as it does in kube-scheduler."""

    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used: dict[tuple[str, int], set[str]] = {}

    def add(self, p: HostPort) -> None:
        self.used.setdefault((p.protocol, p.port), set()).add(p.ip)

    def remove(self, p: HostPort) -> None:
        ips = self.used.get((p.protocol, p.port))
        if ips is None:
            return
        ips.discard(p.ip)
        if not ips:
            del self.used[(p.protocol, p.port)]

    def conflicts(self, p: HostPort) -> bool:
        ips = self.used.get((p.protocol, p.port))
        if not ips:
            return False
        if p.ip == "0.0.0.0":
            return True
        return "0.0.0.0" in ips or p.ip in ips

    def copy(self) -> PortSet:
        out = PortSet()
        out.used = {k: set(v) for k, v in self.used.items()}
        return out


class PodTally:
    """Per row of one NodeTable, the sum of ``weigh(pod)`` over the row's pods, kept current as
    pods are bound and removed (a table listener; forks get their own on first use)."""

    def __init__(self, table: NodeTable, weigh: Callable[[Pod], int]) -> None:
        self.weigh = weigh
        self.per_row = np.zeros(len(table), dtype=I64)
        for row, pods in enumerate(table.pods):
            self.per_row[row] = sum(weigh(p) for p in pods)

    @staticmethod
    def of(table: NodeTable, weigh: Callable[[Pod], int]) -> PodTally:
        return table.listener(PodTally, lambda: PodTally(table, weigh), lambda tally: tally.weigh is weigh)

    def pod_added(self, table: NodeTable, pod: Pod, row: int) -> None:
        self.per_row[row] += self.weigh(pod)

    def pod_removed(self, table: NodeTable, pod: Pod, row: int) -> None:
        self.per_row[row] -= self.weigh(pod)


class NodeTable:
    """All nodes of a snapshot (or a fork of some of them) as columns."""

    def __init__(self, nodes: Sequence[Node], resources: ResourceIndex | None = None) -> None:
        self.nodes: list[Node] = list(nodes)
        self.names: list[str] = [n.name for n in self.nodes]
        self.row_of: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        n = len(self.nodes)
        self.res = resources.copy() if resources is not None else ResourceIndex()
        for node in self.nodes:
            for name in node.allocatable:
                if name != "pods" and is_tracked_resource(name):
                    self.res.add(name)
        alloc_t = np.zeros((len(self.res), n), dtype=I64)
        for i, node in enumerate(self.nodes):
            for name, amount in node.allocatable.items():
                col = self.res.get(name)
                if col is not None:
                    alloc_t[col, i] = amount
        self._set_resources(alloc_t, np.zeros((len(self.res), n), dtype=I64), np.zeros((2, n), dtype=I64))
        self.pod_count = np.zeros(n, dtype=I64)
        self.allowed_pods = np.array([node.allocatable.get("pods", 0) for node in self.nodes], dtype=I64)
        self.unschedulable = np.array([node.unschedulable for node in self.nodes], dtype=bool)
        self.pods: list[list[Pod]] = [[] for _ in range(n)]
        #: the lowest priority among each node's pods (NO_PODS when empty): preemption's quick test
        self.prio_min = np.full(n, NO_PODS, dtype=np.int64)
        self.ports: list[PortSet | None] = [None] * n
        #: (protocol, port) → rows with a pod using it: NodePorts looks only at those rows
        self.port_rows: dict[tuple[str, int], set[int]] = {}
        # rank of each row's name in byte order: the tie-break of --tie-break lowest-name
        order = sorted(range(n), key=lambda i: self.names[i].encode())
        self.name_rank = np.empty(n, dtype=np.int64)
        self.name_rank[order] = np.arange(n)
        self._labels: dict[str, LabelColumn] = {}
        self.taint_sets: list[tuple[Taint, ...]] = []
        #: a key of taint_sets that no other list ever gets (forks share the list and its key):
        #: caches per taint set use it, where id() could be reused by a later list
        self.taint_sets_key = next(_TAINT_SET_KEYS)
        ids: dict[tuple[Taint, ...], int] = {}
        self.taint_ids = np.empty(n, dtype=np.int32)
        for i, node in enumerate(self.nodes):
            tid = ids.get(node.taints)
            if tid is None:
                tid = ids[node.taints] = len(self.taint_sets)
                self.taint_sets.append(node.taints)
            self.taint_ids[i] = tid
        self.listeners: list[PodListener] = []
        #: rows of the source table (identity for a full table, the picked rows for a fork)
        self.source_rows = np.arange(n)

    def _set_resources(self, alloc_t: np.ndarray, requested_t: np.ndarray, nonzero_t: np.ndarray) -> None:
        """Resources are stored resource-major (``alloc_t[col]`` is one contiguous row), because
        filters and scores read one resource for many nodes: ``alloc_t[col].take(rows)`` is several
        times faster than gathering from a node-major matrix. ``alloc``/``requested``/``nonzero``
        are the [N, R] views of the same memory."""
        self.alloc_t, self.requested_t, self.nonzero_t = alloc_t, requested_t, nonzero_t
        self.alloc, self.requested, self.nonzero = alloc_t.T, requested_t.T, nonzero_t.T

    def __deepcopy__(self, memo: dict[int, Any]) -> NodeTable:
        # a fork of a run (Simulation.without) copies its table: the [N, R] views must be
        # views of the copy's own arrays, which copying each array on its own would not give
        new = NodeTable.__new__(NodeTable)
        memo[id(self)] = new
        views = ("alloc", "requested", "nonzero")
        new.__dict__.update({k: copy.deepcopy(v, memo) for k, v in self.__dict__.items() if k not in views})
        new._set_resources(new.alloc_t, new.requested_t, new.nonzero_t)
        return new

    def __len__(self) -> int:
        return len(self.names)

    def min_priority(self, rows: np.ndarray) -> np.ndarray:
        """The lowest pod priority on each of ``rows`` (NO_PODS for empty nodes)."""
        return np.asarray(self.prio_min[rows])

    # ------------------------------------------------------------------------------ labels

    def listener(self, kind: type[Listener], make: Callable[[], Listener],
                 matches: Callable[[Listener], bool] | None = None) -> Listener:
        """The table's listener of ``kind`` (that ``matches``), else ``make()``'s, registered: the
        indexes plugins keep in step with the table are built on first use, once per table."""
        for found in self.listeners:
            if isinstance(found, kind) and (matches is None or matches(found)):
                return found
        made = make()
        self.listeners.append(made)
        return made

    def labels(self, key: str) -> LabelColumn:
        col = self._labels.get(key)
        if col is None:
            col = self._labels[key] = LabelColumn.build(key, self.nodes)
        return col

    # ------------------------------------------------------------------------------ resources

    def column(self, name: str) -> int:
        """The column of a resource, adding an all-zero one if no node advertises it."""
        col = self.res.get(name)
        if col is None:
            col = self.res.add(name)
            pad = np.zeros((1, len(self)), dtype=I64)
            self._set_resources(np.vstack([self.alloc_t, pad]), np.vstack([self.requested_t, pad]), self.nonzero_t)
        return col

    def add_pod(self, pod: Pod, row: int) -> None:
        res = self.res
        for name, amount in pod.requests.items():
            col = res.get(name)
            if col is None:
                col = self.column(name)  # widens the arrays, so look it up before indexing
            self.requested_t[col, row] += amount
        nonzero = self.nonzero_t
        nonzero[CPU, row] += pod.nonzero_cpu
        nonzero[MEMORY, row] += pod.nonzero_mem
        self.pod_count[row] += 1
        self.pods[row].append(pod)
        if pod.priority < self.prio_min[row]:
            self.prio_min[row] = pod.priority
        if pod.host_ports:
            self._add_ports(pod, row)
        for listener in self.listeners:
            listener.pod_added(self, pod, row)

    def add_pods(self, pods: Sequence[Pod], rows: Sequence[int]) -> None:
        """add_pod of each pod on its row, in order, with each column summed over them at once: a
        snapshot's running pods, thousands, are placed so at every build."""
        if not pods:
            return
        cols: dict[str, int] = {}
        for pod in pods:
            for name in pod.requests:
                if name not in cols:
                    # may widen the arrays: every column first, in add_pod's order, then the sums
                    cols[name] = self.column(name)
        n = len(pods)
        at = np.asarray(rows, dtype=np.int64)
        for name, col in cols.items():
            np.add.at(self.requested_t[col], at, np.fromiter((p.requests.get(name, 0) for p in pods), I64, n))
        np.add.at(self.nonzero_t[CPU], at, np.fromiter((p.nonzero_cpu for p in pods), I64, n))
        np.add.at(self.nonzero_t[MEMORY], at, np.fromiter((p.nonzero_mem for p in pods), I64, n))
        np.add.at(self.pod_count, at, 1)
        np.minimum.at(self.prio_min, at, np.fromiter((p.priority for p in pods), np.int64, n))
        for pod, row in zip(pods, rows, strict=True):
            self.pods[row].append(pod)
            if pod.host_ports:
                self._add_ports(pod, row)
            for listener in self.listeners:
                listener.pod_added(self, pod, row)

    def _add_ports(self, pod: Pod, row: int) -> None:
        ports = self.ports[row]
        if ports is None:
            ports = self.ports[row] = PortSet()
        for p in pod.host_ports:
            ports.add(p)
            self.port_rows.setdefault((p.protocol, p.port), set()).add(row)

    def remove_pod(self, pod: Pod, row: int) -> None:
        plist = self.pods[row]
        for k, p in enumerate(plist):
            if p is pod:
                del plist[k]
                break
        else:
            raise KeyError(f"pod {pod.key} is not on node {self.names[row]}")
        for name, amount in pod.requests.items():
            col = self.column(name)
            self.requested[row, col] -= amount
        self.nonzero[row, CPU] -= pod.nonzero_cpu
        self.nonzero[row, MEMORY] -= pod.nonzero_mem
        self.pod_count[row] -= 1
        self.prio_min[row] = min((p.priority for p in plist), default=NO_PODS)
        ports = self.ports[row]
        if pod.host_ports and ports is not None:
            for hp in pod.host_ports:
                ports.remove(hp)
                key = (hp.protocol, hp.port)
                if key not in ports.used and key in self.port_rows:
                    self.port_rows[key].discard(row)
                    if not self.port_rows[key]:
                        del self.port_rows[key]
        for listener in self.listeners:
            listener.pod_removed(self, pod, row)

    # ------------------------------------------------------------------------------ forks

    def take(self, rows: Sequence[int] | np.ndarray) -> NodeTable:
        """A fork holding copies of some rows; changes to it never reach this table.

        Preemption and nominated-pod filtering evaluate a node with pods added or removed on
        such a fork, as kube-scheduler does on a cloned NodeInfo. Listeners are not copied.
        """
        rows = np.asarray(rows, dtype=np.int64)
        out = NodeTable.__new__(NodeTable)
        out.nodes = [self.nodes[i] for i in rows]
        out.names = [self.names[i] for i in rows]
        out.row_of = {name: i for i, name in enumerate(out.names)}
        out.res = self.res.copy()
        out._set_resources(self.alloc_t.take(rows, axis=1), self.requested_t.take(rows, axis=1),
                           self.nonzero_t.take(rows, axis=1))
        out.pod_count = self.pod_count[rows].copy()
        out.allowed_pods = self.allowed_pods[rows].copy()
        out.unschedulable = self.unschedulable[rows].copy()
        out.pods = [list(self.pods[i]) for i in rows]
        out.prio_min = self.prio_min[rows].copy()
        out.ports = [p.copy() if (p := self.ports[i]) is not None else None for i in rows]
        out.port_rows = {}
        for i, ports in enumerate(out.ports):
            for key in ports.used if ports is not None else ():
                out.port_rows.setdefault(key, set()).add(i)
        out.name_rank = self.name_rank[rows].copy()
        out._labels = {k: c.take(rows) for k, c in self._labels.items()}
        out.taint_sets = self.taint_sets
        out.taint_sets_key = self.taint_sets_key
        out.taint_ids = self.taint_ids[rows].copy()
        out.listeners = []
        out.source_rows = self.source_rows[rows].copy()
        return out

    def fork(self) -> NodeTable:
        return self.take(np.arange(len(self)))
