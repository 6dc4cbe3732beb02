"""The oracle binary's own failures (issue «the real kube-scheduler in the repository», item 6):
a bad command line or scenario file gives one line on stderr and exit status 2, never a panic;
a serial run that does not settle stops with exit status 3 and names the pod it waited for, and so
does a real-time run that does not stop within its ``--timeout``.

Runs every oracle built in oracle/bin (1.34 is the one ``KPLAN_ORACLE`` names, if set); skips
when none is built.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.fidelity.expected import RELEASES
from tests.fidelity.runners import ROOT, oracle_path


def binaries() -> list[Path]:
    found = [oracle_path(r) for r in RELEASES if oracle_path(r).is_file()]
    configured = os.environ.get("KPLAN_ORACLE")
    if configured:
        path = Path(configured) if Path(configured).is_absolute() else ROOT / configured
        found = [path, *(b for b in found if b.resolve() != path.resolve())]
    return found


BINARIES = binaries()
pytestmark = pytest.mark.skipif(not BINARIES, reason="no oracle built (oracle/build.sh 1.34.0)")

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}
"""
#: a claim whose selected-node annotation is already set: the external provisioner (which acts
#: when the scheduler sets it) never provisions, so PreBind polls for bindTimeoutSeconds (600 s)
NEVER_BOUND = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: wffc}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default, annotations: {volume.kubernetes.io/selected-node: n1}}
spec: {storageClassName: wffc, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
"""

#: (case, file text) of scenario files the oracle must refuse
BAD_FILES = [
    ("unclosed flow mapping", "apiVersion: v1\nkind: Node\nmetadata: {name: a\n"),
    ("field of the wrong type", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: \"x\"}\n"),
    ("malformed quantity", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                           "spec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n"),
    ("control characters", "\x00\x01\x02"),
    ("a bare list", "- a\n- b\n"),
    ("object without a name", '{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Node"}]}'),
]
#: (case, scheduler configuration) the oracle must refuse
BAD_CONFIGS = [
    ("unknown plugin", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
                       "- schedulerName: default-scheduler\n  plugins: {filter: {enabled: [{name: NoSuchPlugin}]}}\n"),
    ("unknown version", "apiVersion: kubescheduler.config.k8s.io/v9\nkind: KubeSchedulerConfiguration\n"),
    ("not YAML", "a: {b\n"),
]


def run(binary: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def assert_one_line_error(done: subprocess.CompletedProcess[str], status: int = 2) -> str:
    assert done.returncode == status, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith("kube-oracle: ")
    assert "panic" not in lines[0] and "goroutine " not in lines[0].split("still busy")[0]
    return lines[0]


def has_realtime_timeout(binary: Path) -> bool:
    """Whether ``binary`` was built with real-time mode's ``--timeout`` (its usage names it)."""
    return "--timeout" in run(binary, "replay", "--help").stdout


@pytest.mark.parametrize("binary", BINARIES, ids=[b.name for b in BINARIES])
@pytest.mark.parametrize("args", [[], ["schedule"], ["replay"], ["replay", "--cluster"], ["replay", "--frob", "x"],
                                  ["replay", "--quiet-seconds", "soon", "--cluster", "x"],
                                  ["replay", "--timeout", "0", "--cluster", "x"],
                                  ["replay", "--serial", "--timeout", "5", "--cluster", "x"]],
                         ids=lambda a: "oracle " + " ".join(a) if a else "oracle")
def test_a_bad_command_line_is_one_line_and_exit_2(binary: Path, args: list[str]) -> None:
    assert_one_line_error(run(binary, *args))


@pytest.mark.parametrize("binary", BINARIES, ids=[b.name for b in BINARIES])
@pytest.mark.parametrize(("case", "text"), BAD_FILES, ids=[c for c, _ in BAD_FILES])
def test_a_bad_scenario_file_is_one_line_and_exit_2(binary: Path, case: str, text: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    line = assert_one_line_error(run(binary, "replay", "--serial", "--cluster", str(bad)))
    assert "bad.yaml" in line, case


@pytest.mark.parametrize("binary", BINARIES, ids=[b.name for b in BINARIES])
def test_a_missing_file_is_one_line_and_exit_2(binary: Path, tmp_path: Path) -> None:
    line = assert_one_line_error(run(binary, "replay", "--serial", "--cluster", str(tmp_path / "absent.yaml")))
    assert "absent.yaml" in line


@pytest.mark.parametrize("binary", BINARIES, ids=[b.name for b in BINARIES])
@pytest.mark.parametrize(("case", "text"), BAD_CONFIGS, ids=[c for c, _ in BAD_CONFIGS])
def test_a_bad_scheduler_configuration_is_one_line_and_exit_2(binary: Path, case: str, text: str,
                                                             tmp_path: Path) -> None:
    (tmp_path / "node.yaml").write_text(NODE)
    (tmp_path / "config.yaml").write_text(text)
    assert_one_line_error(run(binary, "replay", "--serial", "--cluster", str(tmp_path / "node.yaml"),
                              "--config", str(tmp_path / "config.yaml")))


@pytest.mark.parametrize("binary", BINARIES, ids=[b.name for b in BINARIES])
def test_a_good_file_schedules_in_both_modes(binary: Path, tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(NODE + "---\n" + POD)
    for mode in (["--serial"], ["--quiet-seconds", "0.5"]):
        done = run(binary, "replay", *mode, "--cluster", str(tmp_path / "cluster.yaml"), "--compact")
        assert done.returncode == 0, done.stderr[-2000:]
        assert '"pod":"default/web","node":"n1"' in done.stdout


@pytest.mark.parametrize("binary", BINARIES, ids=[b.name for b in BINARIES])
def test_a_run_that_does_not_settle_times_out_naming_the_pod(binary: Path, tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(NODE + "---\n" + NEVER_BOUND)
    done = run(binary, "replay", "--serial", "--cluster", str(tmp_path / "cluster.yaml"),
               env={"ORACLE_SETTLE_TIMEOUT": "2", "ORACLE_PATCH_RV": "1"})
    line = assert_one_line_error(done, status=3)
    assert "timeout" in line and "pod default/db" in line


@pytest.mark.parametrize("binary", BINARIES, ids=[b.name for b in BINARIES])
def test_a_real_time_run_that_does_not_stop_times_out_naming_the_pods(binary: Path, tmp_path: Path) -> None:
    if not has_realtime_timeout(binary):
        pytest.skip(f"{binary.name} was built before real-time --timeout (oracle/build.sh to rebuild)")
    # db's binding cycle waits in PreBind for a volume no one provisions; web is bound at once
    (tmp_path / "cluster.yaml").write_text(NODE + "---\n" + POD + "---\n" + NEVER_BOUND)
    t0 = time.monotonic()
    done = run(binary, "replay", "--quiet-seconds", "0.5", "--timeout", "5", "--cluster", str(tmp_path / "cluster.yaml"))
    elapsed = time.monotonic() - t0
    line = assert_one_line_error(done, status=3)
    assert "timeout" in line and "1 pending pod(s) not bound: pod default/db (in a binding cycle)" in line, line
    assert "default/web" not in line
    assert elapsed < 60, elapsed  # the limit, not PreBind's 600 s bind timeout, ended the run


@pytest.mark.parametrize("binary", BINARIES, ids=[b.name for b in BINARIES])
def test_a_real_time_run_within_its_timeout_reports_every_pod(binary: Path, tmp_path: Path) -> None:
    if not has_realtime_timeout(binary):
        pytest.skip(f"{binary.name} was built before real-time --timeout (oracle/build.sh to rebuild)")
    (tmp_path / "cluster.yaml").write_text(NODE + "---\n" + POD)
    done = run(binary, "replay", "--quiet-seconds", "0.5", "--timeout", "60", "--cluster", str(tmp_path / "cluster.yaml"),
               "--compact")
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"pod":"default/web","node":"n1"' in done.stdout
