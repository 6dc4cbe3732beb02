"""The compiled scheduling cycle (issue 49): for the pods whose active plugins it covers, the
cycle's Filter pass over the nodes and its Score, NormalizeScore and host selection are each one
call into kplan._kernel (kernel/src/lib.rs, Rust through PyO3) over the node table's numpy
columns, in place of tens of numpy calls through the per-plugin Python.

It is a fast path behind a seam, never a second source of rules. The per-plugin Python
(kplan/plugins/) stays the reference: explain, custom plugins and every pod or profile the
kernel does not cover use it, and tests/scheduler/test_compiled.py runs generated clusters,
every public scenario and the differential sample through both paths and compares them.

What the kernel covers:

- **Filter**: after PreFilter, with no PreFilter node restriction and no nominated pod in the
  run, when every Filter plugin after the leading node-attribute ones (FixedInputFilter: their
  verdicts on every node are computed once per pod signature by the framework) was skipped at
  PreFilter but NodeResourcesFit, and NodeResourcesFit leaves no checked resource to DRA. A pod
  no node passes goes to the Python path afresh (nothing was changed), which tells why.
- **Score**: after PreScore (Python, with the feasible nodes), when NodeResourcesFit scores
  with LeastAllocated or MostAllocated on cpu and memory and BalancedAllocation on cpu and
  memory (or either is not active): the kernel computes those two, takes the raw scores of the
  FixedInputScore plugins (TaintToleration, NodeAffinity, ImageLocality: every node's, computed
  once per node table and pod signature by the plugin itself) and normalizes them, leaves out
  the IdleScore plugins that score nothing (VolumeBinding, DynamicResources without volumes or
  claims), and adds in every other plugin's scores as that plugin's own Python gives them
  (Framework.score_with: PodTopologySpread, InterPodAffinity, custom plugins), then selects
  the host. Scores out of range are left to the Python path, which words the error.

Chosen once per framework (``CompiledCycle.of``) from the profile's plugin classes, and per pod
from what PreFilter and PreScore skipped. ``kernel_switch.use_kernel(False)`` (the CLI's ``KPLAN_KERNEL=python``)
turns it off for the process; a build without the extension (no Rust toolchain) runs the Python
path with the same results.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kplan.framework.compiled import BalancedScore, FitScore
from kplan.framework.interfaces import FixedInputScore, IdleScore, ScorePlugin
from kplan.framework.registry import in_tree
from kplan.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kplan.plugins.noderesources.fit import NodeResourcesFit
from kplan.scheduler import kernel_switch

if TYPE_CHECKING:
    from kplan.cluster.node_table import NodeTable
    from kplan.framework.cycle_state import CycleState
    from kplan.framework.runtime import Framework
    from kplan.model.objects import Pod

_kernel: Any
try:
    from kplan import _kernel
except ImportError:  # built without a Rust toolchain: the Python path answers
    _kernel = None

#: raw scores of every node kept per (plugin, signature) before starting afresh: 256 of 5,000
#: nodes are 10 MiB
_RAW_KEPT = 256


def kernel_available() -> bool:
    """Whether the compiled kernel is built and turned on (kernel_switch.use_kernel)."""
    return _kernel is not None and kernel_switch.enabled


class CompiledCycle:
    """The compiled cycle of one framework (profile)."""

    def __init__(self, fw: Framework) -> None:
        self.fw = fw
        #: NodeResourcesFit among the Filter plugins, and its index there (-1: not enabled)
        self.fit: NodeResourcesFit | None = None
        self.fit_at = -1
        for k, p in enumerate(fw.filter_plugins):
            if type(p) is NodeResourcesFit:
                self.fit, self.fit_at = p, k
        #: the Filter plugins after the leading node-attribute ones but NodeResourcesFit: the
        #: kernel filters a pod only when PreFilter skipped them all
        self.must_skip = frozenset(p.name for k, p in enumerate(fw.filter_plugins)
                                   if k >= fw.fixed_filter_count and k != self.fit_at)
        # the Score plugins by what the kernel makes of them, with their weights (recognised here
        # once: a runtime protocol check costs tens of microseconds)
        self.fit_scorer: tuple[NodeResourcesFit, int] | None = None
        self.balanced_scorer: tuple[NodeResourcesBalancedAllocation, int] | None = None
        self.idle_scorers: list[tuple[IdleScore, int]] = []
        self.fixed_scorers: list[tuple[FixedInputScore, int, int]] = []
        #: the others (custom plugins among them): their scores come ready from their own
        #: Python (Framework.score_with), the kernel adds them in
        self.ready_scorers: list[tuple[ScorePlugin, int]] = []
        for pl in fw.score_plugins:
            weight = fw.weights[pl.name]
            if type(pl) is NodeResourcesFit:
                self.fit_scorer = (pl, weight)
            elif type(pl) is NodeResourcesBalancedAllocation:
                self.balanced_scorer = (pl, weight)
            elif not in_tree(pl):
                # only kplan's own plugins are trusted to keep the protocols' promises
                self.ready_scorers.append((pl, weight))
            elif isinstance(pl, IdleScore):
                self.idle_scorers.append((pl, weight))
            elif isinstance(pl, FixedInputScore):
                self.fixed_scorers.append((pl, weight, int(pl.normalization)))
            else:
                self.ready_scorers.append((pl, weight))
        #: per node table, (plugin name, score signature) → raw scores of every row
        self._raw: weakref.WeakKeyDictionary[NodeTable, dict[tuple[str, Hashable], np.ndarray]] = (
            weakref.WeakKeyDictionary())
        #: the table asked about last and its entry of _raw (most runs score on one table)
        self._raw_table: NodeTable | None = None
        self._raw_of_table: dict[tuple[str, Hashable], np.ndarray] = {}

    @classmethod
    def of(cls, fw: Framework) -> CompiledCycle | None:
        """The framework's compiled cycle, or None when the kernel is not available."""
        if not kernel_available():
            return None
        return cls(fw)

    # ------------------------------------------------------------------ filter

    def covers_filter(self, state: CycleState) -> bool:
        """Whether every Filter plugin after the leading node-attribute ones that PreFilter did
        not skip is the kernel's NodeResourcesFit."""
        return self.must_skip <= state.skip_filter

    def find_feasible(self, state: CycleState, pod: Pod, table: NodeTable, start: int, k: int
                      ) -> tuple[np.ndarray, int] | None:
        """Scheduler._find_feasible over every node from ``start``: (the feasible rows in the
        order visited, nodes processed), or None where the Python path must answer (not
        covered, or no node feasible: the Python path then records why)."""
        fw = self.fw
        if not self.covers_filter(state):
            return None
        fixed = None
        if fw.fixed_filter_count:
            # the first pod of a signature finds none yet; asking again computes them for every
            # node (the Python path would filter only the nodes it visits, with the same verdicts)
            fixed = fw.fixed_codes(state, pod, table)
            if fixed is None:
                fixed = fw.fixed_codes(state, pod, table)
            assert fixed is not None
        cols: list[int] = []
        wanted: list[int] = []
        check_fit = self.fit is not None and self.fit.name not in state.skip_filter
        if check_fit:
            assert self.fit is not None
            spec = self.fit.compiled_filter(state, pod, table)
            if spec is None:
                return None
            cols, wanted = spec.cols, spec.wanted
        n = len(table)
        out = np.empty(max(min(k, n), 1), dtype=np.int64)
        found, processed = _kernel.find_feasible(n, fixed, table.pod_count, table.allowed_pods, table.alloc_t,
                                                 table.requested_t, cols, wanted, check_fit, start, k, out)
        if found == 0:
            return None
        return out[:found], processed

    # ------------------------------------------------------------------ score

    def score(self, state: CycleState, pod: Pod, table: NodeTable, feasible: np.ndarray, lowest_name: bool
              ) -> tuple[np.ndarray, int, int] | None:
        """Framework.run_score and the host selection after PreScore: (totals per feasible row,
        the chosen position, how many positions tie at the top: with the random tie-break the
        caller draws among them), or None where the Python path must answer."""
        skip = state.skip_score
        fw = self.fw
        ready: list[_Ready] = []
        for pl, weight in self.ready_scorers:
            if pl.name not in skip:
                ready.append(_Ready(fw.score_with(pl, state, pod, table, feasible)[1], weight))
        for idle, weight in self.idle_scorers:
            if idle.name not in skip and not idle.scores_nothing(state, pod):
                ready.append(_Ready(fw.score_with(idle, state, pod, table, feasible)[1], weight))
        if any(r.scores.dtype != np.int64 or not r.scores.flags.c_contiguous for r in ready):
            return None
        fit: FitScore | None = None
        if self.fit_scorer is not None and self.fit_scorer[0].name not in skip:
            fit = self.fit_scorer[0].compiled_score(pod, self.fit_scorer[1])
            if fit is None:
                return None
        balanced: BalancedScore | None = None
        if self.balanced_scorer is not None and self.balanced_scorer[0].name not in skip:
            balanced = self.balanced_scorer[0].compiled_score(pod, table, self.balanced_scorer[1])
            if balanced is None:
                return None
        fixed = [_FixedRaw(self._raw_scores(state, pod, table, pl), normalization, weight)
                 for pl, weight, normalization in self.fixed_scorers if pl.name not in skip]
        m = len(feasible)
        totals = np.empty(m, dtype=np.int64)
        status, best, ties = _kernel.score(len(table), feasible, m, table.alloc_t, table.requested_t, table.nonzero_t,
                                           fit, balanced, fixed, ready, totals,
                                           table.name_rank if lowest_name else None)
        if status != _kernel.OK:
            return None
        return totals, best, ties

    def _raw_scores(self, state: CycleState, pod: Pod, table: NodeTable, plugin: FixedInputScore) -> np.ndarray:
        """The plugin's raw scores of every row for the pod's signature, computed by the
        plugin itself once per node table and signature."""
        if table is self._raw_table:
            per_table = self._raw_of_table
        else:
            found = self._raw.get(table)
            per_table = self._raw[table] = {} if found is None else found
            self._raw_table, self._raw_of_table = table, per_table
        key = (plugin.name, plugin.score_signature(pod))
        raw = per_table.get(key)
        if raw is None:
            if len(per_table) >= _RAW_KEPT:
                per_table.clear()
            raw = np.ascontiguousarray(plugin.score(state, pod, table, np.arange(len(table))), dtype=np.int64)
            raw.flags.writeable = False
            per_table[key] = raw
        return raw


class _Ready(NamedTuple):
    """The kernel's ReadyScore: a plugin's normalized scores of the feasible rows, and its weight."""

    scores: np.ndarray
    weight: int


class _FixedRaw(NamedTuple):
    """The kernel's FixedScore: a plugin's raw scores of every row, its NormalizeScore and weight."""

    raw: np.ndarray
    normalization: int
    weight: int
