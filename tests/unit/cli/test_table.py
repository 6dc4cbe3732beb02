"""-o table / wide: colour on request only, with the same layout as the plain text."""

from __future__ import annotations

import re
from typing import Any

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


def _big_run() -> Any:
    pods = [pod(f"web-{i:03}", node=f"node-{i % 30:02}") for i in range(45)]
    pods[10:10] = [unschedulable(f"huge-{i}", 30, {"Insufficient cpu": 30}) for i in range(3)]
    nodes = tuple(node(f"node-{i:02}", cpu=(f"{i % 4}", "4", (i % 4) * 25)) for i in range(30))
    return simulation(*pods, nodes=nodes)


def test_at_a_terminal_long_tables_are_capped_and_the_summary_comes_last() -> None:
    # issue 47 item 8: 2,000 pods printed 2,023 lines and the summary scrolled away
    text = render(_big_run(), "table", RenderOptions(width=80, terminal=True))
    lines = text.rstrip("\n").split("\n")
    assert sum(1 for line in lines if line.startswith("default/web-")) == 20
    assert sum(1 for line in lines if line.startswith("default/huge-")) == 3  # every failure is listed
    assert "… and 25 more pods (25 Scheduled; --all lists them)" in lines
    assert sum(1 for line in lines if line.startswith("node-")) == 20
    assert "… and 10 more nodes, less full (--all lists them)" in lines
    shown = [line.split()[0] for line in lines if line.startswith("node-")]
    assert "node-03" in shown and "node-00" not in shown and shown == sorted(shown)  # the fullest, in order
    assert lines[-1] == "48 pending pods: 45 scheduled, 3 unschedulable (30 nodes)."


def test_all_lists_everything_at_a_terminal_and_a_pipe_always_gets_everything() -> None:
    full = render(_big_run(), "table", RenderOptions(width=80, terminal=True, full=True)).rstrip("\n").split("\n")
    assert sum(1 for line in full if line.startswith("default/")) == 48
    assert sum(1 for line in full if line.startswith("node-")) == 30
    assert full[-1].startswith("48 pending pods") and not any("--all lists" in line for line in full)
    piped = render(_big_run(), "table", RenderOptions()).split("\n")
    assert sum(1 for line in piped if line.startswith("default/")) == 48
    assert sum(1 for line in piped if line.startswith("node-")) == 30
    assert not piped[-2].startswith("48 pending pods")  # a pipe keeps the order scripts know


def test_shrink_utilisation_is_truncated_as_every_table_percent_is() -> None:
    # issue 47 item 10: --shrink said 23 % (rounded) of a node its table showed at 22 % (1.8/7.91)
    from kplan.cli.render.whatif import _pct
    from kplan.report.shrink import NodeUtilization

    assert _pct(NodeUtilization(value=0.2275, resource="cpu", cpu=0.2275, memory=0.11)) == "22% cpu"
    assert _pct(NodeUtilization(value=0.29, resource="memory", cpu=0.1, memory=0.29)) == "29% memory"


FOLDS = {
    "no new claims to deallocate before preemption's answer": (
        "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling.",
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not "
        "helpful for scheduling.", ["no new claims to deallocate"]),
    "not found after a PreFilter rejection": (
        '0/3 nodes are available: persistentvolumeclaim "data" not found. not found',
        '0/3 nodes are available: persistentvolumeclaim "data" not found.', ["not found"]),
    "a message without noise is left alone": ("0/3 nodes are available: 3 Insufficient cpu.",
                                              "0/3 nodes are available: 3 Insufficient cpu.", []),
}


@pytest.mark.parametrize(("message", "shown", "folded"), FOLDS.values(), ids=FOLDS.keys())
def test_a_terminal_folds_what_the_user_cannot_act_on(message: str, shown: str, folded: list[str]) -> None:
    # issue 47 item 18: at 1.34 every unschedulable message carried 'no new claims to deallocate'
    from kplan.cli.render.explain import fold_noise

    assert fold_noise(message) == (shown, folded)
