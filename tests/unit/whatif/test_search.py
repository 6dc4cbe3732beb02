"""smallest_passing: exponential then binary search over a monotone predicate."""

from __future__ import annotations

import math

import pytest

from kplan.whatif.search import Placed, fewest_for_most, smallest_passing


def threshold(t: int | None, calls: list[int]):
    """A probe that passes from count ``t`` on (never when None) and records each call."""
    def probe(k: int) -> tuple[bool, str]:
        calls.append(k)
        return (t is not None and k >= t), f"run with {k}"
    return probe


CASES = [
    # (id, threshold, limit, start, expected count)
    ("already fits with no change", 0, 100, 0, 0),
    ("one node is enough", 1, 100, 0, 1),
    ("three nodes: between two doublings", 3, 100, 0, 3),
    ("exactly a power of two", 8, 100, 0, 8),
    ("just above a power of two", 9, 100, 0, 9),
    ("a large count", 777, 1024, 0, 777),
    ("the limit itself is the answer", 100, 100, 0, 100),
    ("nothing up to the limit helps", None, 100, 0, None),
    ("needs more than the limit", 101, 100, 0, None),
    ("search starting at one", 5, 64, 1, 5),
    ("start already passes", 1, 64, 1, 1),
]


@pytest.mark.parametrize("threshold_at, limit, start, expected",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_finds_the_smallest_passing_count(threshold_at, limit, start, expected):
    calls: list[int] = []
    found = smallest_passing(threshold(threshold_at, calls), limit, start)
    assert found.count == expected
    if expected is not None:
        assert found.value == f"run with {expected}"
    assert len(calls) == len(set(calls)), "a count is never probed twice"
    assert list(found.probes) == calls


@pytest.mark.parametrize("answer", [2, 5, 17, 100, 513, 1000])
def test_probes_grow_with_the_log_of_the_answer(answer):
    calls: list[int] = []
    smallest_passing(threshold(answer, calls), 4096)
    assert len(calls) <= 2 * math.ceil(math.log2(answer)) + 2


def test_returns_the_value_of_the_limit_probe_when_nothing_passes():
    found = smallest_passing(threshold(None, []), 10)
    assert found.count is None
    assert found.value == "run with 10"


def test_a_limit_below_the_start_is_a_programming_error():
    with pytest.raises(ValueError):
        smallest_passing(threshold(0, []), 0, start=1)


# ---------------------------------------------------------------------------- fewest_for_most

def placing(curve, calls: list[int], waiting_until: int = -1, total: int | None = None):
    """A probe placing ``curve(k)`` pods with k nodes; done when that is ``total``; a pod waits
    for room while k < ``waiting_until``."""
    def probe(k: int) -> Placed[str]:
        calls.append(k)
        placed = curve(k)
        return Placed(placed, total is not None and placed >= total, k < waiting_until, f"run with {k}")
    return probe


PLATEAU_CASES = [
    # (id, curve, total, waiting_until, first, stop_early, limit, expected count, expected probes)
    ("every pod placed with three nodes", lambda k: min(k, 3), 3, -1, None, True, 64, 3, [0, 1, 2, 4, 3]),
    ("one node places the only pod that can fit; two place no more: stop", lambda k: min(k, 1), 5, -1, None, True,
     64, 1, [0, 1, 2]),
    ("without the early stop the search runs to the limit", lambda k: min(k, 1), 5, -1, None, False, 64, 1,
     [0, 1, 2, 4, 8, 16, 32, 64]),
    ("a pod waiting for room keeps the search going past a plateau", lambda k: 1 if k < 8 else 2, 2, 8, None, True,
     64, 8, [0, 1, 2, 4, 8, 6, 7]),
    ("no count places a pod", lambda k: 0, 5, -1, None, True, 64, None, [0, 1]),
    ("a plateau after growth ends at its first count", lambda k: min(k, 4), 9, -1, None, True, 64, 4,
     [0, 1, 2, 4, 8, 3]),
    ("a lower bound skips the counts below it", lambda k: min(k, 6), 6, -1, 5, True, 64, 6, [0, 5, 6]),
    ("the limit reached places the most", lambda k: k, 100, -1, None, True, 10, 10, [0, 1, 2, 4, 8, 10, 9]),
]


@pytest.mark.parametrize("curve, total, waiting_until, first, stop_early, limit, expected, probed",
                         [c[1:] for c in PLATEAU_CASES], ids=[c[0] for c in PLATEAU_CASES])
def test_fewest_for_most(curve, total, waiting_until, first, stop_early, limit, expected, probed):
    calls: list[int] = []
    found = fewest_for_most(placing(curve, calls, waiting_until, total), limit, first=first, stop_early=stop_early)
    assert found.count == expected
    assert calls == probed
    assert len(calls) == len(set(calls)), "a count is never probed twice"
    if expected is not None:
        assert found.value == f"run with {expected}"
