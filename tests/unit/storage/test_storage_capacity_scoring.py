"""VolumeBinding's Score with StorageCapacityScoring (KEP-4049; beta and on from 1.37): the
utilization of a node's static bindings, else of the CSIStorageCapacity its provisions were
checked against, through the default shape (utilization 0 → 100, 100 → 0)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from kplan.framework.cycle_state import CycleState
from kplan.framework.features import Features, Gate
from kplan.framework.release import KubeVersion, Release
from kplan.plugins.volumebinding import VolumeBinding, decode_args
from tests.unit.storage.storage_builders import (
    ZONE,
    Obj,
    csi_driver,
    node,
    pod,
    pv,
    pvc,
    simulation,
    storage_class,
)

NODES = [node("a", "za"), node("b", "zb")]


def capacity(name: str, zone: str, size: str, cls: str = "fast", *, maximum: str | None = None) -> Obj:
    d: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
              "metadata": {"name": name, "namespace": "default"}, "storageClassName": cls,
              "nodeTopology": {"matchLabels": {ZONE: zone}}, "capacity": size}
    if maximum is not None:
        d["maximumVolumeSize"] = maximum
    return d


DYNAMIC = [storage_class("fast"), storage_class("slow"), csi_driver(storage_capacity=True),
           capacity("fast-a", "za", "100Gi"), capacity("fast-b", "zb", "10Gi"),
           capacity("slow-a", "za", "10Gi", "slow"), capacity("slow-b", "zb", "10Gi", "slow")]
STATIC = [storage_class("local", "kubernetes.io/no-provisioner"),
          pv("small", size="10Gi", hostnames=["a"]), pv("large", size="20Gi", hostnames=["b"])]


@pytest.mark.parametrize("cluster, claims, scores", [
    pytest.param(DYNAMIC, [pvc("c", "fast", size="5Gi")], {"a": 95, "b": 50},
                 id="a provisioned claim scores the emptier pool higher (5 % → 95, 50 % → 50)"),
    pytest.param(DYNAMIC, [pvc("c", "fast", size="5Gi"), pvc("d", "fast", size="4Gi")], {"a": 91, "b": 10},
                 id="claims of one class add their requests against the pool's capacity"),
    pytest.param(DYNAMIC, [pvc("c", "fast", size="5Gi"), pvc("d", "slow", size="5Gi")], {"a": 73, "b": 50},
                 id="classes are averaged and rounded half away from zero ((95 + 50) / 2 → 73)"),
    pytest.param([storage_class("fast"), csi_driver(storage_capacity=False)], [pvc("c", "fast", size="5Gi")],
                 {"a": 0, "b": 0}, id="a driver that does not track capacity gives no class to score"),
    pytest.param(STATIC, [pvc("c", "local", size="5Gi")], {"a": 50, "b": 75},
                 id="a static binding scores its volume's utilization (50 %, 25 %)"),
    pytest.param(STATIC + [pv("bound", size="10Gi", claim="done")],
                 [pvc("done", "local", size="1Gi", volume="bound", bound=True)], {"a": 0, "b": 0},
                 id="bound claims give no class to score"),
])
def test_storage_capacity_scoring(cluster: list[Obj], claims: list[Obj], scores: dict[str, int]) -> None:
    names = [c["metadata"]["name"] for c in claims]
    assert _scores(NODES + cluster + claims, pod("p", *names)) == scores


def test_the_scorer_is_off_without_the_gate() -> None:
    sim, state, the_pod, rows = _filtered(NODES + DYNAMIC + [pvc("c", "fast", size="5Gi")], pod("p", "c"))
    plugin = VolumeBinding(decode_args(None), _handle(False))
    assert plugin.pre_score(state, the_pod, sim.snapshot.table, rows).code.name == "SKIP"


def _filtered(cluster: list[Obj], the_pod: Obj) -> tuple[Any, CycleState, Any, np.ndarray]:
    sim = simulation(cluster, [the_pod])
    fw = next(iter(sim.handle.frameworks.values()))
    (p,) = sim.pending
    state = CycleState()
    _, status, _ = fw.run_pre_filter(state, p)
    assert status.ok, status
    table = sim.snapshot.table
    rows = np.arange(len(table), dtype=np.int64)
    v = fw.plugins["VolumeBinding"].filter(state, p, table, rows)
    return sim, state, p, rows[np.asarray(v.codes) == 0]


def _scores(cluster: list[Obj], the_pod: Obj) -> dict[str, int]:
    sim, state, p, rows = _filtered(cluster, the_pod)
    plugin = VolumeBinding(decode_args(None, storage_capacity_scoring=True), _handle(True))
    table = sim.snapshot.table
    assert plugin.pre_score(state, p, table, rows).ok
    return {table.names[int(r)]: int(s) for r, s in zip(rows, plugin.score(state, p, table, rows), strict=True)}


def _handle(on: bool) -> Any:
    return SimpleNamespace(release=Release.with_features(KubeVersion(1, 37), Features(((Gate.STORAGE_CAPACITY_SCORING, on),))))
