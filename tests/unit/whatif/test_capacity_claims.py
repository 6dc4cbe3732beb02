"""capacity: each replica comes with the claims its controllers create for it (a StatefulSet's
volumeClaimTemplates, a pod's ephemeral volumes), made just before it and bound as the declared
replicas' are; an OrderedReady StatefulSet gets no replica while a declared pod does not run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.io.manifests import load_manifests
from kplan.io.replicas import choose_target, declared_pods, ordered_ready, replica_factory
from kplan.scheduler.pod_status import PodStatus
from kplan.whatif.capacity import CapacityOutcome

ROOT = Path(__file__).resolve().parents[3]
CASE = ROOT / "tests" / "fidelity" / "capacity" / "statefulset-claims"
STS = yaml.safe_load((CASE / "statefulset.yaml").read_text())


def count(cluster: list[str], manifest: Path, limit: int = 100) -> CapacityOutcome:
    """What kplan capacity counts (its CLI's steps), with the run's result kept."""
    objects = load_manifests([str(manifest)])
    target = choose_target(objects, None)
    loaded = load_inputs(cluster, [str(manifest)], seed=0, progress=False, objects=objects)
    order = [p.uid for p in declared_pods(loaded.inputs, target, 0)]
    _, replica, _ = replica_factory(loaded.inputs, target, seed=0)
    planner = open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name, kube_version="1.34")
    return planner.capacity(replica, limit, ordered_after=order if ordered_ready(target) else ())


def write(tmp_path: Path, name: str, docs: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return path


def node_of(out: CapacityOutcome, name: str) -> str | None:
    assert out.result is not None
    found = out.result.outcome("default", name)
    assert found is not None, name
    return found.node


def test_replicas_take_the_next_ordinals_with_their_claims_bound_as_the_declared_ones():
    out = count([str(CASE / "cluster.yaml")], CASE / "statefulset.yaml")
    assert out.result is not None
    storage = out.result.snapshot.storage
    assert storage is not None
    assert out.replicas == 5 and out.failed is not None and out.failed.pod.name == "db-7"
    for n in range(2, 7):
        pod = out.result.outcome("default", f"db-{n}")
        assert pod is not None and pod.status == PodStatus.SCHEDULED
        assert sorted(v.claim_name for v in pod.pod.volumes) == [f"data-db-{n}", f"logs-db-{n}"]
        assert pod.pod.labels["apps.kubernetes.io/pod-index"] == str(n)
        data = storage.pvc("default", f"data-db-{n}")
        logs = storage.pvc("default", f"logs-db-{n}")
        assert data is not None and logs is not None and data.phase == logs.phase == "Bound"
        # the local volume is on the replica's node; the provisioned one in its zone
        local = storage.pv(data.volume_name)
        assert local is not None and local.node_affinity is not None
        assert local.node_affinity.matches("", {"kubernetes.io/hostname": pod.node})
        made = storage.pv(logs.volume_name)
        assert made is not None and made.node_affinity is not None
        assert made.node_affinity.matches("", {"topology.kubernetes.io/zone": pod.node[-1]})


def test_a_claim_left_by_a_scale_down_is_used_as_it_is():
    out = count([str(CASE / "cluster.yaml")], CASE / "statefulset.yaml")
    assert out.result is not None and out.result.snapshot.storage is not None
    claim = out.result.snapshot.storage.pvc("default", "data-db-3")
    # the input's claim (its uid, its volume on n-b), not a new one: so db-3 runs on n-b
    assert claim is not None and (claim.uid, claim.volume_name) == ("uid-data-db-3", "lv-b-2")
    assert node_of(out, "db-3") == "n-b"


def test_the_replica_that_does_not_fit_has_its_claims_created_and_unbound():
    out = count([str(CASE / "cluster.yaml")], CASE / "statefulset.yaml")
    assert out.result is not None and out.result.snapshot.storage is not None
    for name in ("data-db-7", "logs-db-7"):
        claim = out.result.snapshot.storage.pvc("default", name)
        assert claim is not None and claim.phase == "Pending" and not claim.volume_name


ZONES = [{"apiVersion": "v1", "kind": "Node",
          "metadata": {"name": f"n-{z}", "labels": {"kubernetes.io/hostname": f"n-{z}",
                                                      "topology.kubernetes.io/zone": z}},
          "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}} for z in "ab"]
IMMEDIATE = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "zonal"},
             "provisioner": "disk.csi.example.com", "volumeBindingMode": "Immediate",
             "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone",
                                                               "values": ["a"]}]}]}


def statefulset(replicas: int, policy: str | None = None, claim_class: str | None = "zonal",
                cpu: str = "1") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas, "selector": {"matchLabels": {"app": "q"}},
        "template": {"metadata": {"labels": {"app": "q"}}, "spec": {"containers": [
            {"name": "q", "image": "q", "resources": {"requests": {"cpu": cpu}}}]}}}
    if policy:
        spec["podManagementPolicy"] = policy
    if claim_class:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
            "storageClassName": claim_class, "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}]
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "q", "namespace": "default"},
            "spec": spec}


def test_a_claim_that_does_not_wait_for_a_consumer_is_provisioned_before_its_replica(tmp_path):
    # the class provisions in zone a only: every replica is held there by its volume
    cluster = write(tmp_path, "cluster.yaml", [*ZONES, IMMEDIATE])
    out = count([str(cluster)], write(tmp_path, "q.yaml", [statefulset(1)]))
    assert (out.replicas, out.placements) == (1, {"n-a": 1})
    assert out.failed is not None and out.failed.pod.name == "q-2"
    assert "1 node(s) didn't match PersistentVolume's node affinity" in out.failed.message
    assert out.result is not None and out.result.snapshot.storage is not None
    assert out.result.snapshot.storage.pvc("default", "data-q-2").phase == "Bound"


CLASS_WITHOUT_PROVISIONER = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "none"},
                             "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}

ORDER_CASES = [
    # 3 cpu asked on 2-cpu nodes: the declared pod never runs
    ("OrderedReady: no replica while a declared pod does not run", None, 0, "does not run"),
    ("Parallel: the replicas are created anyway, and fail", "Parallel", 0, "Insufficient cpu"),
]


@pytest.mark.parametrize("policy, more, says", [c[1:] for c in ORDER_CASES], ids=[c[0] for c in ORDER_CASES])
def test_a_declared_pod_that_does_not_run(tmp_path, policy, more, says):
    cluster = write(tmp_path, "cluster.yaml", [*ZONES, CLASS_WITHOUT_PROVISIONER])
    out = count([str(cluster)], write(tmp_path, "q.yaml", [statefulset(1, policy, "none", cpu="3")]))
    assert out.replicas == more
    if policy is None:
        assert out.held_by is not None and out.held_by.name == "q-0" and out.failed is None
    else:
        assert out.held_by is None and out.failed is not None and says in out.failed.message


def test_each_replica_of_a_deployment_gets_its_own_ephemeral_claim(tmp_path):
    cluster = write(tmp_path, "cluster.yaml", [*ZONES, {**IMMEDIATE, "volumeBindingMode": "WaitForFirstConsumer",
                                                       "metadata": {"name": "zonal"}}])
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": "default"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "w"}}, "template": {
                      "metadata": {"labels": {"app": "w"}}, "spec": {
                          "containers": [{"name": "w", "image": "w", "resources": {"requests": {"cpu": "500m"}}}],
                          "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
                              "storageClassName": "zonal", "accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": "1Gi"}}}}}}]}}}}
    out = count([str(cluster)], write(tmp_path, "w.yaml", [deployment]))
    # zone a only (allowedTopologies), 2 cpu: the declared pod and 3 more
    assert (out.replicas, out.placements) == (3, {"n-a": 3})
    assert out.result is not None and out.result.snapshot.storage is not None
    for k in (1, 2, 3):
        claim = out.result.snapshot.storage.pvc("default", f"w-capacity-{k}-scratch")
        assert claim is not None and claim.phase == "Bound"
        assert [o.uid for o in claim.owners] == [f"{out.result.outcome('default', f'w-capacity-{k}').pod.uid}"]
