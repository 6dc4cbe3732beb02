"""One way to write quantities for people: the terminal table, Markdown and the HTML report show a
node's use in the same words, and explain's sentences and tables say amounts alike (issue 37,
item 8). The documents keep Kubernetes notation."""

from __future__ import annotations

import pytest

from kplan.cli.render import RenderOptions, render
from kplan.cli.render.units import amount, usage
from tests.unit.cli.documents import node, pod, simulation

DOC = simulation(pod("a"), nodes=(node("node-1", ("3500m", "4", 87), ("5248Mi", "8Gi", 64)),))


@pytest.mark.parametrize("fmt", ["table", "wide", "markdown"])
def test_every_format_writes_a_nodes_use_alike(fmt: str) -> None:
    out = render(DOC, fmt, RenderOptions())
    assert "3.5/4" in out and "5.12Gi/8Gi" in out
    assert "3500m" not in out and "5248Mi" not in out


def test_the_html_report_writes_use_with_the_same_function() -> None:
    from kplan.cli.render.html import _environment

    assert _environment().globals["amounts"] is usage
    assert "3500m" not in render(DOC, "html", RenderOptions())


def test_the_json_document_keeps_kubernetes_notation() -> None:
    out = render(DOC, "json", RenderOptions())
    assert '"cpu": "3500m"' in out and '"memory": "5248Mi"' in out


AMOUNTS = [
    ("cores from one core up", "cpu", 27140, "27.1 cpu"),
    ("millicores below one core", "cpu", 250, "250m cpu"),
    ("memory in binary units, three digits", "memory", 100416 * 2 ** 20, "98.1Gi memory"),
    ("whole units stay whole", "memory", 128 * 2 ** 30, "128Gi memory"),
    ("counts as they are", "nvidia.com/gpu", 2, "2 nvidia.com/gpu"),
]


@pytest.mark.parametrize(("resource", "value", "want"), [c[1:] for c in AMOUNTS], ids=[c[0] for c in AMOUNTS])
def test_amounts(resource: str, value: int, want: str) -> None:
    assert amount(resource, value) == want


def test_usage_and_amount_agree() -> None:
    assert usage("cpu", 27140, 32000) == "27.1/32" and amount("cpu", 27140).startswith("27.1 ")
