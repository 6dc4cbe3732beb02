"""The release value: its version, its feature gates (``--feature-gates`` syntax), its tables."""

from __future__ import annotations

import pytest

from kplan.errors import ConfigError
from kplan.framework import release_tables
from kplan.framework.config import load_config
from kplan.framework.features import Features, Gate, GateSpec, Stage, parse_feature_gates
from kplan.framework.release import KubeVersion, Release, default_release
from kplan.plugins import FACTORIES, in_tree_registry
from kplan.plugins.helper import ShapePoint
from kplan.scheduler.simulate import SchedulerHandle
from tests.builders import make_snapshot

# ------------------------------------------------------------------------------ --feature-gates syntax


@pytest.mark.parametrize(("text", "parsed"), [
    ("", {}),
    ("A=true", {"A": True}),
    (" A = false , B=1,,C=T", {"A": False, "B": True, "C": True}),
    ("A=true,A=false", {"A": False}),
    ("A=FALSE,B=0,C=f,D=True", {"A": False, "B": False, "C": False, "D": True}),
], ids=["nothing", "one gate", "spaces trimmed and empty items skipped", "the last of a repeated name wins",
        "strconv.ParseBool's spellings"])
def test_feature_gates_parse_as_kube_scheduler_reads_them(text: str, parsed: dict[str, bool]) -> None:
    assert parse_feature_gates(text) == parsed


@pytest.mark.parametrize(("text", "message"), [
    ("A", "missing bool value for A"),
    ("A=yes", 'invalid value of A=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'),
    ("A=", 'invalid value of A=, err: strconv.ParseBool: parsing "": invalid syntax'),
], ids=["no value", "a word that is not a bool", "an empty value"])
def test_malformed_feature_gates_are_refused_in_kube_scheduler_s_words(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_feature_gates(text)
    assert str(e.value) == message


# ------------------------------------------------------------------------------ gates against a release

SPECS = {Gate.STORAGE_CAPACITY_SCORING: GateSpec(False, Stage.ALPHA),
         Gate.DRA_ADMIN_ACCESS: GateSpec(True, Stage.BETA),
         Gate.SCHEDULER_QUEUEING_HINTS: GateSpec(True, Stage.GA, locked=True)}


@pytest.mark.parametrize(("overrides", "on"), [
    ({}, {Gate.DRA_ADMIN_ACCESS, Gate.SCHEDULER_QUEUEING_HINTS}),
    ({"StorageCapacityScoring": True, "DRAAdminAccess": False}, {Gate.STORAGE_CAPACITY_SCORING,
                                                                 Gate.SCHEDULER_QUEUEING_HINTS}),
    ({"SchedulerQueueingHints": True}, {Gate.DRA_ADMIN_ACCESS, Gate.SCHEDULER_QUEUEING_HINTS}),
    ({"AllAlpha": True}, {Gate.STORAGE_CAPACITY_SCORING, Gate.DRA_ADMIN_ACCESS, Gate.SCHEDULER_QUEUEING_HINTS}),
    ({"AllBeta": False}, {Gate.SCHEDULER_QUEUEING_HINTS}),
    ({"AllBeta": False, "DRAAdminAccess": True}, {Gate.DRA_ADMIN_ACCESS, Gate.SCHEDULER_QUEUEING_HINTS}),
], ids=["the defaults", "gates set both ways", "a locked gate set to its default", "AllAlpha",
        "AllBeta leaves GA gates alone", "a named gate wins over AllBeta"])
def test_features_are_the_release_s_defaults_with_the_overrides(overrides: dict[str, bool], on: set[Gate]) -> None:
    f = Features.of(SPECS, overrides)
    assert {g for g in SPECS if f.enabled(g)} == on


@pytest.mark.parametrize(("overrides", "message"), [
    ({"NoSuchGate": True}, "unrecognized feature gate: NoSuchGate"),
    ({"SchedulerQueueingHints": False}, "cannot set feature gate SchedulerQueueingHints to false, "
                                        "feature is locked to true"),
], ids=["an unknown gate", "a locked gate"])
def test_gates_the_release_does_not_allow_are_refused(overrides: dict[str, bool], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        Features.of(SPECS, overrides)
    assert str(e.value) == message


def test_a_gate_the_release_does_not_have_cannot_be_read() -> None:
    with pytest.raises(KeyError):
        Features.of({}).enabled(Gate.STORAGE_CAPACITY_SCORING)


# ------------------------------------------------------------------------------ Release.of

def test_the_default_release_is_the_newest_ga_one_modelled_with_its_default_gates() -> None:
    r = default_release()
    assert r.version == KubeVersion(1, 37) and str(r) == "1.37" and r.scheduler_version == "v1.37.2"
    assert Release.of() == r
    # 1.38 is modelled from its beta and is not the default until its GA is
    assert max(release_tables.RELEASES) == KubeVersion(1, 38)
    assert Release.of("1.38").scheduler_version == "v1.38.0-beta.0"
    assert r.enabled(Gate.DYNAMIC_RESOURCE_ALLOCATION) and r.enabled(Gate.STORAGE_CAPACITY_SCORING)
    assert r.enabled(Gate.OPPORTUNISTIC_BATCHING) and not r.enabled(Gate.SCHEDULER_ASYNC_API_CALLS)
    assert Release.of("v1.37.2") == Release.of("1.37", "DRAAdminAccess=true") == r
    assert Release.of("v1.35.4").scheduler_version == "v1.35.4"
    assert Release.of("v1.34.1").scheduler_version == "v1.34.1"


@pytest.mark.parametrize(("version", "gates", "message"), [
    ("1.35", "DynamicResourceAllocation=false",
     "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
    ("1.35", "InPlacePodVerticalScaling=false",
     "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"),
    ("1.34", "SidecarContainers=false", "cannot set feature gate SidecarContainers to false, feature is locked to true"),
    ("1.34", "OpportunisticBatching=true", "unrecognized feature gate: OpportunisticBatching"),
    ("1.35", "GangScheduling=true", "feature gate GangScheduling=true: kplan models kube-scheduler 1.35 with this "
                                    "gate at its default (false) only"),
], ids=["DRA is locked on in 1.35", "in-place resize is GA and locked in 1.35", "sidecars are locked since 1.33",
        "1.34 has no batching gate", "gang scheduling is refused, naming the gate"])
def test_each_release_has_its_own_gates(version: str, gates: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        Release.of(version, gates)
    assert str(e.value) == message


def test_batching_can_be_turned_off_in_1_35() -> None:
    assert not Release.of("1.35", "OpportunisticBatching=false").enabled(Gate.OPPORTUNISTIC_BATCHING)


@pytest.mark.parametrize(("version", "gates", "message"), [
    ("1.29", "", "kplan does not model Kubernetes 1.29 (it models 1.34, 1.35, 1.36, 1.37, 1.38)"),
    ("one.two", "", '"one.two" is not a Kubernetes version'),
    ("1.34", "Foo=true", "unrecognized feature gate: Foo"),
    ("1.34", "StorageCapacityScoring=true", "feature gate StorageCapacityScoring=true: kplan models "
                                            "kube-scheduler 1.34 with this gate at its default (false) only"),
], ids=["a release not modelled", "not a version", "a gate 1.34 does not know", "a gate change not modelled"])
def test_a_release_kplan_cannot_model_is_refused(version: str, gates: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        Release.of(version, gates)
    assert message in str(e.value)


def test_the_release_reaches_plugins_through_the_handle() -> None:
    cfg = load_config(None, in_tree_registry(), Release.of("1.34"))
    handle = SchedulerHandle(make_snapshot([]), cfg, 0, False, {})
    assert handle.release is cfg.release == Release.of("1.34")


# ------------------------------------------------------------------------------ the tables

def test_every_release_states_which_gate_changes_it_models() -> None:
    assert set(release_tables.MODELLED_GATE_CHANGES) == set(release_tables.RELEASES)


@pytest.mark.parametrize("version", sorted(release_tables.RELEASES), ids=str)
def test_a_release_s_plugin_rules_name_only_plugins_it_has_and_every_plugin_builds_with_them(
        version: KubeVersion) -> None:
    release = Release.of(version)
    assert set(release.plugin_rules) <= release.plugins
    cfg = load_config(None, in_tree_registry(release), release)
    handle = SchedulerHandle(make_snapshot([]), cfg, 0, False, {})
    for name in sorted(release.plugins):
        FACTORIES[name](cfg.profiles[0].args.get(name), handle)  # decodes its rules, if it has any


@pytest.mark.parametrize(("version", "plugin", "point", "implemented"), [
    ("1.34", "DynamicResources", "score", False), ("1.35", "DynamicResources", "score", True),
    ("1.36", "NodeName", "preFilter", False), ("1.37", "NodeName", "preFilter", True),
], ids=["DynamicResources has no Score in 1.34", "DynamicResources scores from 1.35",
        "NodeName has no PreFilter in 1.36", "NodeName has a PreFilter from 1.37"])
def test_a_plugin_s_release_rules_decide_the_points_it_implements(version: str, plugin: str, point: str,
                                                                   implemented: bool) -> None:
    assert in_tree_registry(Release.of(version)).implements(plugin, point) is implemented


@pytest.mark.parametrize("version", sorted(release_tables.RELEASES), ids=str)
def test_a_release_s_default_profile_and_args_name_only_plugins_it_has(version: KubeVersion) -> None:
    release = Release.of(version)
    registry = in_tree_registry(release)
    assert {n for n, _ in release.default_profile} <= release.plugins
    for name in release.default_args:
        spec = registry.get(name)
        assert spec is not None and spec.args is not None, name
        assert spec.args.validate is None or not spec.args.validate(spec.args.decode(release.default_args[name]))


def test_1_34_default_args_are_what_each_decoder_gives_for_no_args() -> None:
    release = Release.of("1.34")
    registry = in_tree_registry(release)
    for name in release.default_args:
        spec = registry.get(name)
        assert spec is not None and spec.args is not None
        assert spec.args.decode(release.default_args[name]) == spec.args.decode(None), name


# ------------------------------------------------------------------------------ args by the release's gates

def _with(**gates: bool) -> Release:
    """1.35 (StorageCapacityScoring and the binding-condition gates off by default) with these gates
    set, built directly: kplan refuses to run such a release while it models no variant for the
    change, but decoding and validation read the gates."""
    release = Release.of("1.35")
    return Release.with_features(release.version, Features.of(release.gates, dict(gates)))


def _args_problems(release: Release, name: str, args: dict[str, object]) -> tuple[object, list[str]]:
    spec = in_tree_registry(release).get(name)
    assert spec is not None and spec.args is not None and spec.args.validate is not None
    decoded = spec.args.decode(args)
    return decoded, spec.args.validate(decoded)


SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
#: the gates that give DynamicResourcesArgs its bindingTimeout (both on by default from 1.36)
BINDING_CONDITIONS = {"DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": True}


@pytest.mark.parametrize(("gates", "name", "args", "problems"), [
    ({}, "VolumeBinding", {"shape": SHAPE},
     ['shape: Invalid value: [{"Utilization":0,"Score":10},{"Utilization":100,"Score":0}]: unexpected field '
      "`shape`, remove it or turn on the feature gate StorageCapacityScoring"]),
    ({"StorageCapacityScoring": True}, "VolumeBinding", {"shape": SHAPE}, []),
    ({"StorageCapacityScoring": True}, "VolumeBinding", {"shape": [{"utilization": 50, "score": 11},
                                                                   {"utilization": 40, "score": 0}]},
     ["shape[1].utilization: Invalid value: 40: values must be sorted in increasing order",
      "shape[0].score: Invalid value: 11: not in valid range [0, 10]"]),
    ({}, "VolumeBinding", {"bindTimeoutSeconds": -1},
     ["bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"]),
    ({}, "DynamicResources", {"filterTimeout": "-1s"}, ['filterTimeout: Invalid value: "-1s": must be zero or positive']),
    ({}, "DynamicResources", {"filterTimeout": "0s"}, []),
    ({"DRASchedulerFilterTimeout": False}, "DynamicResources", {"filterTimeout": "0s"},
     ["filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled"]),
    ({"DRASchedulerFilterTimeout": False}, "DynamicResources", {}, []),
    (BINDING_CONDITIONS, "DynamicResources", {"bindingTimeout": "500ms"},
     ['bindingTimeout: Invalid value: "500ms": must be at least 1 second']),
    (BINDING_CONDITIONS, "DynamicResources", {"bindingTimeout": "1m30s"}, []),
], ids=["a shape with StorageCapacityScoring off", "a shape with it on", "a bad shape with it on",
        "a negative bind timeout either way", "a negative filter timeout", "a zero filter timeout",
        "a filter timeout with DRASchedulerFilterTimeout off (upstream's gate name misspelt in its message)",
        "no filter timeout with it off", "a binding timeout under a second", "a binding timeout of 90 s"])
def test_args_are_validated_by_the_release_s_gates(gates: dict[str, bool], name: str, args: dict[str, object],
                                                  problems: list[str]) -> None:
    assert _args_problems(_with(**gates), name, args)[1] == problems


@pytest.mark.parametrize(("gates", "name", "field", "value"), [
    ({}, "VolumeBinding", "shape", None),
    ({"StorageCapacityScoring": True}, "VolumeBinding", "shape", (ShapePoint(0, 10), ShapePoint(100, 0))),
    ({}, "DynamicResources", "filter_timeout", "10s"),
    ({"DRASchedulerFilterTimeout": False}, "DynamicResources", "filter_timeout", None),
    ({}, "DynamicResources", "binding_timeout", None),
    (BINDING_CONDITIONS, "DynamicResources", "binding_timeout", "10m0s"),
], ids=["no shape with StorageCapacityScoring off", "the default shape with it on",
        "the default filter timeout", "none with DRASchedulerFilterTimeout off",
        "no binding timeout without binding conditions", "ten minutes with them"])
def test_args_are_defaulted_by_the_release_s_gates(gates: dict[str, bool], name: str, field: str,
                                                  value: object) -> None:
    decoded, problems = _args_problems(_with(**gates), name, {})
    assert getattr(decoded, field) == value and problems == []


def test_a_shape_in_the_configuration_file_is_refused_at_validation_with_the_gate_off() -> None:
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [{"name": "VolumeBinding", "args": {"shape": SHAPE[:1]}}]}]}
    release = Release.of("1.35")  # StorageCapacityScoring alpha, off
    with pytest.raises(ConfigError) as e:
        load_config(doc, in_tree_registry(release), release)
    assert str(e.value) == ('profiles[0].pluginConfig[0].args.shape: Invalid value: [{"Utilization":0,"Score":10}]: '
                            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring")
