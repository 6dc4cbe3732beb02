"""Which nodes can go (``kplan whatif --shrink``): cluster-autoscaler's scale-down, with pods placed
as kube-scheduler places them.

Follows cluster-autoscaler's planner (core/scaledown/planner, eligibility, simulator/cluster.go
and the drainability rules of simulator/drainability/rules, as of 1.34):

* the pending pods are placed first (one run of the planner): cluster-autoscaler sees the pods
  that fit on existing nodes as if they ran there; pods that fit nowhere stay pending and are
  reported, as no removal can place them;
* utilisation of a node (simulator/utilization): per resource, the requests of the pods on it
  over its allocatable, the larger of cpu and memory; on a node with GPUs (allocatable
  ``nvidia.com/gpu`` or ``amd.com/gpu``) the GPU share alone, against its own threshold.
  ``ignore_daemonsets_utilization``/``ignore_mirror_pods_utilization`` take those pods' requests
  out of both sides;
* candidates (all nodes unless named) below the threshold, least utilised first (then by name);
  a node annotated ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"`` is never one;
* a candidate's pods go through the drain rules, in the autoscaler's order: mirror pods and
  terminating pods are left alone, DaemonSet pods stay (they go with the node), a pod annotated
  ``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`` moves without further checks; then
  a pod blocks the node when it has no controller (NotReplicated) or, with
  ``skip_nodes_with_custom_controller_pods``, a controller other than a ReplicationController,
  Job, ReplicaSet or StatefulSet; with ``skip_nodes_with_system_pods``, a kube-system pod that no
  PodDisruptionBudget selects; a pod annotated ``safe-to-evict: "false"``; with
  ``skip_nodes_with_local_storage``, a pod with a hostPath or a non-memory emptyDir volume not
  listed in ``cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes``; a pod a budget with
  no disruption left selects (NotEnoughPdb). The pending pods this run placed have not started:
  they move freely;
* a node without blocking pods is removable when its moving pods are all scheduled elsewhere: the
  node stays in the cluster without pods (so that it still counts as a topology domain, as the
  autoscaler's ghost node tainted ``ToBeDeletedByClusterAutoscaler`` does), admitting no pod
  (its pod count is full: a pod rejected everywhere reads ``Too many pods`` for it where the
  autoscaler's taint would read as an untolerated taint), and the scheduler runs the pods as
  pending pods on what the earlier removals left. A run that preempts
  a pod does not count (the victim would need a place too). A removal is kept: later candidates
  see its pods where they went, and the budgets lose the disruptions it used;
* kplan then replays the answer from the inputs: the nodes removed (``RemoveNode``), their
  pods' replacements and the pending pods scheduled together. Should that run leave a pod
  unplaced (the one-node-at-a-time order of the autoscaler can pack differently), the last
  removals are dropped until it places every pod; they are reported as dropped.

With ``--autoscaler cluster-autoscaler`` each group's minSize holds, and the scale-up of the
same loop comes first (``whatif_shrink``): when it launches nodes, no node goes in that loop.

Not modelled: atomic node groups, the autoscaler's timers (unneeded time, the delays after
scale-up beyond the loop of the scale-up), unready nodes, ``--min-replica-count`` and the check that a
pod's controller still exists (the inputs need not hold the controllers), and how long a
terminating pod has been terminating (kplan has no clock: every terminating pod is left alone).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from kplan.autoscaler.provisioning import Autoscaler
from kplan.cluster.snapshot import Snapshot
from kplan.model.objects import Node, Pod, PodDisruptionBudget, evolve_pod
from kplan.model.selectors import selector_matches
from kplan.scenario import Inputs
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.queue import Location
from kplan.scheduler.simulate import Simulation, SimulationResult
from kplan.whatif.autoscale import autoscale_run
from kplan.whatif.changes import Change, RemoveNode, is_daemon_pod, is_mirror_pod, unknown_node
from kplan.whatif.diff import diff_results
from kplan.whatif.plan import Planner, Run, WhatIf

SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
#: controller kinds whose pods the autoscaler counts as replicated with
#: --skip-nodes-with-custom-controller-pods (drainability/rules/replicated)
REPLICATED_KINDS = frozenset({"ReplicationController", "Job", "ReplicaSet", "StatefulSet"})
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


@dataclass(frozen=True)
class ShrinkOptions:
    """cluster-autoscaler's scale-down settings, under its flag names and defaults."""

    #: node names to consider; None: every node
    candidates: Collection[str] | None = None
    scale_down_utilization_threshold: float = 0.5
    scale_down_gpu_utilization_threshold: float = 0.5
    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    ignore_daemonsets_utilization: bool = False
    ignore_mirror_pods_utilization: bool = False
    #: --autoscaler cluster-autoscaler: node name → its node group, and each group's (size, minSize):
    #: a node of a group at its minSize stays (NodeGroupMinSizeReached)
    node_group_of: Mapping[str, str] = field(default_factory=dict)
    group_sizes: Mapping[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Blocker:
    """A pod that keeps a node (``pod`` empty for a reason of the node's own)."""

    pod: str
    #: the autoscaler's reason: NotReplicated, UnmovableKubeSystemPod, NotSafeToEvictAnnotation,
    #: LocalStorageRequested, NotEnoughPdb, or NoPlaceToMovePods (the scheduler found no node)
    reason: str
    message: str


@dataclass(frozen=True)
class Utilization:
    #: the share that decides (the larger of cpu and memory, or the GPU share)
    value: float
    #: the resource it comes from: "cpu", "memory" or a GPU resource
    resource: str
    cpu: float
    memory: float


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    utilization: Utilization
    removable: bool
    #: why not: NotCandidate, ScaleDownDisabledAnnotation, NotUnderutilized, BlockedByPod,
    #: NoPlaceToMovePods, NodeGroupMinSizeReached, ScaleDownInCooldown, DroppedInReplay; "" when removable
    reason: str = ""
    blockers: tuple[Blocker, ...] = ()
    #: (pod, node it went to) for a removable node's moving pods
    moved: tuple[tuple[str, str], ...] = ()


@dataclass
class ShrinkResult:
    options: ShrinkOptions
    #: the removable nodes, in the order they are removed
    removed: list[NodeVerdict]
    #: the candidates that stay, least utilised first (NotUnderutilized last)
    kept: list[NodeVerdict]
    #: the run the search started from (the pending pods placed) and the replay without the nodes
    base: Run
    after: Run
    #: pending pods that do not fit even before any removal
    unplaced_before: list[str] = field(default_factory=list)
    #: nodes the greedy removed that the replay had to put back
    dropped: list[str] = field(default_factory=list)
    #: per node name, its price per hour (only the priced nodes)
    prices: dict[str, Decimal] = field(default_factory=dict)


# ------------------------------------------------------------------------------ utilisation

def _gpu_resource(node: Node) -> str | None:
    return next((r for r in GPU_RESOURCES if node.allocatable.get(r, 0) > 0), None)


def utilization(node: Node, pods: Sequence[Pod], opts: ShrinkOptions) -> Utilization:
    """simulator/utilization Calculate: requests over allocatable, the larger of cpu and memory
    (the GPU share on a GPU node); DaemonSet and mirror pods taken out of both when asked."""
    def share(resource: str) -> float:
        alloc = node.allocatable.get(resource, 0)
        used = skipped = 0
        for p in pods:
            amount = p.requests.get(resource, 0)
            if ((opts.ignore_daemonsets_utilization and is_daemon_pod(p))
                    or (opts.ignore_mirror_pods_utilization and is_mirror_pod(p))):
                skipped += amount
            elif p.deletion_time is None:
                used += amount
        return used / (alloc - skipped) if alloc - skipped > 0 else 0.0

    gpu = _gpu_resource(node)
    cpu, memory = share("cpu"), share("memory")
    if gpu is not None:
        return Utilization(share(gpu), gpu, cpu, memory)
    return Utilization(cpu, "cpu", cpu, memory) if cpu > memory else Utilization(memory, "memory", cpu, memory)


# ------------------------------------------------------------------------------ drain rules

def matching_budgets(pod: Pod, pdbs: Sequence[PodDisruptionBudget]) -> list[PodDisruptionBudget]:
    """RemainingPdbTracker.MatchingPdbs: same namespace and the selector matches (an empty
    selector matches every pod of the namespace, a missing one none)."""
    return [b for b in pdbs if b.namespace == pod.namespace and b.selector is not None
            and (b.selector.is_empty or selector_matches(b.selector, pod.labels))]


def drain_rule(pod: Pod, pdbs: Sequence[PodDisruptionBudget], remaining: Mapping[tuple[str, str], int],
               opts: ShrinkOptions) -> str | Blocker | None:
    """The autoscaler's drainability rules for one pod, in their order: "stay" (the pod goes
    with the node: mirror, terminating and DaemonSet pods), "move", or the Blocker."""
    if is_mirror_pod(pod) or pod.terminating:
        return "stay"
    if is_daemon_pod(pod):
        return "stay"
    if pod.annotations.get(SAFE_TO_EVICT) == "true":
        return "move"
    owner = pod.controller()
    replicated = owner is not None and (not opts.skip_nodes_with_custom_controller_pods
                                        or owner.kind in REPLICATED_KINDS)
    if not replicated:
        return Blocker(pod.key, "NotReplicated", f"{pod.key} is not replicated" if owner is None else
                       f"{pod.key} is owned by a {owner.kind}, not by a ReplicationController, Job, ReplicaSet or "
                       "StatefulSet (--skip-nodes-with-custom-controller-pods)")
    budgets = matching_budgets(pod, pdbs)
    if opts.skip_nodes_with_system_pods and pod.namespace == "kube-system" and not budgets:
        return Blocker(pod.key, "UnmovableKubeSystemPod",
                       f"non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {pod.name}")
    if pod.annotations.get(SAFE_TO_EVICT) == "false":
        return Blocker(pod.key, "NotSafeToEvictAnnotation", f"pod annotated as not safe to evict present: {pod.name}")
    if opts.skip_nodes_with_local_storage:
        allowed = set(pod.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(","))
        if any(v not in allowed for v in pod.local_volumes):
            return Blocker(pod.key, "LocalStorageRequested", f"pod with local storage present: {pod.name}")
    for b in budgets:
        if remaining.get((b.namespace, b.name), 0) < 1:
            return Blocker(pod.key, "NotEnoughPdb", f"not enough pod disruption budget to move {pod.key} "
                           f"(PodDisruptionBudget {b.namespace}/{b.name})")
    return "move"


# ------------------------------------------------------------------------------ the search

class _Cluster:
    """The cluster of the search: one snapshot and one simulation of it, changed in place by each
    removal kept and restored after each removal undone. The moving pods of a candidate are
    created as pending pods of that simulation (Simulation.add_pending) and run to the end."""

    def __init__(self, planner: Planner, snapshot: Snapshot, pdb_allowed: dict[tuple[str, str], int],
                 fresh: set[str]) -> None:
        self.sim = Simulation(snapshot, planner.setup, [], seed=planner.seed,
                              lowest_name=planner.lowest_name, pdb_allowed=pdb_allowed)
        self.sim.start()
        #: uids of the pods the pending run placed (not started yet: they move freely)
        self.fresh = fresh
        self._probes = 0

    @property
    def snapshot(self) -> Snapshot:
        return self.sim.snapshot

    def try_remove(self, row: int, moving: Sequence[Pod]) -> tuple[bool, tuple[Blocker, ...], tuple[tuple[str, str], ...]]:
        """Move the node's pods elsewhere as the scheduler places them; keep the change when every
        moving pod is placed and nothing is preempted, else undo it. The node stays in the
        snapshot without pods and admitting none (a topology domain still, as the autoscaler's
        tainted ghost node)."""
        self._probes += 1
        sim = self.sim
        claims = any(p.resource_claims or any(v.claim_name or v.disk for v in p.volumes) for p in moving)
        # the claims' and volumes' state has no exact undo: a copy of the whole run instead
        saved = copy.deepcopy(sim) if claims else None
        snapshot = sim.snapshot
        table = snapshot.table
        on_node = list(table.pods[row])
        for p in on_node:
            snapshot.remove_pod(p)
        allowed = int(table.allowed_pods[row])
        table.allowed_pods[row] = 0
        evicted = len(sim.evictions)
        queued = []
        for p in moving:
            copy_of = evolve_pod(p, uid=f"{p.uid}/shrink-{self._probes}", node_name="", nominated_node="",
                                 start_time=None, phase="Pending")
            if p.uid in self.fresh:
                self.fresh.add(copy_of.uid)
            queued.append(sim.add_pending(copy_of))
        sim.drain()
        unplaced = [q for q in queued if q.where != Location.DONE]
        victims = sim.evictions[evicted:]
        if not unplaced and not victims:
            return True, (), tuple((q.pod.key, sim.bound[q.pod.uid]) for q in queued)
        blockers = tuple(Blocker(q.pod.key, "NoPlaceToMovePods", q.message or "not scheduled") for q in unplaced)
        blockers += tuple(Blocker(e.preemptor.key, "NoPlaceToMovePods", f"placing it preempts {e.pod.key} on {e.node}")
                          for e in victims)
        if saved is not None:
            self.sim = saved
            return False, blockers, ()
        for q in queued:
            uid = q.pod.uid
            if uid in sim.bound:
                del sim.bound[uid]
                placed, _ = snapshot.placed[uid]
                snapshot.remove_pod(placed)
            sim.handle.nominator.remove(q.pod)
            sim.handle.nominations.pop(uid, None)
        sim.queue.forget({q.pod.uid for q in queued})
        for e in victims:
            back = snapshot.row_of(e.node)
            assert back is not None
            snapshot.add_pod(e.pod, back)
        del sim.evictions[evicted:]
        table.allowed_pods[row] = allowed
        for p in on_node:
            snapshot.add_pod(p, row)
        return False, blockers, ()


def node_price(node: Node, prices: Mapping[str, Decimal], nodes_by_name: Mapping[str, Node]) -> Decimal | None:
    """The price of ``node`` from ``--price like=NODE=PRICE``: NODE itself, or a node of the same
    instance type (the ``node.kubernetes.io/instance-type`` label, or its beta form)."""
    if node.name in prices:
        return prices[node.name]
    kind = next((node.labels[k] for k in INSTANCE_TYPE_LABELS if k in node.labels), None)
    if kind is None:
        return None
    for name, price in prices.items():
        template = nodes_by_name.get(name)
        if template is not None and any(template.labels.get(k) == kind for k in INSTANCE_TYPE_LABELS):
            return price
    return None


@dataclass(frozen=True)
class PendingRun:
    """The run that places the pending pods before the search: the run and the uids of the pods
    it bound (not started yet: they move freely)."""

    run: Run
    bound: frozenset[str]


def pending_run(planner: Planner, changes: Sequence[Change], stage: str = "shrink: pending pods") -> PendingRun:
    """kube-scheduler's run of the inputs after ``changes``, without the planner's autoscaler."""
    changed, applied = planner.changed(changes)
    _, built, sim = planner.simulation(changed, stage=stage)
    return PendingRun(Run(changed, built, sim.run(), applied), frozenset(sim.bound))


def shrink(planner: Planner, changes: Sequence[Change], opts: ShrinkOptions,
           prices: Mapping[str, Decimal] | None = None, scaled_up: Run | None = None,
           placed: PendingRun | None = None) -> ShrinkResult:
    """The nodes that can go, in the autoscaler's order (module docstring). With ``scaled_up`` (the
    run after the cluster-autoscaler's scale-up of this loop) no node goes: every candidate below
    the threshold stays, ScaleDownInCooldown, and that run is the answer's run after. ``placed``:
    the run of the pending pods after ``changes`` when the caller has it (``pending_run``); it is
    only read."""
    if placed is None:
        placed = pending_run(planner, changes)
    base = placed.run
    changed, built, base_result = base.inputs, base.built, base.result
    unplaced_before = [o.pod.key for o in (scaled_up.result if scaled_up is not None else base_result).pods
                       if o.status not in (PodStatus.SCHEDULED, PodStatus.GATED)]
    work = copy.deepcopy(base_result.snapshot)
    cluster = _Cluster(planner, work, dict(built.pdb_allowed), set(placed.bound))
    nodes = {n.name: n for n in changed.nodes}
    table = work.table
    wanted = set(opts.candidates) if opts.candidates is not None else None
    unknown = sorted(wanted - set(nodes)) if wanted is not None else []
    if unknown:
        raise unknown_node("--shrink-candidates", unknown[0], list(nodes))

    verdicts: list[NodeVerdict] = []
    eligible: list[tuple[float, str, Utilization]] = []
    for row, name in enumerate(table.names):
        node = table.nodes[row]
        util = utilization(node, table.pods[row], opts)
        if wanted is not None and name not in wanted:
            continue
        if node.annotations.get(SCALE_DOWN_DISABLED) == "true":
            verdicts.append(NodeVerdict(name, util, False, "ScaleDownDisabledAnnotation",
                                        (Blocker("", "ScaleDownDisabledAnnotation",
                                                 f"the node is annotated {SCALE_DOWN_DISABLED}: true"),)))
            continue
        threshold = (opts.scale_down_gpu_utilization_threshold if util.resource in GPU_RESOURCES
                     else opts.scale_down_utilization_threshold)
        if util.value >= threshold:
            verdicts.append(NodeVerdict(name, util, False, "NotUnderutilized", (Blocker(
                "", "NotUnderutilized", f"{util.resource} requested is {util.value:.0%} of allocatable, at or above "
                f"the scale-down utilization threshold of {threshold:g}"),)))
            continue
        eligible.append((util.value, name, util))
    eligible.sort(key=lambda e: (e[0], e[1]))

    remaining = dict(built.pdb_allowed)
    pdbs = list(work.pdbs)
    removed: list[NodeVerdict] = []
    kept: list[NodeVerdict] = []
    sizes = {g: size for g, (size, _) in opts.group_sizes.items()}
    for _, name, util in eligible:
        if scaled_up is not None:
            kept.append(NodeVerdict(name, util, False, "ScaleDownInCooldown", (Blocker(
                "", "ScaleDownInCooldown", "the cluster-autoscaler scaled up in this loop: no scale-down until "
                "--scale-down-delay-after-add has passed"),)))
            continue
        group = opts.node_group_of.get(name)
        if group is not None and sizes[group] <= opts.group_sizes[group][1]:
            kept.append(NodeVerdict(name, util, False, "NodeGroupMinSizeReached", (Blocker(
                "", "NodeGroupMinSizeReached", f"node group {group} is at its minSize "
                f"{opts.group_sizes[group][1]}"),)))
            continue
        at = cluster.snapshot.row_of(name)
        assert at is not None
        row = at
        moving: list[Pod] = []
        blockers: list[Blocker] = []
        for pod in list(cluster.snapshot.table.pods[row]):
            if pod.uid in cluster.fresh:
                moving.append(pod)
                continue
            rule = drain_rule(pod, pdbs, remaining, opts)
            if isinstance(rule, Blocker):
                blockers.append(rule)
            elif rule == "move":
                moving.append(pod)
        if blockers:
            kept.append(NodeVerdict(name, util, False, "BlockedByPod", tuple(blockers)))
            continue
        ok, why, moved = cluster.try_remove(row, moving)
        if not ok:
            kept.append(NodeVerdict(name, util, False, "NoPlaceToMovePods", why))
            continue
        for pod in moving:
            if pod.uid in cluster.fresh:
                continue
            for b in matching_budgets(pod, pdbs):
                remaining[(b.namespace, b.name)] = remaining.get((b.namespace, b.name), 0) - 1
        removed.append(NodeVerdict(name, util, True, moved=moved))
        if group is not None:
            sizes[group] -= 1

    kept += verdicts
    dropped: list[str] = []
    if scaled_up is not None:
        after = scaled_up
    else:
        after, dropped = _replay(planner, changes, removed, unplaced_before)
    if dropped:
        gone = set(dropped)
        kept = [dataclasses.replace(v, removable=False, reason="DroppedInReplay", blockers=(Blocker(
            "", "DroppedInReplay", "removable one node at a time, but the replay of all removals together does not "
                                   "place every pod with it gone"),)) for v in removed if v.node in gone] + kept
        removed = [v for v in removed if v.node not in gone]
    priced = {}
    if prices:
        for n in changed.nodes:
            p = node_price(n, prices, nodes)
            if p is not None:
                priced[n.name] = p
    return ShrinkResult(opts, removed, kept, base, after, unplaced_before, dropped, priced)


def _replay(planner: Planner, changes: Sequence[Change], removed: Sequence[NodeVerdict],
            unplaced_before: Sequence[str]) -> tuple[Run, list[str]]:
    """The inputs without the removed nodes, run from the start: every pod placed before must be
    placed (the removed nodes' pods as their controllers' replacements), none preempted. Drops
    the last removal until that holds; (the run, the dropped nodes)."""
    allowed = set(unplaced_before)
    names = [v.node for v in removed]
    dropped: list[str] = []
    while True:
        changed, applied = planner.changed([*changes, *(RemoveNode(n) for n in names)])
        run = planner.simulate(changed, applied=applied, stage=f"shrink: replay without {len(names)} nodes")
        left = [o.pod.key for o in run.result.pods if o.status not in (PodStatus.SCHEDULED, PodStatus.GATED)]
        if (not any(k not in allowed for k in left) and not run.result.preempted) or not names:
            return run, dropped
        dropped.insert(0, names.pop())


def scale_up(planner: Planner, changes: Sequence[Change], autoscaler: Autoscaler, first: Run | None = None
             ) -> Run | None:
    """The cluster-autoscaler's scale-up of one loop (static_autoscaler.go RunOnce tries it before
    the scale-down): kube-scheduler's run after ``changes`` (``first`` when the caller has it, only
    read), then the autoscaler and kube-scheduler in turn for the pods left unschedulable
    (kplan.whatif.autoscale). The run when it launched a node, else None."""
    if first is None:
        changed, applied = planner.changed(changes)
        first = planner.simulate(changed, applied=applied, stage="shrink: scale-up", autoscale=False)
    changed = first.inputs

    def run_pass(inputs: Inputs, what: str) -> SimulationResult:
        return planner.simulate(inputs, stage=what, autoscale=False).result

    result, record, added = autoscale_run(changed, first.result, autoscaler, run_pass, seed=planner.seed)
    if not record.launched:
        return None
    return Run(changed, first.built, result, first.applied.merged(added) if first.applied is not None else added,
               record)


def whatif_shrink(planner: Planner, changes: Sequence[Change], opts: ShrinkOptions,
                  prices: Mapping[str, Decimal] | None = None,
                  autoscaler: Autoscaler | None = None) -> tuple[WhatIf, ShrinkResult]:
    """``kplan whatif --shrink``: the unchanged run before, and after it the replay without the
    removable nodes (on top of the other changes), with the search's answer. With the
    cluster-autoscaler (``autoscaler``) its loop's order: the scale-up first, for the pods left
    unschedulable; when it launched nodes, no scale-down in that loop (its postScaleUp ends the
    loop, and --scale-down-delay-after-add holds the next ones) and the run after is the scale-up's."""
    placed: PendingRun | None = None
    if planner.autoscaler is None:
        # without changes the scale-up's first pass and the search's pending run are this one:
        # made once
        inputs, built, sim = planner.simulation(stage="before")
        before = Run(inputs, built, sim.run())
        changed, applied = planner.changed(changes)
        same = planner.unchanged_run(before, changes, changed, applied)
        placed = PendingRun(same, frozenset(sim.bound)) if same is not None else None
    else:
        before = planner.simulate(stage="before")
    scaled = (scale_up(planner, changes, autoscaler, placed.run if placed is not None else None)
              if autoscaler is not None else None)
    found = shrink(planner, changes, opts, prices, scaled, placed)
    after = found.after
    deleted = [f.pod for f in after.applied.deleted] if after.applied is not None else []
    diff = diff_results(before.result, before.running, after.result, after.running, deleted)
    return WhatIf(before, after, diff), found
