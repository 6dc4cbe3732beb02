"""PodDisruptionBudgets as Karpenter's disruption reads them.

Mirrors pkg/utils/pdb/pdb.go of sigs.k8s.io/karpenter v1.15.0 (Limits): a budget matches a pod
of its namespace whose labels its selector matches (a missing selector matches nothing, an empty
one every pod); ``status.disruptionsAllowed`` is taken as the budget's allowance (kplan computes
it as the disruption controller does when the input has no status). A pod Karpenter would not
evict (IsEvictable: terminal or terminating, tolerating the disruption taint, a mirror pod, under
do-not-disrupt) never counts. Otherwise a pod blocks when two or more budgets match it (the
eviction API refuses that) or when a matching budget allows no disruption (CanEvictPods), and it
is *fully* blocked (IsCurrentlyReschedulable: Karpenter does not make room for it) when a
matching budget has ``maxUnavailable: 0``, ``maxUnavailable: "0%"`` or ``minAvailable: "100%"``.

Not modelled: ``unhealthyPodEvictionPolicy: AlwaysAllow`` (its exemption needs the pod's Ready
condition, which kplan's pods do not carry): such a budget is read as any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kplan.autoscaler.karpenter.disruption.pod import is_disruptable, is_evictable, is_reschedulable
from kplan.model.objects import Pod, PodDisruptionBudget
from kplan.model.selectors import selector_matches


@dataclass(frozen=True)
class Limit:
    key: str
    budget: PodDisruptionBudget
    disruptions_allowed: int

    @property
    def fully_blocking(self) -> bool:
        b = self.budget
        return b.max_unavailable == 0 or b.max_unavailable == "0%" or b.min_available == "100%"


class Limits:
    """pdb.Limits: every budget of the cluster with its allowance."""

    def __init__(self, budgets: Sequence[PodDisruptionBudget], allowed: Mapping[tuple[str, str], int]) -> None:
        self.items = tuple(Limit(f"{b.namespace}/{b.name}", b,
                                 b.disruptions_allowed if b.disruptions_allowed is not None
                                 else allowed.get((b.namespace, b.name), 0)) for b in budgets)

    def matching(self, pod: Pod) -> list[Limit]:
        return [limit for limit in self.items if limit.budget.namespace == pod.namespace
                and limit.budget.selector is not None
                and (limit.budget.selector.is_empty or selector_matches(limit.budget.selector, pod.labels))]

    def _blocking(self, pod: Pod, now: float, fully: bool) -> list[str]:
        if not is_evictable(pod, now):
            return []
        matching = self.matching(pod)
        if len(matching) > 1:
            return [m.key for m in matching]
        for m in matching:
            if (m.fully_blocking if fully else m.disruptions_allowed == 0):
                return [m.key]
        return []

    def can_evict_pods(self, pods: Sequence[Pod], now: float) -> list[str]:
        """CanEvictPods: the keys of the budgets that stop the first blocked pod ([] when none)."""
        for pod in pods:
            keys = self._blocking(pod, now, fully=False)
            if keys:
                return keys
        return []

    def is_currently_reschedulable(self, pod: Pod, now: float) -> bool:
        return is_reschedulable(pod) and is_disruptable(pod, now) and not self._blocking(pod, now, fully=True)
