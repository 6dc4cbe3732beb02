"""PodTopologySpread (pkg/scheduler/framework/plugins/podtopologyspread/plugin.go, v1.34.1).

Args (defaultingType System/List, defaultConstraints) and their validation, the plugin's
extension points (PreFilter, Filter and AddPod/RemovePod in filtering.py; PreScore, Score and
NormalizeScore in scoring.py; constraints and the default selector in common.py) and its
queueing hints, which look at the pod's DoNotSchedule constraints only:
* an assigned pod added or deleted: Queue if it is in the pod's namespace and one constraint's
  selector matches it; an unassigned pod (a nominated pod leaving its nomination) up to 1.35 only
  for the pod itself, from 1.36 (#135392) as an assigned one (involvedInTopologySpreading; the
  release's QueueingHintRules.nominated_pods_count);
* a pod's labels updated: Queue if some selector's verdict on it changes; the pod's own
  tolerations changed: Queue if a constraint honours taints;
* a node added or deleted: Queue if it has every key; updated: if it starts or stops having every
  key, or, having them, its values of the keys or its taints changed.

Counts come from an incremental index (podindex.py) rather than a scan of every pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE_LABEL,
    NODE_ADD,
    NODE_DELETE,
    NODE_UPDATE_LABEL,
    NODE_UPDATE_TAINT,
    UPDATE_POD_TOLERATION,
    ClusterEvent,
)
from kplan.framework.interfaces import (
    CountingStateFilter,
    EnqueueExtensions,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScoreExtensions,
    ScorePlugin,
)
from kplan.framework.registry import ArgsError
from kplan.framework.release import QueueingHintRules
from kplan.framework.status import OK, Status, Verdicts, skip
from kplan.model.objects import DO_NOT_SCHEDULE, HONOR, SCHEDULE_ANYWAY, Pod, SpreadConstraint
from kplan.model.parse import Where, parse_spread_constraints
from kplan.model.selectors import selector_matches
from kplan.plugins.helper import PluginBase, decode_rules
from kplan.plugins.podindex import PodIndex
from kplan.plugins.podtopologyspread import filtering, scoring
from kplan.plugins.podtopologyspread.common import Constraints, InclusionMasks, node_labels_match

NAME = "PodTopologySpread"
SYSTEM, LIST = "System", "List"
SYSTEM_DEFAULT_CONSTRAINTS = (
    SpreadConstraint(3, "kubernetes.io/hostname", SCHEDULE_ANYWAY, None),
    SpreadConstraint(5, "topology.kubernetes.io/zone", SCHEDULE_ANYWAY, None),
)


@dataclass
class PodTopologySpreadArgs:
    defaulting_type: str = SYSTEM
    default_constraints: tuple[SpreadConstraint, ...] = ()
    raw_constraints: list[Any] = field(default_factory=list)

    def effective_defaults(self) -> tuple[SpreadConstraint, ...]:
        return SYSTEM_DEFAULT_CONSTRAINTS if self.defaulting_type == SYSTEM else self.default_constraints


def decode_args(raw: Mapping[str, Any] | None) -> PodTopologySpreadArgs:
    raw = raw or {}
    for k in raw:
        if k not in ("defaultConstraints", "defaultingType"):
            raise ArgsError(f'unknown field "{k}"')
    constraints = raw.get("defaultConstraints") or []
    if not isinstance(constraints, list):
        raise ArgsError("defaultConstraints: expected a list")
    args = PodTopologySpreadArgs(str(raw.get("defaultingType") or SYSTEM), (), list(constraints))
    if not validate_args(args):
        # constraints of the defaults carry no selector: each pod gets its default selector
        args.default_constraints = parse_spread_constraints(
            [{k: v for k, v in c.items() if k != "labelSelector"} for c in constraints],
            Where("", "PodTopologySpreadArgs", ""), "defaultConstraints", {})
    return args


def validate_args(args: PodTopologySpreadArgs) -> list[str]:
    """validation_pluginargs.go ValidatePodTopologySpreadArgs."""
    errs: list[str] = []
    if args.defaulting_type not in (SYSTEM, LIST):
        errs.append(f'defaultingType: Unsupported value: "{args.defaulting_type}": supported values: "List", "System"')
    if args.raw_constraints and args.defaulting_type != LIST:
        errs.append(f'defaultingType: Invalid value: "{args.defaulting_type}": when .defaultConstraints are not empty')
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(args.raw_constraints):
        p = f"defaultConstraints[{i}]"
        if not isinstance(c, Mapping):
            errs.append(f"{p}: Invalid value: expected an object")
            continue
        if c.get("labelSelector") is not None:
            errs.append(f"{p}.labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod")
        skew = c.get("maxSkew")
        if not isinstance(skew, int) or skew <= 0:
            errs.append(f"{p}.maxSkew: Invalid value: {skew}: not in valid range (0, inf)")
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(f"{p}.topologyKey: Required value: can not be empty")
        when = c.get("whenUnsatisfiable") or ""
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(f'{p}.whenUnsatisfiable: Unsupported value: "{when}": supported values: '
                        '"DoNotSchedule", "ScheduleAnyway"')
        if (key, when) in seen:
            errs.append(f'{p}: Duplicate value: "{{{key}, {when}}}"')
        seen.add((key, when))
    return errs


@dataclass(frozen=True)
class PodTopologySpreadRules:
    """PodTopologySpread's release rules."""

    #: an empty (non-nil) labelSelector counts every pod of the namespace (1.38, #141340); before,
    #: countPodsMatchSelector counted none for it
    empty_selector_counts_every_pod: bool

    def matching_query(self) -> filtering.MatchingQuery:
        """countPodsMatchSelector's pods, for PreFilter and PreScore."""
        if self.empty_selector_counts_every_pod:
            return filtering.matching_query_empty_counts_all
        return filtering.matching_query


class PodTopologySpread(PluginBase, PreFilterPlugin, CountingStateFilter,
                        PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        # a pod with constraints of its own, or any pod where default constraints apply, is not signable
        return None if pod.spread_constraints or self.constraints.defaults else ()

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        self.system_defaulted = args.defaulting_type == SYSTEM
        self.constraints = Constraints(args.effective_defaults())
        self.masks = InclusionMasks()
        #: countPodsMatchSelector as the release has it
        self.query_of = decode_rules(PodTopologySpreadRules, handle, NAME).matching_query()

    def _index(self) -> PodIndex:
        return PodIndex.of(self.handle.snapshot)

    def constraints_of(self, pod: Pod, action: str) -> tuple[SpreadConstraint, ...]:
        return self.constraints.of(pod, action, self.handle.snapshot.selecting)

    # ------------------------------------------------------------------ filtering

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        constraints = self.constraints_of(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, skip(NAME)
        state.write(filtering.PRE_FILTER_KEY,
                    filtering.compute(self._index(), self.masks, pod, constraints, self.query_of))
        return None, OK

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        return filtering.filter_rows(state.read(filtering.PRE_FILTER_KEY), table, rows)

    def affected_by(self, state: CycleState, pod: Pod, other: Pod) -> bool:
        """Whether update_with_pod may count ``other``: a pod of the namespace that some
        constraint's selector matches."""
        s = state.read(filtering.PRE_FILTER_KEY)
        if s is None or other.namespace != pod.namespace:
            return False
        return any(selector_matches(c.selector, other.labels) for c in s.constraints)

    def filter_with_pods(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                         examples: Sequence[Pod], counts: np.ndarray) -> Verdicts | None:
        return filtering.filter_rows_with_pods(state.read(filtering.PRE_FILTER_KEY), pod, table, rows, self.masks,
                                               examples, counts)

    def add_pod(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None:
        s = state.read(filtering.PRE_FILTER_KEY)
        if s is not None:
            filtering.update_with_pod(s, pod, other, table.nodes[row], 1)

    def remove_pod(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None:
        s = state.read(filtering.PRE_FILTER_KEY)
        if s is not None:
            filtering.update_with_pod(s, pod, other, table.nodes[row], -1)

    # ------------------------------------------------------------------ scoring

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        if len(self.handle.snapshot.table) == 0:
            return skip(NAME)
        constraints = self.constraints_of(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return skip(NAME)
        # only the system defaults spare nodes without a zone label from being ignored
        require_all = bool(pod.spread_constraints) or not self.system_defaulted
        s = scoring.compute(self._index(), self.masks, pod, constraints, require_all, np.asarray(rows), self.query_of)
        state.write(scoring.PRE_SCORE_KEY, s)
        return OK

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        return scoring.score_rows(state.read(scoring.PRE_SCORE_KEY), table, rows)

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return scoring.normalize(state.read(scoring.PRE_SCORE_KEY), scores)

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        pod_hint, node_hint = self._after_pod_change, self._after_node_change
        return [(ASSIGNED_POD_ADD, pod_hint), (ASSIGNED_POD_UPDATE_LABEL, pod_hint),
                (UPDATE_POD_TOLERATION, pod_hint), (ASSIGNED_POD_DELETE, pod_hint),
                (NODE_ADD, node_hint), (NODE_DELETE, node_hint), (NODE_UPDATE_LABEL, node_hint),
                (NODE_UPDATE_TAINT, node_hint)]

    def _after_pod_change(self, pod: Pod, event: ClusterEvent) -> bool:
        """isSchedulableAfterPodChange."""
        other = event.pod
        if other is None:
            return True
        if not involved_in_spreading(pod, event, self.handle.release.queueing_hints):
            return False
        constraints = self.constraints_of(pod, DO_NOT_SCHEDULE)
        if event.kind in (ASSIGNED_POD_UPDATE_LABEL, UPDATE_POD_TOLERATION):
            old = event.old_pod
            if old is None:
                return True
            if other.uid == pod.uid and old.tolerations != other.tolerations and any(
                    c.node_taints_policy == HONOR for c in constraints):
                return True
            if dict(old.labels) == dict(other.labels):
                return False
            return any(selector_matches(c.selector, old.labels) != selector_matches(c.selector, other.labels)
                       for c in constraints)
        return any(selector_matches(c.selector, other.labels) for c in constraints)

    def _after_node_change(self, pod: Pod, event: ClusterEvent) -> bool:
        """isSchedulableAfterNodeChange."""
        constraints = self.constraints_of(pod, DO_NOT_SCHEDULE)
        old, new = event.old_node, event.node
        if event.kind == NODE_DELETE:
            node = new if new is not None else old
            return node is None or node_labels_match(node.labels, constraints)
        if new is None:
            return True
        new_matching = node_labels_match(new.labels, constraints)
        if old is None:
            return new_matching
        if node_labels_match(old.labels, constraints) != new_matching:
            return True
        changed = any(old.labels.get(c.topology_key) != new.labels.get(c.topology_key) for c in constraints)
        return new_matching and (changed or old.taints != new.taints)


def involved_in_spreading(pod: Pod, event: ClusterEvent, rules: QueueingHintRules) -> bool:
    """involvedInTopologySpreading: the event's pod is the pod itself, or a pod of its namespace
    that the filter counts: assigned, or from 1.36 (#135392) nominated to a node (a pod leaving
    its nomination comes with its old nominated node). 1.37 drops the pod-itself case from this
    function but sends the pod's own updates to a hint of their own, so it answers as 1.36."""
    other = event.pod
    assert other is not None
    if other.uid == pod.uid:
        return True
    return rules.pod_on_a_node(event) and other.namespace == pod.namespace
