"""The disruption methods (emptiness, drift, multi- and single-node consolidation) and the
controller that runs them in order until none acts, on a scheduling simulation given as a table."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kplan.autoscaler.karpenter.disruption.balanced import BalancedEvaluator
from kplan.autoscaler.karpenter.disruption.consolidation import Consolidation
from kplan.autoscaler.karpenter.disruption.controller import (
    DELETED,
    KEPT,
    REPLACED,
    ConsolidationResult,
    DisruptionOptions,
    LaunchedNode,
    disrupt,
)
from kplan.autoscaler.karpenter.disruption.helpers import SimulationResults, Simulator, get_candidates
from kplan.autoscaler.karpenter.disruption.multinodeconsolidation import MultiNodeConsolidation
from kplan.autoscaler.karpenter.disruption.nodepool import WHEN_EMPTY, Budget
from kplan.autoscaler.karpenter.disruption.pdb import Limits
from kplan.autoscaler.karpenter.disruption.singlenodeconsolidation import SingleNodeConsolidation
from kplan.autoscaler.karpenter.disruption.state import (
    CAPACITY_TYPE_LABEL,
    INSTANCE_TYPE_LABEL,
    NODEPOOL_LABEL,
    SPOT,
    ZONE_LABEL,
    ClaimView,
    NodePoolView,
    StateNode,
)
from kplan.autoscaler.karpenter.disruption.types import GRACEFUL, Candidate, Replacement
from kplan.model.objects import Node

from .builders import NOW, FakeClaim, TableSimulator, fails, fits, needs, node, pod, pool


def candidates(nodes: Sequence[StateNode], pools: dict[str, NodePoolView], c: Consolidation) -> list[Candidate]:
    return get_candidates(nodes, pools, Limits([], {}), NOW, c.should_disrupt, GRACEFUL).candidates


def consolidation(sim: Simulator, spot_to_spot: bool = False) -> Consolidation:
    return Consolidation(sim, NOW, BalancedEvaluator({}), spot_to_spot)


def launcher(r: Replacement, name: str, now: float) -> tuple[StateNode, LaunchedNode]:
    it = r.instance_types[0]
    labels = {NODEPOOL_LABEL: r.node_pool, INSTANCE_TYPE_LABEL: it, CAPACITY_TYPE_LABEL: r.capacity_types[-1],
              ZONE_LABEL: "a", "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"}
    state = StateNode(name, Node(name, labels=labels, ready="True"),
                      ClaimView(name, labels=labels, created=now, initialized=now))
    return state, LaunchedNode(name, r.node_pool, it, r.capacity_types[-1], "a", r.price or 0.0, r.instance_types,
                               r.pods, 0)


def run(nodes: Sequence[StateNode], sim: Simulator, pools: dict[str, NodePoolView] | None = None,
        **opts: object) -> ConsolidationResult:
    return disrupt(nodes, pools or {"default": pool()}, Limits([], {}), NOW, lambda _: sim, launcher,
                   DisruptionOptions(**opts))  # type: ignore[arg-type]


def verdicts(r: ConsolidationResult) -> dict[str, tuple[str, str]]:
    return {o.name: (o.verdict, o.reason) for o in r.nodes}


# ------------------------------------------------------------------------------ consolidation

SHOULD = [
    ("an empty node is left to emptiness", node("n"), pool(), ""),
    ("a node of an unknown instance type", node("n", pod("p"), it="huge"), pool(), 'Instance Type "huge" not found'),
    ("consolidateAfter Never disables consolidation", node("n", pod("p")), pool(consolidate_after=None),
     'NodePool "default" has consolidation disabled'),
    ("WhenEmpty leaves a busy node", node("n", pod("p")), pool(consolidation_policy=WHEN_EMPTY),
     'NodePool "default" has consolidation policy WhenEmpty, but node is not empty'),
    ("a recent pod event keeps the node under consolidateAfter", node("n", pod("p"), claim={"last_pod_event": NOW - 60}),
     pool(consolidate_after=300.0), "ConsolidateAfter (5m0s) has not passed since the last pod event (1m0s ago)"),
    ("without a pod event the initialization counts", node("n", pod("p"), claim={"initialized": NOW - 30}),
     pool(consolidate_after=60.0), "ConsolidateAfter (1m0s) has not passed since the last pod event (30s ago)"),
    ("an old pod event does not", node("n", pod("p"), claim={"last_pod_event": NOW - 600}),
     pool(consolidate_after=300.0), None),
    ("a static NodePool's node is not consolidated", node("n", pod("p")), pool(replicas=3), ""),
]


@pytest.mark.parametrize(("state", "np", "want"), [s[1:] for s in SHOULD], ids=[s[0] for s in SHOULD])
def test_consolidation_should_disrupt(state: StateNode, np: NodePoolView, want: str | None) -> None:
    c = consolidation(TableSimulator(lambda _: fits()))
    got = get_candidates([state], {"default": np}, Limits([], {}), NOW, c.should_disrupt, GRACEFUL)
    assert (got.kept.get("n") if got.kept else None) == want


COMPUTE = [
    ("the pods fit elsewhere: delete", fits({"default/p": "other"}), ON_DEMAND_NODE := {}, "delete", None),
    ("a pod fits nowhere", fails(default__p="incompatible with nodepool \"default\""), {}, "no-op",
     'Not all pods would schedule, default/p => incompatible with nodepool "default" '),
    ("two new NodeClaims", needs(FakeClaim("default", [("small", 0.1)]), FakeClaim("default", [("small", 0.1)])), {},
     "no-op", "Can't remove without creating 2 candidates"),
    ("a cheaper type replaces the node", needs(FakeClaim("default", [("large", 0.4), ("small", 0.1)])), {}, "replace",
     None),
    ("no cheaper type", needs(FakeClaim("default", [("large", 0.4), ("medium", 0.2)])), {}, "no-op",
     "Can't replace with a cheaper node"),
    ("minValues left unmet by the price filter",
     needs(FakeClaim("default", [("small", 0.1), ("large", 0.4)], min_values=2)), {}, "no-op",
     "Filtering by price: minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type])"),
    ("spot to spot is off by default", needs(FakeClaim("default", [("small", 0.03)])), {"ct": SPOT}, "no-op",
     "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"),
    ("spot to spot wants 15 cheaper types", needs(FakeClaim("default", [("small", 0.03)])),
     {"ct": SPOT, "gate": True}, "no-op",
     "SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to consolidate, "
     "got 1"),
]


@pytest.mark.parametrize(("answer", "kw", "decision", "message"), [c[1:] for c in COMPUTE], ids=[c[0] for c in COMPUTE])
def test_compute_consolidation_of_one_node(answer: SimulationResults, kw: dict[str, object], decision: str,
                                           message: str | None) -> None:
    c = consolidation(TableSimulator(lambda _: answer), spot_to_spot=bool(kw.get("gate")))
    state = node("n", pod("p"), ct=str(kw.get("ct", "on-demand")))
    [cand] = candidates([state], {"default": pool()}, c)
    cmd = c.compute_consolidation([cand])
    assert cmd.decision() == decision
    assert c.notes.get("n") == message


def test_a_replacement_that_may_be_spot_or_on_demand_is_pinned_to_spot() -> None:
    claim = FakeClaim("default", [("large", 0.4), ("small", 0.1)])
    c = consolidation(TableSimulator(lambda _: needs(claim)))
    [cand] = candidates([node("n", pod("p"))], {"default": pool()}, c)
    cmd = c.compute_consolidation([cand])
    assert cmd.replacements[0].instance_types == ("small",)
    assert claim.capacity == [SPOT]
    assert cmd.estimated_savings() == pytest.approx(0.1)


def test_spot_to_spot_keeps_the_15_cheapest_of_enough_cheaper_types() -> None:
    options = [(f"t{i:02}", 0.001 * i) for i in range(30, 0, -1)]
    c = consolidation(TableSimulator(lambda _: needs(FakeClaim("default", list(options)))), spot_to_spot=True)
    [cand] = candidates([node("n", pod("p"), ct=SPOT, it="large")], {"default": pool()}, c)
    cmd = c.compute_consolidation([cand])
    assert cmd.replacements[0].instance_types == tuple(f"t{i:02}" for i in range(1, 16))


# ------------------------------------------------------------------------------ multi-node


def test_multi_node_takes_the_longest_prefix_that_can_go_together() -> None:
    nodes = [node(f"n{i}", pod(f"p{i}")) for i in range(5)]
    sim = TableSimulator(lambda names: fits() if len(names) <= 3 else fails(default__p0="no room"))
    c = consolidation(sim)
    m = MultiNodeConsolidation(c)
    [cmd] = m.compute_commands({"default": 10}, candidates(nodes, {"default": pool()}, c))
    assert [x.name for x in cmd.candidates] == ["n0", "n1", "n2"]
    assert [len(names) for names, _ in sim.calls] == [3, 4]
    assert all(consolidation for _, consolidation in sim.calls)


def test_multi_node_leaves_out_candidates_beyond_the_budget() -> None:
    nodes = [node(f"n{i}", pod(f"p{i}")) for i in range(5)]
    c = consolidation(TableSimulator(lambda names: fits()))
    [cmd] = MultiNodeConsolidation(c).compute_commands({"default": 2}, candidates(nodes, {"default": pool()}, c))
    assert len(cmd.candidates) == 2
    assert c.notes["n4"] == "No allowed disruptions for disruption reason Underutilized due to blocking budget"


def test_multi_node_drops_replacement_types_no_cheaper_than_a_candidate_of_that_type() -> None:
    nodes = [node("a", pod("p"), it="large"), node("b", pod("q"), it="large"), node("c", pod("r"), it="small")]

    def answer(names: frozenset[str]) -> SimulationResults:
        return needs(FakeClaim("default", [("small", 0.1), ("medium", 0.2), ("large", 0.4)]))

    c = consolidation(TableSimulator(answer))
    [cmd] = MultiNodeConsolidation(c).compute_commands({"default": 10}, candidates(nodes, {"default": pool()}, c))
    # the two large nodes (highest savings ratio) go for one node cheaper than a large one; adding the small node
    # would leave no type cheaper than its own "small", so the longer prefix is not valid
    assert [x.name for x in cmd.candidates] == ["a", "b"]
    assert cmd.replacements[0].instance_types == ("small", "medium")


# ------------------------------------------------------------------------------ single-node


def test_single_node_interleaves_node_pools_by_name_after_the_savings_order() -> None:
    pools = {"b": pool("b"), "a": pool("a")}
    nodes = [node("b1", pod("x"), pool_name="b", it="large"), node("b2", pod("y"), pool_name="b"),
             node("a1", pod("z"), pool_name="a", it="small")]
    sim = TableSimulator(lambda names: fails(default__x="no"))
    c = consolidation(sim)
    assert SingleNodeConsolidation(c).compute_commands({"a": 1, "b": 1}, candidates(nodes, pools, c)) == []
    assert [names for names, _ in sim.calls] == [("a1",), ("b1",), ("b2",)]


# ------------------------------------------------------------------------------ the controller


def test_empty_nodes_go_first_all_at_once_within_the_budget() -> None:
    nodes = [node("e1"), node("e2", pod("ds", owner="DaemonSet")), node("e3"), node("busy", pod("p"))]
    r = run(nodes, TableSimulator(lambda names: fails(default__p="no room")),
            pools={"default": pool(budgets=(Budget("2"),))})
    assert r.commands[0].method == "emptiness" and r.commands[0].candidates == ("e1", "e2")
    assert verdicts(r)["e3"] == (DELETED, "Empty")
    assert r.commands[1].candidates == ("e3",)
    assert verdicts(r)["busy"] == (KEPT, 'Not all pods would schedule, default/p => no room ')
    assert r.cost_before == pytest.approx(0.8) and r.cost_after == pytest.approx(0.2)


def test_an_exhausted_budget_keeps_an_empty_node_with_karpenters_event() -> None:
    r = run([node("e1")], TableSimulator(lambda names: fits()), pools={"default": pool(budgets=(Budget("0"),))})
    assert verdicts(r)["e1"] == (KEPT, "No allowed disruptions for disruption reason Empty due to blocking budget")


def test_replacement_then_the_cheaper_node_is_kept() -> None:
    def answer(names: frozenset[str]) -> SimulationResults:
        return needs(FakeClaim("default", [("small", 0.1), ("large", 0.4)], pods=("default/p",)))

    r = run([node("big", pod("p"), it="large")], TableSimulator(answer))
    assert verdicts(r)["big"] == (REPLACED, "Underutilized")
    [launched] = r.launched
    assert launched.instance_type == "small" and r.nodes[0].replaced_by == (launched.name,)
    assert r.nodes[0].moved == (("default/p", launched.name),)
    assert r.saving == pytest.approx(0.3)
    # the new node received the pod now: it stays under consolidateAfter? (0s here) and no cheaper type is left
    assert len(r.commands) == 1


def test_drift_replaces_a_drifted_node_with_the_plain_simulation() -> None:
    sim = TableSimulator(lambda names: needs(FakeClaim("default", [("medium", 0.2)], pods=("default/p",))))
    r = run([node("old", pod("p"), claim={"drifted": NOW - 100})], sim)
    assert r.commands[0].method == "drift" and verdicts(r)["old"] == (REPLACED, "Drifted")
    assert sim.calls[0] == (("old",), False)


def test_pods_moved_to_an_existing_node_restart_its_consolidate_after() -> None:
    pools = {"default": pool(consolidate_after=300.0)}
    nodes = [node("a", pod("p"), it="large"), node("b", pod("q"), it="large")]
    sim = TableSimulator(lambda names: fits({"default/p": "b"}) if names == {"a"} else fails(default__q="no"))
    r = run(nodes, sim, pools=pools)
    assert verdicts(r)["a"] == (DELETED, "Underutilized")
    assert verdicts(r)["b"][1] == "ConsolidateAfter (5m0s) has not passed since the last pod event (0s ago)"
