"""The framework of one profile: its plugins per extension point and how they are run
(pkg/scheduler/framework/runtime/framework.go).

Filtering answers for many nodes at once: each Filter plugin sees only the nodes every earlier
plugin passed, so each node keeps the verdict of its first rejecting plugin, as upstream.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from kplan.framework.config import ProfileSpec
from kplan.framework.cycle_state import CycleState
from kplan.framework.fast_path import FastPath
from kplan.framework.features import Gate
from kplan.framework.interfaces import (
    MAX_NODE_SCORE,
    BatchReprieveFilter,
    BindPlugin,
    CountingStateFilter,
    EnqueueExtensions,
    FilterPlugin,
    FixedInputFilter,
    Handle,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    RejectionExplainer,
    ReservePlugin,
    ScoreExplainer,
    ScoreExtensions,
    ScorePlugin,
    SelectiveStateFilter,
)
from kplan.framework.outcome import FilterOutcome
from kplan.framework.pod_classes import PodClasses
from kplan.framework.registry import Registry, in_tree
from kplan.framework.signers import SignPlugin
from kplan.framework.status import OK, Code, Status

if TYPE_CHECKING:
    from kplan.cluster.node_table import NodeTable
    from kplan.model.objects import Pod



class Nominator(dict[str, list["Pod"]], PodClasses):
    """node name → pods nominated to it, in nomination order (backend/queue/nominator.go)."""

    def __init__(self) -> None:
        super().__init__()
        self.node_of: dict[str, str] = {}
        #: per node table asked about, the nominated pods' load per row, kept current
        self._loads: weakref.WeakKeyDictionary[NodeTable, _RowLoads] = weakref.WeakKeyDictionary()
        #: pods alike to AddPod/RemovePod share a class (PodClasses)
        PodClasses.__init__(self)

    def add(self, pod: Pod, node: str) -> None:
        self.remove(pod)
        if node:
            self.setdefault(node, []).append(pod)
            self.node_of[pod.uid] = node
            self._changed(node)

    def remove(self, pod: Pod) -> None:
        node = self.node_of.pop(pod.uid, None)
        if node is not None:
            lst = self[node]
            lst[:] = [p for p in lst if p.uid != pod.uid]
            if not lst:
                del self[node]
            self._changed(node)

    def _changed(self, node: str) -> None:
        for loads in self._loads.values():
            loads.refresh(node, self.get(node, ()))

    def yielding_to(self, pod: Pod, node: str) -> list[Pod]:
        """Nominated pods the pod must leave room for on a node: priority >= its own, not itself."""
        return [p for p in self.get(node, ()) if p.priority >= pod.priority and p.uid != pod.uid]

    def positions(self, table: NodeTable, rows: np.ndarray) -> list[int]:
        """The positions in ``rows`` of the nodes with nominated pods."""
        if len(rows) <= len(self):
            # a few rows (a preemption fork): look each up rather than every nomination
            names = table.names
            return [k for k, r in enumerate(rows.tolist()) if names[r] in self]
        nominated = [r for node in self if (r := table.row_of.get(node)) is not None]
        return [int(k) for k in np.flatnonzero(np.isin(rows, nominated)).tolist()]

    def load(self, pod: Pod, table: NodeTable, rows: np.ndarray) -> NominatedLoad:
        """The pods ``pod`` must leave room for (yielding_to) on the nodes of ``rows``, as load:
        the positions in ``rows`` of the nodes that have some, their count and summed requests."""
        if self._by_lists(table, rows):
            # a few rows (a preemption fork): look each up
            names = table.names
            found = [(k, nominated) for k, r in enumerate(np.asarray(rows).tolist())
                     if names[r] in self and (nominated := self.yielding_to(pod, names[r]))]
            return NominatedLoad.of_lists([k for k, _ in found], [pods for _, pods in found])
        return self._row_loads(table).for_pod(pod, np.asarray(rows), self)

    def _by_lists(self, table: NodeTable, rows: np.ndarray) -> bool:
        """Whether to look the nodes of ``rows`` up in the node lists rather than in the table's
        per-row loads: a few rows, or a table without them yet (a preemption fork, say) that is
        small beside the nominations they would be built from."""
        return len(rows) <= 8 or (table not in self._loads and len(table) * 4 <= len(self))

    def _row_loads(self, table: NodeTable) -> _RowLoads:
        loads = self._loads.get(table)
        if loads is None:
            loads = self._loads[table] = _RowLoads(table, self)
        return loads

    def classes(self, pod: Pod, table: NodeTable, rows: np.ndarray) -> NominatedClasses:
        """The pods ``pod`` must leave room for (yielding_to) on the nodes of ``rows``, by class:
        the positions in ``rows`` of the nodes that have some and, per position and class
        (``examples``), how many."""
        rows = np.asarray(rows)
        if self._by_lists(table, rows):
            names = table.names
            found = [(k, nominated) for k, r in enumerate(rows.tolist())
                     if names[r] in self and (nominated := self.yielding_to(pod, names[r]))]
            ids = sorted({self.class_id(p) for _, pods in found for p in pods})
            local = {c: j for j, c in enumerate(ids)}
            counts = np.zeros((len(found), len(ids)), dtype=np.int64)
            for i, (_, pods) in enumerate(found):
                for p in pods:
                    counts[i, local[self.class_id(p)]] += 1
            return NominatedClasses(np.array([k for k, _ in found], dtype=np.int64),
                                    [self.examples[c] for c in ids], counts)
        return self._row_loads(table).classes_for(pod, rows, self)


@dataclass
class NominatedClasses:
    """Nominated pods by class on some nodes: ``positions`` index the rows asked about;
    ``counts[k, j]`` is how many pods like ``examples[j]`` are nominated to the node at
    ``positions[k]``."""

    positions: np.ndarray
    examples: list[Pod]
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.positions)

    def spread(self, n: int) -> np.ndarray:
        """The counts for all ``n`` rows asked about (zeros where none is nominated)."""
        out = np.zeros((n, len(self.examples)), dtype=np.int64)
        out[self.positions] = self.counts
        return out


@dataclass
class NominatedLoad:
    """Nominated pods as load on some nodes: ``positions`` index the rows asked about; per
    position the number of pods and, per resource name, their summed requests."""

    positions: np.ndarray
    pods: np.ndarray
    requests: dict[str, np.ndarray]

    @classmethod
    def of_lists(cls, positions: list[int], nominated: list[list[Pod]]) -> NominatedLoad:
        requests: dict[str, np.ndarray] = {}
        for k, pods in enumerate(nominated):
            for p in pods:
                for name, amount in p.requests.items():
                    if name not in requests:
                        requests[name] = np.zeros(len(positions), dtype=np.int64)
                    requests[name][k] += amount
        return cls(np.array(positions, dtype=np.int64), np.array([len(p) for p in nominated], dtype=np.int64),
                   requests)

    def __len__(self) -> int:
        return len(self.positions)

    def kept(self, keep: np.ndarray) -> NominatedLoad:
        """The load on the rows asked about that ``keep`` (a mask over them) keeps, its
        positions renumbered among those."""
        if not len(self):
            return self
        where = np.full(len(keep), -1, dtype=np.int64)
        where[keep] = np.arange(int(np.count_nonzero(keep)))
        moved = where[self.positions]
        ok = moved >= 0
        return NominatedLoad(moved[ok], self.pods[ok], {name: column[ok] for name, column in self.requests.items()})


class _RowLoads:
    """Per row of one node table: how many pods are nominated there, their summed requests per
    resource name and their lowest priority, updated as nominations change."""

    def __init__(self, table: NodeTable, nominator: Nominator) -> None:
        n = len(table)
        self.row_of = table.row_of
        self.names = table.names
        self.count = np.zeros(n, dtype=np.int64)
        self.lowest = np.zeros(n, dtype=np.int64)
        self.requests: dict[str, np.ndarray] = {}
        # one slot per nominated pod: its row (-1: free slot), priority and class
        self.nominator = nominator
        self.slot_row = np.full(16, -1, dtype=np.int64)
        self.slot_priority = np.zeros(16, dtype=np.int64)
        self.slot_class = np.zeros(16, dtype=np.int64)
        self.slot_of: dict[str, int] = {}
        self.slots_at: dict[int, list[tuple[str, int]]] = {}
        self.free: list[int] = list(range(15, -1, -1))
        for node, pods in nominator.items():
            self.refresh(node, pods)

    def _set_slots(self, row: int, pods: Sequence[Pod]) -> None:
        for uid, slot in self.slots_at.pop(row, ()):
            self.slot_row[slot] = -1
            self.free.append(slot)
            if self.slot_of.get(uid) == slot:
                del self.slot_of[uid]
        if not pods:
            return
        taken = []
        for p in pods:
            if not self.free:
                have = len(self.slot_row)
                self.slot_row = np.concatenate([self.slot_row, np.full(have, -1, dtype=np.int64)])
                self.slot_priority = np.concatenate([self.slot_priority, np.zeros(have, dtype=np.int64)])
                self.slot_class = np.concatenate([self.slot_class, np.zeros(have, dtype=np.int64)])
                self.free.extend(range(2 * have - 1, have - 1, -1))
            slot = self.free.pop()
            self.slot_row[slot] = row
            self.slot_priority[slot] = p.priority
            self.slot_class[slot] = self.nominator.class_id(p)
            self.slot_of[p.uid] = slot
            taken.append((p.uid, slot))
        self.slots_at[row] = taken

    def classes_for(self, pod: Pod, rows: np.ndarray, nominator: Nominator) -> NominatedClasses:
        live = (self.slot_row >= 0) & (self.slot_priority >= pod.priority)
        own = self.slot_of.get(pod.uid)
        if own is not None:
            live[own] = False
        slots = np.flatnonzero(live)
        position = np.full(len(self.count), -1, dtype=np.int64)
        position[rows] = np.arange(len(rows))
        at = position[self.slot_row[slots]]
        slots, at = slots[at >= 0], at[at >= 0]
        if not len(slots):
            return NominatedClasses(np.zeros(0, dtype=np.int64), [], np.zeros((0, 0), dtype=np.int64))
        classes = self.slot_class.take(slots)
        ids = np.flatnonzero(np.bincount(classes, minlength=len(nominator.examples)))
        local = np.zeros(len(nominator.examples), dtype=np.int64)
        local[ids] = np.arange(len(ids))
        m = len(ids)
        counts = np.bincount(at * m + local.take(classes), minlength=len(rows) * m).reshape(len(rows), m)
        positions = np.flatnonzero(counts.any(axis=1))
        return NominatedClasses(positions, [nominator.examples[c] for c in ids.tolist()], counts.take(positions, axis=0))

    def refresh(self, node: str, pods: Sequence[Pod]) -> None:
        row = self.row_of.get(node)
        if row is None:
            return
        self._set_slots(row, pods)
        self.count[row] = len(pods)
        self.lowest[row] = min((p.priority for p in pods), default=0)
        for column in self.requests.values():
            column[row] = 0
        for p in pods:
            for name, amount in p.requests.items():
                if name not in self.requests:
                    self.requests[name] = np.zeros(len(self.count), dtype=np.int64)
                self.requests[name][row] += amount

    def for_pod(self, pod: Pod, rows: np.ndarray, nominator: Nominator) -> NominatedLoad:
        positions = np.flatnonzero(self.count.take(rows))
        at = rows.take(positions)
        # where some nominated pod does not yield to this one (lower priority, or the pod itself),
        # the node's load is summed from its list instead
        own = self.row_of.get(nominator.node_of.get(pod.uid, ""), -1)
        exact = np.flatnonzero((self.lowest.take(at) < pod.priority) | (at == own))
        pods = self.count.take(at)
        requests = {name: column.take(at) for name, column in self.requests.items()}
        if len(exact):
            for k in exact.tolist():
                nominated = nominator.yielding_to(pod, self.names[int(at[k])])
                pods[k] = len(nominated)
                for name, column in requests.items():
                    column[k] = sum(p.requests.get(name, 0) for p in nominated)
            keep = pods > 0
            if not keep.all():
                positions, pods = positions[keep], pods[keep]
                requests = {name: column[keep] for name, column in requests.items()}
        return NominatedLoad(positions, pods, requests)


@dataclass
class _FixedVerdicts:
    """The leading fixed-input filters' verdicts for every row of one node table."""

    codes: np.ndarray
    reasons: np.ndarray
    plugins: np.ndarray
    any_rejected: bool
    #: the share of the rows they pass
    passing: float


_SKIPPED = object()   # a plugin PreFilter skipped, in a signature
#: the cycle state's record of (signature, node table, its fixed verdicts) found in this cycle
_FIXED_KEY = "kplan/FixedFilterVerdicts"
#: signatures kept per node table (each holds three arrays of the table's length)
_FIXED_SIGNATURES_KEPT = 1024
#: the cycle state's record of the pod's fixed-filter signature, once fixed_filters_share hashed it
_SIGNATURE_KEY = "kplan/FixedFilterSignature"
#: the cycle state's record of (its skip_filter, the fast path chosen for it): Framework.fast_path
_FAST_PATH_KEY = "kplan/FastPath"
#: sets of skipped plugins whose active filter lists are kept
_ACTIVE_SETS_KEPT = 1024


class Framework:
    def __init__(self, spec: ProfileSpec, registry: Registry, handle: Handle) -> None:
        self.spec = spec
        self.profile_name = spec.scheduler_name
        self.handle = handle
        self.plugins: dict[str, Plugin] = {}
        for name in dict.fromkeys(n for lst in spec.points.values() for n in lst):
            plugin_spec = registry.get(name)
            assert plugin_spec is not None
            args = spec.args.get(name, spec.raw_args.get(name))
            self.plugins[name] = plugin_spec.factory(args, handle)

        def pick(point: str) -> list[Any]:
            """The plugins enabled at ``point``, for a list typed as the point's protocol. The
            configuration enables a plugin at a point only where the registry declares it."""
            out: list[Any] = []
            for name in spec.points[point]:
                plugin_spec = registry.get(name)
                assert plugin_spec is not None and point in plugin_spec.points, (name, point)
                out.append(self.plugins[name])
            return out

        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = pick("preEnqueue")
        self.queue_sort: QueueSortPlugin = pick("queueSort")[0]
        self.pre_filter_plugins: list[PreFilterPlugin] = pick("preFilter")
        self.filter_plugins: list[FilterPlugin] = pick("filter")
        self.filter_names = [p.name for p in self.filter_plugins]
        self.post_filter_plugins: list[PostFilterPlugin] = pick("postFilter")
        self.pre_score_plugins: list[PreScorePlugin] = pick("preScore")
        self.score_plugins: list[ScorePlugin] = pick("score")
        self.weights = {n: spec.weights[n] for n in spec.points["score"]}
        self.reserve_plugins: list[ReservePlugin] = pick("reserve")
        self.permit_plugins: list[PermitPlugin] = pick("permit")
        self.pre_bind_plugins: list[PreBindPlugin] = pick("preBind")
        self.bind_plugins: list[BindPlugin] = pick("bind")
        self.post_bind_plugins: list[PostBindPlugin] = pick("postBind")
        self.percentage_of_nodes_to_score = spec.percentage_of_nodes_to_score
        # the optional interfaces, recognised here once rather than looked up on every call
        #: PreFilter plugins with AddPod/RemovePod (PreFilterExtensions)
        self.extensions = [(p.name, p) for p in self.pre_filter_plugins if isinstance(p, PreFilterExtensions)]
        #: Score plugins with NormalizeScore (ScoreExtensions)
        self.normalizers: dict[str, ScoreExtensions] = {
            p.name: p for p in self.score_plugins if isinstance(p, ScoreExtensions)}
        #: kplan's ScoreExplainer plugins, by name
        self.explainers: dict[str, ScoreExplainer] = {
            p.name: p for p in self.score_plugins if isinstance(p, ScoreExplainer)}
        #: kplan's RejectionExplainer filter plugins, by name
        self.rejection_explainers: dict[str, RejectionExplainer] = {
            p.name: p for p in self.filter_plugins if isinstance(p, RejectionExplainer)}
        #: plugins with EnqueueExtensions, by name (the others are registered for every event)
        self.enqueue_extensions: dict[str, EnqueueExtensions] = {
            n: p for n, p in self.plugins.items() if isinstance(p, EnqueueExtensions)}
        #: Filter plugins that tell their verdicts with other pods as load (BatchReprieveFilter), by name
        self.batch_reprieves: dict[str, BatchReprieveFilter] = {
            p.name: p for p in self.filter_plugins if isinstance(p, BatchReprieveFilter)}
        #: Filter plugins that tell which pods change their PreFilter state (SelectiveStateFilter)
        self.selective: dict[str, SelectiveStateFilter] = {
            p.name: p for p in self.filter_plugins if isinstance(p, SelectiveStateFilter)}
        #: those of them that take other pods as counts (CountingStateFilter)
        self.counting: dict[str, CountingStateFilter] = {
            n: p for n, p in self.selective.items() if isinstance(p, CountingStateFilter)}
        # NormalizeScore may change its input in place (an out-of-tree plugin might); kplan's own
        # plugins return new arrays, so their raw scores need no copy to stay as they were
        self._copy_before_normalize = {p.name for p in self.score_plugins if not in_tree(p)}
        # The leading Filter plugins whose verdict on a node depends only on the node's fixed
        # attributes (labels, taints, name, unschedulable) and on a signature of the pod: replicas
        # of one template share their verdicts, computed once per node table (_fixed_verdicts).
        self._fixed_filters: list[FixedInputFilter] = []
        for p in self.filter_plugins:
            if not isinstance(p, FixedInputFilter):
                break
            self._fixed_filters.append(p)
        self._fixed_count = len(self._fixed_filters)
        self._fixed: weakref.WeakKeyDictionary[NodeTable, dict[tuple[Hashable, ...], _FixedVerdicts | None]] = (
            weakref.WeakKeyDictionary())
        #: skipped plugins, in order → the one frozenset of them (_skip_set)
        self._skip_sets: dict[tuple[str, ...], frozenset[str]] = {}
        #: (plugins PreFilter skipped, first, last) → the filters that run (_active_filters)
        self._active_of: dict[tuple[frozenset[str], int, int], tuple[tuple[int, FilterPlugin], ...]] = {}
        # opportunistic batching (computeBatchablePlugins): on with its gate, if every PreFilter,
        # Filter, PreScore and Score plugin can sign pods
        candidates: list[Plugin] = [*self.pre_filter_plugins, *self.filter_plugins, *self.pre_score_plugins,
                                     *self.score_plugins]
        signers = {c.name: c for c in reversed(candidates)}
        self._signers: list[SignPlugin] = [c for c in signers.values() if isinstance(c, SignPlugin)]
        release = handle.release
        #: True when this profile reuses the previous pod's sorted node list (framework/batch.py)
        self.batching = (Gate.OPPORTUNISTIC_BATCHING in release.gates and release.enabled(Gate.OPPORTUNISTIC_BATCHING)
                         and len(self._signers) == len(signers))
        #: the signer that last refused a pod, asked first next time (_refuses)
        self._refuser: SignPlugin | None = None

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: the pod's signature (its scheduler name and every signing plugin's
        fragments), or None when batching is off or a plugin cannot sign the pod."""
        if not self.batching or self._refuses(pod):
            return None
        sig: dict[str, Hashable] = {"v1.Pod.Spec.SchedulerName": pod.scheduler_name}
        for pl in self._signers:
            fragments = pl.sign_pod(pod)
            if fragments is None:
                self._refuser = pl
                return None
            sig.update(fragments)
        return tuple(sorted(sig.items()))

    def _refuses(self, pod: Pod) -> bool:
        """Whether the signer that refused the last unsignable pod refuses this one too. Any
        signer's refusal makes the pod unsignable and signers are pure functions of the pod, so
        asking that one first changes no answer; it saves asking all the others where one
        plugin refuses nearly every pod (PodTopologySpread's system default constraints)."""
        first = self._refuser
        return first is not None and first.sign_pod(pod) is None

    # ------------------------------------------------------------------ queue points

    def run_pre_enqueue(self, pod: Pod) -> Status:
        for pl in self.pre_enqueue_plugins:
            s = pl.pre_enqueue(pod)
            if not s.ok:
                return Status(s.code, s.reasons, pl.name)
        return OK

    # ------------------------------------------------------------------ filtering

    def run_pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status, set[str]]:
        """RunPreFilterPlugins: (merged result, status, plugins that restricted the nodes)."""
        result: PreFilterResult | None = None
        with_nodes: set[str] = set()
        skipped: list[str] = []
        returned = OK
        for pl in self.pre_filter_plugins:
            r, s = pl.pre_filter(state, pod)
            if s is OK and r is None:
                # the usual answer, told apart by identity: nothing to merge
                continue
            if s.code == Code.SKIP:
                skipped.append(pl.name)
                continue
            if not s.ok:
                s = Status(s.code, s.reasons, pl.name)
                if s.code == Code.UNSCHEDULABLE:
                    returned = s
                    continue
                return None, s, set()
            if r is not None and r.node_names is not None:
                with_nodes.add(pl.name)
                names = r.node_names if result is None or result.node_names is None else result.node_names & r.node_names
                result = PreFilterResult(frozenset(names))
                if not result.node_names:
                    plugins = sorted(with_nodes)
                    msg = (f"node(s) didn't satisfy plugin {plugins[0]}" if len(plugins) == 1 else
                           f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously")
                    return result, Status(Code.UNRESOLVABLE, (msg,)), with_nodes
        state.skip_filter = self._skip_set(skipped)
        return result, returned, with_nodes

    def _skip_set(self, names: list[str]) -> frozenset[str]:
        """The names as a frozenset, the same object for the same names in the same order: the
        skipped plugins of one cycle are of a few kinds a run, and the filters and the fast path
        look things up by them every cycle (a frozenset keeps its hash)."""
        key = tuple(names)
        found = self._skip_sets.get(key)
        if found is None:
            if len(self._skip_sets) >= _ACTIVE_SETS_KEPT:
                self._skip_sets.clear()
            found = self._skip_sets[key] = frozenset(names)
        return found

    def run_filters(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> FilterOutcome:
        """RunFilterPlugins for every row at once: each row's first rejection in filter order."""
        rows = np.asarray(rows)
        fixed = self._fixed_verdicts(state, pod, table) if self._fixed_count else None
        if fixed is None or not fixed.any_rejected:
            out = FilterOutcome.all_pass(rows)
            pending = np.arange(len(rows))
        else:
            out = FilterOutcome(rows, fixed.codes.take(rows), fixed.reasons.take(rows), fixed.plugins.take(rows))
            pending = (out.codes == 0).nonzero()[0]
        first = 0 if fixed is None else self._fixed_count
        self._filter_in_order(state, pod, table, out, pending,
                              self._active_filters(state.skip_filter, first, len(self.filter_plugins)))
        return out

    @staticmethod
    def _filter_in_order(state: CycleState, pod: Pod, table: NodeTable, out: FilterOutcome, pending: np.ndarray,
                         active: Sequence[tuple[int, FilterPlugin]]) -> None:
        """Run the filter plugins ``active`` (with their indexes, in filter order) on the
        ``pending`` positions of ``out``, each on the positions every earlier one passed: the
        first rejection is the position's verdict."""
        if len(pending) == 0:
            return
        rows = out.rows
        sub = rows if len(pending) == len(rows) else rows.take(pending)
        for i, (k, pl) in enumerate(active):
            passed = out.reject(pending, pl.filter(state, pod, table, sub), k)
            if len(passed) == len(pending):
                continue
            pending = passed
            if len(pending) == 0:
                return
            if i + 1 < len(active):
                sub = rows.take(pending)

    def _active_filters(self, skip: AbstractSet[str], first: int, last: int) -> tuple[tuple[int, FilterPlugin], ...]:
        """The Filter plugins ``first:last`` that PreFilter did not skip, with their indexes: a
        cycle's filtering passes run these, and the last of them leaves the rows it passes as
        they are rather than taking them for a plugin that does not run."""
        key = (frozenset(skip), first, last)
        found = self._active_of.get(key)
        if found is None:
            if len(self._active_of) >= _ACTIVE_SETS_KEPT:
                self._active_of.clear()
            found = self._active_of[key] = tuple(
                (k, self.filter_plugins[k]) for k in range(first, last) if self.filter_plugins[k].name not in skip)
        return found

    @property
    def fixed_filter_count(self) -> int:
        """How many of the leading Filter plugins read only node attributes (filter_signature)."""
        return self._fixed_count

    def fixed_filters_pass(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        """Per row, whether the leading filters that read only node attributes all pass."""
        rows = np.asarray(rows)
        fixed = self._fixed_verdicts(state, pod, table) if self._fixed_count else None
        codes = fixed.codes.take(rows) if fixed is not None else self._run_fixed(state, pod, table, rows).codes
        return np.asarray(codes == 0)

    def fixed_codes(self, state: CycleState, pod: Pod, table: NodeTable) -> np.ndarray | None:
        """The leading node-attribute filters' codes (0: passed) on every row of ``table``, once
        known for the pod's signature (the compiled cycle reads them); None the first time."""
        fixed = self._fixed_verdicts(state, pod, table)
        return None if fixed is None else fixed.codes

    def fixed_filters_outcome(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> FilterOutcome:
        """The leading node-attribute filters' verdicts on ``rows`` (plugins index filter_plugins)."""
        rows = np.asarray(rows)
        fixed = self._fixed_verdicts(state, pod, table) if self._fixed_count else None
        if fixed is None:
            return self._run_fixed(state, pod, table, rows)
        return FilterOutcome(rows, fixed.codes.take(rows), fixed.reasons.take(rows), fixed.plugins.take(rows))

    def _run_fixed(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> FilterOutcome:
        """The leading node-attribute filters on ``rows``."""
        out = FilterOutcome.all_pass(rows)
        self._filter_in_order(state, pod, table, out, np.arange(len(rows)),
                              self._active_filters(state.skip_filter, 0, self._fixed_count))
        return out

    def _fixed_verdicts(self, state: CycleState, pod: Pod, table: NodeTable) -> _FixedVerdicts | None:
        """The verdicts of the leading fixed-input filters for every row of ``table``, for the
        pods of the same signature; None the first time a signature is seen (a pod unlike any
        other is filtered only on the rows asked for)."""
        kept: tuple[tuple[Hashable, ...], NodeTable, _FixedVerdicts] | None = state.data.get(_FIXED_KEY)
        if kept is not None and kept[1] is table:
            return kept[2]
        if kept is not None:
            signature = kept[0]
        else:
            signature = state.data.get(_SIGNATURE_KEY) or self._fixed_signature(state, pod)
        per_table = self._fixed.get(table)
        if per_table is None:
            per_table = self._fixed[table] = {}
        if signature not in per_table:
            if len(per_table) >= _FIXED_SIGNATURES_KEPT:
                per_table.clear()
            per_table[signature] = None
            return None
        found = per_table[signature]
        if found is None:
            out = self._run_fixed(state, pod, table, np.arange(len(table)))
            rejected = int(np.count_nonzero(out.codes))
            found = per_table[signature] = _FixedVerdicts(out.codes, out.reasons, out.plugins, rejected > 0,
                                                          1 - rejected / max(len(table), 1))
        # the cycle's later filtering passes on this table find them without hashing the signature
        state.data[_FIXED_KEY] = (signature, table, found)
        return found

    def _fixed_signature(self, state: CycleState, pod: Pod) -> tuple[Hashable, ...]:
        skip = state.skip_filter
        return tuple(_SKIPPED if pl.name in skip else pl.filter_signature(pod) for pl in self._fixed_filters)

    def fixed_filters_share(self, state: CycleState, pod: Pod, table: NodeTable) -> float:
        """The share of the table's nodes that the leading node-attribute filters pass for the
        pod, where already known for its signature (1.0 otherwise): a guess of how many nodes
        to filter at once, never a verdict."""
        if not self._fixed_count:
            return 1.0
        signature = state.data[_SIGNATURE_KEY] = self._fixed_signature(state, pod)
        fixed = self._fixed.get(table, {}).get(signature)
        return fixed.passing if fixed is not None else 1.0

    def add_pod_to_state(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None:
        for name, ext in self.extensions:
            if name not in state.skip_filter:
                ext.add_pod(state, pod, other, table, row)

    def remove_pod_from_state(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None:
        for name, ext in self.extensions:
            if name not in state.skip_filter:
                ext.remove_pod(state, pod, other, table, row)

    # ------------------------------------------------------------------ filtering with nominated pods

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, table: NodeTable,
                                               rows: np.ndarray, nominator: Nominator) -> FilterOutcome:
        """RunFilterPluginsWithNominatedPods (reference 5.4) for every row of ``rows``.

        Upstream filters a node twice where pods of priority >= the pod's are nominated to it
        (Nominator.yielding_to): first as if they ran there (added to a copy of the node and,
        through AddPod, to a clone of the cycle state), then, only if every filter passed, as
        the node is. A rejection of the first pass is the node's verdict, else the second
        pass's; a node without such pods is filtered once, as it is.

        Here the pass as the nodes are runs first, on every row; then the pass with the
        nominated pods, on the nodes that have some, overrules it where it rejects. The cycle's
        fast path (FastPath.filter_with_nominated) tells that pass without copies where it can.
        """
        rows = np.asarray(rows)
        out = self.run_filters(state, pod, table, rows)
        if not nominator:
            return out
        fast = self.fast_path(state)
        if fast is not None:
            positions = fast.filter_with_nominated(state, pod, table, rows, out, nominator).tolist()
        else:
            positions = nominator.positions(table, rows)
        with_pods = [(k, nominated) for k in positions
                     if (nominated := nominator.yielding_to(pod, table.names[int(rows[k])]))]
        if with_pods:
            at = np.array([k for k, _ in with_pods], dtype=np.int64)
            out.overrule(at, self._filter_with_pods_added(state, pod, table, rows.take(at),
                                                          [nominated for _, nominated in with_pods]))
        return out

    def _filter_with_pods_added(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                                added: Sequence[Sequence[Pod]]) -> FilterOutcome:
        """RunFilterPlugins on the nodes of ``rows``, each on a copy with ``added[k]`` pods added
        to the k-th and the cycle state told of them through AddPod (addGENominatedPods)."""
        if not any(name not in state.skip_filter for name, _ in self.extensions):
            # AddPod changes nothing in the cycle state: one copy of all these nodes serves them all
            groups = [np.arange(len(rows))]
        else:
            groups = [np.array([k]) for k in range(len(rows))]
        out = FilterOutcome.all_pass(rows)
        for group in groups:
            copy = table.take(rows.take(group).tolist())
            copy_state = state.clone()
            for at, k in enumerate(group.tolist()):
                for other in added[k]:
                    copy.add_pod(other, at)
                    self.add_pod_to_state(copy_state, pod, other, copy, at)
            out.overrule(group, self.run_filters(copy_state, pod, copy, np.arange(len(group))))
        return out

    def fast_path(self, state: CycleState) -> FastPath | None:
        """The cycle's fast path (framework/fast_path.py), chosen once per cycle: when, among the
        filters after the leading node-attribute ones and not skipped at PreFilter, one is the
        resource filter (a BatchReprieveFilter) and every other is a SelectiveStateFilter, and
        no other PreFilter extension is active. None otherwise: every pass then runs on copies."""
        kept = state.data.get(_FAST_PATH_KEY)
        # the choice depends only on the plugins PreFilter skipped, which a clone of the state
        # (a preemption or nominated-pods copy) keeps: it holds for the clones too
        if kept is not None and kept[0] == state.skip_filter:
            return cast("FastPath | None", kept[1])
        found = self._choose_fast_path(state.skip_filter)
        state.data[_FAST_PATH_KEY] = (frozenset(state.skip_filter), found)
        return found

    def _choose_fast_path(self, skip: AbstractSet[str]) -> FastPath | None:
        resource: BatchReprieveFilter | None = None
        at = -1
        selective: list[tuple[int, SelectiveStateFilter]] = []
        # a node-attribute filter placed after another filter (a custom order) counts as any other
        for k in range(self._fixed_count, len(self.filter_plugins)):
            name = self.filter_plugins[k].name
            if name in skip:
                continue
            found = self.batch_reprieves.get(name)
            if found is not None and resource is None:
                resource, at = found, k
                continue
            other = self.selective.get(name)
            if other is None:
                return None
            selective.append((k, other))
        if resource is None:
            return None
        chosen = {p.name for _, p in selective}
        if any(name not in skip and name not in chosen for name, _ in self.extensions):
            return None
        return FastPath(resource, at, tuple(selective), self._fixed_count, self.counting)

    # ------------------------------------------------------------------ scoring

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def run_pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        skipped: list[str] = []
        for pl in self.pre_score_plugins:
            s = pl.pre_score(state, pod, table, rows)
            if s is OK:
                continue
            if s.code == Code.SKIP:
                skipped.append(pl.name)
            elif not s.ok:
                return Status(Code.ERROR, (f'running PreScore plugin "{pl.name}": {s.message}',), pl.name)
        state.skip_score = self._skip_set(skipped)
        return OK

    def run_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray
                  ) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]], Status]:
        """RunScorePlugins: (total per row, plugin → (raw, normalised) per row, status)."""
        total = np.zeros(len(rows), dtype=np.int64)
        detail: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for pl in self.score_plugins:
            if pl.name in state.skip_score:
                continue
            raw, norm = self.score_with(pl, state, pod, table, rows)
            weight = self.weights[pl.name]
            total += norm if weight == 1 else norm * weight
            detail[pl.name] = (raw, norm)
        # every score in range, checked at once; else the plugins again, to stop at the first
        # that is not, as the framework does
        if detail and len(rows):
            scores = np.concatenate([norm for _, norm in detail.values()])
            if scores.min() < 0 or scores.max() > MAX_NODE_SCORE:
                return self._score_out_of_range(detail, len(rows))
        return total, detail, OK

    def score_with(self, plugin: ScorePlugin, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
        """One Score plugin's raw scores of ``rows`` and their NormalizeScore (the raw ones where
        it has none), as RunScorePlugins takes them (the compiled cycle takes them so too)."""
        raw = np.asarray(plugin.score(state, pod, table, rows), dtype=np.int64)
        normalizer = self.normalizers.get(plugin.name)
        if normalizer is None:
            return raw, raw
        return raw, normalizer.normalize(state, pod, raw.copy() if plugin.name in self._copy_before_normalize else raw)

    def _score_out_of_range(self, detail: dict[str, tuple[np.ndarray, np.ndarray]], n: int
                            ) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]], Status]:
        """run_score's answer where some plugin's normalised score is out of range: the total and
        the scores of the plugins before it, and the error naming it."""
        total = np.zeros(n, dtype=np.int64)
        before: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for name, (raw, norm) in detail.items():
            if norm.min() < 0 or norm.max() > MAX_NODE_SCORE:
                bad = int(norm.min()) if norm.min() < 0 else int(norm.max())
                return total, before, Status(Code.ERROR, (
                    f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid '
                    f"score {bad}, it should in the range of [0, {MAX_NODE_SCORE}] after normalizing",), name)
            weight = self.weights[name]
            total += norm if weight == 1 else norm * weight
            before[name] = (raw, norm)
        raise AssertionError("no score out of range")
