"""Golden CLI outputs: each folder under tests/golden/ holds ``cmd`` (the arguments after ``kplan``,
one shell-quoted line, paths relative to the project root) and the expected ``stdout``,
``stderr`` and ``exit_code``.

Regenerate after an intended change with ``KPLAN_UPDATE_GOLDEN=1 python -m pytest tests/golden``
and review the diff.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
CASES = sorted(p for p in HERE.iterdir() if (p / "cmd").is_file())
UPDATE = os.environ.get("KPLAN_UPDATE_GOLDEN") == "1"


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "kplan", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_cli_output_matches_the_golden_files(case: Path) -> None:
    args = shlex.split((case / "cmd").read_text().strip())
    got = run(args)
    files = {"stdout": got.stdout, "stderr": got.stderr, "exit_code": f"{got.returncode}\n"}
    if UPDATE:
        for name, text in files.items():
            (case / name).write_text(text)
        return
    for name, text in files.items():
        want = (case / name).read_text() if (case / name).exists() else ""
        assert text == want, f"{case.name}/{name} differs (KPLAN_UPDATE_GOLDEN=1 regenerates it)"
