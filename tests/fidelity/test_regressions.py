"""Reproductions the differential work kept (tests/fidelity/regressions/<case>/, conformance-style
folders with the real scheduler's expected.json): kplan must give their results, and, when the
1.34 oracle is built, so must the oracle (the folders' expected results stay the real ones)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fidelity.runners import oracle_path, run_kplan, run_oracle
from tests.fidelity.scenario import compare

HERE = Path(__file__).resolve().parent / "regressions"
CASES = sorted(d for d in HERE.iterdir() if (d / "expected.json").is_file())


@pytest.mark.parametrize("case", CASES, ids=[f"kplan gives the real result of {d.name}" for d in CASES])
def test_kplan_gives_the_real_result(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    assert compare(expected, run_kplan(case)) == []


@pytest.mark.parametrize("case", CASES, ids=[f"the 1.34 oracle confirms {d.name}" for d in CASES])
def test_the_oracle_confirms_the_expected_result(case: Path) -> None:
    binary = oracle_path("1.34")
    if not binary.is_file():
        pytest.skip(f"no oracle at {binary}")
    expected = json.loads((case / "expected.json").read_text())
    assert compare(expected, run_oracle(case, binary)) == []
