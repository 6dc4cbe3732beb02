"""NodeVolumeLimits' CSI-driver check (VolumeLimitScaling, KEP-5030; beta and on from 1.37): a
node whose CSINode lacks the driver of the pod's new volume is rejected when the driver's
CSIDriver asks for it with preventPodSchedulingIfMissing."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from kplan.framework.cycle_state import CycleState
from kplan.framework.features import Features, Gate
from kplan.framework.release import KubeVersion, Release
from kplan.framework.status import REASONS, Code
from kplan.plugins.nodevolumelimits import NodeVolumeLimits
from tests.unit.storage.storage_builders import (
    Obj,
    csi_driver,
    csinode,
    node,
    pod,
    pv,
    pvc,
    simulation,
    storage_class,
)

DRIVER = "csi.example.com"
NODES = [node("with"), node("other"), node("none")]
CSI_NODES = [csinode("with"), csinode("other", "other.example.com")]
MISSING = f"Unschedulable: {DRIVER} CSI driver is not installed on the node"


def _opting(prevent: bool) -> Obj:
    d = csi_driver()
    d["spec"]["preventPodSchedulingIfMissing"] = prevent
    return d


@pytest.mark.parametrize("cluster, expected", [
    pytest.param([_opting(True), storage_class("csi", DRIVER), pvc("c", "csi")],
                 {"with": "", "other": MISSING, "none": MISSING},
                 id="a node without the driver in its CSINode, or without a CSINode, is rejected"),
    pytest.param([_opting(False), storage_class("csi", DRIVER), pvc("c", "csi")],
                 {"with": "", "other": "", "none": ""}, id="a driver that does not ask for it is not checked"),
    pytest.param([storage_class("csi", DRIVER), pvc("c", "csi")], {"with": "", "other": "", "none": ""},
                 id="a driver without a CSIDriver object is not checked"),
    pytest.param([_opting(True), storage_class("csi", DRIVER), pvc("c", "csi", volume="pv", bound=True),
                  pv("pv", "csi", claim="c", csi=(DRIVER, "h1"))],
                 {"with": "", "other": MISSING, "none": MISSING}, id="a bound claim's volume driver is checked"),
])
def test_csi_driver_check(cluster: list[Obj], expected: dict[str, str]) -> None:
    assert _verdicts(NODES + CSI_NODES + cluster, pod("p", "c"), on=True) == expected


def test_no_driver_check_with_the_gate_off() -> None:
    cluster = NODES + CSI_NODES + [_opting(True), storage_class("csi", DRIVER), pvc("c", "csi")]
    assert set(_verdicts(cluster, pod("p", "c"), on=False).values()) == {""}


def _verdicts(cluster: list[Obj], the_pod: Obj, *, on: bool) -> dict[str, str]:
    sim = simulation(cluster, [the_pod])
    (p,) = sim.pending
    handle: Any = SimpleNamespace(snapshot=sim.snapshot,
                                  release=Release.with_features(KubeVersion(1, 37), Features(((Gate.VOLUME_LIMIT_SCALING, on),))))
    plugin = NodeVolumeLimits(None, handle)
    table = sim.snapshot.table
    rows = np.arange(len(table), dtype=np.int64)
    v = plugin.filter(CycleState(), p, table, rows)
    return {table.names[int(r)]: "" if v.codes[k] == 0 else
            f"{Code(int(v.codes[k])).upstream}: {', '.join(REASONS[int(v.reasons[k])])}" for k, r in enumerate(rows)}
