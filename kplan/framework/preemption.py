"""The preemption evaluator (pkg/scheduler/framework/preemption/preemption.go, v1.34.1) with
DefaultPreemption's policies (plugins/defaultpreemption/default_preemption.go).

Reference section 7: eligibility, candidate nodes (status exactly Unschedulable), the dry run
over a sample of them, SelectVictimsOnNode on a fork of the node, PDB counting, and
pickOneNodeForPreemption's ordered criteria.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kplan.framework.cycle_state import CycleState
from kplan.framework.diagnosis import Diagnosis
from kplan.framework.interfaces import Handle, ReprieveFilter
from kplan.framework.pod_classes import PodClasses
from kplan.framework.status import OK, Code, Status
from kplan.model.objects import PREEMPT_NEVER, Pod, PodDisruptionBudget
from kplan.model.selectors import selector_matches

if TYPE_CHECKING:
    from kplan.cluster.node_table import NodeTable
    from kplan.framework.fast_path import FastPath
    from kplan.framework.outcome import FilterOutcome
    from kplan.framework.runtime import Framework

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_CANDIDATE = "no candidate node for preemption"
INT32_OFFSET = 2**31


@dataclass
class Candidate:
    node: str
    row: int
    victims: list[Pod]
    pdb_violations: int
    #: pickOneNodeForPreemption's criteria, each to maximise in turn; computed when first read
    #: unless the dry run already knew them
    rank: tuple[int, int, int, int, float] | None = None

    def criteria(self) -> tuple[int, int, int, int, float]:
        """(fewest PDB violations, lowest highest victim priority, smallest sum of victim
        priorities, fewest victims, latest earliest start among the highest-priority victims),
        each negated where smaller is better (reference 7.6). Victims are in MoreImportantPod
        order, so the first has the highest priority."""
        if self.rank is None:
            top = self.victims[0].priority
            self.rank = (-self.pdb_violations, -top, -sum(v.priority + INT32_OFFSET for v in self.victims),
                         -len(self.victims), min(start_key(v) for v in self.victims if v.priority == top))
        return self.rank


@dataclass
class PreemptionOutcome:
    """What DefaultPreemption decided. ``nominated_node`` None means "no PostFilterResult"."""

    status: Status
    nominated_node: str | None = None
    victims: list[Pod] = field(default_factory=list)
    #: builds the candidates the dry run found, when they are first read
    candidate_source: Callable[[], list[Candidate]] | None = None
    #: the rows of the nodes whose filter status allowed preemption, in the dry run's order
    potential_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: dry-run statuses of the nodes that were tried and failed (absent: not tried)
    dry_run: Diagnosis | None = None
    #: the node names of the table the dry run's rows index
    row_names: list[str] = field(default_factory=list)
    _candidates: list[Candidate] | None = field(default=None, repr=False)

    @property
    def candidates(self) -> list[Candidate]:
        """The dry run's candidates, those without PDB violations first, each in the order found."""
        if self._candidates is None:
            self._candidates = self.candidate_source() if self.candidate_source is not None else []
        return self._candidates

    @property
    def node_statuses(self) -> dict[str, Status]:
        """Node name → dry-run status, for the nodes that were tried and failed, by node name."""
        if self.dry_run is None:
            return {}
        named = {self.row_names[r]: s for r, s in self.dry_run.statuses.items()}
        return {n: named[n] for n in sorted(named)}


def start_key(pod: Pod) -> float:
    # GetPodStartTime: a pod without a start time counts as started now, after every other one
    return pod.start_time if pod.start_time is not None else float("inf")


def importance_key(pod: Pod) -> tuple[int, float]:
    """MoreImportantPod as a sort key: higher priority first, then earlier start."""
    return (-pod.priority, start_key(pod))


def split_by_pdb(pods: list[Pod], pdbs: list[PodDisruptionBudget], allowed: dict[int, int]
                 ) -> tuple[list[Pod], list[Pod]]:
    """filterPodsWithPDBViolation: (violating, non-violating), each in the given order."""
    budget = {i: allowed[i] for i in range(len(pdbs))}
    violating: list[Pod] = []
    fine: list[Pod] = []
    for p in pods:
        hit = False
        for i, pdb in enumerate(pdbs):
            if counts_against(p, pdb):
                budget[i] -= 1
                if budget[i] < 0:
                    hit = True
        (violating if hit else fine).append(p)
    return violating, fine


def counts_against(pod: Pod, pdb: PodDisruptionBudget) -> bool:
    """Whether evicting the pod uses up some of the budget's allowed disruptions: a pod with
    labels the budget selects in its namespace, not already among its disrupted pods."""
    if not pod.labels or pdb.namespace != pod.namespace or pdb.selector is None or pdb.selector.is_empty:
        return False
    return selector_matches(pdb.selector, pod.labels) and pod.name not in pdb.disrupted_pods


class VictimOrder(PodClasses):
    """Per row of one NodeTable: its pods in the order preemption adds them back (higher
    priority first, then earlier start: MoreImportantPod), with their negated priorities and
    their requests over the table's resource columns in padded arrays, so that many rows are read
    at once. A row is rebuilt when asked for after a pod joined or left it (a table listener), so
    a busy cluster's preemptors share the work."""

    def __init__(self, table: NodeTable) -> None:
        n = len(table)
        self.pods: list[list[Pod]] = [[] for _ in range(n)]
        self.stale = np.ones(n, dtype=bool)
        self.count = np.zeros(n, dtype=np.int64)
        #: pods alike to the filters that read other pods and to PDBs share a class (PodClasses)
        PodClasses.__init__(self)
        self._allocate(n, 4, len(table.res))

    def _allocate(self, n: int, width: int, columns: int) -> None:
        # padding sorts after every real entry: no pod priority is above 2**31
        self.neg_priority = np.full((n, width), _PAST_EVERY_PRIORITY, dtype=np.int64)
        self.start = np.full((n, width), np.inf)
        self.requests = np.zeros((n, width, columns), dtype=np.int64)
        self.classes = np.zeros((n, width), dtype=np.int64)

    @staticmethod
    def of(table: NodeTable) -> VictimOrder:
        return table.listener(VictimOrder, lambda: VictimOrder(table))

    def pod_added(self, table: NodeTable, pod: Pod, row: int) -> None:
        self.stale[row] = True

    def pod_removed(self, table: NodeTable, pod: Pod, row: int) -> None:
        self.stale[row] = True

    def refresh(self, table: NodeTable, rows: np.ndarray) -> None:
        """Rebuild the stale ones among ``rows``."""
        stale = rows[self.stale[rows]]
        if not len(stale):
            return
        width = max(len(table.pods[r]) for r in stale.tolist())
        n, have, columns = self.requests.shape
        if width > have or len(table.res) > columns:
            old_neg, old_start, old_req, old_classes = self.neg_priority, self.start, self.requests, self.classes
            self._allocate(n, max(width, 2 * have if width > have else have), len(table.res))
            self.neg_priority[:, :have] = old_neg
            self.start[:, :have] = old_start
            self.requests[:, :have, :columns] = old_req
            self.classes[:, :have] = old_classes
        for row in stale.tolist():
            pods = sorted(table.pods[row], key=importance_key)
            self.pods[row] = pods
            self.count[row] = len(pods)
            self.neg_priority[row] = _PAST_EVERY_PRIORITY
            self.start[row] = np.inf
            self.requests[row] = 0
            for i, p in enumerate(pods):
                self.neg_priority[row, i] = -p.priority
                self.start[row, i] = start_key(p)
                self.classes[row, i] = self.class_id(p)
                for name, amount in p.requests.items():
                    col = table.res.get(name)
                    if col is not None:
                        self.requests[row, i, col] = amount
        self.stale[stale] = False


_PAST_EVERY_PRIORITY = 2**40
_INT64_MIN = np.iinfo(np.int64).min


@dataclass
class DryRunSizing:
    """Candidates per examined node in the last dry run, which sizes the next one's first chunk
    of the batch walk (a busy cluster changes slowly from one preemptor to the next). It
    decides how many nodes are computed at once, never which are read: no result depends on it."""

    candidate_yield: float = 1.0


class Evaluator:
    def __init__(self, framework: Framework, args: Any, handle: Handle, sizing: DryRunSizing | None = None) -> None:
        self.fw = framework
        self.args = args
        self.handle = handle
        self.sizing = sizing if sizing is not None else DryRunSizing()

    def num_candidates(self, n: int) -> int:
        k = n * self.args.min_candidate_nodes_percentage // 100
        k = max(k, self.args.min_candidate_nodes_absolute)
        return int(min(k, n))

    def eligible(self, pod: Pod, nominated_status: Status | None) -> tuple[bool, str]:
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        nominated = self.handle.nominated_node(pod)
        if nominated and nominated_status is not None and nominated_status.code != Code.UNRESOLVABLE:
            row = self.handle.snapshot.row_of(nominated)
            if row is not None:
                for p in self.handle.snapshot.table.pods[row]:
                    if p.priority < pod.priority and p.terminating and self.handle.terminating_by_preemption(p):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def preempt(self, state: CycleState, pod: Pod, diagnosis: Diagnosis) -> PreemptionOutcome:
        snap = self.handle.snapshot
        table = snap.table
        nominated = self.handle.nominated_node(pod)
        nominated_row = snap.row_of(nominated) if nominated else None
        nominated_status = diagnosis.get(nominated_row) if nominated_row is not None else diagnosis.absent
        ok, msg = self.eligible(pod, nominated_status)
        if not ok:
            return PreemptionOutcome(Status(Code.UNSCHEDULABLE, (msg,)))

        potential = np.asarray(diagnosis.rows_with_code(Code.UNSCHEDULABLE), dtype=np.int64)
        if self.handle.lowest_name:
            # name_rank orders the rows by their names' bytes
            potential = potential[np.argsort(table.name_rank[potential], kind="stable")]
        else:
            potential = np.sort(potential)  # node-tree order stands in for Go's map order
        outcome = PreemptionOutcome(OK, potential_rows=potential, row_names=table.names)
        if not len(potential):
            nested = Diagnosis(len(table), absent=Status(Code.UNRESOLVABLE, (NOT_HELPFUL,)))
            outcome.status = Status(Code.UNSCHEDULABLE, (nested.fit_error(),))
            outcome.nominated_node = ""
            return outcome

        offset = 0 if self.handle.lowest_name else int(self.handle.rng.integers(len(potential)))
        if self.nothing_to_evict(pod, table, potential):
            # SelectVictimsOnNode answers "No preemption victims" on every node, and the dry run,
            # finding no candidate, tries them all
            outcome.dry_run = Diagnosis(len(table), absent=Status(Code.UNRESOLVABLE, (NOT_HELPFUL,)))
            outcome.dry_run.record(potential, Status(Code.UNRESOLVABLE, (NO_VICTIMS,)))
            outcome.status = Status(Code.UNSCHEDULABLE, (outcome.dry_run.fit_error(),))
            outcome.nominated_node = ""
            return outcome
        want = self.num_candidates(len(potential))
        dry = _DryRun(self, state, pod, np.roll(potential, -offset), want)
        dry.run()
        outcome.dry_run = dry.diagnosis()
        order = dry.candidate_positions()
        outcome.candidate_source = lambda: [dry.candidate(i) for i in order.tolist()]
        if not len(order):
            outcome.status = Status(Code.UNSCHEDULABLE, (outcome.dry_run.fit_error(),))
            outcome.nominated_node = ""
            return outcome
        best = dry.candidate(dry.pick(order))
        outcome.nominated_node = best.node
        outcome.victims = best.victims
        return outcome

    @staticmethod
    def nothing_to_evict(pod: Pod, table: NodeTable, rows: np.ndarray) -> bool:
        """Whether no node of ``rows`` holds a pod of lower priority than ``pod``."""
        return not bool((table.min_priority(rows) < pod.priority).any())

    def select_victims(self, state: CycleState, pod: Pod, row: int, pdbs: list[PodDisruptionBudget],
                       allowed: dict[int, int], *, fixed_passed: bool = False) -> tuple[list[Pod], int, Status]:
        """SelectVictimsOnNode on a fork of the node and a clone of the cycle state.

        When the resource filter alone can change its verdict as pods leave and return (see
        _resources_alone) and the node-attribute filters pass (``fixed_passed``), it decides
        on scalars without a fork; where the pod does not fit even so, the fork gives the
        filters' own status."""
        table = self.handle.snapshot.table
        potential = [p for p in table.pods[row] if p.priority < pod.priority]
        if not potential:
            return [], 0, Status(Code.UNRESOLVABLE, (NO_VICTIMS,))
        by_resources = self._resources_alone(state, pod, table.names[row]) if fixed_passed else None
        if by_resources is not None:
            order = sorted(potential, key=importance_key)
            bad, good = split_by_pdb(order, pdbs, allowed)
            found = by_resources.reprieve(state, pod, table, row, potential, bad + good)
            if found is not None:
                n_violations = sum(1 for p in found if any(p is b for b in bad))
                if bad and good:
                    found.sort(key=importance_key)
                return found, n_violations, OK
        fork = table.take([row])
        st = state.clone()
        nominator = self.handle.nominator
        here = np.zeros(1, dtype=np.int64)
        for p in potential:
            fork.remove_pod(p, 0)
            self.fw.remove_pod_from_state(st, pod, p, fork, 0)
        out = self.fw.run_filter_plugins_with_nominated_pods(st, pod, fork, here, nominator)
        if out.codes[0] != 0:
            return [], 0, out.status(0, self.fw.filter_names)
        potential.sort(key=importance_key)
        bad, good = split_by_pdb(potential, pdbs, allowed)
        victims: list[Pod] = []
        n_violations = 0
        for group, counts in ((bad, True), (good, False)):
            for p in group:
                fork.add_pod(p, 0)
                self.fw.add_pod_to_state(st, pod, p, fork, 0)
                if self.fw.run_filter_plugins_with_nominated_pods(st, pod, fork, here, nominator).codes[0] != 0:
                    fork.remove_pod(p, 0)
                    self.fw.remove_pod_from_state(st, pod, p, fork, 0)
                    victims.append(p)
                    if counts:
                        n_violations += 1
        if bad and good:
            victims.sort(key=importance_key)
        return victims, n_violations, OK

    def _resources_alone(self, state: CycleState, pod: Pod, node: str) -> ReprieveFilter | None:
        """The resource Filter plugin (one with ``reprieve``) if it alone can change its verdict
        as victims are added back on ``node`` (Framework.resource_filter_alone) and no nominated
        pod must be added there first. None otherwise: the reprieve then runs every filter."""
        if self.handle.nominator.yielding_to(pod, node):
            return None
        fast = self.fw.fast_path(state)
        return fast.resource if fast is not None and not fast.selective else None

    def pick(self, candidates: list[Candidate]) -> Candidate | None:
        """pickOneNodeForPreemption (reference 7.6)."""
        if len(candidates) == 1:
            return candidates[0]
        # the criteria applied one after another, each keeping the best: a lexicographic maximum
        ranks = [c.criteria() for c in candidates]
        best = max(ranks)
        remaining = [c for c, r in zip(candidates, ranks, strict=True) if r == best]
        if len(remaining) == 1:
            return remaining[0]
        if self.handle.lowest_name:
            return min(remaining, key=lambda c: c.node.encode())
        return remaining[int(self.handle.rng.integers(len(remaining)))]


class _DryRun:
    """DryRunPreemption with parallelism 1 over ``tried`` (the candidate nodes from the random
    offset on), in columns: position ``i`` of every array is the node ``tried[i]``. Nodes are
    examined in order until some candidate without PDB violations is known and ``want``
    candidates in all; whatever was settled for nodes past that point is dropped.

    Per node, in the order of the cheapest that applies: no pod of lower priority (no victims);
    a leading node-attribute filter rejects it (its verdict, which no eviction changes); the
    batch walk (_BatchReprieve) for many nodes at once; else SelectVictimsOnNode node by node
    (Evaluator.select_victims). Candidates stay columns (their pick criteria and where their
    victims are) and become Candidate objects only when read."""

    def __init__(self, ev: Evaluator, state: CycleState, pod: Pod, tried: np.ndarray, want: int) -> None:
        self.ev, self.state, self.pod, self.tried, self.want = ev, state, pod, tried, want
        snap = ev.handle.snapshot
        self.table = snap.table
        self.names = self.table.names
        self.pdbs = snap.pdbs
        self.allowed = {i: ev.handle.disruptions_allowed(pdb) for i, pdb in enumerate(self.pdbs)}
        n = len(tried)
        self.has_victims = self.table.min_priority(tried) < pod.priority
        self.fixed = ev.fw.fixed_filters_outcome(state, pod, self.table, tried)
        self.is_candidate = np.zeros(n, dtype=bool)
        self.is_clean = np.zeros(n, dtype=bool)
        #: Candidate.criteria per position, one array per criterion
        self.criteria = [np.zeros(n, dtype=np.int64) for _ in range(4)] + [np.zeros(n)]
        #: failed positions settled in bulk, with their verdicts (plugins index filter_plugins)
        self.failed = np.zeros(n, dtype=bool)
        self.codes = np.zeros(n, dtype=np.int8)
        self.reasons = np.zeros(n, dtype=np.int32)
        self.plugins = np.full(n, -1, dtype=np.int16)
        #: the node-by-node path's results
        self.singles: dict[int, Candidate] = {}
        self.statuses: dict[int, Status] = {}
        self.batches: list[_Batch] = []
        self.batch_of = np.full(n, -1, dtype=np.int64)
        self.examined = n
        fast = ev.fw.fast_path(state)
        self.batch = _BatchReprieve(ev, state, pod, fast, tried) if fast is not None else None
        self.n_candidates = 0
        self.n_clean = 0

    def run(self) -> None:
        n = len(self.tried)
        # chunks are sized in the positions that some path examines (a lower-priority pod, the
        # leading filters pass), so the batch walk computes few nodes past where the run stops
        examined = np.cumsum(self.has_victims & (self.fixed.codes == 0))
        lo, seen = 0, 0
        need = int(self.want / max(self.ev.sizing.candidate_yield, 0.05) * 1.1) + 16
        while lo < n:
            hi = min(n, max(lo + 1, int(np.searchsorted(examined, seen + need)) + 1))
            todo = self.has_victims[lo:hi].copy()
            rejected = todo & (self.fixed.codes[lo:hi] != 0)
            if rejected.any():
                at = lo + np.flatnonzero(rejected)
                self._fail(at, self.fixed.codes[at], self.fixed.reasons[at], self.fixed.plugins[at])
                todo &= ~rejected
            if self.batch is not None and todo.any():
                found = self.batch.compute(lo + np.flatnonzero(todo))
                if found is not None:
                    todo[found.at - lo] = False
                    self._take(found)
            stop = self._scan(lo, hi, lo + np.flatnonzero(todo))
            if stop >= 0:
                self.examined = stop + 1
                self._learn_yield(int(np.count_nonzero(self.is_candidate[:stop + 1])), int(examined[stop]))
                return
            # the next chunk from the share of candidates among the positions examined so far
            lo, seen = hi, int(examined[hi - 1])
            missing = self.want - self.n_candidates
            need = 64 if missing <= 0 else int(missing * seen / max(self.n_candidates, 1) * 1.1) + 16
        if n:
            self._learn_yield(self.n_candidates, int(examined[-1]))

    def _learn_yield(self, candidates: int, examined: int) -> None:
        if examined:
            self.ev.sizing.candidate_yield = candidates / examined

    def _fail(self, at: np.ndarray, codes: np.ndarray, reasons: np.ndarray, plugins: np.ndarray | int) -> None:
        self.failed[at] = True
        self.codes[at] = codes
        self.reasons[at] = reasons
        self.plugins[at] = plugins

    def _take(self, found: _Batch) -> None:
        at = found.at
        self.batch_of[at] = len(self.batches)
        self.batches.append(found)
        ok = found.fits & (found.n_victims > 0)
        self.is_candidate[at[ok]] = True
        self.is_clean[at[ok]] = found.violations[ok] == 0
        for column, values in zip(self.criteria, found.criteria(), strict=True):
            column[at] = values
        bad = ~found.fits
        if bad.any():
            self._fail(at[bad], found.fail_codes, found.fail_reasons, found.fail_plugins)
        empty = found.fits & (found.n_victims == 0)
        if empty.any():
            for i in at[empty].tolist():
                self.statuses[int(self.tried[i])] = self._no_victim_error(int(self.tried[i]))

    def _no_victim_error(self, row: int) -> Status:
        return Status(Code.ERROR, (f'expected at least one victim pod on node "{self.names[row]}"',))

    def _scan(self, lo: int, hi: int, singles: np.ndarray) -> int:
        """Walk positions ``lo:hi`` in order, running the node-by-node path at ``singles``; the
        position where the dry run stops, or -1."""
        p = lo
        for g in singles.tolist() + [hi]:
            if g > p and self.is_candidate[p:g].any():
                found = self.n_candidates + np.cumsum(self.is_candidate[p:g])
                clean = self.n_clean + np.cumsum(self.is_clean[p:g])
                hit = np.flatnonzero((clean >= 1) & (found >= self.want))
                if len(hit):
                    return p + int(hit[0])
                self.n_candidates, self.n_clean = int(found[-1]), int(clean[-1])
            if g == hi:
                return -1
            row = int(self.tried[g])
            victims, n_violations, status = self.ev.select_victims(self.state, self.pod, row, self.pdbs, self.allowed,
                                                                   fixed_passed=True)
            if status.ok and victims:
                c = Candidate(self.names[row], row, victims, n_violations)
                self.singles[g] = c
                for column, value in zip(self.criteria, c.criteria(), strict=True):
                    column[g] = value
                self.is_candidate[g] = True
                self.is_clean[g] = n_violations == 0
                self.n_candidates += 1
                self.n_clean += int(n_violations == 0)
                if self.n_clean and self.n_candidates >= self.want:
                    return int(g)
            else:
                self.statuses[row] = status if not status.ok else self._no_victim_error(row)
            p = g + 1
        return -1

    def diagnosis(self) -> Diagnosis:
        """The dry run's NodeToStatus: the nodes examined that are no candidate."""
        nested = Diagnosis(len(self.table), statuses=self.statuses, absent=Status(Code.UNRESOLVABLE, (NOT_HELPFUL,)))
        ex = self.examined
        failed = np.flatnonzero(self.failed[:ex])
        if len(failed):
            nested.record_outcome(self.tried[failed], self.codes[failed], self.reasons[failed], self.plugins[failed],
                                  self.ev.fw.filter_names)
        nested.record(self.tried[:ex][~self.has_victims[:ex]], Status(Code.UNRESOLVABLE, (NO_VICTIMS,)))
        return nested

    def candidate_positions(self) -> np.ndarray:
        """The candidates' positions, those without PDB violations first, each in the order found."""
        ex = self.examined
        found = self.is_candidate[:ex]
        clean = self.is_clean[:ex]
        return np.concatenate([np.flatnonzero(found & clean), np.flatnonzero(found & ~clean)])

    def pick(self, order: np.ndarray) -> int:
        """pickOneNodeForPreemption (reference 7.6) over the candidates at ``order``: the
        criteria applied one after another, each keeping the best, is a lexicographic maximum;
        a full tie goes to the smallest name or a random one."""
        if len(order) == 1:
            return int(order[0])
        keep = np.ones(len(order), dtype=bool)
        for column in self.criteria:
            values = column.take(order)
            keep &= values == values[keep].max()
        remaining = order[keep]
        if len(remaining) == 1:
            return int(remaining[0])
        if self.ev.handle.lowest_name:
            return int(remaining[int(np.argmin(self.table.name_rank.take(self.tried.take(remaining))))])
        return int(remaining[int(self.ev.handle.rng.integers(len(remaining)))])

    def candidate(self, i: int) -> Candidate:
        """The candidate at position ``i``, as an object."""
        single = self.singles.get(i)
        if single is not None:
            return single
        found = self.batches[int(self.batch_of[i])]
        k = int(np.searchsorted(found.at, i))
        row = int(self.tried[i])
        c = self.criteria
        rank = (int(c[0][i]), int(c[1][i]), int(c[2][i]), int(c[3][i]), float(c[4][i]))
        return Candidate(self.names[row], row, found.victims(k), int(found.violations[k]), rank)


@dataclass
class _Batch:
    """What one batch walk settled, for the positions ``at`` (ascending) of the dry run."""

    at: np.ndarray
    fits: np.ndarray          # the pod fits with every lower-priority pod gone, all filters passing
    chosen: np.ndarray        # victims: [k, j] for the j-th pod of position k in the walk's order
    offsets: np.ndarray       # [k, j]: that pod's index in pods[k], from base[k]
    base: np.ndarray          # where the lower-priority pods start in pods[rows[k]]
    rows: np.ndarray
    #: per table row, its pods in MoreImportantPod order: a shallow copy of VictimOrder.pods,
    #: whose refresh replaces a row's list rather than changing it, so candidates read later
    #: (explain reads them after the cycle has bound pods) see the lists of this dry run
    pods: list[list[Pod]]
    violations: np.ndarray
    top: np.ndarray
    total: np.ndarray
    n_victims: np.ndarray
    earliest: np.ndarray
    #: the verdicts where the pod does not fit, in the order of np.flatnonzero(~fits)
    fail_codes: np.ndarray
    fail_reasons: np.ndarray
    fail_plugins: np.ndarray

    def criteria(self) -> tuple[np.ndarray, ...]:
        """Candidate.criteria, one array per criterion."""
        return -self.violations, -self.top, -self.total, -self.n_victims, self.earliest

    def victims(self, k: int) -> list[Pod]:
        """In MoreImportantPod order, as SelectVictimsOnNode sorts them."""
        pods, base = self.pods[int(self.rows[k])], int(self.base[k])
        return [pods[base + j] for j in np.sort(self.offsets[k][self.chosen[k]]).tolist()]


class _BatchReprieve:
    """The dry run's shortcut for many nodes at once (Framework.reprieve_plan): the resource
    filter decides the reprieve, and the selective-state filters (PodTopologySpread,
    InterPodAffinity) give the same verdict on a node with or without its lower-priority pods
    when none of those is a pod their PreFilter state counts (affected_by). On such nodes,
    where the node-attribute filters pass, the selective filters are run once on the node with
    its nominated pods of at least the pod's priority counted (filter_with_pods), and the
    victims come from one vectorised greedy walk (the resource plugin's ``reprieve_rows``) over
    every such node, with those nominated pods as load: the filters' pass with them added is
    the stricter of RunFilterPluginsWithNominatedPods' two (a node where a selective filter
    passes with them but not without, as pod affinity may, takes the node-by-node path, as does
    one where a filter cannot count them). PodDisruptionBudgets order the walk as
    filterPodsWithPDBViolation does: per node, the pods past each budget's allowed disruptions
    first. Where the pod does not fit even with every lower-priority pod gone, the node's status
    is the first rejection in filter order. Nodes where some such pod does touch a selective
    filter's state take the node-by-node path."""

    def __init__(self, evaluator: Evaluator, state: CycleState, pod: Pod, plan: FastPath,
                 tried: np.ndarray) -> None:
        self.ev, self.state, self.pod, self.plan, self.plugin = evaluator, state, pod, plan, plan.resource
        self.tried = tried
        self.order = VictimOrder.of(evaluator.handle.snapshot.table)
        pdbs = evaluator.handle.snapshot.pdbs
        # budgets per PDB index; a budget that lists disrupted pods is read pod by pod (general path)
        self.pdbs = pdbs
        self.allowed = np.array([evaluator.handle.disruptions_allowed(b) for b in pdbs], dtype=np.int64)
        self.pdbs_by_class = not any(b.disrupted_pods for b in pdbs) and len(pdbs) <= 62
        #: per pod class: whether some selective filter's state counts it; PDB membership bits
        self.affects: dict[int, bool] = {}
        self.members: dict[int, int] = {}

    def _class_table(self, classes: np.ndarray, cache: dict[int, Any], of: Any, dtype: Any) -> np.ndarray:
        """A lookup array over class ids with ``of(example pod)`` for the ``classes`` present."""
        for c in np.unique(classes).tolist():
            if c not in cache:
                cache[c] = of(self.order.examples[c])
        table = np.zeros(len(self.order.examples), dtype=dtype)
        keys = np.fromiter(cache.keys(), dtype=np.int64, count=len(cache))
        table[keys] = np.fromiter(cache.values(), dtype=dtype, count=len(cache))
        return table

    def compute(self, at: np.ndarray) -> _Batch | None:
        ev, state, pod, order = self.ev, self.state, self.pod, self.order
        table = ev.handle.snapshot.table
        rows = self.tried[at]
        order.refresh(table, rows)
        # the lower-priority pods of a row are the tail of its list, after those of priority >= the pod's
        start = (order.neg_priority[rows] <= -pod.priority).sum(axis=1)
        counts = order.count[rows] - start
        width = int(counts.max()) if len(counts) else 0
        step = np.arange(width)
        present = step < counts[:, None]
        picked = np.where(present, start[:, None] + step, 0)
        classes = np.where(present, order.classes[rows[:, None], picked], 0)
        load = ev.handle.nominator.load(pod, table, rows)
        general = np.zeros(len(rows), dtype=bool)
        selective: FilterOutcome | None = None
        if self.plan.selective:
            # a node whose pods leaving would change a selective filter's state takes the
            # node-by-node path
            affects = self._class_table(classes[present], self.affects, lambda p: any(
                f.affected_by(state, pod, p) for _, f in self.plan.selective), bool)
            general |= (affects[classes] & present).any(axis=1)
            # their verdicts with the nominated pods counted (RunFilterPluginsWithNominatedPods'
            # first pass): the same with the victims gone or back; where a filter cannot count
            # them, or passes with them but not without (the second pass would decide), the
            # node takes the node-by-node path too
            nominated = ev.handle.nominator.classes(pod, table, rows)
            selective, fork = self.plan.selective_with_counts(state, pod, table, rows, nominated.examples,
                                                              nominated.spread(len(rows)))
            general |= fork
            if len(nominated):
                at_nominated = nominated.positions
                plain = self.plan.selective_as_is(state, pod, table, rows.take(at_nominated))
                general[at_nominated[(selective.codes.take(at_nominated) == 0) & (plain.codes != 0)]] = True
        members = None
        if self.pdbs:
            if self.pdbs_by_class:
                members = self._class_table(classes[present], self.members, lambda p: sum(
                    1 << i for i, b in enumerate(self.pdbs) if counts_against(p, b)), np.int64)[classes]
                members = np.where(present, members, 0)
            else:
                # a row with a pod a PDB guards takes the general path (split_by_pdb's order)
                general |= np.array([any(counts_against(p, b) for p in order.pods[r][s:] for b in self.pdbs)
                                     for r, s in zip(rows.tolist(), start.tolist(), strict=True)], dtype=bool)
        if general.any():
            keep = ~general
            kept = np.flatnonzero(keep)
            at, rows, start, counts = at[keep], rows[keep], start[keep], counts[keep]
            present, picked = present[keep], picked[keep]
            if selective is not None:
                selective = selective.take(keep)
            if members is not None:
                members = members[keep]
            if len(load):
                where = np.full(len(keep), -1, dtype=np.int64)
                where[kept] = np.arange(len(kept))
                moved = where[load.positions]
                ok = moved >= 0
                load = type(load)(moved[ok], load.pods[ok], {n: a[ok] for n, a in load.requests.items()})
        k_rows = len(rows)
        if not k_rows:
            return None
        violating = np.zeros(present.shape, dtype=bool)
        if members is not None and members.any():
            # filterPodsWithPDBViolation per node: a pod past any of its budgets' allowed
            # disruptions (counted in MoreImportantPod order) violates; those are tried first
            for i in range(len(self.pdbs)):
                member = (members >> i) & 1 == 1
                violating |= member & (np.cumsum(member, axis=1) > self.allowed[i])
            walk = np.argsort(~violating, axis=1, kind="stable")
            picked = np.take_along_axis(picked, walk, axis=1)
            violating = np.take_along_axis(violating, walk, axis=1)
        stacked = order.requests[rows[:, None], picked] * present[:, :, None]
        columns = stacked.shape[2]
        reserved = np.zeros((k_rows, columns + 1), dtype=np.int64)   # the last column counts pods
        if len(load):
            reserved[load.positions, columns] = load.pods
            for name, amount in load.requests.items():
                col = table.res.get(name)
                if col is not None and col < columns:
                    reserved[load.positions, col] = amount
        fits, victim = self.plugin.reprieve_rows(state, pod, table, rows, stacked, counts, reserved)
        n = len(rows)
        s_plugins = np.full(n, -1, dtype=np.int16)
        s_codes = np.zeros(n, dtype=np.int8)
        s_reasons = np.zeros(n, dtype=np.int32)
        if selective is not None:
            s_plugins, s_codes, s_reasons = selective.plugins, selective.codes, selective.reasons
        passed = fits & (s_codes == 0)
        chosen = victim & passed[:, None]
        # Candidate.criteria for every row at once
        priority = -order.neg_priority[rows[:, None], picked]
        top = np.where(chosen, priority, _INT64_MIN).max(axis=1)
        total = np.where(chosen, priority + INT32_OFFSET, 0).sum(axis=1)
        earliest = np.where(chosen & (priority == top[:, None]), order.start[rows[:, None], picked], np.inf).min(axis=1)
        n_victims = chosen.sum(axis=1)
        violations = (chosen & violating).sum(axis=1)
        bad = np.flatnonzero(~passed)
        fail_codes = s_codes[bad]
        fail_reasons = s_reasons[bad]
        fail_plugins = s_plugins[bad]
        resource_first = ~fits[bad] & ((fail_plugins < 0) | (fail_plugins > self.plan.at))
        if resource_first.any():
            # the resource filter's verdict on the node without its lower-priority pods, with the load
            r = bad[resource_first]
            gone = stacked[r].sum(axis=1)
            held = reserved[r]
            requests = {name: held[:, col] - gone[:, col] for name, col in
                        ((name, table.res.get(name)) for name in table.res.names) if col is not None and col < columns}
            v = self.plugin.filter_with_load(state, pod, table, rows[r], held[:, columns] - counts[r], requests)
            fail_codes[resource_first] = v.codes
            fail_reasons[resource_first] = v.reasons
            fail_plugins[resource_first] = self.plan.at
        return _Batch(at, passed, chosen, picked - start[:, None], start, rows, order.pods.copy(), violations, top, total, n_victims,
                      earliest, fail_codes, fail_reasons, fail_plugins)
