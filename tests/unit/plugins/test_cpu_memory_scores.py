"""The default cpu-and-memory scoring of NodeResourcesFit (LeastAllocated) and
NodeResourcesBalancedAllocation, and the allocatable they share in a cycle (cpu_memory.py).

Their shortcut must give what the general path gives on every node, and the shared gather must
never be read for other rows, another table, or stand in for requests that changed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kplan.framework.cycle_state import CycleState
from kplan.plugins.noderesources.cpu_memory import cpu_memory_allocatable
from tests.builders import make_node, make_plugin, make_pod, make_snapshot

NODES = [
    make_node("small").alloc(cpu="1", memory="1Gi", pods=110),
    make_node("big").alloc(cpu="16", memory="64Gi", pods=110),
    make_node("odd").alloc(cpu="3", memory="5Gi", pods=110),
    make_node("full").alloc(cpu="2", memory="2Gi", pods=110),
]
RUNNING = [
    make_pod("r1").node_name("full").req(cpu="1900m", memory="1900Mi"),
    make_pod("r2").node_name("odd").req(cpu="1", memory="3Gi"),
    make_pod("r3").node_name("small"),   # best effort: counts as 100m and 200Mi when scoring
]
PODS = {
    "plain": make_pod().req(cpu="250m", memory="300Mi"),
    "beyond a node's allocatable": make_pod().req(cpu="4", memory="100Mi"),
    "memory only": make_pod().req(memory="3Gi"),
    "best effort": make_pod().container(),
    "odd numbers": make_pod().req(cpu="333m", memory="777Mi"),
}
ARGS = {
    "default": None,
    "weighted": {"scoringStrategy": {"type": "LeastAllocated",
                                     "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 2}]}},
}
PLUGINS = {"NodeResourcesFit": "_least_cpu_memory", "NodeResourcesBalancedAllocation": "_cpu_memory"}


def scores(plugin: Any, snap: Any, pod: Any, rows: np.ndarray) -> list[int]:
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        plugin.pre_filter(state, pod)
    return np.asarray(plugin.score(state, pod, snap.table, rows)).tolist()


#: (plugin, args) pairs: BalancedAllocation takes no weights
PLUGIN_ARGS = [(plugin, args) for plugin in PLUGINS for args in ARGS
               if not (plugin == "NodeResourcesBalancedAllocation" and args == "weighted")]


@pytest.mark.parametrize("plugin_name, args_name", PLUGIN_ARGS, ids=[f"{p}-{a}" for p, a in PLUGIN_ARGS])
@pytest.mark.parametrize("pod_name", list(PODS))
@pytest.mark.parametrize("nodes", [NODES, NODES + [make_node("no-memory").alloc(cpu="4", pods=110)]],
                         ids=["every node has both", "a node without memory"])
def test_the_shortcut_scores_as_the_general_path(plugin_name: str, args_name: str, pod_name: str,
                                                 nodes: list[Any]) -> None:
    args = ARGS[args_name]
    snap = make_snapshot(nodes, RUNNING)
    fast, general = make_plugin(plugin_name, snap, args), make_plugin(plugin_name, snap, args)
    assert getattr(fast, PLUGINS[plugin_name])
    setattr(general, PLUGINS[plugin_name], False)
    rows = np.arange(len(nodes))[::-1].copy()
    pod = PODS[pod_name].build()
    for _ in range(2):   # the second call reads the kept request column
        assert scores(fast, snap, pod, rows) == scores(general, snap, pod, rows)


def test_the_shared_allocatable_follows_the_rows_and_the_table() -> None:
    snap = make_snapshot(NODES, RUNNING)
    state = CycleState()
    row = snap.table.row_of   # the table orders nodes its own way: name them
    first = np.array([row["small"], row["big"]])
    alloc, positive = cpu_memory_allocatable(state, snap.table, first)
    assert positive and alloc[0].tolist() == [1000, 16000]
    assert cpu_memory_allocatable(state, snap.table, first)[0] is alloc
    # equal rows in another array, other rows, another table: each gathered afresh
    again = cpu_memory_allocatable(state, snap.table, first.copy())[0]
    assert again is not alloc and again.tolist() == alloc.tolist()
    other = np.array([row["odd"], row["full"]])
    assert cpu_memory_allocatable(state, snap.table, other)[0][0].tolist() == [3000, 2000]
    fork = snap.table.take([row["full"]])
    assert cpu_memory_allocatable(state, fork, np.array([0]))[0][0].tolist() == [2000]
    with pytest.raises(ValueError):
        alloc[0, 0] = 0   # read-only: a plugin cannot change what the next one reads


@pytest.mark.parametrize("plugin_name", list(PLUGINS))
def test_requests_are_read_fresh_beside_the_shared_allocatable(plugin_name: str) -> None:
    snap = make_snapshot(NODES, RUNNING)
    plugin = make_plugin(plugin_name, snap)
    pod = PODS["plain"].build()
    rows = np.arange(len(NODES))
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        plugin.pre_filter(state, pod)
    before = np.asarray(plugin.score(state, pod, snap.table, rows)).tolist()
    big, small = snap.table.row_of["big"], snap.table.row_of["small"]
    snap.add_pod(make_pod("late").node_name("big").req(cpu="8", memory="40Gi").build(), big)
    after = np.asarray(plugin.score(state, pod, snap.table, rows)).tolist()
    assert after[big] != before[big] and after[small] == before[small]
    assert after == scores(make_plugin(plugin_name, snap), snap, pod, rows)
