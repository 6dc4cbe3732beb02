"""The price expander (cluster-autoscaler expander/price/price.go and preferred.go): each option's
score is how well its money is spent times how far its node is from the cluster's preferred node,
lower is better; the options of the lowest score are kept (ties all kept, as a filter of the chain).

- price sub-score: (price of the option's nodes + the stabilisation pod's price) / (price of its
  pods + the stabilisation pod's price); the stabilisation pod asks 500m CPU and 500 MiB.
- unfitness: the larger of preferred CPU / node CPU and node CPU / preferred CPU (capacity), the
  preferred node growing with the cluster's node count (SimplePreferredNodeProvider: 1 core up to 2
  nodes, 2 up to 6, 4 up to 20, 8 up to 60, 16 up to 200, 32 above); it is suppressed for larger
  scale-ups: (unfitness - 1) * (1 - tanh((nodes - 1) / 15)) + 1. A node with a GPU (the
  ``k8s.amazonaws.com/accelerator`` label of the AWS provider, or allocatable ``nvidia.com/gpu``)
  has unfitness 1000 instead, so GPU nodes are picked only when nothing else helps.

kplan's pricing model: a node's price is its group's ``pricePerHour``, else the cheapest on-demand
offering of its ``instanceType`` in ``--instance-types``; a group with neither has no price and its
option is skipped (upstream skips an option whose node price fails). A pod's price is the AWS
provider's (cloudprovider/aws/aws_price_model.go): its CPU cores at 0.02775 $/h, its GiB of memory
at 0.0069375 $/h (an m4.large's $0.111 shared half and half over 2 cores and 8 GiB) and its
``nvidia.com/gpu`` at 1.21 $/h less a fifth of the price of 16 such cores and 122 GiB. Prices are
for one hour, as upstream prices the hour from now.

Deviations: the pods' requests are kplan's effective requests (init containers and overhead
included; upstream sums the containers' requests), as for least-waste. Every kplan node group
exists, so upstream's doubling for groups yet to be created never applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from kplan.autoscaler.clusterautoscaler.expander import Option
from kplan.model.objects import Node, Pod

GIB = 1024 * 1024 * 1024
MIB = 1024 * 1024
#: cloudprovider/aws/aws_price_model.go
CPU_PRICE_PER_HOUR = 0.111 * 0.5 / 2
MEMORY_PRICE_PER_HOUR_PER_GB = 0.111 * 0.5 / 8
GPU_PRICE_PER_HOUR = 1.21 - (((16 * CPU_PRICE_PER_HOUR) + (122 * MEMORY_PRICE_PER_HOUR_PER_GB)) * 0.2)
GPU_RESOURCE = "nvidia.com/gpu"
#: the AWS provider's GPU label (cloudprovider/aws: GPULabel)
GPU_LABEL = "k8s.amazonaws.com/accelerator"
GPU_UNFITNESS_OVERRIDE = 1000.0
#: the stabilisation pod of price.go: 500m CPU, 500 MiB
STABILIZATION_CPU, STABILIZATION_MEM = 500, 500 * MIB


def resources_price(cpu_milli: int, memory: int, gpus: int = 0) -> float:
    """One hour of these requests as the AWS pricing model prices them (getBasePrice)."""
    return (cpu_milli / 1000.0 * CPU_PRICE_PER_HOUR + gpus * GPU_PRICE_PER_HOUR
            + memory / GIB * MEMORY_PRICE_PER_HOUR_PER_GB)


def pod_price(pod: Pod) -> float:
    r = pod.requests
    return resources_price(r.get("cpu", 0), r.get("memory", 0), r.get(GPU_RESOURCE, 0))


def preferred_cpu(cluster_nodes: int) -> int:
    """The preferred node's milli-CPU for a cluster of this many nodes (SimplePreferredNodeProvider:
    the node size doubles each time the cluster grows threefold)."""
    for upto, cores in ((2, 1), (6, 2), (20, 4), (60, 8), (200, 16)):
        if cluster_nodes <= upto:
            return cores * 1000
    return 32 * 1000


def _div(a: float, b: float) -> float:
    # float64 division as upstream: x/0 is +Inf (CPU counts are never negative)
    if b == 0:
        return math.nan if a == 0 else math.inf
    return a / b


def node_unfitness(preferred_milli: int, node: Node) -> float:
    """SimpleNodeUnfitness: how many times larger or smaller the node's CPU capacity is than the
    preferred node's."""
    cpu = (node.capacity or node.allocatable).get("cpu", 0)
    return max(_div(preferred_milli, cpu), _div(cpu, preferred_milli))


def node_has_gpu(node: Node) -> bool:
    return GPU_LABEL in node.labels or node.allocatable.get(GPU_RESOURCE, 0) > 0


def option_score(option: Option, node_price: float, pods_price: float, stabilization: float,
                 preferred_milli: int) -> float | None:
    """The option's score (lower is better); None without a template node."""
    if option.template is None:
        return None
    sub_score = (node_price * option.node_count + stabilization) / (pods_price + stabilization)
    unfitness = node_unfitness(preferred_milli, option.template)
    suppressed = (unfitness - 1.0) * (1.0 - math.tanh((option.node_count - 1) / 15.0)) + 1.0
    if node_has_gpu(option.template):
        suppressed = GPU_UNFITNESS_OVERRIDE
    return suppressed * sub_score


def best_priced(options: Sequence[Option], node_price: Callable[[Option], float | None],
                pod_price: Callable[[Pod], float | None], stabilization: float, preferred_milli: int) -> list[Option]:
    """The options of the lowest score. An option whose node or one of whose pods has no price, or
    without a template, is skipped, as upstream skips one whose pricing fails."""
    best: list[Option] = []
    least = 0.0
    for option in options:
        price = node_price(option)
        if price is None:
            continue
        each = [pod_price(p) for p in option.pods]
        if any(x is None for x in each):
            continue
        score = option_score(option, price, sum(x for x in each if x is not None), stabilization, preferred_milli)
        if score is None:
            continue
        if not best or least > score:
            best, least = [option], score
        elif score == least:
            best.append(option)
    return best


def cheapest(options: Sequence[Option], prices: Mapping[str, float | None], cluster_nodes: int) -> list[Option]:
    """The price expander with kplan's pricing model: ``prices`` by node group (None: unknown)."""
    return best_priced(options, lambda o: prices.get(o.node_group), pod_price,
                       resources_price(STABILIZATION_CPU, STABILIZATION_MEM), preferred_cpu(cluster_nodes))


def cheapest_score(option: Option, prices: Mapping[str, float | None], cluster_nodes: int) -> float | None:
    """The option's score under kplan's pricing model (None: no price or no template)."""
    price = prices.get(option.node_group)
    if price is None:
        return None
    return option_score(option, price, sum(pod_price(p) for p in option.pods),
                        resources_price(STABILIZATION_CPU, STABILIZATION_MEM), preferred_cpu(cluster_nodes))
