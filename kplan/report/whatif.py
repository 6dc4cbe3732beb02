"""The versioned WhatIfResult document (apiVersion kplan.dev/v1alpha1) of ``kplan whatif``.

Fields may be added; none are renamed. ``before`` and ``after`` are SimulationResult documents;
``changes`` lists every pod whose (status, node) differs between them; ``untilFit`` is null
unless ``--until-fit`` was given, and its ``count`` is null when no number of such nodes helps;
``untilFits`` (left out without ``--until-fit``) has one answer per template given; ``shrink``
(left out without ``--shrink``) the nodes that can go (kplan.report.shrink).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from kplan.autoscaler.karpenter.disruption.controller import ConsolidationResult
from kplan.report.codec import Quantity, is_empty, is_none, member
from kplan.report.consolidation import ConsolidationDoc, consolidation_doc
from kplan.report.document import (
    API_VERSION,
    ApiVersion,
    AutoscaledWorkload,
    PodKey,
    ReleaseInfo,
    Resources,
    RunCounts,
    SimulationDocument,
    SimulationSummary,
    autoscaled_docs,
    simulation_document,
)
from kplan.report.shrink import ShrinkDoc, shrink_doc
from kplan.scheduler.pod_status import PodStatus
from kplan.whatif.diff import (
    DELETED_KIND,
    EVICTED,
    KIND_ORDER,
    MOVED,
    NEW,
    NO_LONGER_PREEMPTED,
    NOW_SCHEDULABLE,
    NOW_UNSCHEDULABLE,
    PLACED_ELSEWHERE,
    PREEMPTED_KIND,
    REMOVED,
    Usage,
    UsageChange,
)
from kplan.whatif.plan import UntilFit, WhatIf
from kplan.whatif.shrink import ShrinkResult


def _pct(used: int, total: int) -> int | None:
    return used * 100 // total if total > 0 else None


@dataclass(frozen=True, kw_only=True)
class CpuShare:
    """Requested cpu against allocatable cpu (millicores; whole percent, null when none is allocatable)."""

    requested: Annotated[int, Quantity("cpu")]
    allocatable: Annotated[int, Quantity("cpu")]
    percent: int | None


@dataclass(frozen=True, kw_only=True)
class MemoryShare:
    """Requested memory against allocatable memory (bytes; whole percent)."""

    requested: Annotated[int, Quantity("memory")]
    allocatable: Annotated[int, Quantity("memory")]
    percent: int | None


@dataclass(frozen=True, kw_only=True)
class CountShare:
    """Pods on the nodes against the pods they allow."""

    requested: int
    allocatable: int
    percent: int | None


@dataclass(frozen=True, kw_only=True)
class UsageDoc:
    """Requests against allocatable of a node, a zone or the whole cluster."""

    cpu: CpuShare
    memory: MemoryShare
    pods: CountShare


@dataclass(frozen=True, kw_only=True)
class NodeUsageChange:
    """A node's use before and after (null where the node does not exist)."""

    name: str
    zone: str
    before: UsageDoc | None
    after: UsageDoc | None


@dataclass(frozen=True, kw_only=True)
class ZoneUsageChange:
    zone: str
    before: UsageDoc | None
    after: UsageDoc | None


@dataclass(frozen=True, kw_only=True)
class TotalUsage:
    before: UsageDoc | None
    after: UsageDoc | None


@dataclass(frozen=True, kw_only=True)
class Utilization:
    nodes: tuple[NodeUsageChange, ...]
    zones: tuple[ZoneUsageChange, ...]
    total: TotalUsage


@dataclass(frozen=True, kw_only=True)
class WhatIfSummary:
    before: RunCounts
    after: RunCounts
    #: pods whose (status, node) differs, and how many of them by kind of change
    changed: int
    moved: int
    evicted: int
    now_schedulable: int
    now_unschedulable: int
    preempted: int
    no_longer_preempted: int
    deleted: int
    new: int
    removed: int
    #: pending pods both runs place, on other nodes (a different plan, not a move)
    placed_elsewhere: int


@dataclass(frozen=True, kw_only=True)
class AffectedPod(PodKey):
    """A running pod a modification touched, and what became of it."""

    node: str
    #: replaced (a pending replacement was created), deleted, or kept
    fate: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class PodState:
    #: a pod status, Running, or Absent
    status: str
    node: str | None


@dataclass(frozen=True, kw_only=True)
class PodChange(PodKey):
    """A pod whose status or node differs between the runs."""

    change: str = member(enum=KIND_ORDER)
    before: PodState
    after: PodState


@dataclass(frozen=True, kw_only=True)
class Probe:
    count: int
    #: every pending pod that can fit on such nodes is scheduled
    fits: bool
    #: pending pods scheduled with this many nodes
    placed: int | None = member(omit=is_none, default=None)


@dataclass(frozen=True, kw_only=True)
class NeverFitPod(PodKey):
    """A pending pod that no number of nodes like the template places: the first filter (in
    filter order) that rejects it on a fresh, empty node like the template, as the scheduler
    words it."""

    plugin: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class UntilFitDoc:
    """For one template: the smallest number of nodes like it that places as many pending pods
    as any number tried (null: no number places one more); ``allFit`` when that is every
    pending pod. ``placed`` lists the pods that fit with those nodes and not without,
    ``neverFit`` the pods no number of them places, with the filter that rejects them, and
    ``stillPending`` the pods that fit on an empty such node yet stay pending (more nodes
    placed no more pods, or the limit was reached)."""

    template: str
    count: int | None
    reason: str | None
    lower_bound: int | None
    probes: tuple[Probe, ...]
    all_fit: bool = False
    placed: tuple[PodKey, ...] = ()
    never_fit: tuple[NeverFitPod, ...] = ()
    still_pending: tuple[PodKey, ...] = ()


@dataclass(frozen=True, kw_only=True)
class DaemonPod(PodKey):
    """A pod a DaemonSet creates for an added node, scheduled before the pending pods."""

    daemon_set: str
    #: Scheduled, Unschedulable (it stays pending, as it would), or Preempted by a pending pod
    status: str
    requests: Resources
    message: str | None


@dataclass(frozen=True, kw_only=True)
class AddedNode:
    """A node the changes added, with the DaemonSet pods started on it before any pending pod: its
    overhead, the requests of those that were scheduled."""

    name: str
    overhead: Resources
    daemon_pods: tuple[DaemonPod, ...]


@dataclass(frozen=True, kw_only=True)
class WhatIfDocument:
    """The result of ``kplan whatif``: the runs before and after the changes, and what differs."""

    api_version: ApiVersion = API_VERSION
    kind: Literal["WhatIfResult"] = "WhatIfResult"
    #: the release modelled
    release: ReleaseInfo | None = member(omit=is_none, default=None)
    modifications: tuple[str, ...]
    pods_affected: tuple[AffectedPod, ...]
    summary: WhatIfSummary
    changes: tuple[PodChange, ...]
    utilization: Utilization
    until_fit: UntilFitDoc | None
    #: one answer per --until-fit template, in the order given (``untilFit`` is the first; the
    #: run ``after`` is its answer's)
    until_fits: tuple[UntilFitDoc, ...] = member(omit=is_empty, default=())
    #: with --shrink: the nodes that can go (``after`` is the cluster without them)
    shrink: ShrinkDoc | None = member(omit=is_none, default=None)
    #: with --shrink --autoscaler karpenter: what Karpenter's disruption does (``after`` is the
    #: cluster after its commands)
    consolidation: ConsolidationDoc | None = member(omit=is_none, default=None)
    #: the nodes the changes added and their DaemonSet pods (absent when no node was added)
    added_nodes: tuple[AddedNode, ...] = member(omit=is_empty, default=())
    #: what the run after the change could not model as the cluster would (a DaemonSet missing)
    notes: tuple[str, ...] = member(omit=is_empty, default=())
    #: with --hpa: the workloads the HorizontalPodAutoscalers scaled in the run after (absent otherwise)
    autoscaled: tuple[AutoscaledWorkload, ...] = member(omit=is_empty, default=())
    before: SimulationDocument
    after: SimulationDocument
    timing: dict[str, float] | None = member(omit=is_none, default=None)


def usage_doc(u: Usage | None) -> UsageDoc | None:
    if u is None:
        return None
    return UsageDoc(cpu=CpuShare(requested=u.cpu, allocatable=u.cpu_alloc, percent=_pct(u.cpu, u.cpu_alloc)),
                    memory=MemoryShare(requested=u.memory, allocatable=u.memory_alloc,
                                       percent=_pct(u.memory, u.memory_alloc)),
                    pods=CountShare(requested=u.pods, allocatable=u.pods_alloc, percent=_pct(u.pods, u.pods_alloc)))


def _counts(s: SimulationSummary) -> RunCounts:
    return RunCounts(nodes=s.nodes, pending=s.pending, scheduled=s.scheduled, unschedulable=s.unschedulable,
                     gated=s.gated, preempted=s.preempted)


def _node_change(c: UsageChange) -> NodeUsageChange:
    return NodeUsageChange(name=c.name, zone=c.zone, before=usage_doc(c.before), after=usage_doc(c.after))


def _zone_change(c: UsageChange) -> ZoneUsageChange:
    return ZoneUsageChange(zone=c.name, before=usage_doc(c.before), after=usage_doc(c.after))


def _pod_key(key: str) -> PodKey:
    namespace, _, name = key.partition("/")
    return PodKey(namespace=namespace, name=name)


def until_fit_doc(u: UntilFit) -> UntilFitDoc:
    return UntilFitDoc(template=u.template, count=u.count, reason=u.reason or None, lower_bound=u.lower_bound,
                       probes=tuple(Probe(count=k, fits=v, placed=u.placed_at.get(k)) for k, v in u.probes.items()),
                       all_fit=u.all_fit, placed=tuple(_pod_key(k) for k in u.placed),
                       never_fit=tuple(NeverFitPod(namespace=_pod_key(n.pod).namespace, name=_pod_key(n.pod).name,
                                                   plugin=n.status.plugin, reason=n.status.message) for n in u.never),
                       still_pending=tuple(_pod_key(k) for k in u.still_pending))


def added_nodes(w: WhatIf) -> tuple[AddedNode, ...]:
    """The added nodes, each with its DaemonSet pods (in the order they were created)."""
    applied = w.after.applied
    if applied is None or not applied.added_nodes:
        return ()
    pods: dict[str, list[DaemonPod]] = {name: [] for name in applied.added_nodes}
    overhead: dict[str, dict[str, int]] = {name: {} for name in applied.added_nodes}
    for o in w.after.result.overhead:
        node = applied.daemon_pods.get(o.pod.uid)
        if node not in pods:
            continue
        ref = o.pod.controller()
        pods[node].append(DaemonPod(namespace=o.pod.namespace, name=o.pod.name,
                                    daemon_set=f"{o.pod.namespace}/{ref.name if ref else ''}", status=o.status.value,
                                    requests=dict(o.pod.requests), message=o.message))
        if o.status == PodStatus.SCHEDULED:
            for r, q in o.pod.requests.items():
                overhead[node][r] = overhead[node].get(r, 0) + q
    return tuple(AddedNode(name=n, overhead=overhead[n], daemon_pods=tuple(pods[n])) for n in applied.added_nodes)


def whatif_document(w: WhatIf, timing: dict[str, float] | None = None, shrink: ShrinkResult | None = None,
                    consolidation: ConsolidationResult | None = None) -> WhatIfDocument:
    applied = w.after.applied
    d = w.diff
    before = simulation_document(w.before.result, autoscaling=w.before.autoscaling)
    after = simulation_document(w.after.result, autoscaling=w.after.autoscaling)
    untils = tuple(until_fit_doc(u) for u in w.until_fits or ([w.until_fit] if w.until_fit else []))
    return WhatIfDocument(
        modifications=tuple(applied.changes if applied else ()),
        pods_affected=tuple(AffectedPod(namespace=f.pod.namespace, name=f.pod.name, node=f.node, fate=f.fate,
                                        reason=f.reason) for f in (applied.pods if applied else [])),
        summary=WhatIfSummary(
            before=_counts(before.summary), after=_counts(after.summary), changed=len(d.changes),
            moved=d.count(MOVED), evicted=d.count(EVICTED), now_schedulable=d.count(NOW_SCHEDULABLE),
            now_unschedulable=d.count(NOW_UNSCHEDULABLE), preempted=d.count(PREEMPTED_KIND),
            no_longer_preempted=d.count(NO_LONGER_PREEMPTED), deleted=d.count(DELETED_KIND), new=d.count(NEW),
            removed=d.count(REMOVED), placed_elsewhere=d.count(PLACED_ELSEWHERE)),
        changes=tuple(PodChange(namespace=c.namespace, name=c.name, change=c.kind,
                                before=PodState(status=c.before.status.value, node=c.before.node),
                                after=PodState(status=c.after.status.value, node=c.after.node)) for c in d.changes),
        utilization=Utilization(nodes=tuple(_node_change(c) for c in d.utilisation.nodes),
                                zones=tuple(_zone_change(c) for c in d.utilisation.zones),
                                total=TotalUsage(before=usage_doc(d.utilisation.total_before),
                                                 after=usage_doc(d.utilisation.total_after))),
        until_fit=untils[0] if untils else None,
        until_fits=untils,
        shrink=shrink_doc(shrink, tuple(shrink.base.result.snapshot.table.names)) if shrink is not None else None,
        consolidation=consolidation_doc(consolidation) if consolidation is not None else None,
        added_nodes=added_nodes(w),
        notes=tuple(applied.notes if applied else ()),
        autoscaled=autoscaled_docs(applied.autoscaled if applied else ()),
        before=before,
        after=after,
        timing=timing,
    )
