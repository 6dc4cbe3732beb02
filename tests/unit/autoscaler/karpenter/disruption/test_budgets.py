"""NodePool disruption budgets (pkg/apis/v1/nodepool.go) and the cron schedules they use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kplan.autoscaler.karpenter.disruption.cron import CronError, parse_standard
from kplan.autoscaler.karpenter.disruption.helpers import build_disruption_budget_mapping
from kplan.autoscaler.karpenter.disruption.nodepool import (
    DRIFTED,
    EMPTY,
    MAX_INT32,
    UNDERUTILIZED,
    UNHEALTHY,
    Budget,
    allowed_disruptions,
)

from .builders import NOW, node, pool

CRON = json.loads((Path(__file__).parent / "cron_cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", CRON, ids=[f"{c['Spec']} after {c['T']}" for c in CRON])
def test_schedule_next_hit_is_robfig_crons(case: dict[str, object]) -> None:
    try:
        got = parse_standard(str(case["Spec"])).next(float(case["T"]))  # type: ignore[arg-type]
    except CronError:
        assert case["Err"]
        return
    assert not case["Err"]
    assert (None if got is None else int(got)) == case["Next"]


MONDAY_9_30 = 1_796_635_800.0  # 2026-12-07 09:30 UTC, a Monday

BUDGETS = [
    ("ten percent of 25 nodes rounds up to 3", [Budget("10%")], 25, UNDERUTILIZED, 3),
    ("a count is taken as it is", [Budget("2")], 25, UNDERUTILIZED, 2),
    ("zero percent of any count is 0", [Budget("0%")], 7, EMPTY, 0),
    ("the smallest budget wins", [Budget("50%"), Budget("1")], 10, UNDERUTILIZED, 1),
    ("a budget for other reasons does not apply", [Budget("0", reasons=(DRIFTED,)), Budget("5")], 10,
     UNDERUTILIZED, 5),
    ("a budget naming the reason applies", [Budget("0", reasons=(DRIFTED,)), Budget("5")], 10, DRIFTED, 0),
    ("an empty reasons list applies to no reason", [Budget("0", reasons=())], 10, UNDERUTILIZED, MAX_INT32),
    ("a schedule inside its window is active", [Budget("0", schedule="0 9 * * mon-fri", duration=3600)], 10,
     UNDERUTILIZED, 0),
    ("a schedule outside its window allows any number",
     [Budget("0", schedule="0 9 * * mon-fri", duration=600)], 10, UNDERUTILIZED, MAX_INT32),
    ("a window that starts exactly now is active", [Budget("0", schedule="30 9 * * *", duration=60)], 10,
     UNDERUTILIZED, 0),
    ("a schedule that never fires reads as always active (the zero time)",
     [Budget("0", schedule="0 0 30 2 *", duration=60)], 10, UNDERUTILIZED, 0),
    ("a bad schedule allows nothing, for every reason",
     [Budget("5"), Budget("9", schedule="not a cron x y z", duration=60, reasons=(DRIFTED,))], 10, EMPTY, 0),
    ("a bad nodes value allows nothing", [Budget("ten")], 10, UNDERUTILIZED, 0),
]


@pytest.mark.parametrize(("budgets", "count", "reason", "want"), [b[1:] for b in BUDGETS], ids=[b[0] for b in BUDGETS])
def test_allowed_disruptions(budgets: list[Budget], count: int, reason: str, want: int) -> None:
    assert allowed_disruptions(budgets, MONDAY_9_30, count, reason) == want


def test_not_ready_and_deleting_nodes_use_the_budget_except_for_unhealthy() -> None:
    nodes = [node("a"), node("b", ready="False"), node("c", claim={"deleting": True}), node("d"),
             node("e", initialized=False)]
    pools = {"default": pool(budgets=(Budget("3"),))}
    assert build_disruption_budget_mapping(nodes, pools, NOW, UNDERUTILIZED) == {"default": 1}
    assert build_disruption_budget_mapping(nodes, pools, NOW, UNHEALTHY) == {"default": 2}


def test_percentages_count_initialized_managed_nodes_only() -> None:
    nodes = [node(f"n{i}") for i in range(11)] + [node("u", managed=False), node("x", initialized=False)]
    pools = {"default": pool()}
    assert build_disruption_budget_mapping(nodes, pools, NOW, EMPTY) == {"default": 2}
