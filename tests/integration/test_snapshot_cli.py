"""``kplan snapshot`` and ``kplan simulate`` on a live (loopback) cluster, through the real CLI entry point."""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from kplan.cli.app import main
from kplan.io.manifests import load_objects
from kplan.report.document import SimulationDocument, simulation_document
from tests.builders import simulate_files
from tests.integration.conftest import TOKEN
from tests.integration.fake_apiserver import FakeApiServer
from tests.integration.live import kubeconfig, pod, small_cluster


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["kplan", *args])
    with pytest.raises(SystemExit) as e:
        main()
    out, err = capsys.readouterr()
    code = e.value.code
    return (code if isinstance(code, int) else 1), out, err


@pytest.fixture
def config(server: FakeApiServer, tmp_path: Path) -> str:
    return kubeconfig(str(tmp_path), server.url, token=TOKEN)


def write_source(tmp_path: Path) -> Path:
    path = tmp_path / "source.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": small_cluster()}))
    return path


def write_manifest(tmp_path: Path) -> Path:
    path = tmp_path / "new-pod.json"
    path.write_text(json.dumps(pod("extra", ns="team-a", cpu="900m", app="api")))
    return path


def sim(cluster: list[str], manifests: list[str], **kw: Any) -> SimulationDocument:
    return simulation_document(simulate_files(cluster, manifests, **kw))


# ------------------------------------------------------------------------------------- output

@pytest.mark.parametrize("name", ["snap.json", "snap.json.gz", "snap.yaml", "snap.yml.gz"])
def test_the_snapshot_file_reads_back_as_the_captured_objects(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: str, tmp_path: Path,
        name: str) -> None:
    target = tmp_path / name
    code, out, err = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config, "--output-file", str(target))
    assert (code, out) == (0, "")
    assert err.startswith("captured 3 nodes, 10 pods, 2 namespaces, 1 service, 1 replicaset, ")
    assert err.endswith(f"from context test (server v1.34.1) into {target}\n")
    objects = load_objects([str(target)])
    assert [o.doc["kind"] for o in objects][:4] == ["Node", "Node", "Node", "Pod"]
    assert len(objects) == 3 + 10 + 2 + 8 + 4
    raw = gzip.open(target).read() if name.endswith(".gz") else target.read_bytes()
    assert raw.lstrip().startswith(b"{" if ".json" in name else b"apiVersion: v1")
    assert [p for p in os.listdir(tmp_path) if p.endswith(".part")] == []


def test_without_output_the_json_goes_to_stdout(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], config: str) -> None:
    code, out, err = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config)
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["kind"] == "List" and len(doc["items"]) == 27
    assert doc["metadata"]["annotations"]["kplan.dev/context"] == "test"


def test_an_existing_file_is_kept_without_force(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                server: FakeApiServer, config: str, tmp_path: Path) -> None:
    target = tmp_path / "snap.json"
    target.write_text("precious")
    code, out, err = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config, "--output-file", str(target))
    assert (code, out, err) == (2, "", f"error: {target}: the file exists; give --force to replace it\n")
    assert target.read_text() == "precious" and server.requests == [], "refused before reading the cluster"
    code, _, _ = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config, "--output-file", str(target), "--force")
    assert code == 0 and json.loads(target.read_text())["kind"] == "List"


@pytest.mark.parametrize("error, code, message", [
    (KeyboardInterrupt, 130, None),  # typer turns ^C into exit code 130
    (OSError, 2, "error: {target}: cannot write the snapshot: disk full\n"),
])
def test_an_interrupted_write_leaves_no_file(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                             config: str, tmp_path: Path, error: type[BaseException], code: int,
                                             message: str | None) -> None:
    from kplan.io import snapshot_file

    real = snapshot_file.write_json

    class FailingFile:
        """Takes a few writes, then fails: part of the file is on disk by then."""

        def __init__(self, out: Any) -> None:
            self.out, self.writes = out, 0

        def write(self, text: str) -> int:
            self.writes += 1
            if self.writes > 3:
                raise error("disk full")
            return int(self.out.write(text))

    monkeypatch.setattr(snapshot_file, "write_json", lambda head, items, out: real(head, items, FailingFile(out)))
    target = tmp_path / "snap.json"
    got_code, out, err = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config, "--output-file", str(target))
    assert (got_code, out) == (code, "")
    if message is not None:
        assert err == message.format(target=target)
    assert sorted(os.listdir(tmp_path)) == ["config"], "neither the target nor a temporary file is left"


UNWRITABLE_TARGETS = [
    ("a device, which the rename would replace", "/dev/full", True,
     "error: /dev/full: not a regular file; give a file name, or no --output-file for stdout\n"),
    ("a link to a device", "{tmp}/link", True,
     "error: {tmp}/link: not a regular file; give a file name, or no --output-file for stdout\n"),
    ("a folder where no file can be created", "/proc/self/snap.json", False,
     "error: /proc/self/snap.json: cannot write the snapshot: No such file or directory\n"),
]


@pytest.mark.parametrize(("target", "before_reading", "message"), [c[1:] for c in UNWRITABLE_TARGETS],
                         ids=[c[0] for c in UNWRITABLE_TARGETS])
def test_an_output_file_that_cannot_be_written_is_one_line_and_exit_2(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], server: FakeApiServer, config: str,
        tmp_path: Path, target: str, before_reading: bool, message: str) -> None:
    (tmp_path / "link").symlink_to("/dev/full")
    target = target.format(tmp=tmp_path)
    code, out, err = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config, "--output-file", target, "--force")
    assert (code, out, err) == (2, "", message.format(tmp=tmp_path))
    assert (server.requests == []) == before_reading
    assert os.path.islink(tmp_path / "link") and os.path.exists("/dev/full")


def test_a_link_keeps_pointing_at_the_snapshot(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                               config: str, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "snap.json").write_text("old")
    (tmp_path / "snap.json").symlink_to(tmp_path / "data" / "snap.json")
    code, _, _ = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config, "--output-file",
                     str(tmp_path / "snap.json"), "--force")
    assert code == 0 and os.path.islink(tmp_path / "snap.json")
    assert json.loads((tmp_path / "data" / "snap.json").read_text())["kind"] == "List"
    assert os.listdir(tmp_path / "data") == ["snap.json"]


# --------------------------------------------------------------------------------- exit codes

def test_no_permission_on_pods_exits_3_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], server: FakeApiServer,
                                                     config: str, tmp_path: Path) -> None:
    server.forbid("pods")
    code, out, err = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config, "--output-file", str(tmp_path / "s.json"))
    assert code == 3 and out == "" and err.count("\n") == 1
    assert err.startswith('error: no permission to list pods (verb "list", resource "pods", API group "" (core))')
    assert not (tmp_path / "s.json").exists()


def test_a_forbidden_optional_kind_warns_and_still_writes(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], server: FakeApiServer,
                                                          config: str, tmp_path: Path) -> None:
    server.forbid("priorityclasses")
    code, _, err = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config, "--output-file", str(tmp_path / "s.json"))
    assert code == 0
    assert err.splitlines()[0] == ('warning: no permission to list priorityclasses.scheduling.k8s.io (verb "list", '
                                   'resource "priorityclasses", API group scheduling.k8s.io); the simulation will '
                                   "lack PriorityClasses, so pending pods naming a class other than the built-in "
                                   "ones are rejected")
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["metadata"]["annotations"]["kplan.dev/missing"] == "priorityclasses.scheduling.k8s.io"


def test_an_unreachable_cluster_exits_3(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    from tests.integration.test_list_protocol import free_port

    config = kubeconfig(str(tmp_path), f"http://127.0.0.1:{free_port()}", token=TOKEN)
    code, out, err = run(monkeypatch, capsys, "snapshot", "--kubeconfig", config)
    assert code == 3 and out == "" and err.count("\n") == 1 and err.startswith("error: cannot reach the cluster")


@pytest.mark.parametrize("args, message", [
    (["snapshot", "-n", "a", "-A"], "error: -n/--namespace and -A/--all-namespaces cannot be used together\n"),
    (["snapshot", "--context", "nope"], "error: --context nope: no such context in kubeconfig"),
    (["simulate", "--cluster", "x.json", "--context", "test"], "error: --cluster reads a snapshot file; "
     "--kubeconfig/--context read a live cluster: give one or the other\n"),
])
def test_bad_usage_exits_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: str,
                           args: list[str], message: str) -> None:
    monkeypatch.setenv("KUBECONFIG", config)
    code, out, err = run(monkeypatch, capsys, *args)
    assert code == 2 and out == "" and err.startswith(message)


# ---------------------------------------------------------------------------------- simulation

def test_simulating_the_snapshot_gives_the_result_of_the_source_objects(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: str, tmp_path: Path) -> None:
    source, manifest = write_source(tmp_path), write_manifest(tmp_path)
    # the source files state no release (they would run at the default one); a snapshot of the
    # server states its v1.34.1, so the source objects are simulated at 1.34
    expected = sim([str(source)], [str(manifest)], kube_version="1.34")
    assert expected.summary.pending == 6 and expected.summary.unschedulable >= 1, "a telling scenario"
    for name in ("snap.json", "snap.yaml.gz"):
        run(monkeypatch, capsys, "snapshot", "--kubeconfig", config, "--output-file", str(tmp_path / name))
        assert sim([str(tmp_path / name)], [str(manifest)]) == expected, name
    assert sim([], [str(manifest)], kubeconfig=config) == expected, "in-memory snapshot"


def test_simulate_reads_the_live_cluster_of_KUBECONFIG_without_cluster_files(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: str, tmp_path: Path) -> None:
    source, manifest = write_source(tmp_path), write_manifest(tmp_path)
    # the live server says v1.34.x; files that state no release would get the default one
    code_file, from_file, _ = run(monkeypatch, capsys, "simulate", str(manifest), "--cluster", str(source),
                                  "-o", "json", "--tie-break", "lowest-name", "--kube-version", "1.34")
    monkeypatch.setenv("KUBECONFIG", config)
    code_live, live, err = run(monkeypatch, capsys, "simulate", str(manifest), "-o", "json",
                               "--tie-break", "lowest-name")
    drop_timing = lambda text: {k: v for k, v in json.loads(text).items() if k != "timing"}  # noqa: E731
    assert code_live == code_file == 1 and drop_timing(live) == drop_timing(from_file)
    assert "error" not in err


def test_live_cluster_objects_can_be_read_more_than_once(config: str) -> None:
    from kplan.cli.common import cluster_objects

    objects, warnings, _ = cluster_objects([], config)
    first, second = [o.doc for o in objects], [o.doc for o in objects]
    assert first == second and len(first) == 27 and warnings == []
    assert {o.source for o in objects} == {"context test"}


# ------------------------------------------------------------------------------------- the server's version

@pytest.mark.parametrize(("version", "warning"), [
    ("v1.34.1", None),
    ("v1.29.4", "the cluster runs Kubernetes 1.29; kplan models kube-scheduler 1.34, the results are 1.34's"),
], ids=["a modelled release: no word", "an older server: one warning naming the release used"])
def test_the_snapshot_records_the_server_version_and_warns_outside_the_modelled_releases(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, version: str,
        warning: str | None) -> None:
    with FakeApiServer(small_cluster(), token=TOKEN, git_version=version) as srv:
        target = tmp_path / "snap.json"
        code, _, err = run(monkeypatch, capsys, "snapshot", "--kubeconfig", kubeconfig(str(tmp_path), srv.url, token=TOKEN),
                           "--output-file", str(target))
    assert code == 0
    head = json.loads(target.read_text())["metadata"]["annotations"]
    assert head["kplan.dev/server-version"] == version
    warned = [line for line in err.splitlines() if "kplan models" in line]
    assert warned == ([] if warning is None else [f"warning: {warning}"])


def test_hpa_scales_the_live_clusters_autoscaler_target(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: str, tmp_path: Path) -> None:
    """The autoscalers come with the list calls (the fake server is read with GETs only): --hpa
    max scales ReplicaSet default/web-1 (5 declared, none of its pods running) to maxReplicas."""
    manifest = write_manifest(tmp_path)
    code, out, err = run(monkeypatch, capsys, "simulate", str(manifest), "--kubeconfig", config, "-o", "json",
                         "--hpa", "max")
    assert code in (0, 1), err
    assert json.loads(out)["autoscaled"] == [{
        "horizontalPodAutoscaler": "default/web", "bound": "max", "field": "maxReplicas",
        "workload": "ReplicaSet default/web-1", "replicasBefore": 0, "replicas": 8}]
