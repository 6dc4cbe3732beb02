"""Karpenter's disruption controller, run until it has nothing left to do.

Mirrors pkg/controllers/disruption/controller.go of sigs.k8s.io/karpenter v1.15.0: each pass
tries the methods in upstream's order — emptiness, drift, multi-node consolidation, single-node
consolidation (node repair is off by default; static drift concerns static NodePools, whose nodes
this answer keeps) — and the first that yields a command acts. For each method: the candidates
(NewCandidate, then the method's ShouldDisrupt), the NodePools' budgets for its reason, then its
ComputeCommands.

Offline, a command completes at once (no validation wait, no launch or drain time): its
candidates leave the cluster, its replacements join it (initialized now, at the price of the
offering the launch picks), and the moving pods are bound where the simulation put them (their
nodes' last pod event becomes ``now``). Then the next pass runs, until a pass finds nothing. The
clock stays at ``now`` throughout: a node that received pods is under its NodePool's
``consolidateAfter`` for the rest of the answer, as it would be for that long in the cluster.

The answer: per node of the input, deleted or replaced (by which new nodes, in which pass, by
which method and reason) or kept with the message Karpenter gives for it in the last pass; the
new nodes; the commands; the price per hour before and after.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from kplan.autoscaler.karpenter.disruption.balanced import BalancedEvaluator, node_pool_totals
from kplan.autoscaler.karpenter.disruption.consolidation import Consolidation
from kplan.autoscaler.karpenter.disruption.drift import Drift
from kplan.autoscaler.karpenter.disruption.emptiness import Emptiness
from kplan.autoscaler.karpenter.disruption.helpers import (
    CandidateCache,
    Simulator,
    build_disruption_budget_mapping,
    get_candidates,
)
from kplan.autoscaler.karpenter.disruption.multinodeconsolidation import MultiNodeConsolidation
from kplan.autoscaler.karpenter.disruption.pdb import Limits
from kplan.autoscaler.karpenter.disruption.singlenodeconsolidation import SingleNodeConsolidation
from kplan.autoscaler.karpenter.disruption.state import (
    CAPACITY_TYPE_LABEL,
    INSTANCE_TYPE_LABEL,
    NODEPOOL_LABEL,
    ZONE_LABEL,
    NodePoolView,
    StateNode,
    offering_price,
)
from kplan.autoscaler.karpenter.disruption.types import Candidate, Command, Replacement
from kplan.model.objects import Node, evolve_pod

#: verdicts of a node
DELETED, REPLACED, KEPT = "deleted", "replaced", "kept"
NO_DISRUPTION_FOUND = "Karpenter finds no disruption for this node"


class Method(Protocol):
    name: str
    reason: str
    disruption_class: str

    def should_disrupt(self, cand: Candidate) -> str | None: ...
    def compute_commands(self, budgets: dict[str, int], candidates: Sequence[Candidate]) -> list[Command]: ...


@dataclass(frozen=True)
class LaunchedNode:
    """A replacement the answer launches."""

    name: str
    node_pool: str
    instance_type: str
    capacity_type: str
    zone: str
    price: float
    #: the instance types the NodeClaim allowed, in Karpenter's order
    instance_type_options: tuple[str, ...]
    pods: tuple[str, ...]
    round: int
    #: the Node it registers as (kplan whatif adds it to the cluster of the run after)
    node: Node | None = field(default=None, compare=False, repr=False)


#: ``launch(replacement, name)``: the new node (its Node and NodeClaim, no pods yet) and what was
#: launched (K2's provisioning launch: the cheapest launchable offering of the options)
Launcher = Callable[[Replacement, str, float], tuple[StateNode, LaunchedNode]]
#: ``simulator_for(nodes)``: the scheduling simulation on the cluster made of ``nodes``
SimulatorFactory = Callable[[Sequence[StateNode]], Simulator]


@dataclass(frozen=True)
class CommandRecord:
    round: int
    method: str
    reason: str
    decision: str
    candidates: tuple[str, ...]
    replacements: tuple[LaunchedNode, ...]
    #: Command.EstimatedSavings: the candidates' prices less the replacements' (per hour)
    savings: float


@dataclass(frozen=True)
class NodeOutcome:
    name: str
    node_pool: str
    instance_type: str
    capacity_type: str
    zone: str
    #: the offering price per hour of the node (0 when the catalog has none)
    price: float
    #: deleted, replaced or kept
    verdict: str
    #: for kept: Karpenter's message; for deleted/replaced: the disruption reason (Empty,
    #: Underutilized, Drifted)
    reason: str
    method: str = ""
    round: int = 0
    #: the new nodes of the command that took it
    replaced_by: tuple[str, ...] = ()
    #: (pod, node) for its moving pods
    moved: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ConsolidationResult:
    """``whatif --shrink --autoscaler karpenter``: what Karpenter's disruption does to the cluster."""

    now: float
    #: every node of the input, in input order
    nodes: tuple[NodeOutcome, ...]
    #: the new nodes still in the cluster at the end, in launch order
    launched: tuple[LaunchedNode, ...]
    commands: tuple[CommandRecord, ...]
    #: prices per hour of the cluster's nodes before and after (launched nodes included)
    cost_before: float
    cost_after: float

    @property
    def saving(self) -> float:
        return self.cost_before - self.cost_after


@dataclass(frozen=True)
class DisruptionOptions:
    #: the SpotToSpotConsolidation feature gate (off by default upstream)
    spot_to_spot: bool = False
    #: a safety stop: passes beyond this many end the answer (each pass removes a node or
    #: lowers the price, so the loop ends anyway)
    max_rounds: int = 10_000


def _price(node: StateNode, pools: Mapping[str, NodePoolView]) -> float:
    labels = node.labels
    pool = pools.get(labels.get(NODEPOOL_LABEL, ""))
    if pool is None:
        return 0.0
    return offering_price(pool.instance_types.get(labels.get(INSTANCE_TYPE_LABEL, "")), labels)


def _methods(c: Consolidation) -> list[Method]:
    return [Emptiness(c), Drift(c), MultiNodeConsolidation(c), SingleNodeConsolidation(c)]


def disrupt_once(nodes: Sequence[StateNode], pools: Mapping[str, NodePoolView], pdbs: Limits, now: float,
                 simulate: Simulator, opts: DisruptionOptions,
                 cache: CandidateCache | None = None) -> tuple[Command | None, dict[str, list[str]]]:
    """One reconcile: the first method's command (None when no method acts) and, per node, the
    messages the methods gave for it, in method order. ``cache``: candidates kept for the run."""
    messages: dict[str, list[str]] = {}
    for method_index in range(4):
        c = Consolidation(simulate, now, BalancedEvaluator({}), opts.spot_to_spot)
        method = _methods(c)[method_index]
        found = get_candidates(nodes, pools, pdbs, now, method.should_disrupt, method.disruption_class, cache)
        for name, why in found.kept.items():
            if why:
                messages.setdefault(name, []).append(why)
        if not found.candidates:
            continue
        c.evaluator = BalancedEvaluator(node_pool_totals(found.all_candidates, nodes, pools))
        budgets = build_disruption_budget_mapping(nodes, pools, now, method.reason)
        commands = method.compute_commands(budgets, found.candidates)
        for name, why in c.notes.items():
            messages.setdefault(name, []).append(why)
        if commands:
            return commands[0], messages
    return None, messages


def _apply(nodes: list[StateNode], cmd: Command, launched: list[StateNode], now: float) -> list[StateNode]:
    """The cluster after ``cmd``: candidates gone, ``launched`` (one per replacement) in, moving pods
    bound where the simulation put them."""
    gone = {c.name for c in cmd.candidates}
    moving = {p.key: p for c in cmd.candidates for p in c.reschedulable_pods}
    target: dict[str, str] = dict(cmd.moved)
    for new, r in zip(launched, cmd.replacements, strict=True):
        for key in r.pods:
            if key in moving:
                target[key] = new.name
    arriving: dict[str, list[str]] = {}
    for key, node in target.items():
        if key in moving:
            arriving.setdefault(node, []).append(key)
    out = []
    for n in [*nodes, *launched]:
        if n.name in gone:
            continue
        keys = arriving.get(n.name)
        if keys:
            pods = n.pods + tuple(evolve_pod(moving[k], node_name=n.name) for k in sorted(keys))
            claim = replace(n.claim, last_pod_event=now) if n.claim is not None else None
            n = replace(n, pods=pods, claim=claim)
        out.append(n)
    return out


def disrupt(nodes: Sequence[StateNode], pools: Mapping[str, NodePoolView], pdbs: Limits, now: float,
            simulator_for: SimulatorFactory, launch: Launcher,
            opts: DisruptionOptions | None = None) -> ConsolidationResult:
    """Run the disruption controller until no method acts (module docstring)."""
    opts = opts or DisruptionOptions()
    current = list(nodes)
    taken: dict[str, tuple[CommandRecord, Command]] = {}
    records: list[CommandRecord] = []
    new_nodes: dict[str, LaunchedNode] = {}
    messages: dict[str, list[str]] = {}
    cache: CandidateCache = {}
    for round_no in range(1, opts.max_rounds + 1):
        cmd, messages = disrupt_once(current, pools, pdbs, now, simulator_for(current), opts, cache)
        if cmd is None:
            break
        started = []
        launched_info = []
        for i, r in enumerate(cmd.replacements, 1):
            state, info = launch(r, f"{r.node_pool}-r{round_no}-{i}", now)
            started.append(state)
            launched_info.append(replace(info, round=round_no))
        record = CommandRecord(round_no, cmd.method, cmd.reason, cmd.decision(),
                               tuple(c.name for c in cmd.candidates), tuple(launched_info), cmd.estimated_savings())
        records.append(record)
        for c in cmd.candidates:
            taken[c.name] = (record, cmd)
            new_nodes.pop(c.name, None)
        for info in launched_info:
            new_nodes[info.name] = info
        current = _apply(current, cmd, started, now)
    outcomes = []
    for n in nodes:
        if n.name in taken:
            record, cmd = taken[n.name]
            outcomes.append(_outcome(n, pools, REPLACED if record.replacements else DELETED, record.reason,
                                     record, _moves(n, cmd, record)))
        else:
            said = messages.get(n.name, [])
            outcomes.append(_outcome(n, pools, KEPT, said[-1] if said else NO_DISRUPTION_FOUND, None, ()))
    before = sum((_price(n, pools) for n in nodes), 0.0)
    after = sum((_price(n, pools) for n in current if n.name not in new_nodes), 0.0)
    after += sum((i.price for i in new_nodes.values()), 0.0)
    return ConsolidationResult(now, tuple(outcomes), tuple(new_nodes.values()), tuple(records), before, after)


def _outcome(n: StateNode, pools: Mapping[str, NodePoolView], verdict: str, reason: str,
             record: CommandRecord | None, moved: tuple[tuple[str, str], ...]) -> NodeOutcome:
    labels = n.labels
    return NodeOutcome(
        name=n.name, node_pool=labels.get(NODEPOOL_LABEL, ""), instance_type=labels.get(INSTANCE_TYPE_LABEL, ""),
        capacity_type=labels.get(CAPACITY_TYPE_LABEL, ""), zone=labels.get(ZONE_LABEL, ""), price=_price(n, pools),
        verdict=verdict, reason=reason, method=record.method if record else "", round=record.round if record else 0,
        replaced_by=tuple(r.name for r in record.replacements) if record else (), moved=moved)


def _moves(node: StateNode, cmd: Command, record: CommandRecord) -> tuple[tuple[str, str], ...]:
    """(pod, node it goes to) for the node's moving pods."""
    where = dict(cmd.moved)
    for r, launched in zip(cmd.replacements, record.replacements, strict=True):
        for key in r.pods:
            where.setdefault(key, launched.name)
    return tuple((p.key, where[p.key]) for p in node.pods if p.key in where)
