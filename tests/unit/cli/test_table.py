"""-o table / wide: colour on request only, with the same layout as the plain text."""

from __future__ import annotations

import re

import pytest

from kplan.cli.render import RenderOptions, render
from kplan.cli.render.style import bar, paint
from tests.unit.cli.documents import eviction, node, pod, simulation, unschedulable

ANSI = re.compile(r"\x1b\[[0-9;]*m")

BARS = [
    ("empty", 0, "..........   0%"),
    ("a cell per whole 10 %", 37, "###.......  37%"),
    ("99 % is not full", 99, "#########.  99%"),
    ("full at 100 %", 100, "########## 100%"),
    ("overcommitted stays full", 130, "########## 130%"),
    ("nothing allocatable", None, "----------   -"),
]


@pytest.mark.parametrize(("percent", "want"), [c[1:] for c in BARS], ids=[c[0] for c in BARS])
def test_plain_bars(percent: int | None, want: str) -> None:
    assert bar(percent, color=False) == want


DOC = simulation(pod("big"), pod("x", "Unschedulable", message="0/2 nodes are available: 2 Insufficient cpu."),
                 pod("g", "Gated", message="waiting for scheduling gates: [q]"),
                 preempted=(eviction("victim", "default/big"),),
                 nodes=(node("node-1", ("3500m", "4", 87)), node("node-2", ("0", "4", 0)), node("node-3", ("4", "4", 100))))


@pytest.mark.parametrize("fmt", ["table", "wide"])
def test_colour_changes_nothing_but_escape_codes_and_bar_cells(fmt: str) -> None:
    plain = render(DOC, fmt, RenderOptions(color=False))
    coloured = render(DOC, fmt, RenderOptions(color=True))
    assert ANSI.search(coloured) and not ANSI.search(plain)
    # without its escape codes the coloured text is the plain one, but for the bars' glyphs: a
    # terminal's '█' and '░' where the plain bar has '#' and '.'
    cells = str.maketrans({"█": "#", "░": "."})
    assert ANSI.sub("", coloured).translate(cells) == plain


def test_statuses_are_coloured_by_meaning() -> None:
    out = render(DOC, "table", RenderOptions(color=True))
    assert paint("Scheduled", "green", True) in out
    assert paint("Unschedulable", "bold red", True) in out
    assert paint("Gated", "yellow", True) in out


GLYPH_BARS = [
    ("half, without colour", 50, False, "█████░░░░░  50%"),
    ("full", 100, False, "██████████ 100%"),
    ("empty", 3, False, "░░░░░░░░░░   3%"),
]


@pytest.mark.parametrize(("percent", "color", "want"), [c[1:] for c in GLYPH_BARS], ids=[c[0] for c in GLYPH_BARS])
def test_terminal_bars_carry_their_fill_in_glyphs_not_colour_alone(percent: int, color: bool, want: str) -> None:
    assert ANSI.sub("", bar(percent, color, glyphs=True)) == want


def test_bars_turn_yellow_then_red_as_a_node_fills() -> None:
    assert "\x1b[32m" in bar(50, True) and "\x1b[33m" in bar(87, True) and "\x1b[31m" in bar(100, True)


def test_wide_shows_the_whole_message_and_table_cuts_the_postscript() -> None:
    p = unschedulable("x", 1, {"Insufficient cpu": 1}, "no new claims to deallocate, preemption: 0/1 nodes are available")
    assert p.message == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 "
                         "nodes are available")
    doc = simulation(p)
    table = render(doc, "table", RenderOptions())
    assert "0/1 nodes are available: 1 Insufficient cpu." in table and "preemption:" not in table
    assert p.message in render(doc, "wide", RenderOptions())
