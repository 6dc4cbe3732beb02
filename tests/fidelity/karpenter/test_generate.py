"""The generator of random Karpenter scenarios: a pure function of the seed, whose files both
kplan and the oracle read; the oracle answers the same way every time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fidelity.karpenter.generate import generate, write
from tests.fidelity.karpenter.oracle import run_oracle

SEEDS = range(1, 9)


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed {s} gives the same files twice" for s in SEEDS])
def test_same_seed_same_files(seed: int) -> None:
    assert generate(seed) == generate(seed)


def test_seeds_give_different_scenarios() -> None:
    assert len({json.dumps(generate(s), sort_keys=True) for s in SEEDS}) == len(SEEDS)


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed {s}'s files are read by kplan" for s in SEEDS])
def test_kplan_reads_the_files(seed: int, tmp_path: Path) -> None:
    from kplan.cli.common import cluster_objects
    from kplan.io.catalog import read_catalog
    from kplan.io.workspace import load_workspace
    from tests.fidelity.karpenter.oracle import CATALOG, object_files

    folder = write(seed, tmp_path)
    objects, _, _ = cluster_objects([str(f) for f in object_files(folder)], progress=False)
    inputs = load_workspace(objects, []).inputs
    assert inputs.pending and inputs.node_pools
    assert read_catalog(str(folder / CATALOG)).instance_types


DETERMINISM = range(1, 6)


@pytest.mark.parametrize("seed", DETERMINISM, ids=[f"the oracle answers seed {s} the same way twice"
                                                   for s in DETERMINISM])
def test_oracle_is_deterministic(seed: int, tmp_path: Path, karpenter_oracle: Path) -> None:
    folder = write(seed, tmp_path)
    assert run_oracle(karpenter_oracle, folder) == run_oracle(karpenter_oracle, folder)
