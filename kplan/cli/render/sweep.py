"""The table and Markdown renderers of the SweepResult document (``kplan sweep``)."""

from __future__ import annotations

import re

from tabulate import tabulate

from kplan.cli.render import RenderOptions
from kplan.cli.render.layout import MIN_WRAP, plain, visible_len, wrap
from kplan.cli.render.units import plural
from kplan.report.sweep import (
    Axis,
    HpaAxisDoc,
    NodeAxisDoc,
    PendingRange,
    PercentRange,
    ReleaseAxisDoc,
    ScaleChoice,
    SweepDocument,
)


def axis_header(axis: Axis) -> str:
    if isinstance(axis, NodeAxisDoc):
        return f"+{axis.template}"
    if isinstance(axis, HpaAxisDoc):
        return "hpa"
    if isinstance(axis, ReleaseAxisDoc):
        return "release"
    return axis.workload.split(" ", 1)[-1]


def cell(axis: Axis, value: int) -> str:
    """A point's value on an axis: a count, or the word it indexes (a bound, a release)."""
    if isinstance(axis, (HpaAxisDoc, ReleaseAxisDoc)):
        return axis.values[value]
    return str(value)


def _group(g: ScaleChoice) -> str:
    """``shop/web=10, release 1.37, hpa max``: what a cheapest-per-size line is for."""
    parts = [f"{w.split(' ', 1)[-1]}={n}" for w, n in g.replicas.items()]
    if g.release is not None:
        parts.append(f"release {g.release}")
    if g.hpa is not None:
        parts.append(f"hpa {g.hpa}")
    return ", ".join(parts)


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:g}"
    return str(x)


def share(p: PercentRange) -> str:
    lo, hi = p.min, p.max
    if lo is None:
        return "-"
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def pending(p: PendingRange) -> str:
    return f"{p.min}/{_num(p.median)}/{p.max}"


def probability(x: float) -> str:
    return f"{x:.2f}"


def rows(doc: SweepDocument) -> tuple[list[str], list[list[str]]]:
    headers = ["#", *(axis_header(a).upper() for a in doc.axes), "PENDING MIN/MED/MAX", "FIT", "CPU", "MEMORY"]
    if doc.priced:
        headers.append("COST")
    out = []
    for p in doc.points:
        row = [str(p.index), *(cell(a, v) for a, v in zip(doc.axes, p.values, strict=True)), pending(p.pending), probability(p.fit_probability),
               share(p.cpu_percent), share(p.memory_percent)]
        if doc.priced:
            row.append(_num(p.cost))
        out.append(row)
    return headers, out


def verdict(doc: SweepDocument) -> list[str]:
    """The answer in sentences: the cheapest fitting points, or that none fits."""
    bar = probability(doc.confidence)
    seeds = len(doc.seeds)
    what = "cheapest" if doc.priced else "smallest"
    if not doc.cheapest:
        out = [f"No point fits every pending pod with probability >= {bar} ({plural(seeds, 'seed')})."]
        b = doc.best_point
        if b is not None:
            changes = ", ".join(b.changes) or "no change"
            names = ", ".join(b.pending_pods[:10])
            more = "" if b.pending.max <= 10 and len(b.pending_pods) <= 10 else ", …"
            out.append(f"The closest, #{b.index} ({changes}, fit {probability(b.fit_probability)}), leaves "
                       f"{pending(b.pending)} pods pending (min/median/max): {names}{more}")
        return out
    out = [f"The {what} points where every pending pod fits with probability >= {bar} "
           f"({plural(seeds, 'seed')}):"]
    for rank, c in enumerate(doc.cheapest, 1):
        changes = ", ".join(c.changes) or "no change"
        cost = f", cost {_num(c.cost)}/h" if c.cost is not None else ""
        out.append(f"  {rank}. #{c.index}: {changes} (fit {probability(c.fit_probability)}{cost})")
    if doc.cheapest_per_scale:
        out.append("")
        first = doc.cheapest_per_scale[0]
        kinds = (["workload size"] if first.replicas else []) + (["release"] if first.release is not None else []) \
            + (["autoscaler bound"] if first.hpa is not None else [])
        what_for = ", ".join(kinds[:-1]) + (" and " if len(kinds) > 1 else "") + kinds[-1]
        out.append(f"The {what} fitting point for each {what_for}:")
        for g in doc.cheapest_per_scale:
            size = _group(g)
            choice = g.cheapest
            if choice is None:
                out.append(f"  {size}: no point of the grid fits")
                continue
            nodes = ", ".join(x for x in choice.changes if x.startswith("add ")) or "no added nodes"
            cost = f", cost {_num(choice.cost)}/h" if choice.cost is not None else ""
            out.append(f"  {size}: #{choice.index}: {nodes} (fit {probability(choice.fit_probability)}{cost})")
    return out


def header(doc: SweepDocument) -> list[str]:
    s = doc.summary
    seeds = doc.seeds
    seed_text = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}..{seeds[-1]}"
    out = [f"Sweep: {plural(s.points, 'point')} x {plural(len(seeds), 'seed')} "
           f"({seed_text}, tie-break {doc.tie_break}) = {plural(s.simulations, 'simulation')}."]
    if doc.fixed_changes:
        out.append(f"Every point also: {'; '.join(doc.fixed_changes)}.")
    return out


def _grid(headers: list[str], body: list[list[str]], width: int | None) -> str:
    """The points, numbers right-aligned; on a terminal too narrow for tabulate's layout, laid out
    tightly with headers on several lines, broken between words or, for a long node name, after a
    dot (``+IP-10-0-10-170.`` over ``EC2.INTERNAL``)."""
    text = str(tabulate(body, headers=headers, tablefmt="plain", disable_numparse=True,
                        colalign=["right"] * len(headers)))
    if width is None or visible_len(text) <= width:
        return text
    # the headers' lines as long as the width allows, all cut at one length
    for cap in range(max(len(h) for h in headers), MIN_WRAP - 1, -1):
        heads = ["\n".join(_lines(h, max([cap] + [len(r[c]) for r in body]) if len(h) > cap else len(h)))
                 for c, h in enumerate(headers)]
        text = plain(body, heads, align=["right"] * len(headers))
        if visible_len(text) <= width:
            break
    return text


def _lines(header: str, room: int) -> list[str]:
    """A header on lines of at most ``room`` characters (or one segment longer), broken between
    words or, in a long name, after a separator (``+IP-10-0-30-25.`` over ``EC2.INTERNAL``)."""
    lines: list[str] = []
    for word in header.split():
        pieces = [word] if len(word) <= room else re.findall(r"[^./-]*[./-]|[^./-]+$", word)
        for i, piece in enumerate(pieces):
            glue = "" if i else " "
            if lines and len(lines[-1]) + len(glue) + len(piece) <= room:
                lines[-1] += glue + piece
            else:
                lines.append(piece)
    return lines


def sweep_table(doc: SweepDocument, opts: RenderOptions) -> str:
    width = opts.width
    headers, body = rows(doc)
    out = [wrap(line, width, hanging="  ") for line in header(doc)]
    out.append("")
    out.append(_grid(headers, body, width))
    out.append("")
    for line in verdict(doc):
        lead = line[:len(line) - len(line.lstrip())]
        out.append(wrap(line.strip(), width, lead, hanging=lead + ("   " if lead else "  ")) if line else line)
    return "\n".join(out) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


#: GitHub limits a comment to 65,536 characters
MAX_MD_ROWS = 200


def sweep_markdown(doc: SweepDocument, opts: RenderOptions) -> str:
    ok = bool(doc.cheapest)
    s = doc.summary
    out = [f"### {'✅' if ok else '❌'} kplan sweep: {s.points_that_fit} of {s.points} points fit", ""]
    out += [_md_cell(line) for line in header(doc)]
    out.append("")
    out += [_md_cell(line) if not line.startswith("  ") else "- " + _md_cell(line.strip()) for line in verdict(doc)]
    out.append("")
    headers, body = rows(doc)
    out.append("<details>")
    out.append(f"<summary>All points ({len(body)})</summary>")
    out.append("")
    out.append("| " + " | ".join(_md_cell(h.capitalize() if h != "#" else h) for h in headers) + " |")
    out.append("|" + "---|" * len(headers))
    for row in body[:MAX_MD_ROWS]:
        out.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
    if len(body) > MAX_MD_ROWS:
        out.append("")
        out.append(f"{len(body) - MAX_MD_ROWS} more points: see -o json.")
    out.append("")
    out.append("</details>")
    return "\n".join(out) + "\n"
