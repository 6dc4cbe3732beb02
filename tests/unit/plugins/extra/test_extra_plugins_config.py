"""kplan's own plugins through a KubeSchedulerConfiguration: registered, opt-in, strict args."""

from __future__ import annotations

from typing import Any

import pytest
from extra_builders import Gi, cluster, node, pod

from kplan.errors import ConfigError
from kplan.framework.config import load_config
from kplan.framework.release import default_release
from kplan.plugins import in_tree_registry
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import run_simulation

EXTRA = ("PodCount", "ResourceLimits", "NetworkLatency", "PriorityBoost")


def config(plugins: dict[str, Any] | None = None, plugin_config: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if plugins is not None:
        profile["plugins"] = plugins
    if plugin_config is not None:
        profile["pluginConfig"] = plugin_config
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile]}


def test_registered_but_not_in_the_default_profile() -> None:
    registry = in_tree_registry()
    assert all(name in registry for name in EXTRA)
    assert all(registry.get(name).upstream is False for name in EXTRA)  # type: ignore[union-attr]
    assert not set(EXTRA) & {n for n, _ in default_release().default_profile}
    profile = load_config(None, registry).profiles[0]
    assert not set(EXTRA) & {n for names in profile.points.values() for n in names}


@pytest.mark.parametrize("name", EXTRA)
def test_enabled_at_score_with_a_weight(name: str) -> None:
    cfg = load_config(config({"score": {"enabled": [{"name": name, "weight": 5}]}}), in_tree_registry())
    profile = cfg.profiles[0]
    assert profile.points["score"][-1] == name
    assert profile.weights[name] == 5
    assert name not in profile.points["preScore"]  # the score point only, as kube-scheduler would


@pytest.mark.parametrize("name", ["ResourceLimits", "NetworkLatency", "PriorityBoost"])
def test_multipoint_also_enables_their_pre_score(name: str) -> None:
    cfg = load_config(config({"multiPoint": {"enabled": [{"name": name, "weight": 2}]}}), in_tree_registry())
    assert name in cfg.profiles[0].points["preScore"] and cfg.profiles[0].weights[name] == 2


def test_pod_count_is_no_filter() -> None:
    with pytest.raises(ConfigError, match='plugin "PodCount" does not extend FilterPlugin plugin'):
        load_config(config({"filter": {"enabled": [{"name": "PodCount"}]}}), in_tree_registry())


def test_args_are_decoded_and_defaulted() -> None:
    cfg = load_config(config({"score": {"enabled": [{"name": "NetworkLatency"}, {"name": "PriorityBoost"}]}},
                             [{"name": "NetworkLatency", "args": {"latencyMs": {"zone-a": {"zone-b": 2}}}}]),
                      in_tree_registry())
    args = cfg.profiles[0].args
    assert args["NetworkLatency"].latency == {("zone-a", "zone-b"): 2, ("zone-b", "zone-a"): 2}
    assert args["PriorityBoost"].min_priority == 1_000_000_000


def test_unknown_args_field_fails_like_upstream_strict_decoding() -> None:
    with pytest.raises(ConfigError) as e:
        load_config(config(None, [{"name": "NetworkLatency", "args": {"latencyMS": {}}}]), in_tree_registry())
    assert str(e.value) == ('strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: '
                            'decoding args for plugin NetworkLatency: strict decoding error: unknown field "latencyMS"')


def test_invalid_args_are_reported_with_the_field_path_all_together() -> None:
    with pytest.raises(ConfigError) as e:
        load_config(config(None, [{"name": "NetworkLatency", "args": {"latencyMs": {"zone-a": {"zone-b": -3}}}},
                                  {"name": "PriorityBoost", "args": {"minPriority": 2**31}}]), in_tree_registry())
    assert str(e.value) == (
        "[profiles[0].pluginConfig[0].args.latencyMs.zone-a.zone-b: Invalid value: -3: must be zero or positive, "
        "profiles[0].pluginConfig[1].args.minPriority: Invalid value: 2147483648: must be a 32-bit integer]")


def test_wrong_args_kind() -> None:
    with pytest.raises(ConfigError, match="args for plugin PodCount were not of type PodCountArgs"):
        load_config(config(None, [{"name": "PodCount", "args": {"kind": "NetworkLatencyArgs"}}]), in_tree_registry())


def test_network_latency_changes_where_a_pod_lands() -> None:
    """Two equal empty nodes in different zones: by default the tie goes to the smaller name;
    with NetworkLatency the pod goes to the zone nearest its database."""
    def run(cfg: dict[str, Any] | None) -> str | None:
        snap = cluster([node("node-a", zone="zone-a", cpu=8000, memory=32 * Gi),
                        node("node-b", zone="zone-b", cpu=8000, memory=32 * Gi),
                        node("node-z", zone="zone-z", cpu=1000, memory=32 * Gi)],
                       [(pod("db", "shop", labels={"app": "db"}, cpu=1000, memory=Gi), "node-z")])
        client = pod("api", "shop", cpu=1000, memory=Gi, annotations={"kplan.dev/talks-to": "app=db"})
        result = run_simulation(snap, SchedulerSetup.of(None, cfg), [client],
                                lowest_name=True)
        return result.pods[0].node

    assert run(None) == "node-a"
    weighted = config({"score": {"enabled": [{"name": "NetworkLatency", "weight": 5}]}},
                      [{"name": "NetworkLatency", "args": {"latencyMs": {"zone-z": {"zone-a": 40, "zone-b": 1}}}}])
    assert run(weighted) == "node-b"  # the database's node is full; zone-b is 1 ms away, zone-a 40
