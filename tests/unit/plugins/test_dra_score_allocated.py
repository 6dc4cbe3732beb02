"""DynamicResources' Score pairs claims with allocations differently from 1.36 (v1.36.3/v1.37.2
computeScore): a claim already allocated brings its own allocation, the node's results serve the
claims to allocate in order; v1.35.4 paired them by position among all claims and failed when a
pod had an allocated claim besides one to allocate."""

from __future__ import annotations

import pytest

from kplan.model.dra import Allocation, ClaimSpec, DeviceResult, ResourceClaim
from kplan.plugins.dynamicresources import ScoreError, allocations_by_position, allocations_own_first

OWN = Allocation((DeviceResult("gpu/a100", "d", "p", "dev-0"),))
NEW = Allocation((DeviceResult("gpu/h100", "d", "p", "dev-1"),))


def claim(name: str, allocation: Allocation | None = None) -> ResourceClaim:
    return ResourceClaim("default", name, name, ClaimSpec(), allocation)


def test_1_36_scores_an_allocated_claim_by_its_own_allocation() -> None:
    pairs = allocations_own_first([claim("shared", OWN), claim("mine")], [NEW])
    assert pairs == [OWN, NEW]


def test_1_35_pairs_by_position_and_fails_when_results_run_out() -> None:
    with pytest.raises(ScoreError, match="smaller than number of claims"):
        allocations_by_position([claim("shared", OWN), claim("mine")], [NEW])


def test_1_36_fails_when_the_claims_to_allocate_outnumber_the_results() -> None:
    with pytest.raises(ScoreError, match="needing allocation"):
        allocations_own_first([claim("a"), claim("b")], [NEW])
