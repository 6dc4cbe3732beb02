"""VolumeZone (plugins/volumezone/volume_zone.go, v1.34.1).

Until kplan models storage, pods with PVC or in-tree disk volumes are refused when loaded, so
every pod reaching this plugin has nothing to check and PreFilter returns Skip, as upstream
does for a pod without such volumes.
"""

from __future__ import annotations

from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import PreFilterResult
from kplan.framework.status import Status, skip
from kplan.model.objects import Pod
from kplan.plugins.helper import PluginBase

NAME = "VolumeZone"


class VolumeZone(PluginBase):
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return None, skip(NAME)

    def filter(self, state: CycleState, pod: Pod, table: object, rows: object) -> object:
        raise AssertionError("unreachable: PreFilter always skips")
