"""Which nodes disruption may take (NewCandidate, ValidateNodeDisruptable, ValidatePodsDisruptable),
what they cost (pkg/utils/disruption) and Karpenter's message for those it may not."""

from __future__ import annotations

import pytest

from kplan.autoscaler.karpenter.disruption.disruptioncost import eviction_cost, lifetime_remaining
from kplan.autoscaler.karpenter.disruption.helpers import new_candidate
from kplan.autoscaler.karpenter.disruption.pdb import Limits
from kplan.autoscaler.karpenter.disruption.state import ClaimView, StateNode
from kplan.autoscaler.karpenter.disruption.types import EVENTUAL, GRACEFUL, Candidate
from kplan.model.objects import Node, PodDisruptionBudget, Toleration
from kplan.model.selectors import LabelSelector

from .builders import NOW, node, pod, pool

POOLS = {"default": pool()}


def pdb(name: str, allowed: int, app: str = "web", **kw: object) -> PodDisruptionBudget:
    return PodDisruptionBudget(namespace="default", name=name, selector=LabelSelector(match_labels=(("app", app),)),
                               disruptions_allowed=allowed, **kw)  # type: ignore[arg-type]


WEB = {"app": "web"}
CASES = [
    ("a node without a NodeClaim is not Karpenter's", node("n", managed=False), [], GRACEFUL,
     "Node isn't managed by karpenter"),
    ("a NodeClaim without its node", StateNode("n", None, ClaimView("c")), [], GRACEFUL,
     "Nodeclaim does not have an associated node"),
    ("a deleting node is being disrupted already", node("n", claim={"deleting": True}), [], GRACEFUL,
     "Node is deleting or marked for deletion"),
    ("an uninitialized registered node", node("n", initialized=False), [], GRACEFUL,
     "Node isn't initialized"),
    ("the node's do-not-disrupt annotation", node("n", annotations={"karpenter.sh/do-not-disrupt": "true"}), [],
     GRACEFUL, 'Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation'),
    ("a NodePool kplan was not given", node("n", pool_name="gone"), [], GRACEFUL, "NodePool not found (NodePool=gone)"),
    ("a pod's do-not-disrupt annotation",
     node("n", pod("p", annotations={"karpenter.sh/do-not-disrupt": "true"})), [], GRACEFUL,
     'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)'),
    ("a pod's do-not-disrupt duration that has not run out",
     node("n", pod("p", annotations={"karpenter.sh/do-not-disrupt": "2h"}, start=NOW - 3600)), [], GRACEFUL,
     'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)'),
    ("a pod's do-not-disrupt duration that has run out",
     node("n", pod("p", annotations={"karpenter.sh/do-not-disrupt": "30m"}, start=NOW - 3600)), [], GRACEFUL, None),
    ("a do-not-disrupt value that is no duration is ignored",
     node("n", pod("p", annotations={"karpenter.sh/do-not-disrupt": "yes"})), [], GRACEFUL, None),
    ("a PodDisruptionBudget that allows no disruption", node("n", pod("p", labels=WEB)), [pdb("web", 0)], GRACEFUL,
     "Pdb prevents pod evictions (PodDisruptionBudget=[default/web])"),
    ("a PodDisruptionBudget that allows one", node("n", pod("p", labels=WEB)), [pdb("web", 1)], GRACEFUL, None),
    ("two PodDisruptionBudgets on one pod", node("n", pod("p", labels=WEB)), [pdb("a", 1), pdb("b", 1)], GRACEFUL,
     "Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[default/a default/b])"),
    ("a budget does not count a pod that tolerates the disruption taint",
     node("n", pod("p", labels=WEB, tolerations=(Toleration(key="karpenter.sh/disruption", operator="Exists"),))),
     [pdb("web", 0)], GRACEFUL, None),
    ("drift passes pod blockers when the NodeClaim has a termination grace period",
     node("n", pod("p", labels=WEB), claim={"termination_grace_period": 600.0}), [pdb("web", 0)], EVENTUAL, None),
    ("but not without one", node("n", pod("p", labels=WEB)), [pdb("web", 0)], EVENTUAL,
     "Pdb prevents pod evictions (PodDisruptionBudget=[default/web])"),
]


@pytest.mark.parametrize(("state", "budgets", "klass", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_candidate_or_message(state: StateNode, budgets: list[PodDisruptionBudget], klass: str,
                              message: str | None) -> None:
    got = new_candidate(state, POOLS, Limits(budgets, {}), NOW, klass)
    if message is None:
        assert isinstance(got, Candidate)
    else:
        assert got == message


def test_reschedulable_pods_leave_daemonset_and_mirror_pods_behind() -> None:
    c = new_candidate(node("n", pod("web"), pod("ds", owner="DaemonSet"), pod("mirror", owner="Node", api="v1"),
                           pod("done", phase="Succeeded")),
                      POOLS, Limits([], {}), NOW, GRACEFUL)
    assert isinstance(c, Candidate)
    assert [p.name for p in c.reschedulable_pods] == ["web"]
    assert c.reschedule_disruption_cost == 2.0 and not c.is_empty()
    assert c.price == 0.2 and c.savings_ratio() == 0.1


def test_a_node_with_only_daemonset_pods_is_empty() -> None:
    c = new_candidate(node("n", pod("ds", owner="DaemonSet")), POOLS, Limits([], {}), NOW, GRACEFUL)
    assert isinstance(c, Candidate) and c.is_empty()


COSTS = [
    ("a plain pod costs 1", {}, 0, 1.0),
    ("karpenter.sh/disruption-cost adds value / 2^27", {"karpenter.sh/disruption-cost": str(2**27)}, 0, 2.0),
    ("pod-deletion-cost counts when disruption-cost is absent",
     {"controller.kubernetes.io/pod-deletion-cost": str(2**26)}, 0, 1.5),
    ("disruption-cost wins over pod-deletion-cost",
     {"karpenter.sh/disruption-cost": "0", "controller.kubernetes.io/pod-deletion-cost": str(2**27)}, 0, 1.0),
    ("a value that is no int32 is skipped", {"karpenter.sh/disruption-cost": str(2**31)}, 0, 1.0),
    ("priority adds priority / 2^25", {}, 2**25, 2.0),
    ("the cost is clamped to 10", {}, 2**30, 10.0),
    ("and to -10", {}, -(2**30), -10.0),
]


@pytest.mark.parametrize(("annotations", "priority", "want"), [c[1:] for c in COSTS], ids=[c[0] for c in COSTS])
def test_eviction_cost(annotations: dict[str, str], priority: int, want: float) -> None:
    assert eviction_cost(pod("p", annotations=annotations, priority=priority)) == want


def test_lifetime_left_scales_with_expire_after() -> None:
    assert lifetime_remaining(ClaimView("c", created=NOW - 3600, expire_after=4 * 3600.0), NOW) == 0.75
    assert lifetime_remaining(ClaimView("c", created=NOW - 9999, expire_after=3600.0), NOW) == 0.0
    assert lifetime_remaining(ClaimView("c", created=NOW), NOW) == 1.0


def test_a_node_without_a_claim_still_reads_its_labels() -> None:
    assert StateNode("n", Node("n", labels={"a": "b"}), None).labels == {"a": "b"}


def test_a_nodes_disruption_cost_counts_running_non_daemonset_pods() -> None:
    """StateNode.DisruptionCost (Balanced's totals): cluster state drops completed pods from a node."""
    from kplan.autoscaler.karpenter.disruption.balanced import node_disruption_cost
    n = node("n", pod("web"), pod("done", phase="Succeeded"), pod("ds", owner="DaemonSet"), pod("p", priority=2**25))
    assert node_disruption_cost(n) == 1.0 + 1.0 + 2.0
