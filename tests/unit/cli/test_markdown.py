"""-o markdown: escaping that keeps tables whole and HTML inert, a heading with the verdict,
tables cut after ROWS rows."""

from __future__ import annotations

import pytest

from kplan.cli.render import RenderOptions, render
from kplan.cli.render.markdown import ROWS, cell, code
from kplan.report.check import FailOn
from tests.unit.cli.documents import eviction, pod, simulation

CELLS = [
    ("plain words stay", "0/3 nodes are available.", "0/3 nodes are available."),
    ("a pipe cannot end the cell", "a | b", "a \\| b"),
    ("HTML is inert", "<script>x</script>", "\\<script\\>x\\</script\\>"),
    ("an ampersand is an entity", "a & b", "a &amp; b"),
    ("emphasis, code and links are literal", "*a* _b_ `c` [d](e) ~~f~~", "\\*a\\* \\_b\\_ \\`c\\` \\[d\\](e) \\~\\~f\\~\\~"),
    ("line breaks become spaces", "a\nb\r\n c", "a b c"),
    ("a backslash stays a backslash", "a\\b", "a\\\\b"),
]


@pytest.mark.parametrize(("text", "want"), [c[1:] for c in CELLS], ids=[c[0] for c in CELLS])
def test_cell_escaping(text: str, want: str) -> None:
    assert cell(text) == want


def test_names_are_code_and_cannot_end_a_cell() -> None:
    assert code("default/web") == "`default/web`"
    assert code("a|b") == "`a\\|b`"


@pytest.mark.parametrize(("doc", "fail_on", "heading"), [
    (simulation(pod("a"), pod("b")), FailOn.unschedulable, "### ✅ kplan simulate: all 2 pending pods scheduled"),
    (simulation(pod("a"), pod("b", "Unschedulable", message="m")), FailOn.unschedulable,
     "### ❌ kplan simulate: 1 of 2 pending pods do not run"),
    (simulation(pod("a"), pod("b", "Unschedulable", message="m")), FailOn.never,
     "### ⚠️ kplan simulate: 1 of 2 pending pods do not run"),
    (simulation(pod("a"), preempted=(eviction("v", "default/a"),)), FailOn.unschedulable,
     "### ⚠️ kplan simulate: the pending pod is scheduled, 1 pod preempted"),
    (simulation(pod("a"), preempted=(eviction("v", "default/a"),)), FailOn.preemption,
     "### ❌ kplan simulate: the pending pod is scheduled, 1 pod preempted"),
], ids=["all fit: a tick", "a pod does not run: a cross", "never fails: a warning sign instead",
        "a preemption that does not fail the check: a warning sign", "a preemption that fails the check: a cross"])
def test_the_heading_gives_the_verdict(doc: dict, fail_on: FailOn, heading: str) -> None:  # type: ignore[type-arg]
    assert render(doc, "markdown", RenderOptions(fail_on=fail_on)).splitlines()[0] == heading


def test_long_tables_stop_after_rows_unless_full() -> None:
    doc = simulation(*(pod(f"p{i:04}") for i in range(ROWS + 5)))
    short = render(doc, "markdown", RenderOptions())
    assert "`default/p0199`" in short and "`default/p0200`" not in short
    assert "… and 5 more (`-o json` lists them all)." in short
    full = render(doc, "markdown", RenderOptions(full=True))
    assert "`default/p0204`" in full and "more (`-o json`" not in full


def test_every_table_row_has_as_many_cells_as_its_header() -> None:
    doc = simulation(pod("a"), pod("b | c", "Unschedulable", message="x | y <z>"), preempted=(eviction("v", "default/a"),))
    tables: list[list[int]] = [[]]
    for line in render(doc, "markdown", RenderOptions()).splitlines():
        if line.startswith("|"):
            tables[-1].append(line.replace("\\|", "").count("|"))
        elif tables[-1]:
            tables.append([])
    tables = [t for t in tables if t]
    assert len(tables) == 4  # pods that do not run, preempted, scheduled, nodes
    assert all(len(set(t)) == 1 for t in tables), tables
