"""The preemption evaluator (pkg/scheduler/framework/preemption/preemption.go, v1.34.1) with
DefaultPreemption's policies (plugins/defaultpreemption/default_preemption.go).

Reference section 7: eligibility, candidate nodes (status exactly Unschedulable), the dry run
over a sample of them, SelectVictimsOnNode on a fork of the node, PDB counting, and
pickOneNodeForPreemption's ordered criteria.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kplan.framework.cycle_state import CycleState
from kplan.framework.diagnosis import Diagnosis
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


@dataclass
class PreemptionOutcome:
    """What DefaultPreemption decided. ``nominated_node`` None means "no PostFilterResult"."""

    status: Status
    nominated_node: str | None = None
    victims: list[Pod] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    potential_nodes: list[str] = field(default_factory=list)
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
        if p.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != p.namespace or pdb.selector is None or pdb.selector.is_empty:
                    continue
                if not selector_matches(pdb.selector, p.labels) or p.name in pdb.disrupted_pods:
                    continue
                budget[i] -= 1
                if budget[i] < 0:
                    hit = True
        (violating if hit else fine).append(p)
    return violating, fine


class VictimOrder:
    """Per row of one NodeTable: its pods in the order preemption adds them back (higher
    priority first, then earlier start: MoreImportantPod), their negated priorities and their
    requests over the table's resource columns. Built when a row is first asked for and dropped
    when a pod joins or leaves it (a table listener), so a busy cluster's preemptors share it."""

    def __init__(self) -> None:
        self.rows: dict[int, tuple[list[Pod], list[int], np.ndarray]] = {}

    @staticmethod
    def of(table: NodeTable) -> VictimOrder:
        for listener in table.listeners:
            if isinstance(listener, VictimOrder):
                return listener
        order = VictimOrder()
        table.listeners.append(order)
        return order

    def pod_added(self, table: NodeTable, pod: Pod, row: int) -> None:
        self.rows.pop(row, None)

    def pod_removed(self, table: NodeTable, pod: Pod, row: int) -> None:
        self.rows.pop(row, None)

    def get(self, table: NodeTable, row: int) -> tuple[list[Pod], list[int], np.ndarray]:
        found = self.rows.get(row)
        if found is None:
            pods = sorted(table.pods[row], key=importance_key)
            neg_priority = [-p.priority for p in pods]
            requests = np.zeros((len(pods), len(table.res)), dtype=np.int64)
            for i, p in enumerate(pods):
                for name, amount in p.requests.items():
                    col = table.res.get(name)
                    if col is not None:
                        requests[i, col] = amount
            found = self.rows[row] = (pods, neg_priority, requests)
        return found


class Evaluator:
    def __init__(self, framework: Framework, args: Any, handle: Any) -> None:
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
        if pod.nominated_node and nominated_status is not None and nominated_status.code != Code.UNRESOLVABLE:
            row = self.handle.snapshot.row_of(pod.nominated_node)
            if row is not None:
                for p in self.handle.snapshot.table.pods[row]:
                    if p.priority < pod.priority and p.terminating and self.handle.terminating_by_preemption(p):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def preempt(self, state: CycleState, pod: Pod, diagnosis: Diagnosis) -> PreemptionOutcome:
        snap = self.handle.snapshot
        table = snap.table
        nominated_row = snap.row_of(pod.nominated_node) if pod.nominated_node else None
        nominated_status = diagnosis.get(nominated_row) if nominated_row is not None else diagnosis.absent
        ok, msg = self.eligible(pod, nominated_status)
        if not ok:
            return PreemptionOutcome(Status(Code.UNSCHEDULABLE, (msg,)))

        potential: list[int] = diagnosis.rows_with_code(Code.UNSCHEDULABLE).tolist()
        names = [table.names[r] for r in potential]
        if self.handle.lowest_name:
            order = sorted(range(len(potential)), key=lambda i: names[i].encode())
            potential = [potential[i] for i in order]
        else:
            potential.sort()  # node-tree order stands in for Go's map order
        outcome = PreemptionOutcome(OK, potential_nodes=[table.names[r] for r in potential], row_names=table.names)
        if not potential:
            nested = Diagnosis(len(table), absent=Status(Code.UNRESOLVABLE, (NOT_HELPFUL,)))
            outcome.status = Status(Code.UNSCHEDULABLE, (nested.fit_error(),))
            outcome.nominated_node = ""
            return outcome

        pdbs = snap.pdbs
        allowed = {i: self.handle.disruptions_allowed(pdb) for i, pdb in enumerate(pdbs)}
        offset = 0 if self.handle.lowest_name else int(self.handle.rng.integers(len(potential)))
        want = self.num_candidates(len(potential))
        tried = np.roll(np.array(potential, dtype=np.int64), -offset)
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
            if found is not None:
                victims, n_violations, status = found, 0, OK
            else:
                victims, n_violations, status = self.select_victims(state, pod, row, pdbs, allowed,
                                                                    fixed_passed=bool(fixed_passed[i]))
            if status.ok and victims:
                c = Candidate(table.names[row], row, victims, n_violations)
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

    def _resources_alone(self, state: CycleState, pod: Pod, node: str) -> Any:
        """The resource Filter plugin (one with ``reprieve``) if it alone can change its verdict
        as victims are added back on ``node`` (see _resource_filter_alone) and no nominated pod
        must be added there first. None otherwise: the reprieve then runs every filter."""
        if self.handle.nominator.yielding_to(pod, node):
            return None
        return self._resource_filter_alone(state)

    def _resource_filter_alone(self, state: CycleState) -> Any:
        """The resource Filter plugin (one with ``reprieve``) if every other filter either reads
        only the node's fixed attributes (checked to pass on their own) or was skipped at
        PreFilter; None otherwise."""
        found = None
        # the leading node-attribute filters are those fixed_filters_pass checked; one of that
        # kind placed after another filter (a custom order) is treated as any other filter
        for pl in self.fw.filter_plugins[self.fw.fixed_filter_count:]:
            if pl.name in state.skip_filter:
                continue
            if found is not None or not hasattr(pl, "reprieve"):
                return None
            found = pl
        return found

    def pick(self, candidates: list[Candidate]) -> Candidate | None:
        """pickOneNodeForPreemption (reference 7.6)."""
        if len(candidates) == 1:
            return candidates[0]

        def earliest_top_start(c: Candidate) -> float:
            top = c.victims[0].priority
            return min(start_key(v) for v in c.victims if v.priority == top)

        criteria = [
            lambda c: -c.pdb_violations,
            lambda c: -c.victims[0].priority,
            lambda c: -sum(v.priority + INT32_OFFSET for v in c.victims),
            lambda c: -len(c.victims),
            earliest_top_start,
        ]
        remaining = candidates
        for f in criteria:
            scores = [f(c) for c in remaining]
            best = max(scores)
            remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
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

    def __init__(self, evaluator: Evaluator, state: CycleState, pod: Pod, plugin: Any, tried: np.ndarray,
                 eligible: np.ndarray, chunk: int) -> None:
        self.ev, self.state, self.pod, self.plugin = evaluator, state, pod, plugin
        self.tried = tried
        self.positions: list[int] = np.flatnonzero(eligible).tolist() if hasattr(plugin, "reprieve_rows") else []
        self.next = 0          # index into positions of the first position not computed yet
        self.chunk = max(chunk, 32)
        self.results: dict[int, list[Pod] | None] = {}
        self.order = VictimOrder.of(evaluator.handle.snapshot.table)
        # node → nominated pods this pod must leave room for, looked up once for all nodes
        nominator = evaluator.handle.nominator
        self.yielding = {node: found for node in nominator if (found := nominator.yielding_to(pod, node))}

    def victims_at(self, i: int) -> list[Pod] | None:
        """The victims on the node at position ``i`` of ``tried``; None where the shortcut does
        not apply or the pod does not fit even with all lower-priority pods gone (the caller's
        general path then decides, with the filters' own status)."""
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
        limit = -pod.priority
        picked: list[tuple[int, list[Pod], np.ndarray]] = []
        rows: list[int] = []
        for i in positions:
            row = int(self.tried[i])
            self.results[i] = None
            pods, neg_priority, requests = self.order.get(table, row)
            start = bisect_right(neg_priority, limit)
            lower = pods[start:]
            if pdbs and any(_guarded(p, pdbs) for p in lower):
                continue
            picked.append((i, lower, requests[start:]))
            rows.append(row)
        if not picked:
            return
        width = len(table.res)
        counts = np.array([len(lower) for _, lower, _ in picked], dtype=np.int64)
        stacked = np.zeros((len(picked), int(counts.max()), width), dtype=np.int64)
        reserved = np.zeros((len(picked), width + 1), dtype=np.int64)   # the last column counts pods
        for k, (_, lower, req) in enumerate(picked):
            stacked[k, :len(lower), :req.shape[1]] = req
            for other in self.yielding.get(table.names[rows[k]], ()):
                reserved[k, width] += 1
                for name, amount in other.requests.items():
                    col = table.res.get(name)
                    if col is not None:
                        reserved[k, col] += amount
        fits_all, victim = self.plugin.reprieve_rows(self.state, pod, table, np.array(rows, dtype=np.int64),
                                                     stacked, counts, reserved)
        for k in np.flatnonzero(fits_all).tolist():
            self.results[picked[k][0]] = []
        ks, js = np.nonzero(victim & fits_all[:, None])
        for k, j in zip(ks.tolist(), js.tolist(), strict=True):
            i, lower, _ = picked[k]
            found = self.results[i]
            assert found is not None
            found.append(lower[j])


def _guarded(pod: Pod, pdbs: list[PodDisruptionBudget]) -> bool:
    """Whether evicting the pod would count against some PodDisruptionBudget (split_by_pdb)."""
    if not pod.labels:
        return False
    for pdb in pdbs:
        if pdb.namespace != pod.namespace or pdb.selector is None or pdb.selector.is_empty:
            continue
        if selector_matches(pdb.selector, pod.labels) and pod.name not in pdb.disrupted_pods:
            return True
    return False
