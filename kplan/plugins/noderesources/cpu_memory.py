"""The cpu and memory allocatable of the nodes a cycle scores, gathered once for both plugins
that score on them by default (NodeResourcesFit's LeastAllocated, BalancedAllocation).

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
    positive = bool((alloc > 0).all())
    state.data[_KEY] = (table, rows, alloc, positive)
    return alloc, positive
