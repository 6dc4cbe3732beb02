"""Golden CLI outputs: each folder under tests/golden/ holds ``cmd`` (the arguments after ``kplan``,
one shell-quoted line, paths relative to the project root) and the expected ``stdout``,
``stderr`` and ``exit_code``.

A case with a ``columns`` file runs with stdout on a pseudo-terminal of that many columns.

Regenerate after an intended change with ``KPLAN_UPDATE_GOLDEN=1 python -m pytest tests/golden``
and review the diff. Wall-clock timings in JSON/YAML documents are compared as ``<seconds>``.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
CASES = sorted(p for p in HERE.iterdir() if (p / "cmd").is_file())
UPDATE = os.environ.get("KPLAN_UPDATE_GOLDEN") == "1"
_TIMING = re.compile(r'("?(?:loadSeconds|scheduleSeconds)"?:\s*)[0-9.eE+-]+')


def normalize(text: str) -> str:
    """Replace what differs between runs (wall-clock timings) by a placeholder."""
    return _TIMING.sub(r"\1<seconds>", text)


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "kplan", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def run_on_terminal(args: list[str], columns: int, stderr_too: bool = False,
                    **env: str) -> subprocess.CompletedProcess[str]:
    """kplan with stdout (and with ``stderr_too`` stderr as well) on a pseudo-terminal of
    ``columns`` columns, as a person at a terminal runs it; colour off so files stay plain."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    attrs = termios.tcgetattr(follower)
    attrs[1] &= ~termios.ONLCR  # "\n" stays "\n", as in a file
    termios.tcsetattr(follower, termios.TCSANOW, attrs)
    full_env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    full_env.update({"PYTHONPATH": str(ROOT), "NO_COLOR": "1", "TERM": "xterm", **env})
    proc = subprocess.Popen([sys.executable, "-m", "kplan", *args], cwd=ROOT, env=full_env, stdout=follower,
                            stderr=follower if stderr_too else subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    err = ""
    if proc.stderr is not None:
        with proc.stderr:
            err = proc.stderr.read().decode()
    proc.wait(timeout=300)
    os.close(leader)
    return subprocess.CompletedProcess(args, proc.returncode, b"".join(chunks).decode(), err)


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_cli_output_matches_the_golden_files(case: Path) -> None:
    args = shlex.split((case / "cmd").read_text().strip())
    columns = case / "columns"
    # a case with a ``columns`` file runs on a terminal that wide: tables fitted, block-glyph bars
    got = run_on_terminal(args, int(columns.read_text())) if columns.is_file() else run(args)
    files = {"stdout": normalize(got.stdout), "stderr": normalize(got.stderr), "exit_code": f"{got.returncode}\n"}
    if UPDATE:
        for name, text in files.items():
            (case / name).write_text(text)
        return
    for name, text in files.items():
        want = (case / name).read_text() if (case / name).exists() else ""
        assert text == want, f"{case.name}/{name} differs (KPLAN_UPDATE_GOLDEN=1 regenerates it)"


def _fitted(case: Path) -> bool:
    """A terminal case that must fit its width: all but ``-o wide``, whose lines are as long as they need."""
    args = shlex.split((case / "cmd").read_text().strip())
    return (case / "columns").is_file() and not any(a in ("-o", "--output") and b == "wide"
                                                    for a, b in zip(args, args[1:], strict=False))


FITTED = [p for p in CASES if _fitted(p)]


@pytest.mark.parametrize("case", FITTED, ids=[p.name for p in FITTED])
def test_every_line_of_a_terminal_case_fits_its_columns(case: Path) -> None:
    columns = int((case / "columns").read_text())
    too_wide = [line for line in (case / "stdout").read_text().splitlines() if len(line) > columns]
    assert too_wide == [], f"{case.name}: {len(too_wide)} lines wider than {columns} columns"
