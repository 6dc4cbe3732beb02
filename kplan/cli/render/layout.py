"""Fitting text to the terminal: tables whose long cells wrap at word boundaries, and paragraphs
with a hanging indent (quantities in human units: kplan.cli.render.units).

Every function takes the width to fit (``None``: not a terminal, never wrap, so that scripts can
grep whole lines). Cells may carry ANSI colour codes; widths are measured without them, and only
columns of plain text are ever wrapped.

A table still too wide once its text columns are wrapped (real node names such as
``ip-10-0-10-170.ec2.internal`` and long pod names take 80 columns on their own) is fitted in
three more steps, each only if the one before is not enough: headers lose tabulate's padding; the
names of the columns a renderer marks (``Names``) lose the run of segments they all share
(``.ec2.internal``), replaced by ``…`` and spelt out under the table; then every name longer than
what is left keeps its head and its distinctive tail around a ``…``, all names still different.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Collection, Sequence
from dataclasses import dataclass
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
          wrap_columns: Sequence[int] = (), indent: str = "", spill: bool = False,
          names: Sequence[Names] = (), notes: list[str] | None = None) -> str:
    """A plain table (tabulate's "plain" format) of at most ``width`` columns: when the natural
    layout is wider, the ``wrap_columns`` share what the other columns leave, in proportion to
    their natural widths, and their cells wrap at word boundaries. With ``spill``, a last column
    that would be left fewer than MIN_BESIDE columns is printed under each row instead, indented
    and wrapped to the whole width: a long message then reads as a paragraph, not a thin strip.

    Still too wide, the table is laid out tightly and the ``names`` are shortened (see the
    module's docstring); what the ``…`` stand for goes to ``notes`` when given (the renderer
    prints each note once, under its output), else under the table."""
    room = None if width is None else width - len(indent)
    text = _table(rows, headers, room, wrap_columns, spill, HEADER_PAD)
    if room is None or not rows or visible_len(text) <= room:
        return _indented(text, indent)
    text, said = _fitted(rows, headers, room, wrap_columns, spill, names)
    if notes is None:
        text += "".join("\n" + wrap(n, room) for n in said)
    else:
        notes.extend(n for n in said if n not in notes)
    return _indented(text, indent)


def _indented(text: str, indent: str) -> str:
    return indent + text.replace("\n", "\n" + indent) if indent else text


def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str], width: int | None, wrap_columns: Sequence[int],
           spill: bool, pad: int) -> str:
    """The table as tabulate lays it out (``pad`` HEADER_PAD), or tightly (``pad`` 0: see ``plain``),
    its wrap columns wrapped and, with ``spill``, its last column under the rows if it would be thin."""
    grid = [list(r) for r in rows]
    if width is not None and grid and spill:
        ncol = len(headers)
        others = [max([visible_len(str(headers[c]))] + [visible_len(str(r[c])) for r in grid]) for c in range(ncol - 1)]
        beside = width - sum(others) - GAP * (ncol - 1)
        natural = max([visible_len(str(headers[-1]))] + [visible_len(str(r[-1])) for r in grid])
        if beside < min(MIN_BESIDE, natural):
            return _spilled(grid, headers, width, pad)
    heads = list(headers)
    if width is not None and grid and wrap_columns:
        grid, heads = _fit(grid, headers, width, wrap_columns, pad)
    return _render(grid, heads, pad)


def _render(rows: Sequence[Sequence[Any]], headers: Sequence[str], pad: int) -> str:
    return str(tabulate(rows, headers=list(headers), tablefmt="plain")) if pad else plain(rows, headers)


def _spilled(rows: list[list[Any]], headers: Sequence[str], width: int, pad: int) -> str:
    head = _render([r[:-1] for r in rows], headers[:-1], pad).split("\n")
    nhead = max(str(h).count("\n") for h in headers[:-1]) + 1
    out = [line.rstrip() for line in head[:nhead]]
    for line, r in zip(head[nhead:], rows, strict=True):
        out.append(line.rstrip())
        if str(r[-1]):
            out.append(wrap(str(r[-1]), width, "    "))
    return "\n".join(out)


def _fit(rows: list[list[Any]], headers: Sequence[str], width: int, wrap_columns: Sequence[int], pad: int = HEADER_PAD
         ) -> tuple[list[list[Any]], list[str]]:
    """Rows and headers narrowed to ``width`` if they can be: headers longer than their column's
    cells go on two lines, then the wrap columns share the room left, the narrow ones keeping
    their natural width (water-filling) and the others wrapping at word boundaries."""
    ncol = len(headers)
    heads = list(headers)
    cells = [max([visible_len(str(r[c])) for r in rows]) for c in range(ncol)]
    # tabulate pads a header by HEADER_PAD when it sizes a column (``pad``: 0 when laid out tightly)
    natural = [max(visible_len(heads[c]) + pad, cells[c]) for c in range(ncol)]
    if sum(natural) + GAP * (ncol - 1) <= width:
        return rows, heads
    for c in range(ncol):
        if visible_len(heads[c]) + pad > cells[c] and " " in heads[c]:
            heads[c] = "\n".join(textwrap.wrap(heads[c], width=max(cells[c] - pad, 8 if pad else 1,
                                                                      max(map(len, heads[c].split()))),
                                               break_long_words=False))
            natural[c] = max(visible_len(heads[c]) + pad, cells[c])
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
                        max(map(len, heads[c].split())) + pad) for c in widths}
        grown = {c: w for c, w in wider.items() if w > widths[c] and c not in fixed}
        if not grown:
            break
        fixed.update(grown)
    for c, w in widths.items():
        if visible_len(heads[c]) + pad > w:
            heads[c] = "\n".join(textwrap.wrap(heads[c], width=max(w - pad, 1), break_long_words=False))
    return out, heads


def plain(rows: Sequence[Sequence[Any]], headers: Sequence[str], align: Sequence[str] | None = None) -> str:
    """A table as tabulate's "plain" format draws it, but tight: a column is as wide as its widest
    cell or header line (tabulate adds HEADER_PAD to headers), cells of several lines, numbers
    right-aligned (or as ``align`` says, "left" or "right" per column), no trailing blanks."""
    ncol = len(headers)
    heads = [str(h).split("\n") for h in headers]
    body = [[("" if c is None else str(c)).split("\n") for c in r] for r in rows]
    widths = [max([visible_len(line) for line in heads[c]] + [visible_len(line) for r in body for line in r[c]])
              for c in range(ncol)]
    right = list(align) if align is not None else ["right" if _numeric([r[c] for r in rows]) else "left"
                                                    for c in range(ncol)]
    out = []
    for cells in [heads, *body]:
        for i in range(max(len(c) for c in cells)):
            parts = []
            for c in range(ncol):
                line = cells[c][i] if i < len(cells[c]) else ""
                fill = " " * (widths[c] - visible_len(line))
                parts.append(fill + line if right[c] == "right" else line + fill)
            out.append((" " * GAP).join(parts).rstrip())
    return "\n".join(out)


_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def _numeric(cells: Sequence[Any]) -> bool:
    """Whether tabulate would align the column as numbers: every cell a number, or empty."""
    filled = [c for c in cells if c is not None and c != ""]
    return bool(filled) and all(isinstance(c, (int, float)) or (isinstance(c, str) and _NUMBER.fullmatch(c))
                                for c in filled)


#: the mark of a shortened name
ELLIPSIS = "…"
#: where a name may be cut: its segments end at these (DNS labels, name parts, namespace/name)
_SEPARATORS = ".-/_:"
#: names this short are never shortened, and no name is shortened below it
MIN_NAME = 12
#: a run of shared segments shorter than this is not worth a note
MIN_RUN = 4


@dataclass(frozen=True)
class Names:
    """Names of one kind in a table, which may be shortened to fit: ``columns`` whose cells hold
    them (whole, or as words of a longer text, such as whatif's ``Scheduled on NODE``), and
    ``universe``, every name of the kind in the output, among which the shared run is sought (so
    that two tables of one output shorten a name alike). ``what`` names them in the note."""

    what: str
    columns: tuple[int, ...]
    universe: Collection[str]


def _cuts(name: str) -> list[int]:
    """Where a run of segments may start or end: the ends of the name, and either side of a separator."""
    cuts = {0, len(name)}
    for i, ch in enumerate(name):
        if ch in _SEPARATORS:
            cuts.update((i, i + 1))
    return sorted(cuts)


def shared_run(names: Collection[str]) -> str:
    """The longest run of whole segments every name longer than MIN_NAME holds, and that leaves
    each of them something of its own: ``.ec2.internal`` of ``ip-10-0-10-170.ec2.internal`` and
    ``ip-10-0-20-143.ec2.internal``. Empty when there is none of MIN_RUN characters or more."""
    long = [n for n in names if len(n) > MIN_NAME]
    if len(long) < 2:
        return ""
    first = min(long, key=len)
    cuts = _cuts(first)
    runs = sorted({first[i:j] for i in cuts for j in cuts if j - i >= MIN_RUN and (i, j) != (0, len(first))},
                  key=lambda r: (-len(r), first.index(r)))
    for run in runs:
        if all(run in n for n in long) and run.strip(_SEPARATORS) and not any(n == run for n in long):
            shown = {n.replace(run, ELLIPSIS, 1) for n in long}
            if len(shown) == len(long):
                return run
    return ""


def squeeze(name: str, budget: int) -> str:
    """``name`` in at most ``budget`` characters: its head, ``…``, and its tail from a separator on
    (at most half the budget: the part that tells apart the pods of a ReplicaSet, or clones of a
    node), or the head alone when no tail is short enough."""
    if len(name) <= budget:
        return name
    starts = [i for i in range(1, len(name)) if name[i] in _SEPARATORS and len(name) - i <= budget // 2]
    tail = name[starts[0]:] if starts else ""
    return name[:budget - len(ELLIPSIS) - len(tail)] + ELLIPSIS + tail


def _shortened(names: Names, run: bool, budget: int | None) -> tuple[dict[str, str], str, bool]:
    """The short form of each long name of a kind, what the shared run stands for in them (else
    ""), and whether some were squeezed. When some must be squeezed, none loses the shared run:
    a ``…`` then always means "cut here", never two things in one table."""
    shared = shared_run(names.universe) if run else ""
    if shared and budget is not None and any(len(n.replace(shared, ELLIPSIS, 1)) > budget for n in names.universe):
        shared = ""
    out: dict[str, str] = {}
    cut: set[str] = set()
    for n in names.universe:
        s = n.replace(shared, ELLIPSIS, 1) if shared and len(n) > MIN_NAME else n
        if budget is not None and len(s) > budget:  # (only without a shared run: see above)
            s = squeeze(n, budget)
            cut.add(n)
        if s != n:
            out[n] = s
    if budget is not None and len(set(out.values())) < len(out):
        # two names of one head and tail: their ends tell them apart
        out.update({n: ELLIPSIS + n[len(n) - budget + len(ELLIPSIS):] for n in cut})
    return out, shared if len(out) > len(cut) else "", bool(cut)


#: the note under a table some of whose names were squeezed
SQUEEZED = f"Names with {ELLIPSIS} are shortened to fit the terminal; piped output has them whole."


_WORD = re.compile(r"[^\s,;()]+")


def _substitute(rows: Sequence[Sequence[Any]], names: Sequence[Names], short: Sequence[dict[str, str]]
                ) -> list[list[Any]]:
    out = [list(r) for r in rows]
    for kind, mapping in zip(names, short, strict=True):
        if not mapping:
            continue

        def one(m: re.Match[str], mapping: dict[str, str] = mapping) -> str:
            return mapping.get(m.group(), m.group())

        for r in out:
            for c in kind.columns:
                if isinstance(r[c], str):
                    r[c] = _WORD.sub(one, r[c])
    return out


def _least(rows: Sequence[Sequence[Any]], headers: Sequence[str], wrap_columns: Sequence[int], spill: bool) -> int:
    """The narrowest a tight layout of the table can be: headers on as many lines as they have
    words, wrap columns down to MIN_WRAP or their longest word, a spilled last column under its row."""
    ncol = len(headers)
    total = 0
    for c in range(ncol):
        if spill and c == ncol - 1:
            return total
        cells = [str(r[c]) for r in rows]
        head = max((len(w) for w in str(headers[c]).split()), default=0)
        if c in wrap_columns:
            longest = max((visible_len(w) for cell in cells for w in cell.split()), default=0)
            need = max(min(MIN_WRAP, max(visible_len(x) for x in cells)), longest, head)
        else:
            need = max([visible_len(x) for x in cells] + [head])
        total += need + (GAP if c else 0)
    return total


def _fitted(rows: Sequence[Sequence[Any]], headers: Sequence[str], width: int, wrap_columns: Sequence[int],
            spill: bool, names: Sequence[Names]) -> tuple[str, list[str]]:
    """The table laid out tightly, with its names shortened as little as fits: first the run every
    long name of a kind shares (kind after kind, in the order of ``names``), then (if still
    needed) every name to the largest budget that fits."""
    def attempt(runs: int, budget: int | None) -> tuple[list[list[Any]], list[str], bool]:
        found = [_shortened(k, i < runs, budget) for i, k in enumerate(names)]
        grid = _substitute(rows, names, [m for m, _, _ in found])
        said = [f"{ELLIPSIS} in {k.what} stands for {shared}" for k, (_, shared, _) in zip(names, found, strict=True)
                if shared]
        if any(squeezed for _, _, squeezed in found):
            said.append(SQUEEZED)
        return grid, said, _least(grid, headers, wrap_columns, spill) <= width

    grid, said, fits = attempt(0, None)
    runs = 0
    while not fits and runs < len(names):  # the shared runs, kind by kind in the order given
        runs += 1
        grid, said, fits = attempt(runs, None)
    if not fits and names:
        longest = max((len(s) for k in names for s in k.universe), default=MIN_NAME)
        lo, hi = MIN_NAME, max(longest - 1, MIN_NAME)  # the largest budget that fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if attempt(runs, mid)[2]:
                lo = mid
            else:
                hi = mid - 1
        grid, said, fits = attempt(runs, lo)
    return _table(grid, headers, width, wrap_columns, spill, 0), said
