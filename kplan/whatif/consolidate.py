"""``kplan whatif --shrink --autoscaler karpenter``: which nodes Karpenter's disruption deletes or
replaces (kplan.autoscaler.karpenter.disruption), and the cluster after it, as kube-scheduler
places the pods there.

Karpenter consolidates the cluster as kube-scheduler leaves it after the other changes: every
pending pod it placed bound to its node, the pods it left pending part of Karpenter's own
simulation (as upstream's SimulateScheduling counts pending pods). No provisioning round comes
first: nodes just launched would be under their NodePool's consolidateAfter anyway. The run after
removes the deleted and replaced nodes (their pods come back pending, as after a drain) and adds
the replacements with their DaemonSet pods; kube-scheduler then places the pods.
"""

from __future__ import annotations

from collections.abc import Sequence

from kplan.autoscaler.karpenter.autoscaler import KarpenterAutoscaler
from kplan.autoscaler.karpenter.disruption.controller import ConsolidationResult
from kplan.autoscaler.karpenter.disruption.world import consolidate
from kplan.autoscaler.karpenter.results import KarpenterCluster
from kplan.whatif.autoscale import provisionable
from kplan.whatif.changes import AddNodes, Change, RemoveNode
from kplan.whatif.diff import diff_results
from kplan.whatif.plan import Planner, WhatIf


def karpenter_consolidation(planner: Planner, karpenter: KarpenterAutoscaler, changes: Sequence[Change],
                            now: float) -> tuple[WhatIf, ConsolidationResult]:
    """The unchanged run before; Karpenter's disruption at ``now`` (seconds since the epoch) on the
    cluster after ``changes``; the run after its commands (module docstring)."""
    before = planner.simulate(stage="before", autoscale=False)
    if changes:
        changed, applied = planner.changed(changes)
        base = planner.simulate(changed, applied=applied, stage="consolidation", autoscale=False)
    else:
        changed, base = planner.inputs, before
    table = base.result.snapshot.table
    cluster = KarpenterCluster(nodes=tuple(table.nodes), bound_pods=tuple(p for row in table.pods for p in row),
                               node_pools=karpenter.node_pools, node_claims=karpenter.node_claims,
                               daemonset_pods=karpenter.daemonset_pods, catalog=karpenter.catalog)
    pending = [o.pod for o in base.result.pods if provisionable(o)]
    result = consolidate(cluster, pending, changed.pdbs, base.built.pdb_allowed, now)
    gone = [n.name for n in result.nodes if n.verdict in ("deleted", "replaced")]
    new = tuple(n.node for n in result.launched if n.node is not None)
    after_changes: list[Change] = [*changes]
    if new:
        after_changes.append(AddNodes(new))
    after_changes += [RemoveNode(name) for name in gone]
    after_inputs, after_applied = planner.changed(after_changes)
    after = planner.simulate(after_inputs, applied=after_applied, stage="after", autoscale=False)
    deleted = [f.pod for f in after_applied.deleted]
    diff = diff_results(before.result, before.running, after.result, after.running, deleted)
    return WhatIf(before, after, diff), result
