"""Explaining a pod never changes what the simulation does: the observer only reads (its extra
filter passes, information scores and remediation run on copies)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.scheduler.explain import PodExplainer

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "planning"
CASES = ["pending.yaml", "burst.yaml", "constrained.yaml", "odd.yaml"]


def outcomes(run):
    return ([(o.pod.key, o.status, o.node, o.message, o.attempts) for o in run.result.pods],
            [(e.pod.key, e.node, e.preemptor.key) for e in run.result.preempted])


@pytest.mark.parametrize("manifest", CASES)
@pytest.mark.parametrize("tie_break", [TieBreak.lowest_name, TieBreak.random])
def test_a_run_with_an_explainer_equals_a_run_without(manifest, tie_break):
    loaded = load_inputs([str(FIX / "cluster.yaml")], [str(FIX / manifest)])
    planner = open_planner(loaded, None, seed=3, tie_break=tie_break)
    plain = outcomes(planner.simulate())
    for pod in loaded.inputs.pending:
        assert outcomes(planner.simulate(observer=PodExplainer(pod.uid))) == plain, pod.key
