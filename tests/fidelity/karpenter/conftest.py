"""The Karpenter oracle for the tests of this folder: KPLAN_KARPENTER_ORACLE names it and makes it
required (a missing binary fails instead of skipping, so CI that sets it cannot go green without
the oracle); without it, oracle/bin/karpenter-oracle is used when it is built, and the tests
that need it skip otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fidelity.karpenter.oracle import VARIABLE, configured, oracle_path


@pytest.fixture(scope="session")
def karpenter_oracle() -> Path:
    path = oracle_path()
    if not path.is_file():
        if configured():
            pytest.fail(f"{VARIABLE}={configured()}: no Karpenter oracle at {path} (oracle/karpenter/build.sh)")
        pytest.skip(f"no Karpenter oracle at {path}; build it with oracle/karpenter/build.sh "
                    f"(set {VARIABLE} to require it)")
    return path
