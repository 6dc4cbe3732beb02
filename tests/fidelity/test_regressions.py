"""Reproductions the differential work kept (tests/fidelity/regressions/<case>/, conformance-style
folders with the real scheduler's expected.json): kplan must give their results, and, when the
oracle of the case's release is built, so must the oracle (the folders' expected results stay the
real ones). A case is kube-scheduler 1.34's unless its folder has a ``release`` file naming
another release (kplan then runs with --kube-version, the oracle is that release's); a
``feature-gates`` file (``Gate=false,...``) sets gates other than the release's defaults for both
(--feature-gates, ORACLE_FEATURE_GATES)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fidelity.runners import oracle_path, run_kplan, run_oracle
from tests.fidelity.scenario import compare

HERE = Path(__file__).resolve().parent / "regressions"
CASES = sorted(d for d in HERE.iterdir() if (d / "expected.json").is_file())


def release(case: Path) -> str:
    f = case / "release"
    return f.read_text().strip() if f.is_file() else "1.34"


@pytest.mark.parametrize("case", CASES, ids=[f"kplan gives the real result of {d.name}" for d in CASES])
def test_kplan_gives_the_real_result(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    assert compare(expected, run_kplan(case, release=release(case))) == []


@pytest.mark.parametrize("case", CASES, ids=[f"the {release(d)} oracle confirms {d.name}" for d in CASES])
def test_the_oracle_confirms_the_expected_result(case: Path) -> None:
    binary = oracle_path(release(case))
    if not binary.is_file():
        pytest.skip(f"no oracle at {binary}")
    expected = json.loads((case / "expected.json").read_text())
    assert compare(expected, run_oracle(case, binary)) == []
