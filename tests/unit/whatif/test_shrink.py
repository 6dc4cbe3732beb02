"""kplan whatif --shrink (issue 38, item 3): cluster-autoscaler's drain rules and utilisation, the
greedy removal against an exhaustive search on small clusters, and every answer replayed."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.model.objects import Node, evolve_pod
from kplan.scheduler.pod_status import PodStatus
from kplan.whatif.changes import RemoveNode
from kplan.whatif.shrink import Blocker, ShrinkOptions, drain_rule, shrink, utilization
from tests.unit.whatif.planning_builders import node, pdb, pod

ROOT = Path(__file__).resolve().parents[3]
DEFAULT = ShrinkOptions()


def ds(name: str, node_name: str = "n1") -> Any:
    return pod(name, node_name, owner="DaemonSet/agent")


RULES = [
    # (id, pod, budgets, remaining, options, expected: "move" | "stay" | blocking reason)
    ("a ReplicaSet's pod moves", pod("a", "n1", owner="ReplicaSet/web-1"), [], {}, DEFAULT, "move"),
    ("a StatefulSet's pod moves", pod("a", "n1", owner="StatefulSet/db"), [], {}, DEFAULT, "move"),
    ("a pod without a controller blocks", pod("a", "n1"), [], {}, DEFAULT, "NotReplicated"),
    ("a bare pod annotated safe-to-evict moves", pod("a", "n1", annotations={
        "cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}), [], {}, DEFAULT, "move"),
    ("a DaemonSet pod stays with its node", ds("a"), [], {}, DEFAULT, "stay"),
    ("a mirror pod stays with its node", pod("a", "n1", annotations={"kubernetes.io/config.mirror": "x"}), [], {},
     DEFAULT, "stay"),
    ("a pod of a custom controller blocks by default", pod("a", "n1", owner="Rollout/r"), [], {}, DEFAULT,
     "NotReplicated"),
    ("a pod of a custom controller moves without --skip-nodes-with-custom-controller-pods",
     pod("a", "n1", owner="Rollout/r"), [], {}, ShrinkOptions(skip_nodes_with_custom_controller_pods=False), "move"),
    ("a kube-system pod without a budget blocks", pod("a", "n1", ns="kube-system", owner="ReplicaSet/dns"), [], {},
     DEFAULT, "UnmovableKubeSystemPod"),
    ("a kube-system pod without a budget moves without --skip-nodes-with-system-pods",
     pod("a", "n1", ns="kube-system", owner="ReplicaSet/dns"), [], {},
     ShrinkOptions(skip_nodes_with_system_pods=False), "move"),
    ("a kube-system pod with a budget left moves", pod("a", "n1", ns="kube-system", owner="ReplicaSet/dns", app="dns"),
     [pdb("dns", 1, ns="kube-system", app="dns")], {("kube-system", "dns"): 1}, DEFAULT, "move"),
    ("a pod annotated not safe to evict blocks", pod("a", "n1", owner="ReplicaSet/w", annotations={
        "cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}), [], {}, DEFAULT, "NotSafeToEvictAnnotation"),
    ("a budget with no disruption left blocks", pod("a", "n1", owner="ReplicaSet/w", app="w"), [pdb("w", 0, app="w")],
     {("default", "w"): 0}, DEFAULT, "NotEnoughPdb"),
    ("a budget with a disruption left lets it move", pod("a", "n1", owner="ReplicaSet/w", app="w"),
     [pdb("w", 1, app="w")], {("default", "w"): 1}, DEFAULT, "move"),
]


@pytest.mark.parametrize("p, budgets, remaining, opts, expected", [c[1:] for c in RULES], ids=[c[0] for c in RULES])
def test_drain_rules(p, budgets, remaining, opts, expected):
    got = drain_rule(p, budgets, remaining, opts)
    assert (got.reason if isinstance(got, Blocker) else got) == expected


LOCAL = [
    ("an emptyDir blocks", ("cache",), {}, DEFAULT, "LocalStorageRequested"),
    ("an emptyDir listed as safe to evict moves", ("cache",),
     {"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes": "cache,tmp"}, DEFAULT, "move"),
    ("local storage moves without --skip-nodes-with-local-storage", ("cache",), {},
     ShrinkOptions(skip_nodes_with_local_storage=False), "move"),
]


@pytest.mark.parametrize("volumes, annotations, opts, expected", [c[1:] for c in LOCAL], ids=[c[0] for c in LOCAL])
def test_local_storage(volumes, annotations, opts, expected):
    p = evolve_pod(pod("a", "n1", owner="ReplicaSet/w", annotations=annotations), local_volumes=volumes)
    got = drain_rule(p, [], {}, opts)
    assert (got.reason if isinstance(got, Blocker) else got) == expected


def test_utilisation_is_the_larger_share_and_gpus_decide_alone():
    n = node("n1", cpu="4", memory="8Gi")
    pods = [pod("a", "n1", cpu="1"), ds("agent")]
    u = utilization(n, pods, DEFAULT)
    assert (u.resource, u.value) == ("cpu", 0.5)
    assert utilization(n, pods, ShrinkOptions(ignore_daemonsets_utilization=True)).value == pytest.approx(1 / 3)
    gpu = Node("g", allocatable={"cpu": 4000, "memory": 8 << 30, "nvidia.com/gpu": 4, "pods": 110})
    g = evolve_pod(pod("t", "g", cpu="3"), requests={"cpu": 3000, "nvidia.com/gpu": 1})
    assert (utilization(gpu, [g], DEFAULT).resource, utilization(gpu, [g], DEFAULT).value) == ("nvidia.com/gpu", 0.25)


# ------------------------------------------------------------------------------ whole searches

def write_cluster(tmp: Path, nodes: list[tuple[str, str]], pods: list[tuple[str, str, str, str | None]],
                  extra: list[dict[str, Any]] | None = None) -> Any:
    """nodes: (name, cpu); pods: (name, node, cpu, owner kind/name or None)."""
    docs: list[dict[str, Any]] = []
    for name, cpu in nodes:
        docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "zone-a",
            "node.kubernetes.io/instance-type": "m5.xlarge"}},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}})
    for name, node_name, cpu, owner in pods:
        md: dict[str, Any] = {"name": name, "namespace": "default", "labels": {"app": name.rsplit("-", 1)[0]}}
        if owner:
            kind, oname = owner.split("/")
            md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": oname, "uid": oname,
                                      "controller": True}]
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": {
            "nodeName": node_name, "containers": [{"name": "c", "image": "i", "resources": {
                "requests": {"cpu": cpu, "memory": "256Mi"}}}]}})
    docs += extra or []
    path = tmp / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    loaded = load_inputs([str(path)], [], progress=False)
    return open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)


def replays_with_every_pod_placed(planner: Any, removed: list[str]) -> bool:
    changed, applied = planner.changed([RemoveNode(n) for n in removed])
    run = planner.simulate(changed, applied=applied)
    return (all(o.status in (PodStatus.SCHEDULED, PodStatus.GATED) for o in run.result.pods)
            and not run.result.preempted)


def exhaustive(planner: Any, candidates: list[str]) -> list[str]:
    """The largest set of candidates whose removal replays with every pod placed: sizes upward,
    a set tried only when every set one smaller inside it passed (more removals never make room)."""
    feasible = {frozenset()}
    best: frozenset[str] = frozenset()
    for size in range(1, len(candidates) + 1):
        level = set()
        for combo in itertools.combinations(sorted(candidates), size):
            s = frozenset(combo)
            if all(s - {x} in feasible for x in s) and replays_with_every_pod_placed(planner, sorted(s)):
                level.add(s)
        if not level:
            break
        feasible |= level
        best = min(level, key=sorted)
    return sorted(best)


def random_cluster(seed: int, nodes: int) -> tuple[list[tuple[str, str]], list[tuple[str, str, str, str | None]]]:
    rng = random.Random(seed)
    node_list = [(f"n{i:02d}", "4") for i in range(nodes)]
    pods = []
    for i, (name, _) in enumerate(node_list):
        load = rng.choice([0, 1, 2, 3, 4, 6, 8, 10])  # in 250m steps, up to 2.5 cpu (62%)
        k = 0
        while load > 0:
            size = min(load, rng.choice([1, 2, 4]))
            pods.append((f"app{i}-{k}", name, f"{size * 250}m", f"ReplicaSet/rs{i % 3}"))
            load -= size
            k += 1
    return node_list, pods


#: 4-8 nodes here; clusters of up to 12 nodes, with an exhaustive search that assumes no
#: monotonicity, take minutes: benchmarks/bench_shrink_exhaustive.py
SEEDS = list(range(12))


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seeded cluster {s} of {4 + s % 5} nodes" for s in SEEDS])
def test_greedy_against_exhaustive_on_small_clusters(tmp_path: Path, seed: int) -> None:
    nodes, pods = random_cluster(seed, 4 + seed % 5)
    planner = write_cluster(tmp_path, nodes, pods)
    found = shrink(planner, [], DEFAULT)
    greedy = [v.node for v in found.removed]
    assert replays_with_every_pod_placed(planner, greedy), "every answer replays with every pod placed"
    eligible = [v.node for v in found.removed] + [v.node for v in found.kept
                                                  if v.reason in ("NoPlaceToMovePods", "DroppedInReplay")]
    best = exhaustive(planner, eligible)
    assert len(greedy) <= len(best)
    if len(greedy) < len(best):
        # why the greedy stops short: it removes the least utilised node first and keeps each
        # removal; the scheduler spreads that node's pods (LeastAllocated) over the nodes left,
        # among them nodes of the larger answer, which then hold more than the room that remains
        missed = [v for v in found.kept if v.node in best and v.node not in greedy]
        assert missed and all(v.reason in ("NoPlaceToMovePods", "DroppedInReplay") for v in missed)
        assert any(m[1] in best for v in found.removed for m in v.moved)


#: hand-made clusters, one per rule of the search (nodes of 4 cpu)
CASES = [
    ("light nodes pack onto one", [("a", "4"), ("b", "4"), ("c", "4"), ("d", "4")],
     [(f"w-{n}", n, "1", "ReplicaSet/w") for n in "abcd"], ["a", "b", "c"], ["a", "b", "c"]),
    ("a bare pod keeps its node", [("a", "4"), ("b", "4")],
     [("bare-0", "a", "500m", None), ("w-0", "b", "500m", "ReplicaSet/w")], ["b"], ["b"]),
    ("a node above the threshold stays", [("a", "4"), ("b", "4")],
     [("big-0", "a", "3", "ReplicaSet/big"), ("w-0", "b", "500m", "ReplicaSet/w")], ["b"], ["b"]),
    ("pods that fit nowhere else keep their node", [("a", "4"), ("b", "4")],
     [("w-0", "a", "1900m", "ReplicaSet/w"), ("w-1", "b", "1900m", "ReplicaSet/w"),
      ("x-0", "a", "100m", "ReplicaSet/x"), ("x-1", "b", "100m", "ReplicaSet/x")], [], []),
]


@pytest.mark.parametrize("nodes, pods, greedy, best", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hand_made_clusters(tmp_path: Path, nodes, pods, greedy, best) -> None:
    planner = write_cluster(tmp_path, nodes, pods)
    found = shrink(planner, [], DEFAULT)
    assert [v.node for v in found.removed] == greedy
    assert replays_with_every_pod_placed(planner, greedy)
    eligible = [v.node for v in found.removed] + [v.node for v in found.kept if v.reason == "NoPlaceToMovePods"]
    assert exhaustive(planner, eligible) == best


def test_a_budget_spent_by_one_removal_keeps_the_next_node(tmp_path: Path) -> None:
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "w", "namespace": "default"},
              "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "w"}}}}
    planner = write_cluster(tmp_path, [("a", "4"), ("b", "4"), ("c", "4")],
                            [("w-0", "a", "500m", "ReplicaSet/w"), ("w-1", "b", "600m", "ReplicaSet/w"),
                             ("x-0", "c", "1", "ReplicaSet/x")], [budget])
    found = shrink(planner, [], DEFAULT)
    assert [v.node for v in found.removed] == ["a", "c"], "a's pod went to b (the least allocated), c's x moved"
    b = next(v for v in found.kept if v.node == "b")
    assert (b.reason, b.blockers[0].reason) == ("BlockedByPod", "NotEnoughPdb")


def test_candidates_limit_the_search_and_an_unknown_node_is_an_error(tmp_path: Path) -> None:
    from kplan.errors import InputError

    planner = write_cluster(tmp_path, [("a", "4"), ("b", "4"), ("c", "4")],
                            [(f"w-{n}", n, "500m", "ReplicaSet/w") for n in "abc"])
    found = shrink(planner, [], ShrinkOptions(candidates=("c",)))
    assert [v.node for v in found.removed] == ["c"] and not found.kept
    with pytest.raises(InputError, match="no node named 'z'"):
        shrink(planner, [], ShrinkOptions(candidates=("z",)))


def test_the_shipped_fixtures(tmp_path: Path) -> None:
    loaded = load_inputs([str(ROOT / "fixtures" / "cluster.yaml")], [str(ROOT / "fixtures" / "manifests" / "shop.yaml")],
                         progress=False)
    planner = open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)
    found = shrink(planner, [], DEFAULT)
    assert [v.node for v in found.removed] == ["gpu-c-1", "gen-c-3", "gen-a-1"]
    reasons = {v.node: v.reason for v in found.kept}
    assert reasons["cp-a-1"] == "BlockedByPod" and reasons["mem-b-1"] == "NotUnderutilized"
    assert replays_with_every_pod_placed(planner, [v.node for v in found.removed])


def test_without_changes_the_pending_pods_are_scheduled_once_for_the_run_before_and_the_search(tmp_path: Path) -> None:
    from kplan.whatif.changes import CordonNode
    from kplan.whatif.shrink import whatif_shrink

    def planner() -> Any:
        loaded = load_inputs([str(ROOT / "fixtures" / "cluster.yaml")],
                             [str(ROOT / "fixtures" / "manifests" / "shop.yaml")], progress=False)
        return open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)

    reusing = planner()
    stages: list[str] = []
    reusing.progress = lambda stage, done, total: stages.append(stage) if done == 1 else None
    what, found = whatif_shrink(reusing, [], DEFAULT)
    assert stages[0] == "before" and "shrink: pending pods" not in stages
    # the same answer and document as a search that schedules its pending pods itself
    alone = shrink(planner(), [], DEFAULT)
    assert [v.node for v in found.removed] == [v.node for v in alone.removed] == ["gpu-c-1", "gen-c-3", "gen-a-1"]
    assert found.unplaced_before == alone.unplaced_before
    # a change (cordoning a node no pod uses less) makes the search run its own pending run
    stages.clear()
    whatif_shrink(reusing, [CordonNode("gpu-c-1")], DEFAULT)
    assert "shrink: pending pods" in stages
    assert what.diff == whatif_shrink(planner(), [], DEFAULT)[0].diff


@pytest.mark.parametrize("manifests, launched", [([], False), (["fixtures/karpenter/burst.yaml"], True)],
                         ids=["no pod pending: the scale-up launches nothing", "a burst: the scale-up launches nodes"])
def test_with_the_cluster_autoscaler_the_scale_up_starts_from_the_run_before(manifests: list[str],
                                                                              launched: bool) -> None:
    from kplan.cli.workspace import attach_autoscaler, check_autoscaler
    from kplan.whatif.shrink import whatif_shrink

    catalog = check_autoscaler("cluster-autoscaler", str(ROOT / "fixtures" / "karpenter" / "instance-types.json"),
                               str(ROOT / "fixtures" / "cluster-autoscaler" / "node-groups.yaml"))
    loaded = load_inputs([str(ROOT / "fixtures" / "cluster.yaml")], [str(ROOT / m) for m in manifests],
                         progress=False)
    planner = open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)
    autoscaler = attach_autoscaler(planner, catalog, seed=0, attach=False)
    stages: list[str] = []
    planner.progress = lambda stage, done, total: stages.append(stage) if done == 1 else None
    _, found = whatif_shrink(planner, [], DEFAULT, autoscaler=autoscaler)
    assert "shrink: scale-up" not in stages and "shrink: pending pods" not in stages
    cooled = [v.node for v in found.kept if v.reason == "ScaleDownInCooldown"]
    assert bool(cooled) == launched and bool(found.removed) != launched
