"""Fitting text to the terminal: tables whose long cells wrap at word boundaries, and paragraphs
with a hanging indent (quantities in human units: kplan.cli.render.units).

Every function takes the width to fit (``None``: not a terminal, never wrap, so that scripts can
grep whole lines). Cells may carry ANSI colour codes; widths are measured without them, and only
columns of plain text are ever wrapped.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
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
