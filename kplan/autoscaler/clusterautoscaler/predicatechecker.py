"""The scheduler predicates the cluster-autoscaler's simulations ask (cluster-autoscaler
simulator/predicatechecker, simulator/clustersnapshot): does a pod pass kube-scheduler's PreFilter
and Filter plugins on a node of a simulated cluster. Upstream runs kube-scheduler's own framework;
kplan runs its own (kplan.framework), so the estimator sees the filters kube-scheduler applies.

The simulated cluster is the cluster as kube-scheduler's pass left it plus the nodes the
estimation adds; a node added rebuilds the snapshot (kplan's node table has fixed rows), a pod
added is bound in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from kplan.cluster.snapshot import Snapshot
from kplan.framework.cycle_state import CycleState
from kplan.model.objects import Node, Pod, evolve_pod
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import Simulation


class PredicateChecker:
    """A simulated cluster: ``nodes`` with ``bound`` pods (node name → pods), to which nodes and
    pods are added, and the scheduler's filters run against it."""

    def __init__(self, setup: SchedulerSetup, nodes: Sequence[Node], bound: Mapping[str, Sequence[Pod]]) -> None:
        self.setup = setup
        self._nodes = list(nodes)
        self._pods: list[tuple[Pod, str]] = [(p, n.name) for n in nodes for p in bound.get(n.name, ())]
        self._sim: Simulation | None = None
        self._copies = 0
        #: nodes put in the snapshot ahead of time (reserve), not yet added
        self._reserved: set[str] = set()

    def _simulation(self) -> Simulation:
        if self._sim is None:
            snapshot = Snapshot.build(self._nodes)
            row_of = snapshot.table.row_of
            pods = [(p, n) for p, n in self._pods if n in row_of]
            snapshot.add_pods([p for p, _ in pods], [row_of[n] for _, n in pods])
            self._sim = Simulation(snapshot, self.setup, [])
        return self._sim

    def reserve(self, nodes: Sequence[tuple[Node, Sequence[Pod]]]) -> None:
        """Put ``nodes`` (with their DaemonSet pods) in the snapshot now, so that adding them later
        costs no rebuild. Only where their presence cannot change a verdict on the other nodes: no
        pod checked has a topology spread constraint, and the nodes' own pods have no required
        anti-affinity term (reserve_is_exact)."""
        for node, pods in nodes:
            self.add_node(node, pods)
            self._reserved.add(node.name)

    def add_node(self, node: Node, pods: Sequence[Pod] = ()) -> None:
        """Add ``node`` with ``pods`` (its DaemonSet pods) bound to it."""
        if node.name in self._reserved:
            self._reserved.discard(node.name)
            return
        self._nodes.append(node)
        self._pods += [(self._copy(p, node.name), node.name) for p in pods]
        self._sim = None

    def _copy(self, pod: Pod, node: str) -> Pod:
        # the same pod may be placed many times (upstream's equivalence groups repeat one pod):
        # each placement is its own pod of the snapshot
        self._copies += 1
        return evolve_pod(pod, uid=f"{pod.uid}/ca-{self._copies}", node_name=node)

    def add_pod(self, pod: Pod, node: str) -> None:
        placed = self._copy(pod, node)
        self._pods.append((placed, node))
        if self._sim is not None:
            snapshot = self._sim.snapshot
            row = snapshot.row_of(node)
            assert row is not None
            snapshot.add_pod(placed, row)

    def fitting(self, pod: Pod, names: Sequence[str]) -> str | None:
        """The first of the nodes ``names`` (in that order) where ``pod`` passes every PreFilter and
        Filter plugin; None where it passes on none (upstream's FitsAnyNodeMatching)."""
        if not names:
            return None
        sim = self._simulation()
        fw = sim.handle.frameworks.get(pod.scheduler_name)
        if fw is None:
            return None
        state = CycleState()
        pre, status, _ = fw.run_pre_filter(state, pod)
        if not status.ok:
            return None
        table = sim.snapshot.table
        allowed = None if pre is None or pre.node_names is None else pre.node_names
        rows = [table.row_of[n] for n in names if allowed is None or n in allowed]
        if not rows:
            return None
        verdict = fw.run_filters(state, pod, table, np.asarray(rows, dtype=np.int64))
        for k, row in enumerate(rows):
            if verdict.codes[k] == 0:
                return str(table.names[row])
        return None

    def why(self, pod: Pod, node: str) -> str | None:
        """The first reason the scheduler's PreFilter or Filter plugins give for ``pod`` not
        fitting ``node``; None when it fits."""
        sim = self._simulation()
        fw = sim.handle.frameworks.get(pod.scheduler_name)
        if fw is None:
            return f'no profile of the scheduler configuration has schedulerName "{pod.scheduler_name}"'
        state = CycleState()
        pre, status, _ = fw.run_pre_filter(state, pod)
        if not status.ok:
            return "; ".join(status.reasons) or status.plugin
        if pre is not None and pre.node_names is not None and node not in pre.node_names:
            return "the pod is restricted to other nodes by name"
        table = sim.snapshot.table
        rows = np.asarray([table.row_of[node]], dtype=np.int64)
        verdict = fw.run_filters(state, pod, table, rows)
        if verdict.codes[0] == 0:
            return None
        rejected = verdict.status(0, fw.filter_names)
        return "; ".join(rejected.reasons) or rejected.plugin

    def check(self, pod: Pod, node: str) -> bool:
        """``pod`` passes every PreFilter and Filter plugin on ``node`` (CheckPredicates)."""
        return self.fitting(pod, [node]) is not None


def hard_default_spread(setup: SchedulerSetup) -> bool:
    """Some profile gives pods DoNotSchedule topology spread constraints by default."""
    for profile in setup.config.profiles:
        args = profile.args.get("PodTopologySpread")
        defaults = args.effective_defaults() if args is not None else ()
        if any(c.when_unsatisfiable == "DoNotSchedule" for c in defaults):
            return True
    return False


def reserve_is_exact(setup: SchedulerSetup, pods: Sequence[Pod], node_pods: Sequence[Pod]) -> bool:
    """Nodes reserved ahead of time (PredicateChecker.reserve) give the same verdicts as nodes added
    one by one for ``pods`` when a reserved node's presence changes no verdict on an added node:
    the checked pods have no topology spread constraint (by default or their own: a reserved node
    is a domain with its counts) and no claims (whose allocation spans nodes); the reserved nodes'
    own pods (the template's DaemonSet pods) have no required anti-affinity term. Inter-pod
    affinity and anti-affinity of the checked pods are safe: a reserved node holds only copies of
    the DaemonSet pods that every added node holds too, so no term matches anything new."""
    if hard_default_spread(setup):
        return False
    for p in pods:
        if p.spread_constraints or p.resource_claims or any(v.claim_name for v in p.volumes):
            return False
    return not any(p.anti_affinity_required for p in node_pods)
