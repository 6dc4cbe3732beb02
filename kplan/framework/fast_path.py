"""The one seam behind which filtering with nominated pods and preemption's dry run take their
shortcuts (Framework.fast_path, chosen once per cycle).

Upstream copies a node (and clones the cycle state) to filter it with other pods added or
removed: nominated pods in RunFilterPluginsWithNominatedPods, victims in SelectVictimsOnNode.
Where, in a cycle, the only filters that read a node's pods are the resource filter (a
BatchReprieveFilter: NodeResourcesFit) and selective-state filters (PodTopologySpread,
InterPodAffinity), kplan tells the same verdicts without copies: the pods are load to the one
and counts to the others. ``FastPath`` says which filters those are, and holds the shortcuts
that read them; the readable paths (Framework.run_filter_plugins_with_nominated_pods,
Evaluator.select_victims_on_node) take them only through it, and the tests compare both with
the seam closed (``Framework.fast_path`` answering None).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import BatchReprieveFilter, CountingStateFilter, SelectiveStateFilter
from kplan.framework.outcome import FilterOutcome
from kplan.framework.status import Verdicts

if TYPE_CHECKING:
    from kplan.cluster.node_table import NodeTable
    from kplan.framework.runtime import Nominator
    from kplan.model.objects import Pod


@dataclass(frozen=True)
class FastPath:
    """Which filters read the nodes' pods in one cycle: the resource filter (at index ``at`` of
    Framework.filter_plugins) and the selective-state filters, with their indexes. The leading
    ``fixed_count`` filters read only node attributes (no pod added or removed changes their
    verdict); every other filter was skipped at PreFilter, and so was every PreFilterExtensions
    plugin that is not one of the selective filters."""

    resource: BatchReprieveFilter
    at: int
    selective: tuple[tuple[int, SelectiveStateFilter], ...]
    fixed_count: int
    #: the selective filters that take other pods as counts (CountingStateFilter), by name
    counting: Mapping[str, CountingStateFilter]

    def filter_with_nominated(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                              out: FilterOutcome, nominator: Nominator) -> np.ndarray:
        """RunFilterPluginsWithNominatedPods' pass with the nominated pods added, without
        copies: on each node of ``rows`` with pods nominated that the pod yields to, the
        resource filter with their requests as load and the selective filters with them counted
        (filter_with_pods); that pass's rejection overrules ``out`` (the pass without them). A
        node a leading node-attribute filter rejects keeps that verdict, which no pod changes.
        Returns the positions (of ``rows``) that must be filtered on copies instead: nodes
        whose nominated pods a selective filter that cannot count them would count."""
        load = nominator.load(pod, table, rows)
        at = load.positions
        plugin = out.plugins.take(at)
        keep = ~((plugin >= 0) & (plugin < self.fixed_count))
        at, pods = at[keep], load.pods[keep]
        requests = {name: column[keep] for name, column in load.requests.items()}
        if not len(at):
            return at
        sub = rows.take(at)
        verdicts = [(self.at, self.resource.filter_with_load(state, pod, table, sub, pods, requests))]
        copies = np.zeros(len(at), dtype=bool)
        if self.selective:
            found = nominator.classes(pod, table, sub)
            counted, copies = self._selective_verdicts(state, pod, table, sub, found.examples, found.spread(len(at)))
            verdicts += counted
        first = FilterOutcome.first_rejections(sub, verdicts)
        if not copies.any():
            out.overrule(at, first)
            return np.zeros(0, dtype=np.int64)
        out.overrule(at[~copies], first.take(~copies))
        return at[copies]

    def selective_with_counts(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                              examples: Sequence[Pod], counts: np.ndarray) -> tuple[FilterOutcome, np.ndarray]:
        """The selective filters on ``rows`` as if ``counts[k, j]`` pods like ``examples[j]``
        were added to the node of ``rows[k]``: each row's first rejection among them (plugins
        index filter_plugins), and the positions where that cannot be told without a copy."""
        verdicts, copies = self._selective_verdicts(state, pod, table, rows, examples, counts)
        return FilterOutcome.first_rejections(rows, verdicts), copies

    def selective_as_is(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> FilterOutcome:
        """The selective filters on ``rows`` as the nodes are: each row's first rejection."""
        return FilterOutcome.first_rejections(rows, [(k, f.filter(state, pod, table, rows)) for k, f in self.selective])

    def _selective_verdicts(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                            examples: Sequence[Pod], counts: np.ndarray) -> tuple[list[tuple[int, Verdicts]], np.ndarray]:
        """Each selective filter (with its index) on ``rows`` as if ``counts[k, j]`` pods like
        ``examples[j]`` were added to the node of ``rows[k]`` (filter_with_pods), and the
        positions where that cannot be told without a copy: a filter that cannot take counts
        counts some of those pods there (elsewhere its verdict is the same with them or
        without, and is the one given)."""
        copies = np.zeros(len(rows), dtype=bool)
        verdicts: list[tuple[int, Verdicts]] = []
        for k, selective in self.selective:
            counting = self.counting.get(selective.name)
            v = counting.filter_with_pods(state, pod, table, rows, examples, counts) if counting else None
            if v is None:
                touches = np.array([selective.affected_by(state, pod, p) for p in examples], dtype=bool)
                if touches.any():
                    copies |= (counts[:, touches] != 0).any(axis=1)
                v = selective.filter(state, pod, table, rows)
            verdicts.append((k, v))
        return verdicts, copies
