"""Why a pod landed where it did, or why it did not: ``kplan explain``'s engine part.

``PodExplainer`` is a simulation observer. At every attempt of the pod it records, on the
cluster exactly as that cycle saw it: the cycle's own result (kube-scheduler's per-node first
failing status, the feasible nodes, every score, the preemption outcome), every Filter plugin's
verdict on every node run independently (beyond upstream: all plugins that would reject a
node), and for a failed attempt the remediation of ``remedy.py``. After the run, ``explain``
turns the last attempt into an ``Explanation``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework.cycle_state import CycleState
from kplan.framework.preemption import PreemptionOutcome
from kplan.framework.runtime import Framework
from kplan.framework.status import REASONS, Code, Status
from kplan.model.objects import Pod
from kplan.plugins.dra.diagnose import ClaimProblem, PodClaimInfo, describe_claims, diagnose, fresh_nodes
from kplan.plugins.dynamicresources import NAME as DYNAMIC_RESOURCES
from kplan.scheduler.cycle import CycleResult
from kplan.scheduler.inspect import FilterInspection, inspect_filters
from kplan.scheduler.remedy import Remedy, remedies
from kplan.scheduler.simulate import Eviction, PodOutcome, SimulationResult

PREFILTER = "PreFilter"


@dataclass
class FilterVerdict:
    plugin: str
    code: Code
    reasons: tuple[str, ...] = ()
    #: the status kube-scheduler recorded for the node (its first failing plugin)
    upstream: bool = False
    #: PreFilter returned Skip: the plugin does not filter this pod
    skipped: bool = False
    #: the plugin's own account of its rejection (filter plugins with ``explain_rejection``)
    detail: str = ""


@dataclass
class PluginScore:
    raw: int
    normalized: int
    weight: int
    #: the plugin's own account of the score (kplan's ScoreExplainer plugins), "" otherwise
    note: str = ""

    @property
    def weighted(self) -> int:
        return self.normalized * self.weight


@dataclass
class NodeExplanation:
    name: str
    row: int
    #: kube-scheduler filtered this node in this attempt
    examined: bool
    feasible: bool
    #: the status kube-scheduler recorded for the node, None when it passed or was not examined
    status: Status | None
    filters: list[FilterVerdict]
    scores: dict[str, PluginScore] | None = None
    total: int | None = None
    #: why kube-scheduler did not look at the node ("" when it did)
    not_examined: str = ""

    @property
    def failing(self) -> list[FilterVerdict]:
        return [f for f in self.filters if f.code not in (Code.SUCCESS, Code.SKIP)]


@dataclass
class Attempt:
    number: int
    result: CycleResult
    inspection: FilterInspection
    node_names: list[str]
    name_rank: np.ndarray
    filter_names: list[str]
    weights: dict[str, int]
    remedy: Remedy | None = None
    nominated_node: str = ""
    #: beyond upstream: scores kplan computed where kube-scheduler did not score (one feasible
    #: node, or the nominated node's fast path): (rows, plugin → (raw, normalised), totals)
    info_scores: tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray] | None = None
    #: per row: the pod's missing resources as fractions of the node's allocatable, summed
    shortfall: np.ndarray | None = None
    #: plugin → row → the plugin's explanation of its score (plugins with an ``explain`` method)
    score_notes: dict[str, dict[int, str]] = field(default_factory=dict)
    #: plugin → row → the filter plugin's account of its rejection (``explain_rejection``)
    rejection_notes: dict[str, dict[int, str]] = field(default_factory=dict)
    #: the pod's resource claims, for a pod that has some and did not fit
    devices: DeviceFacts | None = None


@dataclass
class DeviceFacts:
    """kplan's own account of a pod's resource claims (plugins/dra/diagnose.py)."""

    claims: list[PodClaimInfo]
    #: nodes an empty copy of which would have devices for every claim, in node-name order
    fresh_nodes: list[str]
    #: node name → what stands in the way of the claims there, for the nodes DynamicResources rejects
    problems: dict[str, list[ClaimProblem]] = field(default_factory=dict)


@dataclass
class Explanation:
    pod: Pod
    outcome: PodOutcome
    position: int
    pending: int
    attempt: Attempt | None
    nodes: list[NodeExplanation] = field(default_factory=list)
    chosen: str | None = None
    ties: list[str] = field(default_factory=list)
    scored: bool = False
    preemption: PreemptionOutcome | None = None
    #: the latest earlier attempt whose preemption nominated a node: (attempt number, outcome)
    earlier_preemption: tuple[int, PreemptionOutcome] | None = None
    evictions: list[Eviction] = field(default_factory=list)
    history: list[tuple[int, str | None, str | None, str | None]] = field(default_factory=list)

    @property
    def remedy(self) -> Remedy | None:
        return self.attempt.remedy if self.attempt else None


class PodExplainer:
    """Observer that records every attempt of one pod (by uid)."""

    def __init__(self, uid: str, *, remediation: bool = True, nearest: int = 5) -> None:
        self.uid = uid
        self.remediation = remediation
        self.nearest = nearest
        self.attempts: list[Attempt] = []

    def wants_detail(self, pod: Pod) -> bool:
        """The explained pod's cycles keep their per-plugin outcomes and scores."""
        return pod.uid == self.uid

    def __call__(self, sim: Any, q: Any, r: CycleResult) -> None:
        pod = q.pod
        if pod.uid != self.uid:
            return
        fw = sim.handle.framework_for(pod)
        table = sim.snapshot.table
        inspection = inspect_filters(fw, pod)
        att = Attempt(q.attempts, r, inspection, list(table.names), table.name_rank.copy(), list(fw.filter_names),
                      dict(fw.weights), nominated_node=sim.handle.nominated_node(pod), shortfall=shortfall(pod, table))
        att.rejection_notes = rejection_notes(fw, pod, table, inspection)
        if r.node is not None and r.scores is None and r.feasible_rows is not None and len(r.feasible_rows) \
                and r.state is not None and fw.has_score_plugins:
            # on a copy of the cycle state: the real one still serves Reserve and Bind
            st = r.state.clone()
            rows = np.asarray(r.feasible_rows, dtype=np.int64)
            if fw.run_pre_score(st, pod, table, rows).ok:
                totals, detail, status = fw.run_score(st, pod, table, rows)
                if status.ok:
                    att.info_scores = (rows, detail, totals)
                    att.score_notes = score_notes(fw, pod, table, rows, st)
        elif r.scores is not None and r.feasible_rows is not None and r.state is not None:
            att.score_notes = score_notes(fw, pod, table, np.asarray(r.feasible_rows, dtype=np.int64), r.state)
        if r.node is None and r.fit_error and self.remediation:
            diag = r.diagnosis

            def upstream_plugin(row: int) -> str:
                return diag.get(row).plugin if diag is not None and diag.recorded[row] else ""

            att.remedy = remedies(fw, pod, sim.handle.nominator, inspection, upstream_plugin, self.nearest)
        dra = sim.snapshot.dra
        if r.node is None and pod.resource_claims and dra is not None:
            order = sorted(range(len(table)), key=lambda row: int(table.name_rank[row]))
            att.devices = DeviceFacts(describe_claims(dra, pod), fresh_nodes(
                dra, pod, [(table.names[row], table.nodes[row].labels) for row in order]))
            for v in inspection.plugins:
                if v.plugin == DYNAMIC_RESOURCES and not v.skipped:
                    for row in map(int, np.flatnonzero(v.codes)):
                        node = table.nodes[row]
                        att.devices.problems[node.name] = diagnose(dra, pod, node.name, node.labels)
        self.attempts.append(att)


def score_notes(fw: Framework, pod: Pod, table: NodeTable, rows: np.ndarray, state: CycleState
                ) -> dict[str, dict[int, str]]:
    """The explanation lines of the score plugins that can explain themselves (ScoreExplainer)."""
    out: dict[str, dict[int, str]] = {}
    for name, pl in fw.explainers.items():
        if name not in state.skip_score:
            lines = pl.explain(state.clone(), pod, table, rows)
            out[name] = {int(row): line for row, line in zip(rows, lines, strict=True)}
    return out


def rejection_notes(fw: Any, pod: Pod, table: Any, inspection: FilterInspection) -> dict[str, dict[int, str]]:
    """For the filter plugins that can account for a rejection (e.g. NodeVolumeLimits' attach
    counts), their note on each node they reject, read now: the cluster changes after the cycle."""
    out: dict[str, dict[int, str]] = {}
    for v in inspection.plugins:
        pl = fw.rejection_explainers.get(v.plugin)
        if v.skipped or pl is None:
            continue
        notes = {row: pl.explain_rejection(pod, table, row) for row in map(int, np.flatnonzero(v.codes))}
        out[v.plugin] = {row: note for row, note in notes.items() if note}
    return out


def shortfall(pod: Pod, table: Any) -> np.ndarray:
    """How far each node is from holding the pod's requests: the sum of missing fractions."""
    out = np.zeros(len(table), dtype=np.float64)
    for name, q in pod.requests.items():
        col = table.res.get(name)
        if q <= 0:
            continue
        if col is None:
            out += 1.0
            continue
        alloc = table.alloc[:, col]
        free = alloc - table.requested[:, col]
        out += np.where(q > free, (q - free) / np.maximum(alloc, 1), 0.0)
    return out


def _verdicts(att: Attempt, row: int, status: Status | None) -> list[FilterVerdict]:
    out = []
    for v in att.inspection.plugins:
        if status is not None and status.plugin == v.plugin:
            out.append(FilterVerdict(v.plugin, status.code, status.reasons, upstream=True))
        elif v.skipped:
            out.append(FilterVerdict(v.plugin, Code.SKIP, (), skipped=True))
        else:
            code = Code(int(v.codes[row]))
            out.append(FilterVerdict(v.plugin, code, REASONS[int(v.reasons[row])] if code else ()))
        if out[-1].code in (Code.UNSCHEDULABLE, Code.UNRESOLVABLE):
            out[-1].detail = att.rejection_notes.get(v.plugin, {}).get(row, "")
    if status is not None and status.rejected and status.plugin not in att.filter_names:
        # a PreFilter rejection, or the nodes a PreFilter result left out
        out.insert(0, FilterVerdict(status.plugin or PREFILTER, status.code, status.reasons, upstream=True))
    return out


def explain_nodes(att: Attempt) -> list[NodeExplanation]:
    r = att.result
    n = len(att.node_names)
    diag = r.diagnosis
    feasible = set(int(x) for x in r.feasible_rows) if r.feasible_rows is not None else set()
    examined: set[int] = set(int(x) for x in r.filtered.rows) if r.filtered is not None else set()
    if diag is not None:
        examined |= set(int(x) for x in np.flatnonzero(diag.recorded))
    if r.nominated_fast_path:
        examined |= feasible
    pre_rejected = diag is not None and bool(diag.pre_filter_msg)
    restricted = att.inspection.node_names
    score_at: dict[int, int] = {}
    scores, totals = r.scores, r.totals
    if scores is not None and r.feasible_rows is not None:
        score_at = {int(row): k for k, row in enumerate(r.feasible_rows)}
    elif att.info_scores is not None:
        rows, scores, totals = att.info_scores
        score_at = {int(row): k for k, row in enumerate(rows)}
    out = []
    for row in range(n):
        name = att.node_names[row]
        status: Status | None = None
        why = ""
        if diag is not None and diag.recorded[row]:
            status = diag.get(row)
        elif pre_rejected or (diag is not None and restricted is not None and name not in restricted):
            status = diag.absent if diag is not None else None
        elif row not in examined:
            why = ("kube-scheduler took the nominated node without filtering others" if r.nominated_fast_path else
                   "kube-scheduler stopped filtering once it had found enough feasible nodes")
        ne = NodeExplanation(name, row, row in examined, row in feasible, status, _verdicts(att, row, status),
                             not_examined=why)
        k = score_at.get(row)
        if k is not None and scores is not None and totals is not None:
            ne.scores = {p: PluginScore(int(raw[k]), int(norm[k]), att.weights.get(p, 1),
                                        att.score_notes.get(p, {}).get(row, ""))
                         for p, (raw, norm) in scores.items()}
            ne.total = int(totals[k])
        out.append(ne)
    return out


def rank_nodes(nodes: list[NodeExplanation], rank: np.ndarray, chosen: str | None,
               short: np.ndarray | None = None) -> list[NodeExplanation]:
    """Chosen node first, then feasible nodes by total score, then rejected nodes by nearness:
    fewest rejecting plugins, resolvable before unresolvable, smallest resource shortfall."""
    def key(ne: NodeExplanation) -> tuple[Any, ...]:
        if ne.feasible:
            return (0, 0 if ne.name == chosen else 1, -(ne.total or 0), 0.0, int(rank[ne.row]))
        if not ne.examined and ne.status is None:
            return (2, 0, 0, 0.0, int(rank[ne.row]))
        failing = ne.failing
        unresolvable = sum(1 for f in failing if f.code == Code.UNRESOLVABLE)
        return (1, len(failing), unresolvable, float(short[ne.row]) if short is not None else 0.0,
                int(rank[ne.row]))
    return sorted(nodes, key=key)


def explain(result: SimulationResult, explainer: PodExplainer, pod: Pod) -> Explanation:
    outcome = next(o for o in result.pods if o.pod.uid == pod.uid)
    position = next(i for i, o in enumerate(result.pods) if o.pod.uid == pod.uid) + 1
    att = explainer.attempts[-1] if explainer.attempts else None
    ex = Explanation(outcome.pod, outcome, position, len(result.pods), att)
    ex.evictions = [e for e in result.preempted if e.preemptor.uid == pod.uid]
    for a in explainer.attempts:
        r = a.result
        ex.history.append((a.number, r.node, r.message, r.preemption.nominated_node if r.preemption else None))
    for a in reversed(explainer.attempts[:-1]):
        pre = a.result.preemption
        if pre is not None and pre.nominated_node:
            ex.earlier_preemption = (a.number, pre)
            break
    if att is None:
        return ex
    r = att.result
    nodes = explain_nodes(att)
    ex.chosen = r.node
    ex.scored = r.scores is not None
    if r.totals is not None and r.feasible_rows is not None and len(r.totals):
        top = int(r.totals.max())
        ties = [att.node_names[int(row)] for row, t in zip(r.feasible_rows, r.totals, strict=True) if int(t) == top]
        if len(ties) > 1:
            ex.ties = sorted(ties, key=lambda s: s.encode())
    ex.nodes = rank_nodes(nodes, att.name_rank, r.node, att.shortfall)
    ex.preemption = r.preemption
    return ex
