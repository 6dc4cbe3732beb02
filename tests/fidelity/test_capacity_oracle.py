"""``kplan capacity`` of a StatefulSet with volumeClaimTemplates against the real scheduler
(tests/fidelity/capacity/<case>/, README.md there).

The oracle knows no StatefulSet controller, so its input (``pods.yaml``) is the controller's work
written out: the StatefulSet, then for each ordinal the claims it creates and the pod, as kplan's
expansion makes them (checked here). The oracle's result (``expected.json``) places the first
pods and fails one: kplan's count, the nodes of the extra replicas and the message of the one
that does not fit must be the oracle's. The oracle is run when ``KPLAN_ORACLE`` names the 1.34
build (or oracle/bin holds it).
"""

from __future__ import annotations

import copy
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from kplan.workloads import expand
from tests.fidelity.runners import _kplan_in_process, oracle_path, run_oracle
from tests.fidelity.scenario import compare, dump_docs, load_docs

HERE = Path(__file__).resolve().parent / "capacity"
CASES = sorted(d for d in HERE.iterdir() if (d / "expected.json").is_file())
RELEASE = "1.34"


def oracle_input(case: Path, count: int) -> list[dict[str, Any]]:
    """The StatefulSet, then for ordinals 0…count-1 the claims its controller creates (those not in
    cluster.yaml) and the pod: what a StatefulSet of ``count`` replicas makes, in creation order."""
    sts = yaml.safe_load((case / "statefulset.yaml").read_text())
    existing = {(d["metadata"].get("namespace", "default"), d["metadata"]["name"])
                for d in load_docs((case / "cluster.yaml").read_text())[0]["items"]
                if d["kind"] == "PersistentVolumeClaim"}
    scaled = copy.deepcopy(sts)
    scaled["spec"]["replicas"] = count
    exp = expand(scaled, "statefulset.yaml", seed=0)
    ns = sts["metadata"].get("namespace", "default")
    sts["metadata"]["uid"] = exp.uid
    out: list[dict[str, Any]] = [sts]
    for pod in exp.pods:
        claims = {v["persistentVolumeClaim"]["claimName"] for v in pod["spec"].get("volumes", [])
                  if "persistentVolumeClaim" in v}
        out += [c for c in exp.claims if c["metadata"]["name"] in claims and (ns, c["metadata"]["name"]) not in existing]
        pod = copy.deepcopy(pod)
        pod["metadata"].pop("uid", None)  # the oracle gives pods theirs
        out.append(pod)
    return out


def expected(case: Path) -> dict[str, Any]:
    return dict(json.loads((case / "expected.json").read_text()))


@pytest.mark.parametrize("case", CASES, ids=[f"the oracle's input is the controller's pods and claims: {d.name}"
                                             for d in CASES])
def test_the_oracle_input_is_what_the_controller_creates(case: Path) -> None:
    want = dump_docs(oracle_input(case, len(expected(case)["pods"])))
    if os.environ.get("KPLAN_UPDATE_ORACLE_INPUT") == "1":
        (case / "pods.yaml").write_text(want)
    assert (case / "pods.yaml").read_text() == want


@pytest.mark.parametrize("case", CASES, ids=[f"kplan counts the replicas the real scheduler places: {d.name}"
                                             for d in CASES])
def test_kplan_counts_what_the_real_scheduler_places(case: Path) -> None:
    out, err, code = _kplan_in_process([
        "capacity", str(case / "statefulset.yaml"), "--cluster", str(case / "cluster.yaml"),
        "--scheduler-config", str(case / "scheduler-config.yaml"), "--tie-break", "lowest-name",
        "--kube-version", RELEASE, "-o", "json", "-q"])
    assert code == 0, err
    doc = json.loads(out)
    pods = expected(case)["pods"]
    placed = [p for p in pods if p["status"] == "Scheduled"]
    # the real scheduler places the first ones and fails the next: the count's question
    assert pods[:len(placed)] == placed and len(pods) == len(placed) + 1
    declared = doc["declared"]["replicas"]
    assert doc["declared"]["fit"] == declared
    assert doc["replicas"] == len(placed) - declared
    assert doc["placements"] == dict(sorted(Counter(p["node"] for p in placed[declared:]).items()))
    assert doc["message"] == pods[-1]["message"]


@pytest.mark.parametrize("case", CASES, ids=[f"the {RELEASE} oracle confirms {d.name}" for d in CASES])
def test_the_oracle_confirms_the_expected_result(case: Path) -> None:
    configured = os.environ.get("KPLAN_ORACLE")
    binary = Path(configured) if configured else oracle_path(RELEASE)
    if not binary.is_file():
        pytest.skip(f"no oracle at {binary}")
    assert compare(expected(case), run_oracle(case, binary)) == []
