"""Node use per pool (kplan.cli.render.pools): requested, free and the share of every resource a
pool's nodes have, extended resources included."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kplan.cli.render.pools import NO_POOL, amount_text, pools

GI = 2 ** 30


@dataclass(frozen=True)
class Node:
    name: str
    pool: str | None
    allocatable: dict[str, int]
    requested: dict[str, int] = field(default_factory=dict)
    pods: int = 0


def gpu(name: str, used: int) -> Node:
    return Node(name, "gpu", {"cpu": 15890, "memory": 60 * GI, "pods": 110, "nvidia.com/gpu": 4},
                {"cpu": 6050, "memory": 24 * GI, "nvidia.com/gpu": used}, pods=2)


def test_a_pool_sums_its_nodes_and_says_what_is_free() -> None:
    nodes = [gpu("gpu-a-1", 3), gpu("gpu-c-1", 1),
             Node("gen-a-1", "general", {"cpu": 7910, "memory": 30 * GI, "pods": 110}, {"cpu": 1800, "memory": 3 * GI}, 4),
             Node("cp-a-1", None, {"cpu": 3920, "memory": 14 * GI, "pods": 110}, {"cpu": 150}, 2)]
    resources, rows = pools(nodes)
    assert resources == ["cpu", "memory", "pods", "nvidia.com/gpu"]
    assert [(p.pool, p.nodes) for p in rows] == [(NO_POOL, 1), ("general", 1), ("gpu", 2)]
    g = rows[2].use
    assert (g["cpu"].requested, g["cpu"].allocatable, g["cpu"].free, g["cpu"].percent) == (12100, 31780, 19680, 38)
    assert g["cpu"].text(g["cpu"].free) == "19.7 cores"
    assert g["cpu"].free_text() == "19.7 of 31.8 cores free"
    assert g["nvidia.com/gpu"].free_text() == "4 of 8 free"
    assert (g["memory"].text(g["memory"].free), g["memory"].percent) == ("72Gi", 40)
    assert (g["pods"].requested, g["pods"].free) == (4, 216)
    assert (g["nvidia.com/gpu"].requested, g["nvidia.com/gpu"].free, g["nvidia.com/gpu"].percent) == (4, 4, 50)
    general = rows[1].use["nvidia.com/gpu"]
    assert (general.allocatable, general.percent) == (0, None)  # a pool without GPUs has none to use


def test_an_overcommitted_pool_has_nothing_free() -> None:
    _, rows = pools([Node("n", "p", {"cpu": 1000}, {"cpu": 1500})])
    assert (rows[0].use["cpu"].free, rows[0].use["cpu"].percent) == (0, 150)


AMOUNTS = [
    ("cores", "cpu", 25500, "25.5 cores"),
    ("one core", "cpu", 1000, "1 core"),
    ("millicores below a core", "cpu", 150, "150m cpu"),
    ("memory", "memory", 103 * GI, "103Gi"),
    ("ephemeral storage", "ephemeral-storage", 20 * GI, "20Gi ephemeral-storage"),
    ("pods", "pods", 1, "1 pod"),
    ("an extended resource", "nvidia.com/gpu", 3, "3 nvidia.com/gpu"),
]


@pytest.mark.parametrize(("resource", "amount", "text"), [c[1:] for c in AMOUNTS], ids=[c[0] for c in AMOUNTS])
def test_amount_text(resource: str, amount: int, text: str) -> None:
    assert amount_text(resource, amount) == text
