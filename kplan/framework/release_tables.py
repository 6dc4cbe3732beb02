"""Per-release tables: one row per modelled Kubernetes minor release, one table per concern.

Adding a release means adding a row to each table (docs/development.md, "How to add a
Kubernetes release"). The 1.34 rows are kube-scheduler v1.34.1's defaults
(../shared/scheduler-reference.md sections 1.2–1.4 and 13.1); the 1.35 rows v1.35.4's, read
from the upstream code at that tag (pkg/features/kube_features.go, apis/config/v1,
plugins/registry.go).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.framework.features import Gate, GateSpec, Stage
from kplan.framework.release import KubeVersion, Messages, NominationRules
from kplan.model.resize import ResizeAccounting

V1_34 = KubeVersion(1, 34)
V1_35 = KubeVersion(1, 35)
V1_36 = KubeVersion(1, 36)
V1_37 = KubeVersion(1, 37)

#: the release modelled when none is asked for and the input states none: the newest release whose
#: rows were judged against its real scheduler (1.36 and 1.37 are modelled from the upstream code at
#: their tags; they become the default once their oracles' results are in)
DEFAULT_RELEASE = V1_35

_A, _B, _GA = Stage.ALPHA, Stage.BETA, Stage.GA

#: the patch release each row was read from (and judged against)
PATCH_RELEASES: Mapping[KubeVersion, str] = {
    V1_34: "v1.34.1",
    V1_35: "v1.35.4",
    V1_36: "v1.36.3",
    V1_37: "v1.37.2",
}

#: pkg/features/kube_features.go: the gates that change scheduling, with their default, stage and lock
GATES: Mapping[KubeVersion, Mapping[Gate, GateSpec]] = {
    V1_34: {
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
    V1_35: {
        Gate.DYNAMIC_RESOURCE_ALLOCATION: GateSpec(True, _GA, locked=True),
        Gate.DRA_ADMIN_ACCESS: GateSpec(True, _B),
        Gate.DRA_CONSUMABLE_CAPACITY: GateSpec(False, _A),
        Gate.DRA_DEVICE_BINDING_CONDITIONS: GateSpec(False, _A),
        Gate.DRA_DEVICE_TAINT_RULES: GateSpec(False, _A),
        Gate.DRA_DEVICE_TAINTS: GateSpec(False, _A),
        Gate.DRA_EXTENDED_RESOURCE: GateSpec(False, _A),
        Gate.DRA_PARTITIONABLE_DEVICES: GateSpec(False, _A),
        Gate.DRA_PRIORITIZED_LIST: GateSpec(True, _B),
        Gate.DRA_RESOURCE_CLAIM_DEVICE_STATUS: GateSpec(True, _B),
        Gate.DRA_SCHEDULER_FILTER_TIMEOUT: GateSpec(True, _B),
        Gate.GANG_SCHEDULING: GateSpec(False, _A),
        Gate.GENERIC_WORKLOAD: GateSpec(False, _A),
        Gate.IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING: GateSpec(False, _A),
        Gate.IN_PLACE_POD_VERTICAL_SCALING: GateSpec(True, _GA, locked=True),
        Gate.MATCH_LABEL_KEYS_IN_POD_AFFINITY: GateSpec(True, _GA, locked=True),
        Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD: GateSpec(True, _B),
        Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD_SELECTOR_MERGE: GateSpec(True, _B),
        Gate.NODE_DECLARED_FEATURES: GateSpec(False, _A),
        Gate.NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD: GateSpec(True, _GA, locked=True),
        Gate.NOMINATED_NODE_NAME_FOR_EXPECTATION: GateSpec(True, _B),
        Gate.OPPORTUNISTIC_BATCHING: GateSpec(True, _B),
        Gate.POD_LEVEL_RESOURCES: GateSpec(True, _B),
        # on in v1.35.0, off again from v1.35.1 (#135903); the 1.34 line of the table says off too
        Gate.SCHEDULER_ASYNC_API_CALLS: GateSpec(False, _B),
        Gate.SCHEDULER_ASYNC_PREEMPTION: GateSpec(True, _B),
        Gate.SCHEDULER_POP_FROM_BACKOFF_Q: GateSpec(True, _B),
        Gate.SCHEDULER_QUEUEING_HINTS: GateSpec(True, _GA, locked=True),
        Gate.SIDECAR_CONTAINERS: GateSpec(True, _GA, locked=True),
        Gate.STORAGE_CAPACITY_SCORING: GateSpec(False, _A),
        Gate.TAINT_TOLERATION_COMPARISON_OPERATORS: GateSpec(False, _A),
        Gate.VOLUME_ATTRIBUTES_CLASS: GateSpec(True, _GA),
        Gate.VOLUME_LIMIT_SCALING: GateSpec(False, _A),
    },
    # v1.36.3: DRA's device features beta and on, NodeDeclaredFeatures beta and on
    V1_36: {
        Gate.DRA_ADMIN_ACCESS: GateSpec(True, _GA, locked=True),
        Gate.DRA_CONSUMABLE_CAPACITY: GateSpec(True, _B),
        Gate.DRA_DEVICE_BINDING_CONDITIONS: GateSpec(True, _B),
        Gate.DRA_DEVICE_TAINT_RULES: GateSpec(False, _B),
        Gate.DRA_DEVICE_TAINTS: GateSpec(True, _B),
        Gate.DRA_EXTENDED_RESOURCE: GateSpec(True, _B),
        Gate.DRA_PARTITIONABLE_DEVICES: GateSpec(True, _B),
        Gate.DRA_PRIORITIZED_LIST: GateSpec(True, _GA),
        Gate.DRA_RESOURCE_CLAIM_DEVICE_STATUS: GateSpec(True, _B),
        Gate.DRA_SCHEDULER_FILTER_TIMEOUT: GateSpec(True, _B),
        Gate.DYNAMIC_RESOURCE_ALLOCATION: GateSpec(True, _GA, locked=True),
        Gate.GANG_SCHEDULING: GateSpec(False, _A),
        Gate.GENERIC_WORKLOAD: GateSpec(False, _A),
        Gate.IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING: GateSpec(True, _B),
        Gate.IN_PLACE_POD_VERTICAL_SCALING: GateSpec(True, _GA, locked=True),
        Gate.MATCH_LABEL_KEYS_IN_POD_AFFINITY: GateSpec(True, _GA, locked=True),
        Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD: GateSpec(True, _B),
        Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD_SELECTOR_MERGE: GateSpec(True, _B),
        Gate.NODE_DECLARED_FEATURES: GateSpec(True, _B),
        Gate.NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD: GateSpec(True, _GA, locked=True),
        Gate.NOMINATED_NODE_NAME_FOR_EXPECTATION: GateSpec(True, _B),
        Gate.OPPORTUNISTIC_BATCHING: GateSpec(True, _B),
        Gate.POD_LEVEL_RESOURCES: GateSpec(True, _B),
        Gate.SCHEDULER_ASYNC_API_CALLS: GateSpec(False, _B),
        Gate.SCHEDULER_ASYNC_PREEMPTION: GateSpec(True, _B),
        Gate.SCHEDULER_POP_FROM_BACKOFF_Q: GateSpec(True, _B),
        Gate.SCHEDULER_QUEUEING_HINTS: GateSpec(True, _GA, locked=True),
        Gate.SIDECAR_CONTAINERS: GateSpec(True, _GA, locked=True),
        Gate.STORAGE_CAPACITY_SCORING: GateSpec(False, _A),
        Gate.TAINT_TOLERATION_COMPARISON_OPERATORS: GateSpec(False, _A),
        Gate.TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: GateSpec(False, _A),
        Gate.VOLUME_ATTRIBUTES_CLASS: GateSpec(True, _GA, locked=True),
        Gate.VOLUME_LIMIT_SCALING: GateSpec(False, _A),
        Gate.WORKLOAD_AWARE_PREEMPTION: GateSpec(False, _A),
    },
    # v1.37.2: StorageCapacityScoring, VolumeLimitScaling beta and on; NodeDeclaredFeatures GA;
    # SchedulerQueueingHints, SidecarContainers and GangScheduling (now GenericWorkload) removed
    V1_37: {
        Gate.DRA_ADMIN_ACCESS: GateSpec(True, _GA, locked=True),
        Gate.DRA_CONSUMABLE_CAPACITY: GateSpec(True, _B),
        Gate.DRA_DEVICE_BINDING_CONDITIONS: GateSpec(True, _B),
        # GA, not locked before 1.38 (kube_features.go: "LockToDefault: true in 1.38")
        Gate.DRA_DEVICE_TAINT_RULES: GateSpec(True, _GA),
        Gate.DRA_DEVICE_TAINTS: GateSpec(True, _GA),
        Gate.DRA_EXTENDED_RESOURCE: GateSpec(True, _GA, locked=True),
        Gate.DRA_PARTITIONABLE_DEVICES: GateSpec(True, _B),
        Gate.DRA_PRIORITIZED_LIST: GateSpec(True, _GA, locked=True),
        Gate.DRA_RESOURCE_CLAIM_DEVICE_STATUS: GateSpec(True, _GA, locked=True),
        Gate.DRA_SCHEDULER_FILTER_TIMEOUT: GateSpec(True, _B),
        Gate.DYNAMIC_RESOURCE_ALLOCATION: GateSpec(True, _GA, locked=True),
        Gate.GENERIC_WORKLOAD: GateSpec(False, _B),
        Gate.IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING: GateSpec(True, _B),
        Gate.IN_PLACE_POD_VERTICAL_SCALING: GateSpec(True, _GA, locked=True),
        Gate.IN_PLACE_POD_VERTICAL_SCALING_SCHEDULER_PREEMPTION: GateSpec(False, _A),
        Gate.MATCH_LABEL_KEYS_IN_POD_AFFINITY: GateSpec(True, _GA, locked=True),
        Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD: GateSpec(True, _B),
        Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD_SELECTOR_MERGE: GateSpec(True, _B),
        Gate.NODE_DECLARED_FEATURES: GateSpec(True, _GA, locked=True),
        Gate.NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD: GateSpec(True, _GA, locked=True),
        Gate.NOMINATED_NODE_NAME_FOR_EXPECTATION: GateSpec(True, _B),
        Gate.OPPORTUNISTIC_BATCHING: GateSpec(True, _B),
        Gate.POD_LEVEL_RESOURCES: GateSpec(True, _B),
        Gate.SCHEDULER_ASYNC_API_CALLS: GateSpec(False, _B),
        Gate.SCHEDULER_ASYNC_PREEMPTION: GateSpec(True, _B),
        Gate.SCHEDULER_POP_FROM_BACKOFF_Q: GateSpec(True, _B),
        Gate.STORAGE_CAPACITY_SCORING: GateSpec(True, _B),
        Gate.TAINT_TOLERATION_COMPARISON_OPERATORS: GateSpec(False, _A),
        Gate.TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: GateSpec(False, _A),
        Gate.VOLUME_ATTRIBUTES_CLASS: GateSpec(True, _GA, locked=True),
        Gate.VOLUME_LIMIT_SCALING: GateSpec(True, _B),
    },
}

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
                      (Gate.DRA_EXTENDED_RESOURCE, False), (Gate.DRA_PARTITIONABLE_DEVICES, False)}),
    V1_37: frozenset({(Gate.STORAGE_CAPACITY_SCORING, False), (Gate.VOLUME_LIMIT_SCALING, False),
                      (Gate.DRA_PARTITIONABLE_DEVICES, False)}),
}

#: default_plugins.go: the default MultiPoint set in order, with score weights (0: none given)
DEFAULT_PROFILE: Mapping[KubeVersion, tuple[tuple[str, int], ...]] = {
    V1_34: (
        ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
        ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 0), ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
    ),
    # DynamicResources scores (prioritized-list requests, #134711), with weight 2
    V1_35: (
        ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
        ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
    ),
    # DynamicResources scores with weight 2 (since 1.35); NodeDeclaredFeatures (beta, on) is appended
    # after DefaultBinder by applyFeatureGates
    V1_36: (
        ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
        ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
        ("NodeDeclaredFeatures", 0),
    ),
    # NodeName now comes before NodeUnschedulable
    V1_37: (
        ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeName", 0), ("NodeUnschedulable", 0),
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
        ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
        ("NodeDeclaredFeatures", 0),
    ),
}

_CPU_MEMORY = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

#: defaults.go / types_pluginargs.go: each plugin's args (v1 API shape) when pluginConfig has none
DEFAULT_ARGS: Mapping[KubeVersion, Mapping[str, Mapping[str, Any]]] = {
    V1_34: {
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
    # bindingTimeout (10m) is defaulted only with DRADeviceBindingConditions and
    # DRAResourceClaimDeviceStatus both on: not by default in 1.35 (the decoder's, as filterTimeout)
    V1_35: {
        "NodeResourcesFit": {"scoringStrategy": {"type": "LeastAllocated", "resources": _CPU_MEMORY}},
        "NodeResourcesBalancedAllocation": {"resources": _CPU_MEMORY},
        "PodTopologySpread": {"defaultingType": "System"},
        "InterPodAffinity": {"hardPodAffinityWeight": 1},
        "NodeAffinity": {},
        "VolumeBinding": {"bindTimeoutSeconds": 600},
        "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        "DynamicResources": {},
    },
    # the defaults that follow gates are the decoders' (SetDefaults_*Args read the gates):
    # DynamicResources' bindingTimeout (10m0s, on from 1.36), VolumeBinding's shape (on in 1.37)
    V1_36: {
        "NodeResourcesFit": {"scoringStrategy": {"type": "LeastAllocated", "resources": _CPU_MEMORY}},
        "NodeResourcesBalancedAllocation": {"resources": _CPU_MEMORY},
        "PodTopologySpread": {"defaultingType": "System"},
        "InterPodAffinity": {"hardPodAffinityWeight": 1},
        "NodeAffinity": {},
        "VolumeBinding": {"bindTimeoutSeconds": 600},
        "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        "DynamicResources": {"filterTimeout": "10s"},
    },
    V1_37: {
        "NodeResourcesFit": {"scoringStrategy": {"type": "LeastAllocated", "resources": _CPU_MEMORY}},
        "NodeResourcesBalancedAllocation": {"resources": _CPU_MEMORY},
        "PodTopologySpread": {"defaultingType": "System"},
        "InterPodAffinity": {"hardPodAffinityWeight": 1},
        "NodeAffinity": {},
        "VolumeBinding": {"bindTimeoutSeconds": 600},
        "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        "DynamicResources": {"filterTimeout": "10s"},
    },
}

#: plugins/registry.go NewInTreeRegistry: the in-tree plugins each release has
PLUGINS: Mapping[KubeVersion, frozenset[str]] = {
    V1_34: frozenset({
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
        "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
        "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder",
    }),
    # + NodeDeclaredFeatures (in the default profile only with its alpha gate, off); v1.35.4 registers
    # GangScheduling too (alpha, off): not modelled, a configuration that names it is refused
    V1_35: frozenset({
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
        "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
        "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder", "NodeDeclaredFeatures",
    }),
    # v1.36.3 and v1.37.2 also register GangScheduling, TopologyPlacement and PodGroupPodsCount (1.37:
    # DeferredPodScheduling too), in the default profile only behind gates that are off: not modelled,
    # so a configuration that names them is refused
    V1_36: frozenset({
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
        "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
        "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder", "NodeDeclaredFeatures",
    }),
    V1_37: frozenset({
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
        "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
        "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder", "NodeDeclaredFeatures",
    }),
}

#: reason texts that releases word differently
MESSAGES: Mapping[KubeVersion, Messages] = {
    V1_34: Messages(untolerated_taint="node(s) had untolerated taint {taint}"),
    # the taint goes to a log line only (#134740)
    V1_35: Messages(untolerated_taint="node(s) had untolerated taint(s)"),
    V1_36: Messages(untolerated_taint="node(s) had untolerated taint(s)"),
    # a successful preemption is reported in the pod's failure message too (#140180)
    V1_37: Messages(untolerated_taint="node(s) had untolerated taint(s)",
                    preemption_nominated="found a potential placement for pod on node {node}, "
                                         "preempting {victims} victims"),
}

#: component-helpers resource/helpers.go at the release's tag: how a running pod whose status
#: reports an in-place resize is counted on its node (kplan/model/resize.py; the pod-level part
#: follows the gate InPlacePodLevelResourcesVerticalScaling). The same rule from 1.34 (the
#: InPlacePodVerticalScaling gate beta and on) to 1.36; 1.37 takes the maximum of whole-pod sums
RESIZE_ACCOUNTING: Mapping[KubeVersion, ResizeAccounting] = {
    V1_34: ResizeAccounting.PER_CONTAINER,
    V1_35: ResizeAccounting.PER_CONTAINER,
    V1_36: ResizeAccounting.PER_CONTAINER,
    V1_37: ResizeAccounting.AGGREGATE,
}

#: status.nominatedNodeName around binding and failures (schedule_one.go, eventhandlers.go
#: deletePodFromSchedulingQueue, and the API server's pods/binding at the tag)
NOMINATION: Mapping[KubeVersion, NominationRules] = {
    V1_34: NominationRules(bind_moves_pods=True, bind_clears=False, no_post_filter_clears=False),
    V1_35: NominationRules(bind_moves_pods=False, bind_clears=True, no_post_filter_clears=True),
    V1_36: NominationRules(bind_moves_pods=False, bind_clears=True, no_post_filter_clears=True),
    V1_37: NominationRules(bind_moves_pods=False, bind_clears=True, no_post_filter_clears=True),
}

#: the structured allocator's pool rules (k8s.io/dynamic-resource-allocation at the tag; not
#: gates), as (skip_unusable_pools, counter_slices_reach_every_node) of DeviceFeatures: from 1.35
#: on a pool missing slices or invalid is skipped, and a node where nothing fits and that sees an
#: invalid pool fails with "invalid resource pools were encountered" (1.34: such a pool's devices
#: are used, an invalid pool aborts the attempt); in 1.35 and 1.36 a slice with shared counters
#: reaches every node (1.37: only the nodes it selects)
DRA_POOL_RULES: Mapping[KubeVersion, tuple[bool, bool]] = {
    V1_34: (False, False), V1_35: (True, True), V1_36: (True, True), V1_37: (True, False)}
