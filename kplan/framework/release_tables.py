"""Per-release tables: one row per modelled Kubernetes minor release, one table per concern.

1.34 is stated whole (_ROWS_1_34); every later release as the release before it plus its
changes (_CHANGES_1_35, _CHANGES_1_36, ...): the gates it adds, turns on or off, promotes, locks
or removes, the plugins its registry adds, the default profile's weights and order, the default
args and message texts it changes, and the resize, nomination and DRA allocator rules where they
differ, each with the KEP or PR it comes from. What 1.36 changes is read in _CHANGES_1_36. The
public tables (GATES, DEFAULT_PROFILE, ...) are those rows resolved once, at import;
tests/unit/framework/test_release_tables_resolved.py pins what they resolve to. Adding a release
means adding its changes (docs/development.md, "How to add a Kubernetes release"). The 1.34 rows
are kube-scheduler v1.34.1's defaults (../shared/scheduler-reference.md sections 1.2–1.4 and
13.1); the later ones are read from the upstream code at the tag in PATCH_RELEASES
(pkg/features/kube_features.go, apis/config/v1, plugins/registry.go) and judged by its oracle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from kplan.framework.features import Gate, GateSpec, Stage
from kplan.framework.release import KubeVersion, Messages, NominationRules, QueueingHintRules
from kplan.model.resize import ResizeAccounting

V1_34 = KubeVersion(1, 34)
V1_35 = KubeVersion(1, 35)
V1_36 = KubeVersion(1, 36)
V1_37 = KubeVersion(1, 37)

#: the release modelled when none is asked for and the input states none: the newest modelled one
#: (issue 36), judged against its real scheduler (all 81 public scenarios and the differential)
DEFAULT_RELEASE = V1_37

_A, _B, _GA = Stage.ALPHA, Stage.BETA, Stage.GA

#: the patch release each row was read from (and judged against)
PATCH_RELEASES: Mapping[KubeVersion, str] = {
    V1_34: "v1.34.1",
    V1_35: "v1.35.4",
    V1_36: "v1.36.3",
    V1_37: "v1.37.2",
}

_Profile = tuple[tuple[str, int], ...]


@dataclass(frozen=True, kw_only=True)
class ReleaseRows:
    """One release's row of each table that a release inherits from the one before it."""

    #: pkg/features/kube_features.go: the gates that change scheduling, with their default, stage and lock
    gates: Mapping[Gate, GateSpec]
    #: default_plugins.go: the default MultiPoint set in order, with score weights (0: none given)
    profile: _Profile
    #: defaults.go / types_pluginargs.go: each plugin's args (v1 API shape) when pluginConfig has none
    args: Mapping[str, Mapping[str, Any]]
    #: plugins/registry.go NewInTreeRegistry: the in-tree plugins the release has
    plugins: frozenset[str]
    #: reason texts that releases word differently
    messages: Messages
    #: how a pod whose status reports an in-place resize is counted on its node (RESIZE_ACCOUNTING)
    resize: ResizeAccounting
    #: status.nominatedNodeName around binding and failures (NOMINATION)
    nomination: NominationRules
    #: the structured allocator's pool rules (DRA_POOL_RULES)
    dra_pool_rules: tuple[bool, bool]
    #: the structured allocator's consumable-capacity rules (DRA_CAPACITY_RULES)
    dra_capacity_rules: tuple[bool, bool]
    #: what InterPodAffinity's and PodTopologySpread's pod-event hints look at (QUEUEING_HINTS)
    queueing_hints: QueueingHintRules


def _names(profile: Iterable[tuple[str, int]]) -> list[str]:
    return [name for name, _ in profile]


@dataclass(frozen=True)
class _Reweight:
    """The default profile gives ``plugin`` a new score weight."""

    plugin: str
    weight: int

    def __call__(self, profile: _Profile) -> _Profile:
        if self.plugin not in _names(profile):
            raise ValueError(f"{self}: no such plugin in the profile")
        return tuple((name, self.weight if name == self.plugin else w) for name, w in profile)


@dataclass(frozen=True)
class _Append:
    """``plugin`` joins the default profile, last."""

    plugin: str
    weight: int = 0

    def __call__(self, profile: _Profile) -> _Profile:
        if self.plugin in _names(profile):
            raise ValueError(f"{self}: the plugin is in the profile already")
        return (*profile, (self.plugin, self.weight))


@dataclass(frozen=True)
class _MoveBefore:
    """``plugin`` moves to just before ``other`` in the default profile."""

    plugin: str
    other: str

    def __call__(self, profile: _Profile) -> _Profile:
        moved = [p for p in profile if p[0] == self.plugin]
        rest = [p for p in profile if p[0] != self.plugin]
        if not moved or self.other not in _names(rest):
            raise ValueError(f"{self}: no such plugins in the profile")
        at = _names(rest).index(self.other)
        return (*rest[:at], *moved, *rest[at:])


@dataclass(frozen=True, kw_only=True)
class _Changes:
    """What a release changes from the release before it; what it does not name, it keeps."""

    #: a gate's whole new spec, where the release adds, turns on or off, promotes or locks it; None: removed
    gates: Mapping[Gate, GateSpec | None] = field(default_factory=dict)
    #: the in-tree plugins the registry adds
    plugins: frozenset[str] = frozenset()
    #: edits of the default profile, in order
    profile: tuple[_Reweight | _Append | _MoveBefore, ...] = ()
    #: a plugin's default args, replacing the previous release's whole
    args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: Messages fields worded anew
    messages: Mapping[str, str | None] = field(default_factory=dict)
    resize: ResizeAccounting | None = None
    nomination: NominationRules | None = None
    dra_pool_rules: tuple[bool, bool] | None = None
    dra_capacity_rules: tuple[bool, bool] | None = None
    queueing_hints: QueueingHintRules | None = None

    def applied_to(self, before: ReleaseRows) -> ReleaseRows:
        profile = before.profile
        for edit in self.profile:
            profile = edit(profile)
        return ReleaseRows(
            gates={gate: spec for gate, spec in {**before.gates, **self.gates}.items() if spec is not None},
            profile=profile,
            args={**before.args, **self.args},
            plugins=before.plugins | self.plugins,
            messages=Messages(**{**asdict(before.messages), **self.messages}),
            resize=before.resize if self.resize is None else self.resize,
            nomination=before.nomination if self.nomination is None else self.nomination,
            dra_pool_rules=before.dra_pool_rules if self.dra_pool_rules is None else self.dra_pool_rules,
            dra_capacity_rules=before.dra_capacity_rules if self.dra_capacity_rules is None
            else self.dra_capacity_rules,
            queueing_hints=before.queueing_hints if self.queueing_hints is None else self.queueing_hints,
        )


_CPU_MEMORY = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

# ------------------------------------------------------------------------------ 1.34 (v1.34.1), whole

_ROWS_1_34 = ReleaseRows(
    gates={
        Gate.DYNAMIC_RESOURCE_ALLOCATION: GateSpec(True, _GA),
        Gate.DRA_ADMIN_ACCESS: GateSpec(True, _B),
        Gate.DRA_CONSUMABLE_CAPACITY: GateSpec(False, _A),
        Gate.DRA_DEVICE_BINDING_CONDITIONS: GateSpec(False, _A),
        Gate.DRA_DEVICE_TAINTS: GateSpec(False, _A),
        Gate.DRA_EXTENDED_RESOURCE: GateSpec(False, _A),
        Gate.DRA_PARTITIONABLE_DEVICES: GateSpec(False, _A),
        Gate.DRA_PRIORITIZED_LIST: GateSpec(True, _B),
        Gate.DRA_RESOURCE_CLAIM_DEVICE_STATUS: GateSpec(True, _B),
        Gate.DRA_SCHEDULER_FILTER_TIMEOUT: GateSpec(True, _B),
        Gate.IN_PLACE_POD_VERTICAL_SCALING: GateSpec(True, _B),
        Gate.MATCH_LABEL_KEYS_IN_POD_AFFINITY: GateSpec(True, _GA, locked=True),
        Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD: GateSpec(True, _B),
        Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD_SELECTOR_MERGE: GateSpec(True, _B),
        Gate.NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD: GateSpec(True, _GA, locked=True),
        Gate.NOMINATED_NODE_NAME_FOR_EXPECTATION: GateSpec(False, _A),
        Gate.POD_LEVEL_RESOURCES: GateSpec(True, _B),
        Gate.SCHEDULER_ASYNC_API_CALLS: GateSpec(True, _B),
        Gate.SCHEDULER_ASYNC_PREEMPTION: GateSpec(True, _B),
        Gate.SCHEDULER_POP_FROM_BACKOFF_Q: GateSpec(True, _B),
        Gate.SCHEDULER_QUEUEING_HINTS: GateSpec(True, _GA, locked=True),
        Gate.SIDECAR_CONTAINERS: GateSpec(True, _GA, locked=True),
        Gate.STORAGE_CAPACITY_SCORING: GateSpec(False, _A),
        Gate.VOLUME_ATTRIBUTES_CLASS: GateSpec(True, _GA),
    },
    profile=(
        ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
        ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 0), ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
    ),
    args={
        "NodeResourcesFit": {"scoringStrategy": {"type": "LeastAllocated", "resources": _CPU_MEMORY}},
        "NodeResourcesBalancedAllocation": {"resources": _CPU_MEMORY},
        "PodTopologySpread": {"defaultingType": "System"},
        "InterPodAffinity": {"hardPodAffinityWeight": 1},
        "NodeAffinity": {},
        "VolumeBinding": {"bindTimeoutSeconds": 600},
        "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        # filterTimeout 10s comes from the decoder while DRASchedulerFilterTimeout is on (SetDefaults reads the gate)
        "DynamicResources": {},
    },
    plugins=frozenset({
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
        "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
        "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder",
    }),
    messages=Messages(untolerated_taint="node(s) had untolerated taint {taint}"),
    # the InPlacePodVerticalScaling gate beta and on: a resizing pod counts per container
    resize=ResizeAccounting.PER_CONTAINER,
    nomination=NominationRules(bind_moves_pods=True, bind_clears=False, no_post_filter_clears=False,
                               gated_pods_nominated=False),
    # a pool missing slices or invalid: its devices are used, an invalid pool aborts the attempt
    dra_pool_rules=(False, False),
    dra_capacity_rules=(False, False),
    # an unassigned pod never requeues; a deleted pod only through the pod's own anti-affinity, all terms
    queueing_hints=QueueingHintRules(nominated_pods_count=False, deleted_pods_anti_affinity=False,
                                     anti_affinity_any_term=False),
)

# ------------------------------------------------------------------------------ 1.35 (v1.35.4): 1.34 plus

_CHANGES_1_35 = _Changes(
    gates={
        # DRA (KEP-4381) locked on
        Gate.DYNAMIC_RESOURCE_ALLOCATION: GateSpec(True, _GA, locked=True),
        # new, alpha and off: DeviceTaintRules apart from DRADeviceTaints (KEP-5055)
        Gate.DRA_DEVICE_TAINT_RULES: GateSpec(False, _A),
        # new, alpha and off: gang scheduling and the Workload API (KEP-4671)
        Gate.GANG_SCHEDULING: GateSpec(False, _A),
        Gate.GENERIC_WORKLOAD: GateSpec(False, _A),
        # new, alpha and off: in-place resize of pod-level resources (KEP-5419)
        Gate.IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING: GateSpec(False, _A),
        # in-place pod resize GA, locked (KEP-1287)
        Gate.IN_PLACE_POD_VERTICAL_SCALING: GateSpec(True, _GA, locked=True),
        # new, alpha and off: Node.status.declaredFeatures and its filter (KEP-5328)
        Gate.NODE_DECLARED_FEATURES: GateSpec(False, _A),
        # beta and on (KEP-5278)
        Gate.NOMINATED_NODE_NAME_FOR_EXPECTATION: GateSpec(True, _B),
        # new, beta and on: opportunistic batching (KEP-5598)
        Gate.OPPORTUNISTIC_BATCHING: GateSpec(True, _B),
        # on in v1.35.0, off again from v1.35.1 (#135903); the 1.34 line of the table says off too
        Gate.SCHEDULER_ASYNC_API_CALLS: GateSpec(False, _B),
        # new, alpha and off: toleration operators Gt/Lt (KEP-5471)
        Gate.TAINT_TOLERATION_COMPARISON_OPERATORS: GateSpec(False, _A),
        # new, alpha and off: volume limit scaling, the CSI-driver check (KEP-5030)
        Gate.VOLUME_LIMIT_SCALING: GateSpec(False, _A),
    },
    # NodeDeclaredFeatures (in the default profile only with its alpha gate, off); v1.35.4 registers
    # GangScheduling too (alpha, off): not modelled, a configuration that names it is refused
    plugins=frozenset({"NodeDeclaredFeatures"}),
    # DynamicResources scores (prioritized-list requests, #134711), with weight 2
    profile=(_Reweight("DynamicResources", 2),),
    # args unchanged: bindingTimeout (10m) is defaulted only with DRADeviceBindingConditions and
    # DRAResourceClaimDeviceStatus both on: not by default in 1.35 (the decoder's, as filterTimeout)
    #
    # the taint goes to a log line only (#134740)
    messages={"untolerated_taint": "node(s) had untolerated taint(s)"},
    # the binding of a nominated pod no longer moves pods (#134157); kube-apiserver's
    # ClearingNominatedNodeNameAfterBinding (KEP-5278) clears the nomination; a FitError without
    # PostFilter plugins clears it too (clearNominatedNode)
    nomination=NominationRules(bind_moves_pods=False, bind_clears=True, no_post_filter_clears=True,
                               gated_pods_nominated=False),
    # a pool missing slices or invalid is skipped, and a node where nothing fits and that sees an
    # invalid pool fails with "invalid resource pools were encountered"; a slice with shared
    # counters reaches every node
    dra_pool_rules=(True, True),
)

# ------------------------------------------------------------------------------ 1.36 (v1.36.3): 1.35 plus

_CHANGES_1_36 = _Changes(
    gates={
        # DRA's device features beta and on: admin access GA (KEP-5018), consumable capacity
        # (KEP-5075), binding conditions (KEP-5007), device taints (KEP-5055; DeviceTaintRules
        # beta but off), extended resources (KEP-5004), partitionable devices (KEP-4815);
        # prioritized lists GA (KEP-4816)
        Gate.DRA_ADMIN_ACCESS: GateSpec(True, _GA, locked=True),
        Gate.DRA_CONSUMABLE_CAPACITY: GateSpec(True, _B),
        Gate.DRA_DEVICE_BINDING_CONDITIONS: GateSpec(True, _B),
        Gate.DRA_DEVICE_TAINT_RULES: GateSpec(False, _B),
        Gate.DRA_DEVICE_TAINTS: GateSpec(True, _B),
        Gate.DRA_EXTENDED_RESOURCE: GateSpec(True, _B),
        Gate.DRA_PARTITIONABLE_DEVICES: GateSpec(True, _B),
        Gate.DRA_PRIORITIZED_LIST: GateSpec(True, _GA),
        # beta and on (KEP-5419)
        Gate.IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING: GateSpec(True, _B),
        # beta and on (KEP-5328)
        Gate.NODE_DECLARED_FEATURES: GateSpec(True, _B),
        # new, alpha and off: topology-aware workload scheduling (KEP-5732)
        Gate.TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: GateSpec(False, _A),
        # locked (KEP-3751)
        Gate.VOLUME_ATTRIBUTES_CLASS: GateSpec(True, _GA, locked=True),
        # new, alpha and off: workload-aware preemption (KEP-5710)
        Gate.WORKLOAD_AWARE_PREEMPTION: GateSpec(False, _A),
    },
    # no plugin added that kplan models: v1.36.3 also registers GangScheduling, TopologyPlacement and
    # PodGroupPodsCount, in the default profile only behind gates that are off, so a configuration
    # that names them is refused
    #
    # NodeDeclaredFeatures (beta, on) is appended after DefaultBinder by applyFeatureGates
    profile=(_Append("NodeDeclaredFeatures"),),
    # the defaults that follow gates are the decoders' (SetDefaults_*Args read the gates):
    # DynamicResources' bindingTimeout (10m0s, on from 1.36), VolumeBinding's shape (on in 1.37);
    # DynamicResources' filterTimeout is written out here (the decoder gives the same 10s while
    # DRASchedulerFilterTimeout is on)
    args={"DynamicResources": {"filterTimeout": "10s"}},
    # queueing-hint fixes (not gated): a pod leaving its nomination counts (#135392); InterPodAffinity
    # also requeues when the pod matches a deleted pod's own anti-affinity (#135325)
    queueing_hints=QueueingHintRules(nominated_pods_count=True, deleted_pods_anti_affinity=True,
                                     anti_affinity_any_term=False),
    # the "incubating" allocator's consumable capacity: distinctAttribute keeps one value per
    # request name (its constraint.go at v0.36.3)
    dra_capacity_rules=(True, False),
)

# ------------------------------------------------------------------------------ 1.37 (v1.37.2): 1.36 plus

_CHANGES_1_37 = _Changes(
    gates={
        # GA, not locked before 1.38 (kube_features.go: "LockToDefault: true in 1.38") (KEP-5055)
        Gate.DRA_DEVICE_TAINT_RULES: GateSpec(True, _GA),
        Gate.DRA_DEVICE_TAINTS: GateSpec(True, _GA),
        # GA and locked: extended resources (KEP-5004), resource claim device status (KEP-4817);
        # prioritized lists locked (KEP-4816)
        Gate.DRA_EXTENDED_RESOURCE: GateSpec(True, _GA, locked=True),
        # new, beta, on only from a --min-compatibility-version of 1.37 (kube_features.go): off in
        # kube-scheduler v1.37.2, whose default compatibility version is 1.36 (the 1.37 oracle agrees)
        Gate.DRA_FRACTIONAL_CAPACITY_RANGE: GateSpec(False, _B),
        Gate.DRA_PRIORITIZED_LIST: GateSpec(True, _GA, locked=True),
        Gate.DRA_RESOURCE_CLAIM_DEVICE_STATUS: GateSpec(True, _GA, locked=True),
        # the Workload API v1beta1 behind GenericWorkload (beta, off); GangScheduling (KEP-4671) and
        # WorkloadAwarePreemption (KEP-5710) removed, now behind GenericWorkload
        Gate.GANG_SCHEDULING: None,
        Gate.GENERIC_WORKLOAD: GateSpec(False, _B),
        Gate.WORKLOAD_AWARE_PREEMPTION: None,
        # new, alpha and off: scheduler preemption for in-place pod resize (KEP-5836)
        Gate.IN_PLACE_POD_VERTICAL_SCALING_SCHEDULER_PREEMPTION: GateSpec(False, _A),
        # GA and locked (KEP-5328)
        Gate.NODE_DECLARED_FEATURES: GateSpec(True, _GA, locked=True),
        # removed
        Gate.SCHEDULER_QUEUEING_HINTS: None,
        Gate.SIDECAR_CONTAINERS: None,
        # beta and on: storage capacity scoring (KEP-4049), volume limit scaling (KEP-5030)
        Gate.STORAGE_CAPACITY_SCORING: GateSpec(True, _B),
        Gate.VOLUME_LIMIT_SCALING: GateSpec(True, _B),
    },
    # no plugin added that kplan models: v1.37.2 registers DeferredPodScheduling too, behind gates that
    # are off, refused as 1.36's
    #
    # NodeName now comes before NodeUnschedulable (default_plugins.go at v1.37.2)
    profile=(_MoveBefore("NodeName", "NodeUnschedulable"),),
    # a successful preemption is reported in the pod's failure message too (#140180)
    messages={"preemption_nominated": "found a potential placement for pod on node {node}, "
                                      "preempting {victims} victims"},
    # the maximum of whole-pod sums
    resize=ResizeAccounting.AGGREGATE,
    # a slice with shared counters reaches only the nodes it selects
    dra_pool_rules=(True, False),
    # distinctAttribute keeps every device's value; an All request lists devices by their capacity
    # alone; a device with a share counts as shared for its counters
    dra_capacity_rules=(False, True),
    # a new pod's nomination is recorded even when it is gated (#139057)
    nomination=NominationRules(bind_moves_pods=False, bind_clears=True, no_post_filter_clears=True,
                               gated_pods_nominated=True),
    # InterPodAffinity's hints: any anti-affinity term is enough (#139161, not gated)
    queueing_hints=QueueingHintRules(nominated_pods_count=True, deleted_pods_anti_affinity=True,
                                     anti_affinity_any_term=True),
)


def _resolved(first: ReleaseRows, *later: tuple[KubeVersion, _Changes]) -> dict[KubeVersion, ReleaseRows]:
    """Each release's rows: 1.34's, then each later release's changes applied to the rows before."""
    rows = {V1_34: first}
    previous = first
    for version, changes in later:
        previous = rows[version] = changes.applied_to(previous)
    return rows


#: every release's rows, resolved (Release reads its own through ``Release.rows``)
ROWS = _resolved(_ROWS_1_34, (V1_35, _CHANGES_1_35), (V1_36, _CHANGES_1_36), (V1_37, _CHANGES_1_37))

#: pkg/features/kube_features.go: the gates that change scheduling, with their default, stage and lock
GATES: Mapping[KubeVersion, Mapping[Gate, GateSpec]] = {v: r.gates for v, r in ROWS.items()}

#: the gate values other than a release's defaults that kplan models (the rest are refused)
MODELLED_GATE_CHANGES: Mapping[KubeVersion, frozenset[tuple[Gate, bool]]] = {
    V1_34: frozenset(),
    # OpportunisticBatching off: every pod filtered and scored afresh, as in 1.34
    # DRAPartitionableDevices on (alpha): shared counters and per-device node selection
    V1_35: frozenset({(Gate.OPPORTUNISTIC_BATCHING, False), (Gate.DRA_PARTITIONABLE_DEVICES, True)}),
    # the two storage gates that 1.37 turns on, either way (VolumeBinding's scorer, NodeVolumeLimits'
    # CSI-driver check)
    # DRADeviceTaintRules on (beta, off by default: DeviceTaintRules' taints count) or DRADeviceTaints off
    V1_36: frozenset({(Gate.STORAGE_CAPACITY_SCORING, True), (Gate.VOLUME_LIMIT_SCALING, True),
                      (Gate.DRA_DEVICE_TAINT_RULES, True), (Gate.DRA_DEVICE_TAINTS, False),
                      # extendedResourceName ignored, as in 1.34 and 1.35
                      (Gate.DRA_EXTENDED_RESOURCE, False), (Gate.DRA_PARTITIONABLE_DEVICES, False),
                      # consumable capacity off, as in 1.34 and 1.35
                      (Gate.DRA_CONSUMABLE_CAPACITY, False)}),
    V1_37: frozenset({(Gate.STORAGE_CAPACITY_SCORING, False), (Gate.VOLUME_LIMIT_SCALING, False),
                      (Gate.DRA_PARTITIONABLE_DEVICES, False),
                      # consumable capacity off: the API server drops its fields, every device exclusive;
                      # DRAFractionalCapacityRange on: a validRange rounded in thousandths
                      (Gate.DRA_CONSUMABLE_CAPACITY, False), (Gate.DRA_FRACTIONAL_CAPACITY_RANGE, True)}),
}

#: default_plugins.go: the default MultiPoint set in order, with score weights (0: none given)
DEFAULT_PROFILE: Mapping[KubeVersion, tuple[tuple[str, int], ...]] = {v: r.profile for v, r in ROWS.items()}

#: defaults.go / types_pluginargs.go: each plugin's args (v1 API shape) when pluginConfig has none
DEFAULT_ARGS: Mapping[KubeVersion, Mapping[str, Mapping[str, Any]]] = {v: r.args for v, r in ROWS.items()}

#: plugins/registry.go NewInTreeRegistry: the in-tree plugins each release has
PLUGINS: Mapping[KubeVersion, frozenset[str]] = {v: r.plugins for v, r in ROWS.items()}

#: reason texts that releases word differently
MESSAGES: Mapping[KubeVersion, Messages] = {v: r.messages for v, r in ROWS.items()}

#: component-helpers resource/helpers.go at the release's tag: how a running pod whose status
#: reports an in-place resize is counted on its node (kplan/model/resize.py; the pod-level part
#: follows the gate InPlacePodLevelResourcesVerticalScaling). The same rule from 1.34 (the
#: InPlacePodVerticalScaling gate beta and on) to 1.36; 1.37 takes the maximum of whole-pod sums
RESIZE_ACCOUNTING: Mapping[KubeVersion, ResizeAccounting] = {v: r.resize for v, r in ROWS.items()}

#: status.nominatedNodeName around binding and failures (schedule_one.go, eventhandlers.go
#: deletePodFromSchedulingQueue, and the API server's pods/binding at the tag)
NOMINATION: Mapping[KubeVersion, NominationRules] = {v: r.nomination for v, r in ROWS.items()}

#: what InterPodAffinity's and PodTopologySpread's pod-event hints look at (their plugin.go
#: isSchedulableAfterPodChange at the tag; the three bug fixes of 1.36 and 1.37 are not gated)
QUEUEING_HINTS: Mapping[KubeVersion, QueueingHintRules] = {v: r.queueing_hints for v, r in ROWS.items()}

#: the structured allocator's pool rules (k8s.io/dynamic-resource-allocation at the tag; not
#: gates), as (skip_unusable_pools, counter_slices_reach_every_node) of DeviceFeatures: from 1.35
#: on a pool missing slices or invalid is skipped, and a node where nothing fits and that sees an
#: invalid pool fails with "invalid resource pools were encountered" (1.34: such a pool's devices
#: are used, an invalid pool aborts the attempt); in 1.35 and 1.36 a slice with shared counters
#: reaches every node (1.37: only the nodes it selects)
DRA_POOL_RULES: Mapping[KubeVersion, tuple[bool, bool]] = {v: r.dra_pool_rules for v, r in ROWS.items()}

#: DRAConsumableCapacity's allocator rules besides the gate (structured/internal/incubating at
#: v0.36.3 and v0.37.2; the gate is off in 1.34 and 1.35), as (distinct_per_request_name,
#: capacity_rules_137) of DeviceFeatures: 1.36's distinctAttribute keeps one value per request
#: name; 1.37 lists an ``All`` request's devices by their capacity alone and counts a device with a
#: share as shared for its counters
DRA_CAPACITY_RULES: Mapping[KubeVersion, tuple[bool, bool]] = {v: r.dra_capacity_rules for v, r in ROWS.items()}
