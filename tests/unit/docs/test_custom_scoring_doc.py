"""The "Custom scoring" page (docs/custom-scoring.md) shows real kplan output: its commands still give its placements,
its configuration is the fixture and the scores it quotes are those of the runs. (The whole output of
its console blocks is also compared by test_readme.py.)"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "custom-scoring.md"


def section() -> str:
    """The page on custom scoring."""
    return PAGE.read_text()


def console_blocks() -> list[tuple[list[str], dict[str, str]]]:
    """(kplan arguments, pod → node of the printed table) of every console block."""
    out = []
    for block in re.findall(r"```console\n(.*?)```", section(), re.S):
        lines = block.replace("\\\n", "").splitlines()
        args = shlex.split(lines[0].removeprefix("$ kplan "))
        placements = {}
        for line in lines[2:]:
            if not line.strip():
                break
            pod, node, *_ = line.split()
            placements[pod] = node
        out.append((args, placements))
    return out


@pytest.mark.parametrize("args,placements", console_blocks(), ids=["default scoring", "with the four plugins"])
def test_the_documented_placements_are_what_kplan_does(args: list[str], placements: dict[str, str]) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-m", "kplan", *args, "-o", "json"], cwd=ROOT, capture_output=True,
                         text=True, env=env, check=False)
    assert run.returncode == 0, run.stderr
    got = {f"{p['namespace']}/{p['name']}": p["node"] for p in json.loads(run.stdout)["pods"]}
    assert got == placements


def test_the_documented_config_is_the_fixture() -> None:
    yaml = YAML(typ="safe")
    shown = re.search(r"```yaml\n(apiVersion: kubescheduler.*?)```", section(), re.S)
    assert shown is not None
    fixture = ROOT / "fixtures" / "scheduler-configs" / "custom-scoring.yaml"
    assert yaml.load(shown.group(1)) == yaml.load(fixture.read_text())


def test_the_scores_quoted_in_what_changed() -> None:
    from tests.builders import simulate_files

    result = simulate_files([str(ROOT / "fixtures/custom-scoring/cluster.yaml")],
                            [str(ROOT / "fixtures/custom-scoring/pods.yaml")],
                            str(ROOT / "fixtures/scheduler-configs/custom-scoring.yaml"),
                            keep_cycles=True)
    table = result.snapshot.table

    def cycle(name: str) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
        (r,) = result.cycles[f"shop/{name}"]
        assert r.feasible_rows is not None and r.totals is not None and r.scores is not None
        names = [table.names[i] for i in r.feasible_rows]
        totals = dict(zip(names, r.totals.tolist(), strict=True))
        plugins = {p: dict(zip(names, norm.tolist(), strict=True)) for p, (_, norm) in r.scores.items()}
        return totals, plugins

    totals, plugins = cycle("web-0")
    assert (totals["node-b1"], totals["edge-1"]) == (1055, 563)
    assert (plugins["NodeResourcesFit"]["edge-1"], plugins["NodeResourcesFit"]["node-b1"]) == (90, 82)
    assert plugins["NetworkLatency"] == {"node-a1": 100, "node-a2": 100, "node-b1": 100, "node-b2": 100,
                                         "node-c1": 0, "edge-1": 0}
    totals, plugins = cycle("report-0")
    assert totals["node-b2"] == 648 and max(v for k, v in totals.items() if k != "node-b2") == 552
    assert plugins["ResourceLimits"] == {n: 100 if n == "node-b2" else 0 for n in totals}
    _, plugins = cycle("api-0")
    assert plugins["NetworkLatency"] == {"node-a1": 100, "node-a2": 100, "node-b1": 93, "node-b2": 93,
                                         "node-c1": 0, "edge-1": 0}
    totals, plugins = cycle("payments-0")
    assert (totals["node-b2"], totals["node-a2"], plugins["PriorityBoost"]["node-b2"]) == (719, 698, 83)
    assert plugins["PodCount"]["node-c1"] == 86
