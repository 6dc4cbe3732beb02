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


#: 2026-12-05 20:00 UTC: the time a report names, fixed as reproducible builds fix it
EPOCH = "1796500800"


def page(*args: str) -> str:
    r = CliRunner().invoke(app, [*args, "-o", "html", "-q", "--tie-break", "lowest-name"], catch_exceptions=False,
                           env={"SOURCE_DATE_EPOCH": EPOCH})
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


def run_header(html: str) -> dict[str, str]:
    """The header's (what, value) pairs: inputs, seed, release and date."""
    block = re.search(r'<dl class="run">(.*?)</dl>', html, re.S)
    assert block is not None
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", block.group(1), re.S)
    return {k: re.sub(r"<[^>]+>", "", v) for k, v in pairs}


def test_the_header_names_the_inputs_the_seed_the_release_and_the_date(capacity_page: str) -> None:
    from kplan import __version__

    assert run_header(capacity_page) == {
        "Cluster": str(FIX / "cluster.yaml"),
        "Manifests": str(FIX / "manifests" / "gpu-inference.yaml"),
        "Seed": "0 (equal scores broken by the lowest node name)",
        "Models": "Kubernetes 1.37 (default feature gates)",  # the newest modelled: the cluster states none
        "Made": f"2026-12-05 20:00 UTC by kplan {__version__}",
    }


def test_the_header_of_a_sweep_and_a_scheduler_configuration(sweep_page: str) -> None:
    header = run_header(sweep_page)
    assert header["Cluster"] == str(FIX / "cluster.yaml") and header["Manifests"] == str(FIX / "app" / "deployment.yaml")
    custom = page("simulate", str(FIX / "custom-scoring" / "pods.yaml"), "--cluster",
                  str(FIX / "custom-scoring" / "cluster.yaml"), "--scheduler-config",
                  str(FIX / "scheduler-configs" / "custom-scoring.yaml"), "--seed", "7")
    header = run_header(custom)
    assert header["Scheduler configuration"] == str(FIX / "scheduler-configs" / "custom-scoring.yaml")
    assert header["Seed"] == "7 (equal scores broken by the lowest node name)"


@pytest.fixture(scope="module")
def simulate_page() -> str:
    return page("simulate", str(FIX / "manifests"), *CLUSTER)


@pytest.fixture(scope="module")
def whatif_page() -> str:
    return page("whatif", str(FIX / "manifests"), *CLUSTER, "--drain", "gen-b-2")


@pytest.fixture(scope="module")
def explain_page() -> str:
    return page("explain", "pod", "ml/notebook", str(FIX / "manifests"), *CLUSTER)


def cells(html: str, table_class: str) -> list[list[str]]:
    """The rows of the page's table of that class, as the text of their cells."""
    block = re.search(rf'<table class="{table_class}">(.*?)</table>', html, re.S)
    assert block is not None, table_class
    rows = re.findall(r"<tr>(.*?)</tr>", block.group(1), re.S)
    return [[" ".join(re.sub(r"<[^>]+>", " ", c).split()) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)]
            for r in rows]


def test_pools_show_what_is_free_and_extended_resources(simulate_page: str) -> None:
    rows = cells(simulate_page, "pools")
    assert rows[0] == ["Pool", "Nodes", "CPU", "Memory", "Pods", "ephemeral-storage", "nvidia.com/gpu"]
    gpu = next(r for r in rows if r[0] == "gpu")
    assert gpu[:5] == ["gpu", "2", "31% requested 21.7 of 31.8 cores free", "33% requested 79.9Gi of 120Gi free",
                       "1% requested 216 of 220 free"]
    assert gpu[6] == "37% requested 5 of 8 free"
    general = next(r for r in rows if r[0] == "general")
    assert general[6] == "-"  # no GPU there


def test_whatif_shows_before_and_after(whatif_page: str) -> None:
    assert re.search(r'<span class="side">Before</span>10 pending pods', whatif_page)
    assert re.search(r'<span class="side">After</span>12 pending pods', whatif_page)
    rows = cells(whatif_page, "pools")
    general = next(r for r in rows if r[0] == "general")
    assert general[2].startswith("25% → 25%") and "→" in general[3]
    assert "before the change" in charts(whatif_page)[0]  # the outline's legend
    assert "Pods that did not run before the change (4)" in whatif_page


def test_explain_says_what_would_help(explain_page: str) -> None:
    assert "<h2>What would help</h2>" in explain_page
    near = cells(explain_page, "near")
    assert near[0] == ["Nearest node", "Lacks", "Fits with that"]
    assert ["gpu-a-1", "a toleration for taint nvidia.com/gpu=present:NoSchedule", "yes"] in near
    changes = cells(explain_page, "changes")
    assert ["tolerate taint nvidia.com/gpu=present:NoSchedule", "2", "gpu-a-1, gpu-c-1"] in changes
    assert "2 more that open no node" in explain_page


def test_the_capacity_page_says_the_reason_once(capacity_page: str) -> None:
    assert capacity_page.count("Preemption is not helpful for scheduling") == 1
