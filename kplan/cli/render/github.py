"""``-o github``: GitHub Actions workflow commands, which the runner turns into annotations.

- ``::error`` for each problem that fails the check under ``--fail-on`` (by default each pending
  pod that does not run, with kube-scheduler's message), ``::warning`` for the other problems
  (evictions by preemption unless ``--fail-on preemption``; every problem under ``never``);
- one ``::notice`` with the summary sentence.

Escaping follows the runner's rules (actions/toolkit, command.ts): in the message ``%``, CR and
LF become ``%25``, ``%0D``, ``%0A``; in a property (``title``) also ``:`` and ``,`` become
``%3A`` and ``%2C``. GitHub shows at most 10 error and 10 warning annotations per step; every
line stays in the log, and ``-o markdown`` into ``$GITHUB_STEP_SUMMARY`` lists them all.
"""

from __future__ import annotations

from kplan.cli.render import RenderOptions
from kplan.cli.render.summary import simulation_summary
from kplan.report.check import EVICTED, problems
from kplan.report.document import SimulationDocument
from kplan.report.whatif import WhatIfDocument

_TITLES = {
    "Unschedulable": "Unschedulable pod",
    "NotCreated": "Pod not created",
    "Preempted": "Pending pod preempted",
    EVICTED: "Running pod preempted",
}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props: str) -> str:
    """One workflow command line: ``::name key=value,…::message``."""
    head = f"::{name}"
    if props:
        head += " " + ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
    return f"{head}::{escape_data(message)}"


def github_commands(doc: SimulationDocument | WhatIfDocument, opts: RenderOptions, title: str, summary: str) -> str:
    lines = []
    for p in problems(doc, opts.fail_on):
        level = "error" if p.fails else "warning"
        lines.append(command(level, p.message, title=f"{_TITLES.get(p.kind, p.kind)} {p.key}"))
    lines.append(command("notice", summary, title=title))
    return "\n".join(lines) + "\n"


def simulation_github(doc: SimulationDocument, opts: RenderOptions) -> str:
    return github_commands(doc, opts, "kplan simulate", simulation_summary(doc))


def whatif_github(doc: WhatIfDocument, opts: RenderOptions) -> str:
    """Problems of the run after the change; the notice says what changed and before/after counts."""
    from kplan.cli.render.whatif import whatif_summary

    changes = "; ".join(doc.modifications) or "no change"
    return github_commands(doc, opts, "kplan whatif", f"{changes}.\n{whatif_summary(doc)}")
