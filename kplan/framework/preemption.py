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
from kplan.framework.interfaces import Handle
from kplan.framework.outcome import FilterOutcome
from kplan.framework.pod_classes import PodClasses
from kplan.framework.status import OK, Code, Status
from kplan.model.objects import PREEMPT_NEVER, Pod, PodDisruptionBudget
from kplan.model.selectors import selector_matches

if TYPE_CHECKING:
    from kplan.cluster.node_table import NodeTable
    from kplan.framework.fast_path import FastPath
    from kplan.framework.runtime import Framework, NominatedLoad

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


def _no_candidate(outcome: PreemptionOutcome, nested: Diagnosis) -> PreemptionOutcome:
    """``outcome`` where the dry run found no candidate: Unschedulable with the FitError of its
    statuses ``nested``, and the nomination cleared."""
    outcome.status = Status(Code.UNSCHEDULABLE, (nested.fit_error().message,))
    outcome.nominated_node = ""
    return outcome


def start_key(pod: Pod) -> float:
    # GetPodStartTime: a pod without a start time counts as started now, after every other one
    return pod.start_time if pod.start_time is not None else float("inf")


def importance_key(pod: Pod) -> tuple[int, float]:
    """MoreImportantVictim as a sort key up to 1.37: higher priority first, then earlier start;
    equal ones keep their order (sort.Slice's insertion sort on a node's few pods is stable)."""
    return (-pod.priority, start_key(pod))


def importance_key_by_uid(pod: Pod) -> tuple[int, float, str]:
    """MoreImportantVictim as a sort key from 1.38: higher priority first, then earlier start
    (a pod without one, GetPodStartTime's maximum time: #139210), then the smaller pod UID
    (podIdentityLess, #140999)."""
    return (-pod.priority, start_key(pod), pod.uid)


#: how a release orders potential victims (MoreImportantVictim)
ImportanceKey = Callable[[Pod], tuple[Any, ...]]
#: whether evicting a pod uses up some of a budget's allowed disruptions, as a release reads budgets
CountsAgainst = Callable[[Pod, PodDisruptionBudget], bool]


def split_by_pdb(pods: list[Pod], pdbs: list[PodDisruptionBudget], allowed: dict[int, int],
                 counts: CountsAgainst) -> tuple[list[Pod], list[Pod]]:
    """filterPodsWithPDBViolation: (violating, non-violating), each in the given order."""
    budget = {i: allowed[i] for i in range(len(pdbs))}
    violating: list[Pod] = []
    fine: list[Pod] = []
    for p in pods:
        hit = False
        for i, pdb in enumerate(pdbs):
            if counts(p, pdb):
                budget[i] -= 1
                if budget[i] < 0:
                    hit = True
        (violating if hit else fine).append(p)
    return violating, fine


def counts_against(pod: Pod, pdb: PodDisruptionBudget) -> bool:
    """Whether evicting the pod uses up some of the budget's allowed disruptions, up to 1.37: a
    pod with labels the budget selects in its namespace, not already among its disrupted pods; a
    nil or empty selector selects nothing."""
    if not pod.labels or pdb.namespace != pod.namespace or pdb.selector is None or pdb.selector.is_empty:
        return False
    return selector_matches(pdb.selector, pod.labels) and pod.name not in pdb.disrupted_pods


def counts_against_empty_selects_all(pod: Pod, pdb: PodDisruptionBudget) -> bool:
    """As counts_against, from 1.38 (#141785): an empty selector selects every pod of the
    namespace, and a pod without labels is matched like any other; a nil selector still selects
    nothing."""
    if pdb.namespace != pod.namespace or pdb.selector is None:
        return False
    return selector_matches(pdb.selector, pod.labels) and pod.name not in pdb.disrupted_pods


@dataclass(frozen=True)
class PreemptionRules:
    """DefaultPreemption's release rules."""

    #: potential victims of equal priority and start time are ordered by pod UID (1.38, #140999);
    #: before, they keep the node's order
    victims_tie_by_uid: bool
    #: a PDB with an empty selector guards every pod of its namespace, labelled or not (1.38,
    #: #141785); before, it guards none
    empty_pdb_selector_selects_all: bool
    #: a node where the pod fits with every victim reprieved is UnschedulableAndUnresolvable "No
    #: preemption victims found for incoming pod" (1.38, #135486); before, an Error that fails the
    #: whole preemption ("expected at least one victim pod on node ...")
    no_victim_node_unresolvable: bool

    def importance_key(self) -> ImportanceKey:
        return importance_key_by_uid if self.victims_tie_by_uid else importance_key

    def counts_against(self) -> CountsAgainst:
        return counts_against_empty_selects_all if self.empty_pdb_selector_selects_all else counts_against

    def no_victim_status(self, node: str) -> Status:
        """SelectVictimsOnNode succeeded with no victims on ``node``: what the dry run records."""
        if self.no_victim_node_unresolvable:
            return Status(Code.UNRESOLVABLE, (NO_VICTIMS,))
        return Status(Code.ERROR, (f'expected at least one victim pod on node "{node}"',))



class VictimOrder(PodClasses):
    """Per row of one NodeTable: its pods in the order preemption adds them back (higher
    priority first, then earlier start: MoreImportantPod), with their negated priorities and
    their requests over the table's resource columns in padded arrays, so that many rows are read
    at once. A row is rebuilt when asked for after a pod joined or left it (a table listener), so
    a busy cluster's preemptors share the work."""

    def __init__(self, table: NodeTable, key: ImportanceKey) -> None:
        n = len(table)
        #: MoreImportantVictim as the release has it
        self.key = key
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
    def of(table: NodeTable, key: ImportanceKey) -> VictimOrder:
        # one release per run, so one key per table
        return table.listener(VictimOrder, lambda: VictimOrder(table, key))

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
            pods = sorted(table.pods[row], key=self.key)
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
    def __init__(self, framework: Framework, args: Any, handle: Handle, rules: PreemptionRules,
                 sizing: DryRunSizing | None = None) -> None:
        self.fw = framework
        self.args = args
        self.rules = rules
        #: MoreImportantVictim and the PDB match, as the release has them
        self.importance_key = rules.importance_key()
        self.counts_against = rules.counts_against()
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
        """Preempt (preemption.go): whether the pod may preempt at all; the nodes where preemption
        might help (status exactly Unschedulable); DryRunPreemption over them from a random
        offset (SelectVictimsOnNode on each until enough candidates are found); then the best
        candidate (pickOneNodeForPreemption)."""
        table = self.handle.snapshot.table
        ok, msg = self.eligible(pod, self._nominated_status(pod, diagnosis))
        if not ok:
            return PreemptionOutcome(Status(Code.UNSCHEDULABLE, (msg,)))
        potential = self.nodes_where_preemption_might_help(diagnosis)
        outcome = PreemptionOutcome(OK, potential_rows=potential, row_names=table.names)
        if not len(potential):
            return _no_candidate(outcome, Diagnosis(len(table), absent=Status(Code.UNRESOLVABLE, (NOT_HELPFUL,))))
        offset = 0 if self.handle.lowest_name else int(self.handle.rng.integers(len(potential)))
        if self.nothing_to_evict(pod, table, potential):
            # SelectVictimsOnNode answers "No preemption victims" on every node, and the dry run,
            # finding no candidate, tries them all
            outcome.dry_run = Diagnosis(len(table), absent=Status(Code.UNRESOLVABLE, (NOT_HELPFUL,)))
            outcome.dry_run.record(potential, Status(Code.UNRESOLVABLE, (NO_VICTIMS,)))
            return _no_candidate(outcome, outcome.dry_run)
        dry = _DryRun(self, state, pod, np.roll(potential, -offset), self.num_candidates(len(potential)))
        dry.run()
        outcome.dry_run = dry.diagnosis()
        order = dry.candidate_positions()
        outcome.candidate_source = lambda: [dry.candidate(i) for i in order.tolist()]
        if not len(order):
            return _no_candidate(outcome, outcome.dry_run)
        best = dry.candidate(dry.pick(order))
        outcome.nominated_node = best.node
        outcome.victims = best.victims
        return outcome

    def _nominated_status(self, pod: Pod, diagnosis: Diagnosis) -> Status | None:
        """The filters' status of the node the pod is nominated to, in this cycle's diagnosis."""
        nominated = self.handle.nominated_node(pod)
        row = self.handle.snapshot.row_of(nominated) if nominated else None
        return diagnosis.get(row) if row is not None else diagnosis.absent

    def nodes_where_preemption_might_help(self, diagnosis: Diagnosis) -> np.ndarray:
        """The rows whose status is exactly Unschedulable, in the order the dry run walks them."""
        table = self.handle.snapshot.table
        potential = np.asarray(diagnosis.rows_with_code(Code.UNSCHEDULABLE), dtype=np.int64)
        if self.handle.lowest_name:
            # name_rank orders the rows by their names' bytes
            return potential[np.argsort(table.name_rank[potential], kind="stable")]
        return np.sort(potential)  # node-tree order stands in for Go's map order

    @staticmethod
    def nothing_to_evict(pod: Pod, table: NodeTable, rows: np.ndarray) -> bool:
        """Whether no node of ``rows`` holds a pod of lower priority than ``pod``."""
        return not bool((table.min_priority(rows) < pod.priority).any())

    def select_victims_on_node(self, state: CycleState, pod: Pod, row: int, pdbs: list[PodDisruptionBudget],
                               allowed: dict[int, int]) -> tuple[list[Pod], int, Status]:
        """SelectVictimsOnNode (default_preemption.go), on a copy of the node and a clone of the
        cycle state: take away every pod of lower priority than the pod; if the pod does not fit
        even so (RunFilterPluginsWithNominatedPods), the node is no candidate. Else add them
        back, most important first and those whose eviction would violate a
        PodDisruptionBudget before the others, keeping each one the pod still fits beside; the
        rest are the victims. Returns (victims, how many violate a budget, status)."""
        table = self.handle.snapshot.table
        potential = [p for p in table.pods[row] if p.priority < pod.priority]
        if not potential:
            return [], 0, Status(Code.UNRESOLVABLE, (NO_VICTIMS,))
        copy = table.take([row])
        copy_state = state.clone()
        here = np.zeros(1, dtype=np.int64)

        def fits() -> FilterOutcome:
            return self.fw.run_filter_plugins_with_nominated_pods(copy_state, pod, copy, here, self.handle.nominator)

        def remove(p: Pod) -> None:
            copy.remove_pod(p, 0)
            self.fw.remove_pod_from_state(copy_state, pod, p, copy, 0)

        def reprieve(p: Pod) -> bool:
            copy.add_pod(p, 0)
            self.fw.add_pod_to_state(copy_state, pod, p, copy, 0)
            if fits().codes[0] == 0:
                return True
            remove(p)
            return False

        for p in potential:
            remove(p)
        without = fits()
        if without.codes[0] != 0:
            return [], 0, without.status(0, self.fw.filter_names)
        potential.sort(key=self.importance_key)
        violating, non_violating = split_by_pdb(potential, pdbs, allowed, self.counts_against)
        victims = [p for p in violating if not reprieve(p)]
        n_violations = len(victims)
        victims += [p for p in non_violating if not reprieve(p)]
        if violating and non_violating:
            victims.sort(key=self.importance_key)
        return victims, n_violations, OK

    def pick_one_node_for_preemption(self, candidates: list[Candidate]) -> Candidate | None:
        """pickOneNodeForPreemption (reference 7.6) over candidate objects (pick_by_criteria)."""
        if not candidates:
            return None
        columns = [np.array(column) for column in zip(*(c.criteria() for c in candidates), strict=True)]
        names = [c.node.encode() for c in candidates]
        name_rank = np.zeros(len(candidates), dtype=np.int64)
        name_rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        return candidates[pick_by_criteria(columns, name_rank, self.handle)]


def pick_by_criteria(criteria: list[np.ndarray], name_rank: np.ndarray, handle: Handle) -> int:
    """pickOneNodeForPreemption (reference 7.6) over candidates given as columns: ``criteria``
    (Candidate.criteria, one array per criterion, each to maximise) and ``name_rank`` (the
    order of their node names' bytes). The criteria apply one after another, each keeping the
    best candidates (a lexicographic maximum); a full tie goes to the smallest name with
    lowest-name ties, else to a random one. Returns the chosen candidate's index."""
    n = len(name_rank)
    if n == 1:
        return 0
    keep = np.ones(n, dtype=bool)
    for column in criteria:
        keep &= column == column[keep].max()
    remaining = np.flatnonzero(keep)
    if len(remaining) == 1:
        return int(remaining[0])
    if handle.lowest_name:
        return int(remaining[int(np.argmin(name_rank.take(remaining)))])
    return int(remaining[int(handle.rng.integers(len(remaining)))])


class _DryRun:
    """DryRunPreemption with parallelism 1 over ``tried`` (the candidate nodes from the random
    offset on), in columns: position ``i`` of every array is the node ``tried[i]``. Nodes are
    examined in order until some candidate without PDB violations is known and ``want``
    candidates in all; whatever was settled for nodes past that point is dropped.

    Each node's answer is SelectVictimsOnNode's. Its first steps are taken for many nodes at
    once: a node without a pod of lower priority has no victims, and one a leading
    node-attribute filter rejects keeps that verdict (no eviction changes it). The others go
    through the cycle's fast path where it is open (_BatchReprieve: many nodes at once) and
    else through Evaluator.select_victims_on_node, node by node. Candidates stay columns
    (their pick criteria and where their victims are) and become Candidate objects only when
    read."""

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
        self.verdicts = FilterOutcome.all_pass(tried)
        #: the node-by-node path's results
        self.singles: dict[int, Candidate] = {}
        self.statuses: dict[int, Status] = {}
        self.batches: list[BatchVictims] = []
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
                self._fail(self.fixed.take(lo + np.flatnonzero(rejected)), lo + np.flatnonzero(rejected))
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

    def _fail(self, verdicts: FilterOutcome, at: np.ndarray) -> None:
        self.failed[at] = True
        self.verdicts.codes[at] = verdicts.codes
        self.verdicts.reasons[at] = verdicts.reasons
        self.verdicts.plugins[at] = verdicts.plugins

    def _take(self, found: BatchVictims) -> None:
        at = found.at
        self.batch_of[at] = len(self.batches)
        self.batches.append(found)
        ok = found.fits & (found.n_victims > 0)
        self.is_candidate[at[ok]] = True
        self.is_clean[at[ok]] = found.violations[ok] == 0
        for column, values in zip(self.criteria, found.criteria, strict=True):
            column[at] = values
        if len(found.failures.rows):
            self._fail(found.failures, at[~found.fits])
        empty = found.fits & (found.n_victims == 0)
        if empty.any():
            for i in at[empty].tolist():
                self.statuses[int(self.tried[i])] = self._no_victim_status(int(self.tried[i]))

    def _no_victim_status(self, row: int) -> Status:
        return self.ev.rules.no_victim_status(self.names[row])

    def _scan(self, lo: int, hi: int, singles: np.ndarray) -> int:
        """Walk positions ``lo:hi`` in order, running SelectVictimsOnNode at ``singles``; the
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
            victims, n_violations, status = self.ev.select_victims_on_node(self.state, self.pod, row, self.pdbs,
                                                                           self.allowed)
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
                self.statuses[row] = status if not status.ok else self._no_victim_status(row)
            p = g + 1
        return -1

    def diagnosis(self) -> Diagnosis:
        """The dry run's NodeToStatus: the nodes examined that are no candidate."""
        nested = Diagnosis(len(self.table), statuses=self.statuses, absent=Status(Code.UNRESOLVABLE, (NOT_HELPFUL,)))
        ex = self.examined
        failed = self.verdicts.take(np.flatnonzero(self.failed[:ex]))
        if len(failed.rows):
            nested.record_outcome(failed.rows, failed.codes, failed.reasons, failed.plugins, self.ev.fw.filter_names)
        nested.record(self.tried[:ex][~self.has_victims[:ex]], Status(Code.UNRESOLVABLE, (NO_VICTIMS,)))
        return nested

    def candidate_positions(self) -> np.ndarray:
        """The candidates' positions, those without PDB violations first, each in the order found."""
        ex = self.examined
        found = self.is_candidate[:ex]
        clean = self.is_clean[:ex]
        return np.concatenate([np.flatnonzero(found & clean), np.flatnonzero(found & ~clean)])

    def pick(self, order: np.ndarray) -> int:
        """pickOneNodeForPreemption over the candidates at ``order``: the position chosen."""
        return int(order[pick_by_criteria([column.take(order) for column in self.criteria],
                                          self.table.name_rank.take(self.tried.take(order)), self.ev.handle)])

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


@dataclass(frozen=True)
class BatchVictims:
    """What the fast path settled for the positions ``at`` (ascending) of the dry run: per
    node, SelectVictimsOnNode's answer."""

    at: np.ndarray
    #: the pod fits with every lower-priority pod gone (and the selective filters pass)
    fits: np.ndarray
    #: the node's lower-priority pods (LowerPods) in the order they were added back
    lower: LowerPods
    #: [k, j]: the j-th pod of position k in that order is a victim
    chosen: np.ndarray
    violations: np.ndarray
    n_victims: np.ndarray
    #: Candidate.criteria, one array per criterion
    criteria: tuple[np.ndarray, ...]
    #: the verdicts where the pod does not fit, for the positions at[~fits] in order
    failures: FilterOutcome

    def victims(self, k: int) -> list[Pod]:
        """The victims of position ``k``, in MoreImportantPod order, as SelectVictimsOnNode sorts them."""
        return self.lower.pods_at(k, self.chosen[k])


@dataclass(frozen=True)
class LowerPods:
    """The lower-priority pods of some nodes, as padded arrays: per position ``k`` (node
    ``rows[k]``), ``count[k]`` pods; ``present[k, j]`` whether slot ``j`` holds one, and
    ``picked[k, j]`` its index in ``pods[rows[k]]`` (the node's pods in MoreImportantPod
    order, where the lower-priority ones start at ``start[k]``)."""

    rows: np.ndarray
    start: np.ndarray
    count: np.ndarray
    present: np.ndarray
    picked: np.ndarray
    #: per table row, its pods in MoreImportantPod order: a shallow copy of VictimOrder.pods,
    #: whose refresh replaces a row's list rather than changing it, so candidates read later
    #: (explain reads them after the cycle has bound pods) see the lists of this dry run
    pods: list[list[Pod]]

    @classmethod
    def of(cls, order: VictimOrder, table: NodeTable, pod: Pod, rows: np.ndarray) -> LowerPods:
        order.refresh(table, rows)
        # the lower-priority pods of a row are the tail of its list, after those of priority >= the pod's
        start = (order.neg_priority[rows] <= -pod.priority).sum(axis=1)
        count = order.count[rows] - start
        step = np.arange(int(count.max()) if len(count) else 0)
        present = step < count[:, None]
        picked = np.where(present, start[:, None] + step, 0)
        return cls(rows, start, count, present, picked, order.pods.copy())

    def take(self, keep: np.ndarray) -> LowerPods:
        return LowerPods(self.rows[keep], self.start[keep], self.count[keep], self.present[keep], self.picked[keep],
                         self.pods)

    def reordered(self, walk: np.ndarray) -> LowerPods:
        """The same pods, slot ``j`` of position ``k`` now the one at ``walk[k, j]``."""
        return LowerPods(self.rows, self.start, self.count, self.present, np.take_along_axis(self.picked, walk, axis=1),
                         self.pods)

    def pods_at(self, k: int, which: np.ndarray) -> list[Pod]:
        """The pods of position ``k`` at the slots ``which`` (a mask), in MoreImportantPod order."""
        pods = self.pods[int(self.rows[k])]
        return [pods[j] for j in np.sort(self.picked[k][which]).tolist()]

    def column(self, values: np.ndarray) -> np.ndarray:
        """``values`` (VictimOrder's per row and pod) at each slot."""
        at: np.ndarray = values[self.rows[:, None], self.picked]
        return at


class _BatchReprieve:
    """The dry run's fast path for many nodes at once (Framework.fast_path): SelectVictimsOnNode
    for every node where the resource filter alone decides which lower-priority pods can
    return. The selective-state filters (PodTopologySpread, InterPodAffinity) give the same
    verdict on a node with or without its lower-priority pods when none of those is a pod
    their PreFilter state counts (affected_by); on such nodes they are run once, with the
    node's nominated pods of at least the pod's priority counted (filter_with_pods), and the
    victims come from one vectorised greedy walk (the resource plugin's ``reprieve_rows``)
    with those nominated pods as load: the filters' pass with them added is the stricter of
    RunFilterPluginsWithNominatedPods' two. PodDisruptionBudgets order the walk as
    filterPodsWithPDBViolation does: per node, the pods past each budget's allowed disruptions
    first. Where the pod does not fit even with every lower-priority pod gone, the node's
    status is the first rejection in filter order. The nodes it cannot settle so go to
    SelectVictimsOnNode node by node."""

    def __init__(self, evaluator: Evaluator, state: CycleState, pod: Pod, fast: FastPath, tried: np.ndarray) -> None:
        self.ev, self.state, self.pod, self.fast = evaluator, state, pod, fast
        self.tried = tried
        self.order = VictimOrder.of(evaluator.handle.snapshot.table, evaluator.importance_key)
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

    def compute(self, at: np.ndarray) -> BatchVictims | None:
        """SelectVictimsOnNode for the positions ``at`` of the dry run that this path can settle
        (None if it can settle none of them)."""
        table = self.ev.handle.snapshot.table
        lower = LowerPods.of(self.order, table, self.pod, self.tried[at])
        classes = np.where(lower.present, lower.column(self.order.classes), 0)
        load = self.ev.handle.nominator.load(self.pod, table, lower.rows)
        left, selective = self._selective_verdicts(lower, classes)
        members = None
        if self.pdbs:
            if self.pdbs_by_class:
                members = np.where(lower.present, self._class_table(classes[lower.present], self.members, lambda p: sum(
                    1 << i for i, b in enumerate(self.pdbs) if self.ev.counts_against(p, b)), np.int64)[classes], 0)
            else:
                # a row with a pod a PDB guards takes the general path (split_by_pdb's order)
                left |= np.array([any(self.ev.counts_against(p, b) for p in self.order.pods[r][s:] for b in self.pdbs)
                                  for r, s in zip(lower.rows.tolist(), lower.start.tolist(), strict=True)], dtype=bool)
        if left.any():
            keep = ~left
            at, lower, load = at[keep], lower.take(keep), load.kept(keep)
            selective = selective.take(keep)
            if members is not None:
                members = members[keep]
        if not len(at):
            return None
        lower, violating = self._pdb_order(lower, members)
        requests = lower.column(self.order.requests) * lower.present[:, :, None]
        reserved = self._reserved(table, load, len(at), requests.shape[2])
        fits, victim = self.fast.resource.reprieve_rows(self.state, self.pod, table, lower.rows, requests, lower.count,
                                                        reserved)
        passed = fits & (selective.codes == 0)
        chosen = victim & passed[:, None]
        violations, n_victims = (chosen & violating).sum(axis=1), chosen.sum(axis=1)
        return BatchVictims(at, passed, lower, chosen, violations, n_victims,
                            self._criteria(lower, chosen, violations, n_victims),
                            self._failures(table, lower, requests, reserved, fits, selective, ~passed))

    def _selective_verdicts(self, lower: LowerPods, classes: np.ndarray) -> tuple[np.ndarray, FilterOutcome]:
        """The positions left to SelectVictimsOnNode for the selective filters' sake, and those
        filters' first rejection on each node with its nominated pods counted
        (RunFilterPluginsWithNominatedPods' first pass): the same with the victims gone or
        back, unless a victim is a pod their state counts (the node is left), a filter cannot
        count the nominated pods, or it passes with them but not without (the second pass
        would decide: the node is left too)."""
        state, pod, rows = self.state, self.pod, lower.rows
        left = np.zeros(len(rows), dtype=bool)
        if not self.fast.selective:
            return left, FilterOutcome.all_pass(rows)
        table = self.ev.handle.snapshot.table
        affects = self._class_table(classes[lower.present], self.affects, lambda p: any(
            f.affected_by(state, pod, p) for _, f in self.fast.selective), bool)
        left |= (affects[classes] & lower.present).any(axis=1)
        nominated = self.ev.handle.nominator.classes(pod, table, rows)
        selective, copies = self.fast.selective_with_counts(state, pod, table, rows, nominated.examples,
                                                            nominated.spread(len(rows)))
        left |= copies
        if len(nominated):
            at = nominated.positions
            as_is = self.fast.selective_as_is(state, pod, table, rows.take(at))
            left[at[(selective.codes.take(at) == 0) & (as_is.codes != 0)]] = True
        return left, selective

    def _pdb_order(self, lower: LowerPods, members: np.ndarray | None) -> tuple[LowerPods, np.ndarray]:
        """filterPodsWithPDBViolation per node: a pod past any of its budgets' allowed
        disruptions (counted in MoreImportantPod order) violates; those are tried first. The
        pods in that order, and whether each violates."""
        violating = np.zeros(lower.present.shape, dtype=bool)
        if members is None or not members.any():
            return lower, violating
        for i in range(len(self.pdbs)):
            member = (members >> i) & 1 == 1
            violating |= member & (np.cumsum(member, axis=1) > self.allowed[i])
        walk = np.argsort(~violating, axis=1, kind="stable")
        return lower.reordered(walk), np.take_along_axis(violating, walk, axis=1)

    @staticmethod
    def _reserved(table: NodeTable, load: NominatedLoad, n: int, columns: int) -> np.ndarray:
        """What the nominated pods hold per position: per resource column and, in the last
        column, in pods."""
        reserved = np.zeros((n, columns + 1), dtype=np.int64)
        if len(load):
            reserved[load.positions, columns] = load.pods
            for name, amount in load.requests.items():
                col = table.res.get(name)
                if col is not None and col < columns:
                    reserved[load.positions, col] = amount
        return reserved

    def _criteria(self, lower: LowerPods, chosen: np.ndarray, violations: np.ndarray, n_victims: np.ndarray
                  ) -> tuple[np.ndarray, ...]:
        """Candidate.criteria for every position at once."""
        priority = -lower.column(self.order.neg_priority)
        top = np.where(chosen, priority, _INT64_MIN).max(axis=1)
        total = np.where(chosen, priority + INT32_OFFSET, 0).sum(axis=1)
        earliest = np.where(chosen & (priority == top[:, None]), lower.column(self.order.start), np.inf).min(axis=1)
        return -violations, -top, -total, -n_victims, earliest

    def _failures(self, table: NodeTable, lower: LowerPods, requests: np.ndarray, reserved: np.ndarray,
                  fits: np.ndarray, selective: FilterOutcome, failed: np.ndarray) -> FilterOutcome:
        """The status of the positions ``failed`` (where the pod does not fit with every
        lower-priority pod gone): the first rejection in filter order among the selective
        filters and the resource filter, whose verdict is asked for the nodes with those pods
        gone and the nominated pods' load."""
        bad = np.flatnonzero(failed)
        out = selective.take(bad)
        short = np.flatnonzero(~fits[bad])
        if len(short):
            r = bad[short]
            columns = requests.shape[2]
            gone, held = requests[r].sum(axis=1), reserved[r]
            freed = {name: held[:, col] - gone[:, col] for name in table.res.names
                     if (col := table.res.get(name)) is not None and col < columns}
            v = self.fast.resource.filter_with_load(self.state, self.pod, table, lower.rows[r],
                                                    held[:, columns] - lower.count[r], freed)
            out.add(short, v, self.fast.at)
        return out
