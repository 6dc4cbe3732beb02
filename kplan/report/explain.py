"""The versioned PodExplanation document (apiVersion kplan.dev/v1alpha1) of ``kplan explain pod``.

Fields may be added; none are renamed. Nodes are ranked (the chosen node, the other feasible
nodes by total score, then the rejected nodes that are closest to fitting); only the first
``top`` are listed unless ``all_nodes``, while ``reasons`` always counts every node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from kplan.cluster.storage import StorageState, default_class
from kplan.framework.preemption import PreemptionOutcome
from kplan.model.objects import Pod
from kplan.model.quantity import format_bytes
from kplan.model.storage import (
    ANN_DEFAULT_CLASS,
    IMMEDIATE,
    NO_PROVISIONER,
    PersistentVolumeClaim,
    StorageClass,
)
from kplan.plugins.dra.diagnose import ClaimProblem
from kplan.plugins.volumebinding import (
    ERR_BIND_CONFLICT,
    ERR_NODE_CONFLICT,
    ERR_NOT_ENOUGH_SPACE,
    UNBOUND_IMMEDIATE,
)
from kplan.plugins.volumebinding import NAME as VOLUME_BINDING
from kplan.report.codec import is_empty, is_none, member
from kplan.report.document import API_VERSION, ApiVersion, PodKey, PodRef, ReleaseInfo, Resources
from kplan.scheduler.explain import Explanation, NodeExplanation
from kplan.scheduler.pod_status import PodStatus

DEFAULT_TOP = 10


@dataclass(frozen=True, kw_only=True)
class ExplainedPod(PodRef):
    priority_class_name: str | None
    preemption_policy: str
    scheduler_name: str


@dataclass(frozen=True, kw_only=True)
class QueueDoc:
    """Where the pod stood in the queue, and which of its attempts is explained."""

    position: int
    pending: int
    attempts: int
    explained_attempt: int | None


@dataclass(frozen=True, kw_only=True)
class DecisionDoc:
    chosen: str | None
    scored: bool
    scores_computed_by_kplan: bool
    nominated_fast_path: bool
    feasible_nodes: int
    ties: tuple[str, ...]
    tie_break: str | None


@dataclass(frozen=True, kw_only=True)
class FilterDoc:
    """One filter plugin's verdict on a node (its status code and reasons)."""

    plugin: str
    code: str
    reasons: tuple[str, ...]
    #: the status kube-scheduler recorded for the node (its first failing plugin)
    first_failure: bool = member(omit=is_empty, default=False)
    #: the plugin's own account of its rejection
    detail: str = member(omit=is_empty, default="")

    @property
    def failing(self) -> bool:
        return self.code not in ("Success", "Skip")


@dataclass(frozen=True, kw_only=True)
class ClaimProblemDoc:
    """kplan's own account of a DynamicResources rejection: which claim and request, and why."""

    claim: str
    resource_claim: str
    request: str | None
    kind: str
    message: str


@dataclass(frozen=True, kw_only=True)
class ScoreDoc:
    raw: int
    normalized: int
    weighted: int
    #: the plugin's own account of its score (kplan's ScoreExplainer plugins)
    explanation: str = member(omit=is_empty, default="")


@dataclass(frozen=True, kw_only=True)
class NodeDoc:
    """What the filters (and the scores, on feasible nodes) said of one node."""

    name: str
    feasible: bool
    examined: bool
    filters: tuple[FilterDoc, ...]
    scores: dict[str, ScoreDoc] | None
    total: int | None
    #: why kube-scheduler did not look at the node
    not_examined: str = member(omit=is_empty, default="")
    claim_problems: tuple[ClaimProblemDoc, ...] = member(omit=is_empty, default=())


@dataclass(frozen=True, kw_only=True)
class ReasonCount:
    """Nodes rejecting for (plugin, reason), and on how many of them it is the first failure."""

    plugin: str
    reason: str
    nodes: int
    first_failure_nodes: int


@dataclass(frozen=True, kw_only=True)
class FailedNode:
    node: str
    code: str
    reasons: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class CandidateDoc:
    node: str
    victims: tuple[PodRef, ...]
    pdb_violations: int


@dataclass(frozen=True, kw_only=True)
class FailedReason:
    """Nodes where removing lower-priority pods does not help, grouped by status."""

    code: str
    reasons: tuple[str, ...]
    nodes: int
    examples: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class PreemptionDoc:
    """DefaultPreemption's dry run at an attempt."""

    message: str
    potential_nodes: int
    candidates_total: int
    candidates: tuple[CandidateDoc, ...]
    failed_nodes_total: int
    failed_nodes: tuple[FailedNode, ...]
    failed_reasons: tuple[FailedReason, ...]
    nominated_node: str | None
    victims: tuple[PodRef, ...]


@dataclass(frozen=True, kw_only=True)
class EarlierPreemption:
    """The preemption of an earlier attempt that nominated the pod."""

    attempt: int
    preemption: PreemptionDoc = member(inline=True)


@dataclass(frozen=True, kw_only=True)
class ExplainEviction(PodKey):
    node: str
    priority: int


@dataclass(frozen=True, kw_only=True)
class AttemptDoc:
    attempt: int
    node: str | None
    message: str | None
    nominated_node: str | None


@dataclass(frozen=True, kw_only=True)
class PodChangeDoc:
    """A change to the pod, and the nodes it opens."""

    kind: str
    change: str
    opens_nodes: int
    nodes: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class NearestNodeDoc:
    """A rejected node close to fitting: what it lacks, and whether the pod fits with that."""

    name: str
    #: what it lacks in words: the resources first (as ``lacksResources`` has them), then pod slots,
    #: tolerations, labels, cordon
    lacks: tuple[str, ...]
    fits_with_changes: bool
    still_rejected_by: tuple[str, ...]
    lacks_resources: Resources


@dataclass(frozen=True, kw_only=True)
class MoreNodesDoc:
    """How many more nodes like ``template`` make the pod fit (whole simulations); null: none found."""

    template: str | None
    count: int | None
    reason: str


@dataclass(frozen=True, kw_only=True)
class ResourceFact:
    """What the pod asks for of the resources it is short of, and what the largest node offers."""

    requests: Resources
    largest_node: str
    #: allowed: the largest of the nodes only NodeResourcesFit rejects; all: of every node
    scope: str = member(enum=("allowed", "all"))
    nodes: int
    allocatable: Resources
    big_enough: bool
    #: it lacks free room, not only allocatable; otherwise other filters are what reject it
    short_of_room: bool


@dataclass(frozen=True, kw_only=True)
class StorageFact:
    """Why one of the pod's volume claims stops it, and the fix."""

    claim: str
    storage_class: str | None
    problem: str
    fix: str


@dataclass(frozen=True, kw_only=True)
class ClaimDoc:
    name: str
    claim: str
    template: str | None
    allocated: bool
    requests: tuple[str, ...]
    constraints: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ClaimsDoc:
    """The pod's resource claims and what would give them devices (kplan's own account)."""

    claims: tuple[ClaimDoc, ...]
    nodes_with_devices: tuple[str, ...]
    remedy: str | None


@dataclass(frozen=True, kw_only=True)
class ExplanationDocument:
    """The result of ``kplan explain pod``: one pending pod's attempt, node by node."""

    api_version: ApiVersion = API_VERSION
    kind: Literal["PodExplanation"] = "PodExplanation"
    #: the release modelled
    release: ReleaseInfo | None = member(omit=is_none, default=None)
    pod: ExplainedPod
    queue: QueueDoc
    status: PodStatus
    node: str | None
    message: str | None
    nominated_node: str | None
    decision: DecisionDoc
    nodes_total: int
    nodes_shown: int
    nodes: tuple[NodeDoc, ...]
    reasons: tuple[ReasonCount, ...]
    preemption: PreemptionDoc | None
    earlier_preemption: EarlierPreemption | None
    evictions: tuple[ExplainEviction, ...]
    history: tuple[AttemptDoc, ...]
    remediation: tuple[PodChangeDoc, ...]
    nearest_nodes: tuple[NearestNodeDoc, ...]
    more_nodes: MoreNodesDoc | None
    resources: ResourceFact | None
    storage: tuple[StorageFact, ...]
    resource_claims: ClaimsDoc | None
    #: why PreEnqueue keeps the pod out of the queue when kube-scheduler records no reason (kplan's words)
    held_back: tuple[str, ...]


def pod_ref(p: Pod) -> PodRef:
    return PodRef(namespace=p.namespace, name=p.name, priority=p.priority)


def node_doc(ne: NodeExplanation, claim_problems: Mapping[str, list[ClaimProblem]] | None = None) -> NodeDoc:
    filters = tuple(FilterDoc(plugin=f.plugin, code=f.code.upstream, reasons=tuple(f.reasons),
                              first_failure=bool(f.upstream), detail=f.detail or "") for f in ne.filters)
    problems = (claim_problems or {}).get(ne.name) or []
    scores = None
    if ne.scores is not None:
        scores = {p: ScoreDoc(raw=s.raw, normalized=s.normalized, weighted=s.weighted, explanation=s.note or "")
                  for p, s in ne.scores.items()}
    return NodeDoc(name=ne.name, feasible=ne.feasible, examined=ne.examined, filters=filters, scores=scores,
                   total=ne.total, not_examined=ne.not_examined or "",
                   claim_problems=tuple(ClaimProblemDoc(claim=p.claim, resource_claim=p.claim_key,
                                                        request=p.request or None, kind=p.kind, message=p.text)
                                        for p in problems))


def reason_counts(nodes: list[NodeExplanation], plugin_order: list[str]) -> tuple[ReasonCount, ...]:
    """(plugin, reason) → nodes rejecting for it (any plugin) and nodes where it is the first failure."""
    counts: dict[tuple[str, str], list[int]] = {}
    for ne in nodes:
        for f in ne.failing:
            for r in f.reasons or ("",):
                c = counts.setdefault((f.plugin, r), [0, 0])
                c[0] += 1
                if f.upstream:
                    c[1] += 1
    order = {p: i for i, p in enumerate(plugin_order)}
    items = sorted(counts.items(), key=lambda kv: (-kv[1][0], order.get(kv[0][0], -1), kv[0][1]))
    return tuple(ReasonCount(plugin=p, reason=r, nodes=c[0], first_failure_nodes=c[1]) for (p, r), c in items)


def preemption_doc(p: PreemptionOutcome, *, all_nodes: bool = False, top: int = DEFAULT_TOP) -> PreemptionDoc:
    """The preemption analysis; nodes where it failed are grouped by reason (and listed only up
    to ``top`` unless ``all_nodes``)."""
    failed = [FailedNode(node=n, code=s.code.upstream, reasons=tuple(s.reasons)) for n, s in p.node_statuses.items()]
    # the chosen candidate first, then the others in the order the dry run found them
    ordered = sorted(p.candidates, key=lambda c: c.node != p.nominated_node)
    candidates = [CandidateDoc(node=c.node, victims=tuple(pod_ref(v) for v in c.victims),
                               pdb_violations=c.pdb_violations) for c in ordered]
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for n, s in p.node_statuses.items():
        groups.setdefault((s.code.upstream, s.reasons), []).append(n)
    return PreemptionDoc(
        message=p.status.message,
        potential_nodes=len(p.potential_rows),
        candidates_total=len(candidates),
        candidates=tuple(candidates if all_nodes else candidates[:top]),
        failed_nodes_total=len(failed),
        failed_nodes=tuple(failed if all_nodes else failed[:top]),
        failed_reasons=tuple(FailedReason(code=code, reasons=tuple(reasons), nodes=len(names),
                                          examples=tuple(names[:3]))
                             for (code, reasons), names in sorted(groups.items(), key=lambda kv: -len(kv[1]))),
        nominated_node=p.nominated_node or None,
        victims=tuple(pod_ref(v) for v in p.victims),
    )


def explain_document(ex: Explanation, *, all_nodes: bool = False, top: int = DEFAULT_TOP, tie_break: str = "random",
                     more_nodes: MoreNodesDoc | None = None,
                     allocatable: Mapping[str, Mapping[str, int]] | None = None,
                     storage: StorageState | None = None, held_back: Sequence[str] = ()) -> ExplanationDocument:
    """``held_back``: why PreEnqueue keeps the pod out of the queue when kube-scheduler records no
    reason for it (a ResourceClaim or template that does not exist; kplan's own words)."""
    pod, o = ex.pod, ex.outcome
    att = ex.attempt
    shown = ex.nodes if all_nodes else ex.nodes[:top]
    r = att.result if att is not None else None
    earlier = None
    if ex.earlier_preemption is not None:
        number, outcome = ex.earlier_preemption
        earlier = EarlierPreemption(attempt=number, preemption=preemption_doc(outcome, all_nodes=all_nodes, top=top))
    rem = ex.remedy
    remedies = rem is not None and o.status != PodStatus.SCHEDULED
    return ExplanationDocument(
        pod=ExplainedPod(namespace=pod.namespace, name=pod.name, priority=pod.priority,
                         priority_class_name=pod.priority_class_name or None, preemption_policy=pod.preemption_policy,
                         scheduler_name=pod.scheduler_name),
        queue=QueueDoc(position=ex.position, pending=ex.pending, attempts=o.attempts,
                       explained_attempt=att.number if att is not None else None),
        status=o.status,
        node=o.node,
        message=o.message,
        nominated_node=o.nominated_node,
        decision=DecisionDoc(
            chosen=ex.chosen,
            scored=ex.scored,
            scores_computed_by_kplan=bool(att is not None and att.info_scores is not None),
            nominated_fast_path=bool(r and r.nominated_fast_path),
            feasible_nodes=sum(1 for n in ex.nodes if n.feasible),
            ties=tuple(ex.ties),
            tie_break=tie_break if ex.ties else None,
        ),
        nodes_total=len(ex.nodes),
        nodes_shown=len(shown),
        nodes=tuple(node_doc(n, att.devices.problems if att is not None and att.devices is not None else None)
                    for n in shown),
        reasons=reason_counts(ex.nodes, att.filter_names if att is not None else []),
        preemption=preemption_doc(ex.preemption, all_nodes=all_nodes, top=top) if ex.preemption is not None else None,
        earlier_preemption=earlier,
        evictions=tuple(ExplainEviction(namespace=e.pod.namespace, name=e.pod.name, node=e.node,
                                        priority=e.pod.priority) for e in ex.evictions),
        history=tuple(AttemptDoc(attempt=n, node=node, message=msg, nominated_node=nom)
                      for n, node, msg, nom in ex.history),
        remediation=tuple(PodChangeDoc(kind=c.kind, change=c.change, opens_nodes=c.opens, nodes=tuple(c.nodes))
                          for c in rem.pod_changes) if remedies and rem is not None else (),
        nearest_nodes=tuple(NearestNodeDoc(name=n.name, lacks=tuple(n.lacks), fits_with_changes=n.fits_with_changes,
                                           still_rejected_by=tuple(n.still),
                                           lacks_resources=dict(n.resources)) for n in rem.nearest)
        if remedies and rem is not None else (),
        more_nodes=more_nodes,
        resources=resource_fact(ex, allocatable) if allocatable is not None else None,
        storage=storage_facts(ex, storage),
        resource_claims=claims_doc(ex),
        held_back=tuple(held_back) if o.attempts == 0 and o.status == PodStatus.UNSCHEDULABLE else (),
    )


def resource_fact(ex: Explanation, allocatable: Mapping[str, Mapping[str, int]]) -> ResourceFact | None:
    """The plain fact behind Insufficient-resource rejections: what the pod asks for and what the
    largest node offers that only NodeResourcesFit rejects ("allowed": its other filters pass), or
    the largest of all nodes when every node also fails another filter."""
    short = sorted({reason[len("Insufficient "):] for n in ex.nodes for f in n.failing if f.plugin == "NodeResourcesFit"
                    for reason in f.reasons if reason.startswith("Insufficient ")})
    short = [r for r in short if ex.pod.requests.get(r, 0) > 0]
    if not short or ex.outcome.status == PodStatus.SCHEDULED:
        return None
    allowed = [n for n in ex.nodes if not n.feasible and n.failing
               and {f.plugin for f in n.failing} <= {"NodeResourcesFit"} and n.name in allocatable]
    scope = "allowed" if allowed else "all"
    pool = allowed or [n for n in ex.nodes if n.name in allocatable]
    if not pool:
        return None
    want = {r: ex.pod.requests[r] for r in short}

    def room(n: NodeExplanation) -> tuple[Fraction, str]:
        have = allocatable[n.name]
        return min(Fraction(have.get(r, 0), want[r]) for r in short), n.name

    best = max(pool, key=room)
    have = allocatable[best.name]
    return ResourceFact(requests=want, largest_node=best.name, scope=scope, nodes=len(pool),
                        allocatable={r: have.get(r, 0) for r in short},
                        big_enough=all(have.get(r, 0) >= want[r] for r in short),
                        short_of_room=any(f.plugin == "NodeResourcesFit" for f in best.failing))


_DEFAULT_ANNOTATION = f'{ANN_DEFAULT_CLASS}: "true"'


def storage_facts(ex: Explanation, storage: StorageState | None) -> tuple[StorageFact, ...]:
    """The plain facts behind VolumeBinding's rejections, one per claim of the pod that is the
    cause: the claim, its StorageClass (or that it names none and none is default), what stops
    it and the fix. Empty when the pod is scheduled or VolumeBinding rejected no node."""
    if storage is None or ex.outcome.status == "Scheduled":
        return ()
    reasons = {r for n in ex.nodes for f in n.failing if f.plugin == VOLUME_BINDING for r in f.reasons}
    message = ex.outcome.message or ""
    if UNBOUND_IMMEDIATE in message:
        reasons.add(UNBOUND_IMMEDIATE)
    if not reasons and "persistentvolumeclaim" not in message:
        return ()
    pod = ex.pod
    classes = sorted(storage.classes)
    default = default_class(storage.classes.values())
    out: list[StorageFact] = []
    for v in pod.volumes:
        if not v.claim_name:
            continue
        key = f"{pod.namespace}/{v.claim_name}"
        claim = storage.pvc(pod.namespace, v.claim_name)
        if claim is None:
            out.append(StorageFact(claim=key, storage_class=None, problem="the PersistentVolumeClaim does not exist",
                                   fix="create it (a StatefulSet creates its volumeClaimTemplates' claims itself; "
                                       "a bare pod's claims must exist before it is scheduled)"))
            continue
        if claim.volume_name:
            fact = _bound_claim_fact(key, claim, storage, reasons)
            if fact is not None:
                out.append(fact)
            continue
        out.append(_unbound_claim_fact(key, claim, storage, classes, default, reasons))
    return tuple(out)


def _bound_claim_fact(key: str, claim: PersistentVolumeClaim, storage: StorageState,
                      reasons: set[str]) -> StorageFact | None:
    pv = storage.pv(claim.volume_name)
    if pv is None:
        return StorageFact(claim=key, storage_class=claim.class_name or None,
                           problem=f"it is bound to PersistentVolume {claim.volume_name}, which does not exist",
                           fix="restore that volume, or delete the claim so that a new one is made and bound")
    if ERR_NODE_CONFLICT in reasons and pv.node_affinity is not None:
        terms = "; or ".join(", ".join(f"{r.key} {r.operator} {','.join(r.values)}".rstrip() for r in t.match_expressions)
                             for t in pv.node_affinity.terms) or "no node"
        return StorageFact(claim=key, storage_class=pv.class_name or None,
                           problem=f"it is bound to PersistentVolume {pv.name}, whose node affinity admits only "
                                   f"nodes with {terms}",
                           fix="make room on a node the volume admits (or add one there): the pod can run nowhere else")
    return None


def _unbound_claim_fact(key: str, claim: PersistentVolumeClaim, storage: StorageState, classes: list[str],
                        default: StorageClass | None, reasons: set[str]) -> StorageFact:
    name = claim.class_name
    size = f" of {format_bytes(claim.request)}" if claim.request else ""
    some = ", ".join(classes)
    if not name:
        if claim.storage_class_name == "":
            problem = ('it asks for no StorageClass (storageClassName: ""), so only an existing PersistentVolume '
                       f"without a class can bind it, and none matches its request{size}")
        elif not classes:
            problem = ("it names no StorageClass and the cluster has none, so only an existing PersistentVolume "
                       f"without a class can bind it, and none matches its request{size}")
        else:
            problem = (f"it names no StorageClass and none of the cluster's ({some}) is the default "
                       f"(annotated {_DEFAULT_ANNOTATION}), so only an existing PersistentVolume without a class "
                       f"can bind it, and none matches its request{size}")
        fix = (f"set storageClassName (in a StatefulSet: in its volumeClaimTemplates) to one of {some}, or mark one "
               "of them default" if classes else
               "create a StorageClass with a provisioner and mark it default, or create a matching PersistentVolume")
        return StorageFact(claim=key, storage_class=None, problem=problem, fix=fix)
    sc = storage.storage_class(name)
    if sc is None:
        return StorageFact(claim=key, storage_class=name,
                           problem=f"its StorageClass {name} does not exist",
                           fix=f"create StorageClass {name}" + (f", or name one of {some}" if classes else ""))
    can_provision = bool(sc.provisioner) and sc.provisioner != NO_PROVISIONER
    why = (f"{name} cannot provision volumes (provisioner {sc.provisioner or 'none'})" if not can_provision else
           f"{name} provisions with {sc.provisioner}")
    if sc.binding_mode == IMMEDIATE:
        problem = f"StorageClass {name} binds Immediately; no PersistentVolume{size} matches the claim and {why}"
        fix = (f"create a matching PersistentVolume of class {name}, or use a class that provisions" if not can_provision
               else f"check that {sc.provisioner} can create the volume")
    elif ERR_NOT_ENOUGH_SPACE in reasons and can_provision:
        problem = (f"{sc.provisioner} reports (CSIStorageCapacity) less free capacity than the claim's"
                   f"{size or ' request'} in the topology of the nodes that pass the other filters")
        fix = "add storage capacity there, or nodes in a topology that has it"
    elif ERR_BIND_CONFLICT in reasons:
        problem = f"no PersistentVolume of class {name}{size} that the nodes can reach matches the claim, and {why}"
        fix = (f"create matching PersistentVolumes of class {name} on the nodes (a local volume serves one node), or "
               "use a class that provisions" if not can_provision else "check the class's allowedTopologies")
    else:
        return StorageFact(claim=key, storage_class=name, problem=f"it is not bound yet ({name}, {sc.binding_mode})",
                           fix="")
    return StorageFact(claim=key, storage_class=name, problem=problem, fix=fix)


def claims_doc(ex: Explanation) -> ClaimsDoc | None:
    """The pod's resource claims and what would give them devices (kplan's own account): the
    nodes an empty copy of which would have devices for every claim, the remedy in words. The
    per-node reasons are the DynamicResources filters' ``detail``."""
    att = ex.attempt
    facts = att.devices if att is not None else None
    if facts is None or ex.outcome.status == PodStatus.SCHEDULED:
        return None
    claims = tuple(ClaimDoc(name=c.name, claim=c.claim_key, template=c.template or None, allocated=c.allocated,
                            requests=tuple(c.requests), constraints=tuple(c.constraints)) for c in facts.claims)

    rejected = [n for n in ex.nodes for f in n.failing if f.plugin == "DynamicResources"]
    if facts.fresh_nodes:
        more = ", ".join(facts.fresh_nodes[1:4]) + (", …" if len(facts.fresh_nodes) > 4 else "")
        remedy = (f"add a node like {facts.fresh_nodes[0]}: its ResourceSlices, copied with every device free, "
                  "have devices for every claim" + (f" (so do {more})" if more else ""))
    elif not rejected:
        remedy = ""
    elif any(c.pinned for c in facts.claims):
        pinned = ", ".join(c.name for c in facts.claims if c.pinned)
        remedy = (f"no new node helps: claim {pinned} is allocated to devices that only the nodes its allocation "
                  "selects can reach")
    else:
        remedy = ("no node like any of the cluster's would do: none publishes ResourceSlices with devices for every "
                  "claim, even with all of them free; the pod needs nodes whose DRA drivers publish matching "
                  "devices, or claims that ask for less")
    return ClaimsDoc(claims=claims, nodes_with_devices=tuple(facts.fresh_nodes), remedy=remedy or None)
