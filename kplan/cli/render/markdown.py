"""``-o markdown``: a GitHub-flavoured Markdown summary for pull-request comments, merge-request
notes and ``$GITHUB_STEP_SUMMARY``.

A heading with the verdict under ``--fail-on``, the summary sentence, a table of the pending pods
that do not run (with kube-scheduler's message), the preempted pods, and, folded in
``<details>``, the scheduled pods and the nodes' utilisation. Tables stop after ROWS rows unless
the options ask for everything (a comment is limited to 65,536 characters); what was left out
is counted and ``-o json`` has it all.

Cell text is escaped: the Markdown punctuation that matters inside a cell gets a backslash, ``&`` becomes ``&amp;``, line
breaks become spaces, so a message cannot break the table or inject HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from kplan.cli.render import RenderOptions
from kplan.cli.render.summary import simulation_summary
from kplan.cli.render.units import plural, usage
from kplan.report.check import failed, simulation_of
from kplan.report.document import NodeUsage, PendingPod, SimulationDocument
from kplan.report.whatif import PodState, WhatIfDocument
from kplan.scheduler.pod_status import NOT_RUNNING

#: the most rows a table shows unless RenderOptions.full
ROWS = 200

#: characters with a meaning inside a table cell (a cell never starts a line, so the block
#: markers # - + . do not matter there): emphasis, code, links, HTML, cell ends, strikethrough
_PUNCT = re.compile(r"([\\`*_\[\]<>|~])")
_ICONS = {"Scheduled": "✅", "Unschedulable": "❌", "NotCreated": "❌", "Preempted": "❌", "Gated": "⏸️"}


def cell(text: Any) -> str:
    """Table-cell text: Markdown and HTML inert, on one line."""
    s = " ".join(str(text).split())
    return _PUNCT.sub(r"\\\1", s.replace("&", "&amp;"))


def code(text: str) -> str:
    """Inline code for names (Kubernetes names hold no backtick); ``|`` still ends a cell in GFM."""
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], total: int, full: bool) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    shown = 0
    for row in rows:
        if not full and shown == ROWS:
            break
        out.append("| " + " | ".join(row) + " |")
        shown += 1
    if shown < total:
        out += ["", f"… and {total - shown} more (`-o json` lists them all)."]
    return out


def _pod(p: PendingPod) -> str:
    return code(p.key)


def _usage(n: NodeUsage, resource: str) -> str:
    pct = n.percent[resource]
    requested = n.pods if resource == "pods" else n.requested[resource]
    return cell(usage(resource, requested, n.allocatable[resource]) + (f" ({pct}%)" if pct is not None else ""))


def _node(n: NodeUsage) -> list[str]:
    return [code(n.name), _usage(n, "cpu"), _usage(n, "memory"), _usage(n, "pods")]


def simulation_sections(sim: SimulationDocument, opts: RenderOptions) -> list[str]:
    """Everything below the heading, for a SimulationResult (also used for a what-if's after run)."""
    out = [cell(simulation_summary(sim)), ""]
    problems = [p for p in sim.pods if p.status in NOT_RUNNING]
    if problems:
        out += [f"#### Pods that do not run ({len(problems)})", ""]
        out += table(["Pod", "Status", "Message"],
                     ([_pod(p), f"{_ICONS[p.status]} {p.status}", cell(p.message or "")] for p in problems),
                     len(problems), opts.full)
        out.append("")
    gated = [p for p in sim.pods if p.status == "Gated"]
    if gated:
        out += [f"#### Gated pods ({len(gated)})", ""]
        out += table(["Pod", "Waiting for"], ([_pod(p), cell(p.message or "")] for p in gated), len(gated),
                     opts.full)
        out.append("")
    if sim.preempted:
        out += [f"#### Pods preempted ({len(sim.preempted)})", ""]
        out += table(["Pod", "Node", "Preempted by"],
                     ([code(f"{e.namespace}/{e.name}"), code(e.node), code(e.preemptor)]
                      for e in sim.preempted), len(sim.preempted), opts.full)
        out.append("")
    scheduled = [p for p in sim.pods if p.status == "Scheduled"]
    if scheduled:
        out += ["<details>", f"<summary>Scheduled pods ({len(scheduled)})</summary>", ""]
        out += table(["Pod", "Node"], ([_pod(p), code(p.node or "")] for p in scheduled), len(scheduled), opts.full)
        out += ["", "</details>", ""]
    nodes = sim.nodes
    out += ["<details>", f"<summary>Node utilisation ({plural(len(nodes), 'node')}, requested / allocatable)</summary>", ""]
    out += table(["Node", "CPU", "Memory", "Pods"], (_node(n) for n in nodes), len(nodes), opts.full)
    out += ["", "</details>"]
    return out


def heading(doc: SimulationDocument | WhatIfDocument, opts: RenderOptions, command: str) -> str:
    sim = simulation_of(doc)
    s = sim.summary
    not_running = sum(1 for p in sim.pods if p.status in NOT_RUNNING)
    if not_running:
        what = f"{not_running} of {s.pending} pending pods do not run"
    else:
        if s.scheduled == s.pending:
            what = "the pending pod is scheduled" if s.pending == 1 else f"all {s.pending} pending pods scheduled"
        else:
            what = f"{s.scheduled} of {s.pending} pending pods scheduled"
        if s.preempted:
            what += f", {plural(s.preempted, 'pod')} preempted"
    icon = "❌" if failed(doc, opts.fail_on) else "⚠️" if not_running or s.preempted else "✅"
    return f"### {icon} {command}: {what}"


def simulation_markdown(doc: SimulationDocument, opts: RenderOptions) -> str:
    return "\n".join([heading(doc, opts, "kplan simulate"), "", *simulation_sections(doc, opts)]) + "\n"


def _state(s: PodState) -> str:
    if s.status == "Absent":
        return "—"
    return cell(s.status) + (f" on {code(s.node)}" if s.node else "")


def whatif_markdown(doc: WhatIfDocument, opts: RenderOptions) -> str:
    """The change, its effect on the pods and the before/after counts, then the run after the
    change as ``kplan simulate`` shows a run."""
    from kplan.cli.render.whatif import whatif_summary

    out = [heading(doc, opts, "kplan whatif"), ""]
    mods = doc.modifications
    out += ["**Changes:** " + ("; ".join(cell(m) for m in mods) if mods else "none"), ""]
    for u in doc.until_fits or ((doc.until_fit,) if doc.until_fit is not None else ()):
        if u.count is None:
            fit = cell(u.reason or "no number of such nodes makes every pending pod fit")
        elif u.all_fit:
            fit = f"{plural(u.count, 'node')} like {code(u.template)} " \
                  f"make{'s' if u.count == 1 else ''} every pending pod fit"
        else:
            fit = (f"{plural(u.count, 'node')} like {code(u.template)} place{'s' if u.count == 1 else ''} "
                   f"{plural(len(u.placed), 'pending pod')}; more nodes place no more")
        out += [f"**Until fit:** {fit}.", ""]
        if u.count is not None and (u.never_fit or u.still_pending):
            out += [f"- {code(n.key)} never fits on a node like {code(u.template)}: "
                    f"{cell((n.plugin + ': ' if n.plugin else '') + n.reason)}" for n in u.never_fit]
            out += [f"- {code(p.key)} stays pending" for p in u.still_pending]
            out.append("")
    out += [cell(line) + "  " for line in whatif_summary(doc).splitlines()]
    out[-1] = out[-1].rstrip()
    out.append("")
    changes = doc.changes
    if changes:
        out += [f"#### Pods that change ({len(changes)})", ""]
        out += table(["Pod", "Change", "Before", "After"],
                     ([code(c.key), cell(c.change), _state(c.before), _state(c.after)] for c in changes),
                     len(changes), opts.full)
        out.append("")
    out += ["#### After the change", ""]
    out += simulation_sections(simulation_of(doc), opts)
    return "\n".join(out) + "\n"
