"""kplan against Karpenter (the oracle) on a seeded sample of generated scenarios.

Needs oracle/bin/karpenter-oracle; KPLAN_KARPENTER_ORACLE makes it required (conftest.py). The
differing scenario's files stay in pytest's temporary folder, named in the failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fidelity.karpenter.differential import run_seed

#: 20 consecutive seeds of the generator (features as they fall)
SAMPLE = range(5001, 5021)


@pytest.mark.parametrize("seed", SAMPLE, ids=[f"generated scenario {s} agrees with Karpenter" for s in SAMPLE])
def test_sample_agrees_with_karpenter(seed: int, tmp_path: Path, karpenter_oracle: Path) -> None:
    o = run_seed(seed, karpenter_oracle, tmp_path)
    assert o.error is None, o.error
    assert not o.differences, f"{tmp_path}/karpenter-{seed}: " + "; ".join(o.differences[:10])
