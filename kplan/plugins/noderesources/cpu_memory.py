"""The cpu and memory allocatable of the nodes a cycle scores, gathered once for both plugins
that score on them by default (NodeResourcesFit's LeastAllocated, BalancedAllocation), and the
nodes' cpu and memory with the pod's request added, which each of them reads.

Not an upstream file: upstream reads each NodeInfo's allocatable in each plugin, which costs
nothing there; here each read is a gather over the scored rows.
"""

from __future__ import annotations

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.cluster.resources import CPU, MEMORY
from kplan.framework.cycle_state import CycleState

#: the cycle state's (table, rows, allocatable, every one positive) of the last gather
_KEY = "kplan/CpuMemoryAllocatable"


def cpu_memory_allocatable(state: CycleState, table: NodeTable, rows: np.ndarray) -> tuple[np.ndarray, bool]:
    """``table.alloc_t[[cpu, memory]][:, rows]`` (read-only) and whether every value is
    positive, gathered once per cycle for the same table and rows object: the state holds both,
    so neither can be freed and another array given its identity while the entry lives.
    Allocatable does not change within a cycle."""
    kept = state.data.get(_KEY)
    if kept is not None and kept[0] is table and kept[1] is rows:
        return kept[2], kept[3]
    alloc = table.alloc_t[CPU:MEMORY + 1].take(rows, axis=1)
    alloc.flags.writeable = False
    positive = bool(np.minimum.reduce(alloc, axis=None) > 0) if alloc.size else True
    state.data[_KEY] = (table, rows, alloc, positive)
    return alloc, positive


#: distinct requests whose columns are kept before starting afresh
_KEPT_PER_REQUEST = 4096


class CpuMemoryLoad:
    """The nodes' cpu and memory with a pod's request added, the request's column kept per
    distinct (cpu, memory) request (replicas ask for the same)."""

    __slots__ = ("_wanted",)

    def __init__(self) -> None:
        self._wanted: dict[tuple[int, int], np.ndarray] = {}

    def with_request(self, per_resource: np.ndarray, rows: np.ndarray, cpu: int, memory: int) -> np.ndarray:
        """``per_resource[[cpu, memory]][:, rows]`` (a new array) plus the request."""
        key = (cpu, memory)
        wanted = self._wanted.get(key)
        if wanted is None:
            if len(self._wanted) >= _KEPT_PER_REQUEST:
                self._wanted.clear()
            wanted = self._wanted[key] = np.array(key, dtype=np.int64)[:, None]
        load = per_resource[CPU:MEMORY + 1].take(rows, axis=1)
        load += wanted
        return load
