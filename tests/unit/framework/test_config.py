"""KubeSchedulerConfiguration → effective profile (reference 1.2 and 1.5)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kplan.errors import ConfigError
from kplan.framework.config import SchedulerConfig, load_config
from kplan.framework.cycle_state import CycleState
from kplan.framework.release import Release
from kplan.framework.runtime import Framework
from kplan.plugins import in_tree_registry
from kplan.scheduler.simulate import SchedulerHandle
from tests.builders import make_node, make_pod, make_snapshot

#: v1.34.1's default profile (reference 1.2): DynamicResources does not score
POINTS_1_34 = {
    "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
    "queueSort": ["PrioritySort"],
    "preFilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
                  "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"],
    "filter": ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
               "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
               "InterPodAffinity", "DynamicResources"],
    "postFilter": ["DynamicResources", "DefaultPreemption"],
    "preScore": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                 "InterPodAffinity", "NodeResourcesBalancedAllocation"],
    "score": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
              "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"],
    "reserve": ["VolumeBinding", "DynamicResources"],
    "permit": [],
    "preBind": ["VolumeBinding", "DynamicResources"],
    "bind": ["DefaultBinder"],
    "postBind": [],
}
WEIGHTS_1_34 = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
                "ImageLocality": 1}
#: v1.35.4's default profile: DynamicResources scores with weight 2 (#134711), after InterPodAffinity
#: as in the MultiPoint list; it has no PreScore
POINTS_1_35 = {**POINTS_1_34, "score": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
                                       "PodTopologySpread", "InterPodAffinity", "DynamicResources",
                                       "NodeResourcesBalancedAllocation", "ImageLocality"]}
WEIGHTS_1_35 = {**WEIGHTS_1_34, "DynamicResources": 2}
#: the default release's (1.37, v1.37.2) default profile: 1.35's, with NodeDeclaredFeatures last at
#: PreFilter and Filter (1.36, beta on; GA in 1.37; appended to MultiPoint) and NodeName first, now
#: with a PreFilter (1.37); the same weights
DEFAULT_POINTS = {**POINTS_1_35,
                  "preFilter": ["NodeName", *POINTS_1_35["preFilter"], "NodeDeclaredFeatures"],
                  "filter": ["NodeName", "NodeUnschedulable",
                             *[n for n in POINTS_1_35["filter"] if n not in ("NodeName", "NodeUnschedulable")],
                             "NodeDeclaredFeatures"]}
DEFAULT_WEIGHTS = WEIGHTS_1_35


def cfg(**top: Any) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **top}


def plugins(**points: Any) -> dict[str, Any]:
    """A one-profile configuration with these ``plugins`` sections."""
    return cfg(profiles=[{"plugins": points}])


def on(*names: str | tuple[str, int]) -> list[dict[str, Any]]:
    out = []
    for n in names:
        out.append({"name": n[0], "weight": n[1]} if isinstance(n, tuple) else {"name": n})
    return out


def load(doc: dict[str, Any] | None, version: str | None = None) -> SchedulerConfig:
    release = Release.of(version) if version else None
    return load_config(doc, in_tree_registry(release), release)


def error_of(doc: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as e:
        load(doc)
    return str(e.value)


# ------------------------------------------------------------------------------ defaults

@pytest.mark.parametrize("version, points, weights", [
    pytest.param(None, DEFAULT_POINTS, DEFAULT_WEIGHTS, id="the default release, 1.37"),
    pytest.param("1.37", DEFAULT_POINTS, DEFAULT_WEIGHTS, id="1.37"),
    pytest.param("1.35", POINTS_1_35, WEIGHTS_1_35, id="1.35"),
    pytest.param("1.34", POINTS_1_34, WEIGHTS_1_34, id="1.34"),
])
def test_no_file_gives_the_default_profile(version: str | None, points: dict[str, list[str]],
                                           weights: dict[str, int]) -> None:
    c = load(None, version)
    (p,) = c.profiles
    assert p.scheduler_name == "default-scheduler"
    assert p.points == points
    assert p.weights == weights
    assert (c.parallelism, c.percentage_of_nodes_to_score, c.pod_initial_backoff_seconds,
            c.pod_max_backoff_seconds, p.percentage_of_nodes_to_score) == (16, 0, 1, 10, None)


def test_an_empty_file_gives_the_same_profile_as_no_file() -> None:
    assert load(cfg()).profiles[0].points == DEFAULT_POINTS


def test_default_args_are_added_for_enabled_plugins_with_an_args_kind() -> None:
    args = load(None).profiles[0].args
    assert set(args) == {"NodeResourcesFit", "NodeResourcesBalancedAllocation", "InterPodAffinity",
                         "PodTopologySpread", "DefaultPreemption", "VolumeBinding", "NodeAffinity", "DynamicResources"}


def test_a_plugin_disabled_in_multipoint_gets_no_default_args() -> None:
    doc = plugins(multiPoint={"disabled": on("InterPodAffinity")})
    assert "InterPodAffinity" not in load(doc).profiles[0].args


@pytest.mark.parametrize("doc, global_pct, profile_pct", [
    pytest.param(cfg(percentageOfNodesToScore=50), 50, None, id="a global percentage leaves the profile unset"),
    pytest.param(cfg(percentageOfNodesToScore=50, profiles=[{"percentageOfNodesToScore": 0}]), 50, 0,
                 id="a profile percentage of 0 is kept and overrides the global one"),
    pytest.param(cfg(profiles=[{"percentageOfNodesToScore": 30}]), 0, 30, id="a profile percentage is kept"),
])
def test_percentage_of_nodes_to_score(doc: dict[str, Any], global_pct: int, profile_pct: int | None) -> None:
    c = load(doc)
    assert (c.percentage_of_nodes_to_score, c.profiles[0].percentage_of_nodes_to_score) == (global_pct, profile_pct)


def test_an_empty_queue_sort_section_equals_an_absent_one() -> None:
    doc = cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {"enabled": []}}}])
    assert [p.scheduler_name for p in load(doc).profiles] == ["a", "b"]


def test_profile_names_default_only_for_a_single_profile() -> None:
    assert error_of(cfg(profiles=[{"schedulerName": "a"}, {}])) == "profiles[1].schedulerName: Required value"


# ------------------------------------------------------------------------------ worked examples (1.5.7)
# the reference's worked examples are v1.34.1's: a and b are checked at 1.34 (at 1.35 the score list
# has DynamicResources after InterPodAffinity, as test_no_file_gives_the_default_profile shows)

EXAMPLE_A = plugins(score={"enabled": on(("NodeResourcesBalancedAllocation", 5), ("ImageLocality", 3))})
EXAMPLE_B = plugins(score={"disabled": on("PodTopologySpread", "TaintToleration")})
EXAMPLE_C = plugins(multiPoint={"disabled": on("*"), "enabled": on("NodeResourcesFit", "PrioritySort",
                                                                     "DefaultBinder")})


def test_worked_example_a_moves_reweighted_score_plugins_to_the_front() -> None:
    p = load(EXAMPLE_A, "1.34").profiles[0]
    assert p.points["score"] == ["NodeResourcesBalancedAllocation", "ImageLocality", "TaintToleration",
                                 "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                                 "InterPodAffinity"]
    assert p.weights == {**WEIGHTS_1_34, "NodeResourcesBalancedAllocation": 5, "ImageLocality": 3}
    assert {k: v for k, v in p.points.items() if k != "score"} == {
        k: v for k, v in POINTS_1_34.items() if k != "score"}


def test_worked_example_b_disables_scoring_only() -> None:
    p = load(EXAMPLE_B, "1.34").profiles[0]
    assert p.points["score"] == ["NodeAffinity", "NodeResourcesFit", "VolumeBinding", "InterPodAffinity",
                                 "NodeResourcesBalancedAllocation", "ImageLocality"]
    assert {n: p.weights[n] for n in p.points["score"]} == {
        "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1, "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    assert p.points["preScore"] == POINTS_1_34["preScore"]
    assert "TaintToleration" in p.points["filter"] and "PodTopologySpread" in p.points["filter"]


def test_worked_example_c_keeps_only_the_listed_plugins() -> None:
    p = load(EXAMPLE_C).profiles[0]
    assert p.points == {
        "preEnqueue": [], "queueSort": ["PrioritySort"], "preFilter": ["NodeResourcesFit"],
        "filter": ["NodeResourcesFit"], "postFilter": [], "preScore": ["NodeResourcesFit"],
        "score": ["NodeResourcesFit"], "reserve": [], "permit": [], "preBind": [], "bind": ["DefaultBinder"],
        "postBind": []}
    assert p.weights == {"NodeResourcesFit": 1}
    assert set(p.args) == {"NodeResourcesFit"}


@pytest.mark.parametrize("doc, version, total", [
    pytest.param(None, "1.34", 487, id="the default profile scores the worked example 487"),
    pytest.param(EXAMPLE_A, "1.34", 887, id="worked example a scores 887"),
    pytest.param(EXAMPLE_B, "1.34", 187, id="worked example b scores 187"),
    pytest.param(EXAMPLE_C, "1.34", 87, id="worked example c scores 87"),
    # from 1.36 BalancedAllocation scores the change of balance (#135573): the pod keeps the empty
    # node's shares equal (1/8 and 1/8), so 75 where 1.34 gives 100
    pytest.param(None, None, 462, id="at the default release BalancedAllocation gives 75: 462"),
    pytest.param(EXAMPLE_A, None, 762, id="worked example a at the default release: 762"),
    pytest.param(EXAMPLE_B, None, 162, id="worked example b at the default release: 162"),
    pytest.param(EXAMPLE_C, None, 87, id="worked example c at the default release: 87"),
])
def test_worked_example_totals(doc: dict[str, Any] | None, version: str | None, total: int) -> None:
    # one node with 4 CPU and 8Gi, one pod requesting 500m and 1Gi (reference 1.5.7, v1.34.1's figures)
    config = load(doc, version)
    snap = make_snapshot([make_node("n").alloc(cpu="4", memory="8Gi", pods=110)])
    handle = SchedulerHandle(snap, config, 0, True, {})
    fw = Framework(config.profiles[0], in_tree_registry(Release.of(version)), handle)
    handle.frameworks[fw.profile_name] = fw
    pod = make_pod().req(cpu="500m", memory="1Gi").build()
    state = CycleState()
    fw.run_pre_filter(state, pod)
    rows = np.arange(1, dtype=np.int64)
    fw.run_pre_score(state, pod, snap.table, rows)
    totals, _, status = fw.run_score(state, pod, snap.table, rows)
    assert status.ok and int(totals[0]) == total


# ------------------------------------------------------------------------------ merge rules (1.5.2–1.5.4)

@pytest.mark.parametrize("doc, point, expected", [
    pytest.param(plugins(multiPoint={"enabled": on("TaintToleration")}), "score", DEFAULT_POINTS["score"],
                 id="re-enabling a default plugin in multiPoint keeps its position"),
    pytest.param(plugins(multiPoint={"disabled": on("TaintToleration"), "enabled": on(("TaintToleration", 3))}),
                 "filter", [n for n in DEFAULT_POINTS["filter"] if n != "TaintToleration"] + ["TaintToleration"],
                 id="a default plugin both disabled and enabled in multiPoint moves to the end"),
    pytest.param(plugins(multiPoint={"disabled": on("NodePorts")}), "preFilter",
                 [n for n in DEFAULT_POINTS["preFilter"] if n != "NodePorts"],
                 id="multiPoint disabled removes the plugin from every point"),
    pytest.param(plugins(multiPoint={"disabled": on("NodePorts")}), "filter",
                 [n for n in DEFAULT_POINTS["filter"] if n != "NodePorts"],
                 id="multiPoint disabled removes the plugin from filtering too"),
    pytest.param(plugins(filter={"enabled": on("NodePorts")}), "filter",
                 ["NodePorts"] + [n for n in DEFAULT_POINTS["filter"] if n != "NodePorts"],
                 id="enabling a multiPoint plugin at one point moves it to the front there"),
    pytest.param(plugins(filter={"enabled": on("NodePorts", "NodeName")}), "filter",
                 ["NodePorts", "NodeName"] + [n for n in DEFAULT_POINTS["filter"] if n not in ("NodePorts", "NodeName")],
                 id="several plugins moved to the front keep the written order"),
    pytest.param(plugins(filter={"enabled": on("NodePorts")}), "preFilter", DEFAULT_POINTS["preFilter"],
                 id="moving a plugin at one point leaves the other points alone"),
    pytest.param(plugins(multiPoint={"disabled": on("NodePorts")}, filter={"enabled": on("NodePorts")}), "filter",
                 [n for n in DEFAULT_POINTS["filter"] if n != "NodePorts"] + ["NodePorts"],
                 id="a plugin not in multiPoint enabled at one point is appended there"),
    pytest.param(plugins(multiPoint={"disabled": on("NodePorts")}, filter={"enabled": on("NodePorts")}), "preFilter",
                 [n for n in DEFAULT_POINTS["preFilter"] if n != "NodePorts"],
                 id="a plugin enabled at one point runs only there"),
    pytest.param(plugins(score={"disabled": on("ImageLocality")}), "score",
                 [n for n in DEFAULT_POINTS["score"] if n != "ImageLocality"],
                 id="disabling at one point removes the plugin there"),
    pytest.param(plugins(score={"disabled": on("NodeAffinity")}), "preScore", DEFAULT_POINTS["preScore"],
                 id="a plugin disabled at Score still runs its PreScore"),
    pytest.param(plugins(filter={"disabled": on("*"), "enabled": on("NodeResourcesFit", "TaintToleration")}),
                 "filter", ["NodeResourcesFit", "TaintToleration"],
                 id="disabling all at a point and enabling some gives exactly that order"),
    pytest.param(plugins(filter={"disabled": on("*")}), "filter", [], id="disabling all at a point empties it"),
    pytest.param(plugins(filter={"enabled": on("NodePorts"), "disabled": on("NodePorts")}), "filter",
                 [n for n in DEFAULT_POINTS["filter"] if n != "NodePorts"] + ["NodePorts"],
                 id="a plugin enabled and disabled at the same point stays at its end"),
    pytest.param(plugins(multiPoint={"disabled": on("*"), "enabled": on("PrioritySort", "DefaultBinder",
                                                                         "NodeName", "NodeUnschedulable")}),
                 "filter", ["NodeName", "NodeUnschedulable"],
                 id="multiPoint disabled all keeps only its enabled list in the user's order"),
    pytest.param(plugins(multiPoint={"disabled": on("NoSuchPlugin")}), "filter", DEFAULT_POINTS["filter"],
                 id="unknown names in a disabled list are ignored"),
])
def test_plugin_lists(doc: dict[str, Any], point: str, expected: list[str]) -> None:
    assert load(doc).profiles[0].points[point] == expected


@pytest.mark.parametrize("doc, weights", [
    pytest.param(plugins(multiPoint={"enabled": on("TaintToleration")}), {"TaintToleration": 1},
                 id="a multiPoint entry without weight replaces the default weight with 1"),
    pytest.param(plugins(multiPoint={"enabled": on(("ImageLocality", 9))}), {"ImageLocality": 9},
                 id="a multiPoint weight changes the weight in place"),
    pytest.param(plugins(score={"enabled": on("TaintToleration")}), {"TaintToleration": 1},
                 id="a score entry without weight beats the multiPoint weight and gives 1"),
    pytest.param(plugins(multiPoint={"enabled": on(("ImageLocality", 5))}, score={"enabled": on(("ImageLocality", 7))}),
                 {"ImageLocality": 7}, id="a score weight beats a multiPoint weight"),
    pytest.param(plugins(multiPoint={"enabled": on(("ImageLocality", 0))}), {"ImageLocality": 1},
                 id="a weight of 0 means 1"),
    pytest.param(plugins(filter={"enabled": on(("NodePorts", 9))}, multiPoint={"enabled": on(("ImageLocality", 4))}),
                 {"ImageLocality": 4}, id="a weight at a point other than score is ignored"),
    pytest.param(plugins(multiPoint={"enabled": on(("NodeAffinity", -1))}), {"NodeAffinity": -1},
                 id="a negative weight is accepted while the running total stays positive"),
    pytest.param(plugins(score={"enabled": on(("TaintToleration", 5), ("ImageLocality", -4))}),
                 {"TaintToleration": 5, "ImageLocality": -4}, id="a negative score weight after a large one is accepted"),
])
def test_score_weights(doc: dict[str, Any], weights: dict[str, int]) -> None:
    got = load(doc).profiles[0].weights
    assert {k: got[k] for k in weights} == weights


def test_score_section_order_puts_the_reweighted_plugin_first() -> None:
    assert load(plugins(score={"enabled": on("TaintToleration")})).profiles[0].points["score"][0] == "TaintToleration"


# ------------------------------------------------------------------------------ plugin args (1.5.5)

@pytest.mark.parametrize("entry, check", [
    pytest.param({"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                 lambda a: (a.strategy, [(r.name, r.weight) for r in a.resources]) == (
                     "MostAllocated", [("cpu", 1), ("memory", 1)]),
                 id="a strategy type alone gets cpu and memory with weight 1"),
    pytest.param({"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "LeastAllocated", "resources": [{"name": "cpu"}, {"name": "memory", "weight": 0}]}}},
                 lambda a: [(r.name, r.weight) for r in a.resources] == [("cpu", 1), ("memory", 1)],
                 id="resource weights left out or 0 become 1"),
    pytest.param({"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/x"]}},
                 lambda a: a.strategy == "LeastAllocated" and a.ignored_resources == ("example.com/x",),
                 id="args without a scoring strategy get LeastAllocated"),
])
def test_plugin_args_are_defaulted(entry: dict[str, Any], check: Any) -> None:
    doc = cfg(profiles=[{"pluginConfig": [entry]}])
    assert check(load(doc).profiles[0].args[entry["name"]])


def test_a_valid_added_affinity_is_accepted_with_empty_terms_ignored() -> None:
    doc = added_affinity(required=[{}, {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}],
                         preferred=[{"weight": 0, "preference": {"matchExpressions": [{"key": "x", "operator": "Foo"}]}}])
    args = load(doc).profiles[0].args["NodeAffinity"]
    assert args.added_required is not None and args.added_required.matches("n", {"zone": "a"})


def test_args_of_plugins_without_an_args_kind_are_kept_raw() -> None:
    doc = cfg(profiles=[{"pluginConfig": [{"name": "ImageLocality", "args": {"anything": [1, 2]}}]}])
    assert load(doc).profiles[0].raw_args == {"ImageLocality": {"anything": [1, 2]}}


def test_invalid_fit_args_are_accepted_when_the_plugin_is_disabled() -> None:
    doc = cfg(profiles=[{"plugins": {"multiPoint": {"disabled": on("NodeResourcesFit")}},
                         "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                             "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}}}]}])
    assert "NodeResourcesFit" not in load(doc).profiles[0].points["filter"]


# ------------------------------------------------------------------------------ errors (1.5.1, 1.5.6)

STEP4 = "initializing profiles: creating profile for scheduler name default-scheduler: "
ADDED = "profiles[0].pluginConfig[0].args.addedAffinity."


def added_affinity(required: list[dict[str, Any]] | None = None,
                   preferred: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    added: dict[str, Any] = {}
    if required is not None:
        added["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        added["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return cfg(profiles=[{"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": added}}]}])


@pytest.mark.parametrize("doc, message", [
    pytest.param({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
                 'no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3" '
                 'in scheme "pkg/scheduler/apis/config/scheme/scheme.go:33"', id="an old apiVersion is not registered"),
    pytest.param(cfg(foo=1), 'strict decoding error: unknown field "foo"', id="an unknown top-level field"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit",
                                                  "args": {"scoringStrategy": {"foo": 1}}}]}]),
                 'strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args '
                 'for plugin NodeResourcesFit: strict decoding error: unknown field "scoringStrategy.foo"',
                 id="an unknown field inside plugin args"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "InterPodAffinity",
                                                  "args": {"kind": "NodeAffinityArgs"}}]}]),
                 "args for plugin InterPodAffinity were not of type InterPodAffinityArgs.kubescheduler.config.k8s.io, "
                 "got NodeAffinityArgs", id="args of the wrong kind"),
    pytest.param(cfg(parallelism=0), "parallelism: Invalid value: 0: should be an integer value greater than zero",
                 id="parallelism must be positive"),
    pytest.param(cfg(percentageOfNodesToScore=101),
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
                 id="the global percentage must be within 0 to 100"),
    pytest.param(cfg(profiles=[{"percentageOfNodesToScore": -1}]),
                 "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
                 id="the profile percentage must be within 0 to 100"),
    pytest.param(cfg(podInitialBackoffSeconds=0), "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
                 id="the initial backoff must be positive"),
    pytest.param(cfg(podInitialBackoffSeconds=20),
                 "podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds",
                 id="an initial backoff above the default maximum is rejected"),
    pytest.param(cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
                 "profiles[1].schedulerName: Duplicate value: {}", id="profile names must be unique"),
    pytest.param(cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {
        "queueSort": {"enabled": on("PrioritySort")}}}]),
                 "profiles[1].plugins.queueSort: Invalid value: ", id="the queue sort section must match everywhere"),
    pytest.param(plugins(filter={"enabled": on("EBSLimits")}),
                 'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version "v1" '
                 '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
                 id="a removed plugin at a specific point"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": {}},
                                                 {"name": "InterPodAffinity", "args": {}}]}]),
                 'profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity"', id="plugin args given twice"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "InterPodAffinity",
                                                  "args": {"hardPodAffinityWeight": 101}}]}]),
                 "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
                 id="invalid args are prefixed with their path"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "GCEPDLimits", "args": {}}]}]),
                 'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version "v1" '
                 '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
                 id="a removed plugin named in pluginConfig is reported at the entry"),
    pytest.param(plugins(queueSort={"enabled": on("PrioritySort", "PrioritySort")}),
                 "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled",
                 id="two queue sort plugins are rejected by validation"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": {}},
                                                 {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": -1}}]}]),
                 '[profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity", '
                 "profiles[0].pluginConfig[1].args.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]]",
                 id="a duplicated args entry is still validated"),
    pytest.param(cfg(percentageOfNodesToScore=101, parallelism=0, profiles=[{"percentageOfNodesToScore": 101}]),
                 "[parallelism: Invalid value: 0: should be an integer value greater than zero, "
                 "profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100], "
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]]",
                 id="errors are listed in validation order with profiles before the global percentage"),
    pytest.param(cfg(profiles=[{"schedulerName": "a", "percentageOfNodesToScore": 101},
                               {"schedulerName": "a", "percentageOfNodesToScore": -1}]),
                 "[profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100], "
                 "profiles[1].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100], "
                 "profiles[1].schedulerName: Duplicate value: {}]",
                 id="a duplicate profile name is reported after that profile's own errors"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "NodeResourcesBalancedAllocation", "args": {"resources": [
        {"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 2}]}}]}]),
                 '[profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: "cpu", '
                 "profiles[0].pluginConfig[0].args.resources[1].weight: Invalid value: 2: must be 1]",
                 id="BalancedAllocation reports a duplicate resource before its weight"),
    pytest.param(added_affinity(required=[{"matchExpressions": [{"key": "a", "operator": "Foo", "values": ["x"]}]}]),
                 ADDED + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]."
                 'operator: Unsupported value: "Foo": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", '
                 '"Lt"', id="addedAffinity with an unknown operator"),
    pytest.param(added_affinity(required=[{"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]}]),
                 ADDED + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]."
                 "values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
                 id="addedAffinity with a Gt value that is no integer"),
    pytest.param(added_affinity(preferred=[{"weight": 5, "preference": {"matchExpressions": [
        {"key": "a", "operator": "In"}]}}]),
                 ADDED + "preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values: Invalid value: "
                 "[]string(nil): for 'in', 'notin' operators, values set can't be empty",
                 id="addedAffinity preferred terms are checked too"),
    pytest.param(added_affinity(required=[{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                            "values": ["a", "b"]}]}]),
                 ADDED + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values: "
                 'Invalid value: []string{"a", "b"}: must have one element', id="addedAffinity matchFields need one value"),
    pytest.param(cfg(parallelism=0, podInitialBackoffSeconds=0),
                 "[parallelism: Invalid value: 0: should be an integer value greater than zero, "
                 "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0]",
                 id="several validation errors are reported together in brackets"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}}}]}]),
                 STEP4 + 'initializing plugin "NodeResourcesFit": scoringStrategy.resources[0].weight: Invalid value: '
                 "101: resource weight of cpu not in valid range (0, 100]",
                 id="invalid NodeResourcesFit args are reported when the plugin is built"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "resources": [{"name": "cpu", "weight": 1}]}}}]}]),
                 STEP4 + 'initializing plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: "": '
                 'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
                 id="a scoring strategy without type is not defaulted"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "RequestedToCapacityRatio"}}}]}]),
                 STEP4 + 'initializing plugin "NodeResourcesFit": scoringStrategy.requestedToCapacityRatio: Required '
                 "value: must be specified when type is RequestedToCapacityRatio",
                 id="RequestedToCapacityRatio without its block is an error instead of a crash"),
    pytest.param(cfg(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [
            {"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]}}}}]}]),
                 STEP4 + 'initializing plugin "NodeResourcesFit": scoringStrategy.shape[1].utilization: Invalid value: '
                 "50: values must be sorted in increasing order", id="shape utilizations must increase"),
    pytest.param(plugins(score={"enabled": on("Foo")}), STEP4 + 'ScorePlugin "Foo" does not exist',
                 id="an unknown plugin at a specific point"),
    pytest.param(plugins(multiPoint={"enabled": on("Foo")}), STEP4 + 'PreFilterPlugin "Foo" does not exist',
                 id="an unknown plugin in multiPoint is reported for PreFilter"),
    pytest.param(plugins(filter={"enabled": on("ImageLocality")}),
                 STEP4 + 'plugin "ImageLocality" does not extend FilterPlugin plugin',
                 id="a plugin enabled at a point it does not implement"),
    pytest.param(plugins(score={"enabled": on("ImageLocality", "ImageLocality")}),
                 STEP4 + 'plugin "ImageLocality" already registered as "ScorePlugin"',
                 id="the same plugin twice at one point"),
    pytest.param(plugins(multiPoint={"enabled": on("ImageLocality", "ImageLocality")}),
                 STEP4 + 'plugin "ImageLocality" already registered as "ScorePlugin"',
                 id="the same plugin twice in multiPoint"),
    pytest.param(plugins(multiPoint={"disabled": on("*")}),
                 STEP4 + 'only one queue sort plugin required for profile with scheduler name "default-scheduler", '
                 "but got 0", id="no queue sort plugin"),
    pytest.param(plugins(bind={"disabled": on("*")}),
                 STEP4 + 'at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
                 id="no bind plugin"),
    pytest.param(plugins(multiPoint={"enabled": on(("TaintToleration", -1))}),
                 STEP4 + "total score of Score plugins could overflow",
                 id="a negative weight followed by other score plugins overflows"),
])
def test_config_errors(doc: dict[str, Any], message: str) -> None:
    got = error_of(doc)
    if message.endswith(": "):
        assert got.startswith(message) and got.endswith(": must be the same for all profiles")
    else:
        # kplan may add where it looked, in parentheses, after kube-scheduler's own words
        assert got == message or got.startswith(message + " (")
