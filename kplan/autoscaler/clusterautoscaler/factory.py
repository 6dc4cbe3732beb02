"""The expanders by name, as ``--expander`` takes them (cluster-autoscaler expander/factory/
expander_factory.go). ``price`` is not modelled yet."""

from __future__ import annotations

import random as _random
import re
from collections.abc import Mapping, Sequence

from kplan.autoscaler.clusterautoscaler.expander import Filter, Option, random_choice
from kplan.autoscaler.clusterautoscaler.leastnodes import least_nodes
from kplan.autoscaler.clusterautoscaler.mostpods import most_pods
from kplan.autoscaler.clusterautoscaler.priority import highest_priority
from kplan.autoscaler.clusterautoscaler.waste import least_waste

EXPANDERS = ("least-waste", "most-pods", "least-nodes", "priority", "random")


def make_filter(name: str, rng: _random.Random, priorities: Mapping[int, Sequence[str]]) -> Filter:
    if name == "least-waste":
        return least_waste
    if name == "most-pods":
        return most_pods
    if name == "least-nodes":
        return least_nodes
    if name == "priority":
        compiled = {prio: [re.compile(p) for p in patterns] for prio, patterns in priorities.items()}
        return lambda options: highest_priority(options, compiled)
    if name == "random":
        def pick(options: Sequence[Option]) -> list[Option]:
            chosen = random_choice(options, rng)
            return [] if chosen is None else [chosen]
        return pick
    raise ValueError(name)
