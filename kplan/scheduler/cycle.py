"""One scheduling cycle (pkg/scheduler/schedule_one.go, v1.34.1 and v1.35.4; reference 5.1–5.6).

PreFilter → the nominated node first (from 1.35, else the node opportunistic batching hints,
framework/batch.py) → filtering from a rotating start over the zone-interleaved node list until
enough feasible nodes are found → PostFilter (preemption) when none is →
PreScore/Score/NormalizeScore → host selection → Reserve. Binding is the simulator's job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kplan.framework.batch import OpportunisticBatch, RankedNodes
from kplan.framework.cycle_state import CycleState
from kplan.framework.diagnosis import Diagnosis, FitError
from kplan.framework.interfaces import Handle
from kplan.framework.outcome import FilterOutcome
from kplan.framework.preemption import PreemptionOutcome
from kplan.framework.runtime import Framework, Nominator
from kplan.framework.status import Code, PluginError, Status
from kplan.model.objects import Pod
from kplan.scheduler.compiled import CompiledCycle

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def num_feasible_nodes_to_find(n: int, percentage: int) -> int:
    """numFeasibleNodesToFind (reference 5.2)."""
    if n < MIN_FEASIBLE_NODES_TO_FIND:
        return n
    if percentage == 0:
        percentage = max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - n // 125)
    k = n * percentage // 100
    return max(k, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class CycleResult:
    """What one attempt decided, and what explain needs to show why."""

    node: str | None = None
    #: the FitError text (or error text) when no node was chosen
    message: str | None = None
    fit_error: bool = False
    #: the FitError the message prints, in parts (None unless PostFilter ran)
    fit: FitError | None = None
    diagnosis: Diagnosis | None = None
    #: plugins that rejected the pod (the queue's rejector plugins), set when no node was chosen
    rejectors: set[str] = field(default_factory=set)
    preemption: PreemptionOutcome | None = None
    #: True when PostFilter returned a result that overrides the nomination
    nomination_override: bool = False
    nominated_node: str = ""
    nominated_fast_path: bool = False
    #: the node came from opportunistic batching: the previous pod's next-best node, not scored again
    batch_hint: bool = False
    feasible_rows: np.ndarray | None = None
    filtered: FilterOutcome | None = None
    scores: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
    totals: np.ndarray | None = None
    state: CycleState | None = None


class Scheduler:
    """Runs cycles for one simulation: owns the rotating start index and the RNG."""

    def __init__(self, handle: Handle, detailed: Callable[[Pod], bool] | None = None) -> None:
        self.handle = handle
        #: the pods whose cycle results must carry the per-plugin filter outcome and scores
        #: (explain reads them): the compiled cycle, which computes neither, is not used for them
        self.detailed = detailed
        #: per framework, its compiled cycle (None: the Python path)
        self.compiled: dict[Framework, CompiledCycle | None] = {}
        self.next_start_node_index = 0
        #: scheduling cycles so far (the queue's schedulingCycle: one per pop)
        self.cycles = 0
        #: per profile, opportunistic batching's state
        self.batches: dict[str, OpportunisticBatch] = {}

    def schedule(self, fw: Framework, pod: Pod) -> CycleResult:
        try:
            return self._schedule(fw, pod)
        except PluginError as e:
            # a Filter's Error status aborts the attempt: error backoff, no rejecting plugins
            return CycleResult(message=str(e))

    def _schedule(self, fw: Framework, pod: Pod) -> CycleResult:
        self.cycles += 1
        snap = self.handle.snapshot
        table = snap.table
        nominator: Nominator = self.handle.nominator
        n_all = len(table)
        state = CycleState()
        res = CycleResult(state=state)
        if n_all == 0:
            res.message = NO_NODES_AVAILABLE
            return res
        diagnosis = Diagnosis(n_all)
        res.diagnosis = diagnosis
        pre_result, status, with_nodes = fw.run_pre_filter(state, pod)
        if with_nodes:
            diagnosis.unschedulable_plugins |= with_nodes
        if not status.ok:
            if not status.rejected:
                res.message = status.message
                return res
            diagnosis.absent = status
            diagnosis.pre_filter_msg = status.message
            if status.plugin:
                diagnosis.unschedulable_plugins.add(status.plugin)
            return self._fail(fw, pod, state, res)

        batch = self._batch(fw)
        signature = None
        hint = ""
        if batch is not None:
            signature = fw.sign_pod(pod)
            hint = batch.node_hint(self.cycles, signature, lambda name: self._rejects(fw, state, pod, name))

        nominated = self.handle.nominated_node(pod)
        if nominated or hint:
            # evaluateNominatedNode: the nominated node if there is one, else the hint
            first = nominated or hint
            row = snap.row_of(first)
            if row is not None:
                out = fw.run_filter_plugins_with_nominated_pods(state, pod, table, np.array([row]), nominator)
                if out.codes[0] == 0:
                    res.node = first
                    res.nominated_fast_path = bool(nominated)
                    res.batch_hint = not nominated
                    res.feasible_rows = out.rows
                    if batch is not None:
                        batch.store(self.cycles, signature, hint, first, None)
                    return res
                diagnosis.record(row, out.status(0, fw.filter_names))

        compiled = self._compiled(fw, pod)
        found = None
        if compiled is not None and pre_result is None and not nominator:
            # a PreFilter node set and nominated pods' load are the Python Filter pass's alone;
            # Score reads neither, so the compiled Score below serves those pods too
            found = compiled.find_feasible(state, pod, table, self.next_start_node_index,
                                           self._nodes_to_find(fw, n_all))
        if found is not None:
            # the compiled Filter pass (scheduler/compiled.py): feasible rows and nodes processed
            feasible, processed = found
        else:
            if pre_result is not None and pre_result.node_names is not None:
                rows = np.array(sorted(r for name in pre_result.node_names
                                       if (r := snap.row_of(name)) is not None), dtype=np.int64)
                diagnosis.absent = Status(Code.UNRESOLVABLE,
                                          (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]",))
            else:
                rows = np.arange(n_all, dtype=np.int64)
            feasible, examined = self._find_feasible(fw, pod, state, rows, diagnosis)
            res.filtered = examined
            processed = len(feasible) + diagnosis.num_recorded
        res.feasible_rows = feasible
        self.next_start_node_index = (self.next_start_node_index + processed) % n_all
        if len(feasible) == 0:
            return self._fail(fw, pod, state, res)
        if len(feasible) == 1 or not fw.has_score_plugins:
            res.node = table.names[int(feasible[0])]
            if batch is not None:
                batch.store(self.cycles, signature, hint, res.node, None)
            return res
        status = fw.run_pre_score(state, pod, table, feasible)
        scored = None
        if status.ok and compiled is not None:
            scored = compiled.score(state, pod, table, feasible, self.handle.lowest_name)
        if scored is not None:
            # the compiled Score, NormalizeScore and host selection; among tied nodes the random
            # tie-break draws as select_host does
            totals, best, ties = scored
            res.totals = totals
            if ties > 1 and not self.handle.lowest_name:
                best = self.select_host(totals, feasible)
        else:
            if status.ok:
                totals, detail, status = fw.run_score(state, pod, table, feasible)
                res.scores, res.totals = detail, totals
            if not status.ok:
                # an error, not a rejection: the pod goes to the error backoff and loses its nomination
                res.message = status.message
                res.rejectors = set()
                return res
            best = self.select_host(totals, feasible)
        res.node = table.names[int(feasible[best])]
        if batch is not None:
            batch.store(self.cycles, signature, hint, res.node, lambda: self._others(totals, feasible, best))
        return res

    def _batch(self, fw: Framework) -> OpportunisticBatch | None:
        if not fw.batching:
            return None
        found = self.batches.get(fw.profile_name)
        if found is None:
            found = self.batches[fw.profile_name] = OpportunisticBatch()
        return found

    def _rejects(self, fw: Framework, state: CycleState, pod: Pod, name: str) -> bool:
        """Whether the pod's Filter plugins reject node ``name`` (RunFilterPlugins, no nominated
        pods; an error is not a rejection); False for a node that is gone."""
        row = self.handle.snapshot.row_of(name)
        if row is None:
            return False
        try:
            out = fw.run_filters(state, pod, self.handle.snapshot.table, np.array([row]))
        except PluginError:
            return False
        return bool(out.codes[0] in (Code.UNSCHEDULABLE, Code.UNRESOLVABLE))

    def _others(self, totals: np.ndarray, rows: np.ndarray, best: int) -> RankedNodes:
        """The feasible nodes but the chosen one, as upstream's score heap pops them: by total
        score, best first; ties by the smallest name with the oracle's tie-break, else at random
        (drawn now; the order itself is made when the list is first read)."""
        table = self.handle.snapshot.table
        keep = np.ones(len(rows), dtype=bool)
        keep[best] = False
        rest, scores = rows[keep], totals[keep]
        ties = (table.name_rank[rest] if self.handle.lowest_name
                else self.handle.rng.permutation(len(rest)))
        return RankedNodes(rest, scores, ties, table.names)

    def _compiled(self, fw: Framework, pod: Pod) -> CompiledCycle | None:
        """The framework's compiled cycle (scheduler/compiled.py), chosen once per simulation;
        None where the kernel is not available or the pod's cycle must keep its detail."""
        if self.detailed is not None and self.detailed(pod):
            return None
        if fw not in self.compiled:
            self.compiled[fw] = CompiledCycle.of(fw)
        return self.compiled[fw]

    def _nodes_to_find(self, fw: Framework, n: int) -> int:
        """How many feasible nodes filtering looks for among ``n`` (numFeasibleNodesToFind; one
        when no plugin scores)."""
        if not fw.has_score_plugins:
            return 1
        return num_feasible_nodes_to_find(n, self._percentage(fw))

    def _find_feasible(self, fw: Framework, pod: Pod, state: CycleState, rows: np.ndarray,
                       diagnosis: Diagnosis) -> tuple[np.ndarray, FilterOutcome]:
        """findNodesThatPassFilters with parallelism 1: stop at the (k+1)-th feasible node."""
        n = len(rows)
        if n == 0:
            return rows, FilterOutcome.empty()
        k = self._nodes_to_find(fw, n)
        start = self.next_start_node_index % n
        table = self.handle.snapshot.table
        nominator = self.handle.nominator
        # filter in chunks: a little more than k nodes first (most clusters are mostly feasible),
        # then doubling; filtering past the cut point is wasted work, never a different answer
        chunk = n if k >= n else k + k // 4 + 32
        if chunk < n:
            # where the node-attribute filters pass only some nodes (a nodeSelector, a taint few
            # tolerate), start with as many more as they are expected to reject
            share = fw.fixed_filters_share(state, pod, table)
            if share < 0.75:
                chunk = min(n, int(chunk / max(share, 0.01)))
        parts: list[FilterOutcome] = []
        found = 0
        pos = 0
        while pos < n:
            part = rotated_slice(rows, start, pos, pos + chunk)
            try:
                out = fw.run_filter_plugins_with_nominated_pods(state, pod, table, part, nominator)
            except PluginError as e:
                # the attempt aborts; with parallelism 1 the nodes before the failing one (in the
                # rotated order) were processed, each feasible or rejected, and
                # nextStartNodeIndex moves past them
                if e.row is not None:
                    at = (rows == e.row).nonzero()[0]
                    if len(at):
                        self.next_start_node_index = (self.next_start_node_index + (int(at[0]) - start) % n) \
                            % len(table)
                raise
            ok = (out.codes == 0).nonzero()[0]
            if found + len(ok) > k:
                # the (k+1)-th feasible node is examined but neither kept nor counted
                cut = int(ok[k - found])
                parts.append(FilterOutcome(out.rows[:cut], out.codes[:cut], out.reasons[:cut], out.plugins[:cut]))
                # the first k - found feasible positions of this part are the ones kept
                ok = ok[:k - found]
                break
            found += len(ok)
            parts.append(out)
            pos += chunk
            # size the next chunk from the feasible share seen so far, so that a pod most nodes
            # reject is not filtered in many small calls
            seen = pos
            chunk = max(64, int((k + 1 - found) * seen / max(found, 1) * 1.25))
        # the usual cycle filters once: its outcome and feasible rows need no concatenation
        outcome = parts[0] if len(parts) == 1 else FilterOutcome.join(parts)
        diagnosis.record_outcome(outcome.rows, outcome.codes, outcome.reasons, outcome.plugins, fw.filter_names)
        if len(parts) == 1:
            return out.rows.take(ok), outcome
        return outcome.rows[outcome.codes == 0], outcome

    def _percentage(self, fw: Framework) -> int:
        p = fw.percentage_of_nodes_to_score
        return p if p is not None else self.handle.config.percentage_of_nodes_to_score

    def select_host(self, totals: np.ndarray, rows: np.ndarray) -> int:
        """selectHost: the highest total; ties at random (reservoir sampling) or by smallest name."""
        top = totals.max()
        ties = (totals == top).nonzero()[0]
        if len(ties) == 1:
            return int(ties[0])
        if self.handle.lowest_name:
            ranks = self.handle.snapshot.table.name_rank[rows[ties]]
            return int(ties[int(np.argmin(ranks))])
        # reservoir sampling picks each tied node with probability 1/len(ties); one draw does the same
        return int(ties[int(self.handle.rng.integers(len(ties)))])

    def _fail(self, fw: Framework, pod: Pod, state: CycleState, res: CycleResult) -> CycleResult:
        """FitError, then the PostFilter plugins (RunPostFilterPlugins)."""
        diagnosis = res.diagnosis
        assert diagnosis is not None
        res.fit_error = True
        res.rejectors = set(diagnosis.unschedulable_plugins)
        reasons: list[str] = []
        if not fw.post_filter_plugins and self.handle.release.nomination.no_post_filter_clears:
            # 1.35+: the failure clears the nomination (clearNominatedNode); 1.34 leaves it
            res.nomination_override = True
            res.nominated_node = ""
        for pl in fw.post_filter_plugins:
            result, s = pl.post_filter(state, pod, diagnosis)
            if isinstance(result, PreemptionOutcome):
                res.preemption = result
            if s.ok:
                if result is not None and result.nominated_node is not None:
                    res.nomination_override = True
                    res.nominated_node = result.nominated_node
                # the pod still failed this cycle: from 1.37 the success's own message is the
                # postscript (#140180); before, success carried none
                reasons = list(s.reasons)
                break
            if s.code == Code.UNRESOLVABLE or not s.rejected:
                reasons = list(s.reasons)
                if s.code == Code.UNRESOLVABLE and result is not None and result.nominated_node is not None:
                    res.nomination_override = True
                    res.nominated_node = result.nominated_node
                break
            if result is not None and result.nominated_node is not None:
                res.nomination_override = True
                res.nominated_node = result.nominated_node
            reasons += list(s.reasons)
        diagnosis.post_filter_msg = ", ".join(reasons)
        res.fit = diagnosis.fit_error()
        res.message = res.fit.message
        return res


def rotated_slice(rows: np.ndarray, start: int, begin: int, end: int) -> np.ndarray:
    """``order[begin:end]`` where ``order`` is ``rows`` rotated to begin at ``start``
    (``rows[start:]`` then ``rows[:start]``), without building ``order``: a cycle filters a few
    hundred of the thousands of rows it would rotate."""
    n = len(rows)
    end = min(end, n)
    if begin >= end:
        return rows[:0]
    a, b = start + begin, start + end
    if b <= n:
        return rows[a:b]
    if a >= n:
        return rows[a - n:b - n]
    return np.concatenate([rows[a:], rows[:b - n]])
