"""The pass/fail verdict of a result document, for CI: ``--fail-on`` and the exit code.

One place decides what makes a run fail, so the exit code and the CI renderers (JUnit failures,
GitHub ``::error`` versus ``::warning``) always agree. Policies are ordered, each stricter than
the next:

- ``never``: nothing fails the check (the output still reports every problem).
- ``unschedulable`` (the default): a pending pod that does not end up running fails it: one
  kube-scheduler cannot place (Unschedulable), one its controller would not create because an
  earlier pod never ran (NotCreated, StatefulSet OrderedReady), or one that was placed and then
  preempted by a later pending pod (Preempted).
- ``preemption``: as ``unschedulable``, and also any running pod evicted by preemption.
- ``newly-unschedulable`` (whatif only): a pending pod that does not run after the change but
  did before it, or that the change created (a scale-up's replica, a drained pod's
  replacement): pods that were already pending before the change do not fail it.

Gated pods (``schedulingGates``) never fail the check: kube-scheduler does not try them until a
controller removes their gates, so the run says nothing about whether they fit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from kplan.scheduler.pod_status import NOT_RUNNING, PodStatus

if TYPE_CHECKING:  # not at run time: shell completion imports this module without the engine
    from kplan.report.capacity import CapacityDocument
    from kplan.report.document import SimulationDocument
    from kplan.report.explain import ExplanationDocument
    from kplan.report.sweep import SweepDocument
    from kplan.report.whatif import WhatIfDocument

    AnyDocument = SimulationDocument | WhatIfDocument | CapacityDocument | SweepDocument | ExplanationDocument

#: the kind of a Problem about a running pod that a pending pod's preemption evicted
EVICTED = "Evicted"


class FailOn(StrEnum):
    unschedulable = "unschedulable"
    preemption = "preemption"
    newly_unschedulable = "newly-unschedulable"
    never = "never"


@dataclass(frozen=True)
class Problem:
    """Something a CI reader should see: a pending pod that does not run, or an eviction."""

    #: Unschedulable, NotCreated, Preempted (pending pods) or Evicted (a running pod)
    kind: str
    namespace: str
    name: str
    message: str
    #: whether it makes the check fail under the chosen policy
    fails: bool
    #: the node of an evicted or preempted pod
    node: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def simulation_of(doc: AnyDocument) -> SimulationDocument:
    """The SimulationResult a check reads: the document itself, or a what-if's ``after`` run."""
    if doc.kind == "SimulationResult":
        return doc
    if doc.kind == "WhatIfResult":
        return doc.after
    raise ValueError(f"no pass/fail check for a {doc.kind} document")


def problems(doc: AnyDocument, fail_on: FailOn) -> list[Problem]:
    """Every problem of the run in the document's order: pending pods first, then evictions of
    running pods. A pending pod that was placed and then preempted is reported once, as a pod."""
    already: frozenset[tuple[str, str]] = frozenset()
    if fail_on is FailOn.newly_unschedulable and doc.kind == "WhatIfResult":
        # the pods that did not run before the change either: the change did not make them so
        already = frozenset((p.namespace, p.name) for p in doc.before.pods if p.status in NOT_RUNNING)
    return list(_problems(simulation_of(doc), fail_on, already))


def _problems(sim: SimulationDocument, fail_on: FailOn,
              already: frozenset[tuple[str, str]] = frozenset()) -> Iterator[Problem]:
    pending_fails = fail_on is not FailOn.never
    preempted_pending = set()
    for p in sim.pods:
        if p.status in NOT_RUNNING:
            if p.status == PodStatus.PREEMPTED:
                preempted_pending.add((p.namespace, p.name))
            yield Problem(p.status, p.namespace, p.name, p.message or p.status,
                          pending_fails and (p.namespace, p.name) not in already, p.node)
    for e in sim.preempted:
        if (e.namespace, e.name) in preempted_pending:
            continue
        yield Problem(EVICTED, e.namespace, e.name, f"preempted on node {e.node} by {e.preemptor}",
                      fail_on is FailOn.preemption, e.node)


def failed(doc: AnyDocument, fail_on: FailOn) -> bool:
    """Whether the check fails: the command then exits with 1."""
    return any(p.fails for p in problems(doc, fail_on))
