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


@dataclass(frozen=True)
class Placed(Generic[T]):
    """What a probe of ``fewest_for_most`` found at one count."""

    #: pods placed at this count
    placed: int
    #: every pod that can fit is placed: more nodes cannot place more
    done: bool
    #: a pod still pending waits for room (an added node rejects it only for its resources): more
    #: nodes may still place it even though this count placed no more than the one before
    waiting: bool
    value: T


def fewest_for_most(probe: Callable[[int], Placed[T]], limit: int, start: int = 0, first: int | None = None,
                    stop_early: bool = True) -> SearchResult[T]:
    """The smallest count in [start, limit] that places as many pods as the search finds any
    count placing, assuming more nodes never place fewer pods.

    The exponential phase (start, then start+1, start+2, start+4, …; from ``first`` on, a lower
    bound of the count that places every pod, when given: first, first+1, first+3, …) ends at the first count where
    ``done``, at the limit, or — with ``stop_early`` — at the first count that places no more
    pods than the count probed before it while no pod waits for room: more nodes no longer help,
    and the answer is at most that earlier count. The binary phase then bisects between the
    last count that placed fewer and the first that placed the most. ``probes`` maps each count
    probed to whether it was ``done``; the answer's count is None when no count places more
    pods than ``start``.
    """
    if limit < start:
        raise ValueError(f"limit {limit} is below start {start}")
    seen: dict[int, Placed[T]] = {}
    probes: dict[int, bool] = {}

    def at(k: int) -> Placed[T]:
        if k not in seen:
            seen[k] = probe(k)
            probes[k] = seen[k].done
        return seen[k]

    initial = at(start)
    if initial.done:
        return SearchResult(start, initial.value, probes)
    origin = start if first is None or first <= start + 1 else first - 1
    prev, step = start, 1
    while True:
        k = min(origin + step, limit)
        got = at(k)
        if got.done or k >= limit:
            break
        if stop_early and got.placed <= seen[prev].placed and not got.waiting:
            break
        prev, step = k, step * 2
    best = max(p.placed for p in seen.values())
    high = min(k for k, p in seen.items() if p.placed >= best)
    below = [k for k, p in seen.items() if p.placed < best and k < high]
    low = max(below) if below else start
    if first is not None and seen[high].done:
        low = max(low, min(first - 1, high - 1))  # fewer than ``first`` cannot place every pod
    while high - low > 1:
        mid = (low + high) // 2
        if at(mid).placed >= best:
            high = mid
        else:
            low = mid
    if seen[high].placed <= initial.placed:
        return SearchResult(None, seen[max(seen)].value, probes)
    return SearchResult(high, seen[high].value, probes)
