"""Colours for the table formats, drawn with rich's styles as ANSI escape codes.

Only the 16 standard ANSI colours are used, so every colour terminal shows them. With ``color`` false each
helper returns plain text (what pipes, files, CI logs and golden files get).
"""

from __future__ import annotations

from rich.color import ColorSystem
from rich.style import Style

BAR_WIDTH = 10

#: pod statuses of the documents → style; statuses not listed are printed plain
STATUS_STYLES = {
    "Scheduled": "green",
    "Unschedulable": "bold red",
    "NotCreated": "red",
    "Preempted": "magenta",
    "Gated": "yellow",
}


def paint(text: str, style: str, color: bool) -> str:
    if not color or not style or not text:
        return text
    return Style.parse(style).render(text, color_system=ColorSystem.STANDARD)


def status_style(status: str) -> str:
    return STATUS_STYLES.get(status, "")


def usage_style(percent: int) -> str:
    """Green below 70 %, yellow below 90 %, red from 90 %: how close a node is to full."""
    return "green" if percent < 70 else "yellow" if percent < 90 else "red"


def bar(percent: int | None, color: bool, glyphs: bool = False) -> str:
    """A ten-cell bar and the percentage: a cell per whole 10 % (the percentage's tens digit), so a
    bar is full only at 100 %. ``None`` (nothing allocatable) draws dashes. The fill is carried by
    the glyphs, never by colour alone (NO_COLOR, colour-blind readers): on a terminal
    ``█████░░░░░``, elsewhere ASCII ``#####.....``; colour is an extra."""
    if percent is None:
        return "-" * BAR_WIDTH + "   -"
    filled = min(max(percent, 0), 100) * BAR_WIDTH // 100
    label = f" {percent:3d}%"
    full, empty = ("█", "░") if glyphs or color else ("#", ".")
    style = usage_style(percent)
    return (paint(full * filled, style, color) + paint(empty * (BAR_WIDTH - filled), "bright_black", color)
            + paint(label, style, color))
