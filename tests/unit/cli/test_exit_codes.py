"""Exit codes are the same for every command (docs/exit-codes.md): 0 success, 1 the check failed,
2 bad input or usage (the parser's usage errors too), 3 the cluster could not be reached or read,
70 an internal error; 130 interrupted, 141 stdout closed. Run through the real entry point."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kplan.cli.app import main
from tests.integration.live import kubeconfig

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = "tests/fixtures/planning/cluster.yaml"
PENDING = "tests/fixtures/planning/pending.yaml"
FITS = "tests/fixtures/planning/replica.yaml"
PREEMPTOR = "tests/unit/cli/preemptor.yaml"


@pytest.fixture(autouse=True)
def _project_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)  # --no-color sets it; put it back afterwards
    monkeypatch.setenv("COLUMNS", "120")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    code = e.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), out, err


@pytest.fixture(scope="module")
def unreachable(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A kubeconfig whose server is a loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return kubeconfig(str(tmp_path_factory.mktemp("kube")), f"http://127.0.0.1:{port}", token="t")


USAGE = [
    ("no command at all", []),
    ("an unknown command", ["simulte"]),
    ("an unknown root option", ["--frobnicate"]),
    ("simulate: an unknown option", ["simulate", "--frobnicate"]),
    ("simulate: a value that is not a number", ["simulate", "--seed", "many"]),
    ("simulate: a choice that does not exist", ["simulate", "--fail-on", "sometimes"]),
    ("simulate: an option without its value", ["simulate", "-o"]),
    ("snapshot: a value below the minimum", ["snapshot", "--chunk-size", "0"]),
    ("snapshot: an unknown option", ["snapshot", "--frobnicate"]),
    ("explain: no sub-command", ["explain"]),
    ("explain pod: no pod name", ["explain", "pod"]),
    ("whatif: an unknown option", ["whatif", "--frobnicate"]),
    ("whatif: a value below the minimum", ["whatif", "--until-fit-limit", "0"]),
    ("capacity: no pod file", ["capacity"]),
    ("completion: no shell", ["completion"]),
    ("completion: a shell kplan has no script for", ["completion", "tcsh"]),
]


@pytest.mark.parametrize("args", [c[1] for c in USAGE], ids=[c[0] for c in USAGE])
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert "Traceback" not in err


NEGATIVE_SEED = [
    ("simulate", ["simulate", PENDING, "-c", CLUSTER]),
    ("whatif", ["whatif", PENDING, "-c", CLUSTER, "--cordon", "node-c1"]),
    ("capacity", ["capacity", FITS, "-c", CLUSTER]),
    ("explain pod", ["explain", "pod", "api-1", PENDING, "-c", CLUSTER]),
    ("sweep", ["sweep", PENDING, "-c", CLUSTER, "--add-node", "like=node-c1:0..1"]),
]


@pytest.mark.parametrize("args", [c[1] for c in NEGATIVE_SEED], ids=[c[0] for c in NEGATIVE_SEED])
def test_a_negative_seed_is_a_usage_error_naming_seed(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    # numpy's generators refuse a negative seed: before, a ValueError and exit 70 (issue 47 item 1)
    code, out, err = run(capsys, *args, "--seed", "-1")
    assert (code, out) == (2, "")
    assert err.startswith("error: invalid value for '--seed': -1 is not in the range x>=0.\n")
    assert "Traceback" not in err


BAD_INPUT = [
    ("simulate: a missing manifest", ["simulate", "no-such.yaml", "-c", CLUSTER], "no-such.yaml"),
    ("simulate: a missing cluster file", ["simulate", PENDING, "-c", "no-such-cluster.yaml"], "no-such-cluster.yaml"),
    ("simulate: an unknown output format, found before loading", ["simulate", "no-such.yaml", "-o", "xml"],
     "unknown format 'xml'"),
    ("simulate: --quiet and --verbose", ["simulate", PENDING, "-c", CLUSTER, "-q", "-v"], "contradict"),
    ("simulate: --cluster with --context", ["simulate", PENDING, "-c", CLUSTER, "--context", "x"], "--cluster"),
    ("explain: an unknown pod", ["explain", "pod", "nobody", PENDING, "-c", CLUSTER], "no pending pod named nobody"),
    ("explain: an unknown output format", ["explain", "pod", "api-1", PENDING, "-o", "junit"], "unknown format"),
    ("whatif: an unknown node", ["whatif", PENDING, "-c", CLUSTER, "--cordon", "no-node"], "no-node"),
    ("explain: -A with -n", ["explain", "pod", "-A", "-n", "default", "api-1", PENDING, "-c", CLUSTER],
     "-n/--namespace and -A/--all-namespaces: give one"),
    ("explain: a path where the pod's name is expected (the name forgotten)",
     ["explain", "pod", PENDING, "-c", CLUSTER], f"error: {PENDING} is a file or folder, where the pod's name is "
     f"expected: the name comes first (kplan explain pod NAME {PENDING} …)"),
    ("whatif: --add-node NODE where like=NODE was meant", ["whatif", PENDING, "-c", CLUSTER, "--add-node", "node-c1"],
     "error: --add-node node-c1: no such file or folder; node node-c1 exists: --add-node like=node-c1 takes empty "
     "copies of it"),
    ("whatif: --until-fit NODE where like=NODE was meant", ["whatif", PENDING, "-c", CLUSTER, "--until-fit", "node-c1"],
     "--until-fit like=node-c1"),
    ("whatif: --add-node of a name that is no node and no file",
     ["whatif", PENDING, "-c", CLUSTER, "--add-node", "node-zz"], "error: --add-node node-zz: no such file or folder\n"),
    ("whatif: --add-node NODE:COUNT where like=NODE:COUNT was meant",
     ["whatif", PENDING, "-c", CLUSTER, "--add-node", "node-c1:2"], "--add-node like=node-c1:2 takes empty copies"),
    ("sweep: --add-node NODE where like=NODE was meant", ["sweep", PENDING, "-c", CLUSTER, "--add-node", "node-c1"],
     "error: --add-node node-c1: no such file or folder; node node-c1 exists: --add-node like=node-c1 takes empty "
     "copies of it"),
    ("sweep: --add-node NODE:FROM..TO where like=NODE:FROM..TO was meant",
     ["sweep", PENDING, "-c", CLUSTER, "--add-node", "node-c1:1..3"],
     "error: --add-node node-c1:1..3: no such file or folder; node node-c1 exists: --add-node like=node-c1:1..3 "
     "takes empty copies of it"),
    ("sweep: --add-node of a name that is no node and no file",
     ["sweep", PENDING, "-c", CLUSTER, "--add-node", "node-zz:1..3"],
     "error: --add-node node-zz:1..3: no such file or folder\n"),
    ("whatif: an unknown output format", ["whatif", PENDING, "-o", "csv"], "unknown format 'csv'"),
    ("simulate: --fail-on newly-unschedulable, which needs a change",
     ["simulate", PENDING, "-c", CLUSTER, "--fail-on", "newly-unschedulable"],
     "--fail-on newly-unschedulable compares the runs before and after a change"),
    ("capacity: a missing pod file", ["capacity", "no-such.yaml", "-c", CLUSTER], "no-such.yaml"),
    ("capacity: an unknown output format", ["capacity", FITS, "-o", "github"], "unknown format 'github'"),
    ("snapshot: an existing file without --force", ["snapshot", "--output-file", "README.md"], "README.md"),
]


@pytest.mark.parametrize(("args", "says"), [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT])
def test_bad_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], args: list[str], says: str) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and says in err


CLUSTER_COMMANDS = [
    ("simulate", ["simulate", PENDING]),
    ("snapshot", ["snapshot"]),
    ("explain pod", ["explain", "pod", "api-1", PENDING]),
    ("whatif", ["whatif", PENDING]),
    ("capacity", ["capacity", FITS]),
]


@pytest.mark.parametrize("args", [c[1] for c in CLUSTER_COMMANDS], ids=[c[0] for c in CLUSTER_COMMANDS])
def test_an_unreachable_cluster_exits_3(capsys: pytest.CaptureFixture[str], unreachable: str, args: list[str]) -> None:
    code, out, err = run(capsys, *args, "--kubeconfig", unreachable)
    assert code == 3
    assert out == "" and err.startswith("error: cannot reach the cluster at http://127.0.0.1:")


CHECKS = [
    ("simulate: every pod fits", ["simulate", FITS, "-c", CLUSTER], 0),
    ("simulate -A, as kubectl's habit (every namespace, the default)", ["simulate", "-A", FITS, "-c", CLUSTER], 0),
    ("whatif --all-namespaces", ["whatif", "--all-namespaces", FITS, "-c", CLUSTER], 0),
    ("capacity -A", ["capacity", "-A", FITS, "-c", CLUSTER], 0),
    ("explain -A: the pod looked for in every namespace", ["explain", "pod", "-A", "api-1", PENDING, "-c", CLUSTER], 0),
    ("simulate: a pod does not fit", ["simulate", PENDING, "-c", CLUSTER], 1),
    ("simulate: a pod does not fit, but --fail-on never", ["simulate", PENDING, "-c", CLUSTER, "--fail-on", "never"], 0),
    ("simulate: a preemption, by default", ["simulate", PREEMPTOR, "-c", CLUSTER], 0),
    ("simulate: a preemption under --fail-on preemption",
     ["simulate", PREEMPTOR, "-c", CLUSTER, "--fail-on", "preemption"], 1),
    ("explain: a scheduled pod", ["explain", "pod", "api-1", PENDING, "-c", CLUSTER], 0),
    ("explain: an unschedulable pod", ["explain", "pod", "wide-1", PENDING, "-c", CLUSTER], 1),
    ("whatif: a pod still does not fit after the change", ["whatif", PENDING, "-c", CLUSTER, "--cordon", "node-c1"], 1),
    ("whatif: --fail-on never", ["whatif", PENDING, "-c", CLUSTER, "--cordon", "node-c1", "--fail-on", "never"], 0),
    # issue 47 item 15: pods already pending before the change do not fail newly-unschedulable
    ("whatif --fail-on newly-unschedulable: only pods pending before still do not run",
     ["whatif", PENDING, "-c", CLUSTER, "--cordon", "node-c1", "--fail-on", "newly-unschedulable"], 0),
    ("whatif --fail-on newly-unschedulable: the drain leaves a pod that ran unplaced",
     ["whatif", PENDING, "-c", CLUSTER, "--drain", "node-a1", "--drain", "node-a2", "--fail-on",
      "newly-unschedulable"], 1),
    ("capacity: replicas fit", ["capacity", FITS, "-c", CLUSTER], 0),
    ("completion", ["completion", "bash"], 0),
    ("--version", ["--version"], 0),
    ("help", ["simulate", "--help"], 0),
]


@pytest.mark.parametrize(("args", "code"), [c[1:] for c in CHECKS], ids=[c[0] for c in CHECKS])
def test_the_check_decides_between_0_and_1(capsys: pytest.CaptureFixture[str], args: list[str], code: int) -> None:
    got, out, err = run(capsys, *args)
    assert got == code, err
    assert out


def test_an_internal_error_exits_70_with_its_traceback(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import kplan.cli.workspace

    def broken(*args: object, **kw: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(kplan.cli.workspace, "load_inputs", broken)
    code, out, err = run(capsys, "simulate", PENDING, "-c", CLUSTER)
    assert code == 70
    assert "Traceback" in err and "ZeroDivisionError: a bug" in err
    assert err.rstrip().splitlines()[-1].startswith("error: internal error in kplan")


def test_a_closed_stdout_exits_141_quietly() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before kplan writes
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "kplan", "simulate", PENDING, "-c", CLUSTER], cwd=ROOT, env=env,
                          stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write)
    assert proc.returncode == 141
    assert proc.stderr == ""


KPLAN = f"PYTHONPATH={shlex.quote(str(ROOT))} {shlex.quote(sys.executable)} -m kplan"
SIMULATE_PENDING = f"{KPLAN} simulate {PENDING} -c {CLUSTER}"

PIPELINES = [
    # the whole result is in the pipe before head reads a byte; head reads 100 bytes (-c 100), or
    # its first 8 KiB (-n), and leaves the rest behind
    ("-o json | head -c 100: the reader left the rest unread", f"{SIMULATE_PENDING} -o json | head -c 100", 141),
    ("the shipped example's 9.7 kB -o json | head", f"{KPLAN} simulate fixtures/manifests -c fixtures/cluster.yaml "
     "-o json | head", 141),
    # a result shorter than head's buffer is read whole: kplan cannot tell head from cat
    ("| cat reads everything: the check decides", f"{SIMULATE_PENDING} | cat", 1),
    ("| head -100 reads everything: the check decides", f"{SIMULATE_PENDING} | head -100", 1),
    ("every pod fits | cat", f"{KPLAN} simulate {FITS} -c {CLUSTER} -o json | cat", 0),
    ("| head -3 of a short result reads it all: the check decides", f"{SIMULATE_PENDING} | head -3", 1),
    ("| grep -q reads it all: the check decides", f"{SIMULATE_PENDING} | grep -q POD", 1),
]


@pytest.mark.parametrize(("pipeline", "code"), [c[1:] for c in PIPELINES], ids=[c[0] for c in PIPELINES])
def test_a_reader_that_leaves_output_unread_makes_the_pipeline_fail_with_141(pipeline: str, code: int) -> None:
    # as a CI step runs it: bash with pipefail, whose status is kplan's when head succeeds
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {pipeline} > /dev/null"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (code, "")


def test_a_reader_that_leaves_in_the_middle_of_a_long_write_is_seen() -> None:
    # the pipe takes 64 KiB; the write of the rest meets the closed pipe (Python's own buffered
    # stdout dropped that rest without an error)
    from kplan.cli.terminal import GuardedStdout, OutputClosed

    read, write = os.pipe()

    def head() -> None:
        os.read(read, 100)
        os.close(read)

    reader = threading.Thread(target=head)
    reader.start()
    with open(write, "w", encoding="utf-8") as stream, pytest.raises(OutputClosed):
        GuardedStdout(stream).write("x" * 300_000)
    reader.join()


def test_a_reader_that_read_everything_and_left_at_once_leaves_the_check_its_code(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 47 item 2: `| head -3` of a short result read it all and left while kplan looked; the
    # look saw bytes unread, then the reader gone, and said 141 (or 1, by timing). Here the reader
    # reads everything and leaves exactly between kplan's count of unread bytes and its poll.
    import select

    from kplan.cli.terminal import reader_left

    read, write = os.pipe()
    os.write(write, b"x" * 2105)
    real_poll = select.poll

    class ReaderLeavesBeforePoll:
        def __init__(self) -> None:
            self.poller = real_poll()

        def register(self, fd: int, events: int) -> None:
            self.poller.register(fd, events)

        def poll(self, timeout: int) -> list[tuple[int, int]]:
            if read >= 0:
                assert len(os.read(read, 8192)) == 2105
                os.close(read)
            return self.poller.poll(timeout)

    monkeypatch.setattr(select, "poll", ReaderLeavesBeforePoll)
    try:
        assert reader_left(write) is False
    finally:
        os.close(write)


def test_a_reader_that_left_part_unread_is_seen() -> None:
    from kplan.cli.terminal import reader_left

    read, write = os.pipe()
    os.write(write, b"x" * 10_000)
    os.read(read, 8192)
    os.close(read)
    try:
        assert reader_left(write) is True
    finally:
        os.close(write)


def test_a_result_goes_into_a_pipe_in_one_piece_at_the_end() -> None:
    # written as it came, `| head -3` could read the first piece and leave before the next one
    # (141) or read both (the check's code) from one run to the next
    from kplan.cli.terminal import GuardedStdout

    read, write = os.pipe()
    os.set_blocking(read, False)
    with open(write, "w", encoding="utf-8") as stream:
        guarded = GuardedStdout(stream)
        guarded.write("POD  NODE\n")
        guarded.write("web  node-a\n")
        with pytest.raises(BlockingIOError):
            os.read(read, 8192)  # nothing yet
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: (os.set_blocking(read, True), got.append(os.read(read, 8192))))
        reader.start()
        guarded.finish()
        reader.join()
    os.close(read)
    assert got == [b"POD  NODE\nweb  node-a\n"]


UNWRITABLE = [
    ("simulate -o json", ["simulate", PENDING, "-c", CLUSTER, "-o", "json"]),
    ("simulate's table", ["simulate", PENDING, "-c", CLUSTER]),
    ("explain", ["explain", "pod", "api-1", PENDING, "-c", CLUSTER]),
    ("whatif", ["whatif", PENDING, "-c", CLUSTER, "--cordon", "node-c1"]),
    ("capacity", ["capacity", FITS, "-c", CLUSTER]),
    ("snapshot --print-rbac", ["snapshot", "--print-rbac"]),
    ("completion", ["completion", "bash"]),
]


@pytest.mark.parametrize("args", [c[1] for c in UNWRITABLE], ids=[c[0] for c in UNWRITABLE])
def test_a_full_disk_is_one_line_and_exit_2(args: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "kplan", *args], cwd=ROOT, env=env, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (2, "error: cannot write to stdout: No space left on device\n")


def test_a_stdout_closed_while_writing_a_snapshot_exits_141_quietly(monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # not only the result renderers: any write to stdout that meets a broken pipe ends the run so
    class Closed:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:
            raise OSError("no descriptor")

    monkeypatch.setattr(sys, "stdout", Closed())
    monkeypatch.setattr("kplan.cli.terminal.silence_stdout", lambda: None)
    code, _, err = run(capsys, "completion", "bash")
    assert (code, err) == (141, "")


def test_ctrl_c_says_interrupted_and_exits_130(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    import signal

    from kplan.cli import workspace

    def interrupted(*args: object, **kwargs: object) -> None:
        signal.raise_signal(signal.SIGINT)  # as a Ctrl-C in the middle of loading

    monkeypatch.setattr(workspace, "load_inputs", interrupted)
    code, out, err = run(capsys, "simulate", PENDING, "-c", CLUSTER)
    assert (code, out, err) == (130, "", "interrupted\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back after the run


def test_an_interrupted_snapshot_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kplan.cli.terminal import Interrupted
    from kplan.io import snapshot_file

    def interrupt(head: object, items: object, out: object) -> None:
        raise Interrupted()

    monkeypatch.setattr(snapshot_file, "write_json", interrupt)
    with pytest.raises(Interrupted):
        snapshot_file.write_snapshot({"kind": "List"}, ['{"kind": "Node"}'], str(tmp_path / "snap.json"))
    assert list(tmp_path.iterdir()) == []
