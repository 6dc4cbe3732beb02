"""One scale-up of the cluster-autoscaler (cluster-autoscaler core/scaleup/orchestrator/orchestrator.go,
ScaleUp, and ScaleUpToNodeGroupMinSize).

1. Groups below their minimum size grow to it (``--enforce-node-group-min-size``, which kplan
   always applies: the issue asks for it).
2. The pods kube-scheduler left unschedulable are grouped into pod equivalence groups
   (estimator/equivalence: the same controller and the same scheduling-relevant spec).
3. For each node group, in the order the file gives them: a group at its maximum size is skipped
   ("max node group size reached"); otherwise the equivalence groups whose first pod passes the
   scheduler's filters on the group's template node (with the cluster's nodes beside it) are
   estimated by the binpacking estimator, at most the group's room (maxSize - size) and
   ``--max-nodes-per-scaleup`` nodes. A group whose estimate needs no node gives no option.
4. The expander chain picks one option; its node count is capped by ``--max-nodes-total``
   (nodes of the cluster plus new ones) and the group's maximum.
5. Each pod no option helps keeps the autoscaler's reason: "pod didn't trigger scale-up:" and,
   counted per reason, why each node group could not take it.

Left out (as the documentation says): cloud quotas and resource limits (--cores-total,
--memory-total), backoff after failed scale-ups, node-group health.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kplan.autoscaler.clusterautoscaler.binpacking_estimator import PodEquivalenceGroup, estimate
from kplan.autoscaler.clusterautoscaler.expander import Chain, ClusterView, Option
from kplan.autoscaler.clusterautoscaler.nodegroupset import balance_scale_up, is_similar
from kplan.autoscaler.clusterautoscaler.predicatechecker import PredicateChecker, reserve_is_exact
from kplan.autoscaler.clusterautoscaler.price import cheapest_score
from kplan.autoscaler.clusterautoscaler.priority import group_priority
from kplan.autoscaler.clusterautoscaler.threshold_based_limiter import (
    MAX_NODES_PER_SCALEUP,
    ThresholdBasedLimiter,
)
from kplan.autoscaler.clusterautoscaler.waste import wasted_score
from kplan.model.clusterautoscaler import NodeGroup
from kplan.model.objects import Node, Pod
from kplan.scheduler.setup import SchedulerSetup

MAX_SIZE_REACHED = "max node group size reached"
MAX_TOTAL_REACHED = "max node total count already reached"
NOT_TRIGGERED = "pod didn't trigger scale-up"
HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True)
class Template:
    """A node group with its template node and the DaemonSet pods that would run on it."""

    group: NodeGroup
    node: Node
    daemon_pods: tuple[Pod, ...] = ()


@dataclass(frozen=True)
class Considered:
    """One expansion option as the autoscaler weighed it."""

    node_group: str
    node_count: int
    #: namespace/name of the pods the option's nodes take
    pods: tuple[str, ...]
    #: the first expander's score for it (least-waste: wasted CPU + memory shares; most-pods: pods;
    #: least-nodes: nodes; price: price sub-score times unfitness; priority: the group's priority), None
    #: where that expander gives none
    score: float | None = None


@dataclass
class ScaleUp:
    """What one scale-up decided."""

    #: node group → nodes added to bring it to its minimum size
    min_size_fill: dict[str, int] = field(default_factory=dict)
    #: --balance-similar-node-groups: group → nodes added, when the chosen group's nodes are shared
    balanced: dict[str, int] = field(default_factory=dict)
    considered: list[Considered] = field(default_factory=list)
    #: the chosen group and its node count (after the caps), or None
    chosen: str | None = None
    node_count: int = 0
    #: the expander that decided ("random" when the chain left several options)
    decided_by: str = ""
    #: why the count differs from the option's (a cap), "" otherwise
    capped: str = ""
    #: namespace/name of each pod no option helps → the autoscaler's reason
    unhelped: dict[str, str] = field(default_factory=dict)


def _spec_key(pod: Pod) -> tuple[object, ...]:
    ref = pod.controller()
    owner = None if ref is None else (ref.kind, ref.name, ref.uid)
    if owner is None:
        return (pod.uid,)  # a pod without a controller is its own group
    return (pod.namespace, owner, tuple(sorted(pod.labels.items())), tuple(sorted(pod.requests.items())),
            tuple(sorted(pod.node_selector.items())), pod.required_node_affinity, pod.tolerations,
            pod.affinity_required, pod.anti_affinity_required, pod.spread_constraints, pod.host_ports,
            pod.scheduler_name, pod.volumes, pod.resource_claims)


def equivalence_groups(pods: Sequence[Pod]) -> list[PodEquivalenceGroup]:
    """The pods grouped as the autoscaler groups them (same controller, same scheduling spec), in
    the order of each group's first pod."""
    groups: dict[tuple[object, ...], list[Pod]] = {}
    for p in pods:
        groups.setdefault(_spec_key(p), []).append(p)
    return [PodEquivalenceGroup(tuple(ps)) for ps in groups.values()]


def _score(option: Option, expander: str, priorities: Mapping[int, Sequence[object]], chain: Chain,
           view: ClusterView) -> float | None:
    if expander == "price":
        return cheapest_score(option, chain.prices, view.node_count)
    if expander == "least-waste":
        return wasted_score(option)
    if expander == "most-pods":
        return float(len(option.pods))
    if expander == "least-nodes":
        return float(option.node_count)
    if expander == "priority":
        import re

        prio = group_priority(option.node_group, {p: [re.compile(str(r)) for r in rs] for p, rs in priorities.items()})
        return None if prio is None else float(prio)
    return None


def _balanced(best: Option, count: int, options: Sequence[Option], templates: Sequence[Template],
              sizes: Mapping[str, int], filled: Mapping[str, int]) -> dict[str, int]:
    """The chosen option's nodes shared with the similar groups whose options take all its pods
    (filterNodeGroupsByPods), smallest group first (nodegroupset.balance_scale_up)."""
    by_name = {t.group.name: t for t in templates}
    chosen = by_name[best.node_group]
    wanted = {p.key for p in best.pods}
    group_set = [chosen]
    for o in options:
        t = by_name[o.node_group]
        if t is chosen or not wanted <= {p.key for p in o.pods}:
            continue
        if is_similar(chosen.node, chosen.daemon_pods, t.node, t.daemon_pods):
            group_set.append(t)
    return balance_scale_up([(t.group.name, sizes.get(t.group.name, 0) + filled.get(t.group.name, 0),
                              t.group.max_size) for t in group_set], count)


def fresh_node(template: Node, name: str) -> Node:
    """The template node under a new name (its hostname label too), as the autoscaler's
    FreshNodeInfoFromTemplateNodeInfo makes one."""
    from dataclasses import replace

    return replace(template, name=name, labels={**template.labels, HOSTNAME: name})


def scale_up(setup: SchedulerSetup, nodes: Sequence[Node], bound: Mapping[str, Sequence[Pod]],
             pending: Sequence[Pod], templates: Sequence[Template], sizes: Mapping[str, int], chain: Chain, *,
             max_nodes_total: int = 0, max_nodes_per_scaleup: int = MAX_NODES_PER_SCALEUP,
             priorities: Mapping[int, Sequence[str]] | None = None, reserve: bool = True,
             balance: bool = False) -> ScaleUp:
    """One scale-up (module docstring). ``sizes``: each group's current size. ``reserve``: let the
    estimator put its nodes in the snapshot at once where that gives the same answer
    (predicatechecker.reserve_is_exact); False: one by one, as upstream. ``balance``:
    --balance-similar-node-groups (nodegroupset.py)."""
    out = ScaleUp()
    total = len(nodes)
    for t in templates:
        size = sizes.get(t.group.name, 0)
        if size < t.group.min_size:
            n = t.group.min_size - size
            if max_nodes_total > 0:
                n = max(0, min(n, max_nodes_total - total))
            if n > 0:
                out.min_size_fill[t.group.name] = n
                total += n
    groups = equivalence_groups(pending)
    if not groups:
        return out
    reasons: dict[str, Counter[str]] = {p.key: Counter() for p in pending}
    options: list[Option] = []
    for t in templates:
        size = sizes.get(t.group.name, 0) + out.min_size_fill.get(t.group.name, 0)
        room = t.group.max_size - size
        if room <= 0:
            for p in pending:
                reasons[p.key][MAX_SIZE_REACHED] += 1
            continue
        probe = PredicateChecker(setup, nodes, bound)
        probe_name = f"template-node-for-{t.group.name}"
        probe.add_node(fresh_node(t.node, probe_name), t.daemon_pods)
        fitting: list[PodEquivalenceGroup] = []
        for g in groups:
            why = probe.why(g.pods[0], probe_name)
            if why is None:
                fitting.append(g)
            else:
                for p in g.pods:
                    reasons[p.key][why] += 1
        if not fitting:
            continue
        checker = PredicateChecker(setup, nodes, bound)
        limit = room if max_nodes_per_scaleup <= 0 else min(room, max_nodes_per_scaleup)

        def new_node(i: int, t: Template = t) -> tuple[Node, tuple[Pod, ...]]:
            return fresh_node(t.node, f"template-{t.group.name}-{i}"), t.daemon_pods

        if reserve and reserve_is_exact(setup, [p for g in fitting for p in g.pods], t.daemon_pods):
            # the estimate's nodes in the snapshot at once: one build instead of one per node
            checker.reserve([new_node(i) for i in range(min(limit, sum(len(g.pods) for g in fitting)))])

        got = estimate(fitting, t.node, checker, new_node, ThresholdBasedLimiter(limit))
        if got.node_count > 0:
            options.append(Option(t.group.name, got.node_count, tuple(got.pods), t.node))
    first = chain.names[0] if chain.names else ""
    view = ClusterView(len(nodes))
    out.considered = [Considered(o.node_group, o.node_count, tuple(p.key for p in o.pods),
                                 _score(o, first, priorities or {}, chain, view)) for o in options]
    helped = {p.key for o in options for p in o.pods}
    if options:
        if max_nodes_total > 0 and total >= max_nodes_total:
            for o in options:
                for p in o.pods:
                    reasons[p.key][MAX_TOTAL_REACHED] += 1
            helped = set()
        else:
            best, by = chain.best_option(options, view)
            if best is not None:
                count = best.node_count
                if max_nodes_total > 0 and total + count > max_nodes_total:
                    count = max_nodes_total - total
                    out.capped = f"capped at {count} by --max-nodes-total {max_nodes_total}"
                out.chosen, out.node_count, out.decided_by = best.node_group, count, by
                if balance:
                    out.balanced = _balanced(best, count, options, templates, sizes, out.min_size_fill)
    for key, counted in reasons.items():
        if key in helped:
            continue
        text = ", ".join(f"{n} {why}" for why, n in sorted(counted.items()))
        out.unhelped[key] = f"{NOT_TRIGGERED}: {text}" if text else NOT_TRIGGERED
    return out
