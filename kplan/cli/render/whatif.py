"""The table renderer of the WhatIfResult document (``-o table``; json and yaml print the document)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate

from kplan.cli.render import RenderOptions
from kplan.cli.render.layout import table, usage, visible_len, wrap


def _state(s: Mapping[str, Any]) -> str:
    if s["status"] == "Absent":
        return "-"
    return str(s["status"]) + (f" on {s['node']}" if s["node"] else "")


def _cell(u: Mapping[str, Any] | None, res: str) -> str:
    if u is None:
        return "-"
    c = u[res]
    pct = f" {c['percent']}%" if c["percent"] is not None else ""
    return f"{usage(res, c['requested'], c['allocatable'])}{pct}"



#: rows per change kind, and changed nodes, in the table unless --all
TOP = 20


def _shift(it: Mapping[str, Any]) -> int:
    """How much a node's utilisation moved (percentage points, the larger of cpu and memory)."""
    if it["before"] is None or it["after"] is None:
        return 1000  # added and removed nodes first
    return max(abs(int(it["after"][r]["percent"] or 0) - int(it["before"][r]["percent"] or 0)) for r in ("cpu", "memory"))


def _usage_items(items: list[Mapping[str, Any]], changed_only: bool, top: int | None = None
                 ) -> list[Mapping[str, Any]]:
    items = [it for it in items if not changed_only or it["before"] != it["after"]]
    if top is not None and len(items) > top:
        keep = {id(it) for it in sorted(items, key=lambda it: -_shift(it))[:top]}
        items = [it for it in items if id(it) in keep]
    return items


_RESOURCES = ("cpu", "memory", "pods")
_WIDE_HEADERS = ["CPU BEFORE", "CPU AFTER", "MEMORY BEFORE", "MEMORY AFTER", "PODS BEFORE", "PODS AFTER"]


def _usage_table(items: list[Mapping[str, Any]], key: str, width: int | None,
                 total: Mapping[str, Any] | None = None) -> str:
    """Utilisation before and after: a column per resource and side; where that does not fit the
    width, a column per resource whose cell reads ``before → after``, the quantities on one line
    and the percentages under them (the zone under the node's name)."""
    first = ["NODE", "ZONE"] if key == "name" else ["ZONE"]
    rows = []
    for it in items:
        row = [it[key]] + ([it["zone"]] if key == "name" else [])
        rows.append(row + [_cell(it[side], res) for res in _RESOURCES for side in ("before", "after")])
    if total is not None:
        rows.append(["(all)"] + [_cell(total[side], res) for res in _RESOURCES for side in ("before", "after")])
    wide = str(tabulate(rows, headers=first + _WIDE_HEADERS, tablefmt="plain"))
    if width is None or visible_len(wide) <= width:
        return wide
    narrow = []
    for it in [*items, *([{key: "(all)", **total}] if total is not None else [])]:
        name = str(it[key]) + (f"\n{it['zone']}" if key == "name" and it.get("zone") else "")
        narrow.append([name, *[f"{_cell(it['before'], res)}\n→ {_cell(it['after'], res)}" for res in _RESOURCES]])
    heads = [f"{first[0]}" + ("\nZONE" if key == "name" else "")] + [f"{r.upper()} BEFORE\n→ AFTER" for r in _RESOURCES]
    return str(tabulate(narrow, headers=heads, tablefmt="plain"))


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
                                                 ("new", "new"), ("removed", "removed"),
                                                 ("placedElsewhere", "placed elsewhere")) if s.get(k)]
    changed = f"{s['changed']} pod{'s' if s['changed'] != 1 else ''} change" + (f" ({', '.join(parts)})" if parts else "")
    return f"Before: {side(b)}.\nAfter:  {side(a)}.\n{changed}."


def whatif_table(doc: Mapping[str, Any], opts: RenderOptions | None = None) -> str:
    opts = opts or RenderOptions()
    full, width = opts.full, opts.width
    out = []
    mods = doc["modifications"]
    out.append(wrap("Changes: " + ("; ".join(mods) if mods else "none"), width, hanging="  "))
    for p in doc["podsAffected"]:
        out.append(wrap(f"{p['namespace']}/{p['name']} on {p['node']}: {p['fate']} ({p['reason']})", width,
                        "  ", hanging="    "))
    u = doc["untilFit"]
    if u is not None:
        if u["count"] is None:
            out.append(wrap(f"Until fit: {u['reason']}.", width, hanging="  "))
        elif u["count"] == 0:
            out.append("Until fit: every pending pod already fits; no node needed.")
        else:
            out.append(wrap(f"Until fit: {u['count']} node{'s' if u['count'] != 1 else ''} like {u['template']} "
                            f"make{'s' if u['count'] == 1 else ''} every pending pod fit "
                            f"(tried: {', '.join(str(p['count']) for p in u['probes'])}).", width, hanging="  "))
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
        out.append(table(rows, ["POD", "CHANGE", "BEFORE", "AFTER"], width, wrap_columns=[2, 3]))
        for k, n in hidden.items():
            out.append(f"… and {n} more {k} (--all lists them)")
    else:
        out.append("No pod changes status or node.")
    out.append("")
    nodes = doc["utilization"]["nodes"]
    changed = sum(1 for it in nodes if it["before"] != it["after"])
    items = _usage_items(nodes, changed_only=True, top=None if full else TOP)
    if items:
        out.append(_usage_table(items, "name", width))
        if len(items) < changed:
            out.append(f"… and {changed - len(items)} more nodes whose utilisation changed less (--all lists them)")
        out.append("")
    out.append(_usage_table(doc["utilization"]["zones"], "zone", width, total=doc["utilization"]["total"]))
    out.append("")
    out.append(whatif_summary(doc))
    return "\n".join(out) + "\n"

