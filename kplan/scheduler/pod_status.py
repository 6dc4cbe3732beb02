"""What became of a pending pod in a simulation: its status in the result and the documents.

A module of its own, without imports, so that the report layer's check (which the CLI's option
parsing and shell completion import) names the statuses without loading the engine.
"""

from __future__ import annotations

from enum import StrEnum


class PodStatus(StrEnum):
    """The status of a pending pod at the end of a run; its value is the text the documents carry."""

    #: bound to a node
    SCHEDULED = "Scheduled"
    #: no node fits it (or no profile schedules it, or its claims keep it out of the queue)
    UNSCHEDULABLE = "Unschedulable"
    #: its schedulingGates hold it back: kube-scheduler never tried it
    GATED = "Gated"
    #: bound, then evicted by the preemption of a later pending pod
    PREEMPTED = "Preempted"
    #: its controller had not created it (a StatefulSet's OrderedReady policy waits for the previous pod)
    NOT_CREATED = "NotCreated"


#: the statuses of pending pods that did not end up running (what ``--fail-on unschedulable`` fails)
NOT_RUNNING = (PodStatus.UNSCHEDULABLE, PodStatus.NOT_CREATED, PodStatus.PREEMPTED)
