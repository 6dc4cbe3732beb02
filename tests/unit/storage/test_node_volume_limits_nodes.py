"""NodeVolumeLimits over many nodes at once equals the per-node rule of csi.go, node by node.

The filter passes at once the nodes where even every countable volume of their pods and every
attachment to them plus all of the pod's fit every limit, and counts the others exactly; on
random clusters (CSINode or not, with or without a count, shared volumes, in-tree EBS volumes,
unbound claims, VolumeAttachments of volumes in use, of volumes no pod uses, of missing volumes)
every node's verdict must be what the per-node rule gives."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from storage_builders import csinode, node, pod, pv, pvc, simulation, storage_class, volume_attachment

from kplan.framework.cycle_state import CycleState
from kplan.framework.status import Code
from kplan.plugins.nodevolumelimits import attachable_volumes, volume_limits
from kplan.plugins.volumebinding import storage_of

DRIVER = "csi.example.com"
EBS = "ebs.csi.aws.com"
NAMES = ["n0", "n1", "n2", "n3", "n4"]


def volume(kind: str, handle: str, claim: str) -> list[dict[str, Any]]:
    """The claim (and its volume) of one kind: a bound CSI volume, a bound in-tree EBS volume, an unbound claim."""
    if kind == "unbound":
        return [pvc(claim, "csi")]
    if kind == "ebs":
        return [pvc(claim, "gp2", volume=f"pv-{claim}", bound=True),
                pv(f"pv-{claim}", "gp2", claim=claim, source={"awsElasticBlockStore": {"volumeID": f"aws://a/{handle}"}})]
    return [pvc(claim, "csi", volume=f"pv-{claim}", bound=True), pv(f"pv-{claim}", "csi", claim=claim, csi=(DRIVER, handle))]


node_setups = st.tuples(st.sampled_from([None, 0, 1, 2, 3]), st.booleans(), st.booleans())
kinds = st.sampled_from(["csi", "ebs", "unbound"])
handles = st.sampled_from(["h1", "h2", "h3"])


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(node_setups, min_size=len(NAMES), max_size=len(NAMES)),
       st.lists(st.tuples(st.integers(0, len(NAMES) - 1), kinds, handles), max_size=8),
       st.lists(st.tuples(kinds, handles), min_size=1, max_size=3),
       st.lists(st.tuples(st.integers(0, len(NAMES) - 1), st.sampled_from(["run0", "run1", "new0", "gone", "loose"]),
                          st.booleans()), max_size=5))
def test_every_node_gets_the_per_node_verdict(setups: list[tuple[int | None, bool, bool]],
                                              running: list[tuple[int, str, str]],
                                              wanted: list[tuple[str, str]],
                                              attachments: list[tuple[int, str, bool]]) -> None:
    cluster: list[dict[str, Any]] = [storage_class("csi", DRIVER), storage_class("gp2", "kubernetes.io/aws-ebs")]
    for name, (count, ebs_driver, allocatable) in zip(NAMES, setups, strict=True):
        # the node's attachable-volumes-* allocatable is no limit in 1.34
        cluster.append(node(name, "a", allocatable={f"attachable-volumes-csi-{DRIVER}": "0"} if allocatable else {}))
        if count is not None:
            cluster.append(csinode(name, EBS if ebs_driver else DRIVER, count=count))
    # a volume no pod uses ("loose"), attachments of pods' volumes, of a volume that does not exist
    cluster.append(pv("pv-loose", "csi", claim="nobody", csi=(DRIVER, "h-loose")))
    for row, claim, ebs in attachments:
        cluster.append(volume_attachment(f"pv-{claim}", NAMES[row], EBS if ebs else DRIVER))
    for i, (row, kind, handle) in enumerate(running):
        cluster += volume(kind, handle, f"run{i}")
        cluster.append(pod(f"user{i}", f"run{i}", node_name=NAMES[row]))
    claims = [f"new{i}" for i in range(len(wanted))]
    for claim, (kind, handle) in zip(claims, wanted, strict=True):
        cluster += volume(kind, handle, claim)
    sim = simulation(cluster, [pod("p", *claims)])
    fw = next(iter(sim.handle.frameworks.values()))
    (p,) = sim.pending
    state = CycleState()
    fw.run_pre_filter(state, p)
    table = sim.snapshot.table
    store = storage_of(sim.handle)
    got = fw.plugins["NodeVolumeLimits"].filter(state, p, table, np.arange(len(table)))
    for r, name in enumerate(table.names):
        assert (Code(int(got.codes[r])) == Code.UNSCHEDULABLE) == per_node_rejects(store, table, p, r), name
    # a fork in another order gives each node the same verdict
    order = np.arange(len(table))[::-1].copy()
    fork = table.take(order)
    forked = fw.plugins["NodeVolumeLimits"].filter(state, p, fork, np.arange(len(fork)))
    assert forked.codes.tolist() == got.codes[order].tolist()


def per_node_rejects(store: Any, table: Any, p: Any, r: int) -> bool:
    """CSILimits.Filter for one node, as written upstream."""
    node_obj = table.nodes[r]
    csi_node = store.csi_node(node_obj.name)
    new = attachable_volumes(store, csi_node is not None, p, True)
    if not new:
        return False
    limits = volume_limits(csi_node)
    if not limits:
        return False
    attached: dict[str, str] = {}
    for other in table.pods[r]:
        attached.update(attachable_volumes(store, csi_node is not None, other, False))
    counts: dict[str, int] = {}
    for unique, key in attached.items():
        new.pop(unique, None)
        counts[key] = counts.get(key, 0) + 1
    # getNodeVolumeAttachmentInfo, then the attachments no pod of the node uses
    for va in store.attachments(node_obj.name):
        volume = store.pv(va.pv_name) if va.pv_name else None
        if not va.attacher or volume is None or volume.csi is None:
            continue
        unique = f"{va.attacher}/{volume.csi[1]}"
        if unique not in attached:
            attached[unique] = va.attacher
            counts[va.attacher] = counts.get(va.attacher, 0) + 1
    need: dict[str, int] = {}
    for key in new.values():
        need[key] = need.get(key, 0) + 1
    return any(key in limits and counts.get(key, 0) + k > limits[key] for key, k in need.items())
