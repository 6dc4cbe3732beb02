"""ResourceLimits: the v1.18 NodeResourceLimits score (1 if cpu or memory limit fits allocatable),
mapped to 0/100; kplan's own plugin."""

from __future__ import annotations

import pytest
from extra_builders import Gi, build, cluster, explain_by_name, node, pod, score_by_name

from kplan.framework.registry import ArgsError
from kplan.model.parse import parse_pod
from kplan.plugins.extra.resourcelimits import ResourceLimits, decode_args, validate_args

CASES = [
    # (id, pod limits, node cpu millicores, node memory bytes, expected)
    ("cpu limit within allocatable scores 100", {"cpu": 2000}, 4000, 8 * Gi, 100),
    ("cpu limit equal to allocatable scores 100", {"cpu": 4000}, 4000, 8 * Gi, 100),
    ("cpu limit above allocatable scores 0", {"cpu": 4001}, 4000, 8 * Gi, 0),
    ("memory limit within allocatable scores 100", {"memory": 8 * Gi}, 4000, 8 * Gi, 100),
    ("memory limit above allocatable scores 0", {"memory": 9 * Gi}, 4000, 8 * Gi, 0),
    ("either resource fitting is enough: cpu fits, memory does not", {"cpu": 1000, "memory": 9 * Gi}, 4000, 8 * Gi, 100),
    ("either resource fitting is enough: memory fits, cpu does not", {"cpu": 9000, "memory": 1 * Gi}, 4000, 8 * Gi, 100),
    ("neither fits scores 0", {"cpu": 9000, "memory": 9 * Gi}, 4000, 8 * Gi, 0),
    ("a node advertising no cpu never satisfies a cpu limit", {"cpu": 1}, 0, 8 * Gi, 0),
    ("a node advertising no memory never satisfies a memory limit", {"memory": 1}, 4000, 0, 0),
    ("limits on other resources are not looked at", {"ephemeral-storage": 1}, 4000, 8 * Gi, 0),
]


@pytest.mark.parametrize("limits,cpu,memory,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_score(limits: dict[str, int], cpu: int, memory: int, want: int) -> None:
    snap = cluster([node("n", cpu=cpu, memory=memory)])
    plugin = build(ResourceLimits, decode_args(None), snap)
    assert score_by_name(plugin, pod("p", limits=limits), snap) == {"n": want}


def test_allocatable_is_compared_not_what_is_left_free() -> None:
    # upstream compared the limit with the node's whole allocatable, whatever already runs there
    snap = cluster([node("full", cpu=4000)], [(pod("hog", cpu=4000), "full")])
    plugin = build(ResourceLimits, decode_args(None), snap)
    assert score_by_name(plugin, pod("p", limits={"cpu": 3000}), snap) == {"full": 100}


def test_pod_without_cpu_or_memory_limit_is_skipped_at_pre_score_and_scores_zero_anyway() -> None:
    snap = cluster([node("n")])
    plugin = build(ResourceLimits, decode_args(None), snap)
    p = pod("p", cpu=500)
    assert score_by_name(plugin, p, snap, pre_score=True) == {"n": 0}
    assert score_by_name(plugin, p, snap, pre_score=False) == {"n": 0}


def test_limits_come_from_the_parsed_pod_sidecars_and_pod_level_limits_included() -> None:
    doc = {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}},
                       {"name": "b", "resources": {"limits": {"cpu": "2"}}}],
        "initContainers": [{"name": "side", "restartPolicy": "Always", "resources": {"limits": {"cpu": "1"}}}]}}
    p = parse_pod(doc)
    assert p.limits["cpu"] == 4000
    snap = cluster([node("three", cpu=3000), node("four", cpu=4000)])
    plugin = build(ResourceLimits, decode_args(None), snap)
    assert score_by_name(plugin, p, snap) == {"three": 0, "four": 100}


def test_explain_names_each_limit_and_the_allocatable_it_was_compared_with() -> None:
    snap = cluster([node("small", cpu=1000, memory=1 * Gi), node("big", cpu=8000, memory=32 * Gi)])
    plugin = build(ResourceLimits, decode_args(None), snap)
    lines = explain_by_name(plugin, pod("p", limits={"cpu": 2000, "memory": 2 * Gi}), snap)
    assert lines == {
        "small": f"0: cpu limit 2000m > allocatable 1000m, memory limit {2 * Gi} > allocatable {1 * Gi}",
        "big": f"100: cpu limit 2000m <= allocatable 8000m, memory limit {2 * Gi} <= allocatable {32 * Gi}",
    }
    assert explain_by_name(plugin, pod("q"), snap)["big"] == "0: the pod sets no cpu or memory limit (skipped)"


def test_args_are_empty_and_strict() -> None:
    assert validate_args(decode_args({})) == []
    with pytest.raises(ArgsError, match='unknown field "resources"'):
        decode_args({"resources": ["cpu"]})
