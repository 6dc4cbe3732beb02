"""VolumeZone's queueing hints (volume_zone.go, the same from v1.34 to v1.37): which storage events
move a pod VolumeZone rejected back to the queue."""

from __future__ import annotations

import dataclasses

import pytest

from kplan.framework.events import PV_ADD, PV_UPDATE, STORAGE_CLASS_ADD, ClusterEvent
from kplan.model.parse import parse_pod
from kplan.model.storage import IMMEDIATE, WAIT_FOR_FIRST_CONSUMER, ClaimRef, PersistentVolume, StorageClass
from kplan.plugins.volumezone import VolumeZone

ZONE, BETA_ZONE, REGION = "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone", \
    "topology.kubernetes.io/region"
POD = parse_pod({"metadata": {"name": "p", "namespace": "default"},
                 "spec": {"containers": [], "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]}})
PV = PersistentVolume("pv", labels={ZONE: "a", "team": "x"})


def hint(kind: str, obj: object) -> bool:
    hints = dict(VolumeZone(None, None).events_to_register())
    fn = hints[kind]
    return True if fn is None else bool(fn(POD, ClusterEvent(kind, obj=obj)))


@pytest.mark.parametrize(("after", "expected"), [
    (dataclasses.replace(PV, claim_ref=ClaimRef("default", "c", "u1"), phase="Bound"), False),
    (dataclasses.replace(PV, annotations={"pv.kubernetes.io/bound-by-controller": "yes"}), False),
    (dataclasses.replace(PV, labels={ZONE: "a", "team": "y"}), False),
    (dataclasses.replace(PV, labels={ZONE: "b", "team": "x"}), True),
    (dataclasses.replace(PV, labels={ZONE: "a__b", "team": "x"}), True),
    (dataclasses.replace(PV, labels={ZONE: "a", REGION: "r", "team": "x"}), True),
    (dataclasses.replace(PV, labels={BETA_ZONE: "a", "team": "x"}), True),
    (dataclasses.replace(PV, labels={"team": "x"}), True),
    (dataclasses.replace(PV, labels={ZONE: "a", BETA_ZONE: "a__", "team": "x"}), False),
], ids=["bound to a claim", "annotated", "another label changed", "another zone", "one more zone",
        "a region added", "the zone under its beta key", "the zone removed",
        "an unparsable beta zone added (ignored as upstream does)"])
def test_a_volume_update_moves_the_pod_only_when_its_topology_changed(after: PersistentVolume,
                                                                     expected: bool) -> None:
    assert hint(PV_UPDATE, (PV, after)) is expected


def test_a_new_volume_always_moves_the_pod() -> None:
    assert hint(PV_ADD, PV) is True


@pytest.mark.parametrize(("mode", "expected"), [(WAIT_FOR_FIRST_CONSUMER, True), (IMMEDIATE, False)])
def test_a_new_storage_class_moves_the_pod_only_when_it_waits_for_the_first_consumer(mode: str,
                                                                                   expected: bool) -> None:
    assert hint(STORAGE_CLASS_ADD, StorageClass("sc", "csi.example.com", mode)) is expected
