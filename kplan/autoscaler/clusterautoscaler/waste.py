"""The least-waste expander (cluster-autoscaler expander/waste/waste.go): the options whose new nodes
leave the smallest share of their CPU and memory capacity unrequested by the option's pods (the two
shares summed); ties all kept. An option without a template node is skipped (upstream: no node info).

Deviation: the pods' requests are kplan's effective requests (the larger of the containers' sum and
any init container, plus overhead); upstream sums the containers' requests only. They differ only for
pods whose init containers request more than their containers, or with a RuntimeClass overhead.
"""

from __future__ import annotations

from collections.abc import Sequence

from kplan.autoscaler.clusterautoscaler.expander import Option


def wasted_score(option: Option) -> float | None:
    """The option's wasted CPU share plus wasted memory share; None without a template."""
    if option.template is None:
        return None
    capacity = option.template.capacity or option.template.allocatable
    avail_cpu = capacity.get("cpu", 0) * option.node_count
    avail_mem = capacity.get("memory", 0) * option.node_count
    req_cpu = sum(p.requests.get("cpu", 0) for p in option.pods)
    req_mem = sum(p.requests.get("memory", 0) for p in option.pods)
    return _share(avail_cpu - req_cpu, avail_cpu) + _share(avail_mem - req_mem, avail_mem)


def _share(part: int, whole: int) -> float:
    # float64 division as upstream: x/0 is ±Inf or NaN there
    if whole == 0:
        return float("nan") if part == 0 else (float("inf") if part > 0 else float("-inf"))
    return part / whole


def least_waste(options: Sequence[Option]) -> list[Option]:
    least = 0.0
    best: list[Option] | None = None
    for option in options:
        score = wasted_score(option)
        if score is None:
            continue
        if best is not None and score == least:
            best.append(option)
        if best is None or score < least:
            least = score
            best = [option]
    return best or []
