"""The sentences several renderers share: the one-line summary of a SimulationResult document and
the short form of a FitError. A module of its own so that the CI formats (``-o github``,
``markdown``) render without importing the tables (tabulate, rich's styles)."""

from __future__ import annotations

from kplan.cli.render import Document

#: how much of the FitError the narrow table shows: kube-scheduler's sentence without the
#: preemption and DRA postscripts (``-o wide`` shows the whole message)
_POSTSCRIPTS = (" no new claims to deallocate", " still not schedulable, preemption:",
                " deallocation of ResourceClaim completed, preemption:", " preemption:")


def short_reason(message: str | None) -> str:
    if not message:
        return ""
    for cut in _POSTSCRIPTS:
        message = message.split(cut)[0]
    return message


def simulation_summary(doc: Document) -> str:
    """One sentence: how many pending pods were scheduled, unschedulable, …, on how many nodes."""
    s = doc["summary"]
    text = f"{s['pending']} pending pod{'s' if s['pending'] != 1 else ''}: {s['scheduled']} scheduled, " \
        f"{s['unschedulable']} unschedulable"
    if s["gated"]:
        text += f", {s['gated']} gated"
    if s.get("notCreated"):
        text += f", {s['notCreated']} not created"
    if s["preempted"]:
        text += f"; {s['preempted']} pod{'s' if s['preempted'] != 1 else ''} preempted"
    gone = s.get("replaced", 0)
    if gone:
        text += f"; {gone} running pod{'s' if gone != 1 else ''} replaced"
    return text + f" ({s['nodes']} nodes)."
