"""kplan against the real kube-scheduler 1.34 on a seeded sample of generated scenarios.

Needs the oracle binary (``oracle/build.sh 1.34`` → oracle/bin/kube-scheduler-oracle-1.34).
``KPLAN_ORACLE`` names it (a relative path is taken from the repository root) and makes it
required: when set, a missing binary fails the tests instead of skipping them, so CI that sets
it cannot go green without the comparison. Without it the default path is used when the binary
is there, and the tests skip otherwise.

A scenario that differs is shrunk (a small budget) and the reproduction's folder is named in
the failure, with the differences.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fidelity.differential import Differ, run_one
from tests.fidelity.generate import generate
from tests.fidelity.runners import ROOT, oracle_path

VARIABLE = "KPLAN_ORACLE"
#: the sample: 30 consecutive seeds (sizes and features as they fall)
SAMPLE = range(3501, 3531)


def oracle() -> Path:
    configured = os.environ.get(VARIABLE)
    path = Path(configured) if configured else oracle_path("1.34")
    path = path if path.is_absolute() else ROOT / path
    if not path.is_file():
        if configured:
            pytest.fail(f"{VARIABLE}={configured}: no oracle binary at {path} (oracle/build.sh 1.34)")
        pytest.skip(f"no oracle at {path}; build it with oracle/build.sh 1.34 (set {VARIABLE} to require it)")
    return path


@pytest.fixture(scope="module")
def differ() -> Differ:
    return Differ(oracle(), None, timeout=600)


@pytest.mark.parametrize("seed", SAMPLE, ids=[f"generated scenario {s} agrees with kube-scheduler 1.34" for s in SAMPLE])
def test_sample_agrees_with_the_real_scheduler(differ: Differ, seed: int, tmp_path: Path) -> None:
    sc = generate(seed)
    o = run_one(differ, sc, tmp_path, "1.34", shrink_runs=80, shrink_seconds=180)
    assert o.error is None, o.error
    assert not o.differences, (f"{sc.name} ({sc.notes}): " + "; ".join(o.differences[:10])
                               + (f"\nshrunk to {o.shrunk_size}: {o.shrunk}" if o.shrunk else ""))
