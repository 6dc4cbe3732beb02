"""The scheduler set-up: the release, the registry and the configuration of a run, built once."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from kplan.errors import ConfigError
from kplan.framework.registry import PluginSpec
from kplan.framework.release import Release
from kplan.plugins import in_tree_registry
from kplan.plugins.nodename import NodeName
from kplan.scheduler.setup import SchedulerSetup


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_the_setup_of_a_release_has_its_registry_and_its_configuration_at_that_release(version: str) -> None:
    release = Release.of(version)
    setup = SchedulerSetup.of(release)
    assert setup.release == setup.config.release == release
    assert set(setup.registry.names()) == set(in_tree_registry(release).names())


def test_a_third_party_plugin_joins_a_new_registry_and_the_release_s_is_left_as_it_was() -> None:
    extra = PluginSpec("Elsewhere", NodeName, origin="a test")
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [
               {"name": "Elsewhere"}]}}}]}
    setup = SchedulerSetup.of(None, doc, [extra])
    assert setup.registry.get("Elsewhere") is extra
    assert in_tree_registry().get("Elsewhere") is None
    with pytest.raises(ConfigError):  # without it, the configuration names a plugin kplan does not have
        SchedulerSetup.of(None, doc)


def test_a_setup_is_frozen_and_a_forked_run_shares_it() -> None:
    setup = SchedulerSetup.of()
    with pytest.raises(dataclasses.FrozenInstanceError):
        setup.config = setup.config  # type: ignore[misc]
    assert copy.deepcopy(setup) is setup
