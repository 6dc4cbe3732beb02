"""The versioned PodExplanation document (apiVersion kplan.dev/v1alpha1) of ``kplan explain pod``.

Fields may be added; none are renamed. Nodes are ranked (the chosen node, the other feasible
nodes by total score, then the rejected nodes that are closest to fitting); only the first
``top`` are listed unless ``all_nodes``, while ``reasons`` always counts every node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from kplan.cluster.storage import StorageState, default_class
from kplan.framework.preemption import PreemptionOutcome
from kplan.model.objects import Pod
from kplan.model.quantity import format_bytes, format_resource
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
from kplan.report.document import API_VERSION
from kplan.scheduler.explain import Explanation, NodeExplanation
from kplan.scheduler.pod_status import PodStatus

DEFAULT_TOP = 10


def pod_ref(p: Pod) -> dict[str, Any]:
    return {"namespace": p.namespace, "name": p.name, "priority": p.priority}


def node_doc(ne: NodeExplanation, claim_problems: Mapping[str, list[ClaimProblem]] | None = None) -> dict[str, Any]:
    filters = []
    for f in ne.filters:
        d: dict[str, Any] = {"plugin": f.plugin, "code": f.code.upstream, "reasons": list(f.reasons)}
        if f.upstream:
            d["firstFailure"] = True
        if f.detail:
            d["detail"] = f.detail
        filters.append(d)
    out: dict[str, Any] = {"name": ne.name, "feasible": ne.feasible, "examined": ne.examined, "filters": filters,
                           "scores": None, "total": ne.total}
    if ne.not_examined:
        out["notExamined"] = ne.not_examined
    problems = (claim_problems or {}).get(ne.name)
    if problems:
        # kplan's own account of the DynamicResources rejection: which claim and request, and why
        out["claimProblems"] = [{"claim": p.claim, "resourceClaim": p.claim_key, "request": p.request or None,
                                 "kind": p.kind, "message": p.text} for p in problems]
    if ne.scores is not None:
        out["scores"] = {p: {"raw": s.raw, "normalized": s.normalized, "weighted": s.weighted}
                         | ({"explanation": s.note} if s.note else {})
                         for p, s in ne.scores.items()}
    return out


def reason_counts(nodes: list[NodeExplanation], plugin_order: list[str]) -> list[dict[str, Any]]:
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
    return [{"plugin": p, "reason": r, "nodes": c[0], "firstFailureNodes": c[1]} for (p, r), c in items]


def preemption_doc(p: PreemptionOutcome | None, *, all_nodes: bool = False, top: int = DEFAULT_TOP
                   ) -> dict[str, Any] | None:
    """The preemption analysis; nodes where it failed are grouped by reason (and listed only up
    to ``top`` unless ``all_nodes``)."""
    if p is None:
        return None
    failed = [{"node": n, "code": s.code.upstream, "reasons": list(s.reasons)} for n, s in p.node_statuses.items()]
    # the chosen candidate first, then the others in the order the dry run found them
    ordered = sorted(p.candidates, key=lambda c: c.node != p.nominated_node)
    candidates = [{"node": c.node, "victims": [pod_ref(v) for v in c.victims], "pdbViolations": c.pdb_violations}
                  for c in ordered]
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for n, s in p.node_statuses.items():
        groups.setdefault((s.code.upstream, s.reasons), []).append(n)
    return {
        "message": p.status.message,
        "potentialNodes": len(p.potential_rows),
        "candidatesTotal": len(candidates),
        "candidates": candidates if all_nodes else candidates[:top],
        "failedNodesTotal": len(failed),
        "failedNodes": failed if all_nodes else failed[:top],
        "failedReasons": [{"code": code, "reasons": list(reasons), "nodes": len(names), "examples": names[:3]}
                          for (code, reasons), names in sorted(groups.items(), key=lambda kv: -len(kv[1]))],
        "nominatedNode": p.nominated_node or None,
        "victims": [pod_ref(v) for v in p.victims],
    }


def explain_document(ex: Explanation, *, all_nodes: bool = False, top: int = DEFAULT_TOP, tie_break: str = "random",
                     more_nodes: dict[str, Any] | None = None,
                     allocatable: Mapping[str, Mapping[str, int]] | None = None,
                     storage: StorageState | None = None, held_back: Sequence[str] = ()) -> dict[str, Any]:
    """``held_back``: why PreEnqueue keeps the pod out of the queue when kube-scheduler records no
    reason for it (a ResourceClaim or template that does not exist; kplan's own words)."""
    pod, o = ex.pod, ex.outcome
    att = ex.attempt
    shown = ex.nodes if all_nodes else ex.nodes[:top]
    r = att.result if att is not None else None
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "PodExplanation",
        "pod": {"namespace": pod.namespace, "name": pod.name, "priority": pod.priority,
                "priorityClassName": pod.priority_class_name or None, "preemptionPolicy": pod.preemption_policy,
                "schedulerName": pod.scheduler_name},
        "queue": {"position": ex.position, "pending": ex.pending, "attempts": o.attempts,
                  "explainedAttempt": att.number if att is not None else None},
        "status": o.status.value,
        "node": o.node,
        "message": o.message,
        "nominatedNode": o.nominated_node,
        "decision": {
            "chosen": ex.chosen,
            "scored": ex.scored,
            "scoresComputedByKplan": bool(att is not None and att.info_scores is not None),
            "nominatedFastPath": bool(r and r.nominated_fast_path),
            "feasibleNodes": sum(1 for n in ex.nodes if n.feasible),
            "ties": ex.ties,
            "tieBreak": tie_break if ex.ties else None,
        },
        "nodesTotal": len(ex.nodes),
        "nodesShown": len(shown),
        "nodes": [node_doc(n, att.devices.problems if att is not None and att.devices is not None else None)
                  for n in shown],
        "reasons": reason_counts(ex.nodes, att.filter_names if att is not None else []),
        "preemption": preemption_doc(ex.preemption, all_nodes=all_nodes, top=top),
        "earlierPreemption": None,
        "evictions": [{"namespace": e.pod.namespace, "name": e.pod.name, "node": e.node, "priority": e.pod.priority}
                      for e in ex.evictions],
        "history": [{"attempt": n, "node": node, "message": msg, "nominatedNode": nom}
                    for n, node, msg, nom in ex.history],
        "remediation": [],
        "nearestNodes": [],
        "moreNodes": more_nodes,
        "resources": resource_fact(ex, allocatable) if allocatable is not None else None,
        "storage": storage_facts(ex, storage),
        "resourceClaims": claims_doc(ex),
        "heldBack": list(held_back) if o.attempts == 0 and o.status == PodStatus.UNSCHEDULABLE else [],
    }
    if ex.earlier_preemption is not None:
        number, outcome = ex.earlier_preemption
        doc["earlierPreemption"] = {"attempt": number, **(preemption_doc(outcome, all_nodes=all_nodes, top=top) or {})}
    rem = ex.remedy
    if rem is not None and o.status != PodStatus.SCHEDULED:
        doc["remediation"] = [{"kind": c.kind, "change": c.change, "opensNodes": c.opens, "nodes": c.nodes}
                              for c in rem.pod_changes]
        doc["nearestNodes"] = [{"name": n.name, "lacks": n.lacks, "fitsWithChanges": n.fits_with_changes,
                                "stillRejectedBy": n.still} for n in rem.nearest]
    return doc


def resource_fact(ex: Explanation, allocatable: Mapping[str, Mapping[str, int]]) -> dict[str, Any] | None:
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
    return {"requests": {r: format_resource(r, q) for r, q in want.items()},
            "largestNode": best.name, "scope": scope, "nodes": len(pool),
            "allocatable": {r: format_resource(r, have.get(r, 0)) for r in short},
            "bigEnough": all(have.get(r, 0) >= want[r] for r in short),
            # it lacks free room, not only allocatable; otherwise other filters are what reject it
            "shortOfRoom": any(f.plugin == "NodeResourcesFit" for f in best.failing)}


_DEFAULT_ANNOTATION = f'{ANN_DEFAULT_CLASS}: "true"'


def storage_facts(ex: Explanation, storage: StorageState | None) -> list[dict[str, Any]]:
    """The plain facts behind VolumeBinding's rejections, one per claim of the pod that is the
    cause: the claim, its StorageClass (or that it names none and none is default), what stops
    it and the fix. Empty when the pod is scheduled or VolumeBinding rejected no node."""
    if storage is None or ex.outcome.status == PodStatus.SCHEDULED:
        return []
    reasons = {r for n in ex.nodes for f in n.failing if f.plugin == VOLUME_BINDING for r in f.reasons}
    message = ex.outcome.message or ""
    if UNBOUND_IMMEDIATE in message:
        reasons.add(UNBOUND_IMMEDIATE)
    if not reasons and "persistentvolumeclaim" not in message:
        return []
    pod = ex.pod
    classes = sorted(storage.classes)
    default = default_class(storage.classes.values())
    out: list[dict[str, Any]] = []
    for v in pod.volumes:
        if not v.claim_name:
            continue
        key = f"{pod.namespace}/{v.claim_name}"
        claim = storage.pvc(pod.namespace, v.claim_name)
        if claim is None:
            out.append({"claim": key, "storageClass": None,
                        "problem": "the PersistentVolumeClaim does not exist",
                        "fix": "create it (a StatefulSet creates its volumeClaimTemplates' claims itself; a bare "
                               "pod's claims must exist before it is scheduled)"})
            continue
        if claim.volume_name:
            fact = _bound_claim_fact(key, claim, storage, reasons)
            if fact is not None:
                out.append(fact)
            continue
        out.append(_unbound_claim_fact(key, claim, storage, classes, default, reasons))
    return out


def _bound_claim_fact(key: str, claim: PersistentVolumeClaim, storage: StorageState,
                      reasons: set[str]) -> dict[str, Any] | None:
    pv = storage.pv(claim.volume_name)
    if pv is None:
        return {"claim": key, "storageClass": claim.class_name or None,
                "problem": f"it is bound to PersistentVolume {claim.volume_name}, which does not exist",
                "fix": "restore that volume, or delete the claim so that a new one is made and bound"}
    if ERR_NODE_CONFLICT in reasons and pv.node_affinity is not None:
        terms = "; or ".join(", ".join(f"{r.key} {r.operator} {','.join(r.values)}".rstrip() for r in t.match_expressions)
                             for t in pv.node_affinity.terms) or "no node"
        return {"claim": key, "storageClass": pv.class_name or None,
                "problem": f"it is bound to PersistentVolume {pv.name}, whose node affinity admits only nodes "
                           f"with {terms}",
                "fix": "make room on a node the volume admits (or add one there): the pod can run nowhere else"}
    return None


def _unbound_claim_fact(key: str, claim: PersistentVolumeClaim, storage: StorageState, classes: list[str],
                        default: StorageClass | None, reasons: set[str]) -> dict[str, Any]:
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
        return {"claim": key, "storageClass": None, "problem": problem, "fix": fix}
    sc = storage.storage_class(name)
    if sc is None:
        return {"claim": key, "storageClass": name,
                "problem": f"its StorageClass {name} does not exist",
                "fix": f"create StorageClass {name}" + (f", or name one of {some}" if classes else "")}
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
        return {"claim": key, "storageClass": name, "problem": f"it is not bound yet ({name}, {sc.binding_mode})",
                "fix": ""}
    return {"claim": key, "storageClass": name, "problem": problem, "fix": fix}


def claims_doc(ex: Explanation) -> dict[str, Any] | None:
    """The pod's resource claims and what would give them devices (kplan's own account): the
    nodes an empty copy of which would have devices for every claim, the remedy in words. The
    per-node reasons are the DynamicResources filters' ``detail``."""
    att = ex.attempt
    facts = att.devices if att is not None else None
    if facts is None or ex.outcome.status == PodStatus.SCHEDULED:
        return None
    claims = [{"name": c.name, "claim": c.claim_key, "template": c.template or None, "allocated": c.allocated,
               "requests": list(c.requests), "constraints": list(c.constraints)} for c in facts.claims]

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
    return {"claims": claims, "nodesWithDevices": list(facts.fresh_nodes), "remedy": remedy or None}
