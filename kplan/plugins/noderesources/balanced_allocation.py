"""NodeResourcesBalancedAllocation (plugins/noderesources/balanced_allocation.go, v1.34.1 and v1.36.3).

PreScore: Skip for pods that request none of the resources (best-effort pods).
Score (reference 4.2): ``int((1 - std) * 100)`` of the requested fractions (capped at 1) of the
configured resources, float64 as upstream; real requests, pod-level resources honoured.

From 1.36 (#135573, the release rule ``scores_balance_change``) the score is the change of that balance: the
balance with the pod and the balance of the node as it is (its requests only, over the same
resources) are each scored as above, and the score is ``50 + (50 + with - without) / 2`` in
int64 (both lie in [50, 100], so the division never truncates a negative number): 75 when the
pod leaves the balance as it was, towards 100 when it improves it, towards 50 when it worsens it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.cluster.resources import CPU, MEMORY, gather
from kplan.framework import signers
from kplan.framework.compiled import BalancedScore
from kplan.framework.cycle_state import CycleState
from kplan.framework.features import Gate
from kplan.framework.interfaces import MAX_NODE_SCORE, Handle, PreScorePlugin, ScorePlugin
from kplan.framework.status import OK, Status, skip
from kplan.model.objects import Pod
from kplan.model.parse import is_scalar_resource
from kplan.plugins.dra.extended import device_totals, extended_mapping
from kplan.plugins.helper import PluginBase, decode_rules
from kplan.plugins.noderesources.cpu_memory import CpuMemoryLoad, cpu_memory_allocatable
from kplan.plugins.noderesources.fit import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    _check_fields,
    decode_resource_specs,
    no_mapping,
    sign_pod_rule,
)

NAME = "NodeResourcesBalancedAllocation"


@dataclass
class BalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


def decode_args(raw: Mapping[str, Any] | None) -> BalancedAllocationArgs:
    raw = raw or {}
    _check_fields(raw, {"resources"}, "")
    resources = decode_resource_specs(raw.get("resources"), "resources") or DEFAULT_RESOURCES
    return BalancedAllocationArgs(tuple(ResourceSpec(r.name, r.weight or 1) for r in resources))


def validate_args(args: BalancedAllocationArgs) -> list[str]:
    errs = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources):
        # upstream reports a duplicate name before a wrong weight of the same entry
        if r.name in seen:
            errs.append(f'resources[{i}].name: Duplicate value: "{r.name}"')
        seen.add(r.name)
        if r.weight != 1:
            errs.append(f"resources[{i}].weight: Invalid value: {r.weight}: must be 1")
    return errs


@dataclass(frozen=True)
class BalancedAllocationRules:
    """NodeResourcesBalancedAllocation's release rules (framework/release_tables.py)."""

    #: Score is the change of balance the pod makes, not the balance it leaves (1.36, #135573)
    scores_balance_change: bool
    #: with DRAExtendedResource on, Score counts a DeviceClass-served resource from the node's
    #: devices where its allocatable lacks it, and SignPod refuses only the pods that request such
    #: a resource (1.36, #134058, as NodeResourcesFit); before, SignPod refuses every pod with the
    #: gate on
    extended_resources_from_devices: bool


class NodeResourcesBalancedAllocation(PluginBase, PreScorePlugin, ScorePlugin):
    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py), as the release's rule has it
        (picked in the constructor, as NodeResourcesFit's)."""
        return self._sign(pod)

    def __init__(self, args: BalancedAllocationArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        self.rules = decode_rules(BalancedAllocationRules, handle, NAME)
        delegates = self.rules.extended_resources_from_devices and handle.release.enabled(
            Gate.DRA_EXTENDED_RESOURCE)
        #: the extended resources DRA devices may count for in Score (_served_mapping), or none
        self._device_mapping: Callable[[], Mapping[str, Any]] = self._served_mapping if delegates else no_mapping
        #: SignPod's rule at this release
        self._sign = sign_pod_rule(self.rules.extended_resources_from_devices, handle.release,
                                   self._device_mapping)
        #: the default resources, cpu then memory (_cpu_memory)
        self._cpu_memory = tuple(r.name for r in args.resources) == ("cpu", "memory")
        self._load = CpuMemoryLoad()
        #: the release's Score: of the balance, or of its change (both: the general path, and the
        #: default resources where every node has both)
        self._scores, self._cpu_memory_score = (
            (self._balance_change, self._cpu_memory_balance_change) if self.rules.scores_balance_change
            else (self._balance, self._cpu_memory_balance))

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        if all(pod.requests.get(r.name, 0) == 0 for r in self.args.resources):
            return skip(NAME)
        return OK

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        if self._cpu_memory:
            alloc, positive = cpu_memory_allocatable(state, table, rows)
            if positive:
                return self._cpu_memory_score(pod, table, rows, alloc)
        cols, wanted, names = [], [], []
        mapping = self._device_mapping()
        for spec in self.args.resources:
            q = pod.requests.get(spec.name, 0)
            if q == 0 and is_scalar_resource(spec.name):
                continue
            col = table.res.get(spec.name)
            if col is None:
                if spec.name not in mapping:
                    continue
                col = table.column(spec.name)
            cols.append(col)
            wanted.append(q)
            names.append(spec.name)
        n = len(rows)
        if not cols:
            # no resource to weigh: a standard deviation of 0 (100; 75 for the change of nothing)
            none = np.zeros((0, n), dtype=np.int64)
            return self._scores(none, lambda: none, none, none != 0)
        alloc = gather(table.alloc_t, cols, rows)      # resources × nodes
        node_load = gather(table.requested_t, cols, rows)
        dra = self.handle.snapshot.dra
        if mapping and dra is not None:
            alloc, node_load = alloc.copy(), node_load.copy()
            device_totals(dra, mapping, names, table, rows, alloc, node_load, NAME)
        req = node_load + np.array(wanted, dtype=np.int64)[:, None]
        return self._scores(req, lambda: node_load, alloc, alloc != 0)

    def compiled_score(self, pod: Pod, table: NodeTable, weight: int) -> BalancedScore | None:
        """Score's inputs for the compiled cycle: the default resources (cpu, then memory) only;
        with the release's change-of-balance rule, the nodes' own balance per row as the Python
        path reads it (BalanceWithoutPod)."""
        if not self._cpu_memory:
            return None
        change = self.rules.scores_balance_change
        return BalancedScore(change, pod.requests.get("cpu", 0), pod.requests.get("memory", 0),
                             BalanceWithoutPod.of(table).per_row if change else None, weight)

    def _balance(self, requested: np.ndarray, allocated: Callable[[], np.ndarray], alloc: np.ndarray,
                 live: np.ndarray | None) -> np.ndarray:
        """balancedResourceScorer: the score of the balance with the pod (``requested``); the
        node's own requests (``allocated()``, gathered like ``requested``) are what
        ``_balance_change`` compares it with. ``live`` marks the resources each node has (None: all)."""
        return balance_score(requested, alloc, live)

    def _served_mapping(self) -> Mapping[str, Any]:
        """The extended resources DRA devices may count for in Score where the release has them
        (1.36 with DRAExtendedResource on): a DeviceClass-served resource counts from the node's
        devices where its allocatable lacks it (#134058, as NodeResourcesFit)."""
        dra = self.handle.snapshot.dra
        if dra is None or not dra.classes:
            return {}
        return extended_mapping(dra)

    def _cpu_memory_balance(self, pod: Pod, table: NodeTable, rows: np.ndarray, alloc: np.ndarray) -> np.ndarray:
        """score for the default resources (cpu, then memory) where every node has both: the
        general path's two-resource case, without looking the columns up."""
        req = self._load.with_request(table.requested_t, rows, pod.requests.get("cpu", 0),
                                      pod.requests.get("memory", 0))
        return self._scores(req, lambda: table.requested_t[CPU:MEMORY + 1].take(rows, axis=1), alloc, None)

    def _balance_change(self, requested: np.ndarray, allocated: Callable[[], np.ndarray], alloc: np.ndarray,
                        live: np.ndarray | None) -> np.ndarray:
        """The score of the change of balance (1.36, #135573)."""
        with_pod = balance_score(requested, alloc, live)
        without_pod = balance_score(allocated(), alloc, live)
        return _balance_change(with_pod, without_pod)

    def _cpu_memory_balance_change(self, pod: Pod, table: NodeTable, rows: np.ndarray,
                                   alloc: np.ndarray) -> np.ndarray:
        """The default resources where every node has both: the balance without the pod is the
        node's own, kept per row as pods come and go (BalanceWithoutPod), so only the balance
        with the pod is computed here."""
        req = self._load.with_request(table.requested_t, rows, pod.requests.get("cpu", 0),
                                      pod.requests.get("memory", 0))
        with_pod = balance_score(req, alloc, None)
        return _balance_change(with_pod, BalanceWithoutPod.of(table).per_row.take(rows))


def _balance_change(with_pod: np.ndarray, without_pod: np.ndarray) -> np.ndarray:
    """1.36's score of the change: 50 plus half the balance gained."""
    half = MAX_NODE_SCORE // 2
    return np.asarray(half + (half + with_pod - without_pod) // 2)


class BalanceWithoutPod:
    """Per row of one NodeTable, ``balance_score`` of the node's own cpu and memory requests
    on its allocatable: what 1.36's score compares the balance with the pod to. It depends on
    the node alone, so it is kept per row and recomputed only on the row a pod is bound to or
    removed from (a table listener), not gathered and recomputed for every scored node of every
    cycle. Rows without positive cpu and memory allocatable hold 0: the score reads this only
    where both are positive (the _cpu_memory_score path)."""

    __slots__ = ("per_row",)

    def __init__(self, table: NodeTable) -> None:
        alloc = table.alloc_t[CPU:MEMORY + 1]
        rows = np.flatnonzero((alloc > 0).all(axis=0))
        self.per_row = np.zeros(len(table), dtype=np.int64)
        self.per_row[rows] = balance_score(table.requested_t[CPU:MEMORY + 1].take(rows, axis=1),
                                           alloc.take(rows, axis=1), None)

    @staticmethod
    def of(table: NodeTable) -> BalanceWithoutPod:
        return table.listener(BalanceWithoutPod, lambda: BalanceWithoutPod(table))

    def pod_added(self, table: NodeTable, pod: Pod, row: int) -> None:
        self.per_row[row] = balance_of_row(table, row)

    def pod_removed(self, table: NodeTable, pod: Pod, row: int) -> None:
        self.per_row[row] = balance_of_row(table, row)


def balance_of_row(table: NodeTable, row: int) -> int:
    """``balance_score`` of one node's own cpu and memory requests, in Python floats: the same
    IEEE double operations numpy applies to each element (int64 to float64, true division,
    minimum with 1.0, the halved distance, truncation to an integer). 0 where cpu or memory
    allocatable is not positive (never read)."""
    # (ndarray.item gives the element as a Python int, without a numpy scalar in between)
    alloc, requested = table.alloc_t, table.requested_t
    a_cpu, a_mem = alloc.item(CPU, row), alloc.item(MEMORY, row)
    if a_cpu <= 0 or a_mem <= 0:
        return 0
    f_cpu = min(float(requested.item(CPU, row)) / float(a_cpu), 1.0)
    f_mem = min(float(requested.item(MEMORY, row)) / float(a_mem), 1.0)
    std = abs((f_cpu - f_mem) / 2)
    return int((1 - std) * MAX_NODE_SCORE)


def balance_score(load: np.ndarray, alloc: np.ndarray, live: np.ndarray | None) -> np.ndarray:
    """balancedResourceScore per node (column): ``int((1 - std) * 100)`` of the fractions
    ``load / alloc`` capped at 1, over the resources the node has (``live``; None: all)."""
    all_live = live is None or bool(live.all())
    if live is None or all_live:
        fractions = np.minimum(load / alloc, 1.0)
    else:
        fractions = np.minimum(load / np.where(live, alloc, 1), 1.0)
    if len(load) == 2 and all_live:
        # the usual cpu + memory case: std of two values is half their distance
        std = np.abs((fractions[0] - fractions[1]) / 2)
    else:
        std = _std_of_live(fractions, alloc != 0 if live is None else live)
    return np.asarray(((1 - std) * MAX_NODE_SCORE).astype(np.int64))


def _std_of_live(fractions: np.ndarray, live: np.ndarray) -> np.ndarray:
    """Per node (column), the population standard deviation of the fractions of the resources
    the node has (allocatable != 0), as upstream computes it: half the distance for two, the
    float64 sums in resource order for more, 0 for fewer. Resources a node lacks count as 0.0
    in the sums, which leaves every sum bit for bit what the sum over the rest gives."""
    count = live.sum(axis=0)
    f = np.where(live, fractions, 0.0)
    std = np.zeros(live.shape[1], dtype=np.float64)
    two = count == 2
    if two.any():
        # the two live fractions: the first live one and the last
        cols = np.arange(live.shape[1])
        first = f[live.argmax(axis=0), cols]
        second = f[len(live) - 1 - live[::-1].argmax(axis=0), cols]
        std[two] = np.abs((first[two] - second[two]) / 2)
    more = count > 2
    if more.any():
        total = np.zeros(live.shape[1], dtype=np.float64)
        for row in f:
            total = total + row
        mean = total / np.maximum(count, 1)
        acc = np.zeros(live.shape[1], dtype=np.float64)
        for row, has in zip(f, live, strict=True):
            acc = acc + np.where(has, (row - mean) * (row - mean), 0.0)
        std[more] = np.sqrt(acc[more] / count[more])
    return std
