"""PodCount: 100 × (1 − pods/allowed), rounded down; kplan's own plugin."""

from __future__ import annotations

import numpy as np
import pytest
from extra_builders import build, cluster, explain_by_name, node, pod, score_by_name

from kplan.framework.registry import ArgsError
from kplan.plugins.extra.podcount import PodCount, decode_args, pod_count_scores, validate_args

CASES = [
    # (id, pods running, allowed pods, expected score)
    ("an empty node scores 100", 0, 110, 100),
    ("3 of 110 pods scores 97, 97.27 rounded down", 3, 110, 97),
    ("1 of 3 pods scores 66, 66.67 rounded down, not 67", 1, 3, 66),
    ("2 of 3 pods scores 33, 33.33 rounded down", 2, 3, 33),
    ("half full scores 50", 55, 110, 50),
    ("109 of 110 pods scores 0, 0.9 rounded down", 109, 110, 0),
    ("a full node scores 0", 110, 110, 0),
    ("more pods than allowed (bound by nodeName) scores 0, never negative", 12, 10, 0),
    ("a node that allows no pods scores 0", 0, 0, 0),
]


@pytest.mark.parametrize("running,allowed,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_formula(running: int, allowed: int, want: int) -> None:
    got = pod_count_scores(np.array([running], dtype=np.int64), np.array([allowed], dtype=np.int64))
    assert got.tolist() == [want]


def test_scores_every_node_by_its_own_pods_and_ignores_the_incoming_pod() -> None:
    placed = [(pod(f"p{i}"), "busy") for i in range(3)] + [(pod("q"), "quiet")]
    snap = cluster([node("busy", pods=4), node("quiet", pods=4), node("empty", pods=4)], placed)
    plugin = build(PodCount, decode_args(None), snap)
    assert score_by_name(plugin, pod("incoming", cpu=4000), snap) == {"busy": 25, "quiet": 75, "empty": 100}


def test_terminating_pods_still_count_as_they_do_for_too_many_pods() -> None:
    snap = cluster([node("a", pods=4)], [(pod("old", deleting=True), "a")])
    assert score_by_name(build(PodCount, decode_args(None), snap), pod("x"), snap) == {"a": 75}


def test_explain_gives_one_line_per_node_starting_with_the_score() -> None:
    snap = cluster([node("a", pods=3), node("none", pods=0)], [(pod("p"), "a")])
    lines = explain_by_name(build(PodCount, decode_args(None), snap), pod("x"), snap)
    assert lines == {"a": "66: 1 of 3 allowed pods running, 100 × 2/3 rounded down",
                     "none": "0: the node allows no pods (allocatable pods is 0)"}


@pytest.mark.parametrize("raw", [None, {}], ids=["no args", "empty args"])
def test_args_are_empty(raw: dict[str, object] | None) -> None:
    assert validate_args(decode_args(raw)) == []


def test_any_args_field_is_unknown() -> None:
    with pytest.raises(ArgsError, match='unknown field "maxPods"'):
        decode_args({"maxPods": 3})
