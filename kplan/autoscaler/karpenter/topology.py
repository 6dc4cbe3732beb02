"""Topology spread and pod (anti-)affinity as Karpenter's scheduler sees them: sigs.k8s.io/karpenter
v1.15.0 pkg/controllers/provisioning/scheduling/topology.go, topologygroup.go,
topologydomaingroup.go and topologynodefilter.go.

Karpenter keeps one group per distinct constraint (spread, affinity or anti-affinity, with its
key, namespaces, selector, skew and node filter) with a count per domain; pods being placed own the
groups of their constraints; a placement records its domain; a node (or new NodeClaim) is narrowed
to the domains a group allows. Preferred affinity terms and ScheduleAnyway constraints count as
required until the pod's preferences are relaxed. Existing pods' required anti-affinity keeps
matching pods out of their domains (the inverse groups).

Deviation: where upstream walks a Go map (ties between equally loaded domains, the first domain
of an affinity), the choice is random; kplan walks domains in sorted order and so picks the
smallest name among ties.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kplan.autoscaler.karpenter.preferences import PodView
from kplan.autoscaler.karpenter.requirements import (
    Req,
    Requirements,
    exists,
    from_labels,
    from_spec,
    from_term,
)
from kplan.autoscaler.karpenter.taints import tolerates_pod
from kplan.model.karpenter import HOSTNAME_LABEL, IN, InstanceType, NodePool
from kplan.model.objects import DO_NOT_SCHEDULE, HONOR, IGNORE, Node, Pod, PodAffinityTerm, Taint, Toleration
from kplan.model.selectors import LabelSelector, selector_matches

SPREAD, AFFINITY, ANTI_AFFINITY = "topology spread", "pod affinity", "pod anti-affinity"
_MAX_INT32 = 2**31 - 1


@dataclass(frozen=True)
class TopologyNodeFilter:
    """Which nodes a spread constraint counts (NodeAffinityPolicy, NodeTaintsPolicy); affinity
    groups have the empty filter, which counts every node."""

    requirements: tuple[Requirements, ...] = ()
    taint_policy: str = ""
    affinity_policy: str = ""
    tolerations: tuple[Toleration, ...] = ()

    def matches(self, taints: Sequence[Taint], reqs: Requirements) -> bool:
        if self.affinity_policy == HONOR and self.requirements:
            # upstream does not forward the compatibility options here: undefined keys fail
            if not any(reqs.is_compatible(r) for r in self.requirements):
                return False
        if self.taint_policy == HONOR and tolerates_pod(taints, self.tolerations) is not None:
            return False
        return True

    def key(self) -> tuple[object, ...]:
        return (tuple(str(r) for r in self.requirements), self.taint_policy, self.affinity_policy, self.tolerations)


def make_node_filter(v: PodView, taint_policy: str, affinity_policy: str) -> TopologyNodeFilter:
    """MakeTopologyNodeFilter: the node selector, ANDed with each required node-affinity term."""
    selector = from_labels(v.pod.node_selector)
    if v.pod.required_node_affinity is None:
        return TopologyNodeFilter((selector,), taint_policy, affinity_policy, v.tolerations)
    out = []
    for term in v.required_terms:
        r = selector.copy()
        r.add(*from_term(term))
        out.append(r)
    return TopologyNodeFilter(tuple(out), taint_policy, affinity_policy, v.tolerations)


class DomainGroup:
    """TopologyDomainGroup: the domains NodePools can create for one key, with the taints of the
    NodePools that create them (a domain any untainted pool creates is untainted)."""

    __slots__ = ("taints",)

    def __init__(self) -> None:
        self.taints: dict[str, list[tuple[Taint, ...]]] = {}

    def insert(self, domain: str, taints: tuple[Taint, ...]) -> None:
        groups = self.taints.get(domain)
        if groups is None or not taints:
            self.taints[domain] = [taints]
            return
        if not groups[0]:
            return
        groups.append(taints)

    def for_each_domain(self, tolerations: Sequence[Toleration], taint_policy: str) -> Iterable[str]:
        for domain, groups in self.taints.items():
            if taint_policy == IGNORE or any(tolerates_pod(t, tolerations) is None for t in groups):
                yield domain


def topology_keys(pending: Sequence[Pod], bound: Sequence[Pod]) -> frozenset[str]:
    """The keys any topology group of a round can have: the pending pods' spread and (anti-)affinity
    keys and the bound pods' required anti-affinity keys. Domain groups are only read for these."""
    keys = {c.topology_key for p in pending for c in p.spread_constraints}
    for p in pending:
        keys.update(t.topology_key for t in (*p.affinity_required, *p.anti_affinity_required))
        keys.update(w.term.topology_key for w in (*p.affinity_preferred, *p.anti_affinity_preferred))
    keys.update(t.topology_key for p in bound for t in p.anti_affinity_required)
    return frozenset(keys)


def build_domain_groups(pools: Sequence[NodePool], types: Mapping[str, Sequence[InstanceType]],
                        type_reqs: Mapping[InstanceType, Requirements],
                        keys: frozenset[str] | None = None) -> dict[str, DomainGroup]:
    """buildDomainGroups: every value each NodePool's requirements and labels allow together with
    each of its instance types, and the In values of the pool's own requirements (for ``keys``
    only, when given: the groups no constraint reads are not built)."""
    groups: dict[str, DomainGroup] = {}
    for pool in pools:
        if pool.name not in types:
            continue
        base = from_spec(pool.requirements)
        base.add(*from_labels(pool.labels).values())
        for it in types[pool.name]:
            treqs = type_reqs[it]
            wanted = set(base.keys()) | set(treqs.keys())
            if keys is not None:
                wanted &= keys
            for key in sorted(wanted):
                if treqs.has(key):
                    r = treqs.get(key).intersection(base.get(key)) if base.has(key) else treqs.get(key)
                else:
                    r = base.get(key)
                g = groups.setdefault(key, DomainGroup())
                for domain in sorted(r.values):
                    g.insert(domain, pool.taints)
        for r in base.values():
            if keys is not None and r.key not in keys:
                continue
            if r.operator == IN:
                g = groups.setdefault(r.key, DomainGroup())
                for domain in sorted(r.values):
                    g.insert(domain, pool.taints)
    return groups


@dataclass(eq=False)
class TopologyGroup:
    type: str
    key: str
    namespaces: frozenset[str]
    selector: LabelSelector | None
    max_skew: int
    min_domains: int | None
    node_filter: TopologyNodeFilter
    domains: dict[str, int] = field(default_factory=dict)
    empty_domains: set[str] = field(default_factory=set)
    owners: set[str] = field(default_factory=set)

    def hash_key(self) -> tuple[object, ...]:
        return (self.key, self.type, self.namespaces, self.max_skew, self.node_filter.key(), repr(self.selector))

    def selects(self, pod: Pod) -> bool:
        return pod.namespace in self.namespaces and selector_matches(self.selector, pod.labels)

    def counts(self, pod: Pod, taints: Sequence[Taint], reqs: Requirements) -> bool:
        return self.selects(pod) and self.node_filter.matches(taints, reqs)

    def record(self, *domains: str) -> None:
        for d in domains:
            self.domains[d] = self.domains.get(d, 0) + 1
            self.empty_domains.discard(d)

    def register(self, *domains: str) -> None:
        for d in domains:
            if d not in self.domains:
                self.domains[d] = 0
                self.empty_domains.add(d)

    def get(self, pod: Pod, pod_domains: Req, node_domains: Req) -> Req:
        if self.type == SPREAD:
            return self.next_domain_topology_spread(pod, pod_domains, node_domains)
        if self.type == AFFINITY:
            return self.next_domain_affinity(pod, pod_domains, node_domains)
        return self.next_domain_anti_affinity(pod_domains, node_domains)

    def _none(self) -> Req:
        return Req(self.key, False, frozenset())

    def _in(self, *values: str) -> Req:
        return Req(self.key, False, frozenset(values))

    def domain_min_count(self, pod_domains: Req) -> int:
        """domainMinCount: the least count among the domains the pod supports (0 for hostname, and
        0 when fewer domains than minDomains are supported)."""
        if self.key == HOSTNAME_LABEL:
            return 0
        low = _MAX_INT32
        supported = 0
        for domain, count in self.domains.items():
            if pod_domains.has(domain):
                supported += 1
                low = min(low, count)
        if self.min_domains is not None and supported < self.min_domains:
            low = 0
        return low

    def next_domain_topology_spread(self, pod: Pod, pod_domains: Req, node_domains: Req) -> Req:
        low = self.domain_min_count(pod_domains)
        self_selecting = self.selects(pod)
        if self.key == HOSTNAME_LABEL and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            count = self.domains.get(host, 0) + (1 if self_selecting else 0)
            return self._in(host) if count <= self.max_skew else self._none()
        best, best_count = "", _MAX_INT32
        if node_domains.operator == IN:
            candidates = [d for d in sorted(node_domains.values) if d in self.domains]
        else:
            candidates = [d for d in sorted(self.domains) if node_domains.has(d)]
        for domain in candidates:
            count = self.domains[domain] + (1 if self_selecting else 0)
            if count - low <= self.max_skew and count < best_count:
                best, best_count = domain, count
        return self._in(best) if best else self._none()

    def any_compatible_pod_domain(self, pod_domains: Req) -> bool:
        return any(pod_domains.has(d) and c > 0 for d, c in self.domains.items())

    def next_domain_affinity(self, pod: Pod, pod_domains: Req, node_domains: Req) -> Req:
        options: set[str] = set()
        if self.key == HOSTNAME_LABEL and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            if not pod_domains.has(host):
                return self._none()
            if self.domains.get(host, 0) > 0:
                return self._in(host)
            if self.selects(pod) and (len(self.domains) == len(self.empty_domains)
                                      or not self.any_compatible_pod_domain(pod_domains)):
                return self._in(host)
            return self._none()
        if node_domains.operator == IN:
            options = {d for d in node_domains.values if pod_domains.has(d) and self.domains.get(d, 0) > 0}
        else:
            options = {d for d, c in self.domains.items() if pod_domains.has(d) and c > 0 and node_domains.has(d)}
        if options:
            return self._in(*options)
        if self.selects(pod) and (len(self.domains) == len(self.empty_domains)
                                  or not self.any_compatible_pod_domain(pod_domains)):
            both = pod_domains.intersection(node_domains)
            first = next((d for d in sorted(self.domains) if both.has(d)), None)
            if first is not None:
                options.add(first)
            first = next((d for d in sorted(self.domains) if pod_domains.has(d)), None)
            if first is not None:
                options.add(first)
        return self._in(*options) if options else self._none()

    def next_domain_anti_affinity(self, pod_domains: Req, node_domains: Req) -> Req:
        if self.key == HOSTNAME_LABEL and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            return self._in(host) if self.domains.get(host, 0) == 0 else self._none()
        if node_domains.operator == IN and len(node_domains) < len(self.empty_domains):
            options = {d for d in node_domains.values if d in self.empty_domains and pod_domains.has(d)}
        else:
            options = {d for d in self.empty_domains if node_domains.has(d) and pod_domains.has(d)}
        return self._in(*options) if options else self._none()


_TYPE_ORDER = {SPREAD: 0, AFFINITY: 1, ANTI_AFFINITY: 2}


def _group_order(tg: TopologyGroup) -> tuple[int, str]:
    return _TYPE_ORDER[tg.type], tg.key


def unsatisfiable(tg: TopologyGroup, pod_domains: Req, node_domains: Req) -> str:
    """topologyError's text: the counts as pretty.Map prints them (``k: v`` by key, joined by ", ",
    no braces, at most 25 then " and N other(s)"), and upstream's unclosed parenthesis."""
    items = sorted(tg.domains.items())
    shown = ", ".join(f"{k}: {v}" for k, v in items[:25])
    if len(items) > 25:
        shown += f" and {len(items) - 25} other(s)"
    return (f"unsatisfiable topology constraint for {tg.type}, key={tg.key} (counts = {shown}, "
            f"podDomains = {pod_domains}, nodeDomains = {node_domains}")


class Topology:
    """The topology groups of one scheduling round (NewTopology)."""

    def __init__(self, domain_groups: dict[str, DomainGroup], nodes: Sequence[tuple[Node, Mapping[str, str]]],
                 bound: Sequence[Pod], node_by_name: Mapping[str, Node], pending_uids: set[str],
                 namespace_labels: Mapping[str, Mapping[str, str]], respect_preferences: bool = True) -> None:
        self.domain_groups = domain_groups
        #: (node, its labels as state sees them) of every existing node that has a Node object
        self.nodes = nodes
        self.bound = [p for p in bound if p.deletion_time is None and p.node_name]
        self.node_by_name = node_by_name
        self.excluded = pending_uids
        self.namespace_labels = namespace_labels
        #: PreferencePolicy Respect (preferred terms and ScheduleAnyway count until relaxed) or Ignore
        self.respect = respect_preferences
        self._label_reqs: dict[str, Requirements] = {}
        self.groups: dict[tuple[object, ...], TopologyGroup] = {}
        self.inverse: dict[tuple[object, ...], TopologyGroup] = {}
        for p in self.bound:
            if p.anti_affinity_required and p.uid not in self.excluded:
                node = node_by_name.get(p.node_name)
                self.update_inverse_anti_affinity(p, node.labels if node is not None else None)

    # -------------------------------------------------------------------------------- building
    def label_requirements(self, node: Node) -> Requirements:
        """NewLabelRequirements of a node's labels, built once per node (not to be changed)."""
        got = self._label_reqs.get(node.name)
        if got is None:
            got = self._label_reqs[node.name] = from_labels(node.labels)
        return got

    def namespaces_of(self, pod: Pod, term: PodAffinityTerm) -> frozenset[str]:
        """buildNamespaceList."""
        if not term.namespaces and term.namespace_selector is None:
            return frozenset({pod.namespace})
        if term.namespace_selector is None:
            return frozenset(term.namespaces)
        chosen = {ns for ns, labels in self.namespace_labels.items() if term.namespace_selector.matches(labels)}
        return frozenset(chosen | set(term.namespaces))

    def _new_group(self, kind: str, key: str, v: PodView | None, pod: Pod, namespaces: frozenset[str],
                   selector: LabelSelector | None, max_skew: int, min_domains: int | None,
                   node_filter: TopologyNodeFilter) -> TopologyGroup:
        tg = TopologyGroup(kind, key, namespaces, selector, max_skew, min_domains, node_filter)
        dg = self.domain_groups.get(key)
        if dg is not None:
            tolerations = v.tolerations if v is not None else pod.tolerations
            for domain in dg.for_each_domain(tolerations, node_filter.taint_policy):
                tg.domains[domain] = 0
                tg.empty_domains.add(domain)
        return tg

    def update_inverse_anti_affinity(self, pod: Pod, domains: Mapping[str, str] | None) -> None:
        for term in pod.anti_affinity_required:
            tg = self._new_group(ANTI_AFFINITY, term.topology_key, None, pod, self.namespaces_of(pod, term),
                                 term.selector, _MAX_INT32, None, TopologyNodeFilter())
            tg = self.inverse.setdefault(tg.hash_key(), tg)
            if domains is not None and tg.key in domains:
                tg.record(domains[tg.key])
            tg.owners.add(pod.uid)

    def update(self, v: PodView) -> None:
        """Update: the pod owns the groups of its constraints as they stand now."""
        pod = v.pod
        for tg in self.groups.values():
            tg.owners.discard(pod.uid)
        if pod.anti_affinity_required or (self.respect and v.preferred_anti_affinity):
            self.update_inverse_anti_affinity(pod, None)
        new: list[TopologyGroup] = []
        for c in v.spread:
            if not self.respect and c.when_unsatisfiable != DO_NOT_SCHEDULE:
                continue
            nf = make_node_filter(v, c.node_taints_policy, c.node_affinity_policy)
            new.append(self._new_group(SPREAD, c.topology_key, v, pod, frozenset({pod.namespace}), c.selector,
                                       c.max_skew, c.min_domains, nf))
        preferred = self.respect
        terms = [(AFFINITY, t) for t in pod.affinity_required]
        terms += [(AFFINITY, w.term) for w in v.preferred_affinity if preferred]
        terms += [(ANTI_AFFINITY, t) for t in pod.anti_affinity_required]
        terms += [(ANTI_AFFINITY, w.term) for w in v.preferred_anti_affinity if preferred]
        for kind, term in terms:
            new.append(self._new_group(kind, term.topology_key, v, pod, self.namespaces_of(pod, term),
                                       term.selector, _MAX_INT32, None, TopologyNodeFilter()))
        for tg in new:
            h = tg.hash_key()
            existing = self.groups.get(h)
            if existing is None:
                self.count_domains(tg)
                self.groups[h] = tg
            else:
                tg = existing
            tg.owners.add(pod.uid)

    def count_domains(self, tg: TopologyGroup) -> None:
        """countDomains: the existing nodes' domains, and the bound pods the group selects."""
        for node, labels in self.nodes:
            if not tg.node_filter.matches(node.taints, self.label_requirements(node)):
                continue
            domain = labels.get(tg.key)
            if domain is not None and domain not in tg.domains:
                tg.domains[domain] = 0
                tg.empty_domains.add(domain)
        for p in self.bound:
            if p.uid in self.excluded or p.namespace not in tg.namespaces:
                continue
            if not selector_matches(tg.selector, p.labels):
                continue
            host = self.node_by_name.get(p.node_name)
            if host is None:
                continue
            domain = host.labels.get(tg.key)
            if domain is None and tg.key == HOSTNAME_LABEL:
                domain = host.name
            if domain is None:
                continue
            if not tg.node_filter.matches(host.taints, self.label_requirements(host)):
                continue
            tg.record(domain)

    # -------------------------------------------------------------------------------- scheduling
    def register(self, key: str, domain: str) -> None:
        for tg in (*self.groups.values(), *self.inverse.values()):
            if tg.key == key:
                tg.register(domain)

    def record(self, pod: Pod, taints: Sequence[Taint], reqs: Requirements, well_known: frozenset[str]) -> None:
        del well_known  # Counts does not pass the options on to the node filter
        for tg in self.groups.values():
            if tg.counts(pod, taints, reqs):
                domains = reqs.get(tg.key)
                if tg.type == ANTI_AFFINITY:
                    tg.record(*sorted(domains.values))
                elif len(domains) == 1:
                    tg.record(next(iter(domains.values)))
        for tg in self.inverse.values():
            if pod.uid in tg.owners:
                tg.record(*sorted(reqs.get(tg.key).values))

    def matching(self, pod: Pod, taints: Sequence[Taint], reqs: Requirements) -> list[TopologyGroup]:
        """getMatchingTopologies: the pod's own groups, then the inverse ones that count it. Upstream
        walks a Go map (the order names the failing group in the error); kplan, as the oracle,
        orders each part by type (spread, affinity, anti-affinity), then key."""
        own = sorted((tg for tg in self.groups.values() if pod.uid in tg.owners), key=_group_order)
        inverse = sorted((tg for tg in self.inverse.values() if tg.counts(pod, taints, reqs)), key=_group_order)
        return own + inverse

    def add_requirements(self, pod: Pod, taints: Sequence[Taint], pod_reqs: Requirements, node_reqs: Requirements,
                         well_known: frozenset[str] = frozenset()) -> Requirements | str:
        """AddRequirements: the node's requirements narrowed to the domains every matching group
        allows, or the topology error."""
        del well_known
        out = node_reqs.copy()
        for tg in self.matching(pod, taints, node_reqs):
            pod_domains = pod_reqs.get(tg.key) if pod_reqs.has(tg.key) else exists(tg.key)
            node_domains = node_reqs.get(tg.key) if node_reqs.has(tg.key) else exists(tg.key)
            domains = tg.get(pod, pod_domains, node_domains)
            if len(domains) == 0:
                return unsatisfiable(tg, pod_domains, node_domains)
            out.add(domains)
        return out
