"""InterPodAffinity (pkg/scheduler/framework/plugins/interpodaffinity/plugin.go, v1.34.1).

Args (hardPodAffinityWeight, ignorePreferredTermsOfExistingPods) and their validation, the
plugin's extension points (PreFilter, Filter and AddPod/RemovePod in filtering.py; PreScore, Score
and NormalizeScore in scoring.py) and its queueing hints:
* assigned pod added / label updated: Queue if the pod now matches ALL of the rejected pod's
  required affinity terms (or, for an update, stopped matching its anti-affinity terms);
* assigned pod deleted: Queue if it matched the rejected pod's required anti-affinity terms, or
  (from 1.36, #135325) the rejected pod matches the deleted pod's own;
* "matched the anti-affinity terms" is ALL of them up to 1.36 and ANY of them from 1.37 (#139161);
* an unassigned pod never requeues; up to 1.35 that includes a nominated pod leaving its
  nomination, which from 1.36 (#135392) is looked at like a deleted assigned pod;
* node added / labels or taints updated: Queue if the node has the key of a required
  (anti-)affinity term.
Up to 1.37 the hints evaluate a term's namespaceSelector against empty labels, as upstream passes
nil; from 1.38 (#141954) against the event pod's namespace's labels where a term needs them, and a
namespace the cluster does not have requeues the pod. What differs by release is the release's
QueueingHintRules (release.queueing_hints). Not modelled:
1.36's Queue for the rejected pod's own label update (#135394): nothing in a run updates a pod's
labels (docs/modelled.md).

Deviation: none known. The counts come from an incremental index (podindex.py) rather than a
scan of every pod; the results are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
    NODE_UPDATE_LABEL,
    NODE_UPDATE_TAINT,
    ClusterEvent,
)
from kplan.framework.interfaces import (
    CountingStateFilter,
    EnqueueExtensions,
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
from kplan.model.objects import EMPTY, Pod
from kplan.model.selectors import selector_matches
from kplan.plugins.helper import PluginBase
from kplan.plugins.interpodaffinity import filtering, scoring
from kplan.plugins.podindex import REQUIRED_ANTI_AFFINITY, AffinityCarriers, PodIndex, TermScope, scope_of

NAME = "InterPodAffinity"


@dataclass
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def decode_args(raw: Mapping[str, Any] | None) -> InterPodAffinityArgs:
    raw = raw or {}
    for k in raw:
        if k not in ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"):
            raise ArgsError(f'unknown field "{k}"')
    out = InterPodAffinityArgs()
    if raw.get("hardPodAffinityWeight") is not None:
        out.hard_pod_affinity_weight = int(raw["hardPodAffinityWeight"])
    out.ignore_preferred_terms_of_existing_pods = bool(raw.get("ignorePreferredTermsOfExistingPods"))
    return out


def validate_args(args: InterPodAffinityArgs) -> list[str]:
    w = args.hard_pod_affinity_weight
    if not 0 <= w <= 100:
        return [f"hardPodAffinityWeight: Invalid value: {w}: not in valid range [0, 100]"]
    return []


class InterPodAffinity(PluginBase, PreFilterPlugin, CountingStateFilter,
                       PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        if pod.has_affinity:
            return None  # pods with inter-pod affinity are not signable
        # with ignorePreferredTermsOfExistingPods only pods with terms count: the labels do not matter
        return () if self.args.ignore_preferred_terms_of_existing_pods else ((signers.LABELS,
                                                                               signers.mapping(pod.labels)),)

    def _index(self) -> PodIndex:
        return PodIndex.of(self.handle.snapshot)

    # ------------------------------------------------------------------ filtering

    def _none_carried(self) -> bool:
        """No running pod has an affinity term (then the index would find nothing to count)."""
        return AffinityCarriers.of(self.handle.snapshot).count == 0

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        if not pod.affinity_required and not pod.anti_affinity_required and (self._none_carried() or not any(
                c.total for c in self._index().carriers[REQUIRED_ANTI_AFFINITY])):
            # no term of the pod's and no running pod's required anti-affinity: nothing to count
            return None, skip(NAME)
        index = self._index()
        s = filtering.compute(index, pod, index.namespace_labels(pod.namespace))
        if s.existing.empty and not pod.affinity_required and not pod.anti_affinity_required:
            return None, skip(NAME)
        state.write(filtering.PRE_FILTER_KEY, s)
        return None, OK

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        return filtering.filter_rows(state.read(filtering.PRE_FILTER_KEY), table, rows)

    def affected_by(self, state: CycleState, pod: Pod, other: Pod) -> bool:
        """Whether update_with_pod may count ``other``: it has required anti-affinity terms, or
        the pod's required affinity or anti-affinity terms select it."""
        s = state.read(filtering.PRE_FILTER_KEY)
        if s is None:
            return False
        if other.anti_affinity_required:
            return True
        ns_labels = self.handle.snapshot.namespace_labels(other.namespace)
        if s.affinity_query is not None and all(
                p.matches(other.namespace, other.labels, ns_labels) for p in s.affinity_query.parts):
            return True
        return any(scope.matches(other.namespace, other.labels, ns_labels) for scope, _ in s.anti_scopes)

    def filter_with_pods(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                         examples: Sequence[Pod], counts: np.ndarray) -> Verdicts | None:
        ns_labels = [self.handle.snapshot.namespace_labels(p.namespace) for p in examples]
        return filtering.filter_rows_with_pods(state.read(filtering.PRE_FILTER_KEY), pod, table, rows, examples,
                                               ns_labels, counts)

    def add_pod(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None:
        self._update(state, pod, other, table, row, 1)

    def remove_pod(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None:
        self._update(state, pod, other, table, row, -1)

    def _update(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int, d: int) -> None:
        s = state.read(filtering.PRE_FILTER_KEY)
        if s is not None:
            ns_labels = self.handle.snapshot.namespace_labels(other.namespace)
            filtering.update_with_pod(s, pod, other, table.nodes[row].labels, ns_labels, d)

    # ------------------------------------------------------------------ scoring

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        args: InterPodAffinityArgs = self.args
        if not pod.affinity_preferred and not pod.anti_affinity_preferred and self._none_carried():
            # nothing of the pod's and no running pod's term to score: compute's Skip, unbuilt
            return skip(NAME)
        s = scoring.compute(self._index(), pod, args.hard_pod_affinity_weight,
                            args.ignore_preferred_terms_of_existing_pods)
        if s is None:
            return skip(NAME)
        state.write(scoring.PRE_SCORE_KEY, s)
        return OK

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        return scoring.score_rows(state.read(scoring.PRE_SCORE_KEY), table, rows)

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return scoring.normalize(state.read(scoring.PRE_SCORE_KEY), scores)

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        pod_hint = self._after_pod_change
        return [(ASSIGNED_POD_ADD, pod_hint), (ASSIGNED_POD_UPDATE_LABEL, pod_hint),
                (ASSIGNED_POD_DELETE, pod_hint), (NODE_ADD, _after_node_change),
                (NODE_UPDATE_LABEL, _after_node_change), (NODE_UPDATE_TAINT, _after_node_change)]

    def _after_pod_change(self, pod: Pod, event: ClusterEvent) -> bool:
        """isSchedulableAfterPodChange, with the release's rules."""
        return after_pod_change(pod, event, self.handle.release.queueing_hints, self._namespace_labels)

    def _namespace_labels(self, name: str) -> Mapping[str, str] | None:
        ns = self.handle.snapshot.namespaces.get(name)
        return None if ns is None else ns.labels


#: a namespace's labels by name, None for a namespace the cluster does not have
NamespaceLabels = Callable[[str], "Mapping[str, str] | None"]


def _matches_all_terms(scopes: tuple[TermScope, ...], other: Pod, ns_labels: Mapping[str, str]) -> bool:
    return filtering.matches_all(scopes, other, ns_labels)


def _anti_scopes(owner: Pod) -> tuple[TermScope, ...]:
    return tuple(scope_of(t, owner.namespace) for t in owner.anti_affinity_required)


def _matches_anti_affinity(scopes: tuple[TermScope, ...], other: Pod, rules: QueueingHintRules,
                           ns_labels: Mapping[str, str]) -> bool:
    """``other`` matches the required anti-affinity ``scopes``: all of its terms
    (podMatchesAllAffinityTerms), from 1.37 any of them (podMatchesAnyAffinityTerms, #139161);
    false when there is none."""
    if rules.anti_affinity_any_term:
        return any(filtering.matches_all((sc,), other, ns_labels) for sc in scopes)
    return filtering.matches_all(scopes, other, ns_labels)


def needs_namespace_labels(scopes: tuple[TermScope, ...], pods: Sequence[Pod]) -> bool:
    """termsNeedNamespaceLabels (1.38, #141954): some term has a namespaceSelector that is neither
    nil nor empty, and one of ``pods`` is outside the term's namespaces yet matches its selector."""
    for sc in scopes:
        if sc.namespace_selector is None or sc.namespace_selector.is_empty:
            continue
        for p in pods:
            if p.namespace not in sc.namespaces and selector_matches(sc.selector, p.labels):
                return True
    return False


def _hint_ns_labels(rules: QueueingHintRules, scopes: tuple[TermScope, ...], pods: Sequence[Pod],
                    namespace: str, lookup: NamespaceLabels) -> Mapping[str, str] | None:
    """The namespace labels a hint matches terms with: none up to 1.37 (upstream passes nil); from
    1.38 (#141954) the namespace's own where a term needs them, None when the namespace is unknown
    (the hint then requeues, "requeueing conservatively")."""
    if not rules.namespace_selector_labels or not needs_namespace_labels(scopes, pods):
        return EMPTY
    return lookup(namespace)


def _deleted_pod_freed(pod: Pod, other: Pod, rules: QueueingHintRules, lookup: NamespaceLabels) -> bool:
    """A deleted pod: it matched the pod's anti-affinity, or from 1.36 (#135325) the pod matches
    the deleted pod's own anti-affinity (the filter's "existing pods anti-affinity")."""
    scopes = _anti_scopes(pod)
    ns_labels = _hint_ns_labels(rules, scopes, (other,), other.namespace, lookup)
    if ns_labels is None or _matches_anti_affinity(scopes, other, rules, ns_labels):
        return True
    if not rules.deleted_pods_anti_affinity:
        return False
    theirs = _anti_scopes(other)
    ns_labels = _hint_ns_labels(rules, theirs, (pod,), pod.namespace, lookup)
    return ns_labels is None or _matches_anti_affinity(theirs, pod, rules, ns_labels)


def after_pod_change(pod: Pod, event: ClusterEvent, rules: QueueingHintRules, lookup: NamespaceLabels) -> bool:
    """isSchedulableAfterPodChange for the rejected ``pod`` under the release's ``rules``
    (``lookup``: the cluster's namespaces, read from 1.38 on)."""
    other = event.pod
    if other is None:
        return True
    if not rules.pod_on_a_node(event):
        return False  # an unscheduled pod: it cannot make the pod schedulable
    affinity = tuple(scope_of(t, pod.namespace) for t in pod.affinity_required)
    if event.kind == ASSIGNED_POD_UPDATE_LABEL:
        old = event.old_pod
        if old is None:
            return True
        anti = _anti_scopes(pod)
        ns_labels = _hint_ns_labels(rules, affinity + anti, (old, other), old.namespace, lookup)
        if ns_labels is None:
            return True
        return ((not _matches_all_terms(affinity, old, ns_labels) and _matches_all_terms(affinity, other, ns_labels))
                or (_matches_anti_affinity(anti, old, rules, ns_labels)
                    and not _matches_anti_affinity(anti, other, rules, ns_labels)))
    if event.kind == ASSIGNED_POD_ADD:
        ns_labels = _hint_ns_labels(rules, affinity, (other,), other.namespace, lookup)
        return ns_labels is None or _matches_all_terms(affinity, other, ns_labels)
    return _deleted_pod_freed(pod, other, rules, lookup)


def _after_node_change(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterNodeChange."""
    node = event.node
    if node is None:
        return True
    return any(t.topology_key in node.labels for t in pod.affinity_required + pod.anti_affinity_required)
