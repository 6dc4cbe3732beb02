"""The versioned SimulationResult document (apiVersion kplan.dev/v1alpha1).

Fields may be added; none are renamed. ``pods`` lists every pending pod in the order the
scheduler first popped it (pods never popped, such as gated ones, follow in creation order).
Each node's ``percent`` holds requested / allocatable in whole percent (truncated; null when
nothing is allocatable) for each resource the node lists, and for pods; its ``pool`` is the value
of the first of POOL_LABELS the node has (null when none).

The document is a typed value (``SimulationDocument``) that the renderers read; ``codec.encode``
writes it and ``kplan/report/schema/`` holds its JSON Schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Final, Literal

from kplan.autoscaler.clusterautoscaler.orchestrator import ScaleUp
from kplan.cluster.node_table import NodeTable
from kplan.cluster.resources import CPU, MEMORY
from kplan.framework.diagnosis import FitError, fit_error_message
from kplan.framework.release import Release
from kplan.report.codec import Quantity, is_empty, is_none, member
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.simulate import SimulationResult
from kplan.whatif.autoscale import Autoscaling
from kplan.whatif.changes import ScaleWorkload

API_VERSION: Final = "kplan.dev/v1alpha1"
ApiVersion = Literal["kplan.dev/v1alpha1"]

#: amounts of resources by name: millicores for cpu, bytes for memory and storage, counts otherwise
#: (written as Kubernetes quantities: ``{"cpu": "3920m", "memory": "16Gi", "pods": "110"}``)
Resources = dict[str, Annotated[int, Quantity()]]


def _pct(used: int, total: int) -> int | None:
    """Whole percent, truncated; None when nothing is allocatable."""
    return used * 100 // total if total > 0 else None


def _percent(table: NodeTable, row: int, col: int) -> int | None:
    return _pct(int(table.requested[row, col]), int(table.alloc[row, col]))


#: labels that name a node's pool (group, node pool, agent pool), the first present wins; the
#: instance type groups the nodes of clusters that label none of them
POOL_LABELS = ("karpenter.sh/nodepool", "cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup",
               "kubernetes.azure.com/agentpool", "agentpool", "kops.k8s.io/instancegroup", "node-pool", "nodepool",
               "node.kubernetes.io/instance-type")


def node_pool(labels: Mapping[str, str]) -> str | None:
    return next((labels[k] for k in POOL_LABELS if labels.get(k)), None)


@dataclass(frozen=True, kw_only=True)
class ReleaseInfo:
    """The Kubernetes release a run modelled: its minor version, and the feature gates set away
    from that release's defaults (``--feature-gates``; empty: the defaults)."""

    version: str
    feature_gates: dict[str, bool]

    @classmethod
    def of(cls, release: Release) -> ReleaseInfo:
        changed = release.features.changed(release.gates)
        return cls(version=str(release.version),
                   feature_gates={g.value: on for g, on in sorted(changed.items())})

    @property
    def gates(self) -> str:
        """``default feature gates``, or the gates changed as --feature-gates writes them."""
        return ",".join(f"{g}={str(on).lower()}" for g, on in self.feature_gates.items()) or "default feature gates"

    @property
    def words(self) -> str:
        """``Kubernetes 1.34 (default feature gates)``."""
        return f"Kubernetes {self.version} ({self.gates})"


@dataclass(frozen=True, kw_only=True)
class PodKey:
    """A pod by namespace and name (the first members of every pod a document lists)."""

    namespace: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, kw_only=True)
class PodRef(PodKey):
    priority: int


@dataclass(frozen=True, kw_only=True)
class RunCounts:
    """How many pending pods ended scheduled, unschedulable, gated, on how many nodes."""

    nodes: int
    pending: int
    scheduled: int
    unschedulable: int
    gated: int
    #: pods preempted during the run (running or pending)
    preempted: int


@dataclass(frozen=True, kw_only=True)
class SimulationSummary(RunCounts):
    """How many pending pods ended in each status, on how many nodes."""

    not_created: int
    #: cluster pods of the replaced workloads that are gone (not kept with --keep-existing)
    replaced: int


@dataclass(frozen=True, kw_only=True)
class FitErrorParts:
    """kube-scheduler's FitError (the ``message`` of a pod no node fits) in parts: how many nodes
    there were, how many gave each reason, and what PreFilter and PostFilter said."""

    nodes: int
    #: how many nodes gave each reason, in the order the message lists them
    reasons: dict[str, int]
    #: PreFilter's rejection of every node, which the message prints instead of the reasons
    pre_filter: str | None = member(omit=is_none, default=None)
    #: PostFilter's answer (preemption's, DynamicResources'), which ends the message
    post_filter: str | None = member(omit=is_none, default=None)

    @classmethod
    def of(cls, fit: FitError) -> FitErrorParts:
        return cls(nodes=fit.num_all_nodes, reasons=dict(fit.reasons), pre_filter=fit.pre_filter_msg or None,
                   post_filter=fit.post_filter_msg or None)

    @property
    def short(self) -> str:
        """The message without PostFilter's answer: why no node fits."""
        return fit_error_message(self.nodes, self.pre_filter or "", tuple(self.reasons.items()), "")


@dataclass(frozen=True, kw_only=True)
class PendingPod(PodKey):
    """A pending pod at the end of the run: where it went, or kube-scheduler's message."""

    status: PodStatus
    node: str | None
    message: str | None
    attempts: int
    nominated_node: str | None
    priority: int
    #: the message in parts when it is a FitError
    fit_error: FitErrorParts | None = member(omit=is_none, default=None)
    #: with --autoscaler, for a pod still unschedulable that the autoscaler could not help: why,
    #: in the autoscaler's words (Karpenter's scheduling error)
    autoscaler: str | None = member(omit=is_none, default=None)

    @property
    def reason(self) -> str:
        """Why the pod does not run, short: a FitError without PostFilter's answer (preemption's
        or DynamicResources', which ``message`` has), another message whole."""
        if self.fit_error is not None:
            return self.fit_error.short
        return self.message or ""


@dataclass(frozen=True, kw_only=True)
class Eviction(PodKey):
    """A pod preempted during the run, and the pending pod that preempted it."""

    node: str
    preemptor: str


@dataclass(frozen=True, kw_only=True)
class ReplacedPod(PodKey):
    """A cluster pod of a workload the manifests replace: gone before scheduling, or still running
    next to the new pods with --keep-existing (``kept``)."""

    node: str | None
    workload: str
    kept: bool


@dataclass(frozen=True, kw_only=True)
class NodeUsage:
    """A node's requests against its allocatable at the end of the run."""

    name: str
    pool: str | None
    allocatable: Resources
    requested: Resources
    #: pods on the node
    pods: int
    #: requested / allocatable in whole percent per resource (and pods); null: nothing allocatable
    percent: dict[str, int | None]


@dataclass(frozen=True, kw_only=True)
class AutoscaledWorkload:
    """A workload whose HorizontalPodAutoscaler's bound set its replicas (--hpa)."""

    #: the autoscaler, namespace/name
    horizontal_pod_autoscaler: str
    bound: str = member(enum=("max", "min", "current"))
    #: where the count comes from: maxReplicas, minReplicas, status.currentReplicas, or the
    #: declared replicas when the autoscaler has no status
    field: str
    #: the target, "Deployment shop/web"
    workload: str
    #: the pods the workload had (its declared replicas, as the inputs hold them)
    replicas_before: int
    replicas: int


def autoscaled_docs(changes: Sequence[ScaleWorkload]) -> tuple[AutoscaledWorkload, ...]:
    return tuple(AutoscaledWorkload(horizontal_pod_autoscaler=c.autoscaler.hpa, bound=c.autoscaler.bound,
                                    field=c.autoscaler.field, workload=c.label, replicas_before=c.current,
                                    replicas=c.replicas)
                 for c in changes if c.autoscaler is not None)


@dataclass(frozen=True, kw_only=True)
class LaunchedNode:
    """A node the autoscaler launched (--autoscaler), as kube-scheduler then used it."""

    name: str
    #: the Karpenter NodePool it was launched from (Karpenter)
    node_pool: str | None = member(omit=is_none, default=None)
    #: the node group it was launched from (the cluster-autoscaler)
    node_group: str | None = member(omit=is_none, default=None)
    instance_type: str
    capacity_type: str = member(enum=("on-demand", "spot", "reserved"))
    zone: str
    #: the offering's price in US dollars per hour, as the instance-type catalog gives it
    price_per_hour: float
    #: the pending pods kube-scheduler placed on it
    pods: tuple[PodKey, ...]
    #: the pods its DaemonSets created there
    daemon_pods: tuple[PodKey, ...] = member(omit=is_empty, default=())
    #: the other instance types the launch could have chosen, in the autoscaler's order
    other_instance_types: tuple[str, ...]
    #: which time the autoscaler was asked (1: after kube-scheduler's first pass)
    round: int


@dataclass(frozen=True, kw_only=True)
class AutoscalingSummary:
    """What the node autoscaler (--autoscaler) did: how often it was asked, and what its new
    nodes cost (a month: 730 hours, as AWS prices one)."""

    autoscaler: str = member(enum=("karpenter", "cluster-autoscaler"))
    rounds: int
    #: it still launched nodes when kplan stopped asking (at 10 rounds): pods may remain pending
    #: that more rounds would place
    stopped_at_bound: bool
    nodes: int
    price_per_hour: float
    price_per_month: float
    #: the cluster-autoscaler: what each scale-up weighed and chose
    scale_ups: tuple[ScaleUpDecision, ...] = member(omit=is_empty, default=())


@dataclass(frozen=True, kw_only=True)
class ExpansionOption:
    """One node group's expansion option: the nodes its binpacking estimate needs and the pods they take."""

    node_group: str
    node_count: int
    pods_helped: int
    #: the first expander's score (least-waste: wasted CPU share + wasted memory share, lower is
    #: better; most-pods: pods; least-nodes: nodes; priority: the group's priority)
    score: float | None = member(omit=is_none, default=None)


@dataclass(frozen=True, kw_only=True)
class ScaleUpDecision:
    """One scale-up of the cluster-autoscaler: the options considered, the choice and why."""

    round: int
    #: node groups brought to their minSize, with the nodes added
    min_size_fill: tuple[NodeGroupCount, ...] = member(omit=is_empty, default=())
    options: tuple[ExpansionOption, ...] = member(omit=is_empty, default=())
    chosen: str | None = member(omit=is_none, default=None)
    node_count: int = 0
    #: the expander that decided, and any cap applied
    why: str = ""


@dataclass(frozen=True, kw_only=True)
class NodeGroupCount:
    node_group: str
    node_count: int


@dataclass(frozen=True, kw_only=True)
class SimulationDocument:
    """The result of ``kplan simulate``: every pending pod's outcome and the nodes' use."""

    api_version: ApiVersion = API_VERSION
    kind: Literal["SimulationResult"] = "SimulationResult"
    #: the release modelled (absent from the before and after of a WhatIfResult, which has its own)
    release: ReleaseInfo | None = member(omit=is_none, default=None)
    summary: SimulationSummary
    pods: tuple[PendingPod, ...]
    preempted: tuple[Eviction, ...]
    replaced: tuple[ReplacedPod, ...]
    nodes: tuple[NodeUsage, ...]
    #: with --hpa: the workloads the HorizontalPodAutoscalers scaled before the run (absent otherwise)
    autoscaled: tuple[AutoscaledWorkload, ...] = member(omit=is_empty, default=())
    #: with --autoscaler: what the node autoscaler did (absent otherwise)
    autoscaling: AutoscalingSummary | None = member(omit=is_none, default=None)
    #: with --autoscaler: the nodes it launched, by name (absent otherwise)
    launched: tuple[LaunchedNode, ...] = member(omit=is_empty, default=())
    #: wall-clock seconds of loading and scheduling (absent unless the command measured them)
    timing: dict[str, float] | None = member(omit=is_none, default=None)


def node_usage(table: NodeTable) -> tuple[NodeUsage, ...]:
    out = []
    for i, name in enumerate(table.names):
        alloc = {"cpu": int(table.alloc[i, CPU]), "memory": int(table.alloc[i, MEMORY])}
        req = {"cpu": int(table.requested[i, CPU]), "memory": int(table.requested[i, MEMORY])}
        for col, res in enumerate(table.res.names):
            if col in (CPU, MEMORY):
                continue
            a, r = int(table.alloc[i, col]), int(table.requested[i, col])
            if a or r:
                alloc[res] = a
                req[res] = r
        alloc["pods"] = int(table.allowed_pods[i])
        percent = {res: _percent(table, i, col) for col, res in enumerate(table.res.names) if res in alloc}
        percent["pods"] = _pct(int(table.pod_count[i]), int(table.allowed_pods[i]))
        out.append(NodeUsage(name=name, pool=node_pool(table.nodes[i].labels), allocatable=alloc, requested=req,
                             pods=int(table.pod_count[i]), percent=percent))
    return tuple(sorted(out, key=lambda n: n.name))


def _key(key: str) -> PodKey:
    namespace, _, name = key.partition("/")
    return PodKey(namespace=namespace, name=name)


def launched_nodes(result: SimulationResult, autoscaling: Autoscaling) -> tuple[LaunchedNode, ...]:
    on: dict[str, list[PodKey]] = {}
    for o in result.pods:
        if o.status == PodStatus.SCHEDULED and o.node is not None:
            on.setdefault(o.node, []).append(PodKey(namespace=o.pod.namespace, name=o.pod.name))
    return tuple(sorted((LaunchedNode(
        name=n.new.name, **_group_of(autoscaling.autoscaler, n.new.group), instance_type=n.new.instance_type, capacity_type=n.new.capacity_type,
        zone=n.new.zone, price_per_hour=n.new.price_per_hour, pods=tuple(on.get(n.new.name, ())),
        daemon_pods=tuple(_key(k) for k in n.daemon_pods), other_instance_types=n.new.other_instance_types,
        round=n.round) for n in autoscaling.launched), key=lambda n: n.name))


def _group_of(autoscaler: str, group: str) -> dict[str, str]:
    return {"node_group": group} if autoscaler == "cluster-autoscaler" else {"node_pool": group}


def _scale_up(round: int, d: ScaleUp) -> ScaleUpDecision:
    chosen = next((o for o in d.considered if o.node_group == d.chosen), None)
    if d.chosen is None:
        why = "no node group helps any pending pod" if not d.considered else "no option left by the expanders"
    else:
        n = len(d.considered)
        why = ("the only option" if n == 1 else f"{d.decided_by} chose it among {n} options")
        if chosen is not None and chosen.node_count != d.node_count and d.capped:
            why += f"; {d.capped}"
        if d.balanced and list(d.balanced) != [d.chosen]:
            why += "; shared with similar node groups: " + ", ".join(f"{g} +{n}" for g, n in d.balanced.items())
    return ScaleUpDecision(
        round=round, min_size_fill=tuple(NodeGroupCount(node_group=g, node_count=c) for g, c in d.min_size_fill.items()),
        options=tuple(ExpansionOption(node_group=o.node_group, node_count=o.node_count, pods_helped=len(o.pods),
                                      score=None if o.score is None else round_score(o.score))
                      for o in d.considered),
        chosen=d.chosen, node_count=d.node_count, why=why)


def round_score(x: float) -> float | None:
    return None if x != x or x in (float("inf"), float("-inf")) else round(x, 6)


def autoscaling_summary(autoscaling: Autoscaling) -> AutoscalingSummary:
    return AutoscalingSummary(autoscaler=autoscaling.autoscaler, rounds=autoscaling.rounds,
                              stopped_at_bound=autoscaling.stopped_at_bound, nodes=len(autoscaling.launched),
                              price_per_hour=round(autoscaling.price_per_hour, 6),
                              price_per_month=round(autoscaling.price_per_month, 4),
                              scale_ups=tuple(_scale_up(r, d) for r, d in autoscaling.decisions
                                              if isinstance(d, ScaleUp)))


def simulation_document(result: SimulationResult, timing: dict[str, float] | None = None,
                        autoscaling: Autoscaling | None = None) -> SimulationDocument:
    unhelped = autoscaling.unhelped if autoscaling is not None else {}
    counts = dict.fromkeys(PodStatus, 0)
    for o in result.pods:
        counts[o.status] += 1
    table = result.snapshot.table
    return SimulationDocument(
        summary=SimulationSummary(nodes=len(table), pending=len(result.pods), scheduled=counts[PodStatus.SCHEDULED],
                                  unschedulable=counts[PodStatus.UNSCHEDULABLE], gated=counts[PodStatus.GATED],
                                  preempted=len(result.preempted), not_created=counts[PodStatus.NOT_CREATED],
                                  replaced=sum(1 for r in result.replaced if not r.kept)),
        pods=tuple(PendingPod(namespace=o.pod.namespace, name=o.pod.name, status=o.status, node=o.node,
                              message=o.message, attempts=o.attempts, nominated_node=o.nominated_node,
                              priority=o.pod.priority,
                              fit_error=FitErrorParts.of(o.fit_error) if o.fit_error is not None else None,
                              autoscaler=unhelped.get(o.pod.key) if o.status == PodStatus.UNSCHEDULABLE else None)
                   for o in result.pods),
        preempted=tuple(Eviction(namespace=e.pod.namespace, name=e.pod.name, node=e.node, preemptor=e.preemptor.key)
                        for e in result.preempted),
        replaced=tuple(ReplacedPod(namespace=r.pod.namespace, name=r.pod.name, node=r.node or None,
                                   workload=r.workload, kept=r.kept) for r in result.replaced),
        nodes=node_usage(table),
        autoscaling=autoscaling_summary(autoscaling) if autoscaling is not None else None,
        launched=launched_nodes(result, autoscaling) if autoscaling is not None else (),
        timing=timing,
    )
