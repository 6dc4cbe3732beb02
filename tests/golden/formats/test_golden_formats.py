"""Golden files of every output format (table, wide, json, yaml, junit, github, markdown) for
``kplan simulate`` and ``kplan whatif``, and of ``--fail-on``.

Each folder here holds ``cmd`` (optional ``#`` comment lines saying what the case shows, then the
arguments of ``kplan``), and the expected ``stdout``, ``stderr`` and ``exit_code``. The command
runs as ``python -m kplan`` from the project root with its output piped (so never in colour).
Wall-clock figures are masked: ``loadSeconds``/``scheduleSeconds`` in JSON and YAML, ``time``
in JUnit XML. After an intended change of output, rewrite the files with::

    KPLAN_UPDATE_GOLDEN=1 python -m pytest tests/golden/formats

and review the diff before committing it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
UPDATE = os.environ.get("KPLAN_UPDATE_GOLDEN") == "1"
_VOLATILE = (
    (re.compile(r'("?(?:loadSeconds|scheduleSeconds)"?:\s*)[0-9.eE+-]+'), r"\1<seconds>"),
    (re.compile(r'( time=)"[0-9.]+"'), r'\1"<seconds>"'),
)


def mask(text: str) -> str:
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text


def read_case(case: Path) -> tuple[str, list[str]]:
    lines = (case / "cmd").read_text().splitlines()
    title = next((ln.lstrip("# ").strip() for ln in lines if ln.startswith("#")), case.name)
    return title, shlex.split(" ".join(ln for ln in lines if ln.strip() and not ln.startswith("#")))


CASES = sorted(p for p in HERE.iterdir() if (p / "cmd").is_file())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_output_format_matches_the_golden_files(case: Path) -> None:
    _, args = read_case(case)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "KPLAN_UPDATE_GOLDEN")}
    env.update(PYTHONPATH=str(ROOT), COLUMNS="200")
    run = subprocess.run([sys.executable, "-m", "kplan", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    got = {"stdout": mask(run.stdout), "stderr": mask(run.stderr), "exit_code": f"{run.returncode}\n"}
    if UPDATE:
        for name, text in got.items():
            (case / name).write_text(text)
        return
    for name, text in got.items():
        want = (case / name).read_text()
        assert text == want, f"{case.name}/{name} differs (KPLAN_UPDATE_GOLDEN=1 rewrites it after an intended change)"


def test_masking_leaves_everything_but_the_timings() -> None:
    assert mask('"loadSeconds": 0.0123, "name": "x"') == '"loadSeconds": <seconds>, "name": "x"'
    assert mask("  scheduleSeconds: 1.5e-05\n") == "  scheduleSeconds: <seconds>\n"
    assert mask('<testsuite name="kplan simulate" tests="2" time="0.031">') == \
        '<testsuite name="kplan simulate" tests="2" time="<seconds>">'
