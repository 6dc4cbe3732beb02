"""--until-fit's partial answers (issue 38, item 2): the count that places as many pending pods as
any count does, the pods that never fit on the template with the filter that rejects them, the
pods still pending, the early stop, and one answer per template."""

from __future__ import annotations

from pathlib import Path

import pytest

from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.scheduler.pod_status import PodStatus

ROOT = Path(__file__).resolve().parents[3]

#: two full 2-cpu nodes in two zones; the template is the zone-a one
PLATEAU_CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: z-a1, labels: {kubernetes.io/hostname: z-a1, topology.kubernetes.io/zone: zone-a}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: z-b1, labels: {kubernetes.io/hostname: z-b1, topology.kubernetes.io/zone: zone-b}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: fill-a, namespace: default}
spec: {nodeName: z-a1, containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: fill-b, namespace: default}
spec: {nodeName: z-b1, containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]}
"""

#: three replicas that want a zone each: nodes like z-a1 (zone-a) hold one of them, ever
ONE_PER_ZONE = "\n---\n".join(f"""
apiVersion: v1
kind: Pod
metadata: {{name: zonal-{i}, namespace: default, labels: {{app: zonal}}}}
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {{matchLabels: {{app: zonal}}}}
        topologyKey: topology.kubernetes.io/zone
  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 500m}}}}}}]
""" for i in range(3))


def planner_of(tmp_path: Path, cluster: str, manifests: str):
    (tmp_path / "cluster.yaml").write_text(cluster)
    (tmp_path / "pods.yaml").write_text(manifests)
    loaded = load_inputs([str(tmp_path / "cluster.yaml")], [str(tmp_path / "pods.yaml")], progress=False)
    return open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)


def test_the_shipped_fixtures_no_node_fixes_the_agent_whose_daemonset_holds_its_port():
    # every node like gen-c-3 starts with its node-exporter DaemonSet pod on host port 9100,
    # which metrics-agent asks for too: no number of such nodes places it
    loaded = load_inputs([str(ROOT / "fixtures" / "cluster.yaml")], [str(ROOT / "fixtures" / "manifests")],
                         progress=False)
    p = open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)
    u = p.whatif([], until_fit="gen-c-3", limit=64).until_fit
    assert u is not None
    assert (u.count, u.all_fit, u.placed) == (None, False, ())
    assert {n.pod: n.status.plugin for n in u.never} == {
        "monitoring/metrics-agent": "NodePorts", "ml/notebook": "NodeResourcesFit",
        "batch/report-archiver": "NodeAffinity", "data/warehouse-loader": "NodeResourcesFit"}
    assert "Insufficient nvidia.com/gpu" in next(n for n in u.never if n.pod == "ml/notebook").status.message
    assert u.still_pending == ()


def test_several_templates_give_one_answer_each_and_the_first_run_is_shown(tmp_path: Path):
    p = planner_of(tmp_path, PLATEAU_CLUSTER, ONE_PER_ZONE)
    w = p.whatif([], until_fit=["z-a1", "z-b1"], limit=16)
    assert [u.template for u in w.until_fits] == ["z-a1", "z-b1"]
    assert w.until_fit is w.until_fits[0]
    assert [(u.count, u.all_fit) for u in w.until_fits] == [(1, False), (1, False)]
    assert "z-a1-whatif-1" in w.after.result.snapshot.table.names
    assert "z-b1-whatif-1" not in w.after.result.snapshot.table.names


@pytest.mark.parametrize("stop_early, probes", [(True, [0, 1, 2]), (False, [0, 1, 2, 4, 8, 16])],
                         ids=["more nodes placing no more pods end the search", "without the stop it runs to the limit"])
def test_a_plateau_ends_the_search(tmp_path: Path, stop_early: bool, probes: list[int]):
    p = planner_of(tmp_path, PLATEAU_CLUSTER, ONE_PER_ZONE)
    w = p.whatif([], until_fit="z-a1", limit=16, stop_early=stop_early)
    u = w.until_fit
    assert u is not None
    assert (u.count, u.all_fit, u.never) == (1, False, ())
    assert sorted(u.probes) == probes
    assert len(u.placed) == 1 and len(u.still_pending) == 2
    scheduled = [o.pod.key for o in w.after.result.pods if o.status == PodStatus.SCHEDULED]
    assert list(u.placed) == scheduled


def stages_of(planner) -> list[str]:
    """The runs a planner makes, by the stage each reports as it pops its first pod."""
    seen: list[str] = []

    def told(stage: str, done: int, total: int) -> None:
        if done == 1:
            seen.append(stage)

    planner.progress = told
    return seen


def test_without_changes_the_search_starts_from_the_run_before_instead_of_repeating_it(tmp_path: Path):
    # the run before and the run with 0 template nodes are one run (same inputs, scheduler and
    # seed): it is made once
    p = planner_of(tmp_path, PLATEAU_CLUSTER, ONE_PER_ZONE)
    stages = stages_of(p)
    u = p.whatif([], until_fit="z-a1", limit=16).until_fit
    assert u is not None and sorted(u.probes) == [0, 1, 2]
    assert stages == ["before", "until fit: 1 more", "until fit: 2 more"]


def test_the_reused_run_gives_the_answer_a_second_run_gives(tmp_path: Path):
    # another scheduler set-up object of the same configuration is not reused: the search runs
    # again from its own run at 0 nodes and finds the same answer
    import dataclasses

    p = planner_of(tmp_path, PLATEAU_CLUSTER, ONE_PER_ZONE)
    reused = p.whatif([], until_fit=["z-a1", "z-b1"], limit=16)
    stages = stages_of(p)
    again = p.whatif([], after=dataclasses.replace(p.setup), until_fit=["z-a1", "z-b1"], limit=16)
    assert stages.count("after") == 1
    for a, b in zip(reused.until_fits, again.until_fits, strict=True):
        assert (a.count, a.probes, a.placed, a.still_pending, a.placed_at, a.lower_bound) == (
            b.count, b.probes, b.placed, b.still_pending, b.placed_at, b.lower_bound)
    assert reused.diff == again.diff
