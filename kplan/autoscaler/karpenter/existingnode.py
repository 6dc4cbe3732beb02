"""An existing node (or a NodeClaim in flight) as a place for pending pods: sigs.k8s.io/karpenter
v1.15.0 pkg/controllers/provisioning/scheduling/existingnode.go, with the state it reads from
pkg/controllers/state/statenode.go (Labels, Taints, Allocatable, Capacity, Initialized)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from kplan.autoscaler.karpenter import resources as res
from kplan.autoscaler.karpenter.hostportusage import HostPortUsage
from kplan.autoscaler.karpenter.requirements import Req, Requirements, from_labels
from kplan.autoscaler.karpenter.taints import is_known_ephemeral_taint, tolerates_pod
from kplan.autoscaler.karpenter.topology import Topology
from kplan.model.karpenter import (
    HOSTNAME_LABEL,
    NODE_INITIALIZED_LABEL,
    NODE_POOL_LABEL,
    NODE_REGISTERED_LABEL,
    NodeClaim,
)
from kplan.model.objects import Node, Pod, Taint, Toleration


def with_state_labels(node: Node) -> Node:
    """A Karpenter node (labelled karpenter.sh/nodepool) with karpenter.sh/registered and
    karpenter.sh/initialized "true" when the input does not give them. Karpenter reads a node's
    state from these labels (StateNode.Initialized); a node written by hand rarely carries them,
    and the oracle (as K3's disruption views) takes such a node as registered and initialized."""
    if NODE_POOL_LABEL not in node.labels or (NODE_INITIALIZED_LABEL in node.labels
                                              and NODE_REGISTERED_LABEL in node.labels):
        return node
    labels = dict(node.labels)
    labels.setdefault(NODE_REGISTERED_LABEL, "true")
    labels.setdefault(NODE_INITIALIZED_LABEL, "true")
    return dataclasses.replace(node, labels=MappingProxyType(labels))


def claim_for_node(node: Node) -> NodeClaim:
    """The NodeClaim of a Karpenter node the input gives without one: launched, registered and
    initialized when the node was created, with the node's labels, capacity and allocatable."""
    created = node.creation_time if node.creation_time is not None else 0.0
    return NodeClaim(name=node.name, node_pool=node.labels.get(NODE_POOL_LABEL, ""), labels=node.labels,
                     node_name=node.name, provider_id=node.provider_id, capacity=node.capacity,
                     allocatable=node.allocatable, launched=True, registered=True, initialized=True,
                     initialized_time=created, creation_time=created)


def is_owned_by_daemonset(p: Pod) -> bool:
    return any(o.kind == "DaemonSet" and o.api_version in ("apps/v1", "") for o in p.owners)


@dataclass(eq=False)
class StateNode:
    """A node as Karpenter's cluster state joins it with its NodeClaim."""

    node: Node | None
    claim: NodeClaim | None
    pods: tuple[Pod, ...]

    @property
    def managed(self) -> bool:
        return self.claim is not None

    @property
    def name(self) -> str:
        if self.node is not None:
            return self.node.name
        assert self.claim is not None
        return self.claim.name

    def labels(self) -> Mapping[str, str]:
        if self.node is None:
            assert self.claim is not None
            return self.claim.labels
        return self.node.labels

    def hostname(self) -> str:
        return self.labels().get(HOSTNAME_LABEL) or self.name

    def initialized(self) -> bool:
        """A managed node is initialized once its Node carries karpenter.sh/initialized=true."""
        if self.managed:
            return self.node is not None and self.node.labels.get(NODE_INITIALIZED_LABEL) == "true"
        return True

    def taints(self) -> tuple[Taint, ...]:
        """Taints: the claim's until the node registers; an uninitialized managed node's without
        the ephemeral and startup taints it is expected to shed."""
        if self.node is None:
            assert self.claim is not None
            taints = self.claim.taints
        else:
            taints = self.node.taints
        if not self.initialized() and self.claim is not None:
            startup = {(t.key, t.effect) for t in self.claim.startup_taints}
            taints = tuple(t for t in taints if not is_known_ephemeral_taint(t) and (t.key, t.effect) not in startup)
        return taints

    def allocatable(self) -> Mapping[str, int]:
        if not self.initialized() and self.claim is not None:
            if self.node is not None:
                out = dict(self.node.allocatable)
                for k, v in self.claim.allocatable.items():
                    if not out.get(k):
                        out[k] = v
                return out
            return self.claim.allocatable
        assert self.node is not None
        return self.node.allocatable

    def capacity(self) -> res.Resources:
        """Capacity, with the ``nodes`` pseudo-resource 1 (what NodePool limits count)."""
        if not self.initialized() and self.claim is not None:
            if self.node is not None:
                out = dict(self.node.capacity)
                for k, v in self.claim.capacity.items():
                    if not out.get(k):
                        out[k] = v
            else:
                out = dict(self.claim.capacity)
        else:
            assert self.node is not None
            out = dict(self.node.capacity)
        out[res.NODE] = 1
        return out

    def available(self) -> res.Resources:
        return res.subtract(self.allocatable(), res.requests_for_pods(self.pods) if self.pods else {})

    def daemonset_requests(self) -> res.Resources:
        daemons = [p for p in self.pods if is_owned_by_daemonset(p)]
        return res.merge(*(res.requests_for_pods([p]) for p in daemons)) if daemons else {}


_node_requirements: dict[object, Requirements] = {}


def node_requirements(state: StateNode) -> Requirements:
    """The requirements an existing node starts a round with: its labels' and its hostname, built
    once per Node (or NodeClaim) object and copied for each round (consolidation runs many)."""
    obj: object = state.node if state.node is not None else state.claim
    got = _node_requirements.get(obj)
    if got is None:
        got = from_labels(state.labels())
        got.add(Req(HOSTNAME_LABEL, False, frozenset({state.hostname()})))
        if len(_node_requirements) >= 65536:
            _node_requirements.clear()
        _node_requirements[obj] = got
    return got


class ExistingNode:
    __slots__ = ("state", "taints", "topology", "remaining", "requirements", "pods", "host_ports", "initialized",
                 "name")

    def __init__(self, state: StateNode, topology: Topology, taints: tuple[Taint, ...],
                 daemon_requests: res.Resources) -> None:
        """NewExistingNode: what is left once the daemons that should run there but do not yet
        are counted; requirements from the labels and the hostname."""
        self.state = state
        self.name = state.name
        self.taints = taints
        self.topology = topology
        owed = res.subtract(daemon_requests, state.daemonset_requests())
        owed = {k: max(0, v) for k, v in owed.items()}
        self.remaining = res.subtract(state.available(), owed)
        self.requirements = node_requirements(state).copy()
        self.pods: list[Pod] = []
        self.host_ports = HostPortUsage({p.key: p.host_ports for p in state.pods if p.host_ports})
        self.initialized = state.initialized()
        topology.register(HOSTNAME_LABEL, state.hostname())

    def can_add(self, pod: Pod, requests: res.Resources, pod_reqs: Requirements, strict: Requirements,
                tolerations: Sequence[Toleration]) -> Requirements | str:
        """CanAdd: the node's requirements with the pod, or why not."""
        err = tolerates_pod(self.taints, tolerations)
        if err is not None:
            return err
        err = self.host_ports.conflicts(pod, pod.host_ports)
        if err is not None:
            return f"checking host port usage, {err}"
        if not res.fits(requests, self.remaining):
            return "exceeds node resources"
        # the reasons an existing node refuses a pod are not reported (scheduler.go keeps only the
        # new NodeClaims' errors), so the requirement checks do not write them
        if not self.requirements.is_compatible(pod_reqs):
            return "incompatible requirements"
        reqs = self.requirements.copy()
        reqs.add(*pod_reqs.values())
        topo = self.topology.add_requirements(pod, self.taints, strict, reqs)
        if isinstance(topo, str):
            return topo
        if not reqs.is_compatible(topo):
            return "incompatible topology requirements"
        reqs.add(*topo.values())
        return reqs

    def add(self, pod: Pod, requests: res.Resources, reqs: Requirements) -> None:
        self.pods.append(pod)
        self.remaining = res.subtract(self.remaining, requests) | {k: -v for k, v in requests.items()
                                                                   if k not in self.remaining}
        self.requirements = reqs
        self.topology.record(pod, self.taints, reqs, frozenset())
        self.host_ports.add(pod, pod.host_ports)
