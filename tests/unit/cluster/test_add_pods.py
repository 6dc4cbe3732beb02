"""NodeTable.add_pods (every build places the running pods in one call) against add_pod, pod by pod."""

from __future__ import annotations

import numpy as np
import pytest

from kplan.cluster.node_table import NodeTable
from tests.builders import make_node, make_pod

NODES = [make_node("a").alloc(cpu="4", memory="8Gi", pods=10).build(),
         make_node("b").alloc(cpu="4", memory="8Gi", pods=10, **{"nvidia.com/gpu": 2}).build(),
         make_node("c").alloc(cpu="2", memory="4Gi", pods=10).build()]


def pods_of(*specs):
    return [spec.node_name(node).build() for node, spec in specs]


CASES = {
    "none": [],
    "one pod": pods_of(("a", make_pod("p").req(cpu="100m", memory="1Gi"))),
    "several on one node, priorities": pods_of(
        ("b", make_pod("p1").req(cpu="1").priority(5)), ("b", make_pod("p2").req(memory="1Gi").priority(-3)),
        ("b", make_pod("p3").priority(7))),
    "best effort (nonzero defaults)": pods_of(("c", make_pod("p1")), ("a", make_pod("p2")), ("c", make_pod("p3"))),
    # a resource no node advertises widens the arrays; two of them, in the order first seen
    "unadvertised resources": pods_of(
        ("a", make_pod("p1").req(cpu="1", **{"example.com/foo": 2})),
        ("c", make_pod("p2").req(**{"example.com/bar": 1, "example.com/foo": 1})),
        ("b", make_pod("p3").req(**{"nvidia.com/gpu": 1}))),
    "host ports, the same port twice on a node": pods_of(
        ("a", make_pod("p1").host_port(80)), ("a", make_pod("p2").host_port(80).host_port(53, "UDP")),
        ("c", make_pod("p3").host_port(80))),
}


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def pod_added(self, table, pod, row) -> None:
        self.seen.append((pod.key, row))

    def pod_removed(self, table, pod, row) -> None:
        raise AssertionError("nothing is removed")


@pytest.mark.parametrize("pods", list(CASES.values()), ids=list(CASES))
def test_add_pods_leaves_the_table_as_add_pod_one_by_one(pods) -> None:
    one, bulk = NodeTable(NODES), NodeTable(NODES)
    heard_one, heard_bulk = Recorder(), Recorder()
    one.listeners.append(heard_one)
    bulk.listeners.append(heard_bulk)
    rows = [one.row_of[p.node_name] for p in pods]
    for pod, row in zip(pods, rows, strict=True):
        one.add_pod(pod, row)
    bulk.add_pods(pods, rows)
    assert list(bulk.res.names) == list(one.res.names)
    for name in ("alloc_t", "requested_t", "nonzero_t", "pod_count", "prio_min"):
        assert np.array_equal(getattr(bulk, name), getattr(one, name)), name
    assert bulk.pods == one.pods
    assert [p and p.used for p in bulk.ports] == [p and p.used for p in one.ports]
    assert bulk.port_rows == one.port_rows
    assert heard_bulk.seen == heard_one.seen
