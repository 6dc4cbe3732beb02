"""Karpenter's provisioning scheduler: sigs.k8s.io/karpenter v1.15.0
pkg/controllers/provisioning/scheduling/scheduler.go (NewScheduler, Solve, trySchedule, add,
addToExistingNode, addToInflightNode, addToNewNodeClaim, calculateExistingNodeClaims,
buildDaemonOverheadGroups, isDaemonPodCompatible, subtractMax, filterByRemainingResources,
Results.TruncateInstanceTypes) and the parts of provisioner.go that feed it (the NodePools it uses,
ordered by weight; the nodes it counts; the NodeClaims it creates).

``solve`` runs one scheduling round on the pods kube-scheduler left pending: each pod, in Karpenter's
order, goes to the first existing node that takes it, else the new NodeClaim (fewest pods first)
that takes it, else a new NodeClaim of the first NodePool (by weight) whose instance types can; a
pod that fails has its preferences relaxed one by one and goes to the back of the queue.

Not modelled (documented in docs/autoscaler.md): volume topology and attachment limits, DRA,
reserved capacity, NodeOverlays, static NodePools (skipped, as upstream), and the
consolidateAfter rule of consolidation's simulations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from kplan.autoscaler.gosort import sort_slice
from kplan.autoscaler.karpenter import resources as res
from kplan.autoscaler.karpenter.catalogindex import catalog_index
from kplan.autoscaler.karpenter.existingnode import ExistingNode, StateNode, claim_for_node, with_state_labels
from kplan.autoscaler.karpenter.hostportusage import HostPortUsage
from kplan.autoscaler.karpenter.instancetypes import instance_type_requirements
from kplan.autoscaler.karpenter.nodeclaim import (
    DaemonOverheadGroup,
    PodData,
    filter_instance_types_by_requirements,
    satisfies_min_values,
)
from kplan.autoscaler.karpenter.nodeclaim import NodeClaim as SchedulingNodeClaim
from kplan.autoscaler.karpenter.nodeclaimtemplate import (
    NodeClaimTemplate,
    new_node_claim_template,
    order_by_weight,
    to_node_claim,
)
from kplan.autoscaler.karpenter.preferences import PREFER_NO_SCHEDULE_TOLERATION, PodView, relax
from kplan.autoscaler.karpenter.provisioner import NO_NODE_POOLS, ignored_reason
from kplan.autoscaler.karpenter.queue import Queue
from kplan.autoscaler.karpenter.requirements import Req, Requirements, from_labels, pod_requirements
from kplan.autoscaler.karpenter.results import (
    ExistingNodePods,
    KarpenterCluster,
    NewNodeClaim,
    ProvisioningResult,
)
from kplan.autoscaler.karpenter.taints import tolerates_pod
from kplan.autoscaler.karpenter.topology import DomainGroup, Topology, build_domain_groups, topology_keys
from kplan.model.karpenter import (
    DOES_NOT_EXIST,
    HOSTNAME_LABEL,
    NODE_POOL_LABEL,
    NOT_IN,
    InstanceType,
    NodeClaim,
    NodePool,
)
from kplan.model.objects import PREFER_NO_SCHEDULE, Pod, Taint

T = TypeVar("T")
NO_TEMPLATES = "nodepool requirements filtered out all available instance types"
#: with --ignore-dra-requests (on by default in v1.15.0) a pod with resource claims is not scheduled
DRA_ERROR = "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter"


def has_dra_requirements(p: Pod) -> bool:
    """HasDRARequirements (spec.resourceClaims)."""
    return bool(p.resource_claims)


#: PreferencePolicy and MinValuesPolicy values (Karpenter's --preference-policy, --min-values-policy)
RESPECT, IGNORE_PREFERENCES = "Respect", "Ignore"
STRICT, BEST_EFFORT = "Strict", "BestEffort"


def pod_data(v: PodView, respect_preferences: bool = True) -> PodData:
    """updateCachedPodData: requests (pods = 1), requirements (with the heaviest preferred
    node-affinity term, unless preferences are ignored) and the strict ones (without it)."""
    preferred = tuple(t.term for t in sorted(v.preferred_node, key=lambda t: -t.weight))
    if not respect_preferences:
        strict = pod_requirements(v.pod, strict=True, required_terms=v.required_terms, preferred=preferred)
        return PodData(res.requests_for_pods([v.pod]), strict, strict)
    reqs = pod_requirements(v.pod, required_terms=v.required_terms, preferred=preferred)
    strict = pod_requirements(v.pod, strict=True, required_terms=v.required_terms, preferred=preferred) \
        if preferred else reqs
    return PodData(res.requests_for_pods([v.pod]), reqs, strict)


def is_daemon_pod_compatible(template: NodeClaimTemplate, it: InstanceType, pod: Pod,
                             well_known: frozenset[str]) -> bool:
    """isDaemonPodCompatible: the daemon tolerates the template's taints (PreferNoSchedule
    tolerated) and one of its required node-affinity terms, tried in order, fits both the
    template and the instance type."""
    tolerations = pod.tolerations if PREFER_NO_SCHEDULE_TOLERATION in pod.tolerations else \
        (*pod.tolerations, PREFER_NO_SCHEDULE_TOLERATION)
    if tolerates_pod(template.taints, tolerations) is not None:
        return False
    v = PodView.of(pod)
    while True:
        reqs = pod_requirements(pod, strict=True, required_terms=v.required_terms)
        if template.requirements.is_compatible(reqs, well_known) and \
                instance_type_requirements(it).intersects(reqs) is None:
            return True
        if len(v.required_terms) <= 1:
            return False
        v.required_terms = v.required_terms[1:]


def build_daemon_overhead_groups(template: NodeClaimTemplate, daemons: Sequence[Pod],
                                 well_known: frozenset[str]) -> list[DaemonOverheadGroup]:
    """buildDaemonOverheadGroups: the template's instance types grouped by the set of daemons
    that would run on them."""
    groups: dict[tuple[str, ...], DaemonOverheadGroup] = {}
    for it in template.instance_type_options:
        compatible = [p for p in daemons if is_daemon_pod_compatible(template, it, p, well_known)]
        key = tuple(sorted(p.key for p in compatible))
        g = groups.get(key)
        if g is not None:
            g.instance_types.append(it)
            continue
        ports = HostPortUsage()
        for p in compatible:
            ports.add(p, p.host_ports)
        groups[key] = DaemonOverheadGroup([it], res.requests_for_pods(compatible) if compatible else {}, ports)
    return list(groups.values())


def subtract_max(remaining: Mapping[str, int], types: Sequence[InstanceType]) -> res.Resources:
    """subtractMax: each limited resource less the largest capacity among the options (a NodeClaim
    may become any of them; ``nodes`` is no capacity, so it is not taken here)."""
    if not types:
        return dict(remaining)
    most = res.max_resources(it.capacity for it in types)
    return {k: v - most.get(k, 0) for k, v in remaining.items()}


def filter_by_remaining_resources(types: Sequence[InstanceType], remaining: Mapping[str, int]) -> list[InstanceType]:
    """filterByRemainingResources: the types whose capacity stays within every remaining limit."""
    return [it for it in types if all(it.capacity.get(k, 0) <= v for k, v in remaining.items())]


def is_under_consolidate_after(pool: NodePool | None, claim: NodeClaim | None, now: float) -> bool:
    """IsUnderConsolidateAfter (pkg/utils/disruption): an initialized NodeClaim whose last pod
    event (else its initialization) is more recent than its NodePool's consolidateAfter."""
    if pool is None or claim is None or not pool.disruption.consolidate_after:
        return False
    if not claim.initialized:
        return False
    since = claim.last_pod_event_time if claim.last_pod_event_time else claim.initialized_time
    if since is None:
        return False
    return now - since < pool.disruption.consolidate_after


def is_pending(p: Pod) -> bool:
    """IsPending: phase Pending (a pod given without a status and without a node counts as pending)."""
    return p.phase == "Pending" or (not p.phase and not p.node_name)


_templates: dict[tuple[object, ...], tuple[list[NodeClaimTemplate], dict[str, list[DaemonOverheadGroup]]]] = {}
_domain_groups: dict[tuple[object, ...], dict[str, DomainGroup]] = {}
_KEEP = 4


def _remember(cache: dict[tuple[object, ...], T], key: tuple[object, ...], value: T) -> None:
    """Keep ``value`` for ``key``; the oldest entry goes past a few (the keys hold their inputs)."""
    if len(cache) >= _KEEP:
        del cache[next(iter(cache))]
    cache[key] = value


def domain_groups(pools: Sequence[NodePool], types: Mapping[str, Sequence[InstanceType]],
                  type_reqs: Mapping[InstanceType, Requirements], keys: frozenset[str]) -> dict[str, DomainGroup]:
    """build_domain_groups, kept for the same NodePools, instance types and keys (they are only read)."""
    key = (tuple(pools), tuple((name, tuple(ts)) for name, ts in types.items()), keys)
    got = _domain_groups.get(key)
    if got is None:
        got = build_domain_groups(pools, types, type_reqs, keys)
        _remember(_domain_groups, key, got)
    return got


class Scheduler:
    def __init__(self, cluster: KarpenterCluster, pending: Sequence[Pod], consolidation_now: float | None = None,
                 preference_policy: str = RESPECT, min_values_policy: str = STRICT) -> None:
        self.respect = preference_policy == RESPECT
        self.best_effort = min_values_policy == BEST_EFFORT
        self.catalog = cluster.catalog
        self.well_known = cluster.catalog.well_known_labels
        #: the catalog in columns (the fast path of the per-type tests), None for catalogs it does not cover
        self.index = catalog_index(cluster.catalog)
        pools = order_by_weight([p for p in cluster.node_pools if p.replicas is None])
        types = list(cluster.catalog.instance_types)
        types_by_pool = {p.name: types for p in pools} if types else {}
        self.tolerate_prefer_no_schedule = any(t.effect == PREFER_NO_SCHEDULE for p in pools for t in p.taints)
        # the cluster as Karpenter's state sees it
        pods_by_node: dict[str, list[Pod]] = {}
        for p in cluster.bound_pods:
            if p.node_name:
                pods_by_node.setdefault(p.node_name, []).append(p)
        # the NodeClaim behind each node: the same providerID, else status.nodeName (state.Cluster)
        claims_by_provider = {c.provider_id: c for c in cluster.node_claims if c.provider_id}
        claims_by_node = {c.node_name: c for c in cluster.node_claims if c.node_name}
        states = []
        joined: set[str] = set()
        for n in cluster.nodes:
            claim = claims_by_provider.get(n.provider_id) if n.provider_id else None
            if claim is None:
                claim = claims_by_node.get(n.name)
            if claim is not None:
                joined.add(claim.name)
            elif NODE_POOL_LABEL in n.labels:
                claim = claim_for_node(n)  # a Karpenter node given without its NodeClaim
            n = with_state_labels(n)
            if n.name in cluster.deleting or (claim is not None and claim.deletion_time is not None):
                continue
            states.append(StateNode(n, claim, tuple(pods_by_node.get(n.name, ()))))
        for c in cluster.node_claims:
            # a NodeClaim without a Node is in state once it is launched (status.providerID set)
            if c.name not in joined and c.provider_id and c.deletion_time is None and c.name not in cluster.deleting:
                states.append(StateNode(None, c, ()))
        node_by_name = {n.name: n for n in cluster.nodes}
        type_reqs = {it: instance_type_requirements(it) for it in types}
        self.topology = Topology(
            domain_groups(pools, types_by_pool, type_reqs, topology_keys(pending, cluster.bound_pods)),
            [(s.node, s.labels()) for s in states if s.node is not None],
            cluster.bound_pods, node_by_name, {p.uid for p in pending}, cluster.namespace_labels, self.respect)
        for p in pending:
            self.topology.update(PodView.of(p))
        # the templates (NodePools whose requirements leave some instance type) and their DaemonSet
        # overhead groups depend only on the NodePools, the catalog and the DaemonSet pods: built once
        # for a run's rounds and a consolidation's simulations (kept for the last few inputs)
        daemons = tuple(p for p in cluster.daemonset_pods if not has_dra_requirements(p))
        inputs_key = (tuple(pools), cluster.catalog, daemons, self.best_effort)
        cached = _templates.get(inputs_key)
        if cached is None:
            templates: list[NodeClaimTemplate] = []
            for pool in pools:
                if pool.name not in types_by_pool:
                    continue
                t = new_node_claim_template(pool)
                everything = [DaemonOverheadGroup(list(types_by_pool[pool.name]), {}, HostPortUsage())]
                t.instance_type_options, _, _ = filter_instance_types_by_requirements(
                    types_by_pool[pool.name], t.requirements, None, {}, everything, {}, self.best_effort,
                    self.well_known, self.index)
                if t.instance_type_options:
                    templates.append(t)
            groups = {t.name: build_daemon_overhead_groups(t, daemons, self.well_known) for t in templates}
            cached = (templates, groups)
            _remember(_templates, inputs_key, cached)
        self.templates, self.daemon_groups = cached
        self.remaining: dict[str, res.Resources] = {p.name: dict(p.limits) for p in pools}
        self.existing: list[ExistingNode] = []
        self.deleting = cluster.deleting
        #: existing nodes a consolidation simulation keeps non-pending pods off (scheduler.go's rule)
        self.under_consolidate_after: set[str] = set()
        pools_by_name = {p.name: p for p in pools}
        for s in states:
            taints = s.taints()
            fitting = [p for p in daemons if self._daemon_fits_node(p, s, taints)]
            self.existing.append(ExistingNode(s, self.topology, taints, res.requests_for_pods(fitting)))
            owner = s.labels().get(NODE_POOL_LABEL, "")
            if consolidation_now is not None and is_under_consolidate_after(pools_by_name.get(owner), s.claim,
                                                                            consolidation_now):
                self.under_consolidate_after.add(s.name)
            if owner in self.remaining:
                self.remaining[owner] = res.subtract(self.remaining[owner], s.capacity())
        self.existing.sort(key=lambda e: (not e.initialized, e.name))
        # what each existing node has left, as columns: a pod is tried only on the nodes it fits
        # (CanAdd fails on the others whatever else holds), in the same order
        names = sorted({k for e in self.existing for k in e.remaining} | {k for p in pending for k in p.requests}
                       | {"pods"})
        self.columns = {k: j for j, k in enumerate(names)}
        self.left = np.array([[e.remaining.get(k, 0) for k in names] for e in self.existing],
                             dtype=np.int64).reshape(len(self.existing), len(names))
        # and their label requirements as codes per key; a node whose requirements gained a key
        # (a pod's NotIn on a label it lacks) is "changed" and always checked the readable way
        self.label_codes: dict[str, npt.NDArray[np.int64]] = {}
        vocabs: dict[str, dict[str, int]] = {}
        count = len(self.existing)
        for i, e in enumerate(self.existing):
            for key in e.requirements.keys():
                codes = self.label_codes.get(key)
                if codes is None:
                    codes = self.label_codes[key] = np.full(count, -1, dtype=np.int64)
                vocab = vocabs.setdefault(key, {})
                codes[i] = vocab.setdefault(next(iter(e.requirements.get(key).values)), len(vocab))
        self.label_vocab: dict[str, list[str]] = {k: list(v) for k, v in vocabs.items()}
        self.base_keys = [frozenset(e.requirements.keys()) for e in self.existing]
        self.changed = np.zeros(count, dtype=bool)
        self._allowed: dict[Req, npt.NDArray[np.bool_]] = {}
        self.new_claims: list[SchedulingNodeClaim] = []
        self._hostnames = 0

    def _daemon_fits_node(self, p: Pod, s: StateNode, taints: tuple[Taint, ...]) -> bool:
        """isDaemonPodCompatibleWithNode: tolerates the node's taints and its required terms
        fit the node's labels."""
        if tolerates_pod(taints, p.tolerations) is not None:
            return False
        return from_labels(s.labels()).compatible(pod_requirements(p, strict=True)) is None

    # ------------------------------------------------------------------------------ one pod
    def try_schedule(self, pod: Pod) -> str | None:
        """trySchedule: add the pod, relaxing its preferences one at a time while it fails."""
        if has_dra_requirements(pod):
            return DRA_ERROR  # a DRAError is returned before any relaxation
        v = PodView.of(pod)
        while True:
            err = self.add(v, pod_data(v, self.respect))
            if err is None:
                return None
            if not relax(v, self.tolerate_prefer_no_schedule):
                return err
            self.topology.update(v)

    def _allowed_codes(self, r: Req) -> npt.NDArray[np.bool_]:
        got = self._allowed.get(r)
        if got is None:
            undefined_ok = r.operator in (NOT_IN, DOES_NOT_EXIST)
            got = np.array([r.has(v) for v in self.label_vocab[r.key]] + [undefined_ok], dtype=bool)
            if len(self._allowed) < 65536:
                self._allowed[r] = got
        return got

    def candidate_existing_nodes(self, requests: res.Resources, pod_reqs: Requirements) -> list[int]:
        """The positions, in order, of the existing nodes CanAdd can accept the pod on: those whose
        remaining resources fit ``requests`` (resources.Fits) and whose requirements are
        compatible with the pod's (for nodes with only their labels' requirements, read from the
        codes; changed nodes are kept for the readable check). CanAdd fails on every other node."""
        if not self.existing:
            return []
        ok = ~(self.left < 0).any(axis=1)
        for k, v in requests.items():
            j = self.columns.get(k)
            if j is None:
                if v > 0:
                    return []
                continue
            ok &= self.left[:, j] >= v
        for key in pod_reqs.keys():
            r = pod_reqs.get(key)
            codes = self.label_codes.get(key)
            if codes is None:
                if r.operator not in (NOT_IN, DOES_NOT_EXIST):
                    ok &= self.changed
                continue
            ok &= self._allowed_codes(r)[codes] | self.changed  # code -1 reads "undefined"
        return [int(i) for i in np.flatnonzero(ok)]

    def add(self, v: PodView, data: PodData) -> str | None:
        pod = v.pod
        for i in self.candidate_existing_nodes(data.requests, data.requirements):
            node = self.existing[i]
            if node.name in self.under_consolidate_after and not is_pending(pod) and pod.node_name not in self.deleting:
                continue
            r = node.can_add(pod, data.requests, data.requirements, data.strict_requirements, v.tolerations)
            if not isinstance(r, str):
                node.add(pod, data.requests, r)
                for k, q in data.requests.items():
                    self.left[i, self.columns[k]] -= q
                if not self.changed[i] and frozenset(r.keys()) != self.base_keys[i]:
                    self.changed[i] = True
                return None
        sort_slice(self.new_claims, lambda a, b: len(a.pods) < len(b.pods))
        for claim in self.new_claims:
            if claim.cannot_fit(data.requests):
                continue
            got = claim.can_add(pod, data, v.tolerations, False)
            if not isinstance(got, str):
                claim.add(pod, data, *got)
                return None
        if not self.templates:
            return NO_TEMPLATES
        return self.add_to_new_node_claim(v, data)

    def add_to_new_node_claim(self, v: PodView, data: PodData) -> str | None:
        errors: list[str] = []
        for t in self.templates:
            types = t.instance_type_options
            remaining = self.remaining.get(t.name)
            if remaining is not None:
                if remaining.get(res.NODE) == 0 and res.NODE in remaining:
                    errors.append(f"node limits have been exhausted for nodepool (NodePool={t.name})")
                    continue
                types = filter_by_remaining_resources(types, remaining)
                if not types:
                    errors.append(f"all available instance types exceed limits for nodepool (NodePool={t.name})")
                    continue
            self._hostnames += 1
            claim = SchedulingNodeClaim(t, self.topology, self.daemon_groups[t.name], types,
                              f"hostname-placeholder-{self._hostnames:04d}", self.well_known, self.index)
            got = claim.can_add(v.pod, data, v.tolerations, self.best_effort)
            if isinstance(got, str):
                errors.append(got)
                continue
            claim.add(v.pod, data, *got)
            self.new_claims.append(claim)
            self.remaining[t.name] = subtract_max(self.remaining.get(t.name, {}), claim.instance_type_options)
            return None
        return "; ".join(errors)

    # ------------------------------------------------------------------------------ the round
    def solve(self, pending: Sequence[Pod]) -> ProvisioningResult:
        errors: dict[str, str] = {}
        q = Queue(pending, lambda p: p.requests)
        while True:
            pod = q.pop()
            if pod is None:
                break
            err = self.try_schedule(pod)
            if err is not None:
                errors[pod.uid] = err
                self.topology.update(PodView.of(pod))
                q.push(pod)
            else:
                errors.pop(pod.uid, None)
        claims = []
        for c in self.new_claims:
            made = self.finalize(c)
            if isinstance(made, str):
                for p in c.pods:
                    errors[p.uid] = made
            else:
                claims.append(made)
        existing = tuple(ExistingNodePods(e.name, e.state.claim.name if e.state.claim is not None else "",
                                          tuple(e.pods), e.initialized) for e in self.existing if e.pods)
        by_key = {p.uid: p.key for p in pending}
        return ProvisioningResult(tuple(claims), existing,
                                  {by_key[p.uid]: errors[p.uid] for p in pending if p.uid in errors})

    def finalize(self, c: SchedulingNodeClaim) -> NewNodeClaim | str:
        """FinalizeScheduling, TruncateInstanceTypes and ToNodeClaim."""
        reqs: Requirements = c.requirements.copy()
        reqs.remove(HOSTNAME_LABEL)
        requests = res.merge(c.requests, c.daemon_requests())
        types, final, labels = to_node_claim(reqs, c.instance_type_options, c.template.labels, self.well_known,
                                             self.index)
        if reqs.has_min_values() and not self.best_effort:
            _, _, err = satisfies_min_values(types, reqs)
            if err is not None:
                return ("pod didn’t schedule because NodePool couldn’t meet minValues requirements, validating "
                        f"minValues, {err} (NodePool={c.template.name})")
        relaxed = any(r.min_values is not None and c.template.requirements.get(r.key).min_values is not None
                      and r.min_values < (c.template.requirements.get(r.key).min_values or 0) for r in reqs.values())
        return NewNodeClaim(
            node_pool=c.template.name,
            instance_types=tuple(types),
            pods=tuple(c.pods),
            requirements=final.spec(),
            labels=labels,
            taints=c.template.taints,
            startup_taints=c.template.startup_taints,
            requests=requests,
            min_values_relaxed=relaxed,
        )


def solve(cluster: KarpenterCluster, pending: Sequence[Pod], *,
          consolidation_now: float | None = None, preference_policy: str = RESPECT,
          min_values_policy: str = STRICT) -> ProvisioningResult:
    """One provisioning round of Karpenter for ``pending`` (the pods kube-scheduler could not place,
    or a consolidation's candidates' pods). ``consolidation_now`` (seconds since the epoch) makes it
    a consolidation simulation (IsConsolidationSimulation): an existing node still under its
    NodePool's consolidateAfter takes no pod that is not pending, unless the pod's node is being
    deleted. ``preference_policy`` ("Respect" or "Ignore") and ``min_values_policy`` ("Strict" or
    "BestEffort") are Karpenter's options of those names."""
    catalog = cluster.catalog
    ignored = {p.key: why for p in pending
               if (why := ignored_reason(p, catalog.well_known_labels, catalog.restricted_label_domains)) is not None}
    pods = [p for p in pending if p.key not in ignored]
    if not any(p.replicas is None for p in cluster.node_pools):
        # Schedule: NewScheduler finds no dynamic NodePool, and every pod is marked so
        return ProvisioningResult((), (), {p.key: NO_NODE_POOLS for p in pods}, ignored)
    result = Scheduler(cluster, pods, consolidation_now, preference_policy, min_values_policy).solve(pods)
    return ProvisioningResult(result.new_node_claims, result.existing_nodes, result.pod_errors, ignored)

