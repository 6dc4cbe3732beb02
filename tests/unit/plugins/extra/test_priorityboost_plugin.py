"""PriorityBoost: pods at or above minPriority prefer headroom; kplan's own plugin."""

from __future__ import annotations

import pytest
from extra_builders import Gi, build, cluster, explain_by_name, node, pod, score_by_name

from kplan.framework.registry import ArgsError
from kplan.plugins.extra.priorityboost import DEFAULT_MIN_PRIORITY, PriorityBoost, decode_args, validate_args

CASES = [
    # (id, node cpu, node memory, already requested (cpu, memory), pod request (cpu, memory), expected)
    ("an empty node and a pod asking for nothing: 100", 4000, 8 * Gi, (0, 0), (0, 0), 100),
    ("the pod's own request counts: a quarter of each used, 75", 4000, 8 * Gi, (0, 0), (1000, 2 * Gi), 75),
    ("mean of cpu 50% free and memory 100% free: 75", 4000, 8 * Gi, (2000, 0), (0, 0), 75),
    ("per-resource percentages round down: cpu 2/3 free is 66", 3000, 8 * Gi, (1000, 0), (0, 0), 83),
    ("the mean rounds down: (66 + 33) // 2 = 49", 3000, 3 * Gi, (1000, 2 * Gi), (0, 0), 49),
    ("a resource over-committed counts as 0 free, never negative", 4000, 8 * Gi, (5000, 0), (0, 0), 50),
    ("a node advertising no memory is judged on cpu alone", 4000, 0, (1000, 0), (0, 0), 75),
    ("a node advertising neither scores 0", 0, 0, (0, 0), (0, 0), 0),
]


@pytest.mark.parametrize("cpu,memory,used,req,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_score(cpu: int, memory: int, used: tuple[int, int], req: tuple[int, int], want: int) -> None:
    placed = [(pod("running", cpu=used[0], memory=used[1]), "n")] if any(used) else []
    snap = cluster([node("n", cpu=cpu, memory=memory)], placed)
    plugin = build(PriorityBoost, decode_args({"minPriority": 100}), snap)
    assert score_by_name(plugin, pod("p", priority=100, cpu=req[0], memory=req[1]), snap) == {"n": want}


@pytest.mark.parametrize("priority,boosted", [(99, False), (100, True), (2_000_000_000, True), (-5, False)],
                         ids=["just below the threshold", "at the threshold", "system-critical", "negative"])
def test_only_pods_at_or_above_min_priority_are_scored(priority: int, boosted: bool) -> None:
    snap = cluster([node("free"), node("busy")], [(pod("hog", cpu=3000, memory=12 * Gi), "busy")])
    plugin = build(PriorityBoost, decode_args({"minPriority": 100}), snap)
    want = {"free": 100, "busy": 25} if boosted else {"free": 0, "busy": 0}
    p = pod("p", priority=priority)
    assert score_by_name(plugin, p, snap) == want
    assert score_by_name(plugin, p, snap, pre_score=False) == want  # enabled at score only


def test_real_requests_count_not_the_non_zero_defaults() -> None:
    # a best-effort pod running on the node takes no headroom (LeastAllocated would count 100m/200Mi)
    snap = cluster([node("n")], [(pod("best-effort"), "n")])
    assert score_by_name(build(PriorityBoost, decode_args({"minPriority": 0}), snap), pod("p"), snap) == {"n": 100}


def test_explain() -> None:
    snap = cluster([node("n", cpu=4000, memory=8 * Gi)], [(pod("r", cpu=1000), "n")])
    plugin = build(PriorityBoost, decode_args({"minPriority": 10}), snap)
    assert explain_by_name(plugin, pod("p", priority=10, memory=2 * Gi), snap) == {
        "n": "75: cpu 75% free, memory 75% free after placing the pod (mean, rounded down)"}
    assert explain_by_name(plugin, pod("q", priority=9), snap) == {
        "n": "0: priority 9 is below minPriority 10 (skipped)"}


def test_args() -> None:
    assert decode_args(None).min_priority == DEFAULT_MIN_PRIORITY == 1_000_000_000
    assert decode_args({"minPriority": 2000}).min_priority == 2000
    assert validate_args(decode_args({"minPriority": 2**31})) == [
        "minPriority: Invalid value: 2147483648: must be a 32-bit integer"]
    with pytest.raises(ArgsError, match='unknown field "threshold"'):
        decode_args({"threshold": 1})
    with pytest.raises(ArgsError, match="minPriority: expected an integer, got 'high'"):
        decode_args({"minPriority": "high"})
