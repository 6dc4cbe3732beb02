"""The four stages of load_config, each on its own: decode → defaults → validate → build profiles.

test_config.py checks the whole path against kube-scheduler's answers; these rows pin what each
stage does and leaves to the next one.
"""

from __future__ import annotations

from typing import Any

import pytest

from kplan.errors import ConfigError
from kplan.framework.config import (
    POINTS_ORDER,
    DecodedConfig,
    DecodedProfile,
    PluginRef,
    PluginSet,
    build_profile,
    check_point_lists,
    decode,
    expand_multipoint,
    score_weights,
    set_defaults,
    validate,
)
from kplan.framework.release import default_release
from kplan.plugins import in_tree_registry
from kplan.plugins.noderesources.fit import FitArgs

REGISTRY = in_tree_registry()


def cfg(**top: Any) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **top}


def profile(**fields: Any) -> dict[str, Any]:
    return cfg(profiles=[fields])


# ------------------------------------------------------------------------------ decode

def test_decode_keeps_what_is_absent_as_absent() -> None:
    d = decode(cfg(), REGISTRY)
    assert d == DecodedConfig()


@pytest.mark.parametrize(("doc", "field", "value"), [
    (cfg(parallelism=4), "parallelism", 4),
    (cfg(percentageOfNodesToScore=30.0), "percentage_of_nodes_to_score", 30),
    (cfg(podInitialBackoffSeconds=2**40), "pod_initial_backoff_seconds", 2**40),
    (cfg(extenders=[{}, {}]), "extenders", 2),
], ids=["an integer field", "a whole float is an integer", "backoffs are int64", "extenders are counted"])
def test_decode_reads_the_top_level_fields(doc: dict[str, Any], field: str, value: int) -> None:
    assert getattr(decode(doc, REGISTRY), field) == value


def test_decode_reads_a_profile_as_written() -> None:
    d = decode(profile(schedulerName="s", percentageOfNodesToScore=50,
                       plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 4}],
                                          "disabled": [{"name": "*"}]}},
                       pluginConfig=[{"name": "Foo", "args": {"x": 1}}]), REGISTRY)
    (p,) = d.profiles
    assert (p.path, p.scheduler_name, p.percentage_of_nodes_to_score) == ("profiles[0]", "s", 50)
    assert p.plugins["score"] == PluginSet([PluginRef("ImageLocality", 4)], ["*"])
    assert p.plugins["filter"] == PluginSet()
    assert p.queue_sort_raw is None
    (entry,) = p.plugin_config
    assert (entry.name, entry.raw, entry.decoded) == ("Foo", {"x": 1}, False)


def test_decode_types_the_args_of_a_plugin_with_an_args_kind() -> None:
    d = decode(profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {"ignoredResources": ["x"]}}]), REGISTRY)
    (entry,) = d.profiles[0].plugin_config
    assert entry.decoded and isinstance(entry.args, FitArgs) and entry.args.ignored_resources == ("x",)


@pytest.mark.parametrize(("doc", "message"), [
    (cfg(kind=None), "Object 'Kind' is missing"),
    (cfg(apiVersion="kubescheduler.config.k8s.io/v1beta3"), 'no kind "KubeSchedulerConfiguration" is registered'),
    (cfg(foo=1), 'unknown field "foo"'),
    (cfg(parallelism="8"), "parallelism: expected an integer"),
    (cfg(parallelism=2**31), "cannot unmarshal number 2147483648 into an int32"),
    (profile(bar=1), 'unknown field "profiles[0].bar"'),
    (profile(plugins={"score": {"enabled": [{"name": "X", "wait": 1}]}}),
     'unknown field "profiles[0].plugins.score.enabled[0].wait"'),
    (profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {"kind": "VolumeBindingArgs"}}]),
     "args for plugin NodeResourcesFit were not of type NodeResourcesFitArgs"),
    (profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {"foo": 1}}]),
     'decoding args for plugin NodeResourcesFit: strict decoding error: unknown field "foo"'),
], ids=["no kind", "another version", "an unknown top-level field", "a string for an integer",
        "an int32 overflow", "an unknown profile field", "an unknown field in a plugin set",
        "args of another kind", "an unknown args field"])
def test_decode_raises_at_the_first_problem(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        decode(doc, REGISTRY)


def test_decode_does_not_decode_the_args_of_a_removed_plugin() -> None:
    (entry,) = decode(profile(pluginConfig=[{"name": "EBSLimits", "args": {"foo": 1}}]), REGISTRY).profiles[0].plugin_config
    assert not entry.decoded


# ------------------------------------------------------------------------------ defaults

def test_defaults_fill_the_top_level_fields() -> None:
    c = set_defaults(DecodedConfig(), REGISTRY)
    assert (c.parallelism, c.percentage_of_nodes_to_score, c.pod_initial_backoff_seconds,
            c.pod_max_backoff_seconds) == (16, 0, 1, 10)


@pytest.mark.parametrize(("profiles", "names"), [
    ((), ["default-scheduler"]),
    ((DecodedProfile("profiles[0]"),), ["default-scheduler"]),
    ((DecodedProfile("profiles[0]", "mine"),), ["mine"]),
    ((DecodedProfile("profiles[0]"), DecodedProfile("profiles[1]", "b")), ["", "b"]),
], ids=["no profile gives the default one", "one unnamed profile is the default scheduler",
        "a named profile keeps its name", "of two profiles, an unnamed one stays unnamed"])
def test_defaults_name_the_profiles(profiles: tuple[DecodedProfile, ...], names: list[str]) -> None:
    assert [p.scheduler_name for p in set_defaults(DecodedConfig(profiles=profiles), REGISTRY).profiles] == names


def test_defaults_merge_the_plugin_sets_with_the_release_s_default_profile() -> None:
    p = DecodedProfile("profiles[0]", plugins={"multiPoint": PluginSet([PluginRef("ImageLocality", 7)],
                                                                       ["TaintToleration"])})
    c = set_defaults(DecodedConfig(profiles=(p,)), REGISTRY, default_release())
    (d,) = c.profiles
    expected = [PluginRef(n, 7 if n == "ImageLocality" else w) for n, w in default_release().default_profile
                if n != "TaintToleration"]
    assert d.sets["multiPoint"].enabled == expected
    assert d.sets["score"] == PluginSet()
    assert c.release == default_release()


def test_defaults_add_the_release_s_default_args_of_enabled_plugins_only() -> None:
    p = DecodedProfile("profiles[0]", plugins={"multiPoint": PluginSet([PluginRef("NodeResourcesFit")], ["*"])})
    (d,) = set_defaults(DecodedConfig(profiles=(p,)), REGISTRY).profiles
    assert d.args == {"NodeResourcesFit": FitArgs()}


def test_defaults_keep_configured_args_and_raw_args_apart() -> None:
    doc = profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {"ignoredResources": ["x"]}},
                                {"name": "Custom", "args": {"y": 2}}, {"name": "EBSLimits", "args": {}}])
    (d,) = set_defaults(decode(doc, REGISTRY), REGISTRY).profiles
    assert d.args["NodeResourcesFit"].ignored_resources == ("x",)
    assert d.raw_args == {"Custom": {"y": 2}}


# ------------------------------------------------------------------------------ validate

def problems(doc: dict[str, Any]) -> list[str]:
    return validate(set_defaults(decode(doc, REGISTRY), REGISTRY), REGISTRY)


@pytest.mark.parametrize(("doc", "expected"), [
    (cfg(), []),
    (cfg(parallelism=0), ["parallelism: Invalid value: 0: should be an integer value greater than zero"]),
    (cfg(percentageOfNodesToScore=101, parallelism=-1),
     ["parallelism: Invalid value: -1: should be an integer value greater than zero",
      "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]),
    (cfg(podInitialBackoffSeconds=5, podMaxBackoffSeconds=4),
     ["podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds"]),
    (cfg(profiles=[{}, {"schedulerName": "a"}]), ["profiles[0].schedulerName: Required value"]),
    (cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
     ["profiles[1].schedulerName: Duplicate value: {}"]),
    (profile(plugins={"filter": {"enabled": [{"name": "EBSLimits"}]}}),
     ['profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version "v1" '
      '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")']),
    (profile(pluginConfig=[{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}},
                           {"name": "InterPodAffinity"}]),
     ["profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
      'profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity"']),
    (profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Nope"}}}]), []),
    (cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}]),
     ["profiles[1].plugins.queueSort: Invalid value: {'disabled': [{'name': '*'}]}: must be the same for all profiles"]),
    (cfg(extenders=[{}]), ["extenders[0]: Unsupported value: kplan does not call scheduler extenders"]),
], ids=["the defaults are valid", "parallelism", "the global percentage comes after the profiles' problems",
        "backoffs", "an unnamed profile among several", "two profiles of one name", "a removed plugin",
        "args problems and duplicates in entry order", "NodeResourcesFit's args wait until it is built",
        "queue sorts that differ", "extenders"])
def test_validate_lists_every_problem_in_upstream_order(doc: dict[str, Any], expected: list[str]) -> None:
    assert problems(doc) == expected


# ------------------------------------------------------------------------------ build profiles

def defaulted(doc: dict[str, Any]) -> Any:
    (p,) = set_defaults(decode(doc, REGISTRY), REGISTRY).profiles
    return p


def test_build_expands_multipoint_into_the_points_each_plugin_implements() -> None:
    spec = build_profile(defaulted(profile(plugins={"multiPoint": {"disabled": [{"name": "*"}],
                                                    "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                                                                {"name": "TaintToleration", "weight": 5}]}})),
                         REGISTRY)
    assert {k: v for k, v in spec.points.items() if v} == {
        "queueSort": ["PrioritySort"], "bind": ["DefaultBinder"], "filter": ["TaintToleration"],
        "preScore": ["TaintToleration"], "score": ["TaintToleration"]}
    assert spec.weights == {"TaintToleration": 5}


@pytest.mark.parametrize(("doc", "message"), [
    (profile(plugins={"filter": {"enabled": [{"name": "ImageLocality"}]}}),
     'plugin "ImageLocality" does not extend FilterPlugin plugin'),
    (profile(plugins={"bind": {"disabled": [{"name": "*"}]}}),
     'at least one bind plugin is needed for profile with scheduler name "default-scheduler"'),
    (profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Nope"}}}]),
     'initializing plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: "Nope"'),
], ids=["a plugin at a point its type does not implement", "no bind plugin", "args validated when built"])
def test_build_raises_for_the_profile_it_cannot_create(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        build_profile(defaulted(doc), REGISTRY)
    assert str(e.value).startswith("initializing profiles: creating profile for scheduler name default-scheduler: ")
    assert message in str(e.value)


def sets_of(**points: PluginSet) -> dict[str, PluginSet]:
    return {p: points.get(p, PluginSet()) for p in ("multiPoint",) + POINTS_ORDER}


def refs(*names: str | tuple[str, int]) -> list[PluginRef]:
    return [PluginRef(n) if isinstance(n, str) else PluginRef(*n) for n in names]


@pytest.mark.parametrize(("sets", "message"), [
    (sets_of(filter=PluginSet(refs("Nope"))), 'FilterPlugin "Nope" does not exist'),
    (sets_of(bind=PluginSet(refs("PrioritySort"))), 'plugin "PrioritySort" does not extend BindPlugin plugin'),
    (sets_of(score=PluginSet(refs("ImageLocality", "ImageLocality"))),
     'plugin "ImageLocality" already registered as "ScorePlugin"'),
], ids=["an unknown plugin", "a plugin at a point its type lacks", "a plugin twice at one point"])
def test_check_point_lists_refuses_what_updatePluginList_refuses(sets: dict[str, PluginSet], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_point_lists(sets, REGISTRY)


@pytest.mark.parametrize(("sets", "point", "expected"), [
    (sets_of(multiPoint=PluginSet(refs("NodeName", "TaintToleration"))), "filter", ["NodeName", "TaintToleration"]),
    (sets_of(multiPoint=PluginSet(refs("NodeName", "TaintToleration"))), "score", ["TaintToleration"]),
    (sets_of(multiPoint=PluginSet(refs("NodeName", "TaintToleration")),
             filter=PluginSet(refs("NodePorts", "TaintToleration"))),
     "filter", ["TaintToleration", "NodeName", "NodePorts"]),
    (sets_of(multiPoint=PluginSet(refs("NodeName", "TaintToleration")), filter=PluginSet([], ["NodeName"])),
     "filter", ["TaintToleration"]),
    (sets_of(multiPoint=PluginSet(refs("NodeName")), filter=PluginSet(refs("NodePorts"), ["*"])),
     "filter", ["NodePorts"]),
], ids=["MultiPoint plugins at the points they implement", "only plugins that implement the point",
        "an explicit plugin that overrides MultiPoint comes first, others after MultiPoint's",
        "a plugin disabled at one point", "'*' keeps only the point's own plugins"])
def test_expand_multipoint_orders_each_point_as_upstream(sets: dict[str, PluginSet], point: str,
                                                         expected: list[str]) -> None:
    assert expand_multipoint(sets, REGISTRY)[point] == expected


@pytest.mark.parametrize(("sets", "expected"), [
    (sets_of(multiPoint=PluginSet(refs(("ImageLocality", 4), "TaintToleration"))),
     {"ImageLocality": 4, "TaintToleration": 1}),
    (sets_of(multiPoint=PluginSet(refs(("ImageLocality", 4))), score=PluginSet(refs(("ImageLocality", 9)))),
     {"ImageLocality": 9}),
    (sets_of(multiPoint=PluginSet(refs(("NodeName", 5), ("ImageLocality", 2)))), {"ImageLocality": 2}),
], ids=["MultiPoint's weights, 0 counting as 1", "the Score set's weight wins", "plugins that do not score get none"])
def test_score_weights_follow_getScoreWeights(sets: dict[str, PluginSet], expected: dict[str, int]) -> None:
    assert score_weights(sets, expand_multipoint(sets, REGISTRY), REGISTRY) == expected


def test_score_weights_refuse_a_total_that_could_overflow_int64() -> None:
    sets = sets_of(multiPoint=PluginSet(refs(("ImageLocality", 2**62), ("TaintToleration", 2**62))))
    with pytest.raises(ConfigError, match="total score of Score plugins could overflow"):
        score_weights(sets, expand_multipoint(sets, REGISTRY), REGISTRY)
