"""NodeDeclaredFeatures (plugins/nodedeclaredfeatures/nodedeclaredfeatures.go, v1.36.3 and v1.37.2;
the features from k8s.io/component-helpers/nodedeclaredfeatures at v0.36.3 and v0.37.2, KEP-5328).

PreFilter: Skip for a pod that needs no node feature, and for every pod with the
NodeDeclaredFeatures gate off (upstream's New then returns an empty plugin), so Filter never
runs for it. Filter: a pod needs the node features its spec implies (each registered feature's
InferForScheduling); a node fits when its ``status.declaredFeatures`` hold all of them, else
UnschedulableAndUnresolvable "node(s) didn't match Pod's required features".

The node's list is read as the scheduler cache reads it (FeatureMapper.TryMap): one merge walk
of the list against the registered names in byte order, which assumes the list is sorted (the
API server keeps it so); names not registered are ignored, and in a list out of order a name
the walk has passed is missed, as upstream misses it.

Only the features whose InferForScheduling can be true are modelled apart; the others
(ExtendWebSocketsToKubelet, the in-place resize ones, the DRA ones) are registered names a
node may declare, never requirements of a pod being scheduled. No feature of these releases
has a MaxVersion, so the scheduler's own version plays no part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import NODE_ADD
from kplan.framework.features import Gate
from kplan.framework.interfaces import (
    EnqueueExtensions,
    FixedInputFilter,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
)
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id, skip
from kplan.model.objects import FeatureFacts, Pod
from kplan.plugins.helper import PluginBase, decode_rules

NAME = "NodeDeclaredFeatures"
REASON = "node(s) didn't match Pod's required features"
_REASON_ID = reason_id(REASON)

Infer = Callable[[FeatureFacts], bool]


def _never(facts: FeatureFacts) -> bool:
    return False


def _restart_all_containers(facts: FeatureFacts) -> bool:
    """restartallcontainers: a (init) container's restartPolicyRules asks RestartAllContainers."""
    return facts.restart_all_containers


def _user_namespaces_host_network(facts: FeatureFacts) -> bool:
    """usernamespaceshostnetwork: hostNetwork with hostUsers set to false."""
    return facts.host_network and facts.host_users is False


def _bind_mount_options(facts: FeatureFacts) -> bool:
    """volumebindmountoptions: a volume mount of any container with bindMountOptions."""
    return facts.bind_mount_options


#: features.AllFeatures of component-helpers v0.36.3: name → InferForScheduling
FEATURES_1_36: dict[str, Infer] = {
    "RestartAllContainersOnContainerExits": _restart_all_containers,
    "InPlacePodLevelResourcesVerticalScaling": _never,
    "ExtendWebSocketsToKubelet": _never,
    "InPlacePodVerticalScalingInitContainers": _never,
    "UserNamespacesHostNetworkSupport": _user_namespaces_host_network,
}

#: v0.37.2 adds four features, one of them inferred for scheduling (VolumeBindMountOptions)
FEATURES_1_37: dict[str, Infer] = {
    **FEATURES_1_36,
    "InPlacePodVerticalScalingMemoryBackedVolumes": _never,
    "DRANodeAllocatableResources": _never,
    "VolumeBindMountOptions": _bind_mount_options,
    "DRAOptionalNodeOperations": _never,
}

#: the feature registries by the component-helpers release they are read from
FEATURE_REGISTRIES: dict[str, dict[str, Infer]] = {"1.36": FEATURES_1_36, "1.37": FEATURES_1_37}


@dataclass(frozen=True)
class NodeDeclaredFeaturesRules:
    """NodeDeclaredFeatures' release rules (framework/release_tables.py)."""

    #: the component-helpers release whose feature registry the release has (FEATURE_REGISTRIES)
    feature_registry: str


def declared(registered: tuple[str, ...], node_features: tuple[str, ...]) -> frozenset[str]:
    """FeatureMapper.TryMap: the registered names (sorted) found in the node's list by one
    merge walk that takes the list as sorted."""
    found = []
    i = j = 0
    while i < len(node_features) and j < len(registered):
        if node_features[i] == registered[j]:
            found.append(registered[j])
            i += 1
            j += 1
        elif node_features[i] < registered[j]:
            i += 1
        else:
            j += 1
    return frozenset(found)


class NodeDeclaredFeatures(PluginBase, PreFilterPlugin, FixedInputFilter, EnqueueExtensions):
    name = NAME

    def __init__(self, args: object, handle: Handle) -> None:
        super().__init__(args, handle)
        self.rules = decode_rules(NodeDeclaredFeaturesRules, handle, NAME)
        self.features = FEATURE_REGISTRIES[self.rules.feature_registry]
        self.enabled = handle.release.enabled(Gate.NODE_DECLARED_FEATURES)
        # Go compares strings bytewise; Python's str order is by code point, the same for UTF-8
        self._registered = tuple(sorted(self.features))
        self._node_features: dict[tuple[str, ...], frozenset[str]] = {}
        #: required() per distinct FeatureFacts (a handful of values: four flags)
        self._required: dict[FeatureFacts, frozenset[str]] = {}

    def required(self, pod: Pod) -> frozenset[str]:
        """InferForPodScheduling: the features the pod needs of its node (a function of the
        pod's FeatureFacts alone, so kept per value)."""
        facts = pod.feature_facts
        found = self._required.get(facts)
        if found is None:
            found = self._required[facts] = frozenset(name for name, infer in self.features.items() if infer(facts))
        return found

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching): the features the pod needs (FeatureSet.String)."""
        return ((signers.FEATURES, tuple(sorted(self.required(pod)))),)

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        """PreFilter: Skip when the pod needs no feature (or the gate is off). Besides being
        upstream's, the Skip matters to preemption: a Filter that PreFilter did not skip and that
        is neither the resource filter nor a selective-state one closes the dry run's fast path
        (Framework.fast_path), and every candidate node is then forked victim by victim."""
        if not self.filter_signature(pod):
            return None, skip(NAME)
        return None, OK

    def filter_signature(self, pod: Pod) -> frozenset[str]:
        return self.required(pod) if self.enabled else frozenset()

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        needed = self.filter_signature(pod)
        if not needed:
            return Verdicts.passing(len(rows))
        failed = np.fromiter((not needed <= self._declared(table.nodes[r].declared_features) for r in rows),
                             dtype=bool, count=len(rows))
        return Verdicts.where(failed, Code.UNRESOLVABLE, _REASON_ID)

    def _declared(self, node_features: tuple[str, ...]) -> frozenset[str]:
        found = self._node_features.get(node_features)
        if found is None:
            found = self._node_features[node_features] = declared(self._registered, node_features)
        return found

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        # a node added (or its declared features changed, which a simulation never does)
        return [(NODE_ADD, None)] if self.enabled else []
