"""Karpenter in the autoscaler's role (kplan.autoscaler.karpenter.autoscaler) on the shipped
fixtures, with a ``solve`` scripted by the test (the claims it returns are what Karpenter's
scheduler would return); launch, naming, DaemonSet pods and the flow around it are kplan's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from kplan.autoscaler.karpenter.results import KarpenterCluster, NewNodeClaim, ProvisioningResult
from kplan.errors import InputError
from kplan.io.catalog import read_catalog
from kplan.io.manifests import load_manifests
from kplan.io.workspace import load_workspace, open_planner
from kplan.model.karpenter import Requirement
from kplan.model.objects import Pod
from kplan.scheduler.pod_status import PodStatus
from kplan.whatif.autoscale import karpenter

ROOT = Path(__file__).resolve().parents[3]
CATALOG = read_catalog(str(ROOT / "fixtures/karpenter/instance-types.json"))


class Scripted:
    """Packs each pending pod the test names into a claim of ``pool`` with ``types``; every other
    pod gets ``why``."""

    def __init__(self, pods: Sequence[str], pool: str = "general",
                 types: Sequence[str] = ("m6i.12xlarge",), why: str = "incompatible with nodepool") -> None:
        self.pods, self.pool, self.types, self.why = set(pods), pool, tuple(types), why
        self.clusters: list[KarpenterCluster] = []

    def __call__(self, cluster: KarpenterCluster, pending: Sequence[Pod]) -> ProvisioningResult:
        self.clusters.append(cluster)
        its = tuple(t for name in self.types for t in cluster.catalog.instance_types if t.name == name)
        claims = tuple(NewNodeClaim(self.pool, its, (p,), (
            Requirement("karpenter.sh/capacity-type", "In", ("on-demand",)),
            Requirement("node.kubernetes.io/instance-type", "In", self.types),
            Requirement("topology.kubernetes.io/zone", "In", ("eu-west-1b",)),
        ), labels={"pool": self.pool, "karpenter.sh/nodepool": self.pool}) for p in pending if p.name in self.pods)
        return ProvisioningResult(claims, (), {p.key: self.why for p in pending if p.name not in self.pods})


def planner(solve: Scripted, nodepools: bool = True):  # type: ignore[no-untyped-def]
    cluster = [str(ROOT / "fixtures/cluster.yaml")] + ([str(ROOT / "fixtures/karpenter/nodepools.yaml")] if nodepools else [])
    ws = load_workspace(load_manifests(cluster), load_manifests([str(ROOT / "fixtures/manifests")]))
    p = open_planner(ws, None, lowest_name=True)
    p.autoscaler = karpenter(p.inputs, CATALOG, solve, seed=0)
    return p


def test_a_claim_becomes_a_node_named_after_its_pool_that_kube_scheduler_then_uses() -> None:
    solve = Scripted(["warehouse-loader"])
    run = planner(solve).simulate()
    assert run.autoscaling is not None
    [new] = run.autoscaling.launched
    assert new.new.name.startswith("general-") and len(new.new.name) == len("general-") + 5
    assert (new.new.group, new.new.instance_type, new.new.capacity_type, new.new.zone, new.new.price_per_hour) == (
        "general", "m6i.12xlarge", "on-demand", "eu-west-1b", 2.5344)
    o = run.result.outcome("data", "warehouse-loader")
    assert o is not None and o.status == PodStatus.SCHEDULED and o.node == new.new.name
    assert new.new.node.labels["pool"] == "general" and new.new.node.labels["karpenter.sh/nodepool"] == "general"


def test_the_pods_karpenter_cannot_help_keep_its_reason() -> None:
    run = planner(Scripted(["warehouse-loader"], why="incompatible with nodepool \"general\"")).simulate()
    assert run.autoscaling is not None
    assert run.autoscaling.unhelped == dict.fromkeys(
        ["monitoring/metrics-agent", "ml/notebook", "batch/report-archiver"], 'incompatible with nodepool "general"')


def test_karpenter_is_shown_the_nodepools_and_one_pod_per_daemonset() -> None:
    solve = Scripted([])
    p = planner(solve)
    p.simulate()
    cluster = solve.clusters[0]
    assert [n.name for n in cluster.node_pools] == ["spot", "general", "gpu"]
    # the cluster's DaemonSet: its running pod, without the controller's node-name affinity
    [daemon] = cluster.daemonset_pods
    assert daemon.controller() is not None and daemon.node_name == "" and daemon.required_node_affinity is None
    assert len(cluster.nodes) == 12 and len(cluster.bound_pods) == sum(1 for _ in p.inputs.running) + 6


def test_a_claim_no_offering_is_left_for_is_not_launched() -> None:
    # the claim names only a type the catalog lacks: launch finds no offering
    run = planner(Scripted(["warehouse-loader"], types=("x9.huge",))).simulate()
    assert run.autoscaling is not None and run.autoscaling.launched == []
    assert run.autoscaling.unhelped["data/warehouse-loader"].startswith("all requested instance types were unavailable")


def test_without_nodepools_karpenter_is_a_usage_error() -> None:
    with pytest.raises(InputError, match="no NodePool"):
        planner(Scripted([]), nodepools=False)


def test_two_runs_of_one_planner_name_their_new_nodes_alike() -> None:
    # kplan whatif runs before and after with one planner: a node named differently would read as a
    # pod placed elsewhere
    p = planner(Scripted(["warehouse-loader"]))
    first, second = p.simulate(), p.simulate()
    assert first.autoscaling is not None and second.autoscaling is not None
    assert [n.new.name for n in first.autoscaling.launched] == [n.new.name for n in second.autoscaling.launched]
