"""Renderers of the WhatIfResult document: ``-o table|json|yaml``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tabulate import tabulate

from kplan.cli.render import to_json, to_yaml
from kplan.errors import InputError


def _state(s: dict[str, Any]) -> str:
    if s["status"] == "Absent":
        return "-"
    return str(s["status"]) + (f" on {s['node']}" if s["node"] else "")


def _cell(u: dict[str, Any] | None, res: str) -> str:
    if u is None:
        return "-"
    c = u[res]
    pct = f" {c['percent']}%" if c["percent"] is not None else ""
    return f"{c['requested']}/{c['allocatable']}{pct}"


def _usage_rows(items: list[dict[str, Any]], key: str, changed_only: bool) -> list[list[Any]]:
    rows = []
    for it in items:
        if changed_only and it["before"] == it["after"]:
            continue
        row = [it[key]] + ([it["zone"]] if key == "name" else [])
        for res in ("cpu", "memory", "pods"):
            row += [_cell(it["before"], res), _cell(it["after"], res)]
        rows.append(row)
    return rows


def _summary(doc: dict[str, Any]) -> str:
    s = doc["summary"]
    b, a = s["before"], s["after"]

    def side(x: dict[str, Any]) -> str:
        text = f"{x['scheduled']}/{x['pending']} pending pods scheduled"
        if x["unschedulable"]:
            text += f", {x['unschedulable']} unschedulable"
        if x["gated"]:
            text += f", {x['gated']} gated"
        if x["preempted"]:
            text += f", {x['preempted']} pod{'s' if x['preempted'] != 1 else ''} preempted"
        return text + f" ({x['nodes']} nodes)"

    parts = [f"{s[k]} {label}" for k, label in (("evicted", "evicted"), ("moved", "moved"),
                                                 ("nowSchedulable", "now schedulable"),
                                                 ("nowUnschedulable", "now unschedulable"),
                                                 ("preempted", "preempted"),
                                                 ("noLongerPreempted", "no longer preempted"), ("deleted", "deleted"),
                                                 ("new", "new"), ("removed", "removed")) if s[k]]
    changed = f"{s['changed']} pod{'s' if s['changed'] != 1 else ''} change" + (f" ({', '.join(parts)})" if parts else "")
    return f"Before: {side(b)}.\nAfter:  {side(a)}.\n{changed}."


def whatif_table(doc: dict[str, Any]) -> str:
    out = []
    mods = doc["modifications"]
    out.append("Changes: " + ("; ".join(mods) if mods else "none"))
    for p in doc["podsAffected"]:
        out.append(f"  {p['namespace']}/{p['name']} on {p['node']}: {p['fate']} ({p['reason']})")
    u = doc["untilFit"]
    if u is not None:
        if u["count"] is None:
            out.append(f"Until fit: {u['reason']}.")
        elif u["count"] == 0:
            out.append("Until fit: every pending pod already fits; no node needed.")
        else:
            out.append(f"Until fit: {u['count']} node{'s' if u['count'] != 1 else ''} like {u['template']} make every "
                       f"pending pod fit (tried: {', '.join(str(p['count']) for p in u['probes'])}).")
    out.append("")
    if doc["changes"]:
        rows = [[f"{c['namespace']}/{c['name']}", c["change"], _state(c["before"]), _state(c["after"])]
                for c in doc["changes"]]
        out.append(tabulate(rows, headers=["POD", "CHANGE", "BEFORE", "AFTER"], tablefmt="plain"))
    else:
        out.append("No pod changes status or node.")
    out.append("")
    headers = ["CPU BEFORE", "CPU AFTER", "MEMORY BEFORE", "MEMORY AFTER", "PODS BEFORE", "PODS AFTER"]
    rows = _usage_rows(doc["utilization"]["nodes"], "name", changed_only=True)
    if rows:
        out.append(tabulate(rows, headers=["NODE", "ZONE"] + headers, tablefmt="plain"))
        out.append("")
    rows = _usage_rows(doc["utilization"]["zones"], "zone", changed_only=False)
    total = doc["utilization"]["total"]
    rows.append(["(all)"] + [c for res in ("cpu", "memory", "pods")
                             for c in (_cell(total["before"], res), _cell(total["after"], res))])
    out.append(tabulate(rows, headers=["ZONE"] + headers, tablefmt="plain"))
    out.append("")
    out.append(_summary(doc))
    return "\n".join(out) + "\n"


RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "table": whatif_table,
    "json": to_json,
    "yaml": to_yaml,
}


def render_whatif(doc: dict[str, Any], output: str) -> str:
    fn = RENDERERS.get(output)
    if fn is None:
        raise InputError(f"--output: unknown format {output!r}; choose one of {', '.join(RENDERERS)}")
    return fn(doc)
