"""The release a run models (kplan.io.cluster_version): --kube-version, else what the cluster input
states (a snapshot's API server version, else the newest kubelet's as a lower bound), else the
newest modelled release; a stated release kplan does not model warns, an asked-for one is an error."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kplan.errors import ConfigError
from kplan.framework.features import Gate
from kplan.framework.release import KubeVersion
from kplan.io.cluster_version import KubeletVersions, Stated, choose_release, snapshot_version, stated
from kplan.io.kube import ANNOTATION_PREFIX
from kplan.model.raw import RawObject

V = KubeVersion.parse


def _head(version: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "List", "metadata": {"annotations": {
        ANNOTATION_PREFIX + "server-version": version, ANNOTATION_PREFIX + "context": "c"}}}


def _write(path: Path, text: str) -> str:
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return str(path)


SNAPSHOTS = [
    # name, file name, content, stated version
    ("json snapshot", "s.json", json.dumps({**_head("v1.31.13-eks-1"), "items": []}), V("1.31")),
    ("gzip snapshot", "s.json.gz", json.dumps({**_head("v1.36.0"), "items": []}), V("1.36")),
    ("yaml snapshot", "s.yaml",
     f"apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n    {ANNOTATION_PREFIX}server-version: v1.34.1\nitems: []\n",
     V("1.34")),
    ("old snapshot without the annotation", "old.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": []}),
     None),
    ("server version unknown", "u.json", json.dumps({**_head("unknown"), "items": []}), None),
    ("a plain manifest", "m.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", None),
]


@pytest.mark.parametrize(("name", "file", "text", "expected"), SNAPSHOTS, ids=[s[0] for s in SNAPSHOTS])
def test_snapshot_version(tmp_path: Path, name: str, file: str, text: str, expected: KubeVersion | None) -> None:
    assert snapshot_version([_write(tmp_path / file, text)]) == expected


def test_snapshot_version_skips_stdin_folders_and_missing_files(tmp_path: Path) -> None:
    good = _write(tmp_path / "s.json", json.dumps({**_head("v1.34.2"), "items": []}))
    assert snapshot_version(["-", str(tmp_path / "nope.json"), str(tmp_path), good]) == V("1.34")


def _node(name: str, kubelet: str | None) -> RawObject:
    doc: dict[str, object] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    if kubelet is not None:
        doc["status"] = {"nodeInfo": {"kubeletVersion": kubelet}}
    return RawObject(doc, name)


KUBELETS = [
    ("none", [], None),
    ("nodes without nodeInfo", [_node("a", None)], None),
    ("one node", [_node("a", "v1.31.13-eks-3025e55")], V("1.31")),
    ("the newest of several", [_node("a", "v1.30.2"), _node("b", "v1.32.1"), _node("c", "v1.31.0")], V("1.32")),
    ("not a version", [_node("a", "garbage")], None),
]


@pytest.mark.parametrize(("name", "objects", "expected"), KUBELETS, ids=[k[0] for k in KUBELETS])
def test_kubelet_versions(name: str, objects: list[RawObject], expected: KubeVersion | None) -> None:
    pod = RawObject({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, "p")
    tap = KubeletVersions([*objects, pod])
    assert list(tap) == [*objects, pod]  # passed through unchanged
    assert tap.newest == expected


STATED = [
    ("the server's version wins over the kubelets'", "v1.36.1", V("1.31"), Stated(V("1.36"), server=True)),
    ("the kubelets' when the server's is unknown", "unknown", V("1.31"), Stated(V("1.31"), server=False)),
    ("the kubelets' without a server version", None, V("1.33"), Stated(V("1.33"), server=False)),
    ("nothing stated", None, None, None),
]


@pytest.mark.parametrize(("name", "server", "kubelet", "expected"), STATED, ids=[s[0] for s in STATED])
def test_stated(name: str, server: str | None, kubelet: KubeVersion | None, expected: Stated | None) -> None:
    assert stated(server, kubelet) == expected


CHOICES = [
    # name, --kube-version, stated, release used, warning
    ("nothing stated: the default release (the newest modelled)", None, None, "1.37", None),
    ("a modelled server version", None, Stated(V("1.34"), True), "1.34", None),
    ("a 1.35 server", None, Stated(V("1.35"), True), "1.35", None),
    ("the newest modelled server version", None, Stated(V("1.37"), True), "1.37", None),
    ("an older server version", None, Stated(V("1.29"), True), "1.34",
     "the cluster runs Kubernetes 1.29; kplan models kube-scheduler 1.34, the results are 1.34's"),
    ("a 1.36 server", None, Stated(V("1.36"), True), "1.36", None),
    ("a newer server version", None, Stated(V("1.39"), True), "1.38",
     "the cluster runs Kubernetes 1.39; kplan models kube-scheduler 1.38, the results are 1.38's"),
    ("kubelets at a modelled release", None, Stated(V("1.34"), False), "1.34", None),
    ("older kubelets (EKS dump, 1.31)", None, Stated(V("1.31"), False), "1.34",
     "the cluster's newest kubelet runs Kubernetes 1.31 (its control plane is that or newer); kplan models "
     "kube-scheduler 1.34, the results are 1.34's"),
    ("--kube-version wins over the cluster, silently", "1.34", Stated(V("1.31"), True), "1.34", None),
    ("--kube-version with a v and a patch level", "v1.34.1", None, "1.34", None),
    ("--kube-version 1.35", "1.35", Stated(V("1.34"), True), "1.35", None),
]


@pytest.mark.parametrize(("name", "asked", "input_states", "used", "warning"), CHOICES, ids=[c[0] for c in CHOICES])
def test_choose_release(name: str, asked: str | None, input_states: Stated | None, used: str,
                        warning: str | None) -> None:
    release, warnings = choose_release(asked, "", input_states)
    assert str(release.version) == used
    assert warnings == ([warning] if warning else [])


ERRORS = [
    ("an unmodelled --kube-version", "1.31", "",
     "--kube-version 1.31: kplan models kube-scheduler 1.34, 1.35, 1.36, 1.37, 1.38 only"),
    ("a newer unmodelled --kube-version", "1.39", "",
     "--kube-version 1.39: kplan models kube-scheduler 1.34, 1.35, 1.36, 1.37, 1.38 only"),
    ("not a version", "latest", "", '"latest" is not a Kubernetes version (expected MAJOR.MINOR such as 1.34)'),
    ("an unknown gate", None, "Foo=true",
     'invalid argument "Foo=true" for "--feature-gates" flag: unrecognized feature gate: Foo'),
    ("a gate without a value", None, "DRAAdminAccess",
     'invalid argument "DRAAdminAccess" for "--feature-gates" flag: missing bool value for DRAAdminAccess'),
    ("a gate kplan models at its default only", None, "DRAAdminAccess=false",
     'invalid argument "DRAAdminAccess=false" for "--feature-gates" flag: feature gate DRAAdminAccess=false: '
     "kplan models kube-scheduler 1.34 with this gate at its default (true) only"),
]


@pytest.mark.parametrize(("name", "asked", "gates", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_choose_release_errors(name: str, asked: str | None, gates: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        choose_release(asked, gates, Stated(V("1.34"), True))
    assert str(e.value) == message


@pytest.mark.parametrize(("asked", "gates", "on", "off"), [
    (None, "DRAAdminAccess=true,GenericWorkload=false", Gate.DRA_ADMIN_ACCESS, Gate.GENERIC_WORKLOAD),
    ("1.35", "DRAAdminAccess=true,DRADeviceTaints=false", Gate.DRA_ADMIN_ACCESS, Gate.DRA_DEVICE_TAINTS),
], ids=["at the default release", "at 1.35"])
def test_gates_set_to_their_defaults_are_taken(asked: str | None, gates: str, on: Gate, off: Gate) -> None:
    release, _ = choose_release(asked, gates, None)
    assert release.enabled(on) and not release.enabled(off)
