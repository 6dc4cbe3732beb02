"""VolumeBinding's record of the nodes that passed Filter reads as the map it stands for."""

from __future__ import annotations

from typing import Any

import numpy as np

from kplan.plugins.volumebinding import PodVolumes, _PassedNodes
from tests.builders import make_node, make_snapshot


class FakeUnbound:
    """Stands for _Unbound: what it found for row position k, tagged with the call."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def volumes(self, k: int) -> Any:
        out = PodVolumes()
        out.provision = [f"{self.tag}:{k}"]  # type: ignore[list-item]
        return out


def test_reads_follow_map_assignment_order() -> None:
    table = make_snapshot([make_node(n) for n in ("a", "b", "c")]).table
    passed = _PassedNodes()
    passed.add(table, np.array([0, 1, 2]), np.array([True, True, False]), FakeUnbound("first"))  # type: ignore[arg-type]
    passed.add(table, np.array([2, 1]), np.array([True, False]), FakeUnbound("second"))  # type: ignore[arg-type]
    assert passed["a"].provision == ["first:0"]
    assert passed["b"].provision == ["first:1"]      # failing later keeps the earlier entry
    assert passed["c"].provision == ["second:0"]     # position in that call's rows
    assert "d" not in passed and passed.get("d") is None


def test_an_entry_is_one_object_until_a_later_call_replaces_it() -> None:
    table = make_snapshot([make_node(n) for n in ("a", "b")]).table
    passed = _PassedNodes()
    passed.add(table, np.array([0, 1]), np.array([True, True]), FakeUnbound("first"))  # type: ignore[arg-type]
    entry = passed["a"]
    entry.static = ["reserved"]  # type: ignore[list-item]  # Reserve changes the entry in place
    assert passed["a"] is entry and passed["a"].static == ["reserved"]
    passed.add(table, np.array([1]), np.array([True]), FakeUnbound("second"))  # type: ignore[arg-type]
    assert passed["a"] is entry
    passed.add(table, np.array([0]), np.array([True]), FakeUnbound("third"))  # type: ignore[arg-type]
    assert passed["a"].provision == ["third:0"]


def test_a_fork_is_read_by_its_own_row_numbers() -> None:
    table = make_snapshot([make_node(n) for n in ("a", "b", "c")]).table
    fork = table.take([2, 0])
    passed = _PassedNodes()
    passed.add(fork, np.array([0, 1]), np.array([True, False]), None)
    assert passed["c"] == PodVolumes() and "a" not in passed
