"""The versioned CapacityResult document (apiVersion kplan.dev/v1alpha1) of ``kplan capacity``.

Fields may be added; none are renamed. ``declared`` counts the replicas the manifests declare
(``replicas``; 1 for a Pod) and how many of them fit (``fit``): they are placed first.
``replicas`` is how many more replicas fit,
``placements`` where they go (node → count), ``message`` why the next one does not (its
FitError) or that the limit was reached; ``evictions`` the pods the replicas preempted;
``nodes`` the nodes' utilisation with the replicas placed (as in a SimulationResult).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kplan.model.objects import Pod
from kplan.report.codec import is_empty, is_none, member
from kplan.report.document import (
    API_VERSION,
    ApiVersion,
    AutoscaledWorkload,
    AutoscalingSummary,
    LaunchedNode,
    NodeUsage,
    PodKey,
    PodRef,
    ReleaseInfo,
    node_usage,
)
from kplan.whatif.capacity import CapacityOutcome


@dataclass(frozen=True, kw_only=True)
class Declared:
    """The replicas the manifests declare (1 for a Pod) and how many of them fit."""

    replicas: int
    fit: int


@dataclass(frozen=True, kw_only=True)
class CapacityEviction(PodKey):
    """A running pod a replica preempted."""

    node: str
    priority: int
    preemptor: str


@dataclass(frozen=True, kw_only=True)
class CapacityDocument:
    """The result of ``kplan capacity``: how many more replicas of a workload fit, and where."""

    api_version: ApiVersion = API_VERSION
    kind: Literal["CapacityResult"] = "CapacityResult"
    #: the release modelled
    release: ReleaseInfo | None = member(omit=is_none, default=None)
    workload: str
    pod: PodRef
    declared: Declared
    #: false when no replica beyond the declared ones was tried (``message`` says why: an
    #: OrderedReady StatefulSet whose declared pod does not run)
    more_counted: bool
    replicas: int
    placements: dict[str, int]
    message: str | None
    limit_reached: bool
    limit: int
    evictions: tuple[CapacityEviction, ...]
    #: the nodes' requested share with the replicas placed
    nodes: tuple[NodeUsage, ...]
    #: with --hpa: the workloads the HorizontalPodAutoscalers scaled before counting (absent otherwise)
    autoscaled: tuple[AutoscaledWorkload, ...] = member(omit=is_empty, default=())
    #: with --autoscaler: what it did in the run of the answer's replicas, the nodes it launched,
    #: and why it launched nothing for the first replica that does not run (absent otherwise)
    autoscaling: AutoscalingSummary | None = member(omit=is_none, default=None)
    launched: tuple[LaunchedNode, ...] = member(omit=is_empty, default=())
    autoscaler: str | None = member(omit=is_none, default=None)


def capacity_document(template: Pod, workload: str, out: CapacityOutcome, limit: int, *, declared: int = 0,
                      declared_fit: int = 0) -> CapacityDocument:
    more_counted = out.held_by is None
    message: str | None
    if out.held_by is not None:
        message = (f"its controller creates no more replicas while {out.held_by.key} does not run "
                   "(podManagementPolicy OrderedReady)")
    elif out.failed is not None:
        message = out.failed.message
    else:
        message = f"stopped at the limit of {limit} replica{'' if limit == 1 else 's'}; more may fit"
    return CapacityDocument(
        workload=workload,
        pod=PodRef(namespace=template.namespace, name=template.name, priority=template.priority),
        declared=Declared(replicas=declared, fit=declared_fit),
        more_counted=more_counted,
        replicas=out.replicas,
        placements=dict(out.placements),
        message=message,
        limit_reached=out.limit_reached,
        limit=limit,
        evictions=tuple(CapacityEviction(namespace=e.pod.namespace, name=e.pod.name, node=e.node,
                                         priority=e.pod.priority, preemptor=e.preemptor.name) for e in out.evictions),
        nodes=node_usage(out.result.snapshot.table) if out.result is not None else (),
    )
