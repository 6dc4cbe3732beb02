"""What would make an unschedulable pod fit, computed by re-running the filters, never guessed.

Run inside a scheduling cycle (``kplan explain``'s observer), on the cluster exactly as that
cycle saw it, nominated pods included:
* pod changes: one small change to the pod at a time (tolerate a taint, drop a nodeSelector
  entry, make a required affinity term preferred, maxSkew + 1, drop a host port); the pod so
  changed goes through PreFilter and every filter on every node, and the change is reported
  with the number of nodes it opens (feasible with it, not without).
* nearest nodes: the rejected nodes that are closest to fitting, each with what it lacks (the
  missing cpu, memory, pod slots and extended resources, the taints to tolerate, the labels to
  add or remove, a cordon to lift) and whether a copy of the node with exactly those changes
  then passes every filter; what still rejects it otherwise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework.cycle_state import CycleState
from kplan.framework.runtime import Framework, Nominator
from kplan.framework.status import REASONS, Code
from kplan.model.objects import (
    DO_NOT_SCHEDULE,
    NO_SCHEDULE,
    UNSCHEDULABLE_TAINT,
    Pod,
    PodAffinityTerm,
    Taint,
    Toleration,
    WeightedPodAffinityTerm,
    untolerated_taints,
)
from kplan.model.quantity import format_resource
from kplan.model.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_IN,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    parse_int64,
)
from kplan.plugins.noderesources.fit import NodeResourcesFit
from kplan.scheduler.inspect import FilterInspection, feasible_mask, plugin_verdicts

#: plugins whose rejection a change to the node itself can lift
NODE_FIXABLE = frozenset({"NodeResourcesFit", "TaintToleration", "NodeAffinity", "NodeUnschedulable"})
MAX_TAINT_OPTIONS = 5


@dataclass
class PodChangeOption:
    kind: str
    change: str
    #: nodes feasible with the change that are not feasible without it
    opens: int
    nodes: list[str] = field(default_factory=list)


@dataclass
class NodePatch:
    """What a node lacks for the pod, as changes to a copy of it."""

    extra: dict[str, int] = field(default_factory=dict)
    extra_pods: int = 0
    labels: dict[str, str | None] = field(default_factory=dict)
    untolerated: tuple[Taint, ...] = ()
    uncordon: bool = False
    #: a rejection no change to the node lifts: "Plugin: reasons"
    unfixable: list[str] = field(default_factory=list)

    def describe(self) -> list[str]:
        """What the node lacks in words: the resources first (as ``extra`` lists them), then pod
        slots, tolerations, labels, cordon."""
        out = [f"{format_resource(r, q)} {r}" for r, q in self.extra.items()]
        if self.extra_pods:
            out.append(f"{self.extra_pods} pod slot{'s' if self.extra_pods != 1 else ''}")
        for t in self.untolerated:
            out.append(f"a toleration for taint {taint_text(t)}")
        for k, v in self.labels.items():
            out.append(f"no label {k}" if v is None else (f"label {k}" if v == "" else f"label {k}={v}"))
        if self.uncordon:
            out.append("to be uncordoned")
        return out


@dataclass
class NearNode:
    name: str
    #: NodePatch.describe: the resources it lacks first, then the rest
    lacks: list[str]
    #: a copy of the node with exactly those changes passes every filter
    fits_with_changes: bool
    #: what still rejects the changed copy ("Plugin: reasons")
    still: list[str] = field(default_factory=list)
    failing_plugins: list[str] = field(default_factory=list)
    #: the resources it lacks (millicores, bytes, counts), the first entries of ``lacks``
    resources: dict[str, int] = field(default_factory=dict)


@dataclass
class Remedy:
    feasible_now: int
    pod_changes: list[PodChangeOption]
    nearest: list[NearNode]


def taint_text(t: Taint) -> str:
    return f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}"


# ------------------------------------------------------------------------------ pod changes

def _toleration_for(t: Taint) -> Toleration:
    return Toleration(t.key, "Equal", t.value, t.effect) if t.value else Toleration(t.key, "Exists", "", t.effect)


def _preferred(terms: tuple[PodAffinityTerm, ...], i: int) -> tuple[tuple[PodAffinityTerm, ...], WeightedPodAffinityTerm]:
    return terms[:i] + terms[i + 1:], WeightedPodAffinityTerm(1, terms[i])


def pod_change_candidates(pod: Pod, failing: set[str], table: NodeTable, rejected_rows: np.ndarray
                          ) -> list[tuple[str, str, Pod]]:
    """(kind, description, changed pod) for the changes worth trying given the failing plugins."""
    out: list[tuple[str, str, Pod]] = []
    rep = dataclasses.replace
    if "TaintToleration" in failing:
        counts: dict[Taint, int] = {}
        seen_sets = {int(t) for t in np.unique(table.taint_ids[rejected_rows])} if len(rejected_rows) else set()
        for tid in sorted(seen_sets):
            for t in untolerated_taints(table.taint_sets[tid], pod.tolerations):
                counts[t] = counts.get(t, 0) + int((table.taint_ids[rejected_rows] == tid).sum())
        taints = sorted(counts, key=lambda t: (-counts[t], t.key, t.value, t.effect))
        for t in taints[:MAX_TAINT_OPTIONS]:
            out.append(("toleration", f"tolerate taint {taint_text(t)}",
                        rep(pod, tolerations=pod.tolerations + (_toleration_for(t),))))
        if len(taints) > 1:
            out.append(("toleration", f"tolerate all {len(taints)} taints",
                        rep(pod, tolerations=pod.tolerations + tuple(_toleration_for(t) for t in taints))))
    cordon_taint = f"tolerate taint {UNSCHEDULABLE_TAINT.key}:NoSchedule"
    if any(text == cordon_taint for _, text, _ in out):
        # the cordoned node's taint is already offered: one row, said to be the cordon's
        out = [(k, f"{text} (cordoned nodes)" if text == cordon_taint else text, p) for k, text, p in out]
    elif "NodeUnschedulable" in failing:
        out.append(("toleration", f"tolerate taint {UNSCHEDULABLE_TAINT.key}:NoSchedule (cordoned nodes)",
                    rep(pod, tolerations=pod.tolerations + (Toleration(UNSCHEDULABLE_TAINT.key, "Exists", "",
                                                                        NO_SCHEDULE),))))
    if "NodeAffinity" in failing:
        for k, v in pod.node_selector.items():
            sel = {kk: vv for kk, vv in pod.node_selector.items() if kk != k}
            out.append(("nodeSelector", f"drop nodeSelector entry {k}={v}", rep(pod, node_selector=sel)))
        if pod.required_node_affinity is not None:
            prefs = tuple(PreferredSchedulingTerm(1, t) for t in pod.required_node_affinity.terms)
            out.append(("nodeAffinity", "make the required node affinity preferred",
                        rep(pod, required_node_affinity=None, preferred_node_affinity=pod.preferred_node_affinity + prefs)))
    if "InterPodAffinity" in failing:
        for i, term in enumerate(pod.affinity_required):
            rest, pref = _preferred(pod.affinity_required, i)
            out.append(("podAffinity", f"make required podAffinity term {i + 1} (topologyKey {term.topology_key}) "
                        "preferred", rep(pod, affinity_required=rest, affinity_preferred=pod.affinity_preferred + (pref,))))
        for i, term in enumerate(pod.anti_affinity_required):
            rest, pref = _preferred(pod.anti_affinity_required, i)
            out.append(("podAntiAffinity", f"make required podAntiAffinity term {i + 1} (topologyKey "
                        f"{term.topology_key}) preferred",
                        rep(pod, anti_affinity_required=rest, anti_affinity_preferred=pod.anti_affinity_preferred + (pref,))))
    if "PodTopologySpread" in failing:
        for i, c in enumerate(pod.spread_constraints):
            if c.when_unsatisfiable != DO_NOT_SCHEDULE:
                continue
            cs = list(pod.spread_constraints)
            cs[i] = dataclasses.replace(c, max_skew=c.max_skew + 1)
            out.append(("topologySpread", f"raise maxSkew of the {c.topology_key} spread constraint from {c.max_skew} "
                        f"to {c.max_skew + 1}", rep(pod, spread_constraints=tuple(cs))))
    if "NodePorts" in failing:
        for p in pod.host_ports:
            ports = tuple(h for h in pod.host_ports if h != p)
            out.append(("hostPort", f"drop hostPort {p.port}/{p.protocol}", rep(pod, host_ports=ports)))
    return out


def evaluate_pod_changes(fw: Framework, pod: Pod, nominator: Nominator | None, base: np.ndarray,
                         candidates: list[tuple[str, str, Pod]], show: int = 5) -> list[PodChangeOption]:
    table = fw.handle.snapshot.table
    out = []
    for kind, text, changed in candidates:
        opened = feasible_mask(fw, changed, nominator) & ~base
        rows = np.flatnonzero(opened)
        names = sorted((table.names[int(r)] for r in rows), key=lambda n: n.encode())
        out.append(PodChangeOption(kind, text, len(rows), names[:show]))
    out.sort(key=lambda o: -o.opens)  # stable: equal counts keep the candidates' order
    return out


# ------------------------------------------------------------------------------ nearest nodes

def _term_fix(term: NodeSelectorTerm, node_name: str, labels: Mapping[str, str]) -> dict[str, str | None] | None:
    """Label changes that make a node match one required node-affinity term; None if none can."""
    if not term.valid or term.is_empty:
        return None
    for f in term.match_fields:
        if f.key != "metadata.name" or len(f.values) != 1:
            return None
        if (f.operator == IN) != (node_name == f.values[0]):
            return None
    cur = dict(labels)
    fix: dict[str, str | None] = {}
    for r in term.match_expressions:
        if r.matches(cur):
            continue
        if r.operator == IN and r.values:
            v: str | None = r.values[0]
        elif r.operator in (NOT_IN, DOES_NOT_EXIST):
            v = None
        elif r.operator == EXISTS:
            v = ""
        elif r.operator in (GT, LT) and len(r.values) == 1 and (n := parse_int64(r.values[0])) is not None:
            v = str(n + 1 if r.operator == GT else n - 1)
        else:
            return None
        fix[r.key] = v
        if v is None:
            cur.pop(r.key, None)
        else:
            cur[r.key] = v
    return fix if term.matches(node_name, cur) else None


def labels_to_match(pod: Pod, node_name: str, labels: Mapping[str, str]) -> dict[str, str | None] | None:
    fix: dict[str, str | None] = {k: v for k, v in pod.node_selector.items() if labels.get(k) != v}
    if pod.required_node_affinity is not None:
        cur = {**labels, **{k: v for k, v in fix.items() if v is not None}}
        best: dict[str, str | None] | None = None
        for term in pod.required_node_affinity.terms:
            f = _term_fix(term, node_name, cur)
            if f is not None and (best is None or len(f) < len(best)):
                best = f
        if best is None:
            return None
        fix.update(best)
    return fix


def patched_fork(table: NodeTable, row: int, patch: NodePatch) -> NodeTable:
    """A one-row copy of a node with the patch applied (the real table is untouched)."""
    fork = table.take([row])
    for name, q in patch.extra.items():
        col = fork.column(name)
        fork.alloc[0, col] += q
    fork.allowed_pods[0] += patch.extra_pods
    node = fork.nodes[0]
    changes: dict[str, object] = {}
    if patch.labels:
        labels = dict(node.labels)
        for k, v in patch.labels.items():
            if v is None:
                labels.pop(k, None)
            else:
                labels[k] = v
        changes["labels"] = labels
        fork._labels = {}  # label columns are rebuilt from the changed node
    if patch.untolerated:
        taints = tuple(t for t in node.taints if t not in patch.untolerated)
        changes["taints"] = taints
        fork.taint_sets = list(table.taint_sets) + [taints]
        fork.taint_ids[0] = len(fork.taint_sets) - 1
    if patch.uncordon:
        changes["unschedulable"] = False
        fork.unschedulable[0] = False
    if changes:
        fork.nodes[0] = dataclasses.replace(node, **changes)  # type: ignore[arg-type]
    return fork


def node_patch(fw: Framework, pod: Pod, table: NodeTable, row: int, failing: list[str],
               nominated: list[Pod]) -> NodePatch:
    patch = NodePatch()
    node = table.nodes[row]
    for plugin in failing:
        if plugin == "NodeResourcesFit":
            fit = fw.plugins.get("NodeResourcesFit")
            checked = fit.checked_resources(pod) if isinstance(fit, NodeResourcesFit) else [
                (n, q) for n, q in pod.requests.items() if q > 0]
            for name, q in checked:
                col = table.res.get(name)
                alloc = int(table.alloc[row, col]) if col is not None else 0
                used = int(table.requested[row, col]) if col is not None else 0
                used += sum(p.requests.get(name, 0) for p in nominated)
                if q > alloc - used:
                    patch.extra[name] = q - (alloc - used)
            slots = int(table.pod_count[row]) + len(nominated) + 1 - int(table.allowed_pods[row])
            if slots > 0:
                patch.extra_pods = slots
        elif plugin == "TaintToleration":
            patch.untolerated = untolerated_taints(node.taints, pod.tolerations)
        elif plugin == "NodeUnschedulable":
            patch.uncordon = True
        elif plugin == "NodeAffinity":
            fix = labels_to_match(pod, node.name, node.labels)
            if fix is None:
                patch.unfixable.append("NodeAffinity: no label change makes the node match the pod's node affinity")
            else:
                patch.labels = fix
    return patch


def nearest_nodes(fw: Framework, pod: Pod, nominator: Nominator | None, inspection: FilterInspection,
                  base: np.ndarray, upstream_plugin: Callable[[int], str], top: int = 5) -> list[NearNode]:
    """The rejected nodes closest to fitting, ranked by how few things they lack."""
    table = fw.handle.snapshot.table
    state = CycleState()
    _, status, _ = fw.run_pre_filter(state, pod)
    if not status.ok:
        return []
    restricted = inspection.node_names
    ranked = []
    for r in np.flatnonzero(~base):
        row = int(r)
        if restricted is not None and table.names[row] not in restricted:
            continue
        failing = [p.plugin for p in inspection.failing(row)]
        up = upstream_plugin(row)
        if up and up not in failing:
            failing.insert(0, up)  # rejected only once nominated pods are counted
        if not failing:
            continue
        unfixable = sum(1 for p in failing if p not in NODE_FIXABLE)
        short = 0.0
        for name, q in pod.requests.items():
            col = table.res.get(name)
            if q <= 0 or col is None:
                continue
            alloc = int(table.alloc[row, col])
            free = alloc - int(table.requested[row, col])
            if q > free:
                short += (q - free) / max(alloc, 1)
        ranked.append(((unfixable, len(failing), short, int(table.name_rank[row])), row, failing))
    ranked.sort(key=lambda t: t[0])
    out = []
    zero = np.zeros(1, dtype=np.int64)
    for _, row, failing in ranked[:top]:
        name = table.names[row]
        nominated = nominator.yielding_to(pod, name) if nominator else []
        patch = node_patch(fw, pod, table, row, failing, nominated)
        fork = patched_fork(table, row, patch)
        if nominator:
            verdict = fw.run_filter_plugins_with_nominated_pods(state.clone(), pod, fork, zero, nominator)
        else:
            verdict = fw.run_filters(state.clone(), pod, fork, zero)
        fits = verdict.codes[0] == Code.SUCCESS and not patch.unfixable
        still = list(patch.unfixable)
        if verdict.codes[0] != Code.SUCCESS:
            for v in plugin_verdicts(fw, state.clone(), pod, fork, zero):
                if not v.skipped and v.codes[0] != 0:
                    still.append(f"{v.plugin}: {', '.join(REASONS[int(v.reasons[0])])}")
            if not still:  # only with the nominated pods on it
                s = verdict.status(0, fw.filter_names)
                still.append(f"{s.plugin}: {s.message} (with the pods nominated to it)")
        out.append(NearNode(name, patch.describe(), bool(fits), still, failing, dict(patch.extra)))
    return out


def remedies(fw: Framework, pod: Pod, nominator: Nominator | None, inspection: FilterInspection,
             upstream_plugin: Callable[[int], str], top: int = 5) -> Remedy:
    table = fw.handle.snapshot.table
    base = feasible_mask(fw, pod, nominator)
    failing: set[str] = set()
    for v in inspection.plugins:
        if not v.skipped and (v.codes != 0).any():
            failing.add(v.plugin)
    if inspection.pre_filter.plugin and not inspection.pre_filter.ok:
        failing.add(inspection.pre_filter.plugin)
    rejected = np.flatnonzero(~base).astype(np.int64)
    candidates = pod_change_candidates(pod, failing, table, rejected)
    changes = evaluate_pod_changes(fw, pod, nominator, base, candidates)
    nearest = nearest_nodes(fw, pod, nominator, inspection, base, upstream_plugin, top)
    return Remedy(int(base.sum()), changes, nearest)
