"""Constraints of a pod and node inclusion (podtopologyspread/common.go, helper/spread.go, v1.34.1).

A pod's constraints for one action (DoNotSchedule for filtering, ScheduleAnyway for scoring) are
its own ``topologySpreadConstraints`` of that action; a pod with none at all gets the plugin's
default constraints of that action, with the selector of ``DefaultSelector``: the union of the
selectors of the Services in the pod's namespace that select it, plus the selector of its
controlling ReplicationController (v1), ReplicaSet or StatefulSet (apps/v1) when that object
exists. An empty default selector means no constraints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.model.objects import HONOR, Node, Pod, SelectingObject, SpreadConstraint, Toleration
from kplan.model.selectors import LabelSelector, NodeSelector, Requirement
from kplan.plugins.nodeaffinity import pod_matches_node_affinity, required_mask
from kplan.plugins.tainttoleration import untolerated_taint

HOSTNAME = "kubernetes.io/hostname"
_CONTROLLERS = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}


def default_selector(pod: Pod, selecting: Sequence[SelectingObject]) -> LabelSelector:
    """helper.DefaultSelector."""
    labels: dict[str, str] = {}
    for o in selecting:
        # a Service with a nil selector selects nothing (GetPodServices)
        if o.kind == "Service" and o.namespace == pod.namespace and o.selector is not None \
                and o.selector.matches(pod.labels):
            labels.update(o.selector.match_labels)
    extra: tuple[Requirement, ...] = ()
    owner = pod.controller()
    if owner is not None and (owner.api_version, owner.kind) in _CONTROLLERS:
        obj = next((o for o in selecting if o.kind == owner.kind and o.namespace == pod.namespace
                    and o.name == owner.name), None)
        if obj is not None and obj.selector is not None:
            if owner.kind == "ReplicationController":
                labels.update(obj.selector.match_labels)
            else:
                extra = obj.selector.requirements()
    return LabelSelector(tuple(sorted(labels.items())), extra)


class Constraints:
    """getConstraints / filterTopologySpreadConstraints / buildDefaultConstraints, cached per
    equivalent pod (namespace, labels, owner) and action."""

    def __init__(self, defaults: Sequence[SpreadConstraint]) -> None:
        self.defaults = tuple(defaults)
        self._wanted = {action: tuple(c for c in self.defaults if c.when_unsatisfiable == action)
                        for action in {c.when_unsatisfiable for c in self.defaults}}
        #: the default constraints of an equivalent pod, by (action, namespace, labels, owner)
        self._built: dict[tuple[object, ...], tuple[SpreadConstraint, ...]] = {}
        self._selecting: tuple[Sequence[SelectingObject] | None, int] = (None, -1)

    def of(self, pod: Pod, action: str, selecting: Sequence[SelectingObject]) -> tuple[SpreadConstraint, ...]:
        if pod.spread_constraints:
            return tuple(c for c in pod.spread_constraints if c.when_unsatisfiable == action)
        wanted = self._wanted.get(action)
        if not wanted:
            return ()
        # the list itself is kept, not its id(), which a later list could reuse
        seen, seen_len = self._selecting
        if seen is not selecting or seen_len != len(selecting):
            self._built.clear()
            self._selecting = (selecting, len(selecting))
        key = (action, pod.namespace, tuple(sorted(pod.labels.items())), pod.controller())
        built = self._built.get(key)
        if built is None:
            sel = default_selector(pod, selecting)
            # one set of objects per equivalent pod: building them (dataclasses.replace) cost more
            # than the rest of the lookup, twice a cycle
            built = self._built[key] = () if sel.is_empty else tuple(replace(c, selector=sel) for c in wanted)
        return built


def has_every_key(table: NodeTable, constraints: Sequence[SpreadConstraint]) -> np.ndarray:
    """Per row of ``table``, whether the node has every constraint's topology key (read-only)."""
    has_all: np.ndarray | None = None
    for c in constraints:
        present = table.labels(c.topology_key).present
        has_all = present if has_all is None else has_all & present
    return has_all if has_all is not None else np.ones(len(table), dtype=bool)


def node_labels_match(labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints: the node has every constraint's key."""
    return all(c.topology_key in labels for c in constraints)


def matches_inclusion_policies(c: SpreadConstraint, pod: Pod, node: Node) -> bool:
    """matchNodeInclusionPolicies for one node."""
    if c.node_affinity_policy == HONOR and not pod_matches_node_affinity(pod, node.name, node.labels):
        return False
    if c.node_taints_policy == HONOR and untolerated_taint(node.taints, pod.tolerations) is not None:
        return False
    return True


class InclusionMasks:
    """matchNodeInclusionPolicies over every row of a table, cached per table and pod shape."""

    def __init__(self) -> None:
        self._affinity: dict[tuple[object, ...], tuple[NodeTable, np.ndarray]] = {}
        self._taints: dict[tuple[object, ...], tuple[NodeTable, np.ndarray]] = {}

    def affinity(self, table: NodeTable, pod: Pod) -> np.ndarray:
        na: NodeSelector | None = pod.required_node_affinity
        key = (id(table), tuple(sorted(pod.node_selector.items())), na)
        hit = self._affinity.get(key)
        if hit is None or hit[0] is not table:
            if len(self._affinity) > 256:
                self._affinity.clear()
            hit = self._affinity[key] = (table, required_mask(table, np.arange(len(table)), pod))
        return hit[1]

    def taints(self, table: NodeTable, tolerations: tuple[Toleration, ...]) -> np.ndarray:
        # the entry holds its table, so the table's id() cannot be reused while the entry lives
        key = (id(table), len(table.taint_sets), tolerations)
        hit = self._taints.get(key)
        if hit is None or hit[0] is not table:
            if len(self._taints) > 256:
                self._taints.clear()
            ok = np.array([untolerated_taint(ts, tolerations) is None for ts in table.taint_sets], dtype=bool)
            hit = self._taints[key] = (table, ok[table.taint_ids])
        return hit[1]

    def eligible(self, table: NodeTable, pod: Pod, c: SpreadConstraint) -> np.ndarray | None:
        """Rows that pass the constraint's inclusion policies (None: all of them)."""
        mask: np.ndarray | None = None
        if c.node_affinity_policy == HONOR:
            mask = self.affinity(table, pod)
        if c.node_taints_policy == HONOR:
            t = self.taints(table, pod.tolerations)
            mask = t if mask is None else mask & t
        return mask
