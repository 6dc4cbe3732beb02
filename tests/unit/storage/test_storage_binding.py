"""Volume binding across scheduling cycles: Reserve/PreBind effects, provisioning, events."""

from __future__ import annotations

from storage_builders import (
    RWOP,
    csinode,
    node,
    outcome,
    pod,
    priority_class,
    pv,
    pvc,
    simulate,
    simulation,
    storage_class,
)

NODES = [node("a1", "a"), node("b1", "b")]
LOCAL = storage_class("local", "kubernetes.io/no-provisioner")


def test_a_chosen_static_volume_is_bound_at_prebind_and_later_pods_follow_it():
    sim = simulation(NODES + [LOCAL, pvc("c"), pv("v", hostnames=["b1"])], [pod("first", "c"), pod("second", "c")])
    result = sim.run()
    assert outcome(result, "first")[:2] == ("Scheduled", "b1")
    assert outcome(result, "second")[:2] == ("Scheduled", "b1")
    storage = sim.snapshot.storage
    claim, volume = storage.pvc("default", "c"), storage.pv("v")
    assert claim.volume_name == "v" and claim.fully_bound and claim.phase == "Bound"
    assert volume.claim_ref is not None and volume.claim_ref.name == "c" and volume.phase == "Bound"


def test_a_volume_taken_by_one_claim_is_not_offered_to_the_next():
    result = simulate(NODES + [LOCAL, pvc("c1"), pvc("c2"), pv("v")], [pod("first", "c1"), pod("second", "c2")])
    assert outcome(result, "first")[0] == "Scheduled"
    status, _, message = outcome(result, "second")
    assert status == "Unschedulable"
    assert message.startswith("0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.")


def test_the_smallest_fitting_volume_is_chosen():
    sim = simulation(NODES + [LOCAL, pvc("c", size="5Gi"), pv("big", size="100Gi"), pv("small", size="8Gi"),
                              pv("tiny", size="1Gi")], [pod("p", "c")])
    sim.run()
    assert sim.snapshot.storage.pvc("default", "c").volume_name == "small"


def test_provisioning_gives_the_volume_the_topology_of_the_chosen_node():
    csi = storage_class("csi", "csi.example.com")
    sim = simulation([node("a1", "a")] + [csi, csinode("a1", topology_keys=["topology.kubernetes.io/zone"]),
                                          pvc("c", "csi", size="3Gi")], [pod("p", "c")])
    sim.run()
    storage = sim.snapshot.storage
    claim = storage.pvc("default", "c")
    volume = storage.pv(claim.volume_name)
    assert claim.annotations["volume.kubernetes.io/selected-node"] == "a1"
    assert volume.name == "pvc-uid-c" and volume.capacity == 3 << 30 and volume.csi == ("csi.example.com", "pvc-uid-c")
    assert volume.node_affinity is not None and volume.node_affinity.matches("", {"topology.kubernetes.io/zone": "a"})
    assert not volume.node_affinity.matches("", {"topology.kubernetes.io/zone": "b"})


def test_a_pod_rejected_for_volumes_is_retried_when_another_pod_binds_a_volume():
    # "waiting" fails for lack of a volume; "binder"'s PreBind updates a PV, whose event requeues it
    result = simulate(NODES + [LOCAL, pvc("c1"), pvc("c2", size="100Gi"), pv("v")],
                      [pod("waiting", "c2"), pod("binder", "c1")])
    assert outcome(result, "binder")[0] == "Scheduled"
    waiting = next(o for o in result.pods if o.pod.name == "waiting")
    assert waiting.status == "Unschedulable" and waiting.attempts == 2


def test_a_pod_rejected_by_other_plugins_only_is_not_retried_on_volume_events():
    result = simulate(NODES + [LOCAL, pvc("c1"), pv("v")], [pod("big", cpu="64"), pod("binder", "c1")])
    big = next(o for o in result.pods if o.pod.name == "big")
    assert big.status == "Unschedulable" and big.attempts == 1


def test_preemption_evicts_the_pod_that_holds_a_read_write_once_pod_claim():
    cluster = NODES + [LOCAL, pvc("c", modes=[RWOP], volume="v", bound=True), pv("v", claim="c", modes=[RWOP]),
                       priority_class("high", 1000), pod("holder", "c", node_name="b1")]
    result = simulate(cluster, [pod("vip", "c", priority_class="high")])
    assert [(e.pod.name, e.node) for e in result.preempted] == [("holder", "b1")]
    assert outcome(result, "vip")[:2] == ("Scheduled", "b1")


def test_claims_of_a_statefulset_are_reused_when_they_already_exist():
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "db"}}, "template": {
               "metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "pg"}]}},
               "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                   "storageClassName": "local", "accessModes": ["ReadWriteOnce"],
                   "resources": {"requests": {"storage": "1Gi"}}}}]}}
    cluster = NODES + [LOCAL, pvc("data-db-0", volume="v", bound=True), pv("v", claim="data-db-0", zones=["a"])]
    assert outcome(simulate(cluster, [sts]), "db-0")[:2] == ("Scheduled", "a1")


def test_among_equally_small_volumes_the_smallest_name_wins():
    # upstream takes map order (random); the conformance runs show the smallest name (reference 13.2)
    sim = simulation(NODES + [LOCAL, pvc("c", size="5Gi"), pv("vol-b", size="8Gi"), pv("vol-a", size="8Gi"),
                              pv("vol-c", size="8Gi")], [pod("p", "c")])
    sim.run()
    assert sim.snapshot.storage.pvc("default", "c").volume_name == "vol-a"


def test_a_waiting_claim_of_a_provisioning_class_binds_a_free_static_volume_first():
    csi = storage_class("csi", "csi.example.com")
    # the class could provision on either node; the static volume on a1 is taken instead
    sim = simulation(NODES + [csi, pvc("c", "csi", size="5Gi"), pv("static", "csi", size="10Gi", hostnames=["a1"])],
                     [pod("p", "c")])
    result = sim.run()
    assert outcome(result, "p")[:2] == ("Scheduled", "a1")
    assert sim.snapshot.storage.pvc("default", "c").volume_name == "static"
    assert sim.snapshot.storage.provisioned == []


def test_stored_storage_capacity_is_never_decremented():
    # each claim is checked against the capacity as stored: two 8Gi claims both fit 10Gi
    csi = storage_class("csi", "csi.example.com")
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"},
              "spec": {"storageCapacity": True}}
    cap = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
           "metadata": {"name": "cap-a", "namespace": "kube-system"}, "storageClassName": "csi",
           "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}, "capacity": "10Gi"}
    result = simulation(NODES + [csi, driver, cap, pvc("c1", "csi", size="8Gi"), pvc("c2", "csi", size="8Gi")],
                        [pod("p1", "c1"), pod("p2", "c2")]).run()
    assert [outcome(result, p)[:2] for p in ("p1", "p2")] == [("Scheduled", "a1"), ("Scheduled", "a1")]
