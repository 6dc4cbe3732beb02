"""SchedulingGates (pkg/scheduler/framework/plugins/schedulinggates, v1.34.1).

PreEnqueue: a pod with ``spec.schedulingGates`` is parked, never attempted, until they are removed.
"""

from __future__ import annotations

from kplan.framework.interfaces import EnqueueExtensions, PreEnqueuePlugin, QueueingHint
from kplan.framework.status import OK, Code, Status
from kplan.model.objects import Pod
from kplan.plugins.helper import PluginBase

NAME = "SchedulingGates"


class SchedulingGates(PluginBase, PreEnqueuePlugin, EnqueueExtensions):
    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_gates:
            return OK
        # Go prints the []string of gate names as "[a b]"
        return Status(Code.UNRESOLVABLE, (f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]",), NAME)

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        # gates never change during a simulation; the event exists for completeness
        return [("UpdatePodSchedulingGatesEliminated", None)]
