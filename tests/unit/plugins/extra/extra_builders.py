"""Small builders for the tests of kplan's own plugins: nodes, pods, a snapshot and a handle."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import numpy as np

from kplan.cluster.snapshot import Snapshot
from kplan.framework.cycle_state import CycleState
from kplan.framework.release import default_release
from kplan.framework.status import Code
from kplan.model.objects import Node, Pod

Gi = 1024**3
ZONE = "topology.kubernetes.io/zone"


def node(name: str, *, cpu: int = 4000, memory: int = 16 * Gi, pods: int = 110, zone: str | None = None,
         labels: dict[str, str] | None = None) -> Node:
    """A node; ``cpu`` in millicores, ``memory`` in bytes."""
    all_labels = {"kubernetes.io/hostname": name, **(labels or {})}
    if zone is not None:
        all_labels[ZONE] = zone
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    return Node(name, labels=MappingProxyType(all_labels), allocatable=MappingProxyType(alloc),
                capacity=MappingProxyType(alloc))


def pod(name: str, namespace: str = "default", *, labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None, priority: int = 0, cpu: int = 0, memory: int = 0,
        limits: dict[str, int] | None = None, deleting: bool = False) -> Pod:
    """A pod with real requests ``cpu`` (millicores) / ``memory`` (bytes) and optional limits."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    return Pod(namespace, name, f"{namespace}/{name}", labels=MappingProxyType(labels or {}),
               annotations=MappingProxyType(annotations or {}), priority=priority,
               requests=MappingProxyType(requests), nonzero_cpu=cpu or 100, nonzero_mem=memory or 200 * 1024**2,
               score_cpu=cpu or 100, score_mem=memory or 200 * 1024**2,
               limits=MappingProxyType(limits or {}), deletion_time=1.0 if deleting else None,
               source="pods.yaml")


class Handle:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.release = default_release()


def cluster(nodes: list[Node], placed: list[tuple[Pod, str]] = ()) -> Snapshot:  # type: ignore[assignment]
    snap = Snapshot.build(nodes)
    for p, node_name in placed:
        row = snap.row_of(node_name)
        assert row is not None
        snap.add_pod(dataclasses.replace(p, node_name=node_name), row)
    return snap


def build(plugin_cls: type, args: Any, snap: Snapshot) -> Any:
    return plugin_cls(args, Handle(snap))


def score_by_name(plugin: Any, p: Pod, snap: Snapshot, *, pre_score: bool = True) -> dict[str, int]:
    """Run PreScore (when the plugin has it and ``pre_score``) and Score over every node, as the
    framework does: a PreScore Skip means 0 everywhere."""
    table = snap.table
    rows = np.arange(len(table), dtype=np.int64)
    state = CycleState()
    if pre_score and hasattr(plugin, "pre_score"):
        if plugin.pre_score(state, p, table, rows).code == Code.SKIP:
            return {name: 0 for name in table.names}
    scores = plugin.score(state, p, table, rows)
    return {table.names[r]: int(s) for r, s in zip(rows, scores, strict=True)}


def explain_by_name(plugin: Any, p: Pod, snap: Snapshot) -> dict[str, str]:
    table = snap.table
    rows = np.arange(len(table), dtype=np.int64)
    state = CycleState()
    if hasattr(plugin, "pre_score"):
        plugin.pre_score(state, p, table, rows)
    lines = plugin.explain(state, p, table, rows)
    assert len(lines) == len(rows)
    return {table.names[r]: line for r, line in zip(rows, lines, strict=True)}
