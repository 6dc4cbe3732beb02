"""``--balance-similar-node-groups`` (cluster-autoscaler processors/nodegroupset: compare_nodegroups.go
and balancing_processor.go).

Two node groups are similar when their template nodes have the same capacity (memory within
1.5 %, every other resource exactly), allocatable and free resources (allocatable less what the
template's pods request) within 5 % of each other, resource by resource, and the same labels but for
the hostname, zone and region labels and a few provider labels. A scale-up of the chosen group is
shared with the similar groups that could take all of its pods, smallest group first, each up to
its maxSize.

Deviation: upstream sorts the groups by size with sort.Slice (not stable); kplan keeps the chosen
group first, then the others in the file's order, among groups of one size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kplan.model.objects import Node, Pod

#: labels the comparison ignores (BasicIgnoredLabels)
IGNORED_LABELS = frozenset({
    "kubernetes.io/hostname", "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region", "beta.kubernetes.io/fluentd-ds-ready",
    "kops.k8s.io/instancegroup", "topology.ebs.csi.aws.com/zone", "topology.gke.io/zone",
    "topology.disk.csi.azure.com/zone"})
#: --memory-difference-ratio, --max-allocatable-difference-ratio, --max-free-difference-ratio defaults
MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO = 0.015
MAX_ALLOCATABLE_DIFFERENCE_RATIO = 0.05
MAX_FREE_DIFFERENCE_RATIO = 0.05


def within_tolerance(a: int, b: int, ratio: float) -> bool:
    larger, smaller = float(max(a, b)), float(min(a, b))
    return larger - smaller <= larger * ratio


def _free(node: Node, pods: Sequence[Pod]) -> dict[str, int]:
    requested: dict[str, int] = {}
    for p in pods:
        for r, v in p.requests.items():
            requested[r] = requested.get(r, 0) + v
    return {r: node.allocatable.get(r, 0) - v for r, v in requested.items()}


def _maps_within(m1: Mapping[str, int], m2: Mapping[str, int], ratio: float) -> bool:
    return set(m1) == set(m2) and all(within_tolerance(m1[r], m2[r], ratio) for r in m1)


def is_similar(n1: Node, pods1: Sequence[Pod], n2: Node, pods2: Sequence[Pod]) -> bool:
    """IsCloudProviderNodeInfoSimilar on two template nodes and their pods."""
    if set(n1.capacity) != set(n2.capacity):
        return False
    for r, v in n1.capacity.items():
        if r == "memory":
            if not within_tolerance(v, n2.capacity[r], MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO):
                return False
        elif v != n2.capacity[r]:
            return False
    if not _maps_within(n1.allocatable, n2.allocatable, MAX_ALLOCATABLE_DIFFERENCE_RATIO):
        return False
    if not _maps_within(_free(n1, pods1), _free(n2, pods2), MAX_FREE_DIFFERENCE_RATIO):
        return False
    l1 = {k: v for k, v in n1.labels.items() if k not in IGNORED_LABELS}
    l2 = {k: v for k, v in n2.labels.items() if k not in IGNORED_LABELS}
    return l1 == l2


def balance_scale_up(groups: Sequence[tuple[str, int, int]], new_nodes: int) -> dict[str, int]:
    """BalanceScaleUpBetweenGroups: ``new_nodes`` shared among ``groups`` (name, size, maxSize),
    one at a time to the smallest group, each up to its maxSize (the total capped at their room).
    Returns group → nodes added, for the groups that grow."""
    sizes = {name: size for name, size, top in groups if size < top}
    tops = {name: top for name, _, top in groups}
    added: dict[str, int] = {}
    left = min(new_nodes, sum(tops[n] - s for n, s in sizes.items()))
    order = list(sizes)  # the chosen group first, then the file's order
    while left > 0:
        open_groups = [n for n in order if sizes[n] < tops[n]]
        smallest = min(open_groups, key=lambda n: sizes[n])
        sizes[smallest] += 1
        added[smallest] = added.get(smallest, 0) + 1
        left -= 1
    return added
