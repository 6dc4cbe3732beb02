"""explain's Storage facts (issue «terminal», item 6): a pod that VolumeBinding stops names the
claim, its StorageClass or the absence of a default one, and the fix. One row per cause."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kplan.cli.app import main

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "a"}},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}


def storage_class(name: str, *, default: bool = False, provisioner: str = "ebs.csi.aws.com",
                  mode: str = "WaitForFirstConsumer") -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if default:
        md["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": md,
            "provisioner": provisioner, "volumeBindingMode": mode}


def claim(name: str, class_name: str | None = None, *, explicit_empty: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}
    if class_name is not None or explicit_empty:
        spec["storageClassName"] = class_name or ""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def as_list(items: list[dict[str, Any]]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "100m"}}}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}

CASES = [
    # (id, cluster objects besides the node, expected problem fragment, expected fix fragment, class)
    ("no-class-none-default", [storage_class("gp3"), storage_class("fast"), claim("data")],
     "names no StorageClass and none of the cluster's (fast, gp3) is the default",
     "to one of fast, gp3, or mark one of them default", None),
    ("no-class-no-classes", [claim("data")],
     "names no StorageClass and the cluster has none", "create a StorageClass with a provisioner", None),
    ("explicit-empty-class", [storage_class("gp3", default=True), claim("data", explicit_empty=True)],
     'asks for no StorageClass (storageClassName: "")', "to one of gp3", None),
    ("missing-class", [storage_class("gp3"), claim("data", "premium")],
     "its StorageClass premium does not exist", "create StorageClass premium, or name one of gp3", "premium"),
    ("immediate-no-provisioner", [storage_class("manual", provisioner="kubernetes.io/no-provisioner",
                                                mode="Immediate"), claim("data", "manual")],
     "StorageClass manual binds Immediately; no PersistentVolume of 10Gi matches",
     "create a matching PersistentVolume of class manual", "manual"),
    ("wffc-no-volume", [storage_class("local", provisioner="kubernetes.io/no-provisioner"), claim("data", "local")],
     "no PersistentVolume of class local of 10Gi that the nodes can reach",
     "create matching PersistentVolumes of class local on the nodes", "local"),
    ("missing-claim", [storage_class("gp3", default=True)],
     "the PersistentVolumeClaim does not exist", "create it", None),
]


@pytest.mark.parametrize(("objects", "problem", "fix", "class_name"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_storage_fact_names_claim_class_and_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                objects: list[dict[str, Any]], problem: str, fix: str,
                                                class_name: str | None) -> None:
    cluster, pods = tmp_path / "cluster.json", tmp_path / "pod.json"
    cluster.write_text(as_list([NODE, *objects]))
    pods.write_text(json.dumps(POD))
    with pytest.raises(SystemExit) as e:
        main(["explain", "pod", "default/app", str(pods), "-c", str(cluster), "-o", "json"])
    assert e.value.code == 1
    doc = json.loads(capsys.readouterr().out)
    [fact] = doc["storage"]
    assert fact["claim"] == "default/data"
    assert problem in fact["problem"]
    assert fix in fact["fix"]
    assert fact["storageClass"] == class_name


def test_no_storage_fact_when_storage_is_not_the_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pod that fits nowhere for cpu, with a bound-able claim, gets no Storage line."""
    cluster, pods = tmp_path / "cluster.json", tmp_path / "pod.json"
    cluster.write_text(as_list([NODE, storage_class("gp3", default=True), claim("data")]))
    big = json.loads(json.dumps(POD))
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "64"
    pods.write_text(json.dumps(big))
    with pytest.raises(SystemExit):
        main(["explain", "pod", "default/app", str(pods), "-c", str(cluster), "-o", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["storage"] == []
    assert doc["resources"] is not None


def test_table_says_storage_first_and_more_nodes_do_not_help(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    cluster, pods = tmp_path / "cluster.json", tmp_path / "pod.json"
    cluster.write_text(as_list([NODE, storage_class("gp3"), claim("data")]))
    pods.write_text(json.dumps(POD))
    with pytest.raises(SystemExit):
        main(["explain", "pod", "default/app", str(pods), "-c", str(cluster)])
    out = capsys.readouterr().out
    assert "  Storage:   claim default/data: it names no StorageClass" in out
    assert "no number of them helps: the pod's volume claims stop it on every node" in out
