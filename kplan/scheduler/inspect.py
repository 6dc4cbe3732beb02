"""Beyond upstream: every filter plugin's verdict on every node, for ``kplan explain``.

kube-scheduler stops at the first plugin that rejects a node; to tell users everything that
stands in the way, this runs each Filter plugin on its own over all nodes, after the same
PreFilter step. Nominated pods are not added here (the cycle's own verdicts, which do include
them, are in its Diagnosis).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kplan.framework.cycle_state import CycleState
from kplan.framework.runtime import Framework
from kplan.framework.status import Code, Status
from kplan.model.objects import Pod


@dataclass
class PluginVerdicts:
    plugin: str
    #: per table row: Code value (0 = passes), and reason tuple id
    codes: np.ndarray
    reasons: np.ndarray
    skipped: bool = False


@dataclass
class FilterInspection:
    pre_filter: Status
    plugins: list[PluginVerdicts]

    def failing(self, row: int) -> list[PluginVerdicts]:
        return [p for p in self.plugins if not p.skipped and p.codes[row] != 0]


def inspect_filters(fw: Framework, pod: Pod) -> FilterInspection:
    """PreFilter, then every Filter plugin independently over all nodes of the current snapshot."""
    table = fw.handle.snapshot.table
    state = CycleState()
    _, status, _ = fw.run_pre_filter(state, pod)
    rows = np.arange(len(table), dtype=np.int64)
    out: list[PluginVerdicts] = []
    for pl in fw.filter_plugins:
        if not status.ok or pl.name in state.skip_filter:
            out.append(PluginVerdicts(pl.name, np.zeros(len(rows), np.int8), np.zeros(len(rows), np.int32), True))
            continue
        v = pl.filter(state, pod, table, rows)
        out.append(PluginVerdicts(pl.name, v.codes, v.reasons))
    return FilterInspection(status, out)


def feasible_count(fw: Framework, pod: Pod) -> int:
    """How many nodes pass every filter for ``pod`` now (nominated pods not counted)."""
    table = fw.handle.snapshot.table
    state = CycleState()
    _, status, _ = fw.run_pre_filter(state, pod)
    if not status.ok:
        return 0
    out = fw.run_filters(state, pod, table, np.arange(len(table), dtype=np.int64))
    return int((out.codes == Code.SUCCESS).sum())
