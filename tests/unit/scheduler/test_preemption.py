"""DefaultPreemption (reference section 7): victims, PDB counting, the choice of node, messages."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.cluster.disruption import disruptions_allowed
from kplan.framework.diagnosis import Diagnosis
from kplan.framework.preemption import (
    NOT_HELPFUL,
    BatchVictims,
    Candidate,
    Evaluator,
    PreemptionOutcome,
    PreemptionRules,
    _BatchReprieve,
    _DryRun,
    counts_against,
    counts_against_empty_selects_all,
    importance_key,
    importance_key_by_uid,
    split_by_pdb,
)
from kplan.framework.release_tables import RELEASES
from kplan.framework.status import OK, Code, Status
from kplan.model.parse import parse_pdb
from tests.builders import make_node, make_pod, simulate


def pc(name: str, value: int, policy: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": name}, "value": value}
    if policy:
        out["preemptionPolicy"] = policy
    return out


def pdb(name: str, app: str, allowed: int | None = None, **spec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                           "metadata": {"name": name, "namespace": "default"},
                           "spec": {"selector": {"matchLabels": {"app": app}}, **spec}}
    if allowed is not None:
        out["status"] = {"disruptionsAllowed": allowed}
    return out


CLASSES = [pc("low", 100), pc("mid", 1000), pc("high", 100000), pc("high-never", 100000, "Never")]


def outcome(result: Any, name: str) -> Any:
    o = result.outcome("default", name)
    assert o is not None
    return o


def victims(result: Any) -> list[str]:
    return sorted(e.pod.name for e in result.preempted)


# ------------------------------------------------------------------------ whole runs

CASES = [
    pytest.param(
        [make_node("n1").alloc(cpu="4", pods=10)],
        [make_pod("a").req(cpu="2").priority_class("low").node_name("n1"),
         make_pod("b").req(cpu="2").priority_class("low").node_name("n1")],
        [make_pod("big").req(cpu="2").priority_class("high")], [],
        {"big": ("Scheduled", "n1")}, ["b"],
        id="a high-priority pod evicts one low-priority pod, the later-started one, and binds on its retry"),
    pytest.param(
        [make_node("n1").alloc(cpu="4", pods=10)],
        [make_pod("low-1").req(cpu="1").priority_class("low").node_name("n1"),
         make_pod("mid-1").req(cpu="1").priority_class("mid").node_name("n1"),
         make_pod("low-2").req(cpu="2").priority_class("low").node_name("n1")],
        [make_pod("big").req(cpu="2").priority_class("high")], [],
        {"big": ("Scheduled", "n1")}, ["low-2"],
        id="the more important pods are reprieved first, so only as many pods leave as needed"),
    pytest.param(
        [make_node("n1").alloc(cpu="2", pods=10)],
        [make_pod("peer").req(cpu="2").priority_class("high").node_name("n1")],
        [make_pod("big").req(cpu="2").priority_class("high")], [],
        {"big": ("Unschedulable", None)}, [],
        id="pods of equal priority are never victims"),
    pytest.param(
        [make_node("n1").alloc(cpu="4", pods=10)],
        [make_pod("low-port").req(cpu="1").priority_class("low").host_port(9090).node_name("n1"),
         make_pod("high-port").req(cpu="1").priority_class("high").host_port(9090).node_name("n1")],
        [make_pod("mid").req(cpu="1").priority_class("mid").host_port(9090)], [],
        {"mid": ("Scheduled", "n1")}, ["low-port"],
        id="evicting one of two pods on a shared host port frees the port in the scheduler's view"),
    pytest.param(
        [make_node("n1").alloc(cpu="2", pods=10)],
        [make_pod("a").req(cpu="2").priority_class("low").node_name("n1")],
        [make_pod("polite").req(cpu="2").priority_class("high-never")], [],
        {"polite": ("Unschedulable", None)}, [],
        id="a pod with preemptionPolicy Never evicts nobody"),
    pytest.param(
        [make_node("n1").alloc(cpu="2", pods=10), make_node("n2").alloc(cpu="2", pods=10)],
        [make_pod("web-1").labels(app="web").req(cpu="2").priority_class("low").node_name("n1"),
         make_pod("web-2").labels(app="web").req(cpu="2").priority_class("mid").node_name("n2")],
        [make_pod("big").req(cpu="2").priority_class("high")], [pdb("web", "web", allowed=0)],
        {"big": ("Scheduled", "n1")}, ["web-1"],
        id="with a PDB violated everywhere, the node whose victim has the lowest priority wins"),
    pytest.param(
        [make_node("n1").alloc(cpu="2", pods=10), make_node("n2").alloc(cpu="2", pods=10)],
        [make_pod("web-1").labels(app="web").req(cpu="2").priority_class("low").node_name("n1"),
         make_pod("other").labels(app="other").req(cpu="2").priority_class("mid").node_name("n2")],
        [make_pod("big").req(cpu="2").priority_class("high")], [pdb("web", "web", allowed=0)],
        {"big": ("Scheduled", "n2")}, ["other"],
        id="a node without PDB violations beats one with them, whatever the priorities"),
    pytest.param(
        [make_node("n1").alloc(cpu="4", pods=10), make_node("n2").alloc(cpu="4", pods=10)],
        [make_pod("a1").req(cpu="2").priority_class("low").node_name("n1"),
         make_pod("a2").req(cpu="2").priority_class("low").node_name("n1"),
         make_pod("b1").req(cpu="4").priority_class("low").node_name("n2")],
        [make_pod("big").req(cpu="4").priority_class("high")], [],
        {"big": ("Scheduled", "n2")}, ["b1"],
        id="with equal top priorities, the smaller sum of victim priorities (fewer victims) wins"),
]


@pytest.mark.parametrize(("nodes", "running", "pending", "objects", "want", "evicted"), CASES)
def test_preemption_outcomes(nodes: Any, running: Any, pending: Any, objects: Any,
                             want: dict[str, tuple[str, str | None]], evicted: list[str]) -> None:
    result = simulate(nodes, pending, running, objects=CLASSES + objects)
    for name, (status, node) in want.items():
        o = outcome(result, name)
        assert (o.status, o.node) == (status, node), o.message
    assert victims(result) == evicted


MESSAGES = [
    pytest.param(
        [make_node("n1").alloc(cpu="2", pods=10)],
        [make_pod("peer").req(cpu="2").priority_class("high").node_name("n1")],
        make_pod("big").req(cpu="2").priority_class("high"),
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
        "available: 1 No preemption victims found for incoming pod.",
        id="no lower-priority pod anywhere"),
    pytest.param(
        [make_node("n1").alloc(cpu="2", pods=10)],
        [make_pod("a").req(cpu="1").priority_class("low").node_name("n1")],
        make_pod("huge").req(cpu="3").priority_class("high"),
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
        "available: 1 Preemption is not helpful for scheduling.",
        id="a request above the node's whole allocatable makes it no candidate"),
    pytest.param(
        [make_node("n1").alloc(cpu="2", pods=10)],
        [make_pod("a").req(cpu="2").priority_class("low").node_name("n1")],
        make_pod("polite").req(cpu="2").priority_class("high-never"),
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible "
        "due to preemptionPolicy=Never.",
        id="preemptionPolicy Never"),
    pytest.param(
        [make_node("n1").alloc(cpu="4", pods=10)],
        [make_pod("low-port").req(cpu="1").priority_class("low").host_port(9090).node_name("n1"),
         make_pod("high-port").req(cpu="2").priority_class("high").host_port(9090).node_name("n1")],
        make_pod("mid").req(cpu="3").priority_class("mid").host_port(9090),
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. preemption: 0/1 nodes "
        "are available: 1 Insufficient cpu.",
        id="removing a victim frees a host port that a pod staying on the node holds too, as HostPortInfo does"),
]


@pytest.mark.parametrize(("nodes", "running", "pod", "message"), MESSAGES)
def test_preemption_messages(nodes: Any, running: Any, pod: Any, message: str) -> None:
    result = simulate(nodes, [pod], running, objects=CLASSES)
    assert result.pods[0].message == message


def test_a_pod_nominated_to_a_node_holds_one_of_its_pod_slots_in_a_later_preemptors_dry_run() -> None:
    # "first" evicts low-2 and is nominated to n1; "second" then finds n1 full counting "first",
    # and its dry run must count that slot too, evicting low-1 at once (not after a retry)
    nodes = [make_node("n1").alloc(cpu="8", pods=2)]
    running = [make_pod("low-1").req(cpu="1").priority_class("low").node_name("n1"),
               make_pod("low-2").req(cpu="1").priority_class("low").node_name("n1")]
    pending = [make_pod("first").req(cpu="1").priority_class("high"),
               make_pod("second").req(cpu="1").priority_class("high")]
    result = simulate(nodes, pending, running, CLASSES)
    assert [(o.pod.name, o.status, o.node, o.attempts) for o in result.pods] == [
        ("first", "Scheduled", "n1", 2), ("second", "Scheduled", "n1", 2)]
    assert [(e.pod.name, e.preemptor.name) for e in result.preempted] == [("low-2", "first"), ("low-1", "second")]


def test_the_preemptor_is_nominated_and_lower_priority_pods_leave_its_room_alone() -> None:
    result = simulate([make_node("n1").alloc(cpu="2", pods=10)],
                      [make_pod("big").req(cpu="2").priority_class("high"),
                       make_pod("small").req(cpu="1").priority_class("low")],
                      [make_pod("victim").req(cpu="2").priority_class("low").node_name("n1")], objects=CLASSES,
                      release="1.34")
    big, small = outcome(result, "big"), outcome(result, "small")
    assert (big.status, big.node, big.attempts) == ("Scheduled", "n1", 2)
    # 1.34's API server keeps the nomination through the binding (1.35 clears it)
    assert big.nominated_node == "n1"
    assert small.status == "Unschedulable"
    assert [(e.pod.name, e.preemptor.name) for e in result.preempted] == [("victim", "big")]


# ------------------------------------------------------------------------ pieces

def _pod(name: str, prio: int, app: str = "web") -> Any:
    return dataclasses.replace(make_pod(name).labels(app=app).build(), priority=prio)


PDB_CASES = [
    pytest.param({"allowed": 1}, ["a", "b"], ["b"], id="one disruption allowed: the second pod violates"),
    pytest.param({"allowed": 0}, ["a"], ["a"], id="none allowed: every matching pod violates"),
    pytest.param({"allowed": 2}, ["a", "b"], [], id="enough budget: no violation"),
]


@pytest.mark.parametrize(("budget", "pods", "violating"), PDB_CASES)
def test_pdb_split(budget: dict[str, int], pods: list[str], violating: list[str]) -> None:
    budgets = [parse_pdb(pdb("web", "web", budget["allowed"]))]
    bad, good = split_by_pdb([_pod(n, 0) for n in pods], budgets, {0: budget["allowed"]}, counts_against)
    assert [p.name for p in bad] == violating
    assert len(bad) + len(good) == len(pods)


def test_pdb_without_a_matching_label_or_selector_protects_nothing() -> None:
    empty = parse_pdb({"kind": "PodDisruptionBudget", "metadata": {"name": "e", "namespace": "default"},
                       "spec": {"selector": {}}, "status": {"disruptionsAllowed": 0}})
    bad, _ = split_by_pdb([_pod("a", 0)], [empty], {0: 0}, counts_against)
    assert bad == []


def test_from_1_38_a_pdb_with_an_empty_selector_guards_every_pod_of_its_namespace() -> None:
    empty = parse_pdb({"kind": "PodDisruptionBudget", "metadata": {"name": "e", "namespace": "default"},
                       "spec": {"selector": {}}, "status": {"disruptionsAllowed": 0}})
    unlabelled = dataclasses.replace(make_pod("bare").build(), priority=0)
    bad, _ = split_by_pdb([_pod("a", 0), unlabelled], [empty], {0: 0}, counts_against_empty_selects_all)
    assert [p.name for p in bad] == ["a", "bare"]
    other_ns = dataclasses.replace(_pod("o", 0), namespace="other")
    assert not counts_against_empty_selects_all(other_ns, empty)


#: DefaultPreemption's rules up to 1.37 (release_tables: every one off)
RULES_1_37 = PreemptionRules(victims_tie_by_uid=False, empty_pdb_selector_selects_all=False,
                             no_victim_node_unresolvable=False)


VICTIM_ORDER_CASES = [
    pytest.param(importance_key, ["a", "b"], id="up to 1.37 equal victims keep the node's order"),
    pytest.param(importance_key_by_uid, ["b", "a"], id="from 1.38 equal victims are ordered by pod UID"),
]


@pytest.mark.parametrize(("key", "order"), VICTIM_ORDER_CASES)
def test_victims_of_equal_priority_and_start(key: Any, order: list[str]) -> None:
    a = dataclasses.replace(_pod("a", 5), uid="uid-2", start_time=10.0)
    b = dataclasses.replace(_pod("b", 5), uid="uid-1", start_time=10.0)
    assert [p.name for p in sorted([a, b], key=key)] == order


NO_VICTIM_CASES = [
    pytest.param(RULES_1_37, Status(Code.ERROR, ('expected at least one victim pod on node "n1"',)),
                 id="up to 1.37 a node that needs no victim is an error"),
    pytest.param(dataclasses.replace(RULES_1_37, no_victim_node_unresolvable=True),
                 Status(Code.UNRESOLVABLE, ("No preemption victims found for incoming pod",)),
                 id="from 1.38 a node that needs no victim is unresolvable"),
]


@pytest.mark.parametrize(("rules", "want"), NO_VICTIM_CASES)
def test_a_node_that_needs_no_victim(rules: PreemptionRules, want: Status) -> None:
    assert rules.no_victim_status("n1") == want


DISRUPTION_CASES = [
    pytest.param({"minAvailable": 1}, 3, 2, id="minAvailable 1 of 3 healthy allows 2"),
    pytest.param({"minAvailable": "50%"}, 3, 1, id="minAvailable 50% of 3 rounds up to 2, allows 1"),
    pytest.param({"maxUnavailable": 1}, 3, 1, id="maxUnavailable 1 allows 1"),
    pytest.param({"maxUnavailable": "50%"}, 3, 2, id="maxUnavailable 50% of 3 rounds up to 2"),
    pytest.param({"minAvailable": 5}, 3, 0, id="more wanted than running allows none"),
]


@pytest.mark.parametrize(("spec", "running", "allowed"), DISRUPTION_CASES)
def test_disruptions_allowed_is_computed_like_the_disruption_controller(spec: dict[str, Any], running: int,
                                                                         allowed: int) -> None:
    budget = parse_pdb(pdb("web", "web", None, **spec))
    assert disruptions_allowed(budget, [_pod(f"w{i}", 0) for i in range(running)]) == allowed


def test_disruptions_allowed_from_status_wins() -> None:
    budget = parse_pdb(pdb("web", "web", 7, minAvailable=1))
    assert disruptions_allowed(budget, []) == 7


def _candidate(node: str, prios: list[int], starts: list[float] | None = None, violations: int = 0) -> Candidate:
    pods = []
    for i, p in enumerate(prios):
        pod = _pod(f"{node}-{i}", p)
        pods.append(dataclasses.replace(pod, start_time=starts[i] if starts else float(i)))
    return Candidate(node, 0, pods, violations)


PICK_CASES = [
    pytest.param([_candidate("a", [10], violations=1), _candidate("b", [50])], "b", id="fewest PDB violations first"),
    pytest.param([_candidate("a", [50]), _candidate("b", [10, 10])], "b", id="then the lowest top victim priority"),
    pytest.param([_candidate("a", [10, 10, 10]), _candidate("b", [10, 5])], "b",
                 id="then the smallest sum of priorities"),
    pytest.param([_candidate("a", [10], [5.0]), _candidate("b", [10], [9.0])], "b",
                 id="then the latest start among the most important victims"),
    pytest.param([_candidate("b", [10], [1.0]), _candidate("a", [10], [1.0])], "a",
                 id="a full tie goes to the smallest name with lowest-name ties"),
]


@pytest.mark.parametrize(("candidates", "chosen"), PICK_CASES)
def test_pick_one_node_for_preemption(candidates: list[Candidate], chosen: str) -> None:
    handle = SimpleNamespace(lowest_name=True, rng=np.random.default_rng(0))
    ev = Evaluator(None, SimpleNamespace(), handle, RULES_1_37)  # type: ignore[arg-type]
    best = ev.pick_one_node_for_preemption(candidates)
    assert best is not None and best.node == chosen


@pytest.mark.parametrize(("n", "want"), [(5, 5), (100, 100), (2000, 200), (500, 100)],
                         ids=["few nodes: all", "100 nodes: all", "2000 nodes: 10%", "500 nodes: the 100 minimum"])
def test_number_of_candidates_sampled(n: int, want: int) -> None:
    ev = Evaluator(None, SimpleNamespace(min_candidate_nodes_percentage=10, min_candidate_nodes_absolute=100),  # type: ignore[arg-type]
                   SimpleNamespace(), RULES_1_37)
    assert ev.num_candidates(n) == want


# ------------------------------------------------------------------------ the resource-only reprieve

running_shapes = st.tuples(st.integers(0, 2), st.sampled_from(["low", "mid"]), st.sampled_from(["250m", "500m", "1"]),
                           st.sampled_from(["128Mi", "1Gi"]), st.sampled_from(["web", "db"]))
pending_shapes = st.tuples(st.sampled_from(["mid", "high"]), st.sampled_from(["500m", "1", "2", "3"]),
                           st.sampled_from(["128Mi", "2Gi"]), st.booleans())


def reference_preempt(self: Evaluator, state: Any, pod: Any, diagnosis: Any) -> PreemptionOutcome:
    """DryRunPreemption and pickOneNodeForPreemption written out as upstream has them: node
    after node from the offset, each through SelectVictimsOnNode on a fork, until a candidate
    without PDB violations is known and enough candidates in all; then the criteria in turn."""
    table = self.handle.snapshot.table
    nominated = self.handle.nominated_node(pod)
    row = self.handle.snapshot.row_of(nominated) if nominated else None
    ok, msg = self.eligible(pod, diagnosis.get(row) if row is not None else diagnosis.absent)
    if not ok:
        return PreemptionOutcome(Status(Code.UNSCHEDULABLE, (msg,)))
    potential = np.asarray(diagnosis.rows_with_code(Code.UNSCHEDULABLE), dtype=np.int64)
    potential = (potential[np.argsort(table.name_rank[potential], kind="stable")] if self.handle.lowest_name
                 else np.sort(potential))
    outcome = PreemptionOutcome(OK, potential_rows=potential, row_names=table.names)
    nested = Diagnosis(len(table), absent=Status(Code.UNRESOLVABLE, (NOT_HELPFUL,)))
    clean: list[Candidate] = []
    violating: list[Candidate] = []
    if len(potential):
        pdbs = self.handle.snapshot.pdbs
        allowed = {i: self.handle.disruptions_allowed(b) for i, b in enumerate(pdbs)}
        offset = 0 if self.handle.lowest_name else int(self.handle.rng.integers(len(potential)))
        want = self.num_candidates(len(potential))
        for r in np.roll(potential, -offset).tolist():
            found, n_violations, status = self.select_victims_on_node(state, pod, r, pdbs, allowed)
            if status.ok and found:
                (clean if n_violations == 0 else violating).append(Candidate(table.names[r], r, found, n_violations))
                if clean and len(clean) + len(violating) >= want:
                    break
            else:
                nested.record(r, status if not status.ok else Status(
                    Code.ERROR, (f'expected at least one victim pod on node "{table.names[r]}"',)))
    outcome.dry_run = nested
    candidates = clean + violating
    outcome.candidate_source = lambda: candidates
    best = self.pick_one_node_for_preemption(candidates)
    if best is None:
        outcome.status = Status(Code.UNSCHEDULABLE, (nested.fit_error().message,))
        outcome.nominated_node = ""
        return outcome
    outcome.nominated_node, outcome.victims = best.node, best.victims
    return outcome


def every_reprieve_path_agrees(run: Any) -> None:
    """``run()`` (a whole simulation's outcomes) is the same whichever path decides the reprieve:
    NodeResourcesFit for many nodes at once (_BatchReprieve, nominated pods as load), chunks of
    several sizes, SelectVictimsOnNode node by node (the batch settling nothing), nominated pods
    that a selective filter would count on forks instead of counted (filter_with_pods), the fast
    path closed (Framework.fast_path: every step running the filters on a copy, which also turns
    off filtering with nominated pods as load, FastPath.filter_with_nominated), and the dry run
    written out node after node (reference_preempt) on copies."""
    from unittest.mock import patch

    from kplan.framework.runtime import Framework
    from kplan.plugins.interpodaffinity import InterPodAffinity
    from kplan.plugins.podtopologyspread import PodTopologySpread

    batched = run()
    for candidate_yield in (0.01, 0.3, 40.0):
        # the batch's chunks sized for almost every node at once, and for a few nodes at a time
        with patch.object(_DryRun, "_learn_yield", _fixed_yield(candidate_yield)):
            assert run() == batched, f"chunks sized for a yield of {candidate_yield}"
    with patch.object(_BatchReprieve, "compute", lambda self, at: None):
        assert run() == batched, "SelectVictimsOnNode node by node"
    with patch.object(PodTopologySpread, "filter_with_pods", lambda self, *args: None), \
            patch.object(InterPodAffinity, "filter_with_pods", lambda self, *args: None):
        assert run() == batched, "nominated pods that the selective filters count on forks"
    with patch.object(Framework, "fast_path", lambda self, state: None):
        assert run() == batched, "every step on a fork"
        with patch.object(Evaluator, "preempt", reference_preempt):
            assert run() == batched, "the dry run node after node, on forks"


def _fixed_yield(candidate_yield: float) -> Any:
    def learn(self: _DryRun, candidates: int, examined: int) -> None:
        self.ev.sizing.candidate_yield = candidate_yield
    return learn


def every_outcome(result: Any) -> list[tuple[Any, ...]]:
    """What the reprieve paths must agree on: each pod's outcome, message, nomination and
    attempts, and every eviction."""
    return [(o.pod.name, o.status, o.node, o.message, o.nominated_node, o.attempts) for o in result.pods] + [
        (e.pod.name, e.node, e.preemptor.name) for e in result.preempted]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(running_shapes, max_size=12), st.lists(pending_shapes, min_size=1, max_size=6),
       st.sampled_from([None, 0, 1]))
def test_the_resource_only_reprieve_chooses_what_the_filters_choose(
        running: list[tuple[int, str, str, str, str]], pending: list[tuple[str, str, str, bool]],
        budget: int | None) -> None:
    # pods of several sizes, PDB budgets, and a host port that sends its pod down the general path
    nodes = [make_node(f"n{i}").alloc(cpu="3", memory="4Gi", pods=3 + i) for i in range(3)]
    pods = [make_pod(f"r{k}").labels(app=app).req(cpu=cpu, memory=mem).priority_class(prio).node_name(f"n{row}")
            for k, (row, prio, cpu, mem, app) in enumerate(running)]
    # a host port makes NodePorts read the node's pods: that pod takes the general path
    wanted = [(make_pod(f"p{k}").req(cpu=cpu, memory=mem).priority_class(prio).host_port(8080) if port
               else make_pod(f"p{k}").req(cpu=cpu, memory=mem).priority_class(prio))
              for k, (prio, cpu, mem, port) in enumerate(pending)]
    objects = CLASSES + ([pdb("web", "web", budget)] if budget is not None else [])

    every_reprieve_path_agrees(lambda: every_outcome(simulate(nodes, wanted, pods, objects)))


def test_a_node_attribute_filter_placed_after_the_resource_filter_still_decides_preemption() -> None:
    # TaintToleration disabled and enabled again in multiPoint moves after NodeResourcesFit; the
    # full tainted node fails on resources first, so it is a preemption candidate, but evicting
    # its pods would not let the intolerant pod run there: nothing is evicted
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
                  "disabled": [{"name": "TaintToleration"}], "enabled": [{"name": "TaintToleration"}]}}}]}
    nodes = [make_node("n1").alloc(cpu="2", pods=10).taint("dedicated", "db")]
    running = [make_pod("low").req(cpu="2").priority_class("low").node_name("n1")
               .toleration("dedicated", "db", "NoSchedule", operator="Equal")]
    result = simulate(nodes, [make_pod("big").req(cpu="1").priority_class("high")], running, CLASSES, config)
    assert outcome(result, "big").status == "Unschedulable"
    assert victims(result) == []


def _fast_paths_chosen(run: Any) -> list[Any]:
    """Each Framework.fast_path answer during ``run()``."""
    from unittest.mock import patch

    from kplan.framework.runtime import Framework

    chosen: list[Any] = []
    original = Framework.fast_path

    def spy(self: Framework, state: Any) -> Any:
        chosen.append(original(self, state))
        return chosen[-1]

    with patch.object(Framework, "fast_path", spy):
        run()
    return chosen


@pytest.mark.parametrize("release", [str(v) for v in RELEASES],
                         ids=[f"at {v} a plain preemptor's dry run takes the fast path" for v in RELEASES])
def test_a_plain_preemptors_dry_run_takes_the_fast_path_at_every_release(release: str) -> None:
    # a release's new Filter plugin that runs for every pod and is neither the resource filter nor
    # a selective one closes the fast path, and every candidate is then forked victim by victim
    # (NodeDeclaredFeatures without its PreFilter Skip at 1.36 and 1.37: about 50x slower)
    nodes = [make_node(f"n{i}").alloc(cpu="4", memory="8Gi", pods=10) for i in range(3)]
    running = [make_pod(f"low-{i}-{k}").req(cpu="2").priority_class("low").node_name(f"n{i}")
               for i in range(3) for k in range(2)]
    chosen = _fast_paths_chosen(
        lambda: simulate(nodes, [make_pod("big").req(cpu="3").priority_class("high")], running, CLASSES,
                         release=release))
    assert chosen and all(found is not None for found in chosen)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["low", "mid"]), st.sampled_from(["500m", "1", "2"])),
                min_size=4, max_size=16),
       st.lists(st.tuples(st.sampled_from(["1", "2", "3"]), st.sampled_from(["mid", "high"])), min_size=2, max_size=8),
       st.lists(st.integers(1, 5), min_size=4, max_size=4))
def test_the_batched_reprieve_matches_the_filters_on_full_nodes_with_nominations(
        running: list[tuple[int, str, str]], pending: list[tuple[str, str]], pod_limits: list[int]) -> None:
    # full nodes with tight pod limits and several preemptors of equal priority, so that the
    # dry run meets nominated pods it must leave room for and nodes one pod short of room
    nodes = [make_node(f"n{i}").alloc(cpu="4", memory="8Gi", pods=limit) for i, limit in enumerate(pod_limits)]
    pods = [make_pod(f"r{k}").req(cpu=cpu, memory="1Gi").priority_class(prio).node_name(f"n{row}")
            for k, (row, prio, cpu) in enumerate(running)]
    wanted = [make_pod(f"p{k}").req(cpu=cpu, memory="1Gi").priority_class(prio) for k, (cpu, prio) in enumerate(pending)]

    every_reprieve_path_agrees(lambda: every_outcome(simulate(nodes, wanted, pods, CLASSES)))


def _sampled_run(seed: int, absolute: int, lowest_name: bool, budget: int | None) -> list[tuple[Any, ...]]:
    """A seeded cluster of 90 full nodes (several batch chunks) and preemptors of two priorities,
    with DefaultPreemption sampling only ``absolute`` candidates, so that the dry run stops
    part-way through its node list, at a random offset unless ``lowest_name``."""
    import random

    from kplan.scheduler.setup import SchedulerSetup
    from kplan.scheduler.simulate import run_simulation
    from tests.builders import scenario

    rng = random.Random(seed)
    nodes = [make_node(f"n{i:02d}").alloc(cpu="4", memory="8Gi", pods=rng.choice([3, 4, 110])) for i in range(90)]
    running = []
    for i in range(90):
        # nearly full nodes: pods of 1 or 2 cpu up to 3 or 4 of the 4
        used = 0
        while used < 3:
            cpu = rng.choice([1, 1, 2]) if used < 3 else 1
            running.append(make_pod(f"r{i:02d}-{used}").labels(app=rng.choice(["web", "db"]))
                           .req(cpu=str(cpu), memory="1Gi").priority_class(rng.choice(["low", "low", "mid"]))
                           .node_name(f"n{i:02d}"))
            used += cpu
    pending = [make_pod(f"p{k}").req(cpu=rng.choice(["1500m", "2", "3"]), memory="1Gi")
               .priority_class(rng.choice(["mid", "high", "high"])) for k in range(12)]
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
                  "name": "DefaultPreemption",
                  "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": absolute}}]}]}
    objects = CLASSES + ([pdb("web", "web", budget)] if budget is not None else [])
    sc = scenario(nodes, pending, running, objects)
    result = run_simulation(sc.snapshot, SchedulerSetup.of(None, config), sc.pending, seed=seed,
                            lowest_name=lowest_name, pdb_allowed=sc.pdb_allowed)
    return every_outcome(result)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.integers(0, 10**6), st.sampled_from([1, 2, 5, 40]), st.booleans(), st.sampled_from([None, 0, 1]))
def test_the_dry_run_stops_at_the_same_node_on_every_path(seed: int, absolute: int, lowest_name: bool,
                                                          budget: int | None) -> None:
    # the batch settles nodes in chunks and keeps its candidates as columns; where it stops,
    # which candidates it found, the random offset and the random pick among ties must be
    # those of the node-by-node dry run
    every_reprieve_path_agrees(lambda: _sampled_run(seed, absolute, lowest_name, budget))


def _constrained_run(seed: int, absolute: int, lowest_name: bool, budget: int | None, anti: bool
                     ) -> list[tuple[Any, ...]]:
    """The filters that read other pods in the dry run: full nodes in three zones, preemptors
    with a required zone spread (and, with ``anti``, required hostname anti-affinity) over
    ``app=serving``; some running pods are ``serving`` too, some carry required anti-affinity
    against it, and a PDB may guard the ``web`` ones. Sampling as in _sampled_run."""
    import random

    from kplan.scheduler.setup import SchedulerSetup
    from kplan.scheduler.simulate import run_simulation
    from tests.builders import scenario

    rng = random.Random(seed)
    names = [f"n{i:02d}" for i in range(60)]
    nodes = [make_node(n).labels(**{"kubernetes.io/hostname": n, "topology.kubernetes.io/zone": "abc"[i % 3]})
             .alloc(cpu="4", memory="8Gi", pods=rng.choice([4, 110])) for i, n in enumerate(names)]
    serving = {"matchLabels": {"app": "serving"}}
    running = []
    for i, n in enumerate(names):
        used = 0
        while used < 3:
            cpu = rng.choice([1, 1, 2])
            p = (make_pod(f"r{i:02d}-{used}").labels(app=rng.choice(["web", "web", "db", "serving"]))
                 .req(cpu=str(cpu), memory="1Gi").priority_class(rng.choice(["low", "low", "mid"])).node_name(n))
            if rng.random() < 0.05:
                p = p.spec(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": serving}]}})
            running.append(p)
            used += cpu
    pending = []
    for k in range(10):
        spec: dict[str, Any] = {"topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": serving}]}
        if anti:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": serving}]}}
        pending.append(make_pod(f"p{k}").labels(app="serving").req(cpu=rng.choice(["1500m", "2", "3"]), memory="1Gi")
                       .priority_class(rng.choice(["mid", "high", "high"])).spec(**spec))
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
                  "name": "DefaultPreemption",
                  "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": absolute}}]}]}
    objects = CLASSES + ([pdb("web", "web", budget)] if budget is not None else [])
    sc = scenario(nodes, pending, running, objects)
    result = run_simulation(sc.snapshot, SchedulerSetup.of(None, config), sc.pending, seed=seed,
                            lowest_name=lowest_name, pdb_allowed=sc.pdb_allowed)
    return every_outcome(result)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.integers(0, 10**6), st.sampled_from([1, 3, 100]), st.booleans(), st.sampled_from([None, 0, 1, 2]),
       st.booleans())
def test_spread_anti_affinity_and_pdbs_decide_the_dry_run_alike_on_every_path(
        seed: int, absolute: int, lowest_name: bool, budget: int | None, anti: bool) -> None:
    # the batch settles PodTopologySpread and InterPodAffinity once per node where no victim or
    # nominated pod is one their state counts, and orders PDB-guarded pods first in the walk
    every_reprieve_path_agrees(lambda: _constrained_run(seed, absolute, lowest_name, budget, anti))


def _take_checked(self: _DryRun, found: BatchVictims) -> None:
    """_DryRun._take, after checking every node the fast path settled against
    Evaluator.select_victims_on_node with the fast path closed (on copies)."""
    from unittest.mock import patch

    from kplan.framework.runtime import Framework

    failed = np.cumsum(~found.fits) - 1
    for k, i in enumerate(found.at.tolist()):
        row = int(self.tried[i])
        with patch.object(Framework, "fast_path", lambda self, state: None):
            victims, violations, status = self.ev.select_victims_on_node(self.state, self.pod, row, self.pdbs,
                                                                         self.allowed)
        if found.fits[k]:
            assert (status, [v.uid for v in victims], violations) == (
                OK, [v.uid for v in found.victims(k)], int(found.violations[k])), self.names[row]
        else:
            assert status == found.failures.status(int(failed[k]), self.ev.fw.filter_names), self.names[row]
    _ORIGINAL_TAKE(self, found)


_ORIGINAL_TAKE = _DryRun._take


@settings(max_examples=8, deadline=None, derandomize=True)
@given(st.integers(0, 10**6), st.booleans(), st.sampled_from([None, 0, 1]), st.sampled_from(["sampled", "spread",
                                                                                              "anti"]))
def test_the_fast_path_settles_each_node_as_select_victims_on_node_does(
        seed: int, lowest_name: bool, budget: int | None, cluster: str) -> None:
    from unittest.mock import patch

    with patch.object(_DryRun, "_take", _take_checked):
        if cluster == "sampled":
            _sampled_run(seed, 40, lowest_name, budget)
        else:
            _constrained_run(seed, 100, lowest_name, budget, cluster == "anti")
