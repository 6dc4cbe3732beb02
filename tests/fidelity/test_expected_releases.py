"""kplan against each later release's results for the public conformance scenarios
(tests/fidelity/expected/<release>/, written by ``python -m tests.fidelity.expected`` from that
release's oracle): kplan run with ``--kube-version <release>`` must give them.

By default only the scenarios whose result changes from 1.34 run (the others are 1.34's, which
the conformance suite checks); KPLAN_ALL_RELEASE_SCENARIOS=1 runs all 81. Scenarios kplan does
not reproduce yet are listed in KNOWN with the reason, and expected to fail.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conformance.locate import location
from tests.fidelity.runners import run_kplan
from tests.fidelity.scenario import compare

HERE = Path(__file__).resolve().parent / "expected"
CONFORMANCE = location()
RELEASES = ("1.35", "1.36", "1.37", "1.38")

#: (release, scenario) → why kplan does not give the release's result yet
KNOWN: dict[tuple[str, str], str] = {}


def changed(release: str, scenario: str) -> bool:
    mine = json.loads((HERE / release / f"{scenario}.json").read_text())
    base = json.loads((HERE / "1.34" / f"{scenario}.json").read_text())
    return bool(compare(base, mine))


def cases() -> list[object]:
    out: list[object] = []
    every = os.environ.get("KPLAN_ALL_RELEASE_SCENARIOS") == "1"
    for release in RELEASES:
        for f in sorted((HERE / release).glob("*.json")):
            if not every and not changed(release, f.stem):
                continue
            marks = [pytest.mark.xfail(reason=KNOWN[(release, f.stem)], strict=True)] \
                if (release, f.stem) in KNOWN else []
            out.append(pytest.param(release, f.stem, marks=marks, id=f"{f.stem} as kube-scheduler {release}"))
    return out


@pytest.mark.parametrize(("release", "scenario"), cases())
def test_kplan_gives_the_release_s_result(release: str, scenario: str) -> None:
    if not (CONFORMANCE / scenario).is_dir():
        pytest.skip("the public conformance scenarios are not here")
    want = json.loads((HERE / release / f"{scenario}.json").read_text())
    assert compare(want, run_kplan(CONFORMANCE / scenario, release=release)) == []
