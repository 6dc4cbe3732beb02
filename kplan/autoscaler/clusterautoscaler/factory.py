"""The expanders by name, as ``--expander`` takes them (cluster-autoscaler expander/factory/
expander_factory.go). Each is wrapped to the chain's Filter shape (options, cluster view)."""

from __future__ import annotations

import random as _random
import re
from collections.abc import Mapping, Sequence

from kplan.autoscaler.clusterautoscaler.expander import ClusterView, Filter, Option, random_choice
from kplan.autoscaler.clusterautoscaler.leastnodes import least_nodes
from kplan.autoscaler.clusterautoscaler.mostpods import most_pods
from kplan.autoscaler.clusterautoscaler.price import cheapest
from kplan.autoscaler.clusterautoscaler.priority import highest_priority
from kplan.autoscaler.clusterautoscaler.waste import least_waste

EXPANDERS = ("least-waste", "most-pods", "least-nodes", "price", "priority", "random")


def make_filter(name: str, rng: _random.Random, priorities: Mapping[int, Sequence[str]],
                prices: Mapping[str, float | None]) -> Filter:
    if name == "least-waste":
        return lambda options, view: least_waste(options)
    if name == "most-pods":
        return lambda options, view: most_pods(options)
    if name == "least-nodes":
        return lambda options, view: least_nodes(options)
    if name == "price":
        return lambda options, view: cheapest(options, prices, view.node_count)
    if name == "priority":
        compiled = {prio: [re.compile(p) for p in patterns] for prio, patterns in priorities.items()}
        return lambda options, view: highest_priority(options, compiled)
    if name == "random":
        def pick(options: Sequence[Option], view: ClusterView) -> list[Option]:
            chosen = random_choice(options, rng)
            return [] if chosen is None else [chosen]
        return pick
    raise ValueError(name)
