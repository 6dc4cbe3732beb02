"""The public family of Karpenter scenarios (scenarios/*, written by family.py): the oracle gives
each folder's expected.json, and kplan agrees with it.

The oracle's half needs oracle/bin/karpenter-oracle (KPLAN_KARPENTER_ORACLE makes it required).
kplan's half runs without the oracle: expected.json is committed. A scenario kplan is known to
get wrong is listed in KNOWN with the difference; it is an expected failure that must keep
failing (strict), so a fix shows up and the entry goes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fidelity.karpenter.compare import compare
from tests.fidelity.karpenter.family import SCENARIOS, scenarios
from tests.fidelity.karpenter.oracle import EXPECTED, run_oracle

NAMES = [sc.name for sc in scenarios()]

#: scenario -> the difference kplan still has (the figures and details: KARPENTER-DIFFS in the notes)
KNOWN: dict[str, str] = {}


def expected(name: str) -> dict[str, object]:
    result: dict[str, object] = json.loads((SCENARIOS / name / EXPECTED).read_text())
    return result


def test_every_scenario_has_its_folder_and_expected_result() -> None:
    folders = sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir())
    assert folders == sorted(NAMES)
    assert all((SCENARIOS / n / EXPECTED).is_file() for n in NAMES)


@pytest.mark.parametrize("name", NAMES, ids=[f"the oracle gives {n}'s expected result" for n in NAMES])
def test_oracle_gives_the_expected_result(name: str, karpenter_oracle: Path) -> None:
    assert run_oracle(karpenter_oracle, SCENARIOS / name) == expected(name)


def _kplan_case(name: str) -> object:
    if name in KNOWN:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN[name]))
    return name


@pytest.mark.parametrize("name", [_kplan_case(n) for n in NAMES], ids=[f"kplan agrees with Karpenter on {n}" for n in NAMES])
def test_kplan_agrees(name: str) -> None:
    from tests.fidelity.karpenter.kplan_side import run_kplan

    differences = compare(expected(name), run_kplan(SCENARIOS / name))
    assert not differences, "\n".join(differences)
