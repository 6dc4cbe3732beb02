"""How many nodes of a node group the pods need (cluster-autoscaler
estimator/binpacking_estimator.go, BinpackingNodeEstimator.Estimate): first-fit decreasing.

The pod equivalence groups are ordered by the DecreasingPodOrderer (estimator/decreasing_pod_orderer.go:
a group's first pod's CPU and memory requests as shares of the template node's allocatable,
summed; largest first). For each group, its pods go first onto the nodes this estimation added
(the first that fits, in the order they were added) until one does not fit anywhere; the rest go
onto the last node added, and when a pod does not fit there a new node is added from the template
— unless the last node added is still empty (a pod that does not fit an empty template node fits
no new node: the group's remaining pods are dropped) or the limiter says no. A pod that does not
fit the node just added (a zonal topology spread, say) stops the group. The answer is the number of
nodes that received a pod, and the pods placed.

Deviation: upstream orders the groups with sort.Slice (not stable); kplan's sort is stable, so
groups of equal score keep their order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kplan.autoscaler.clusterautoscaler.predicatechecker import PredicateChecker
from kplan.autoscaler.clusterautoscaler.threshold_based_limiter import ThresholdBasedLimiter
from kplan.model.objects import Node, Pod


@dataclass(frozen=True)
class PodEquivalenceGroup:
    """Pods the autoscaler treats as one (same controller, same spec): the estimator tries them in turn."""

    pods: tuple[Pod, ...]


@dataclass
class Estimate:
    node_count: int
    #: the pods the new nodes take, in the order they were placed
    pods: list[Pod] = field(default_factory=list)


def pod_score(pod: Pod, template: Node) -> float:
    """DecreasingPodOrderer's score: the pod's CPU and memory requests as shares of the template's
    allocatable (a resource the template lacks counts 0), summed."""
    score = 0.0
    for resource in ("cpu", "memory"):
        have = template.allocatable.get(resource, 0)
        if have > 0:
            score += pod.requests.get(resource, 0) / have
    return score


def decreasing_order(groups: Sequence[PodEquivalenceGroup], template: Node) -> list[PodEquivalenceGroup]:
    return sorted((g for g in groups if g.pods), key=lambda g: -pod_score(g.pods[0], template))


def estimate(groups: Sequence[PodEquivalenceGroup], template: Node, checker: PredicateChecker,
             new_node: Callable[[int], tuple[Node, Sequence[Pod]]],
             limiter: ThresholdBasedLimiter | None = None) -> Estimate:
    """The nodes of ``template`` that ``groups`` need on ``checker``'s cluster (module docstring).
    ``new_node(i)``: the i-th node of the estimation (0 first) and its DaemonSet pods, added to
    ``checker`` (which the caller discards afterwards: upstream forks and reverts its snapshot)."""
    limiter = limiter or ThresholdBasedLimiter()
    limiter.start_estimation()
    added: list[str] = []
    with_pods: set[str] = set()
    placed: list[Pod] = []

    def bind(pod: Pod, node: str) -> None:
        checker.add_pod(pod, node)
        with_pods.add(node)
        placed.append(pod)

    for group in decreasing_order(groups, template):
        pods = group.pods
        # onto the nodes added so far, first fit, until a pod fits none
        i = 0
        while i < len(pods):
            node = checker.fitting(pods[i], added)
            if node is None:
                break
            bind(pods[i], node)
            i += 1
        for pod in pods[i:]:
            if added and checker.check(pod, added[-1]):
                bind(pod, added[-1])
                continue
            if added and added[-1] not in with_pods:
                break  # it does not fit an empty template node: no new node helps it
            if not limiter.permission_to_add_node():
                break
            node_obj, daemons = new_node(len(added))
            checker.add_node(node_obj, daemons)
            added.append(node_obj.name)
            if not checker.check(pod, node_obj.name):
                break
            bind(pod, node_obj.name)
    return Estimate(len(with_pods), placed)
