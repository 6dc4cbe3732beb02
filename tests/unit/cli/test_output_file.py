"""``--output-file FILE`` for every command and format: the result goes into FILE, written
atomically as a snapshot is (kplan.io.atomic), and nothing to stdout; a destination that cannot be
written fails before the run (exit 2). ``-o html`` to a terminal is refused with a hint."""

from __future__ import annotations

import gzip
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kplan.cli.app import main

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = ["-c", "fixtures/cluster.yaml"]
SHOP = "fixtures/manifests/shop.yaml"


@pytest.fixture(autouse=True)
def _project_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    code = e.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), out, err


COMMANDS = [
    ("simulate, table", ["simulate", SHOP, *CLUSTER, "--tie-break", "lowest-name"]),
    ("simulate, markdown", ["simulate", SHOP, *CLUSTER, "--tie-break", "lowest-name", "-o", "markdown"]),
    ("simulate, html", ["simulate", SHOP, *CLUSTER, "--tie-break", "lowest-name", "-o", "html"]),
    ("whatif, junit", ["whatif", SHOP, *CLUSTER, "--cordon", "gen-b-2", "--tie-break", "lowest-name", "-o", "junit"]),
    ("capacity, yaml", ["capacity", "fixtures/manifests/gpu-inference.yaml", *CLUSTER, "-o", "yaml"]),
    ("explain, table", ["explain", "pod", "shop/web-canary", SHOP, *CLUSTER, "--tie-break", "lowest-name"]),
]


def masked(text: str) -> str:
    """Without the wall-clock figures, which differ from run to run."""
    return re.sub(r'((?:loadSeconds|scheduleSeconds)"?:\s*)[0-9.eE+-]+|( time=)"[0-9.]+"', r"\1\2", text)


@pytest.mark.parametrize("args", [c[1] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_the_file_holds_what_stdout_would(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # the report's date: two runs may straddle a minute
    code, stdout, _ = run(capsys, *args, "-q")
    target = tmp_path / "result"
    got = run(capsys, *args, "--output-file", str(target))
    assert got[:2] == (code, "")
    size = target.stat().st_size
    assert got[2] == (f"wrote {target} ({size} bytes)\n" if size < 10_000 else f"wrote {target} ({size // 1000} kB)\n")
    assert masked(target.read_text()) == masked(stdout)
    assert [p.name for p in tmp_path.iterdir()] == ["result"]  # no temporary file left


def test_a_sweep_into_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "sweep.md"
    code, out, err = run(capsys, "sweep", "fixtures/app/deployment.yaml", *CLUSTER, "-n", "shop", "--add-node",
                         "like=gen-c-3:0..1", "--workers", "1", "-o", "markdown", "--output-file", str(target), "-q")
    assert (code, out, err) == (0, "", "")
    assert "add 0 nodes like gen-c-3" in target.read_text()


def test_gzip_for_a_name_ending_in_gz(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["simulate", SHOP, *CLUSTER, "--tie-break", "lowest-name", "-o", "yaml"]
    _, stdout, _ = run(capsys, *args)
    target = tmp_path / "result.yaml.gz"
    assert run(capsys, *args, "--output-file", str(target), "-q") == (0, "", "")
    assert masked(gzip.decompress(target.read_bytes()).decode()) == masked(stdout)


def test_an_existing_file_is_replaced(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text("an older report\n")
    assert run(capsys, "simulate", SHOP, *CLUSTER, "-o", "markdown", "--output-file", str(target), "-q")[:2] == (0, "")
    assert target.read_text().startswith("### ✅ kplan simulate")


def test_stdout_as_a_dash(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "simulate", SHOP, *CLUSTER, "-o", "markdown", "--output-file", "-")
    assert (code, err) == (0, "") and out.startswith("### ✅ kplan simulate")


def test_a_failed_write_leaves_the_old_file(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from kplan.io import atomic

    target = tmp_path / "report.md"
    target.write_text("an older report\n")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    code, out, err = run(capsys, "simulate", SHOP, *CLUSTER, "-o", "markdown", "--output-file", str(target))
    assert (code, out) == (2, "")
    assert err.endswith(f"error: {target}: cannot write the result: No space left on device\n")
    assert target.read_text() == "an older report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


BAD_TARGETS = [
    ("a missing folder", "no/such/folder/report.html", "no such folder"),
    ("a folder", "fixtures", "fixtures: is a folder; give a file name"),
    ("a device", "/dev/null", "/dev/null: not a regular file; give a file name, or no --output-file for stdout"),
]


@pytest.mark.parametrize(("target", "message"), [c[1:] for c in BAD_TARGETS], ids=[c[0] for c in BAD_TARGETS])
def test_a_destination_that_cannot_be_written_fails_before_the_run(capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch, target: str,
                                                                   message: str) -> None:
    from kplan.cli import workspace

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the inputs were loaded")

    monkeypatch.setattr(workspace, "load_inputs", never)
    code, out, err = run(capsys, "simulate", SHOP, *CLUSTER, "-o", "html", "--output-file", target)
    assert (code, out) == (2, "")
    assert message in err and err.count("\n") == 1


def on_a_terminal(*args: str) -> tuple[int, str]:
    """Run kplan with stdout a pseudo-terminal (stderr a pipe): the exit code and what the terminal got."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "kplan", *args], cwd=ROOT, env=env, stdout=follower,
                            stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, b"".join(chunks).decode() + err.decode()


def test_html_to_a_terminal_is_refused_with_a_hint() -> None:
    code, text = on_a_terminal("simulate", SHOP, *CLUSTER, "-o", "html")
    assert code == 2
    assert text == ("error: -o html makes a page for a browser, not for a terminal: give --output-file "
                    "report.html, or redirect stdout (> report.html)\n")


def test_html_into_a_file_from_a_terminal(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    code, text = on_a_terminal("simulate", SHOP, *CLUSTER, "-o", "html", "--output-file", str(target))
    assert code == 0 and text.startswith(f"wrote {target} (") and "<html" not in text
    assert target.read_text().startswith("<!DOCTYPE html>")
