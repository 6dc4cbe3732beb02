"""NodeAffinity (plugins/nodeaffinity/node_affinity.go, v1.34.1).

PreFilter: Skip when the pod has no nodeSelector, no required node affinity and no
scheduler-enforced ``addedAffinity``; a PreFilterResult when every required term names nodes
through ``metadata.name In`` (DaemonSet pods), "pod affinity terms conflict" when those sets are
empty. Filter: ``addedAffinity`` first, then nodeSelector and required terms, both
UnschedulableAndUnresolvable. Score: the summed weights of matching preferred terms (the pod's
and ``addedAffinity``'s), normalised by the maximum.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import NODE_ADD, NODE_UPDATE_LABEL, ClusterEvent
from kplan.framework.interfaces import (
    EnqueueExtensions,
    FixedInputFilter,
    FixedInputScore,
    Normalization,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScoreExtensions,
)
from kplan.framework.registry import ArgsError
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id, skip
from kplan.model.objects import Pod
from kplan.model.parse import Where, parse_node_affinity
from kplan.model.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_IN,
    NodeSelector,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Requirement,
    parse_int64,
)
from kplan.plugins.helper import PluginBase, default_normalize

NAME = "NodeAffinity"
REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"
_POD_ID = reason_id(REASON_POD)
_ENFORCED_ID = reason_id(REASON_ENFORCED)


@dataclass
class NodeAffinityArgs:
    added_required: NodeSelector | None = None
    added_preferred: tuple[PreferredSchedulingTerm, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)
    #: what ValidateNodeAffinityArgs reports, relative to the args (config validation adds the prefix)
    problems: list[str] = field(default_factory=list)


_SELECTOR_OPS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
_FIELD_OPS = (IN, NOT_IN)


def _go_strings(values: Any) -> str:
    """A []string as Go's %#v prints it in a field error."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(json.dumps(str(v)) for v in values) + "}"


def _supported(ops: tuple[str, ...]) -> str:
    return "supported values: " + ", ".join(f'"{o}"' for o in ops)


def _term_problems(term: Any, path: str) -> list[str]:
    """The parse errors of one node selector term (component-helpers nodeaffinity newNodeSelectorTerm).

    Label key and value syntax is not checked (kplan does not reproduce IsQualifiedName).
    """
    if not isinstance(term, Mapping):
        return []
    out: list[str] = []
    for j, e in enumerate(term.get("matchExpressions") or []):
        if not isinstance(e, Mapping):
            continue
        p, op, vals = f"{path}.matchExpressions[{j}]", e.get("operator"), e.get("values")
        n = len(vals) if isinstance(vals, list) else 0
        if op not in _SELECTOR_OPS:
            out.append(f'{p}.operator: Unsupported value: "{op}": {_supported(_SELECTOR_OPS)}')
        elif op in (IN, NOT_IN) and n == 0:
            out.append(f"{p}.values: Invalid value: {_go_strings(vals)}: for 'in', 'notin' operators, "
                       "values set can't be empty")
        elif op in (EXISTS, DOES_NOT_EXIST) and n != 0:
            out.append(f"{p}.values: Invalid value: {_go_strings(vals)}: values set must be empty for exists and "
                       "does not exist")
        elif op in (GT, LT):
            if n != 1:
                out.append(f"{p}.values: Invalid value: {_go_strings(vals)}: for 'Gt', 'Lt' operators, exactly one "
                           "value is required")
            for k, v in enumerate(vals or []):
                if parse_int64(str(v)) is None:
                    out.append(f"{p}.values[{k}]: Invalid value: {json.dumps(str(v))}: for 'Gt', 'Lt' operators, "
                               "the value must be an integer")
    for j, f in enumerate(term.get("matchFields") or []):
        if not isinstance(f, Mapping):
            continue
        p, op, vals = f"{path}.matchFields[{j}]", f.get("operator"), f.get("values")
        if op not in _FIELD_OPS:
            out.append(f'{p}.operator: Unsupported value: "{op}": {_supported(_FIELD_OPS)}')
        elif not isinstance(vals, list) or len(vals) != 1:
            out.append(f"{p}.values: Invalid value: {_go_strings(vals)}: must have one element")
    return out


def _added_affinity_problems(added: Mapping[str, Any]) -> list[str]:
    """ValidateNodeAffinityArgs: NewNodeSelector and NewPreferredSchedulingTerms must parse."""
    out: list[str] = []
    base = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, Mapping):
        for i, t in enumerate(req.get("nodeSelectorTerms") or []):
            if isinstance(t, Mapping) and (t.get("matchExpressions") or t.get("matchFields")):
                out += _term_problems(t, f"{base}.nodeSelectorTerms[{i}]")
    for i, t in enumerate(added.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        if not isinstance(t, Mapping) or not t.get("weight"):
            continue
        pref = t.get("preference")
        if isinstance(pref, Mapping) and (pref.get("matchExpressions") or pref.get("matchFields")):
            # upstream's path has no ".preference" here
            out += _term_problems(pref, f"addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]")
    return out


def decode_args(raw: Mapping[str, Any] | None) -> NodeAffinityArgs:
    raw = raw or {}
    for k in raw:
        if k != "addedAffinity":
            raise ArgsError(f'unknown field "{k}"')
    added = raw.get("addedAffinity")
    if added is None:
        return NodeAffinityArgs()
    if not isinstance(added, Mapping):
        raise ArgsError("addedAffinity: expected an object")
    problems = _added_affinity_problems(added)
    if problems:
        # validation reports them; nothing is built from terms that do not parse
        return NodeAffinityArgs(raw=raw, problems=problems)
    # preferred terms with weight 0 are neither checked nor used upstream, so they are not parsed
    kept = {**added}
    if isinstance(added.get("preferredDuringSchedulingIgnoredDuringExecution"), list):
        kept["preferredDuringSchedulingIgnoredDuringExecution"] = [
            t for t in added["preferredDuringSchedulingIgnoredDuringExecution"]
            if not isinstance(t, Mapping) or t.get("weight")]
    try:
        required, preferred = parse_node_affinity(kept, Where("", "NodeAffinityArgs", ""), "addedAffinity")
    except Exception as e:  # a wrong type somewhere: a strict decoding error upstream
        raise ArgsError(str(e)) from None
    return NodeAffinityArgs(required, preferred, raw)


def validate_args(args: NodeAffinityArgs) -> list[str]:
    return list(args.problems)


def requirement_mask(table: NodeTable, rows: np.ndarray, r: Requirement) -> np.ndarray:
    col = table.labels(r.key)
    codes = col.codes[rows]
    op = r.operator
    if op == IN:
        return np.asarray(col.isin(r.values)[rows])
    if op == NOT_IN:
        return np.asarray(~col.isin(r.values)[rows])
    if op == EXISTS:
        return np.asarray(codes >= 0)
    if op == DOES_NOT_EXIST:
        return np.asarray(codes < 0)
    if op in (GT, LT):
        want = parse_int64(r.values[0]) if len(r.values) == 1 else None
        if want is None:
            return np.zeros(len(rows), dtype=bool)
        ok, num = col.as_int64()
        ok, num = ok[rows], num[rows]
        return np.asarray(ok & (num > want) if op == GT else ok & (num < want))
    return np.zeros(len(rows), dtype=bool)


def term_mask(table: NodeTable, rows: np.ndarray, term: NodeSelectorTerm) -> np.ndarray:
    if not term.valid or term.is_empty:
        return np.zeros(len(rows), dtype=bool)
    mask = np.ones(len(rows), dtype=bool)
    for r in term.match_expressions:
        mask &= requirement_mask(table, rows, r)
    for f in term.match_fields:
        names = np.array([table.names[i] == f.values[0] for i in rows], dtype=bool)
        mask &= names if f.operator == IN else ~names
    return mask


def node_selector_mask(table: NodeTable, rows: np.ndarray, selector: NodeSelector) -> np.ndarray:
    mask = np.zeros(len(rows), dtype=bool)
    for t in selector.terms:
        mask |= term_mask(table, rows, t)
    return mask


def required_mask(table: NodeTable, rows: np.ndarray, pod: Pod) -> np.ndarray:
    """nodeSelector AND required node affinity (GetRequiredNodeAffinity(pod).Match)."""
    mask = np.ones(len(rows), dtype=bool)
    for k, v in pod.node_selector.items():
        mask &= table.labels(k).codes[rows] == table.labels(k).code_of.get(v, -2)
    if pod.required_node_affinity is not None:
        mask &= node_selector_mask(table, rows, pod.required_node_affinity)
    return mask


def pod_matches_node_affinity(pod: Pod, node_name: str, labels: Mapping[str, str]) -> bool:
    """The scalar form, for hints and other plugins' node inclusion policies."""
    for k, v in pod.node_selector.items():
        if labels.get(k) != v:
            return False
    return pod.required_node_affinity is None or pod.required_node_affinity.matches(node_name, labels)


class NodeAffinity(PluginBase, PreFilterPlugin, FixedInputFilter, PreScorePlugin,
                   FixedInputScore, ScoreExtensions, EnqueueExtensions):
    name = NAME
    #: NormalizeScore: the highest sum of matching preferred weights scores 100
    normalization = Normalization.DEFAULT

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.NODE_AFFINITY, signers.node_affinity(pod)),
                (signers.NODE_SELECTOR, signers.mapping(pod.node_selector)))

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        args: NodeAffinityArgs = self.args
        if pod.required_node_affinity is None and args.added_required is None and not pod.node_selector:
            return None, skip(NAME)
        if pod.required_node_affinity is None or not pod.required_node_affinity.terms:
            return None, OK
        names: set[str] | None = None
        for term in pod.required_node_affinity.terms:
            term_names: set[str] | None = None
            for f in term.match_fields:
                if f.key == "metadata.name" and f.operator == IN:
                    s = set(f.values)
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return None, OK
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, Status(Code.UNRESOLVABLE, (REASON_CONFLICT,), NAME)
        if names:
            return PreFilterResult(frozenset(names)), OK
        return None, OK

    def filter_signature(self, pod: Pod) -> Hashable:
        # the plugin's own added affinity is fixed for its lifetime; only the pod's part varies
        return tuple(sorted(pod.node_selector.items())), pod.required_node_affinity

    def score_signature(self, pod: Pod) -> Hashable:
        # the plugin's own added preferences are fixed for its lifetime; only the pod's vary
        return pod.preferred_node_affinity

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        args: NodeAffinityArgs = self.args
        codes = np.zeros(len(rows), dtype=np.int8)
        reasons = np.zeros(len(rows), dtype=np.int32)
        if args.added_required is not None:
            bad = ~node_selector_mask(table, rows, args.added_required)
            codes[bad] = Code.UNRESOLVABLE
            reasons[bad] = _ENFORCED_ID
        bad = ~required_mask(table, rows, pod) & (codes == 0)
        codes[bad] = Code.UNRESOLVABLE
        reasons[bad] = _POD_ID
        return Verdicts(codes, reasons)

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        if not pod.preferred_node_affinity and not self.args.added_preferred:
            return skip(NAME)
        return OK

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        total = np.zeros(len(rows), dtype=np.int64)
        for pref in tuple(self.args.added_preferred) + tuple(pod.preferred_node_affinity):
            if pref.weight == 0 or pref.term.is_empty:
                continue
            total += np.where(term_mask(table, rows, pref.term), pref.weight, 0)
        return total

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return default_normalize(scores, reverse=False)

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(NODE_ADD, self._node_now_matches), (NODE_UPDATE_LABEL, self._node_now_matches)]

    def _node_now_matches(self, pod: Pod, event: ClusterEvent) -> bool:
        args: NodeAffinityArgs = self.args
        node = event.node
        if node is None:
            return False
        if args.added_required is not None and not args.added_required.matches(node.name, node.labels):
            return False
        if not pod_matches_node_affinity(pod, node.name, node.labels):
            return False
        old = event.old_node
        return old is None or not pod_matches_node_affinity(pod, old.name, old.labels)

