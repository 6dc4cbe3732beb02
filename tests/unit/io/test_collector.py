"""kplan.io.collector: what a local sweep worker does with the inputs it has just unpickled."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from kplan.io.collector import freeze_alive


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()  # what earlier loading froze in this process goes back, and again afterwards
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("unfrozen")
def test_what_is_alive_is_frozen_out_of_later_collections_and_cyclic_garbage_is_freed_first() -> None:
    kept = [Node() for _ in range(100)]
    dropped = Node()
    dropped.other = Node()
    dropped.other.other = dropped  # a cycle only the cyclic collector frees
    gone = weakref.ref(dropped)
    del dropped
    frozen = freeze_alive()
    assert gone() is None, "garbage must be collected before freezing, or it would be kept for good"
    assert frozen == gc.get_freeze_count() > len(kept)
    later = Node()
    tracked = {id(o) for o in gc.get_objects()}
    assert not any(id(o) in tracked for o in kept), "a frozen object is still walked by collections"
    assert id(later) in tracked, "objects made afterwards are collected as usual"
