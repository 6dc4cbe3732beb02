"""The registry: name → factory; a plugin's extension points come from its type, one rule for all."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.framework.registry import PluginSpec, Registry, points_of
from kplan.framework.release import Release
from kplan.plugins import in_tree_registry

#: reference 1.2: the points each default plugin serves in v1.34.1 (what its Go type implements)
REFERENCE_POINTS = {
    "SchedulingGates": {"preEnqueue"},
    "PrioritySort": {"queueSort"},
    "NodeUnschedulable": {"filter"},
    "NodeName": {"filter"},
    "TaintToleration": {"filter", "preScore", "score"},
    "NodeAffinity": {"preFilter", "filter", "preScore", "score"},
    "NodePorts": {"preFilter", "filter"},
    "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
    "VolumeRestrictions": {"preFilter", "filter"},
    "NodeVolumeLimits": {"preFilter", "filter"},
    "VolumeBinding": {"preFilter", "filter", "reserve", "preBind", "preScore", "score"},
    "VolumeZone": {"preFilter", "filter"},
    "PodTopologySpread": {"preFilter", "filter", "preScore", "score"},
    "InterPodAffinity": {"preFilter", "filter", "preScore", "score"},
    "DynamicResources": {"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"},
    "DefaultPreemption": {"preEnqueue", "postFilter"},
    "NodeResourcesBalancedAllocation": {"preScore", "score"},
    "ImageLocality": {"score"},
    "DefaultBinder": {"bind"},
}


#: what changed in 1.35 (v1.35.4): DynamicResources implements ScorePlugin (#134711)
POINTS_1_35 = {**REFERENCE_POINTS, "DynamicResources": REFERENCE_POINTS["DynamicResources"] | {"score"}}


@pytest.mark.parametrize(("version", "name"), [("1.34", n) for n in sorted(REFERENCE_POINTS)]
                         + [("1.35", n) for n in sorted(POINTS_1_35)])
def test_an_in_tree_plugin_implements_the_points_of_its_upstream_type(version: str, name: str) -> None:
    spec = in_tree_registry(Release.of(version)).get(name)
    assert spec is not None and spec.upstream and spec.in_tree
    assert spec.points == (REFERENCE_POINTS if version == "1.34" else POINTS_1_35)[name]


class _ScoreOnly:
    def score(self, *a: Any) -> Any: ...


class _FilterAndReserve:
    def filter(self, *a: Any) -> Any: ...

    def reserve(self, *a: Any) -> Any: ...

    def unreserve(self, *a: Any) -> Any: ...


class _NotAPoint:
    score = 3  # not callable: not a Score plugin


@pytest.mark.parametrize(("cls", "points"), [
    (_ScoreOnly, {"score"}),
    (_FilterAndReserve, {"filter", "reserve"}),
    (_NotAPoint, set()),
], ids=["a score method", "filter and reserve methods", "an attribute named like a method"])
def test_points_of_reads_the_methods_of_a_type(cls: type, points: set[str]) -> None:
    assert points_of(cls) == points


def test_an_entry_builds_its_type_unless_it_has_its_own_build() -> None:
    plain = PluginSpec("S", _ScoreOnly)
    assert plain.factory is _ScoreOnly and plain.points == {"score"}

    def build(args: Any, handle: Any) -> Any:
        return _ScoreOnly()

    guarded = PluginSpec("S", _ScoreOnly, build=build, upstream=False, origin="entry point S")
    assert guarded.factory is build and guarded.points == {"score"} and not guarded.in_tree


def test_the_registry_answers_by_name() -> None:
    r = Registry([PluginSpec("S", _ScoreOnly)])
    assert "S" in r and r.names() == ["S"] and r.implements("S", "score")
    assert not r.implements("S", "filter") and not r.implements("T", "score") and r.get("T") is None
