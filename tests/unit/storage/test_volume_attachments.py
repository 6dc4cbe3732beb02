"""VolumeAttachments: what the attach/detach controller makes and deletes during a run, and how
NodeVolumeLimits counts them, in the preemption dry run too (reference 13.2)."""

from __future__ import annotations

import pytest
from storage_builders import (
    csi_driver,
    csinode,
    node,
    outcome,
    pod,
    priority_class,
    pv,
    pvc,
    simulation,
    storage_class,
    volume_attachment,
)

from kplan.cluster.storage import VOLUME_ATTACHMENT_DELETE
from kplan.framework.events import ASSIGNED_POD_DELETE, ClusterEvent
from kplan.model.parse import parse_pod
from kplan.model.storage import VolumeAttachment
from tests.builders import make_plugin, make_snapshot

DRIVER = "csi.example.com"
CSI = storage_class("csi", DRIVER)


def bound(claim: str, handle: str = "") -> list[dict]:
    """A claim bound to its CSI volume ``pv-<claim>``."""
    return [pvc(claim, "csi", volume=f"pv-{claim}", bound=True),
            pv(f"pv-{claim}", "csi", claim=claim, csi=(DRIVER, handle or f"h-{claim}"))]


def names(sim, node_name: str) -> list[str]:
    return [va.name for va in sim.snapshot.storage.attachments(node_name)]


@pytest.mark.parametrize("driver, expected", [
    (None, ["csi-pv-c-a1"]),
    (csi_driver(), ["csi-pv-c-a1"]),
    (csi_driver(attach_required=False), []),
], ids=["a driver without a CSIDriver object needs attaching", "attachRequired defaults to true",
        "a driver with attachRequired false gets no attachment"])
def test_binding_a_pod_attaches_its_csi_volumes(driver, expected):
    cluster = [node("a1", "a"), CSI] + bound("c") + ([driver] if driver else [])
    sim = simulation(cluster, [pod("p", "c")])
    sim.run()
    assert names(sim, "a1") == expected


def test_a_provisioned_volume_is_attached_once_its_pod_is_bound():
    sim = simulation([node("a1", "a"), CSI, csinode("a1"), pvc("c", "csi")], [pod("p", "c")])
    sim.run()
    (va,) = sim.snapshot.storage.attachments("a1")
    assert (va.name, va.attacher, va.pv_name) == ("csi-pvc-uid-c-a1", DRIVER, "pvc-uid-c")


def test_the_inputs_running_pods_keep_the_attachments_the_input_lists():
    # a steady state: the attach/detach controller adds nothing for pods that were already running
    cluster = [node("a1", "a"), CSI] + bound("c") + bound("d") + [volume_attachment("pv-d", "a1"),
                                                                  pod("run", "c", "d", node_name="a1")]
    sim = simulation(cluster, [pod("p")])
    sim.run()
    assert names(sim, "a1") == ["csi-pv-d-a1"]


def test_a_second_pod_of_the_node_using_the_volume_adds_no_attachment():
    cluster = [node("a1", "a"), CSI] + bound("c") + [volume_attachment("pv-c", "a1"), pod("run", "c", node_name="a1")]
    sim = simulation(cluster, [pod("p", "c")])
    sim.run()
    assert names(sim, "a1") == ["csi-pv-c-a1"]


LOW, HIGH = priority_class("low", 1), priority_class("high", 1000)


def preemption_cluster(*, attached: bool, shared: bool = False) -> list[dict]:
    """Node a1 takes one CSI volume; a low-priority pod runs there with its volume (attached or
    not, per the input), perhaps next to another pod using the same volume."""
    out = [node("a1", "a"), LOW, HIGH, CSI, csinode("a1", count=1)] + bound("old") + [pvc("new", "csi")]
    out.append(pod("victim", "old", node_name="a1", priority_class="low"))
    if shared:
        out.append(pod("neighbour", "old", node_name="a1", priority_class="high"))
    if attached:
        out.append(volume_attachment("pv-old", "a1"))
    return out


def test_evicting_a_pod_does_not_free_its_attach_slot_in_the_dry_run():
    result = simulation(preemption_cluster(attached=True), [pod("p", "new", priority_class="high")]).run()
    assert result.preempted == []
    assert outcome(result, "p") == (
        "Unschedulable", None,
        "0/1 nodes are available: 1 node(s) exceed max volume count. preemption: "
        "0/1 nodes are available: 1 node(s) exceed max volume count.")


def test_without_an_attachment_evicting_the_pod_frees_the_slot():
    sim = simulation(preemption_cluster(attached=False), [pod("p", "new", priority_class="high")])
    result = sim.run()
    assert [e.pod.name for e in result.preempted] == ["victim"]
    assert outcome(result, "p")[:2] == ("Scheduled", "a1")


def test_an_evicted_pods_attachment_goes_unless_another_pod_there_uses_the_volume():
    for shared, left in ((False, []), (True, ["csi-pv-old-a1"])):
        sim = simulation(preemption_cluster(attached=True, shared=shared), [pod("p", priority_class="high")])
        storage = sim.snapshot.storage
        victim = next(p for p in sim.snapshot.table.pods[0] if p.name == "victim")
        sim.evict(victim, sim.pending[0])
        assert names(sim, "a1") == left
        assert [kind for kind, _ in storage.drain_events()] == []  # the simulation offered them already


@pytest.mark.parametrize("volumes, attacher, expected", [
    ([{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}], DRIVER, True),
    ([{"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}], DRIVER, False),
    ([{"name": "v", "awsElasticBlockStore": {"volumeID": "vol-1"}}], "ebs.csi.aws.com", True),
    ([{"name": "v", "gcePersistentDisk": {"pdName": "pd-1"}}], "ebs.csi.aws.com", False),
    ([{"name": "v", "emptyDir": {}}], DRIVER, False),
], ids=["a pod with a claim is retried", "a generic ephemeral volume alone is not",
        "an inline volume of the attachment's driver is retried", "an inline volume of another driver is not",
        "a pod without claims is not"])
def test_a_deleted_attachment_retries_pods_that_may_use_its_slot(volumes, attacher, expected):
    p = parse_pod({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [], "volumes": volumes}})
    hints = dict(make_plugin("NodeVolumeLimits", make_snapshot([])).events_to_register())
    event = ClusterEvent(VOLUME_ATTACHMENT_DELETE, obj=VolumeAttachment("va", attacher, "a1", "pv"))
    assert hints[VOLUME_ATTACHMENT_DELETE](p, event) is expected


@pytest.mark.parametrize("node_name, nominated, volumes, expected", [
    ("a1", "", [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}], True),
    ("", "a1", [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}], True),
    ("", "", [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}], False),
    ("a1", "", [{"name": "v", "emptyDir": {}}], False),
], ids=["an assigned pod with a claim retries the pod", "a nominated pod with a claim leaving the queue retries it",
        "a pod neither assigned nor nominated does not", "a pod without claims does not"])
def test_a_deleted_pod_retries_pods_its_volumes_may_have_held_back(node_name, nominated, volumes, expected):
    p = parse_pod({"metadata": {"name": "p", "namespace": "default"},
                   "spec": {"containers": [], "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "x"}}]}})
    gone = parse_pod({"metadata": {"name": "q", "namespace": "default"}, "spec": {"containers": [], "volumes": volumes}})
    hints = dict(make_plugin("NodeVolumeLimits", make_snapshot([])).events_to_register())
    event = ClusterEvent(ASSIGNED_POD_DELETE, gone, node_name, nominated)
    assert hints[ASSIGNED_POD_DELETE](p, event) is expected


def test_an_evicted_pods_attachment_goes_even_when_its_driver_needs_no_attaching():
    # the oracle's attach/detach controller deletes the attachments of all the victim's volumes
    cluster = preemption_cluster(attached=True) + [csi_driver(attach_required=False)]
    sim = simulation(cluster, [pod("p", priority_class="high")])
    victim = next(p for p in sim.snapshot.table.pods[0] if p.name == "victim")
    sim.evict(victim, sim.pending[0])
    assert names(sim, "a1") == []
