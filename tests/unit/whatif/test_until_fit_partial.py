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


def test_the_shipped_fixtures_one_node_fixes_the_agent_and_three_pods_never_fit():
    loaded = load_inputs([str(ROOT / "fixtures" / "cluster.yaml")], [str(ROOT / "fixtures" / "manifests")],
                         progress=False)
    p = open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)
    u = p.whatif([], until_fit="gen-c-3", limit=64).until_fit
    assert u is not None
    assert (u.count, u.all_fit, u.placed) == (1, False, ("monitoring/metrics-agent",))
    assert {n.pod: n.status.plugin for n in u.never} == {
        "ml/notebook": "NodeResourcesFit", "batch/report-archiver": "NodeAffinity",
        "data/warehouse-loader": "NodeResourcesFit"}
    assert "Insufficient nvidia.com/gpu" in next(n for n in u.never if n.pod == "ml/notebook").status.message
    assert u.still_pending == ()


def test_several_templates_give_one_answer_each_and_the_first_run_is_shown():
    loaded = load_inputs([str(ROOT / "fixtures" / "cluster.yaml")], [str(ROOT / "fixtures" / "manifests")],
                         progress=False)
    p = open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)
    w = p.whatif([], until_fit=["gen-c-3", "gpu-a-1"], limit=64)
    assert [u.template for u in w.until_fits] == ["gen-c-3", "gpu-a-1"]
    assert w.until_fit is w.until_fits[0]
    assert w.until_fits[1].count is None
    assert any(n.status.plugin == "TaintToleration" for n in w.until_fits[1].never)
    assert "gen-c-3-whatif-1" in w.after.result.snapshot.table.names


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
