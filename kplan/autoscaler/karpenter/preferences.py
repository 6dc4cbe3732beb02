"""Relaxing a pod's preferences when it cannot be placed: sigs.k8s.io/karpenter v1.15.0
pkg/controllers/provisioning/scheduling/preferences.go.

Karpenter treats preferences as requirements until a pod fails, then relaxes one at a time, in
this order: drop the first required node-affinity term while others remain (Karpenter only ever
reads the first), the heaviest preferred pod-affinity term, the heaviest preferred
pod-anti-affinity term, the heaviest preferred node-affinity term, a ScheduleAnyway spread
constraint, and (when some NodePool has a PreferNoSchedule taint) tolerate PreferNoSchedule.
Upstream edits a copy of the pod; kplan edits a ``PodView`` of the fields relaxation touches.
"""

from __future__ import annotations

from dataclasses import dataclass

from kplan.model.objects import (
    PREFER_NO_SCHEDULE,
    SCHEDULE_ANYWAY,
    Pod,
    SpreadConstraint,
    Toleration,
    WeightedPodAffinityTerm,
)
from kplan.model.selectors import NodeSelectorTerm, PreferredSchedulingTerm

PREFER_NO_SCHEDULE_TOLERATION = Toleration("", "Exists", "", PREFER_NO_SCHEDULE)


def _by_weight(terms: tuple[PreferredSchedulingTerm, ...]) -> tuple[PreferredSchedulingTerm, ...]:
    return tuple(sorted(terms, key=lambda t: -t.weight))


@dataclass(slots=True)
class PodView:
    """The parts of a pod that relaxation changes, as they stand in this attempt."""

    pod: Pod
    required_terms: tuple[NodeSelectorTerm, ...]
    preferred_node: tuple[PreferredSchedulingTerm, ...]
    preferred_affinity: tuple[WeightedPodAffinityTerm, ...]
    preferred_anti_affinity: tuple[WeightedPodAffinityTerm, ...]
    spread: tuple[SpreadConstraint, ...]
    tolerations: tuple[Toleration, ...]

    @classmethod
    def of(cls, pod: Pod) -> PodView:
        req = pod.required_node_affinity.terms if pod.required_node_affinity is not None else ()
        return cls(pod, req, pod.preferred_node_affinity, pod.affinity_preferred, pod.anti_affinity_preferred,
                   pod.spread_constraints, pod.tolerations)


def remove_required_node_affinity_term(v: PodView) -> str | None:
    if len(v.required_terms) > 1:
        v.required_terms = v.required_terms[1:]
        return "removing: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    return None


def _drop_heaviest(terms: tuple[WeightedPodAffinityTerm, ...]) -> tuple[WeightedPodAffinityTerm, ...]:
    return tuple(sorted(terms, key=lambda t: -t.weight))[1:]


def remove_preferred_pod_affinity_term(v: PodView) -> str | None:
    if v.preferred_affinity:
        v.preferred_affinity = _drop_heaviest(v.preferred_affinity)
        return "removing: spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
    return None


def remove_preferred_pod_anti_affinity_term(v: PodView) -> str | None:
    if v.preferred_anti_affinity:
        v.preferred_anti_affinity = _drop_heaviest(v.preferred_anti_affinity)
        return "removing: spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
    return None


def remove_preferred_node_affinity_term(v: PodView) -> str | None:
    if v.preferred_node:
        v.preferred_node = _by_weight(v.preferred_node)[1:]
        return "removing: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
    return None


def remove_topology_spread_schedule_anyway(v: PodView) -> str | None:
    """The first ScheduleAnyway constraint goes; the last one takes its place (upstream's swap)."""
    for i, c in enumerate(v.spread):
        if c.when_unsatisfiable == SCHEDULE_ANYWAY:
            items = list(v.spread)
            items[i] = items[-1]
            v.spread = tuple(items[:-1])
            return "removing: spec.topologySpreadConstraints"
    return None


def tolerate_prefer_no_schedule_taints(v: PodView) -> str | None:
    """Add ``Exists`` for PreferNoSchedule unless a toleration already matches it exactly
    (MatchToleration: same key, operator, value and effect)."""
    if PREFER_NO_SCHEDULE_TOLERATION in v.tolerations:
        return None
    v.tolerations = (*v.tolerations, PREFER_NO_SCHEDULE_TOLERATION)
    return "adding: toleration for PreferNoSchedule taints"


def relax(v: PodView, tolerate_prefer_no_schedule: bool) -> bool:
    """Relax: apply the first relaxation that changes something; False when none is left."""
    steps = [remove_required_node_affinity_term, remove_preferred_pod_affinity_term,
             remove_preferred_pod_anti_affinity_term, remove_preferred_node_affinity_term,
             remove_topology_spread_schedule_anyway]
    if tolerate_prefer_no_schedule:
        steps.append(tolerate_prefer_no_schedule_taints)
    return any(step(v) is not None for step in steps)
