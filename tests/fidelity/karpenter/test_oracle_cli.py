"""The Karpenter oracle's own failures: a bad command line, object file or catalog gives one line on
stderr naming the file (and object) and exit status 2, never a panic; `version` names the
Karpenter module it was built with."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.fidelity.karpenter.family import SCENARIOS

GOOD = SCENARIOS / "gpu-pod"
BAD_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n"
BAD_CATALOG = '[{"name": "x", "offerings": [{"Price": 1, "Requirements": [{"key": "a", "operator": "Bogus"}]}]}]'

CASES = [
    ("a missing object file", ["--cluster", "{tmp}/nope.yaml", "--instance-types", f"{GOOD}/catalog.json"], "nope.yaml"),
    ("no catalog", ["--cluster", f"{GOOD}/pending.yaml"], "--instance-types FILE is required"),
    ("a catalog with an unknown operator", ["--cluster", f"{GOOD}/pending.yaml", "--instance-types", "{tmp}/catalog.json"],
     'x: offerings[0]: requirement a: unknown operator "Bogus"'),
    ("a pod with a bad quantity", ["--cluster", "{tmp}/pod.yaml", "--instance-types", f"{GOOD}/catalog.json"],
     'pod.yaml: Pod "a": quantities must match'),
    ("broken YAML", ["--cluster", "{tmp}/broken.yaml", "--instance-types", f"{GOOD}/catalog.json"],
     "broken.yaml: document 1:"),
    ("an unknown option", ["--cluster", f"{GOOD}/pending.yaml", "--bogus"], "provision:"),
    ("an unknown preference policy", ["--cluster", f"{GOOD}/pending.yaml", "--instance-types", f"{GOOD}/catalog.json",
                                      "--preference-policy", "Sometimes"], "PREFERENCE_POLICY"),
]


@pytest.mark.parametrize(("case", "args", "message"), CASES, ids=[f"{c} is one line and exit status 2" for c, _, _ in CASES])
def test_bad_input(case: str, args: list[str], message: str, tmp_path: Path, karpenter_oracle: Path) -> None:
    (tmp_path / "pod.yaml").write_text(BAD_POD)
    (tmp_path / "catalog.json").write_text(BAD_CATALOG)
    (tmp_path / "broken.yaml").write_text("a: [\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = subprocess.run([str(karpenter_oracle), "provision", *argv], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr


def test_version_names_the_karpenter_module(karpenter_oracle: Path) -> None:
    out = subprocess.run([str(karpenter_oracle), "version"], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "karpenter-oracle (sigs.k8s.io/karpenter v1.15.0)"
