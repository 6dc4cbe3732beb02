"""kube-scheduler and a node autoscaler taking turns, as in a real cluster (``--autoscaler``).

kube-scheduler places what it can and marks the rest Unschedulable. The autoscaler looks at the
pods it may help — Karpenter's ``pod.IsProvisionable`` (pkg/utils/pod/scheduling.go): marked
Unschedulable, not bound, not preempting (no nominated node), not owned by a DaemonSet or a
Node — and launches nodes for them. Each new node joins with the pods its DaemonSets create there
(kplan.whatif.daemons, as for ``--add-node``: a new node is not ready until its network DaemonSet
runs, so they are placed first). kube-scheduler then retries the pods it left pending on the old
and new nodes. The pods it placed stay where it placed them: they are bound, and a new node does
not move them. This repeats while the autoscaler launches something and pods remain, at most
``MAX_ROUNDS`` times (a real cluster loops for ever; an autoscaler that keeps launching nodes
kube-scheduler does not use would too).

The passes after the first start from the cluster as the previous one left it: every bound pod a
running pod on its node, the pods left pending pending again in the order they were given. What
one pass decided beyond placements (a PersistentVolumeClaim bound by WaitForFirstConsumer, a
ResourceClaim allocated) is not carried into the next: the objects are those of the inputs.

Pure engine code: the planner simulates, the autoscaler (kplan.autoscaler) decides, nothing here
reads files or prints.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kplan.autoscaler.clusterautoscaler.autoscaler import ClusterAutoscaler
from kplan.autoscaler.clusterautoscaler.expander import build_chain
from kplan.autoscaler.clusterautoscaler.orchestrator import Template
from kplan.autoscaler.karpenter.autoscaler import KarpenterAutoscaler, Solve
from kplan.autoscaler.provisioning import HOURS_PER_MONTH, Autoscaler, NewNode
from kplan.errors import InputError
from kplan.model.clusterautoscaler import NodeGroup
from kplan.model.karpenter import Catalog
from kplan.model.objects import Node, Pod
from kplan.scenario import Inputs
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import PodOutcome, SimulationResult
from kplan.whatif.capacity import CapacityOutcome, Replica
from kplan.whatif.changes import AddNodes, Applied, apply_changes, clone_node
from kplan.whatif.daemons import daemon_pods, daemonset_template_pods

if TYPE_CHECKING:
    from kplan.whatif.shrink import ShrinkOptions

#: the most times the autoscaler is asked for nodes in one run
MAX_ROUNDS = 10


@dataclass(frozen=True)
class Launched:
    """A node the autoscaler launched, in which round, and the DaemonSet pods created for it."""

    new: NewNode
    round: int
    #: namespace/name of the DaemonSet pods created for the node
    daemon_pods: tuple[str, ...] = ()


@dataclass
class Autoscaling:
    """What the autoscaler did during a run."""

    autoscaler: str
    launched: list[Launched] = field(default_factory=list)
    #: namespace/name of each pod still unschedulable at the end that the autoscaler could not
    #: help → its reason, in its words (from the last time it was asked)
    unhelped: dict[str, str] = field(default_factory=dict)
    #: times the autoscaler was asked
    rounds: int = 0
    #: the autoscaler still launched nodes when MAX_ROUNDS was reached
    stopped_at_bound: bool = False
    #: (round, what the autoscaler weighed) for each time it was asked and said what it weighed
    decisions: list[tuple[int, object]] = field(default_factory=list)

    @property
    def price_per_hour(self) -> float:
        return sum(n.new.price_per_hour for n in self.launched)

    @property
    def price_per_month(self) -> float:
        return self.price_per_hour * HOURS_PER_MONTH


def provisionable(o: PodOutcome) -> bool:
    """A pod the autoscaler may help (Karpenter's pod.IsProvisionable): kube-scheduler marked it
    Unschedulable (a pod of no profile is never tried, and a pod not created does not exist), it
    is not waiting for its victims to leave, and no DaemonSet or Node owns it."""
    if o.status != PodStatus.UNSCHEDULABLE or o.attempts == 0 or o.nominated_node:
        return False
    return not any((r.kind, r.api_version) in (("DaemonSet", "apps/v1"), ("Node", "v1")) for r in o.pod.owners)


def next_inputs(inputs: Inputs, result: SimulationResult) -> Inputs:
    """The inputs of the next pass: the cluster as ``result`` left it (every pod bound to a node
    of the run running there, on the same nodes) and the pods still waiting pending again, in the
    order they were given; the replaced pods are gone already, and the nodes' DaemonSet pods run."""
    table = result.snapshot.table
    waiting = [o.pod for o in result.pods
               if o.status in (PodStatus.UNSCHEDULABLE, PodStatus.GATED, PodStatus.NOT_CREATED)]
    uids = {p.uid for p in waiting}
    order = {p.uid: i for i, p in enumerate(inputs.pending)}
    waiting.sort(key=lambda p: order.get(p.uid, len(order)))
    return dataclasses.replace(
        inputs, nodes=list(table.nodes), running=[p for row in table.pods for p in row], pending=waiting,
        replaced=[], node_daemons=[], warnings=[],
        created_after={k: v for k, v in inputs.created_after.items() if k in uids and v in uids})


def merged(first: SimulationResult, then: SimulationResult) -> SimulationResult:
    """One run's result from two passes: each pending pod as the later pass left it (with the
    attempts of both), the evictions of both, the cluster as the later pass left it."""
    later = {o.pod.uid: o for o in then.pods}
    pods = []
    for o in first.pods:
        n = later.get(o.pod.uid)
        pods.append(o if n is None else dataclasses.replace(n, attempts=o.attempts + n.attempts))
    return SimulationResult(pods, first.preempted + then.preempted, then.snapshot, {**first.cycles, **then.cycles},
                            first.replaced, first.overhead + then.overhead)


#: runs one kube-scheduler pass of the inputs: (inputs, what the pass is) → its result
Pass = Callable[[Inputs, str], SimulationResult]


def autoscale_run(inputs: Inputs, first: SimulationResult, autoscaler: Autoscaler, run_pass: Pass, *,
              seed: int) -> tuple[SimulationResult, Autoscaling, Applied]:
    """kube-scheduler's ``first`` pass of ``inputs``, then the autoscaler and kube-scheduler in turn
    (module docstring). Returns the run's result, what the autoscaler did, and the nodes added with
    their DaemonSet pods (as kplan.whatif.changes applied them)."""
    out = Autoscaling(autoscaler.name)
    result, current = first, inputs
    added = Applied()
    while True:
        pending = [o.pod for o in result.pods if provisionable(o)]
        if not pending:
            out.unhelped = {}
            break
        if out.rounds == MAX_ROUNDS:
            out.stopped_at_bound = True
            break
        table = result.snapshot.table
        bound: Mapping[str, list[Pod]] = {name: table.pods[row] for row, name in enumerate(table.names)}
        answer = autoscaler.provision(list(table.nodes), bound, pending, out.rounds + 1)
        out.rounds += 1
        if answer.decision is not None:
            out.decisions.append((out.rounds, answer.decision))
        left = {p.key for p in pending}
        out.unhelped = {k: why for k, why in answer.unhelped.items() if k in left}
        if not answer.launched:
            break
        current = next_inputs(current, result)
        current, applied = apply_changes(current, [AddNodes(tuple(n.node for n in answer.launched))], seed=seed)
        keys = {p.uid: p.key for p in current.node_daemons}
        daemons: dict[str, list[str]] = {}
        for uid, node in applied.daemon_pods.items():
            daemons.setdefault(node, []).append(keys[uid])
        out.launched += [Launched(n, out.rounds, tuple(daemons.get(n.name, ()))) for n in answer.launched]
        added = added.merged(applied)
        result = merged(result, run_pass(current, f"after {autoscaler.name}, pass {out.rounds + 1}"))
    return result, out, added


def check_node_pools(inputs: Inputs) -> None:
    """InputError when the inputs hold no NodePool: Karpenter would launch nothing."""
    if not inputs.node_pools:
        raise InputError("--autoscaler karpenter: the inputs hold no NodePool (karpenter.sh/v1): give the cluster's "
                         "NodePools with --cluster (kplan snapshot lists them) or as manifests")


def karpenter(inputs: Inputs, catalog: Catalog, solve: Solve, *, seed: int) -> KarpenterAutoscaler:
    """Karpenter with the NodePools and NodeClaims of ``inputs``, its DaemonSets' pods, and the
    instance types of ``catalog``; InputError when the inputs hold no NodePool."""
    check_node_pools(inputs)
    return KarpenterAutoscaler(tuple(inputs.node_pools), tuple(inputs.node_claims),
                               tuple(daemonset_template_pods(inputs)), catalog, solve, seed=seed)


@dataclass
class AutoscaledCapacity:
    """``kplan capacity --autoscaler``: the most replicas that all run with the autoscaler's nodes."""

    outcome: CapacityOutcome
    #: what the autoscaler did in the run of that many replicas
    autoscaling: Autoscaling | None
    #: why the autoscaler launched nothing for the first replica left pending at one more (its words)
    reason: str | None = None


def autoscaled_capacity(inputs: Inputs, make_replica: Callable[[int], Replica], limit: int,
                        run: Callable[[Inputs, str], tuple[SimulationResult, Autoscaling | None]]
                        ) -> AutoscaledCapacity:
    """The largest k <= ``limit`` for which the pending pods of ``inputs`` and k replicas, created
    together as a scale-up creates them, all run once the autoscaler has launched its nodes
    (``run``: an autoscaled run of the inputs). Searched by doubling, then halving, over whole
    runs: more replicas never need fewer nodes, and the NodePools' limits bound what the
    autoscaler adds. The answer's message is the first replica left pending at k + 1."""
    made: list[Replica] = []

    def replicas(k: int) -> list[Replica]:
        while len(made) < k:
            made.append(make_replica(len(made) + 1))
        return made[:k]

    def probe(k: int) -> tuple[bool, SimulationResult, Autoscaling | None, set[str]]:
        reps = replicas(k)
        changed = dataclasses.replace(inputs, pending=[*inputs.pending, *(r.pod for r in reps)],
                                      storage=[*inputs.storage, *(c for r in reps for c in r.claims)])
        result, record = run(changed, f"capacity: {k} replicas")
        uids = {r.pod.uid for r in reps}
        ok = all(o.status == PodStatus.SCHEDULED for o in result.pods if o.pod.uid in uids)
        return ok, result, record, uids

    best = probe(0)
    good, bad = 0, None
    k = 1
    while k <= limit:
        got = probe(k)
        if not got[0]:
            bad = (k, got)
            break
        good, best = k, got
        k = min(k * 2, limit) if k < limit else limit + 1
    if bad is not None:
        lo, hi = good, bad[0]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            got = probe(mid)
            if got[0]:
                lo, best = mid, got
            else:
                hi, bad = mid, (mid, got)
    _, result, record, uids = best
    placements: dict[str, int] = {}
    for o in result.pods:
        if o.pod.uid in uids and o.status == PodStatus.SCHEDULED and o.node is not None:
            placements[o.node] = placements.get(o.node, 0) + 1
    failed = None
    reason = None
    if bad is not None:
        _, (_, bad_result, bad_record, bad_uids) = bad
        failed = next((o for o in bad_result.pods if o.pod.uid in bad_uids and o.status != PodStatus.SCHEDULED), None)
        if failed is not None and bad_record is not None:
            reason = bad_record.unhelped.get(failed.pod.key)
    evictions = [e for e in result.preempted if e.preemptor.uid in uids]
    outcome = CapacityOutcome(sum(placements.values()), dict(sorted(placements.items())), failed, bad is None,
                              evictions, result)
    return AutoscaledCapacity(outcome, record, reason)


@dataclass(frozen=True)
class ClusterAutoscalerSettings:
    """``--autoscaler cluster-autoscaler``'s inputs: the node groups, the catalog their instance
    types come from (None without --instance-types), the expander chain's names and the caps."""

    node_groups: tuple[NodeGroup, ...]
    catalog: Catalog | None
    expanders: tuple[str, ...]
    max_nodes_total: int = 0
    #: --balance-similar-node-groups
    balance: bool = False
    #: the priority expander's ConfigMap (priority → regular expressions of group names), if any
    priorities: Mapping[int, Sequence[str]] = field(default_factory=dict)
    #: the groups' target sizes of the cluster-autoscaler-status ConfigMap, if any (group → size)
    status_sizes: Mapping[str, int] = field(default_factory=dict)


def node_group_template(group: NodeGroup, nodes: Mapping[str, Node], catalog: Catalog | None) -> Node:
    """The template node of ``group``: the node it is ``like`` (copied as --add-node copies one:
    no pods, no node-lifecycle taints, schedulable) or a node of its instance type (its capacity,
    allocatable, architecture and operating system), with the group's labels and taints added.
    InputError naming the file, group and field when the node or type is unknown."""
    where = f"{group.source}: node group {group.name}"
    name = f"template-node-for-{group.name}"
    if group.like is not None:
        like = nodes.get(group.like)
        if like is None:
            raise InputError(f"{where}: like: no node {group.like} in the cluster")
        base = clone_node(like, name)
    else:
        if catalog is None:
            raise InputError(f"{where}: instanceType: needs the catalog of --instance-types")
        it = catalog.by_name().get(group.instance_type or "")
        if it is None:
            raise InputError(f"{where}: instanceType: {group.instance_type} is not in {catalog.source}")
        labels = {"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": it.name,
                  "kubernetes.io/arch": it.architecture}
        if it.operating_systems:
            labels["kubernetes.io/os"] = it.operating_systems[0]
        base = Node(name=name, labels=labels, allocatable=it.allocatable, capacity=it.capacity, ready="True")
    return dataclasses.replace(base, labels={**base.labels, **group.labels}, taints=base.taints + group.taints)


def known_price(group: NodeGroup, catalog: Catalog | None) -> float | None:
    """The group's pricePerHour, else the cheapest on-demand offering of its instance type, else
    None (the price expander's pricing model: kplan.autoscaler.clusterautoscaler.price)."""
    if group.price_per_hour is not None:
        return group.price_per_hour
    if group.instance_type is not None and catalog is not None:
        it = catalog.by_name().get(group.instance_type)
        if it is not None:
            prices = [o.price for o in it.offerings if o.capacity_type in ("on-demand", "")]
            if prices:
                return min(prices)
    return None


def node_group_price(group: NodeGroup, catalog: Catalog | None) -> float:
    """The group's known price (known_price), else 0."""
    price = known_price(group, catalog)
    return 0.0 if price is None else price


def group_members(group: NodeGroup, nodes: Sequence[Node]) -> list[str]:
    """The names of the nodes ``group``'s nodeSelector picks (none without one)."""
    if not group.node_selector:
        return []
    return [n.name for n in nodes if all(n.labels.get(k) == v for k, v in group.node_selector.items())]


def group_size(group: NodeGroup, nodes: Sequence[Node], status: Mapping[str, int] | None = None) -> int:
    """The group's size now: ``size``, else the status ConfigMap's target size, else the nodes its
    nodeSelector picks, else its minSize."""
    if group.size is not None:
        return group.size
    if status and group.name in status:
        return status[group.name]
    if group.node_selector:
        return len(group_members(group, nodes))
    return group.min_size


def cluster_autoscaler(inputs: Inputs, settings: ClusterAutoscalerSettings, setup: SchedulerSetup, *,
                       seed: int) -> ClusterAutoscaler:
    """The cluster-autoscaler with the node groups of ``settings``, each template with the pods the
    inputs' DaemonSets would create on it (as --add-node and until-fit give them)."""
    nodes = {n.name: n for n in inputs.nodes}
    templates = []
    for g in settings.node_groups:
        node = node_group_template(g, nodes, settings.catalog)
        made = daemon_pods(inputs, [node], seed, inputs.running)
        templates.append(Template(g, node, tuple(c.pod for c in made.created)))
    priorities: dict[int, list[str]] = {p: list(rs) for p, rs in settings.priorities.items()}
    for g in settings.node_groups:
        if g.priority is not None:
            priorities.setdefault(g.priority, []).append(f"^{re.escape(g.name)}$")
    return ClusterAutoscaler(
        setup, tuple(templates), {g.name: group_size(g, inputs.nodes, settings.status_sizes) for g in settings.node_groups},
        build_chain(settings.expanders, seed=seed, priorities=priorities,
                    prices={g.name: known_price(g, settings.catalog) for g in settings.node_groups}),
        {g.name: node_group_price(g, settings.catalog) for g in settings.node_groups},
        settings.max_nodes_total, priorities, seed, balance=settings.balance)


def node_groups_for_shrink(opts: ShrinkOptions, settings: ClusterAutoscalerSettings,
                           nodes: Sequence[Node]) -> ShrinkOptions:
    """--shrink's options with the node groups' membership (each group's nodeSelector) and sizes:
    the scale-down keeps a group at its minSize."""
    group_of: dict[str, str] = {}
    for g in settings.node_groups:
        for name in group_members(g, nodes):
            group_of.setdefault(name, g.name)
    sizes = {g.name: (group_size(g, nodes, settings.status_sizes), g.min_size) for g in settings.node_groups}
    return dataclasses.replace(opts, node_group_of=group_of, group_sizes=sizes)
