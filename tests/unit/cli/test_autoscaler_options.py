"""--autoscaler and --instance-types: usage errors are one line on stderr and exit code 2, before
or right after loading."""

from __future__ import annotations

import pytest

from tests.unit.cli.test_exit_codes import _project_root, run  # noqa: F401 (the fixture is used by name)

CLUSTER = "fixtures/cluster.yaml"
POOLS = "fixtures/karpenter/nodepools.yaml"
CATALOG = "fixtures/karpenter/instance-types.json"

CASES = [
    ("karpenter without a catalog", ["simulate", "fixtures/manifests", "-c", CLUSTER, "-c", POOLS,
                                     "--autoscaler", "karpenter"],
     "--autoscaler karpenter needs the instance types it may launch"),
    ("an autoscaler kplan does not model", ["simulate", "-c", CLUSTER, "--autoscaler", "cluster-autoscaler",
                                            "--instance-types", CATALOG],
     "--autoscaler cluster-autoscaler: kplan models karpenter"),
    ("a catalog without an autoscaler", ["whatif", "-c", CLUSTER, "--instance-types", CATALOG],
     "--instance-types goes with --autoscaler karpenter"),
    ("karpenter without NodePools", ["simulate", "fixtures/manifests", "-c", CLUSTER, "--autoscaler", "karpenter",
                                     "--instance-types", CATALOG],
     "--autoscaler karpenter: the inputs hold no NodePool"),
    ("karpenter with --until-fit", ["whatif", "-c", CLUSTER, "--until-fit", "like=gen-a-1", "--autoscaler",
                                    "karpenter", "--instance-types", CATALOG],
     "--autoscaler goes with neither --until-fit nor --shrink"),
    ("a catalog that is no file", ["simulate", "-c", CLUSTER, "-c", POOLS, "--autoscaler", "karpenter",
                                   "--instance-types", "no-such-catalog.json"], "no-such-catalog.json"),
]


@pytest.mark.parametrize(("args", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_usage_error_is_one_line_and_exit_code_2(capsys: pytest.CaptureFixture[str], args: list[str],
                                                     words: str) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0], err
