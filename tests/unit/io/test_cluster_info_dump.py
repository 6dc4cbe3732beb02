"""``kubectl cluster-info dump`` as a cluster input, in both of its shapes: the stream it prints
(JSON lists one after the other, container logs framed by ``==== START/END logs`` lines between
them) and the ``--output-directory`` tree (nodes.json, NAMESPACE/pods.json, …, with or without
``--all-namespaces``). Either gives the same result as the objects in one file."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kplan.cli.app import main
from kplan.io.manifests import iter_objects, load_objects

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = ROOT / "tests/fixtures/planning/cluster.yaml"
PENDING = ("apiVersion: v1\nkind: Pod\nmetadata: {name: new, namespace: default}\n"
           "spec: {containers: [{name: c, image: app, resources: {requests: {cpu: '1'}}}]}\n")
#: the lists kubectl dumps per namespace, and their file names in the tree (cluster-info dump.go)
PER_NAMESPACE = {"Event": "events", "ReplicationController": "replication-controllers", "Service": "services",
                 "DaemonSet": "daemonsets", "Deployment": "deployments", "ReplicaSet": "replicasets", "Pod": "pods"}


def cluster_objects() -> list[dict[str, Any]]:
    return [o.doc for o in load_objects([str(CLUSTER)])]


def as_list(kind: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    # a typed client's list: the items carry no kind or apiVersion of their own
    version = "apps/v1" if kind in ("DaemonSet", "Deployment", "ReplicaSet") else "v1"
    return {"kind": f"{kind}List", "apiVersion": version, "metadata": {"resourceVersion": "123"},
            "items": [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in items]}


def dump_lists() -> list[tuple[str, dict[str, Any]]]:
    """(relative path in the tree, list) in the order kubectl dumps them."""
    objects = cluster_objects()
    by_ns: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for o in objects:
        if o["kind"] in PER_NAMESPACE:
            by_ns[o["metadata"].get("namespace", "default")][o["kind"]].append(o)
    out = [("nodes.json", as_list("Node", [o for o in objects if o["kind"] == "Node"]))]
    for ns in sorted(by_ns):
        for kind, file in PER_NAMESPACE.items():
            out.append((f"{ns}/{file}.json", as_list(kind, by_ns[ns][kind])))
    return out


def simulate(capsys: pytest.CaptureFixture[str], cluster: str, tmp_path: Path) -> tuple[int, str]:
    pending = tmp_path / "pending.yaml"
    pending.write_text(PENDING)
    with pytest.raises(SystemExit) as e:
        main(["simulate", str(pending), "--cluster", cluster, "--tie-break", "lowest-name", "-o", "json"])
    out, err = capsys.readouterr()
    assert "error:" not in err
    doc = json.loads(out)
    doc.pop("timing", None)
    return int(e.value.code or 0), json.dumps(doc, sort_keys=True)


def test_the_stream_kubectl_prints_reads_as_the_objects_it_holds(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    parts = []
    for _, lst in dump_lists():
        parts.append(json.dumps(lst, indent=4))
        if lst["kind"] == "PodList" and lst["items"]:
            pod = lst["items"][0]["metadata"]
            parts.append(f"==== START logs for container app of pod {pod.get('namespace')}/{pod['name']} ====\n"
                         "{ a log line that looks like JSON\n"
                         f"==== END logs for container app of pod {pod.get('namespace')}/{pod['name']} ====")
    dump = tmp_path / "cluster-info.json"
    dump.write_text("\n".join(parts) + "\n")
    # the same objects in one List: what the dump holds (no priority classes or budgets)
    same = tmp_path / "same.json"
    same.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [
        o for o in cluster_objects() if o["kind"] in ("Node", *PER_NAMESPACE)]}))
    assert simulate(capsys, str(dump), tmp_path) == simulate(capsys, str(same), tmp_path)


@pytest.mark.parametrize("all_namespaces", [True, False], ids=["with --all-namespaces", "without it"])
def test_the_output_directory_tree_reads_as_the_objects_it_holds(all_namespaces: bool, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lists = dump_lists()
    if not all_namespaces:  # kubectl dumps kube-system and default only
        lists = [(p, lst) for p, lst in lists if "/" not in p or p.split("/")[0] in ("default", "kube-system")]
    for rel, lst in lists:
        path = tmp_path / "dump" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(lst, indent=4))
        if rel.endswith("pods.json"):
            for item in lst["items"]:
                logs = path.parent / item["metadata"]["name"] / "logs.txt"
                logs.parent.mkdir(exist_ok=True)
                logs.write_text("==== START logs ====\nnot JSON\n")
    expected = cluster_objects()
    kept = {(o["kind"], o["metadata"].get("namespace", "default"), o["metadata"]["name"]) for o in expected
            if o["kind"] == "Node" or (o["kind"] in PER_NAMESPACE and (all_namespaces or o["metadata"].get(
                "namespace", "default") in ("default", "kube-system")))}
    read = {(o.doc["kind"], o.doc["metadata"].get("namespace", "default"), o.doc["metadata"]["name"])
            for o in iter_objects([str(tmp_path / "dump")])}
    assert read == kept
    code, _ = simulate(capsys, str(tmp_path / "dump"), tmp_path)
    assert code in (0, 1)


def test_a_log_section_without_its_end_is_one_error_line(tmp_path: Path) -> None:
    from kplan.errors import InputError

    dump = tmp_path / "cluster-info.json"
    dump.write_text(json.dumps(dump_lists()[0][1]) + "\n==== START logs for container a of pod x/y ====\nhello\n")
    with pytest.raises(InputError, match="a container log section without its '==== END logs' line"):
        list(iter_objects([str(dump)]))


@pytest.mark.parametrize("shape", ["stream", "one list"])
def test_an_empty_list_dumped_as_items_null_holds_no_objects(shape: str, tmp_path: Path) -> None:
    # Go marshals a nil slice as null: a real dump prints a namespace without DaemonSets so
    nodes = dump_lists()[0][1]
    empty = {"kind": "DaemonSetList", "apiVersion": "apps/v1", "metadata": {"resourceVersion": "9"}, "items": None}
    dump = tmp_path / "cluster-info.json"
    dump.write_text(json.dumps(nodes) + "\n" + json.dumps(empty) if shape == "stream" else json.dumps(empty))
    read = [o.doc["kind"] for o in iter_objects([str(dump)])]
    assert read == (["Node"] * len(nodes["items"]) if shape == "stream" else [])
