"""Feature gates (k8s.io/component-base/featuregate) as kube-scheduler reads them.

``Gate`` names every gate that changes scheduling in a release kplan models; a release's table
(framework/release_tables.py) gives each one's default, stage and lock. ``Features`` is the
frozen value of all of them for one run, the counterpart of upstream's ``feature.Features``
that plugin factories receive. ``parse_feature_gates`` reads ``--feature-gates`` syntax
(``Gate=true,Other=false``) as featureGate.Set does; ``Features.of`` checks the result against
the release's gates as SetFromMap does, in its words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from kplan.errors import ConfigError


class Gate(StrEnum):
    """The feature gates that change what kube-scheduler does, by their upstream names."""

    COMPOSITE_POD_GROUP = "CompositePodGroup"
    DRA_ADMIN_ACCESS = "DRAAdminAccess"
    DRA_CONSUMABLE_CAPACITY = "DRAConsumableCapacity"
    DRA_DEVICE_BINDING_CONDITIONS = "DRADeviceBindingConditions"
    DRA_DEVICE_TAINT_RULES = "DRADeviceTaintRules"
    DRA_DEVICE_TAINTS = "DRADeviceTaints"
    DRA_EXTENDED_RESOURCE = "DRAExtendedResource"
    DRA_FRACTIONAL_CAPACITY_RANGE = "DRAFractionalCapacityRange"
    DRA_PARTITIONABLE_DEVICES = "DRAPartitionableDevices"
    DRA_PRIORITIZED_LIST = "DRAPrioritizedList"
    DRA_RESOURCE_CLAIM_DEVICE_STATUS = "DRAResourceClaimDeviceStatus"
    DRA_SCHEDULER_FILTER_TIMEOUT = "DRASchedulerFilterTimeout"
    DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocation"
    GANG_SCHEDULING = "GangScheduling"
    GENERIC_WORKLOAD = "GenericWorkload"
    IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING = "InPlacePodLevelResourcesVerticalScaling"
    IN_PLACE_POD_VERTICAL_SCALING = "InPlacePodVerticalScaling"
    IN_PLACE_POD_VERTICAL_SCALING_SCHEDULER_PREEMPTION = "InPlacePodVerticalScalingSchedulerPreemption"
    MATCH_LABEL_KEYS_IN_POD_AFFINITY = "MatchLabelKeysInPodAffinity"
    MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD = "MatchLabelKeysInPodTopologySpread"
    MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD_SELECTOR_MERGE = "MatchLabelKeysInPodTopologySpreadSelectorMerge"
    NODE_DECLARED_FEATURES = "NodeDeclaredFeatures"
    NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD = "NodeInclusionPolicyInPodTopologySpread"
    NOMINATED_NODE_NAME_FOR_EXPECTATION = "NominatedNodeNameForExpectation"
    OPPORTUNISTIC_BATCHING = "OpportunisticBatching"
    POD_LEVEL_RESOURCES = "PodLevelResources"
    SCHEDULER_ASYNC_API_CALLS = "SchedulerAsyncAPICalls"
    SCHEDULER_ASYNC_PREEMPTION = "SchedulerAsyncPreemption"
    SCHEDULER_POP_FROM_BACKOFF_Q = "SchedulerPopFromBackoffQ"
    SCHEDULER_PRE_QUEUEING_HINTS = "SchedulerPreQueueingHints"
    SCHEDULER_QUEUEING_HINTS = "SchedulerQueueingHints"
    SIDECAR_CONTAINERS = "SidecarContainers"
    STORAGE_CAPACITY_SCORING = "StorageCapacityScoring"
    TAINT_TOLERATION_COMPARISON_OPERATORS = "TaintTolerationComparisonOperators"
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING = "TopologyAwareWorkloadScheduling"
    VOLUME_ATTRIBUTES_CLASS = "VolumeAttributesClass"
    VOLUME_LIMIT_SCALING = "VolumeLimitScaling"
    WORKLOAD_AWARE_PREEMPTION = "WorkloadAwarePreemption"


class Stage(StrEnum):
    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = "GA"
    DEPRECATED = "DEPRECATED"


@dataclass(frozen=True)
class GateSpec:
    """A gate in one release: its default, its stage and whether it is locked to the default."""

    default: bool
    stage: Stage
    locked: bool = False


#: featureGate's pseudo-gates that set every unlocked gate of a stage at once
_ALL_OF_STAGE = {"AllAlpha": Stage.ALPHA, "AllBeta": Stage.BETA}


@dataclass(frozen=True)
class Features:
    """The value of every known gate of one release (upstream: feature.Features)."""

    values: tuple[tuple[Gate, bool], ...]

    def enabled(self, gate: Gate) -> bool:
        for g, v in self.values:
            if g is gate:
                return v
        # upstream panics: reading a gate the release does not know is a programming error
        raise KeyError(f"feature {gate.value!r} is not registered in this release's gates")

    def changed(self, specs: Mapping[Gate, GateSpec]) -> dict[Gate, bool]:
        """The gates whose value is not the release's default."""
        return {g: v for g, v in self.values if specs[g].default != v}

    def __str__(self) -> str:
        return ",".join(f"{g.value}={str(v).lower()}" for g, v in self.values)

    @classmethod
    def of(cls, specs: Mapping[Gate, GateSpec], overrides: Mapping[str, bool] | None = None) -> Features:
        """The release's defaults with ``overrides`` applied (featureGate.SetFromMap): an unknown
        name stops at once, gates locked to their default are reported together."""
        values = {g: s.default for g, s in specs.items()}
        errors: list[str] = []
        overrides = dict(overrides or {})
        for name, stage in _ALL_OF_STAGE.items():
            if name in overrides:
                on = overrides.pop(name)
                values.update({g: on for g, s in specs.items() if s.stage is stage and not s.locked})
        by_name = {g.value: g for g in specs}
        for name, on in overrides.items():
            gate = by_name.get(name)
            if gate is None:
                raise ConfigError(f"unrecognized feature gate: {name}")
            spec = specs[gate]
            if spec.locked and spec.default != on:
                errors.append(f"cannot set feature gate {name} to {_go_bool(on)}, "
                              f"feature is locked to {_go_bool(spec.default)}")
                continue
            values[gate] = on
        if errors:
            raise ConfigError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
        return cls(tuple(sorted(values.items(), key=lambda kv: kv[0].value)))


def _go_bool(b: bool) -> str:
    return "true" if b else "false"


#: strconv.ParseBool's accepted spellings
_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
          "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``--feature-gates`` as featureGate.Set reads it: comma-separated ``Name=bool`` pairs,
    spaces around names and values trimmed, empty items skipped; the last of a repeated name
    wins. Names are not checked here (``Features.of`` does)."""
    out: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise ConfigError(f"missing bool value for {name}")
        value = value.strip()
        if value not in _BOOLS:
            raise ConfigError(f'invalid value of {name}={value}, err: strconv.ParseBool: parsing "{value}": '
                              "invalid syntax")
        out[name] = _BOOLS[value]
    return out
