"""Node order and sampling (reference 5.2): the node tree and numFeasibleNodesToFind."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kplan.cluster.snapshot import node_tree_order, zone_key
from kplan.scheduler.cycle import num_feasible_nodes_to_find, rotated_slice
from tests.builders import NodeBuilder, make_node, make_pod, simulate


@pytest.mark.parametrize("n, percentage, expected", [
    pytest.param(50, 0, 50, id="below 100 nodes every node is searched"),
    pytest.param(99, 10, 99, id="below 100 nodes the percentage does not matter"),
    pytest.param(100, 0, 100, id="100 nodes search at least 100"),
    pytest.param(500, 0, 230, id="500 nodes use 46 percent"),
    pytest.param(1000, 0, 420, id="1000 nodes use 42 percent"),
    pytest.param(5000, 0, 500, id="5000 nodes use 10 percent"),
    pytest.param(6000, 0, 300, id="6000 nodes use the 5 percent floor"),
    pytest.param(2000, 10, 200, id="an explicit percentage is applied"),
    pytest.param(2000, 1, 100, id="an explicit percentage never goes below 100 nodes"),
    pytest.param(2000, 100, 2000, id="100 percent searches every node"),
    pytest.param(333, 0, 159, id="the adaptive percentage and the node count are truncated"),
])
def test_num_feasible_nodes_to_find(n: int, percentage: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(n, percentage) == expected


def names(nodes: list[NodeBuilder]) -> list[str]:
    return [n.name for n in node_tree_order([b.build() for b in nodes])]


@pytest.mark.parametrize("nodes, order", [
    pytest.param([make_node("c1").zone("c"), make_node("a2").zone("a"), make_node("b1").zone("b"),
                  make_node("a1").zone("a"), make_node("c2").zone("c"), make_node("a3").zone("a")],
                 ["a1", "b1", "c1", "a2", "c2", "a3"],
                 id="nodes are dealt round-robin over zones taken in name order"),
    pytest.param([make_node("n2"), make_node("n1"), make_node("n3")], ["n1", "n2", "n3"],
                 id="nodes without zones keep name order"),
    pytest.param([make_node("node-a").zone("z"), make_node("Node-b").zone("y")], ["Node-b", "node-a"],
                 id="names are compared as bytes so upper case comes first"),
    pytest.param([make_node("x1").zone("a", "r1"), make_node("x2").zone("a", "r2"), make_node("x3").zone("a", "r1")],
                 ["x1", "x2", "x3"], id="the same zone name in two regions is two zones"),
    pytest.param([make_node("n1"), make_node("n2").zone("a"), make_node("n3"), make_node("n4").zone("a")],
                 ["n1", "n2", "n3", "n4"], id="nodes without a zone form a zone of their own"),
    pytest.param([make_node("a1").zone("a"), make_node("a2").zone("a"), make_node("b1").zone("b")],
                 ["a1", "b1", "a2"], id="an exhausted zone is skipped"),
])
def test_node_tree_order(nodes: list[NodeBuilder], order: list[str]) -> None:
    assert names(nodes) == order


@pytest.mark.parametrize("labels, key", [
    pytest.param({"topology.kubernetes.io/zone": "a", "topology.kubernetes.io/region": "r"}, "r:\x00:a",
                 id="region and zone are joined"),
    pytest.param({"failure-domain.beta.kubernetes.io/zone": "old", "topology.kubernetes.io/zone": "new"}, ":\x00:old",
                 id="the beta zone label wins over the GA one"),
    pytest.param({"topology.kubernetes.io/region": "r"}, "r:\x00:", id="a region alone is a zone key"),
    pytest.param({}, "", id="no labels give the empty key"),
])
def test_zone_key(labels: dict[str, str], key: str) -> None:
    assert zone_key(make_node("n").label_map(labels).build()) == key


def _many_nodes(n: int) -> list[NodeBuilder]:
    return [make_node(f"n{i:04d}").zone(f"z{i % 3}").alloc(cpu="4", memory="8Gi", pods=110) for i in range(n)]


@pytest.mark.parametrize("config, examined", [
    pytest.param(None, 188, id="400 nodes use the adaptive 47 percent"),
    pytest.param({"percentageOfNodesToScore": 80}, 320, id="a global percentage replaces the adaptive one"),
    pytest.param({"percentageOfNodesToScore": 80, "profiles": [{"percentageOfNodesToScore": 0}]}, 188,
                 id="a profile percentage of 0 restores the adaptive one"),
    pytest.param({"percentageOfNodesToScore": 80, "profiles": [{"percentageOfNodesToScore": 100}]}, 400,
                 id="a profile percentage of 100 scores every node"),
])
def test_a_cycle_scores_only_the_nodes_to_find(config: dict[str, Any] | None, examined: int) -> None:
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **(config or {})}
    result = simulate(_many_nodes(400), [make_pod("p").req(cpu="1")], config=doc, keep_cycles=True)
    (cycle,) = result.cycles[result.pods[0].pod.uid]
    assert cycle.feasible_rows is not None and len(cycle.feasible_rows) == examined


def test_the_search_starts_where_the_previous_cycle_stopped() -> None:
    # 200 nodes, 100 to find: the second pod starts after the 100 nodes the first one kept.
    result = simulate(_many_nodes(200), [make_pod("a").req(cpu="1"), make_pod("b").req(cpu="1")], keep_cycles=True)
    first, second = (result.cycles[o.pod.uid][0] for o in result.pods)
    assert first.feasible_rows is not None and second.feasible_rows is not None
    assert first.feasible_rows.tolist() == list(range(100))
    assert second.feasible_rows.tolist() == list(range(100, 200))


@pytest.mark.parametrize("n", range(0, 9))
def test_a_cycles_chunk_of_the_rotated_rows_is_the_rotation_sliced(n: int) -> None:
    # _find_feasible filters order[pos:pos + chunk] of the rows rotated to the start index,
    # taken without building the whole rotation (rotated_slice)
    rows = np.arange(100, 100 + n)
    for start in range(max(n, 1)):
        order = np.concatenate([rows[start:], rows[:start]]) if start else rows
        for begin in range(n + 1):
            for end in range(n + 12):
                assert rotated_slice(rows, start, begin, end).tolist() == order[begin:end].tolist()
