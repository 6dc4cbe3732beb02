"""The sentence several renderers share: the one-line summary of a SimulationResult document. A
module of its own so that the CI formats (``-o github``, ``markdown``) render without importing
the tables (tabulate, rich's styles)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kplan.cli.render.units import plural

if TYPE_CHECKING:
    from kplan.report.document import SimulationDocument

def simulation_summary(doc: SimulationDocument) -> str:
    """One sentence: how many pending pods were scheduled, unschedulable, …, on how many nodes."""
    s = doc.summary
    text = f"{s.pending} pending pod{'s' if s.pending != 1 else ''}: {s.scheduled} scheduled, " \
        f"{s.unschedulable} unschedulable"
    if s.gated:
        text += f", {s.gated} gated"
    if s.not_created:
        text += f", {s.not_created} not created"
    if s.preempted:
        text += f"; {plural(s.preempted, 'pod')} preempted"
    if s.replaced:
        text += f"; {s.replaced} running pod{'s' if s.replaced != 1 else ''} replaced"
    return text + f" ({plural(s.nodes, 'node')})."
