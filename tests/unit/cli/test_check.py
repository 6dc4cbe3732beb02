"""kplan.report.check: what fails the check under each --fail-on policy (the exit code and the
CI formats both read it)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kplan.report.check import EVICTED, FailOn, failed, problems
from kplan.scheduler.pod_status import NOT_RUNNING, PodStatus
from tests.unit.cli.documents import eviction, pod, simulation

FITS = simulation(pod("a"), pod("b"))
UNSCHEDULABLE_POD = simulation(pod("a"), pod("b", "Unschedulable", message="0/1 nodes are available: ..."))
GATED_ONLY = simulation(pod("a"), pod("g", "Gated", message="waiting for scheduling gates: [x]"))
PREEMPTS_RUNNING = simulation(pod("big"), preempted=(eviction("victim", "default/big"),))
NOT_CREATED_POD = simulation(pod("db-0", "Unschedulable", message="m"), pod("db-1", "NotCreated", message="n"))
PENDING_VICTIM = simulation(pod("low", "Preempted", node="node-1", message="preempted by default/high"), pod("high"),
                            preempted=(eviction("low", "default/high"),))

CASES = [
    ("every pod fits: nothing fails", FITS, {FailOn.unschedulable: False, FailOn.preemption: False,
                                             FailOn.never: False}),
    ("an unschedulable pod fails unless never", UNSCHEDULABLE_POD, {FailOn.unschedulable: True,
                                                                   FailOn.preemption: True, FailOn.never: False}),
    ("a gated pod never fails the check", GATED_ONLY, {FailOn.unschedulable: False, FailOn.preemption: False,
                                                       FailOn.never: False}),
    ("evicting a running pod fails only under preemption", PREEMPTS_RUNNING,
     {FailOn.unschedulable: False, FailOn.preemption: True, FailOn.never: False}),
    ("a pod its controller never created fails like an unschedulable one", NOT_CREATED_POD,
     {FailOn.unschedulable: True, FailOn.preemption: True, FailOn.never: False}),
    ("a pending pod placed and then preempted does not run: it fails", PENDING_VICTIM,
     {FailOn.unschedulable: True, FailOn.preemption: True, FailOn.never: False}),
]


@pytest.mark.parametrize(("doc", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_policy_fails_on_what_it_names(doc: dict[str, Any], expected: dict[FailOn, bool]) -> None:
    # newly-unschedulable compares a what-if's runs; of one run alone it judges as unschedulable
    expected = {**expected, FailOn.newly_unschedulable: expected[FailOn.unschedulable]}
    assert {policy: failed(doc, policy) for policy in FailOn} == expected


def test_problems_list_pending_pods_then_evictions_of_running_pods() -> None:
    doc = simulation(pod("big"), pod("x", "Unschedulable", message="why"), preempted=(eviction("victim", "default/big"),))
    got = [(p.kind, p.key, p.fails) for p in problems(doc, FailOn.unschedulable)]
    assert got == [(PodStatus.UNSCHEDULABLE, "default/x", True), (EVICTED, "default/victim", False)]
    assert problems(doc, FailOn.unschedulable)[1].message == "preempted on node node-1 by default/big"


def test_a_preempted_pending_pod_is_one_problem_not_two() -> None:
    assert [(p.kind, p.key) for p in problems(PENDING_VICTIM, FailOn.preemption)] == [(PodStatus.PREEMPTED, "default/low")]


def test_a_whatif_document_is_judged_by_its_after_run() -> None:
    # the check reads a what-if's kind and its after run only
    doc = SimpleNamespace(kind="WhatIfResult", before=FITS, after=UNSCHEDULABLE_POD)
    assert failed(doc, FailOn.unschedulable)  # type: ignore[arg-type]
    doc = SimpleNamespace(kind="WhatIfResult", before=UNSCHEDULABLE_POD, after=FITS)
    assert not failed(doc, FailOn.unschedulable)  # type: ignore[arg-type]


def test_other_documents_have_no_check() -> None:
    with pytest.raises(ValueError, match="PodExplanation"):
        failed(SimpleNamespace(kind="PodExplanation"), FailOn.unschedulable)  # type: ignore[arg-type]


def test_the_statuses_spelled_out_are_the_schedulers() -> None:
    assert NOT_RUNNING == (PodStatus.UNSCHEDULABLE, PodStatus.NOT_CREATED, PodStatus.PREEMPTED)
