"""``-o html``: the structure of the pages (headings, tables, charts) and what their charts show,
read from the page's markup. tests/integration/test_html_report.py opens them in Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kplan.cli.app import app

pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "fixtures"
CLUSTER = ["--cluster", str(FIX / "cluster.yaml")]


def page(*args: str) -> str:
    r = CliRunner().invoke(app, [*args, "-o", "html", "-q", "--tie-break", "lowest-name"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def capacity_page() -> str:
    return page("capacity", str(FIX / "manifests" / "gpu-inference.yaml"), *CLUSTER)


@pytest.fixture(scope="module")
def sweep_page() -> str:
    return page("sweep", str(FIX / "app" / "deployment.yaml"), *CLUSTER, "-n", "shop", "--scale",
                "deployment/shop/web=6..10:2", "--add-node", "like=gen-c-3:0..2", "--workers", "1")


def charts(html: str) -> list[str]:
    """The inline SVG charts of a page, in order."""
    return re.findall(r"<svg.*?</svg>", html, re.S)


def ticks(svg: str, axis: str) -> list[str]:
    """The tick labels of a chart's x or y axes (all its subplots), as matplotlib writes them."""
    return re.findall(rf'<g id="{axis}tick_\d+">.*?<text[^>]*>([^<]*)</text>', svg, re.S)


def test_the_placements_chart_counts_whole_replicas(capacity_page: str) -> None:
    placements = charts(capacity_page)[0]
    assert ticks(placements, "x") and all(re.fullmatch(r"\d+", t) for t in ticks(placements, "x"))
    assert ticks(placements, "y") == ["gpu-a-1", "gpu-c-1"]


def test_the_sweep_charts_count_whole_nodes_and_pods(sweep_page: str) -> None:
    pending, fit, nodes = charts(sweep_page)
    for svg, axes in ((pending, "xy"), (fit, "x"), (nodes, "y")):
        for axis in axes:
            labels = ticks(svg, axis)
            assert labels and all(re.fullmatch(r"−?\d+", t) for t in labels), (axis, labels)
    assert not all(re.fullmatch(r"\d+", t) for t in ticks(fit, "y"))  # probabilities keep their decimals


def test_points_at_one_place_share_one_label(sweep_page: str) -> None:
    """Without prices the cheapest points (#0 and #1 add no node and fit) sit at one place."""
    nodes = charts(sweep_page)[2]
    labels = re.findall(r"<text[^>]*>(\d\. #\d+[^<]*)</text>", nodes)
    assert labels == ["1. #0, 2. #1", "3. #3"]
