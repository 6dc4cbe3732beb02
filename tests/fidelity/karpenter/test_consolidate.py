"""The public family of Karpenter consolidation scenarios (consolidate/*, written by
consolidate_family.py): the oracle's `consolidate` gives each folder's expected.json, and kplan's
disruption (kplan.autoscaler.karpenter.disruption) agrees with it.

The oracle's half needs the Karpenter oracle (conftest.py); kplan's half runs without it:
expected.json is committed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fidelity.karpenter.consolidate_family import cases
from tests.fidelity.karpenter.consolidation import FAMILY, as_json, compare, run_kplan, run_oracle
from tests.fidelity.karpenter.oracle import EXPECTED

NAMES = sorted(cases())


def expected(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((FAMILY / name / EXPECTED).read_text())
    return result


def test_every_case_has_its_folder_and_expected_result() -> None:
    assert sorted(p.name for p in FAMILY.iterdir() if p.is_dir()) == NAMES
    assert all((FAMILY / n / EXPECTED).is_file() for n in NAMES)


def _without_version(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "karpenter"}


@pytest.mark.parametrize("name", NAMES, ids=[f"the oracle gives {n}'s expected result" for n in NAMES])
def test_oracle_gives_the_expected_result(name: str, karpenter_oracle: Path) -> None:
    assert _without_version(run_oracle(karpenter_oracle, FAMILY / name)) == _without_version(expected(name))


@pytest.mark.parametrize("name", NAMES, ids=[f"kplan disrupts as Karpenter does on {n}" for n in NAMES])
def test_kplan_agrees(name: str) -> None:
    differences = compare(expected(name), as_json(run_kplan(FAMILY / name)))
    assert not differences, "\n".join(differences)


def test_the_comparison_sees_a_different_verdict() -> None:
    """compare is not blind: a kept node kplan would delete is a difference."""
    want = expected("pdb-blocks")
    got = json.loads(json.dumps(want))
    got["nodes"][0]["verdict"] = "deleted"
    assert compare(want, got) == ["nodes[a].verdict: oracle 'kept', kplan 'deleted'"]
