"""Applying manifests onto a cluster: replacement, --keep-existing, -n, rendered input details."""

from __future__ import annotations

import pytest
from workload_builders import Workload, cluster_node, container, load, run, running_pod

from kplan.errors import InputError
from kplan.report.codec import encode
from kplan.report.document import simulation_document

NODES = [cluster_node("n1"), cluster_node("n2", "b")]


def old_deployment_cluster(with_replicaset: bool) -> list[dict]:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "web-old", "namespace": "default",
                       "ownerReferences": [{"kind": "Deployment", "name": "web", "controller": True}]},
          "spec": {"selector": {"matchLabels": {"app": "web", "pod-template-hash": "old"}},
                   "template": {"metadata": {"labels": {"app": "web", "pod-template-hash": "old"}},
                                "spec": {"containers": [container()]}}}}
    pods = [running_pod(f"web-old-{i}", f"n{i + 1}", ("ReplicaSet", "web-old"),
                        labels={"app": "web", "pod-template-hash": "old"}) for i in range(2)]
    pods.append(running_pod("other", "n1", ("ReplicaSet", "api-old"), labels={"pod-template-hash": "old"}))
    return NODES + ([rs] if with_replicaset else []) + pods


@pytest.mark.parametrize("with_replicaset", [True, False],
                         ids=["found through the cluster's ReplicaSet", "found by the ReplicaSet's name alone"])
def test_a_deployment_applied_again_replaces_the_pods_of_its_old_replicaset(with_replicaset):
    result = run(old_deployment_cluster(with_replicaset), [Workload("Deployment", "web").replicas(2).build()])
    assert sorted((r.pod.name, r.node, r.workload, r.kept) for r in result.replaced) == [
        ("web-old-0", "n1", "Deployment default/web", False), ("web-old-1", "n2", "Deployment default/web", False)]
    placed = {p.name for row in result.snapshot.table.pods for p in row}
    assert "web-old-0" not in placed and "other" in placed
    assert [o.status for o in result.pods] == ["Scheduled", "Scheduled"]
    doc = simulation_document(result)
    assert doc.summary.replaced == 2
    assert encode(doc)["replaced"][0] == {"namespace": "default", "name": "web-old-0", "node": "n1",
                                          "workload": "Deployment default/web", "kept": False}


def test_keep_existing_schedules_the_new_pods_next_to_the_old_ones():
    result = run(old_deployment_cluster(True), [Workload("Deployment", "web").replicas(2).build()], keep_existing=True)
    assert all(r.kept for r in result.replaced) and len(result.replaced) == 2
    placed = {p.name for row in result.snapshot.table.pods for p in row}
    assert {"web-old-0", "web-old-1"} <= placed
    assert simulation_document(result).summary.replaced == 0


def test_a_statefulset_applied_again_replaces_its_pods_of_the_same_names():
    cluster = NODES + [running_pod("db-0", "n2", ("StatefulSet", "db"), labels={"app": "db"})]
    result = run(cluster, [Workload("StatefulSet", "db").build()])
    assert [(r.pod.name, r.node) for r in result.replaced] == [("db-0", "n2")]
    assert [(o.pod.name, o.status) for o in result.pods] == [("db-0", "Scheduled")]


def test_keep_existing_cannot_create_a_second_pod_of_a_fixed_name():
    cluster = NODES + [running_pod("db-0", "n2", ("StatefulSet", "db"))]
    with pytest.raises(InputError, match="--keep-existing: the running pod of that name stays"):
        load(cluster, [Workload("StatefulSet", "db").build()], keep_existing=True)


@pytest.mark.parametrize("kind, owner", [
    ("DaemonSet", ("DaemonSet", "agent")),
    ("Job", ("Job", "agent")),
    ("CronJob", ("Job", "agent-28000000")),
], ids=["a DaemonSet's pods", "a Job's pods", "a CronJob's pods, through a Job named after it"])
def test_other_controllers_pods_are_replaced(kind, owner):
    cluster = NODES + [running_pod("agent-x", "n1", owner)]
    result = run(cluster, [Workload(kind, "agent").build()])
    assert [r.pod.name for r in result.replaced] == ["agent-x"]


def test_a_bare_pod_of_the_same_name_is_replaced():
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tool"}, "spec": {"containers": [container()]}}
    result = run(NODES + [running_pod("tool", "n1")], [bare])
    assert [r.pod.name for r in result.replaced] == ["tool"]
    assert [o.status for o in result.pods] == ["Scheduled"]


def test_unrelated_workloads_are_left_alone():
    result = run(old_deployment_cluster(True), [Workload("Deployment", "cache").build()])
    assert result.replaced == []


def test_a_replicaset_name_with_the_pods_hash_is_enough_to_find_its_deployment():
    result = run(old_deployment_cluster(True), [Workload("Deployment", "api").build()])
    assert [r.pod.name for r in result.replaced] == ["other"]


def test_the_namespace_option_fills_in_missing_namespaces_only():
    manifests = [Workload("Deployment", "web").build(), Workload("Deployment", "api", namespace="prod").build(),
                 {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"},
                  "provisioner": "x"}]
    scenario = load(NODES, manifests, namespace="team")
    assert sorted({p.namespace for p in scenario.pending}) == ["prod", "team"]
    assert scenario.snapshot.storage.storage_class("sc") is not None


def test_helm_test_hooks_are_skipped_with_a_warning():
    hook = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-test", "annotations": {"helm.sh/hook": "test"}},
            "spec": {"containers": [container()]}}
    scenario = load(NODES, [hook, Workload("Deployment", "web").build()])
    assert [p.name.startswith("web-") for p in scenario.pending] == [True]
    assert any("Helm test hook" in w for w in scenario.warnings)


def test_a_pod_with_only_generate_name_gets_a_name():
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "probe-"}, "spec": {"containers": [container()]}}
    (pending,) = load(NODES, [p]).pending
    assert pending.name.startswith("probe-") and len(pending.name) == len("probe-") + 5


def test_limit_ranges_default_the_requests_of_new_pods_in_their_namespace():
    lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": "team"},
          "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "300m"}, "default": {"cpu": "1"}}]}}
    scenario = load(NODES + [lr], [Workload("Deployment", "web", namespace="team").build(),
                                   Workload("Deployment", "api").build()])
    requests = {p.namespace: p.requests.get("cpu", 0) for p in scenario.pending}
    assert requests == {"team": 300, "default": 0}


def test_generated_replicasets_select_their_pods_for_default_spreading():
    scenario = load(NODES, [Workload("Deployment", "web").replicas(2).build()])
    (rs,) = [s for s in scenario.snapshot.selecting if s.kind == "ReplicaSet"]
    assert all(p.controller().name == rs.name and rs.selector.matches(p.labels) for p in scenario.pending)


def test_ordered_ready_statefulset_pods_wait_for_the_previous_one():
    small = [cluster_node("n1", cpu="1")]
    sts = Workload("StatefulSet", "db").replicas(3).pod(containers=[container(cpu="600m")]).build()
    result = run(small, [sts])
    assert [(o.pod.name, o.status) for o in result.pods] == [
        ("db-0", "Scheduled"), ("db-1", "Unschedulable"), ("db-2", "NotCreated")]
    assert result.pods[2].message == ("not created: its controller creates it once default/db-1 is running and "
                                      "ready (podManagementPolicy OrderedReady)")
    assert simulation_document(result).summary.not_created == 1


def test_parallel_statefulset_pods_are_all_created():
    small = [cluster_node("n1", cpu="1")]
    sts = (Workload("StatefulSet", "db").replicas(3).spec(podManagementPolicy="Parallel")
           .pod(containers=[container(cpu="600m")]).build())
    assert [o.status for o in run(small, [sts]).pods] == ["Scheduled", "Unschedulable", "Unschedulable"]


def test_statefulset_claims_are_created_once():
    sts = Workload("StatefulSet", "db").replicas(2).spec(volumeClaimTemplates=[
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                "resources": {"requests": {"storage": "1Gi"}}}}]).build()
    storage = load(NODES, [sts]).snapshot.storage
    assert sorted(storage.pvcs) == ["default/data-db-0", "default/data-db-1"]


def test_a_statefulset_keeps_a_claim_that_exists_and_creates_the_missing_ones():
    # the controller creates a replica's claim only if none of that name exists: data-db-0 is
    # the cluster's (a bound claim with its own size), data-db-1 is made from the template
    existing = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data-db-0", "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}}
    sts = Workload("StatefulSet", "db").replicas(2).spec(volumeClaimTemplates=[
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                "resources": {"requests": {"storage": "1Gi"}}}}]).build()
    storage = load(NODES + [existing], [sts]).snapshot.storage
    assert {k: c.request for k, c in storage.pvcs.items()} == {"default/data-db-0": 5 * 2**30,
                                                               "default/data-db-1": 2**30}


def test_a_manifest_storage_object_that_exists_in_the_cluster_is_not_applied():
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
          "provisioner": "csi.example.com"}
    mine = dict(sc, provisioner="other.example.com")
    scenario = load(NODES + [sc], [mine, dict(sc, metadata={"name": "new"})])
    assert {c.name: c.provisioner for c in scenario.snapshot.storage.classes.values()} == {
        "fast": "csi.example.com", "new": "csi.example.com"}
    assert any("StorageClass fast already exists in the cluster" in w for w in scenario.inputs.warnings)
