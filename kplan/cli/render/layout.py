"""Fitting text to the terminal: tables whose long cells wrap at word boundaries, paragraphs with
a hanging indent, and quantities in human units.

Every function takes the width to fit (``None``: not a terminal, never wrap, so that scripts can
grep whole lines). Cells may carry ANSI colour codes; widths are measured without them, and only
columns of plain text are ever wrapped.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from tabulate import tabulate

#: columns between two cells, as tabulate's "plain" format puts them
GAP = 2
#: what tabulate adds to a header's width when it sizes a column (its MIN_PADDING)
HEADER_PAD = 2
#: a wrapped column never gets narrower than this: below it words would be cut anyway
MIN_WRAP = 12
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def visible_len(text: str) -> int:
    return max((len(_ANSI.sub("", line)) for line in text.split("\n")), default=0)


def wrap(text: str, width: int | None, indent: str = "", hanging: str | None = None) -> str:
    """``text`` as lines of at most ``width`` columns, broken between words (a word longer than a
    line gets a line of its own, whole); ``hanging`` indents the lines after the first."""
    if width is None:
        return indent + text
    return "\n".join(textwrap.wrap(text, width=max(width, len(indent) + MIN_WRAP), initial_indent=indent,
                                   subsequent_indent=indent if hanging is None else hanging,
                                   break_long_words=False, break_on_hyphens=False)) or indent


#: a last column squeezed narrower than this goes under its row instead (see ``table``)
MIN_BESIDE = 40


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], width: int | None = None,
          wrap_columns: Sequence[int] = (), indent: str = "", spill: bool = False) -> str:
    """A plain table (tabulate's "plain" format) of at most ``width`` columns: when the natural
    layout is wider, the ``wrap_columns`` share what the other columns leave, in proportion to
    their natural widths, and their cells wrap at word boundaries. With ``spill``, a last column
    that would be left fewer than MIN_BESIDE columns is printed under each row instead, indented
    and wrapped to the whole width: a long message then reads as a paragraph, not a thin strip."""
    grid = [list(r) for r in rows]
    if width is not None and grid and spill:
        ncol = len(headers)
        others = [max([visible_len(str(headers[c]))] + [visible_len(str(r[c])) for r in grid]) for c in range(ncol - 1)]
        beside = width - len(indent) - sum(others) - GAP * (ncol - 1)
        natural = max([visible_len(str(headers[-1]))] + [visible_len(str(r[-1])) for r in grid])
        if beside < min(MIN_BESIDE, natural):
            return _spilled(grid, headers, width, indent)
    heads = list(headers)
    if width is not None and grid and wrap_columns:
        grid, heads = _fit(grid, headers, width - len(indent), wrap_columns)
    text = str(tabulate(grid, headers=heads, tablefmt="plain"))
    return indent + text.replace("\n", "\n" + indent) if indent else text


def _spilled(rows: list[list[Any]], headers: Sequence[str], width: int, indent: str) -> str:
    head = str(tabulate([r[:-1] for r in rows], headers=list(headers[:-1]), tablefmt="plain")).split("\n")
    out = [indent + head[0]]
    for line, r in zip(head[1:], rows, strict=True):
        out.append(indent + line.rstrip())
        if str(r[-1]):
            out.append(wrap(str(r[-1]), width, indent + "    "))
    return "\n".join(out)


def _fit(rows: list[list[Any]], headers: Sequence[str], width: int, wrap_columns: Sequence[int]
         ) -> tuple[list[list[Any]], list[str]]:
    """Rows and headers narrowed to ``width`` if they can be: headers longer than their column's
    cells go on two lines, then the wrap columns share the room left, the narrow ones keeping
    their natural width (water-filling) and the others wrapping at word boundaries."""
    ncol = len(headers)
    heads = list(headers)
    cells = [max([visible_len(str(r[c])) for r in rows]) for c in range(ncol)]
    # tabulate pads a header by HEADER_PAD when it sizes a column
    natural = [max(visible_len(heads[c]) + HEADER_PAD, cells[c]) for c in range(ncol)]
    if sum(natural) + GAP * (ncol - 1) <= width:
        return rows, heads
    for c in range(ncol):
        if visible_len(heads[c]) + HEADER_PAD > cells[c] and " " in heads[c]:
            heads[c] = "\n".join(textwrap.wrap(heads[c], width=max(cells[c] - HEADER_PAD, 8,
                                                                      max(map(len, heads[c].split()))),
                                               break_long_words=False))
            natural[c] = max(visible_len(heads[c]) + HEADER_PAD, cells[c])
    room = width - GAP * (ncol - 1) - sum(natural[c] for c in range(ncol) if c not in wrap_columns)
    fixed: dict[int, int] = {}  # wrap columns a word too long for their share holds wider
    for _ in range(len(wrap_columns) + 1):
        widths = dict(fixed)
        left = room - sum(fixed.values())
        todo = sorted((c for c in wrap_columns if c not in fixed), key=lambda c: natural[c])
        while todo:
            share = max(left, 0) // len(todo)
            c = todo.pop(0)
            widths[c] = max(MIN_WRAP, min(natural[c], share))
            left -= widths[c]
        out = []
        for r in rows:
            r = list(r)
            for c, w in widths.items():
                if visible_len(str(r[c])) > w:
                    r[c] = "\n".join(textwrap.wrap(str(r[c]), width=w, break_long_words=False, break_on_hyphens=False))
            out.append(r)
        wider = {c: max(visible_len("\n".join(str(r[c]) for r in out)),
                        max(map(len, heads[c].split())) + HEADER_PAD) for c in widths}
        grown = {c: w for c, w in wider.items() if w > widths[c] and c not in fixed}
        if not grown:
            break
        fixed.update(grown)
    for c, w in widths.items():
        if visible_len(heads[c]) + HEADER_PAD > w:
            heads[c] = "\n".join(textwrap.wrap(heads[c], width=max(w - HEADER_PAD, 1), break_long_words=False))
    return out, heads


# ------------------------------------------------------------------------------ human units

_BINARY = (("Ei", 2 ** 60), ("Pi", 2 ** 50), ("Ti", 2 ** 40), ("Gi", 2 ** 30), ("Mi", 2 ** 20), ("Ki", 2 ** 10))


def _three_digits(x: Fraction) -> str:
    """``x`` with three significant digits at most, trailing zeros dropped: 1.40 → 1.4, 121.2 → 121."""
    if x >= 100:
        return str(round(x))
    digits = 1 if x >= 10 else 2 if x >= 0.1 else 3
    text = f"{float(x):.{digits}f}".rstrip("0").rstrip(".")
    return text


def human_bytes(n: int | Fraction) -> str:
    """Bytes in the largest binary unit that leaves at least 1: 140Mi, 1.4Gi, 30Gi, 512."""
    for unit, size in _BINARY:
        if n >= size:
            return _three_digits(Fraction(n) / size) + unit
    return str(n)


def human_cpu(milli: int | Fraction) -> str:
    """Millicores below one core (150m), cores from one core up (1.8, 7.91, 16)."""
    if milli < 1000:
        return f"{round(milli)}m"
    return _three_digits(Fraction(milli) / 1000)


def human_quantity(resource: str, amount: int) -> str:
    """An amount of a resource (millicores for cpu, bytes for memory and storage, a count
    otherwise) in human units: cpu in cores, memory and storage in binary units; anything else
    (pods, GPUs, counts) as Kubernetes writes it."""
    if resource == "cpu":
        return human_cpu(amount)
    if resource in ("memory", "ephemeral-storage", "storage") or resource.startswith("hugepages-"):
        return human_bytes(amount)
    from kplan.model.quantity import format_resource

    return format_resource(resource, amount)


def usage(resource: str, requested: int, allocatable: int) -> str:
    """``requested/allocatable`` in human units: 140Mi/1.4Gi (each with its unit), and cpu both in
    cores (0.15/3.92) or both in millicores (150m/500m), as the allocatable is, since cores carry no
    unit to tell them apart."""
    if resource == "cpu":
        if allocatable >= 1000:
            return f"{_cores(Fraction(requested, 1000))}/{_cores(Fraction(allocatable, 1000))}"
        return f"{requested}m/{allocatable}m"
    return f"{human_quantity(resource, requested)}/{human_quantity(resource, allocatable)}"


def _cores(x: Fraction) -> str:
    return "0" if x == 0 else _three_digits(x)
