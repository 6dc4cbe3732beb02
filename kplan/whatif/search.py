"""The smallest count that makes a monotone predicate true, probing as few counts as possible.

Each probe is a whole simulation, so the search doubles the count until the predicate holds
(exponential phase) and then bisects between the last failing and the first passing count
(binary phase): about 2·log2(answer) probes. Every probe is remembered, so the caller gets the
value computed at the answer without running it again.

The predicates used (every pending pod fits with k more nodes; a pod is scheduled with k more
nodes) are monotone in practice but not provably so (preemption and score ties can make a
larger cluster place pods differently); the answer is the smallest count at which the probes
of this search succeed, and ``probes`` says which counts were tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class SearchResult(Generic[T]):
    #: the smallest passing count, None when no count up to the limit passes
    count: int | None
    #: what the probe returned at ``count`` (or at the limit when nothing passed)
    value: T | None
    #: count → passed, in the order probed
    probes: dict[int, bool] = field(default_factory=dict)


def smallest_passing(probe: Callable[[int], tuple[bool, T]], limit: int, start: int = 0) -> SearchResult[T]:
    """Smallest k in [start, limit] with ``probe(k)[0]`` true, assuming monotonicity.

    ``probe(k)`` returns (passed, value). ``start`` is probed first (0: "no change needed").
    """
    if limit < start:
        raise ValueError(f"limit {limit} is below start {start}")
    seen: dict[int, tuple[bool, T]] = {}
    probes: dict[int, bool] = {}

    def at(k: int) -> bool:
        if k not in seen:
            seen[k] = probe(k)
            probes[k] = seen[k][0]
        return seen[k][0]

    if at(start):
        return SearchResult(start, seen[start][1], probes)
    low = start  # known to fail
    step = 1
    high = None
    while high is None:
        k = min(start + step, limit)
        if at(k):
            high = k
        elif k >= limit:
            return SearchResult(None, seen[k][1], probes)
        else:
            low = k
            step *= 2
    while high - low > 1:
        mid = (low + high) // 2
        if at(mid):
            high = mid
        else:
            low = mid
    return SearchResult(high, seen[high][1], probes)
