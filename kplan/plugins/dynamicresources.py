"""DynamicResources (plugins/dynamicresources/dynamicresources.go, v1.34.1), for pods without claims.

kplan does not model DRA allocation: a pod with ``spec.resourceClaims`` is refused as unsupported
when it is loaded. For every other pod the plugin does what upstream does: PreFilter records
that the pod has no claims and Skips; PostFilter answers "no new claims to deallocate", which is
why kube-scheduler 1.34's failure messages carry that sentence. When an earlier PreFilter plugin
stopped the cycle, the state was never written and PostFilter fails with "not found", which also
stops DefaultPreemption (reference 5.6).
"""

from __future__ import annotations

from typing import Any

from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import PreFilterResult
from kplan.framework.status import OK, Code, Status, skip
from kplan.model.objects import Pod
from kplan.plugins.helper import PluginBase

NAME = "DynamicResources"
_STATE = "DynamicResources/claims"


class DynamicResources(PluginBase):
    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status:
        return OK

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        state.write(_STATE, pod.resource_claims)
        return None, skip(NAME)

    def filter(self, state: CycleState, pod: Pod, table: Any, rows: Any) -> Any:
        raise AssertionError("DynamicResources filters only pods with claims, which kplan refuses")

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Any) -> tuple[None, Status]:
        if state.read(_STATE) is None:
            return None, Status(Code.ERROR, ("not found",), NAME)
        return None, Status(Code.UNSCHEDULABLE, ("no new claims to deallocate",), NAME)

    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        return OK

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        return OK
