"""kplan.autoscaler.gosort leaves equal elements where Go's sort.Slice leaves them.

gosort_cases.json was written by a Go 1.26 program that sorted (key, position) pairs by key only
with sort.Slice, for lengths 0 to 333 with few and many distinct keys, in random, ascending and
descending input order; ``order`` is the positions in the order Go left them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kplan.autoscaler.gosort import sort_slice

CASES = json.loads((Path(__file__).parent / "gosort_cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{len(c['keys'])} items, {len(set(c['keys']))} distinct keys #{i}"
                                             for i, c in enumerate(CASES)])
def test_ties_fall_where_go_leaves_them(case: dict[str, list[int]]) -> None:
    items = list(enumerate(case["keys"]))
    sort_slice(items, lambda a, b: a[1] < b[1])
    assert [p for p, _ in items] == case["order"]


def test_more_than_twelve_equal_keys_is_not_stable() -> None:
    """The property that makes the port necessary: a stable sort would keep 0..n-1."""
    assert any(c["order"] != sorted(c["order"], key=lambda p: (c["keys"][p], p)) for c in CASES)
