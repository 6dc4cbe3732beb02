"""Golden CLI tests for workloads and storage: ``kplan`` run on fixture files, output compared
to the files of each case folder under ``workloads/cases/``.

A case folder holds ``cmd`` (the arguments, one line), optionally ``stdin`` (a file, relative to
the repository, fed on standard input), and the expected ``stdout``, ``stderr`` and ``exit``.
JSON output is compared without its ``timing`` block (wall-clock figures).

Regenerate after an intended change, then review the diff:

    KPLAN_UPDATE_GOLDEN=1 python -m pytest tests/golden/test_golden_workloads.py

Case ``app`` uses required pod anti-affinity, which kplan refuses until InterPodAffinity is
modelled: its golden output is that refusal, to be regenerated with the command above once the
plugin lands.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "workloads" / "cases"
UPDATE = os.environ.get("KPLAN_UPDATE_GOLDEN") == "1"


def _normalise(stdout: str, args: list[str]) -> str:
    if "json" in args and stdout.strip().startswith("{"):
        doc = json.loads(stdout)
        doc.pop("timing", None)
        return json.dumps(doc, indent=2) + "\n"
    return stdout


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if (p / "cmd").is_file()))
def test_golden(case: str) -> None:
    folder = CASES / case
    args = shlex.split((folder / "cmd").read_text())
    stdin = (ROOT / (folder / "stdin").read_text().strip()).read_text() if (folder / "stdin").is_file() else None
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "kplan", *args], cwd=ROOT, input=stdin, capture_output=True,
                          text=True, env=env, timeout=120)
    got = {"stdout": _normalise(proc.stdout, args), "stderr": proc.stderr, "exit": f"{proc.returncode}\n"}
    if UPDATE:
        for name, text in got.items():
            (folder / name).write_text(text)
        return
    for name, text in got.items():
        expected = (folder / name).read_text()
        assert text == expected, f"{case}/{name} differs; regenerate with KPLAN_UPDATE_GOLDEN=1 if intended"
