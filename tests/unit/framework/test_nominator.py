"""The Nominator's nominated pods by class (Framework.run_filter_plugins_with_nominated_pods and the
preemption dry run count them for the selective-state filters): the per-table slots it keeps
current as nominations change give what the node lists give."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.cluster.node_table import NodeTable
from kplan.framework.runtime import NominatedClasses, Nominator
from tests.builders import make_node, make_pod

NODES = [make_node(f"n{i}").build() for i in range(12)]
PODS = [make_pod(f"p{k}").labels(app=("web", "db", "web")[k % 3]).priority(k % 3 * 10).build() for k in range(10)]


def by_class(found: NominatedClasses) -> dict[tuple[int, str], int]:
    """(position, pod name of the example's labels) -> count, zeros left out."""
    out: dict[tuple[int, str], int] = {}
    for i, k in enumerate(found.positions.tolist()):
        for j, example in enumerate(found.examples):
            if found.counts[i, j]:
                key = (k, example.labels["app"])
                out[key] = out.get(key, 0) + int(found.counts[i, j])
    return out


def by_lists(nominator: Nominator, pod: object, table: NodeTable, rows: np.ndarray) -> dict[tuple[int, str], int]:
    out: dict[tuple[int, str], int] = {}
    for k, r in enumerate(rows.tolist()):
        for p in nominator.yielding_to(pod, table.names[r]):  # type: ignore[arg-type]
            key = (k, p.labels["app"])
            out[key] = out.get(key, 0) + 1
    return out


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(-1, 11)), min_size=1, max_size=30),
       st.integers(0, 9), st.lists(st.integers(0, 11), min_size=9, max_size=12, unique=True))
def test_nominated_pods_by_class_follow_every_nomination_change(
        changes: list[tuple[int, int]], asking: int, rows: list[int]) -> None:
    table = NodeTable(NODES)
    nominator = Nominator()
    pod = PODS[asking]
    wanted = np.array(rows, dtype=np.int64)
    for k, (which, node) in enumerate(changes):
        if node < 0:
            nominator.remove(PODS[which])
        else:
            nominator.add(PODS[which], NODES[node].name)
        if k == len(changes) // 2:
            nominator.classes(pod, table, wanted)   # the slots exist from here on, and follow the rest
    found = nominator.classes(pod, table, wanted)
    assert by_class(found) == by_lists(nominator, pod, table, wanted)
    # the node lists (a few rows) agree too
    few = wanted[:3]
    assert by_class(nominator.classes(pod, table, few)) == by_lists(nominator, pod, table, few)
