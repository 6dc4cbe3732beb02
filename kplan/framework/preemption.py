"""The preemption evaluator (pkg/scheduler/framework/preemption/preemption.go, v1.34.1) with
DefaultPreemption's policies (plugins/defaultpreemption/default_preemption.go).

Reference section 7: eligibility, candidate nodes (status exactly Unschedulable), the dry run
over a sample of them, SelectVictimsOnNode on a fork of the node, PDB counting, and
pickOneNodeForPreemption's ordered criteria.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kplan.framework.cycle_state import CycleState
from kplan.framework.diagnosis import Diagnosis
from kplan.framework.interfaces import Handle, ReprieveFilter
from kplan.framework.status import OK, Code, Status
from kplan.model.objects import PREEMPT_NEVER, Pod, PodDisruptionBudget
from kplan.model.selectors import selector_matches

if TYPE_CHECKING:
    from kplan.cluster.node_table import NodeTable
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
    candidates: list[Candidate] = field(default_factory=list)
    #: the rows of the nodes whose filter status allowed preemption, in the dry run's order
    potential_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: dry-run statuses of the nodes that were tried and failed (absent: not tried)
    dry_run: Diagnosis | None = None
    #: the node names of the table the dry run's rows index
    row_names: list[str] = field(default_factory=list)

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


class VictimOrder:
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
        self._allocate(n, 4, len(table.res))

    def _allocate(self, n: int, width: int, columns: int) -> None:
        # padding sorts after every real entry: no pod priority is above 2**31
        self.neg_priority = np.full((n, width), _PAST_EVERY_PRIORITY, dtype=np.int64)
        self.start = np.full((n, width), np.inf)
        self.requests = np.zeros((n, width, columns), dtype=np.int64)

    @staticmethod
    def of(table: NodeTable) -> VictimOrder:
        for listener in table.listeners:
            if isinstance(listener, VictimOrder):
                return listener
        order = VictimOrder(table)
        table.listeners.append(order)
        return order

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
            old_neg, old_start, old_req = self.neg_priority, self.start, self.requests
            self._allocate(n, max(width, 2 * have if width > have else have), len(table.res))
            self.neg_priority[:, :have] = old_neg
            self.start[:, :have] = old_start
            self.requests[:, :have, :columns] = old_req
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
                for name, amount in p.requests.items():
                    col = table.res.get(name)
                    if col is not None:
                        self.requests[row, i, col] = amount
        self.stale[stale] = False


_PAST_EVERY_PRIORITY = 2**40


class Evaluator:
    def __init__(self, framework: Framework, args: Any, handle: Handle) -> None:
        self.fw = framework
        self.args = args
        self.handle = handle

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

        pdbs = snap.pdbs
        allowed = {i: self.handle.disruptions_allowed(pdb) for i, pdb in enumerate(pdbs)}
        offset = 0 if self.handle.lowest_name else int(self.handle.rng.integers(len(potential)))
        want = self.num_candidates(len(potential))
        tried = np.roll(potential, -offset)
        # a node without a pod of lower priority has no victims: settled for all such nodes at once
        has_victims = table.min_priority(tried) < pod.priority
        # the filters that read only node attributes, for every node at once (select_victims'
        # shortcut needs them passed)
        fixed_passed = self.fw.fixed_filters_pass(state, pod, table, tried)
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[int, Status] = {}
        examined = len(tried)
        resource_filter = self._resource_filter_alone(state)
        batch = (_BatchReprieve(self, state, pod, resource_filter, tried, has_victims & fixed_passed, want)
                 if resource_filter is not None else None)
        for i in np.flatnonzero(has_victims).tolist():
            row = int(tried[i])
            found = batch.victims_at(i) if batch is not None else None
            rank = None
            if found is not None:
                (victims, rank), n_violations, status = found, 0, OK
            else:
                victims, n_violations, status = self.select_victims(state, pod, row, pdbs, allowed,
                                                                    fixed_passed=bool(fixed_passed[i]))
            if status.ok and victims:
                c = Candidate(table.names[row], row, victims, n_violations, rank)
                (clean if n_violations == 0 else violating).append(c)
                if clean and len(clean) + len(violating) >= want:
                    examined = i + 1
                    break
                continue
            if status.ok:
                status = Status(Code.ERROR, (f'expected at least one victim pod on node "{table.names[row]}"',))
            statuses[row] = status
        nested = Diagnosis(len(table), statuses=statuses, absent=Status(Code.UNRESOLVABLE, (NOT_HELPFUL,)))
        no_victims = tried[:examined][~has_victims[:examined]]
        nested.record(no_victims, Status(Code.UNRESOLVABLE, (NO_VICTIMS,)))
        candidates = clean + violating
        outcome.candidates = candidates
        outcome.dry_run = nested
        if not candidates:
            outcome.status = Status(Code.UNSCHEDULABLE, (nested.fit_error(),))
            outcome.nominated_node = ""
            return outcome
        best = self.pick(candidates)
        if best is None:
            outcome.status = Status(Code.UNSCHEDULABLE, (NO_CANDIDATE,))
            return outcome
        outcome.nominated_node = best.node
        outcome.victims = best.victims
        return outcome

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
        out = self.fw.run_filters_with_nominated(st, pod, fork, here, nominator)
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
                if self.fw.run_filters_with_nominated(st, pod, fork, here, nominator).codes[0] != 0:
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
        as victims are added back on ``node`` (see _resource_filter_alone) and no nominated pod
        must be added there first. None otherwise: the reprieve then runs every filter."""
        if self.handle.nominator.yielding_to(pod, node):
            return None
        return self._resource_filter_alone(state)

    def _resource_filter_alone(self, state: CycleState) -> ReprieveFilter | None:
        """The resource Filter plugin (one with ``reprieve``) if every other filter either reads
        only the node's fixed attributes (checked to pass on their own) or was skipped at
        PreFilter; None otherwise."""
        found: ReprieveFilter | None = None
        # the leading node-attribute filters are those fixed_filters_pass checked; one of that
        # kind placed after another filter (a custom order) is treated as any other filter
        for pl in self.fw.filter_plugins[self.fw.fixed_filter_count:]:
            if pl.name in state.skip_filter:
                continue
            if found is not None:
                return None
            found = self.fw.reprieves.get(pl.name)
            if found is None:
                return None
        return found

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


class _BatchReprieve:
    """The dry run's shortcut for many nodes at once: where the resource filter alone decides
    (Evaluator._resource_filter_alone), the node-attribute filters pass and no lower-priority pod
    is guarded by a PodDisruptionBudget, the victims of every such node come from one vectorised
    greedy walk (the resource plugin's ``reprieve_rows``). Nominated pods of at least the pod's
    priority only add load there: with every other filter skipped or blind to pods, the filters'
    pass with them added is the stricter of RunFilterPluginsWithNominatedPods' two. Nodes are
    taken in the dry run's order, ``chunk`` eligible ones at a time, as the walk reaches them."""

    def __init__(self, evaluator: Evaluator, state: CycleState, pod: Pod, plugin: ReprieveFilter, tried: np.ndarray,
                 eligible: np.ndarray, chunk: int) -> None:
        self.ev, self.state, self.pod = evaluator, state, pod
        # the plugin's batch form, if it has one (recognised once, when the framework was built)
        batch = evaluator.fw.batch_reprieves.get(plugin.name)
        self.plugin = batch
        self.tried = tried
        self.positions: list[int] = np.flatnonzero(eligible).tolist() if batch is not None else []
        self.next = 0          # index into positions of the first position not computed yet
        self.chunk = max(chunk, 32)
        #: position → (victims, their Candidate.criteria) where the shortcut decided, else None
        self.results: dict[int, tuple[list[Pod], tuple[int, int, int, int, float]] | None] = {}
        self.order = VictimOrder.of(evaluator.handle.snapshot.table)
        # node → nominated pods this pod must leave room for, looked up once for all nodes
        nominator = evaluator.handle.nominator
        self.yielding = {node: found for node in nominator if (found := nominator.yielding_to(pod, node))}

    def victims_at(self, i: int) -> tuple[list[Pod], tuple[int, int, int, int, float]] | None:
        """The victims on the node at position ``i`` of ``tried`` and their pick criteria; None
        where the shortcut does not apply or the pod does not fit even with all lower-priority
        pods gone (the caller's general path then decides, with the filters' own status)."""
        if i not in self.results:
            if self.next >= len(self.positions) or self.positions[self.next] > i:
                return None
            self._compute(self.positions[self.next:self.next + self.chunk])
            self.next += self.chunk
        return self.results.get(i)

    def _compute(self, positions: list[int]) -> None:
        table = self.ev.handle.snapshot.table
        pdbs = self.ev.handle.snapshot.pdbs
        pod = self.pod
        at = np.array(positions, dtype=np.int64)
        rows = self.tried[at]
        order = self.order
        order.refresh(table, rows)
        # the lower-priority pods of a row are the tail of its list, after those of priority >= the pod's
        start = (order.neg_priority[rows] <= -pod.priority).sum(axis=1)
        counts = order.count[rows] - start
        if pdbs:
            # a row with a pod a PDB guards takes the general path (split_by_pdb's order)
            plain = np.array([not any(counts_against(p, pdb) for p in order.pods[r][s:] for pdb in pdbs)
                              for r, s in zip(rows.tolist(), start.tolist(), strict=True)], dtype=bool)
            at, rows, start, counts = at[plain], rows[plain], start[plain], counts[plain]
        if not len(rows):
            return
        width = int(counts.max())
        step = np.arange(width)
        present = step < counts[:, None]
        picked = np.where(present, start[:, None] + step, 0)
        stacked = order.requests[rows[:, None], picked] * present[:, :, None]
        columns = stacked.shape[2]
        reserved = np.zeros((len(rows), columns + 1), dtype=np.int64)   # the last column counts pods
        if self.yielding:
            where = {r: k for k, r in enumerate(rows.tolist())}
            for node, nominated in self.yielding.items():
                k = where.get(table.row_of.get(node, -1), -1)
                if k < 0:
                    continue
                for other in nominated:
                    reserved[k, columns] += 1
                    for name, amount in other.requests.items():
                        col = table.res.get(name)
                        if col is not None and col < columns:
                            reserved[k, col] += amount
        assert self.plugin is not None  # positions are empty without it
        fits_all, victim = self.plugin.reprieve_rows(self.state, pod, table, rows, stacked, counts, reserved)
        self.results.update(dict.fromkeys(positions))
        chosen = victim & fits_all[:, None]
        # Candidate.criteria for every row at once; victims keep MoreImportantPod order
        priority = -order.neg_priority[rows[:, None], picked]
        top = np.where(chosen, priority, np.iinfo(np.int64).min).max(axis=1)
        total = np.where(chosen, priority + INT32_OFFSET, 0).sum(axis=1)
        earliest = np.where(chosen & (priority == top[:, None]), order.start[rows[:, None], picked], np.inf).min(axis=1)
        n_victims = chosen.sum(axis=1)
        ranks = zip((-top).tolist(), (-total).tolist(), (-n_victims).tolist(), earliest.tolist(), strict=True)
        at_list, row_list, base = at.tolist(), rows.tolist(), start.tolist()
        lists: dict[int, list[Pod]] = {}
        for k, (fits, (t, su, nv, e)) in enumerate(zip(fits_all.tolist(), ranks, strict=True)):
            if fits:
                lists[k] = []
                self.results[at_list[k]] = (lists[k], (0, t, su, nv, e))
        ks, js = np.nonzero(chosen)
        for k, j in zip(ks.tolist(), js.tolist(), strict=True):
            lists[k].append(order.pods[row_list[k]][base[k] + j])
