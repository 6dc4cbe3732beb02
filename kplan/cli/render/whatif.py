"""The table renderer of the WhatIfResult document (``-o table``; json and yaml print the document)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate


def _state(s: Mapping[str, Any]) -> str:
    if s["status"] == "Absent":
        return "-"
    return str(s["status"]) + (f" on {s['node']}" if s["node"] else "")


def _cell(u: Mapping[str, Any] | None, res: str) -> str:
    if u is None:
        return "-"
    c = u[res]
    pct = f" {c['percent']}%" if c["percent"] is not None else ""
    return f"{c['requested']}/{c['allocatable']}{pct}"


#: rows per change kind, and changed nodes, in the table unless --all
TOP = 20


def _shift(it: Mapping[str, Any]) -> int:
    """How much a node's utilisation moved (percentage points, the larger of cpu and memory)."""
    if it["before"] is None or it["after"] is None:
        return 1000  # added and removed nodes first
    return max(abs(int(it["after"][r]["percent"] or 0) - int(it["before"][r]["percent"] or 0)) for r in ("cpu", "memory"))


def _usage_rows(items: list[Mapping[str, Any]], key: str, changed_only: bool, top: int | None = None
                ) -> list[list[Any]]:
    rows = []
    items = [it for it in items if not changed_only or it["before"] != it["after"]]
    if top is not None and len(items) > top:
        keep = {id(it) for it in sorted(items, key=lambda it: -_shift(it))[:top]}
        items = [it for it in items if id(it) in keep]
    for it in items:
        row = [it[key]] + ([it["zone"]] if key == "name" else [])
        for res in ("cpu", "memory", "pods"):
            row += [_cell(it["before"], res), _cell(it["after"], res)]
        rows.append(row)
    return rows


def whatif_summary(doc: Mapping[str, Any]) -> str:
    """Before and after counts, and how many pods change, on three lines."""
    s = doc["summary"]
    b, a = s["before"], s["after"]

    def side(x: Mapping[str, Any]) -> str:
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


def whatif_table(doc: Mapping[str, Any], full: bool = False) -> str:
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
            out.append(f"Until fit: {u['count']} node{'s' if u['count'] != 1 else ''} like {u['template']} make{'s' if u['count'] == 1 else ''} every "
                       f"pending pod fit (tried: {', '.join(str(p['count']) for p in u['probes'])}).")
    out.append("")
    if doc["changes"]:
        rows: list[list[str]] = []
        hidden: dict[str, int] = {}
        shown: dict[str, int] = {}
        for c in doc["changes"]:
            k = c["change"]
            if not full and shown.get(k, 0) >= TOP:
                hidden[k] = hidden.get(k, 0) + 1
                continue
            shown[k] = shown.get(k, 0) + 1
            rows.append([f"{c['namespace']}/{c['name']}", k, _state(c["before"]), _state(c["after"])])
        out.append(tabulate(rows, headers=["POD", "CHANGE", "BEFORE", "AFTER"], tablefmt="plain"))
        for k, n in hidden.items():
            out.append(f"… and {n} more {k} (--all lists them)")
    else:
        out.append("No pod changes status or node.")
    out.append("")
    headers = ["CPU BEFORE", "CPU AFTER", "MEMORY BEFORE", "MEMORY AFTER", "PODS BEFORE", "PODS AFTER"]
    nodes = doc["utilization"]["nodes"]
    changed = sum(1 for it in nodes if it["before"] != it["after"])
    rows = _usage_rows(nodes, "name", changed_only=True, top=None if full else TOP)
    if rows:
        out.append(tabulate(rows, headers=["NODE", "ZONE"] + headers, tablefmt="plain"))
        if len(rows) < changed:
            out.append(f"… and {changed - len(rows)} more nodes whose utilisation changed less (--all lists them)")
        out.append("")
    rows = _usage_rows(doc["utilization"]["zones"], "zone", changed_only=False)
    total = doc["utilization"]["total"]
    rows.append(["(all)"] + [c for res in ("cpu", "memory", "pods")
                             for c in (_cell(total["before"], res), _cell(total["after"], res))])
    out.append(tabulate(rows, headers=["ZONE"] + headers, tablefmt="plain"))
    out.append("")
    out.append(whatif_summary(doc))
    return "\n".join(out) + "\n"

