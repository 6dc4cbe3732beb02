"""Expansion options and the expanders that choose among them (cluster-autoscaler expander/expander.go
and expander/factory/chain.go).

An option is one node group grown by a number of nodes, with the pods those nodes would take. Each
expander named in ``--expander`` (a comma-separated chain, default ``least-waste``) is a filter that
keeps its best options; the chain stops at the first filter that leaves exactly one, and otherwise
the random strategy picks among what is left (seeded: ``--seed``). Filters: least-waste
(waste.py), most-pods (mostpods.py), least-nodes (leastnodes.py), price (price.py), priority
(priority.py), random. A filter reads the options and the cluster's view (ClusterView: what
upstream's expanders read from the cluster besides the options, the node count for price's
preferred node).
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kplan.errors import InputError
from kplan.model.objects import Node, Pod


@dataclass(frozen=True)
class Option:
    node_group: str
    node_count: int
    pods: tuple[Pod, ...] = ()
    #: the group's template node (least-waste reads its capacity)
    template: Node | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ClusterView:
    #: the cluster's nodes now (the price expander's preferred node grows with it)
    node_count: int = 0


#: an expander's filter: the options it keeps, in their order
Filter = Callable[[Sequence[Option], ClusterView], list[Option]]

DEFAULT_EXPANDER = "least-waste"


def random_choice(options: Sequence[Option], rng: _random.Random) -> Option | None:
    """The random strategy (expander/random/random.go): one option drawn uniformly; None when there is none."""
    if not options:
        return None
    return options[rng.randrange(len(options))]


@dataclass
class Chain:
    """``--expander a,b,…``: the filters in order, then the random fallback."""

    names: tuple[str, ...]
    filters: tuple[Filter, ...]
    rng: _random.Random
    #: node group → dollars per hour of one node for the price expander (None: unknown)
    prices: Mapping[str, float | None] = field(default_factory=dict)

    def best_option(self, options: Sequence[Option], view: ClusterView = ClusterView()) -> tuple[Option | None, str]:
        """The chosen option and which expander decided (the one that left one option, or "random")."""
        left = list(options)
        for name, keep in zip(self.names, self.filters, strict=True):
            left = keep(left, view)
            if len(left) == 1:
                return left[0], name
        return random_choice(left, self.rng), "random"


def parse_expanders(value: str) -> tuple[str, ...]:
    """The names of ``--expander`` (comma-separated, as the flag takes them); InputError for an
    unknown or repeated name (expander_factory.go refuses both)."""
    from kplan.autoscaler.clusterautoscaler.factory import EXPANDERS

    names = tuple(n.strip() for n in value.split(","))
    seen: set[str] = set()
    for n in names:
        if n not in EXPANDERS:
            raise InputError(f"--expander {value}: unknown expander {n!r} (expected one of {', '.join(EXPANDERS)})")
        if n in seen:
            raise InputError(f"--expander {value}: expander {n} cannot be specified more than once")
        seen.add(n)
    return names


def build_chain(names: Sequence[str], *, seed: int, priorities: Mapping[int, Sequence[str]] | None = None,
                prices: Mapping[str, float | None] | None = None) -> Chain:
    from kplan.autoscaler.clusterautoscaler.factory import make_filter

    rng = _random.Random(seed)
    prices = dict(prices or {})
    return Chain(tuple(names), tuple(make_filter(n, rng, priorities or {}, prices) for n in names), rng, prices)
