"""The table renderer of the WhatIfResult document (``-o table``; json and yaml print the document)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from tabulate import tabulate

from kplan.cli.render import RenderOptions
from kplan.cli.render.layout import SQUEEZED, Names, table, visible_len, wrap
from kplan.cli.render.units import amount, autoscaler_name, plural, usage
from kplan.report.document import RunCounts
from kplan.report.shrink import NodeUtilization, ShrinkDoc
from kplan.report.whatif import (
    AddedNode,
    CountShare,
    CpuShare,
    MemoryShare,
    NodeUsageChange,
    PodState,
    TotalUsage,
    UntilFitDoc,
    UsageDoc,
    WhatIfDocument,
    ZoneUsageChange,
)
from kplan.scheduler.pod_status import NOT_RUNNING as NOT_RUNNING_STATUSES

UsageItem = NodeUsageChange | ZoneUsageChange


def _state(s: PodState) -> str:
    if s.status == "Absent":
        return "-"
    return s.status + (f" on {s.node}" if s.node else "")


def share(u: UsageDoc, res: str) -> CpuShare | MemoryShare | CountShare:
    found: CpuShare | MemoryShare | CountShare = getattr(u, res)
    return found


def _cell(u: UsageDoc | None, res: str) -> str:
    if u is None:
        return "-"
    c = share(u, res)
    pct = f" {c.percent}%" if c.percent is not None else ""
    return f"{usage(res, c.requested, c.allocatable)}{pct}"


#: rows per change kind, and changed nodes, in the table unless --all
TOP = 20


def _shift(it: UsageItem) -> int:
    """How much a node's utilisation moved (percentage points, the larger of cpu and memory)."""
    if it.before is None or it.after is None:
        return 1000  # added and removed nodes first
    return max(abs((share(it.after, r).percent or 0) - (share(it.before, r).percent or 0)) for r in ("cpu", "memory"))


def _usage_items(items: Sequence[UsageItem], changed_only: bool, top: int | None = None) -> list[UsageItem]:
    items = [it for it in items if not changed_only or it.before != it.after]
    if top is not None and len(items) > top:
        keep = {id(it) for it in sorted(items, key=lambda it: -_shift(it))[:top]}
        items = [it for it in items if id(it) in keep]
    return items


_RESOURCES = ("cpu", "memory", "pods")
_WIDE_HEADERS = ["CPU BEFORE", "CPU AFTER", "MEMORY BEFORE", "MEMORY AFTER", "PODS BEFORE", "PODS AFTER"]


def _name(it: UsageItem) -> str:
    return it.name if isinstance(it, NodeUsageChange) else it.zone


def node_names(doc: WhatIfDocument, columns: tuple[int, ...]) -> Names:
    """The nodes of both runs (added ones too), whose names a narrow table may shorten."""
    return Names("a node name", columns, sorted({n.name for run in (doc.before, doc.after) for n in run.nodes}))


def _usage_table(items: Sequence[UsageItem], key: str, width: int | None, total: TotalUsage | None = None,
                 names: Names | None = None, notes: list[str] | None = None) -> str:
    """Utilisation before and after: a column per resource and side; where that does not fit the
    width, a column per resource whose cell reads ``before → after``, the quantities on one line
    and the percentages under them (the zone under the node's name)."""
    first = ["NODE", "ZONE"] if key == "name" else ["ZONE"]
    rows = []
    for it in items:
        row = [_name(it)] + ([it.zone] if key == "name" else [])
        rows.append(row + [_cell(u, res) for res in _RESOURCES for u in (it.before, it.after)])
    if total is not None:
        rows.append(["(all)"] + [_cell(u, res) for res in _RESOURCES for u in (total.before, total.after)])
    wide = str(tabulate(rows, headers=first + _WIDE_HEADERS, tablefmt="plain"))
    if width is None or visible_len(wide) <= width:
        return wide
    narrow = []
    sides: list[tuple[str, UsageDoc | None, UsageDoc | None]] = [
        (_name(it) + (f"\n{it.zone}" if isinstance(it, NodeUsageChange) and it.zone else ""), it.before, it.after)
        for it in items]
    if total is not None:
        sides.append(("(all)", total.before, total.after))
    for name, before, after in sides:
        narrow.append([name, *[f"{_cell(before, res)}\n→ {_cell(after, res)}" for res in _RESOURCES]])
    heads = [f"{first[0]}" + ("\nZONE" if key == "name" else "")] + [f"{r.upper()} BEFORE\n→ AFTER" for r in _RESOURCES]
    return table(narrow, heads, width, names=[names] if names else (), notes=notes)


def _changes_table(doc: WhatIfDocument, rows: list[list[str]], width: int | None, notes: list[str]) -> str:
    """POD, CHANGE, BEFORE, AFTER; where those four columns fit only with names squeezed, the
    states go under the pod's row as ``BEFORE → AFTER``, wrapped, and the names stay whole."""
    pods = Names("a pod name", (0,), [c.key for c in doc.changes])
    said: list[str] = []
    text = table(rows, ["POD", "CHANGE", "BEFORE", "AFTER"], width, wrap_columns=[2, 3],
                 names=[node_names(doc, (2, 3)), pods], notes=said)
    if SQUEEZED in said:
        said = []
        text = table([[pod, change, f"{before} → {after}"] for pod, change, before, after in rows],
                     ["POD", "CHANGE", "BEFORE → AFTER"], width, spill=True, names=[pods], notes=said)
    notes.extend(n for n in said if n not in notes)
    return text


def whatif_summary(doc: WhatIfDocument) -> str:
    """Before and after counts, and how many pods change, on three lines."""
    s = doc.summary
    b, a = s.before, s.after

    def side(x: RunCounts) -> str:
        text = f"{x.scheduled}/{x.pending} pending pods scheduled"
        if x.unschedulable:
            text += f", {x.unschedulable} unschedulable"
        if x.gated:
            text += f", {x.gated} gated"
        if x.preempted:
            text += f", {plural(x.preempted, 'pod')} preempted"
        return text + f" ({plural(x.nodes, 'node')})"

    parts = [f"{n} {label}" for n, label in ((s.evicted, "evicted"), (s.moved, "moved"),
                                              (s.now_schedulable, "now schedulable"),
                                              (s.now_unschedulable, "now unschedulable"), (s.preempted, "preempted"),
                                              (s.no_longer_preempted, "no longer preempted"), (s.deleted, "deleted"),
                                              (s.new, "new"), (s.removed, "removed"),
                                              (s.placed_elsewhere, "placed elsewhere")) if n]
    changed = f"{plural(s.changed, 'pod')} change" + (f" ({', '.join(parts)})" if parts else "")
    return f"Before: {side(b)}.\nAfter:  {side(a)}.\n{changed}."


def until_fit_lines(u: UntilFitDoc, full: bool = False) -> list[str]:
    """The answer for one template: a sentence, then (indented) the pods that never fit on such
    a node with the filter that rejects them, and the pods still pending at the answer."""
    tried = ", ".join(str(p.count) for p in u.probes)
    if u.count == 0 and u.all_fit:
        return ["Until fit: every pending pod already fits; no node needed."]
    if u.count is not None and u.all_fit:
        return [f"Until fit: {plural(u.count, 'node')} like {u.template} make{'s' if u.count == 1 else ''} every "
                f"pending pod fit (tried: {tried})."]
    if u.count is None and not u.still_pending:
        return [f"Until fit: {u.reason}."]  # the reason names the pods that never fit
    if u.count is None:
        out = [f"Until fit: {u.reason} (tried: {tried})."]
    else:
        waiting = len(u.placed) + len(u.never_fit) + len(u.still_pending)
        rest = ("the others never fit on such a node" if not u.still_pending else
                "more nodes placed no more")
        out = [f"Until fit: {plural(u.count, 'node')} like {u.template} place{'s' if u.count == 1 else ''} "
               f"{len(u.placed)} of the {plural(waiting, 'pending pod')} that do not fit now; {rest} "
               f"(tried: {tried})."]
    limit = None if full else TOP
    if u.never_fit:
        out.append(f"  {plural(len(u.never_fit), 'pod')} never fit{'s' if len(u.never_fit) == 1 else ''} on a "
                   f"node like {u.template}:")
        for n in u.never_fit[:limit]:
            out.append(f"    {n.key} ({n.plugin + ': ' if n.plugin else ''}{n.reason})")
        if limit is not None and len(u.never_fit) > limit:
            out.append(f"    … and {len(u.never_fit) - limit} more (--all lists them)")
    if u.still_pending:
        names = ", ".join(p.key for p in u.still_pending[:limit])
        more = f" and {len(u.still_pending) - limit} more" if limit is not None and len(u.still_pending) > limit else ""
        out.append(f"  {plural(len(u.still_pending), 'pod')} fit{'s' if len(u.still_pending) == 1 else ''} on an "
                   f"empty node like {u.template} yet stay{'s' if len(u.still_pending) == 1 else ''} pending: "
                   f"{names}{more}")
    return out


def _pct(u: NodeUtilization) -> str:
    """The utilisation in whole percent, truncated as every table's percent is (a node at 22.75 %
    reads 22 % here and in the table below, not 23 % and 22 %)."""
    return f"{int(Fraction(str(u.value)) * 100)}% {u.resource}"


def _cost(x: float) -> str:
    return f"{x:g}"


def shrink_lines(sh: ShrinkDoc, full: bool = False) -> list[str]:
    """The nodes that can go, in order, with the pods that move; the cost; the nodes that stay,
    each with its reason and the pods that block it."""
    s = sh.settings
    considered = len(sh.removed) + len(sh.kept)
    out = [f"Shrink: {len(sh.removed)} of the {plural(considered, 'node')} considered can go "
           f"(below {s.scale_down_utilization_threshold:g} utilisation, least utilised first; every running pod "
           "rescheduled, every pending pod placed)" + (":" if sh.removed else ".")]
    limit = None if full else TOP
    for v in sh.removed[:limit]:
        price = f", {_cost(v.price)}/h" if v.price is not None else ""
        moves = (": " + ", ".join(f"{m.key} → {m.node}" for m in v.moved[:5])
                 + (f" and {len(v.moved) - 5} more" if len(v.moved) > 5 else "")) if v.moved else ": no pod to move"
        out.append(f"  {v.name} ({_pct(v.utilization)}{price}){moves}")
    if limit is not None and len(sh.removed) > limit:
        out.append(f"  … and {len(sh.removed) - limit} more (--all lists them)")
    if sh.cost is not None:
        c = sh.cost
        unpriced = f"; {plural(c.unpriced_nodes, 'node')} without a price" if c.unpriced_nodes else ""
        out.append(f"Cost: {_cost(c.before)}/h → {_cost(c.after)}/h (saves {_cost(c.saved)}/h{unpriced}).")
    if sh.unplaced_before:
        out.append(f"  {plural(len(sh.unplaced_before), 'pending pod')} fit nowhere even before any removal: "
                   + ", ".join(p.key for p in sh.unplaced_before[:10]) + (", …" if len(sh.unplaced_before) > 10 else ""))
    if sh.kept:
        out.append("Nodes that stay:")
    shown = 0
    for k in sh.kept:
        if limit is not None and shown >= limit:
            out.append(f"  … and {len(sh.kept) - shown} more (--all lists them)")
            break
        shown += 1
        first = k.blockers[0] if k.blockers else None
        if first is None:
            out.append(f"  {k.name} ({_pct(k.utilization)}): {k.reason}")
        elif first.pod is None:
            out.append(f"  {k.name} ({_pct(k.utilization)}): {k.reason}: {first.message}")
        else:
            more = f" (and {len(k.blockers) - 1} more pods)" if len(k.blockers) > 1 else ""
            out.append(f"  {k.name} ({_pct(k.utilization)}): {k.reason}: {first.pod.key}: {first.reason}: "
                       f"{first.message}{more}")
    return out


def no_change_line(doc: WhatIfDocument, most: int = 3) -> str:
    """``No pod changes status or node`` and, when pending pods still do not run, what holds them,
    which the change did not touch (loki-0 waiting for a StorageClass after --add-node)."""
    stuck = [p for p in doc.after.pods if p.status in NOT_RUNNING_STATUSES]
    if not stuck:
        return "No pod changes status or node."
    named = "; ".join(f"{p.key}: {p.reason or p.status}" for p in stuck[:most])
    more = f"; and {len(stuck) - most} more" if len(stuck) > most else ""
    verb = "does" if len(stuck) == 1 else "do"
    return (f"No pod changes status or node: the change does not touch what holds the "
            f"{plural(len(stuck), 'pod')} that still {verb} not run: {named}{more}.")


def shrink_replay_note(doc: WhatIfDocument) -> list[str]:
    """Why --shrink's moves and the table of the replay can name other nodes, when they do: the
    search removes one node at a time (cluster-autoscaler's order), scheduling its pods on what
    the earlier removals left; the replay runs the whole answer at once from the inputs."""
    if doc.shrink is None:
        return []
    after = {c.key: c.after.node for c in doc.changes}
    differ = [(m.key, m.node, after[m.key]) for v in doc.shrink.removed for m in v.moved
              if m.key in after and after[m.key] is not None and after[m.key] != m.node]
    if not differ:
        return []
    key, planned, placed = differ[0]
    return [f"Note: the moves above are the search's, one node at a time in the order shown (each node's pods "
            f"scheduled on what the earlier removals left); the table below replays the whole answer at once from "
            f"the inputs (the pending pods and the replacements scheduled together), so "
            f"{plural(len(differ), 'pod')} land{'s' if len(differ) == 1 else ''} elsewhere there ({key} on {placed}, "
            f"not {planned}). Both place every pod."]


def _names(items: Sequence[str], most: int = 3) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def _overhead_lines(doc: WhatIfDocument, width: int | None) -> list[str]:
    """The added nodes' DaemonSet pods, nodes alike grouped: what each starts with."""
    groups: dict[tuple[object, ...], list[str]] = {}
    first: dict[tuple[object, ...], AddedNode] = {}
    for n in doc.added_nodes:
        if not n.daemon_pods:
            continue
        key = (tuple(sorted(n.overhead.items())),
               tuple((p.daemon_set, p.status, p.message) for p in n.daemon_pods))
        groups.setdefault(key, []).append(n.name)
        first.setdefault(key, n)
    if not groups:
        return []
    out = ["DaemonSet pods on the added nodes (placed before the pending pods):"]
    for group, names in groups.items():
        n = first[group]
        placed = [p for p in n.daemon_pods if p.status == "Scheduled"]
        spent = ", ".join(amount(r, q) for r, q in sorted(n.overhead.items()) if q) or "nothing"
        each = " each" if len(names) > 1 else ""
        out.append(wrap(f"{_names(names)}: {plural(len(placed), 'pod')}{each} "
                        f"({', '.join(p.daemon_set for p in placed) or 'none'}), requesting {spent}{each}",
                        width, "  ", hanging="    "))
        for p in n.daemon_pods:
            if p.status != "Scheduled":
                why = f": {p.message}" if p.message else ""
                out.append(wrap(f"{p.daemon_set}: {p.status}{why}", width, "    ", hanging="      "))
    return out


def autoscaler_lines(doc: WhatIfDocument) -> list[str]:
    """--autoscaler: what it launched before and after the change, what that costs, and the nodes
    of the run after (indented lines follow the line they belong to)."""
    b, a = doc.before.autoscaling, doc.after.autoscaling
    if b is None or a is None:
        return []
    who = autoscaler_name(a.autoscaler)
    dh, dm = a.price_per_hour - b.price_per_hour, a.price_per_month - b.price_per_month
    sign = "+" if dh >= 0 else "-"
    lines = [f"{who} launches {plural(b.nodes, 'node')} (${b.price_per_hour:,.4f} per hour) before the change and "
             f"{plural(a.nodes, 'node')} (${a.price_per_hour:,.4f} per hour) after: {sign}${abs(dh):,.4f} per hour, "
             f"{sign}${abs(dm):,.2f} per month (730 h)."]
    for n in doc.after.launched:
        lines.append(f"  {n.name}: {n.node_pool or n.node_group}, {n.instance_type} {n.capacity_type} in {n.zone}, "
                     f"${n.price_per_hour:.4f} per hour, {plural(len(n.pods), 'pod')}")
    if a.stopped_at_bound:
        lines.append(f"  {who} still launched nodes after {a.rounds} rounds, where kplan stops asking")
    return lines


def consolidation_lines(doc: WhatIfDocument) -> list[str]:
    """--shrink --autoscaler karpenter: which nodes go and what it saves, then each node's verdict
    (the nodes that go first, in command order) and the replacements (indented lines follow)."""
    import time

    c = doc.consolidation
    if c is None:
        return []
    gone = [n for n in c.nodes if n.verdict != "kept"]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(c.now))
    lines = [f"{c.autoscaler.capitalize()}'s disruption at {when}: {len(gone)} of {plural(len(c.nodes), 'node')} "
             f"go, ${c.price_per_hour_before:,.4f} -> ${c.price_per_hour_after:,.4f} per hour: saves "
             f"${c.saving_per_hour:,.4f} per hour, ${c.saving_per_month:,.2f} per month (730 h)."]
    for n in sorted(gone, key=lambda n: n.round):
        by = f" by {', '.join(n.replaced_by)}" if n.replaced_by else ""
        moved = sorted({m.node for m in n.moved})
        to = f"; its pods to {', '.join(moved)}" if moved else ""
        lines.append(f"  {n.name}: {n.verdict}{by} ({n.reason}, {n.method}, command {n.round}){to}")
    for r in c.launched:
        lines.append(f"  {r.name}: new, {r.node_pool}, {r.instance_type} {r.capacity_type} in {r.zone}, "
                     f"${r.price_per_hour:.4f} per hour")
    for n in c.nodes:
        if n.verdict == "kept":
            lines.append(f"  {n.name}: kept: {n.reason}")
    return lines


def whatif_table(doc: WhatIfDocument, opts: RenderOptions | None = None) -> str:
    opts = opts or RenderOptions()
    full, width = opts.full, opts.width
    notes: list[str] = []  # what a … in a shortened name stands for, said once at the end
    out = []
    mods = doc.modifications
    out.append(wrap("Changes: " + ("; ".join(mods) if mods else "none"), width, hanging="  "))
    for p in doc.pods_affected:
        out.append(wrap(f"{p.namespace}/{p.name} on {p.node}: {p.fate} ({p.reason})", width, "  ", hanging="    "))
    lines = [line for u in doc.until_fits or ((doc.until_fit,) if doc.until_fit is not None else ())
             for line in until_fit_lines(u, full)]
    if doc.shrink is not None:
        lines += shrink_lines(doc.shrink, full) + shrink_replay_note(doc)
    lines += autoscaler_lines(doc)
    lines += consolidation_lines(doc)
    if lines:
        for line in lines:
            indent = line[:len(line) - len(line.lstrip())]
            out.append(wrap(line.lstrip(), width, indent, hanging=indent + "  "))
    out += _overhead_lines(doc, width)
    for note in doc.notes:
        out.append(wrap(f"Note: {note}.", width, hanging="  "))
    out.append("")
    if doc.changes:
        rows: list[list[str]] = []
        hidden: dict[str, int] = {}
        shown: dict[str, int] = {}
        for c in doc.changes:
            k = c.change
            if not full and shown.get(k, 0) >= TOP:
                hidden[k] = hidden.get(k, 0) + 1
                continue
            shown[k] = shown.get(k, 0) + 1
            rows.append([c.key, k, _state(c.before), _state(c.after)])
        out.append(_changes_table(doc, rows, width, notes))
        for k, n in hidden.items():
            out.append(f"… and {n} more {k} (--all lists them)")
    else:
        out.append(wrap(no_change_line(doc), width, hanging="  "))
    out.append("")
    nodes = doc.utilization.nodes
    changed = sum(1 for it in nodes if it.before != it.after)
    items = _usage_items(nodes, changed_only=True, top=None if full else TOP)
    if items:
        out.append(_usage_table(items, "name", width, names=node_names(doc, (0,)), notes=notes))
        if len(items) < changed:
            out.append(f"… and {changed - len(items)} more nodes whose utilisation changed less (--all lists them)")
        out.append("")
    out.append(_usage_table(doc.utilization.zones, "zone", width, total=doc.utilization.total))
    out.append("")
    out.append(whatif_summary(doc))
    if notes:  # what the … of shortened names stand for
        out += [""] + [wrap(n, width) for n in notes]
    return "\n".join(out) + "\n"

