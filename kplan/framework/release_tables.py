"""The release table: every modelled Kubernetes minor release's rules, one row per release.

1.34 is stated whole (_RULES_1_34); every later release as the release before it plus its changes
(_CHANGES_1_35, _CHANGES_1_36, ...), each change with the KEP or PR it comes from: the gates it
adds, turns on or off, promotes, locks or removes, the plugins its registry adds, the default
profile's weights and order, the default args and message texts it changes, each plugin's named
rules that change (``plugin_rules``, decoded by the plugin in its constructor), and any other rule
(nomination, queueing hints, resize accounting: framework/release_rules.py) it states anew. What
1.36 changes is read in _CHANGES_1_36. RELEASES is those rows resolved once, at import;
tests/unit/framework/test_release_tables_resolved.py pins what they resolve to. Adding a release
means adding its changes (docs/development.md, "How to add a Kubernetes release"). The 1.34 row is
kube-scheduler v1.34.1's (../shared/scheduler-reference.md sections 1.2-1.4 and 13.1); the later
ones are read from the upstream code at the tag in their ``scheduler_version``
(pkg/features/kube_features.go, apis/config/v1, plugins/registry.go, the plugins) and judged by
its oracle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, get_type_hints

from kplan.framework.features import Gate, GateSpec, Stage
from kplan.framework.release_rules import (
    KubeVersion,
    Messages,
    NominationRules,
    Profile,
    QueueingHintRules,
    ReleaseRules,
)
from kplan.model.resize import ResizeAccounting

V1_34 = KubeVersion(1, 34)
V1_35 = KubeVersion(1, 35)
V1_36 = KubeVersion(1, 36)
V1_37 = KubeVersion(1, 37)
V1_38 = KubeVersion(1, 38)

#: the release modelled when none is asked for and the input states none: the newest GA release
#: modelled (issue 36), judged against its real scheduler (all 81 public scenarios and the
#: differential); 1.38 is modelled from v1.38.0-beta.0 and becomes the default once its GA is
DEFAULT_RELEASE = V1_37

_A, _B, _GA = Stage.ALPHA, Stage.BETA, Stage.GA


def _names(profile: Iterable[tuple[str, int]]) -> list[str]:
    return [name for name, _ in profile]


@dataclass(frozen=True)
class _Reweight:
    """The default profile gives ``plugin`` a new score weight."""

    plugin: str
    weight: int

    def __call__(self, profile: Profile) -> Profile:
        if self.plugin not in _names(profile):
            raise ValueError(f"{self}: no such plugin in the profile")
        return tuple((name, self.weight if name == self.plugin else w) for name, w in profile)


@dataclass(frozen=True)
class _Append:
    """``plugin`` joins the default profile, last."""

    plugin: str
    weight: int = 0

    def __call__(self, profile: Profile) -> Profile:
        if self.plugin in _names(profile):
            raise ValueError(f"{self}: the plugin is in the profile already")
        return (*profile, (self.plugin, self.weight))


@dataclass(frozen=True)
class _MoveBefore:
    """``plugin`` moves to just before ``other`` in the default profile."""

    plugin: str
    other: str

    def __call__(self, profile: Profile) -> Profile:
        moved = [p for p in profile if p[0] == self.plugin]
        rest = [p for p in profile if p[0] != self.plugin]
        if not moved or self.other not in _names(rest):
            raise ValueError(f"{self}: no such plugins in the profile")
        at = _names(rest).index(self.other)
        return (*rest[:at], *moved, *rest[at:])


@dataclass(frozen=True, kw_only=True)
class _Changes:
    """What a release changes from the release before it; what it does not name, it keeps."""

    #: the kube-scheduler patch release read (and judged against)
    scheduler_version: str
    #: a gate's whole new spec, where the release adds, turns on or off, promotes or locks it; None: removed
    gates: Mapping[Gate, GateSpec | None] = field(default_factory=dict)
    #: the in-tree plugins the registry adds
    plugins: frozenset[str] = frozenset()
    #: edits of the default profile, in order
    profile: tuple[_Reweight | _Append | _MoveBefore, ...] = ()
    #: a plugin's default args, replacing the previous release's whole
    args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: per plugin, the named rules that change (the others are kept); a plugin the registry adds
    #: states all of its rules
    plugin_rules: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: Messages fields worded anew
    messages: Mapping[str, str | None] = field(default_factory=dict)
    #: any other rule stated anew, whole: its type says which (a NominationRules replaces the
    #: previous release's ``nomination``, and so on for every kind of rule of ReleaseRules)
    rules: tuple[object, ...] = ()

    def applied_to(self, before: ReleaseRules) -> ReleaseRules:
        profile = before.default_profile
        for edit in self.profile:
            profile = edit(profile)
        plugins = before.plugins | self.plugins
        plugin_rules = dict(before.plugin_rules)
        for plugin, rules in self.plugin_rules.items():
            kept = before.plugin_rules.get(plugin)
            if plugin not in plugins or (kept is None) != (plugin in self.plugins) or \
                    (kept is not None and not set(rules) <= set(kept)):
                raise ValueError(f"{self.scheduler_version}: {plugin}'s rules {sorted(rules)}: a rule is changed "
                                 "that the plugin does not have, or a new plugin's rules are not stated whole")
            plugin_rules[plugin] = {**(kept or {}), **rules}
        whole: dict[str, Any] = {}
        for rule in self.rules:
            if type(rule) not in _RULE_FIELDS:
                raise ValueError(f"{self.scheduler_version}: {rule!r} is no kind of release rule")
            whole[_RULE_FIELDS[type(rule)]] = rule
        changed: dict[str, Any] = {
            **whole,
            "scheduler_version": self.scheduler_version,
            "gates": {gate: spec for gate, spec in {**before.gates, **self.gates}.items() if spec is not None},
            "default_profile": profile,
            "default_args": {**before.default_args, **self.args},
            "plugins": plugins,
            "plugin_rules": plugin_rules,
            "messages": Messages(**{**asdict(before.messages), **self.messages}),
        }
        return replace(before, **changed)  # what is not named here, the release keeps


#: the ReleaseRules field of each kind of rule a release restates whole, by the rule's type (every
#: field of a type of its own, but those _Changes edits in their own way)
_RULE_FIELDS: Mapping[type, str] = {
    hint: name for name, hint in get_type_hints(ReleaseRules).items()
    if isinstance(hint, type) and name not in {"scheduler_version", "messages"}}


_CPU_MEMORY = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

# ------------------------------------------------------------------------------ 1.34 (v1.34.1), whole

_RULES_1_34 = ReleaseRules(
    scheduler_version="v1.34.1",
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
    default_profile=(
        ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
        ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 0), ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
    ),
    default_args={
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
    plugin_rules={
        "DynamicResources": {
            # Score: none (from 1.35); then by position among all the pod's claims (1.35), or an
            # allocated claim by its own allocation (1.36)
            "scores": False, "scores_allocated_claims_by_their_allocation": False,
            # PostFilter reports "no new claims to deallocate" / "still not schedulable" (quiet from 1.37)
            "quiet_post_filter": False,
            # the structured allocator's pool rules (k8s.io/dynamic-resource-allocation, not gates): a
            # pool missing slices is used and an invalid pool aborts the attempt
            "skip_unusable_pools": False, "counter_slices_reach_every_node": False,
            # its consumable-capacity rules (DRAConsumableCapacity, off before 1.36)
            "distinct_per_request_name": False, "all_requests_listed_by_capacity_alone": False,
            "negative_capacity_aborts": False, "shared_devices_count_as_in_use": False,
            # an All request on an incomplete or invalid pool aborts the attempt; capacity names as written
            "all_requests_fail_the_node": False, "qualified_capacity_names": False,
        },
        # the balance with the pod; the SignPod of 1.34/1.35 with DRAExtendedResource
        "NodeResourcesBalancedAllocation": {"scores_balance_change": False, "extended_resources_from_devices": False},
        # DRAExtendedResource's resources are not left to DynamicResources
        "NodeResourcesFit": {"extended_resources_from_devices": False},
        # container images only
        "ImageLocality": {"sums_image_volumes": False, "counts_image_volumes": False},
        # Filter only
        "NodeName": {"pre_filter": False},
        # countPodsMatchSelector counts nothing for an empty labelSelector (selector.Empty())
        "PodTopologySpread": {"empty_selector_counts_every_pod": False},
        # MoreImportantPod leaves equal victims in the node's order; a PDB with an empty selector
        # guards nothing; a node that needs no victim is an Error
        "DefaultPreemption": {"victims_tie_by_uid": False, "empty_pdb_selector_selects_all": False,
                              "no_victim_node_unresolvable": False},
    },
    messages=Messages(untolerated_taint="node(s) had untolerated taint {taint}"),
    # the InPlacePodVerticalScaling gate beta and on: a resizing pod counts per container
    resize=ResizeAccounting.PER_CONTAINER,
    nomination=NominationRules(bind_moves_pods=True, bind_clears=False, no_post_filter_clears=False,
                               gated_pods_nominated=False),
    # an unassigned pod never requeues; a deleted pod only through the pod's own anti-affinity, all terms
    queueing_hints=QueueingHintRules(nominated_pods_count=False, deleted_pods_anti_affinity=False,
                                     anti_affinity_any_term=False, namespace_selector_labels=False),
)

# ------------------------------------------------------------------------------ 1.35 (v1.35.4): 1.34 plus

_CHANGES_1_35 = _Changes(
    scheduler_version="v1.35.4",
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
    rules=(NominationRules(bind_moves_pods=False, bind_clears=True, no_post_filter_clears=True,
                           gated_pods_nominated=False),),
    plugin_rules={
        "DynamicResources": {
            # Score, weight 2 (#134711)
            "scores": True,
            # k8s.io/dynamic-resource-allocation v0.35: a pool missing slices or invalid is skipped, and a
            # node where nothing fits and that sees an invalid pool fails with "invalid resource pools
            # were encountered"; a slice with shared counters reaches every node
            "skip_unusable_pools": True, "counter_slices_reach_every_node": True,
        },
        # new (KEP-5328), its rules stated whole: the feature registry of component-helpers v0.36
        # (the gate is alpha and off, and not modelled on)
        "NodeDeclaredFeatures": {"feature_registry": "1.36"},
    },
)

# ------------------------------------------------------------------------------ 1.36 (v1.36.3): 1.35 plus

_CHANGES_1_36 = _Changes(
    scheduler_version="v1.36.3",
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
    rules=(QueueingHintRules(nominated_pods_count=True, deleted_pods_anti_affinity=True,
                             anti_affinity_any_term=False, namespace_selector_labels=False),),
    plugin_rules={
        "DynamicResources": {
            # computeScore at v1.36.3: a claim already allocated is scored by its own allocation
            "scores_allocated_claims_by_their_allocation": True,
            # the "incubating" allocator's consumable capacity (DRAConsumableCapacity beta, KEP-5075):
            # distinctAttribute keeps one value per request name (its constraint.go at v0.36.3)
            "distinct_per_request_name": True,
        },
        # the change of balance is scored (#135573); with DRAExtendedResource (KEP-5004) a
        # DeviceClass-served resource counts from the node's devices and SignPod refuses only the
        # pods requesting one (#134058)
        "NodeResourcesBalancedAllocation": {"scores_balance_change": True, "extended_resources_from_devices": True},
        # with DRAExtendedResource (KEP-5004), a DeviceClass-served resource a node lacks is left to
        # DynamicResources, in Filter, Score and SignPod (#134058)
        "NodeResourcesFit": {"extended_resources_from_devices": True},
        # image volumes' images are summed too; the maximum counts containers only (#130231)
        "ImageLocality": {"sums_image_volumes": True},
    },
)

# ------------------------------------------------------------------------------ 1.37 (v1.37.2): 1.36 plus

_CHANGES_1_37 = _Changes(
    scheduler_version="v1.37.2",
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
        # new, alpha and off: composite pod groups (Workload API) and PreQueueingHints (KEP-6132)
        Gate.COMPOSITE_POD_GROUP: GateSpec(False, _A),
        Gate.SCHEDULER_PRE_QUEUEING_HINTS: GateSpec(False, _A),
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
    rules=(
        # component-helpers v0.37.2 PodRequests: the maximum of whole-pod sums
        ResizeAccounting.AGGREGATE,
        # a new pod's nomination is recorded even when it is gated (#139057)
        NominationRules(bind_moves_pods=False, bind_clears=True, no_post_filter_clears=True,
                        gated_pods_nominated=True),
        # InterPodAffinity's hints: any anti-affinity term is enough (#139161, not gated)
        QueueingHintRules(nominated_pods_count=True, deleted_pods_anti_affinity=True, anti_affinity_any_term=True,
                          namespace_selector_labels=False),
    ),
    plugin_rules={
        "DynamicResources": {
            # v1.37.2 dynamicresources.go: PostFilter gives no reason when it has nothing to do
            "quiet_post_filter": True,
            # k8s.io/dynamic-resource-allocation v0.37.2: a slice with shared counters reaches only the
            # nodes it selects
            "counter_slices_reach_every_node": False,
            # its consumable capacity: distinctAttribute keeps every device's value; an All request
            # lists devices by their capacity alone; an unrepresentable capacity request aborts; a
            # device with a share counts as in use for its counters
            "distinct_per_request_name": False, "all_requests_listed_by_capacity_alone": True,
            "negative_capacity_aborts": True, "shared_devices_count_as_in_use": True,
        },
        # image volumes count like containers in the maximum too (#138951)
        "ImageLocality": {"counts_image_volumes": True},
        # PreFilter restricts the cycle to the node spec.nodeName names (v1.37.2 node_name.go)
        "NodeName": {"pre_filter": True},
        # the feature registry of component-helpers v0.37.2 (bind mount options)
        "NodeDeclaredFeatures": {"feature_registry": "1.37"},
    },
)


# ------------------------------------------------------------------------------ 1.38 (v1.38.0-beta.0): 1.37 plus

_CHANGES_1_38 = _Changes(
    scheduler_version="v1.38.0-beta.0",
    gates={
        # removed: DRA unconditional (#141946), in-place resize unconditional (KEP-1287), matchLabelKeys
        # in pod affinity unconditional (#141744)
        Gate.DYNAMIC_RESOURCE_ALLOCATION: None,
        Gate.IN_PLACE_POD_VERTICAL_SCALING: None,
        Gate.MATCH_LABEL_KEYS_IN_POD_AFFINITY: None,
        # beta, off (Workload API)
        Gate.COMPOSITE_POD_GROUP: GateSpec(False, _B),
        # GA: consumable capacity (KEP-5075, not locked), fractional capacity ranges (on for every
        # compatibility version now); locked: binding conditions (KEP-5007), partitionable devices
        # (KEP-4815), device taints and taint rules (#140256)
        Gate.DRA_CONSUMABLE_CAPACITY: GateSpec(True, _GA),
        Gate.DRA_DEVICE_BINDING_CONDITIONS: GateSpec(True, _GA, locked=True),
        Gate.DRA_DEVICE_TAINT_RULES: GateSpec(True, _GA, locked=True),
        Gate.DRA_DEVICE_TAINTS: GateSpec(True, _GA, locked=True),
        Gate.DRA_FRACTIONAL_CAPACITY_RANGE: GateSpec(True, _GA),
        Gate.DRA_PARTITIONABLE_DEVICES: GateSpec(True, _GA, locked=True),
        # beta and on: a plugin may narrow the pods the queue evaluates for an event (KEP-6132); only
        # DynamicResources' ResourceClaim hint does, and only to the pods its own hint would requeue
        Gate.SCHEDULER_PRE_QUEUEING_HINTS: GateSpec(True, _B),
        # beta, still off (#140295)
        Gate.TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: GateSpec(False, _B),
    },
    # profile, args and registry as 1.37's: DynamicResources is written into default_plugins.go's
    # list instead of being inserted behind the removed gate (same place, same weight)
    rules=(
        # InterPodAffinity's hints read namespace labels for namespaceSelector terms (#141954)
        QueueingHintRules(nominated_pods_count=True, deleted_pods_anti_affinity=True, anti_affinity_any_term=True,
                          namespace_selector_labels=True),
    ),
    plugin_rules={
        # k8s.io/dynamic-resource-allocation v0.38.0-beta.0 (its stable allocator): an All request on
        # an incomplete or invalid pool fails the node (#141898); capacity names with or without the
        # driver as domain (#142202)
        "DynamicResources": {"all_requests_fail_the_node": True, "qualified_capacity_names": True},
        # an empty labelSelector counts every pod of the namespace (#141340)
        "PodTopologySpread": {"empty_selector_counts_every_pod": True},
        # equal victims by pod UID (#140999, #139210); an empty PDB selector guards every pod of the
        # namespace (#141785); a node needing no victim is UnschedulableAndUnresolvable (#135486)
        "DefaultPreemption": {"victims_tie_by_uid": True, "empty_pdb_selector_selects_all": True,
                              "no_victim_node_unresolvable": True},
    },
)


def _resolved(first: ReleaseRules, *later: tuple[KubeVersion, _Changes]) -> dict[KubeVersion, ReleaseRules]:
    """Each release's rules: 1.34's, then each later release's changes applied to the rules before."""
    rules = {V1_34: first}
    previous = first
    for version, changes in later:
        previous = rules[version] = changes.applied_to(previous)
    return rules


#: every release's rules, resolved (``Release.of`` makes a release of its row)
RELEASES: Mapping[KubeVersion, ReleaseRules] = _resolved(
    _RULES_1_34, (V1_35, _CHANGES_1_35), (V1_36, _CHANGES_1_36), (V1_37, _CHANGES_1_37), (V1_38, _CHANGES_1_38))

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
    # as 1.37's (DRAPartitionableDevices is locked now), and DRAFractionalCapacityRange off: 1.37's default
    V1_38: frozenset({(Gate.STORAGE_CAPACITY_SCORING, False), (Gate.VOLUME_LIMIT_SCALING, False),
                      (Gate.DRA_CONSUMABLE_CAPACITY, False), (Gate.DRA_FRACTIONAL_CAPACITY_RANGE, False)}),
}
