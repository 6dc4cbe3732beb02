"""Beyond upstream: every filter plugin's verdict on every node, for ``kplan explain``.

kube-scheduler stops at the first plugin that rejects a node; to tell users everything that
stands in the way, this runs each Filter plugin on its own over all nodes, after the same
PreFilter step. Nominated pods are not added here (the cycle's own verdicts, which do include
them, are in its Diagnosis). ``feasible_mask`` is the scheduler's own filter pass (nominated pods
included) over every node, for a pod as given: remediation re-runs it on modified pods.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework.cycle_state import CycleState
from kplan.framework.runtime import Framework, Nominator
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
    #: the PreFilter plugins' restriction of the nodes to examine (None: all nodes)
    node_names: frozenset[str] | None = None

    def failing(self, row: int) -> list[PluginVerdicts]:
        return [p for p in self.plugins if not p.skipped and p.codes[row] != 0]


def plugin_verdicts(fw: Framework, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray
                    ) -> list[PluginVerdicts]:
    """Every Filter plugin on its own over ``rows`` (after PreFilter has filled ``state``)."""
    out: list[PluginVerdicts] = []
    for pl in fw.filter_plugins:
        if pl.name in state.skip_filter:
            out.append(PluginVerdicts(pl.name, np.zeros(len(rows), np.int8), np.zeros(len(rows), np.int32), True))
            continue
        v = pl.filter(state, pod, table, rows)
        out.append(PluginVerdicts(pl.name, v.codes, v.reasons))
    return out


def inspect_filters(fw: Framework, pod: Pod) -> FilterInspection:
    """PreFilter, then every Filter plugin independently over all nodes of the current snapshot."""
    table = fw.handle.snapshot.table
    state = CycleState()
    pre, status, _ = fw.run_pre_filter(state, pod)
    rows = np.arange(len(table), dtype=np.int64)
    names = pre.node_names if pre is not None else None
    if not status.ok:
        skipped = [PluginVerdicts(pl.name, np.zeros(len(rows), np.int8), np.zeros(len(rows), np.int32), True)
                   for pl in fw.filter_plugins]
        return FilterInspection(status, skipped, names)
    return FilterInspection(status, plugin_verdicts(fw, state, pod, table, rows), names)


def feasible_mask(fw: Framework, pod: Pod, nominator: Nominator | None = None) -> np.ndarray:
    """Per table row: does the pod pass PreFilter and every filter there (nominated pods counted)?"""
    table = fw.handle.snapshot.table
    mask = np.zeros(len(table), dtype=bool)
    state = CycleState()
    pre, status, _ = fw.run_pre_filter(state, pod)
    if not status.ok:
        return mask
    if pre is not None and pre.node_names is not None:
        rows = np.array(sorted(r for n in pre.node_names if (r := table.row_of.get(n)) is not None), dtype=np.int64)
    else:
        rows = np.arange(len(table), dtype=np.int64)
    if nominator:
        out = fw.run_filter_plugins_with_nominated_pods(state, pod, table, rows, nominator)
    else:
        out = fw.run_filters(state, pod, table, rows)
    mask[rows[out.codes == Code.SUCCESS]] = True
    return mask
