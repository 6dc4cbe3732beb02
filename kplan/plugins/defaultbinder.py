"""DefaultBinder (plugins/defaultbinder/default_binder.go, v1.34.1): posts the Binding.

In a simulation the binding always succeeds; the simulator then adds the pod to the node.
"""

from __future__ import annotations

from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import BindPlugin
from kplan.framework.status import OK, Status
from kplan.model.objects import Pod
from kplan.plugins.helper import PluginBase

NAME = "DefaultBinder"


class DefaultBinder(PluginBase, BindPlugin):
    name = NAME

    def bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        return OK
