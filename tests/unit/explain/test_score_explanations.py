"""kplan explain shows the explanation lines of kplan's own score plugins (ScoreExplainer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins: {multiPoint: {enabled: [{name: PodCount, weight: 2}]}}
"""


def explain(tmp_path: Path, *config: str) -> dict:  # type: ignore[type-arg]
    args = [sys.executable, "-m", "kplan", "explain", "pod", "shop/web-canary", "fixtures/manifests",
            "--cluster", "fixtures/cluster.yaml", "--tie-break", "lowest-name", "-o", "json", *config]
    run = subprocess.run(args, cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def test_an_enabled_explaining_plugin_says_why_it_scored_each_node(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    doc = explain(tmp_path, "--scheduler-config", str(cfg))
    scored = [n for n in doc["nodes"] if n["scores"]]
    assert scored
    for n in scored:
        pod_count = n["scores"]["PodCount"]
        assert pod_count["explanation"].startswith(f"{pod_count['normalized']}: ")
        assert "allowed pods running" in pod_count["explanation"]


def test_upstream_plugins_carry_no_explanation(tmp_path: Path) -> None:
    doc = explain(tmp_path)
    for n in doc["nodes"]:
        for score in (n["scores"] or {}).values():
            assert "explanation" not in score
