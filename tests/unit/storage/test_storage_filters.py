"""The four volume plugins' PreFilter and Filter verdicts, node by node, with upstream's words."""

from __future__ import annotations

import numpy as np
import pytest
from storage_builders import (
    RWO,
    RWOP,
    RWX,
    csinode,
    node,
    pod,
    pv,
    pvc,
    storage_class,
    verdicts,
    volume_attachment,
)

NODES = [node("a1", "a"), node("b1", "b")]
LOCAL = storage_class("local", "kubernetes.io/no-provisioner")
CSI = storage_class("csi", "csi.example.com")
IMMEDIATE_MANUAL = storage_class("manual", "kubernetes.io/no-provisioner", "Immediate")

NO_PV = "UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to bind"
PV_AFFINITY = "UnschedulableAndUnresolvable: node(s) didn't match PersistentVolume's node affinity"
NO_SPACE = "UnschedulableAndUnresolvable: node(s) did not have enough free storage"
PV_GONE = "UnschedulableAndUnresolvable: node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
NO_ZONE = "UnschedulableAndUnresolvable: node(s) had no available volume zone"
NO_DISK = "Unschedulable: node(s) had no available disk"
RWOP_IN_USE = ("Unschedulable: node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
               "already in-use by another pod")
TOO_MANY = "Unschedulable: node(s) exceed max volume count"


def capacity(zone: str, size: str) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
            "metadata": {"name": f"cap-{zone}", "namespace": "kube-system"}, "storageClassName": "csi",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": zone}}, "capacity": size}


CSI_DRIVER_WITH_CAPACITY = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                            "metadata": {"name": "csi.example.com"}, "spec": {"storageCapacity": True}}

# ----------------------------------------------------------------------------- VolumeBinding

VOLUME_BINDING = [
    ("a pod without claims skips VolumeBinding",
     [], pod("p"), "Skip"),
    ("a missing claim is refused at PreFilter with the lister's words",
     [], pod("p", "nope"), 'PreFilter VolumeRestrictions UnschedulableAndUnresolvable: persistentvolumeclaim "nope" not found'),
    ("an ephemeral volume whose claim is not the pod's is refused at PreFilter",
     [pvc("p-scratch")], pod("p", ephemeral=["scratch"]),
     "PreFilter VolumeBinding UnschedulableAndUnresolvable: PVC default/p-scratch was not created for pod default/p "
     "(pod is not owner)"),
    ("an unbound claim of an Immediate class with no volume is refused at PreFilter",
     [IMMEDIATE_MANUAL, pvc("c", "manual")], pod("p", "c"),
     "PreFilter VolumeBinding UnschedulableAndUnresolvable: pod has unbound immediate PersistentVolumeClaims"),
    ("a claim naming a volume bound to another claim stays unbound: refused at PreFilter",
     [LOCAL, pvc("c", volume="v"), pv("v", claim="other")], pod("p", "c"),
     "PreFilter VolumeBinding UnschedulableAndUnresolvable: pod has unbound immediate PersistentVolumeClaims"),
    ("an Immediate claim is bound before scheduling and its volume's node affinity decides",
     [IMMEDIATE_MANUAL, pvc("c", "manual"), pv("v", "manual", zones=["b"])], pod("p", "c"),
     {"a1": PV_AFFINITY, "b1": ""}),
    ("a bound claim's volume node affinity rejects nodes of other zones",
     [LOCAL, pvc("c", volume="v", bound=True), pv("v", claim="c", zones=["a"])], pod("p", "c"),
     {"a1": "", "b1": PV_AFFINITY}),
    ("a node affinity on the node name never matches (the volume sees a nameless node)",
     [LOCAL, pvc("c", volume="v", bound=True),
      {**pv("v", claim="c"), "spec": {**pv("v", claim="c")["spec"], "nodeAffinity": {"required": {"nodeSelectorTerms": [
          {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a1"]}]}]}}}}],
     pod("p", "c"), {"a1": PV_AFFINITY, "b1": PV_AFFINITY}),
    ("a claim bound to a volume that does not exist fits no node",
     [LOCAL, pvc("c", volume="gone", bound=True)], pod("p", "c"),
     'PreFilter VolumeZone UnschedulableAndUnresolvable: persistentvolume "gone" not found'),
    ("a waiting claim takes a free volume on the one node its affinity allows",
     [LOCAL, pvc("c"), pv("v", hostnames=["b1"])], pod("p", "c"),
     {"a1": NO_PV, "b1": ""}),
    ("a volume smaller than the request does not match",
     [LOCAL, pvc("c", size="20Gi"), pv("v", size="10Gi")], pod("p", "c"),
     {"a1": NO_PV, "b1": NO_PV}),
    ("a volume without the claim's access mode does not match",
     [LOCAL, pvc("c", modes=[RWX]), pv("v", modes=[RWO])], pod("p", "c"),
     {"a1": NO_PV, "b1": NO_PV}),
    ("a volume the claim's selector does not select does not match",
     [LOCAL, pvc("c", selector={"matchLabels": {"tier": "gold"}}), pv("v", labels={"tier": "bronze"})], pod("p", "c"),
     {"a1": NO_PV, "b1": NO_PV}),
    ("a volume of another class does not match",
     [LOCAL, storage_class("other", "kubernetes.io/no-provisioner"), pvc("c"), pv("v", "other")], pod("p", "c"),
     {"a1": NO_PV, "b1": NO_PV}),
    ("a claim whose provisioning started for another node fits no node",
     [CSI, pvc("c", "csi", selected_node="elsewhere")], pod("p", "c"),
     {"a1": NO_PV, "b1": NO_PV}),
    ("dynamic provisioning honours the class's allowed topologies",
     [storage_class("csi", zones=["b"]), pvc("c", "csi")], pod("p", "c"),
     {"a1": NO_PV, "b1": ""}),
    ("dynamic provisioning needs storage capacity where the driver tracks it",
     [CSI, CSI_DRIVER_WITH_CAPACITY, capacity("a", "100Gi"), capacity("b", "5Gi"), pvc("c", "csi", size="10Gi")],
     pod("p", "c"), {"a1": "", "b1": NO_SPACE}),
    ("a claim without a class gets the default class, which provisions",
     [storage_class("std", default=True), pvc("c", None)], pod("p", "c"),
     {"a1": "", "b1": ""}),
    ("a bound volume in one zone and a claim nobody can serve: both reasons, in upstream's order",
     [LOCAL, pvc("c1", volume="v", bound=True), pv("v", claim="c1", zones=["a"]), pvc("c2")], pod("p", "c1", "c2"),
     {"a1": NO_PV, "b1": PV_AFFINITY + ", node(s) didn't find available persistent volumes to bind"}),
    ("two claims cannot take the same volume",
     [LOCAL, pvc("c1"), pvc("c2"), pv("v")], pod("p", "c1", "c2"),
     {"a1": NO_PV, "b1": NO_PV}),
]


@pytest.mark.parametrize("cluster, the_pod, expected", [c[1:] for c in VOLUME_BINDING],
                         ids=[c[0] for c in VOLUME_BINDING])
def test_volume_binding(cluster, the_pod, expected):
    assert verdicts("VolumeBinding", NODES + cluster, the_pod) == expected


# ----------------------------------------------------------------------------- VolumeZone

def zoned_pv(zone_label: str, value: str) -> dict:
    return pv("v", claim="c", labels={zone_label: value})


BOUND = [LOCAL, pvc("c", volume="v", bound=True)]

VOLUME_ZONE = [
    ("a node of the volume's zone passes, another zone does not",
     BOUND + [zoned_pv("topology.kubernetes.io/zone", "a")], {"a1": "", "b1": NO_ZONE, "plain": ""}),
    ("a multi-zone value admits every zone in it",
     BOUND + [zoned_pv("topology.kubernetes.io/zone", "a__b")], {"a1": "", "b1": "", "plain": ""}),
    ("a beta zone label on the volume matches the node's GA label",
     BOUND + [zoned_pv("failure-domain.beta.kubernetes.io/zone", "b")], {"a1": NO_ZONE, "b1": "", "plain": ""}),
    ("a region label the nodes lack rejects every labelled node",
     BOUND + [zoned_pv("topology.kubernetes.io/region", "eu")], {"a1": NO_ZONE, "b1": NO_ZONE, "plain": ""}),
    ("a volume without zone labels skips VolumeZone",
     BOUND + [pv("v", claim="c")], "Skip"),
    ("an unbound claim of a WaitForFirstConsumer class skips VolumeZone",
     [LOCAL, pvc("c"), pv("v")], "Skip"),
]


@pytest.mark.parametrize("cluster, expected", [c[1:] for c in VOLUME_ZONE], ids=[c[0] for c in VOLUME_ZONE])
def test_volume_zone(cluster, expected):
    assert verdicts("VolumeZone", NODES + [node("plain")] + cluster, pod("p", "c")) == expected


# ----------------------------------------------------------------------------- VolumeRestrictions

def disk(kind: str, **fields) -> dict:
    return {"name": "d", kind: fields}


GCE = {"pdName": "disk-1"}
RBD = {"monitors": ["m1", "m2"], "image": "img"}

VOLUME_RESTRICTIONS = [
    ("a ReadWriteOncePod claim in use by a running pod blocks every node",
     [pvc("c", modes=[RWOP], volume="v", bound=True), pv("v", claim="c", modes=[RWOP]), pod("user", "c", node_name="b1")],
     pod("p", "c"), {"a1": RWOP_IN_USE, "b1": RWOP_IN_USE}),
    ("a ReadWriteOncePod claim nobody uses skips VolumeRestrictions",
     [pvc("c", modes=[RWOP], volume="v", bound=True), pv("v", claim="c", modes=[RWOP])], pod("p", "c"), "Skip"),
    ("a ReadWriteOnce claim in use does not matter",
     [pvc("c", volume="v", bound=True), pv("v", claim="c"), pod("user", "c", node_name="b1")], pod("p", "c"), "Skip"),
    ("the same GCE disk written by a pod of the node conflicts",
     [pod("user", node_name="b1", volumes=[disk("gcePersistentDisk", **GCE)])],
     pod("p", volumes=[disk("gcePersistentDisk", **GCE)]), {"a1": "", "b1": NO_DISK}),
    ("the same GCE disk read-only by both pods does not conflict",
     [pod("user", node_name="b1", volumes=[disk("gcePersistentDisk", readOnly=True, **GCE)])],
     pod("p", volumes=[disk("gcePersistentDisk", readOnly=True, **GCE)]), {"a1": "", "b1": ""}),
    ("the same EBS volume conflicts even read-only",
     [pod("user", node_name="a1", volumes=[disk("awsElasticBlockStore", volumeID="vol-1", readOnly=True)])],
     pod("p", volumes=[disk("awsElasticBlockStore", volumeID="vol-1", readOnly=True)]), {"a1": NO_DISK, "b1": ""}),
    ("an RBD image behind an overlapping monitor conflicts",
     [pod("user", node_name="a1", volumes=[disk("rbd", monitors=["m2", "m3"], image="img")])],
     pod("p", volumes=[disk("rbd", **RBD)]), {"a1": NO_DISK, "b1": ""}),
    ("an RBD image behind other monitors does not conflict",
     [pod("user", node_name="a1", volumes=[disk("rbd", monitors=["m9"], image="img")])],
     pod("p", volumes=[disk("rbd", **RBD)]), {"a1": "", "b1": ""}),
    ("the same iSCSI IQN written twice conflicts",
     [pod("user", node_name="b1", volumes=[disk("iscsi", iqn="iqn.x", lun=0, targetPortal="t")])],
     pod("p", volumes=[disk("iscsi", iqn="iqn.x", lun=1, targetPortal="t")]), {"a1": "", "b1": NO_DISK}),
]


@pytest.mark.parametrize("cluster, the_pod, expected", [c[1:] for c in VOLUME_RESTRICTIONS],
                         ids=[c[0] for c in VOLUME_RESTRICTIONS])
def test_volume_restrictions(cluster, the_pod, expected):
    assert verdicts("VolumeRestrictions", NODES + cluster, the_pod) == expected


# ----------------------------------------------------------------------------- NodeVolumeLimits

DRIVER = "csi.example.com"


def attached(name: str, node_name: str, handle: str) -> list[dict]:
    return [pvc(name, "csi", volume=f"pv-{name}", bound=True),
            pv(f"pv-{name}", "csi", claim=name, csi=(DRIVER, handle)),
            pod(f"user-{name}", name, node_name=node_name)]


def loose(name: str, node_name: str, attacher: str = DRIVER) -> list[dict]:
    """A CSI volume no pod uses, still attached to a node (e.g. being detached)."""
    return [pv(f"pv-{name}", "csi", claim=name, csi=(DRIVER, f"h-{name}")),
            volume_attachment(f"pv-{name}", node_name, attacher)]


NODE_VOLUME_LIMITS = [
    ("a node at its CSINode count cannot attach one more volume",
     [CSI, csinode("a1", count=1), csinode("b1", count=2)] + attached("old", "a1", "h-old") + attached("old2", "b1", "h2")
     + [pvc("new", "csi", volume="pv-new", bound=True), pv("pv-new", "csi", claim="new", csi=(DRIVER, "h-new"))],
     pod("p", "new"), {"a1": TOO_MANY, "b1": ""}),
    ("a volume already attached to the node is not counted twice",
     [CSI, csinode("a1", count=1)] + attached("old", "a1", "h-old"), pod("p", "old"), {"a1": "", "b1": ""}),
    ("a node without CSINode or volume limits takes any number",
     [CSI] + attached("old", "a1", "h-old") + [pvc("new", "csi")], pod("p", "new"), {"a1": "", "b1": ""}),
    ("the node's attachable-volumes allocatable is no limit in 1.34",
     [CSI] + attached("old", "a1", "h-old") + [pvc("new", "csi")], pod("p", "new"), {"a1": "", "b1": ""}),
    ("an unbound claim counts under its class's provisioner",
     [CSI, csinode("a1", count=0)] + [pvc("new", "csi")], pod("p", "new"), {"a1": TOO_MANY, "b1": ""}),
    ("an in-tree EBS volume counts under the EBS CSI driver once a CSINode exists",
     [storage_class("gp2", "kubernetes.io/aws-ebs"), csinode("a1", "ebs.csi.aws.com", count=0),
      pvc("new", "gp2", volume="pv-ebs", bound=True),
      pv("pv-ebs", "gp2", claim="new", source={"awsElasticBlockStore": {"volumeID": "aws://a/vol-1"}})],
     pod("p", "new"), {"a1": TOO_MANY, "b1": ""}),
    ("a pod with only an emptyDir skips NodeVolumeLimits",
     [], pod("p", volumes=[{"name": "tmp", "emptyDir": {}}]), "Skip"),
    # VolumeAttachments (1.34): upstream's "should count VolumeAttachments towards volume limit ..."
    ("attachments count towards the limit when no pod of the node uses their volumes",
     [CSI, csinode("a1", count=2)] + loose("l1", "a1") + loose("l2", "a1") + [pvc("new", "csi")],
     pod("p", "new"), {"a1": TOO_MANY, "b1": ""}),
    ("attachments under the limit leave room for the pod",
     [CSI, csinode("a1", count=2)] + loose("l1", "a1") + [pvc("new", "csi")], pod("p", "new"), {"a1": "", "b1": ""}),
    ("an attachment of a volume a pod of the node uses counts once",
     [CSI, csinode("a1", count=2), volume_attachment("pv-old", "a1")] + attached("old", "a1", "h-old")
     + [pvc("new", "csi")], pod("p", "new"), {"a1": "", "b1": ""}),
    ("an attachment to another node does not count here",
     [CSI, csinode("a1", count=1)] + loose("l1", "b1") + [pvc("new", "csi")], pod("p", "new"), {"a1": "", "b1": ""}),
    ("an attachment of a volume that does not exist is not counted",
     [CSI, csinode("a1", count=1), volume_attachment("pv-gone", "a1"), pvc("new", "csi")], pod("p", "new"),
     {"a1": "", "b1": ""}),
    ("an attachment of a volume without a CSI source is not counted",
     [CSI, csinode("a1", count=1), pv("pv-local"), volume_attachment("pv-local", "a1"), pvc("new", "csi")],
     pod("p", "new"), {"a1": "", "b1": ""}),
    ("an attachment counts under its attacher, not under the volume's driver",
     [CSI, csinode("a1", count=1)] + loose("l1", "a1", attacher="other.example.com") + [pvc("new", "csi")],
     pod("p", "new"), {"a1": "", "b1": ""}),
    ("the pod's own volume attached with no pod using it counts as attached and as new",
     [CSI, csinode("a1", count=1), pvc("mine", "csi", volume="pv-mine", bound=True),
      pv("pv-mine", "csi", claim="mine", csi=(DRIVER, "h-mine")), volume_attachment("pv-mine", "a1")],
     pod("p", "mine"), {"a1": TOO_MANY, "b1": ""}),
]



@pytest.mark.parametrize("cluster, the_pod, expected", [c[1:] for c in NODE_VOLUME_LIMITS],
                         ids=[c[0] for c in NODE_VOLUME_LIMITS])
def test_node_volume_limits(cluster, the_pod, expected, request):
    nodes = list(NODES)
    if "allocatable" in request.node.name:
        nodes[0] = node("a1", "a", allocatable={f"attachable-volumes-csi-{DRIVER}": "1"})
    assert verdicts("NodeVolumeLimits", nodes + cluster, the_pod) == expected




def test_disk_conflicts_follow_binds_and_removals_and_forks():
    # the plugin walks only the nodes its per-row index says run a pod with a checked disk
    from kplan.framework.cycle_state import CycleState
    from kplan.model.parse import parse_pod
    from tests.builders import make_node, make_plugin, make_snapshot

    snap = make_snapshot([make_node("a1"), make_node("b1")])
    plugin = make_plugin("VolumeRestrictions", snap)
    wanted = parse_pod(pod("p", volumes=[disk("gcePersistentDisk", **GCE)]))
    holder = parse_pod(pod("user", node_name="b1", volumes=[disk("gcePersistentDisk", **GCE)]))

    def rejected(table) -> list[bool]:
        return [bool(c) for c in plugin.filter(CycleState(), wanted, table, np.arange(len(table))).codes]

    assert rejected(snap.table) == [False, False]
    snap.add_pod(holder, 1)
    assert rejected(snap.table) == [False, True]
    assert rejected(snap.table.take([1, 0])) == [True, False]
    snap.remove_pod(holder)
    assert rejected(snap.table) == [False, False]
