"""``kplan sweep`` end to end: its numbers are kplan whatif's, ties give a fit probability, and a
real Dask cluster (a ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1) gives the
same result as the local workers."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kplan.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures"
# a Deployment (its pod names come from the seed, so every seed is loaded on its own) and a
# StatefulSet with claims, on the shipped cluster
APP = [str(FIX / "app" / "deployment.yaml"), str(FIX / "app" / "statefulset.yaml"), "--cluster",
       str(FIX / "cluster.yaml"), "--cluster", str(FIX / "storage.yaml"), "-n", "shop"]
GRID = ["--add-node", "like=gen-c-3:0..2", "--scale", "deployment/shop/web=8..10:2", "--seeds", "2", "--seed", "5"]


def invoke(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, args, catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def sweep_json(args: list[str]) -> tuple[int, dict[str, Any]]:
    code, out, err = invoke(["sweep", *args, "-o", "json", "-q"])
    assert code in (0, 1), err
    return code, json.loads(out)


@pytest.fixture(scope="module")
def local_sweep() -> dict[str, Any]:
    code, doc = sweep_json([*APP, *GRID, "--workers", "2"])
    assert code == 0
    return doc


def whatif_after(values: list[int], seed: int) -> dict[str, Any]:
    nodes, web = values
    changes = ["--scale", f"deployment/shop/web={web}"]
    if nodes:
        changes = ["--add-node", f"like=gen-c-3:{nodes}", *changes]
    code, out, err = invoke(["whatif", *APP, *changes, "--seed", str(seed), "-o", "json", "-q"])
    assert code in (0, 1), err
    return json.loads(out)


def test_every_point_and_seed_is_what_kplan_whatif_computes_after_the_same_changes(local_sweep: dict[str, Any]
                                                                                  ) -> None:
    assert [p["values"] for p in local_sweep["points"]] == [[0, 8], [0, 10], [1, 8], [1, 10], [2, 8], [2, 10]]
    pending_seen = set()
    for point in local_sweep["points"]:
        assert [r["seed"] for r in point["runs"]] == [5, 6]
        for run in point["runs"]:
            w = whatif_after(point["values"], run["seed"])
            after = w["after"]["summary"]
            total = w["utilization"]["total"]["after"]
            assert (run["pending"], run["scheduled"], run["gated"], run["preempted"], run["nodes"]) == (
                after["pending"] - after["scheduled"] - after["gated"], after["scheduled"], after["gated"],
                after["preempted"], after["nodes"]), point["values"]
            assert run["cpu"] == total["cpu"] and run["memory"] == total["memory"], point["values"]
            pending_seen.add(run["pending"])
        fits = sum(r["fits"] for r in point["runs"])
        assert point["fitProbability"] == fits / 2
    assert len(pending_seen) > 1, "the grid should span fitting and non-fitting points"


def test_a_chain_cut_for_two_workers_gives_what_one_worker_gives() -> None:
    # one scale axis and one seed: a single chain of scale-ups, cut in two for two workers
    grid = [*APP, "--scale", "deployment/shop/web=4..13", "--seed", "3"]
    _, one = sweep_json([*grid, "--workers", "1"])
    _, two = sweep_json([*grid, "--workers", "2"])
    assert one == two
    assert len({p["pending"]["max"] for p in one["points"]}) > 1, "the chain should span fitting and non-fitting points"


def test_the_cheapest_fitting_points_come_first(local_sweep: dict[str, Any]) -> None:
    fitting = [p for p in local_sweep["points"] if p["fitProbability"] == 1]
    expected = sorted(fitting, key=lambda p: (p["addedNodes"], p["index"]))[:3]
    assert [c["index"] for c in local_sweep["cheapest"]] == [p["index"] for p in expected]
    per_size = {tuple(g["replicas"].values()): g["cheapest"] for g in local_sweep["cheapestPerScale"]}
    assert set(per_size) == {(8,), (10,)}
    for (web,), c in per_size.items():
        candidates = [p for p in fitting if p["values"][1] == web]
        assert (c["index"] if c else None) == (min(candidates, key=lambda p: p["addedNodes"])["index"]
                                               if candidates else None)


# --------------------------------------------------------------------- a cluster where ties decide

TIE_CLUSTER = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a, size: big}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"""
# first/small fits both identical empty nodes: equal scores, a tie the seed breaks. second/large
# needs all of node-a: it fits only when the tie sent small to node-b
TIE_PODS = """
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: default}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: "2", memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: large, namespace: default}
spec:
  nodeSelector: {size: big}
  containers: [{name: c, image: app, resources: {requests: {cpu: "4", memory: 1Gi}}}]
"""


@pytest.fixture(scope="module")
def tie_files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("ties")
    (d / "cluster.yaml").write_text(TIE_CLUSTER)
    (d / "pods.yaml").write_text(TIE_PODS)
    return [str(d / "pods.yaml"), "--cluster", str(d / "cluster.yaml")]


def test_fit_probability_is_the_share_of_seeds_whose_tie_breaks_let_every_pod_fit(tie_files: list[str]) -> None:
    code, doc = sweep_json([*tie_files, "--add-node", "like=node-b:0..1", "--seeds", "12", "--workers", "1"])
    for point in doc["points"]:
        fits = [r["fits"] for r in point["runs"]]
        assert 0 < point["fitProbability"] < 1 and point["fitProbability"] == sum(fits) / 12
        assert point["pending"]["min"] == 0 and point["pending"]["max"] == 1
    assert code == 1 and doc["cheapest"] == []  # nothing fits with the default confidence of 1
    code, doc = sweep_json([*tie_files, "--add-node", "like=node-b:0..1", "--seeds", "12", "--workers", "1",
                            "--confidence", "0.25", "--price", "like=node-b=0.5"])
    assert code == 0 and [c["index"] for c in doc["cheapest"]] == [0, 1] and doc["cheapest"][1]["cost"] == 0.5


def test_with_lowest_name_tie_breaks_a_point_fits_always_or_never(tie_files: list[str]) -> None:
    code, doc = sweep_json([*tie_files, "--add-node", "like=node-b:0..1", "--seeds", "6", "--workers", "1",
                            "--tie-break", "lowest-name"])
    # small goes to node-a, the lowest name, every time: large never fits
    assert [p["fitProbability"] for p in doc["points"]] == [0, 0]
    assert code == 1


# --------------------------------------------------------------------- a real Dask cluster

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "dask scheduler exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"no dask scheduler on port {port} after {timeout} s")


@pytest.fixture
def dask_cluster(tmp_path: Path) -> Iterator[str]:
    dask = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")
    assert dask, "the dask command comes with kplan's test dependencies"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    log = open(tmp_path / "dask.log", "wb")  # noqa: SIM115 - closed below, after the processes
    try:
        procs.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                       "--no-dashboard"], stdout=log, stderr=log, cwd=tmp_path))
        wait_for_port(port, procs[0])
        for _ in range(2):
            procs.append(subprocess.Popen([dask, "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                           "--no-nanny", "--no-dashboard"], stdout=log, stderr=log,
                                          cwd=tmp_path))
        # both workers registered before the sweep connects: it uses the workers it finds, and a
        # slow machine may start the second after the first sweep task is already placed
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        stop(address, procs)
        log.close()


def stop(address: str, procs: list[subprocess.Popen[bytes]]) -> None:
    """Ask the scheduler to close itself and its workers (a worker told by a signal lingers for
    its reconnection timeouts), then make sure every process is gone."""
    from distributed import Client

    try:
        with Client(address, timeout=5) as client:
            client.shutdown()
    except Exception:  # the processes are killed below either way
        pass
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def test_a_dask_cluster_of_two_workers_gives_the_local_result(local_sweep: dict[str, Any], dask_cluster: str) -> None:
    code, out, err = invoke(["sweep", *APP, *GRID, "--dask", dask_cluster, "-o", "json", "-v"])
    assert code == 0, err
    assert json.loads(out) == local_sweep
    # -v: the run phase, and apart its part before the first task (connecting, sending the inputs)
    m = re.search(r"\d+ simulations on 2 workers in ([0-9.]+) s \(([0-9.]+) s of it starting the workers", err)
    assert m is not None, err
    assert 0 < float(m.group(2)) <= float(m.group(1))


def test_an_unreachable_dask_scheduler_is_a_one_line_error() -> None:
    port = free_port()
    r = subprocess.run([sys.executable, "-m", "kplan", "sweep", *APP, "--add-node", "like=gen-c-3:0..1",
                        "--dask", f"tcp://127.0.0.1:{port}"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"})
    assert r.returncode == 3
    assert r.stderr.startswith("error: --dask tcp://127.0.0.1:") and r.stderr.count("\n") == 1, r.stderr


def test_the_document_validates_against_the_shipped_schema(local_sweep: dict[str, Any]) -> None:
    import jsonschema

    from kplan.cli.render import to_json
    from kplan.report.codec import decode, encode
    from kplan.report.schema import shipped
    from kplan.report.sweep import SweepDocument

    jsonschema.Draft202012Validator(shipped()).validate(local_sweep)
    assert encode(decode(SweepDocument, local_sweep)) == local_sweep
    assert to_json(encode(decode(SweepDocument, local_sweep))) == to_json(local_sweep)


def group_members(pgid: int) -> list[int]:
    """The processes of a process group (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_ctrl_c_stops_the_local_workers_and_says_interrupted_once() -> None:
    import pty
    import select
    import signal

    leader, follower = pty.openpty()
    # Ctrl-C at a terminal: SIGINT to the whole foreground process group, the Dask nannies and
    # workers included; kplan alone handles it
    proc = subprocess.Popen([sys.executable, "-m", "kplan", "sweep", *APP, "--add-node", "like=gen-c-3:0..30",
                             "--seeds", "10", "--workers", "2"], cwd=ROOT, stdin=follower, stdout=follower,
                            stderr=follower, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm", "COLUMNS": "100"})
    os.close(follower)
    after = b""
    try:
        deadline = time.monotonic() + 120
        while len(group_members(proc.pid)) < 3:  # kplan and its two worker processes (40 s of work)
            assert proc.poll() is None and time.monotonic() < deadline, "the workers did not start"
            while select.select([leader], [], [], 0)[0] and os.read(leader, 65536):
                pass
            time.sleep(0.2)
        time.sleep(2)  # the workers are simulating
        while select.select([leader], [], [], 0)[0] and os.read(leader, 65536):
            pass
        os.killpg(proc.pid, signal.SIGINT)
        while True:
            if not select.select([leader], [], [], 30)[0]:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal closed
                break
            if not chunk:
                break
            after += chunk
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        os.close(leader)
    # after the progress bar (redrawn with \r and escape codes), one line: no worker's traceback,
    # no Dask log line
    pieces = [p for p in re.split(r"[\r\n]+", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", after.decode())) if p.strip()]
    assert pieces[-1:] == ["interrupted"], after
    assert not any(word in after for word in (b"Traceback", b"ERROR", b"distributed")), after
    deadline = time.monotonic() + 10
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert group_members(proc.pid) == [], "a Dask process outlived kplan"


# ------------------------------------------------------------ the release and autoscaler axes

#: pods asking for DRA-served extended resources: served by DRA from 1.36 (DRAExtendedResource),
#: so more of them fit at 1.37 than at 1.34 (tests/fidelity/regressions, the oracles' results)
EXTENDED = ROOT / "tests" / "fidelity" / "regressions" / "dra-extended-resources-1.37"
RELEASE_GRID = [str(EXTENDED / "pods.yaml"), "--cluster", str(EXTENDED / "cluster.yaml"), "--tie-break",
                "lowest-name", "--add-node", "like=node-a:0..1", "--kube-version", "1.34,1.37"]


def whatif_at(args: list[str], release: str) -> dict[str, Any]:
    code, out, err = invoke(["whatif", *args, "--kube-version", release, "-o", "json", "-q"])
    assert code in (0, 1), err
    return json.loads(out)


def test_a_release_axis_runs_each_point_at_its_release_on_a_dask_cluster(dask_cluster: str) -> None:
    """``--kube-version 1.34,1.37`` is an axis: each point is what ``kplan whatif --kube-version``
    gives after the same change at that release, on the loopback Dask cluster as locally, and the
    document and the table name each point's release."""
    code, out, err = invoke(["sweep", *RELEASE_GRID, "--dask", dask_cluster, "-o", "json", "-q"])
    assert code in (0, 1), err
    doc = json.loads(out)
    assert doc["axes"][-1] == {"change": "release", "values": ["1.34", "1.37"]}
    assert doc["release"]["version"] == "1.34", "the document's release is the axis's first"
    assert [(p["values"], p["release"]) for p in doc["points"]] == [
        ([0, 0], "1.34"), ([0, 1], "1.37"), ([1, 0], "1.34"), ([1, 1], "1.37")]
    for p in doc["points"]:
        nodes = p["values"][0]
        w = whatif_at([str(EXTENDED / "pods.yaml"), "--cluster", str(EXTENDED / "cluster.yaml"), "--tie-break",
                       "lowest-name", *(["--add-node", f"like=node-a:{nodes}"] if nodes else [])], p["release"])
        after = w["after"]["summary"]
        assert (p["runs"][0]["scheduled"], p["runs"][0]["pending"]) == (
            after["scheduled"], after["pending"] - after["scheduled"] - after["gated"]), p["values"]
        assert p["changes"][-1] == f"kube-scheduler {p['release']}"
    pending = {p["release"]: p["pending"]["max"] for p in doc["points"] if p["values"][0] == 0}
    assert pending["1.34"] > pending["1.37"], "DRA serves the extended resources only at 1.37"
    assert {(g["release"], g["replicas"] == {}) for g in doc["cheapestPerScale"]} == {("1.34", True), ("1.37", True)}
    local_code, local, _ = invoke(["sweep", *RELEASE_GRID, "--workers", "1", "-o", "json", "-q"])
    assert (local_code, json.loads(local)) == (code, doc), "the Dask cluster gives the local result"
    _, table, _ = invoke(["sweep", *RELEASE_GRID, "--workers", "1", "-q"])
    assert "RELEASE" in table.splitlines()[2] and " 1.37 " in table
    _, page, _ = invoke(["sweep", *RELEASE_GRID, "--workers", "1", "-q", "-o", "html"])
    assert "release 1.34" in page and "release 1.37" in page, "one curve per release"


def test_an_hpa_axis_scales_the_autoscalers_targets_as_whatif_does() -> None:
    hpa_app = [*APP, "--cluster", str(FIX / "hpa" / "hpas.yaml")]
    code, doc = sweep_json([*hpa_app, "--hpa", "none,min,max", "--add-node", "like=gen-c-3:0..1", "--workers", "1",
                            "--tie-break", "lowest-name", "--kube-version", "1.34"])
    assert doc["axes"][-1] == {"change": "hpa", "values": ["none", "min", "max"]}
    assert [p["hpa"] for p in doc["points"]][:3] == ["none", "min", "max"]
    for p in doc["points"]:
        bound = p["hpa"]
        nodes = p["values"][0]
        changes = [*(["--add-node", f"like=gen-c-3:{nodes}"] if nodes else []),
                   *(["--hpa", bound] if bound != "none" else [])]
        w = whatif_at([*hpa_app, *changes, "--tie-break", "lowest-name"], "1.34")
        after = w["after"]["summary"]
        assert (p["runs"][0]["scheduled"], p["runs"][0]["pending"]) == (
            after["scheduled"], after["pending"] - after["scheduled"] - after["gated"]), p["values"]
    scheduled = {p["hpa"]: p["runs"][0]["scheduled"] for p in doc["points"] if p["values"][0] == 0}
    assert scheduled["min"] < scheduled["none"] < scheduled["max"], scheduled


def test_a_scale_axis_of_an_autoscaled_workload_wins_over_the_hpa_axis() -> None:
    code, out, err = invoke(["sweep", *APP, "--cluster", str(FIX / "hpa" / "hpas.yaml"), "--hpa", "max",
                             "--scale", "deployment/shop/web=4", "--workers", "1", "-o", "json"])
    assert code in (0, 1)
    assert "Deployment shop/web is scaled by --scale, which wins over --hpa max" in err
    doc = json.loads(out)
    # web at 4 (the axis), db at its autoscaler's 5: 4 + 5 pending pods in all
    run = doc["points"][0]["runs"][0]
    assert run["scheduled"] + run["pending"] == 9
