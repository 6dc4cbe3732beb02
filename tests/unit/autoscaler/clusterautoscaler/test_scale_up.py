"""--autoscaler cluster-autoscaler on the shipped fixtures: fixtures/cluster.yaml, the burst of
fixtures/karpenter/burst.yaml (30 replicas of 2 cores / 4Gi; 8 stay pending after kube-scheduler's
first pass) and the node groups of fixtures/cluster-autoscaler/node-groups.yaml."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kplan.errors import InputError
from kplan.io.catalog import read_catalog
from kplan.io.manifests import load_manifests
from kplan.io.nodegroups import read_node_groups
from kplan.io.workspace import load_workspace, open_planner
from kplan.scheduler.pod_status import PodStatus
from kplan.whatif.autoscale import ClusterAutoscalerSettings, cluster_autoscaler
from kplan.whatif.plan import Planner

ROOT = Path(__file__).resolve().parents[4]
CATALOG = read_catalog(str(ROOT / "fixtures/karpenter/instance-types.json"))
GROUPS = read_node_groups(str(ROOT / "fixtures/cluster-autoscaler/node-groups.yaml"))


def planner(expanders: tuple[str, ...] = ("least-waste",), max_nodes_total: int = 0, groups: tuple = GROUPS,
            seed: int = 0, balance: bool = False) -> Planner:
    ws = load_workspace(load_manifests([str(ROOT / "fixtures/cluster.yaml")]),
                        load_manifests([str(ROOT / "fixtures/karpenter/burst.yaml")]))
    p = open_planner(ws, None, lowest_name=True)
    p.autoscaler = cluster_autoscaler(p.inputs, ClusterAutoscalerSettings(groups, CATALOG, expanders, max_nodes_total,
                                                                          balance),
                                      p.setup, seed=seed)
    return p


def decisions(p: Planner) -> list:
    run = p.simulate()
    assert run.autoscaling is not None
    return [d for _, d in run.autoscaling.decisions]


@pytest.mark.parametrize(("expanders", "chosen", "count"), [
    # least-waste: compute's 3 x 8 cores hold 8 x 2 cores (1/3 of CPU and memory idle: 0.667); memory's
    # 64 GiB nodes waste more (1.167); general-a has room for 2 nodes only (6 pods, 0.841)
    pytest.param(("least-waste",), "compute", 3, id="least-waste grows the group that wastes least"),
    pytest.param(("least-nodes",), "general-a", 2, id="least-nodes grows the group needing the fewest nodes"),
    # compute and memory both help 8: most-pods leaves two, least-waste decides
    pytest.param(("most-pods", "least-waste"), "compute", 3, id="a chain goes on while several options are left"),
])
def test_the_expander_chooses_the_group(expanders: tuple[str, ...], chosen: str, count: int) -> None:
    (first, *_) = decisions(planner(expanders))
    assert (first.chosen, first.node_count) == (chosen, count)
    assert [(o.node_group, o.node_count, len(o.pods)) for o in first.considered] == [
        ("general-a", 2, 6), ("compute", 3, 8), ("memory", 3, 8)]


def test_new_nodes_name_their_group_and_kube_scheduler_uses_them() -> None:
    run = planner().simulate()
    assert run.autoscaling is not None
    launched = run.autoscaling.launched
    assert [(n.new.group, n.new.instance_type, n.new.price_per_hour) for n in launched] == [("compute", "c6i.2xlarge",
                                                                                             0.34)] * 3
    assert all(o.status == PodStatus.SCHEDULED for o in run.result.pods)
    assert all(n.daemon_pods for n in launched)  # the node-exporter DaemonSet runs on each


def test_max_nodes_total_caps_the_choice_and_stops_scale_ups_at_the_total() -> None:
    # the cluster has 12 nodes: a total of 13 leaves room for one
    first, *rest = decisions(planner(max_nodes_total=13))
    assert (first.chosen, first.node_count) == ("compute", 1)
    assert first.capped == "capped at 1 by --max-nodes-total 13"
    assert rest and rest[0].chosen is None
    assert all(why.startswith("pod didn't trigger scale-up:") and "max node total count already reached" in why
               for why in rest[-1].unhelped.values())


def test_a_group_at_its_max_size_is_skipped_with_the_autoscalers_reason() -> None:
    full = tuple(dataclasses.replace(g, size=g.max_size, min_size=0) for g in GROUPS)
    (first,) = decisions(planner(groups=full))
    assert first.chosen is None and not first.considered
    assert set(first.unhelped.values()) == {"pod didn't trigger scale-up: 3 max node group size reached"}


def test_a_group_below_its_min_size_is_filled() -> None:
    groups = (dataclasses.replace(GROUPS[0], size=0),) + GROUPS[1:]
    first = decisions(planner(groups=groups))[0]
    assert first.min_size_fill == {"general-a": 2}


def test_an_unknown_template_node_is_a_one_line_error() -> None:
    bad = (dataclasses.replace(GROUPS[0], like="nope"),)
    with pytest.raises(InputError, match="node-groups.yaml: node group general-a: like: no node nope in the cluster"):
        planner(groups=bad)


@pytest.mark.parametrize("expanders", [("least-waste",), ("least-nodes",)])
def test_reserving_the_estimates_nodes_ahead_changes_no_decision(expanders: tuple[str, ...]) -> None:
    from kplan.autoscaler.clusterautoscaler.orchestrator import scale_up

    p = planner(expanders)
    run = p.simulation()[2].run()
    table = run.snapshot.table
    bound = {name: table.pods[row] for row, name in enumerate(table.names)}
    pending = [o.pod for o in run.pods if o.status == PodStatus.UNSCHEDULABLE]
    ca = p.autoscaler
    assert ca is not None and pending

    def decide(reserve: bool) -> tuple:
        d = scale_up(p.setup, list(table.nodes), bound, pending, ca.templates, ca.sizes, ca.chain, reserve=reserve)
        return d.chosen, d.node_count, d.considered, d.unhelped

    assert decide(True) == decide(False)
