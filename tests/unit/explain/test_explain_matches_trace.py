"""explain reports what kube-scheduler itself computed: checked against the real scheduler's
attempt-by-attempt traces of the conformance scenarios (found by tests/conformance/locate.py;
skipped when they are not present, failed when KPLAN_CONFORMANCE names a missing folder).

The traces retry a pod right after its own preemption, while kplan follows the real queue
(reference section 12), so attempts are compared in order up to the first retry, where both
have seen exactly the same cluster.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.errors import UnsupportedError
from kplan.scheduler.explain import NodeExplanation, PodExplainer, explain_nodes
from tests.conformance.locate import location, present, require

ROOT = location()
FAMILIES = ("resources", "placement", "config", "images", "priority", "preemption", "affinity", "spread", "owners",
            "mixed")
SCENARIOS = sorted(d for d in ROOT.glob("*-*") if (d / "expected-trace.json").exists()
                   and d.name.split("-")[0] in FAMILIES) if present() else []


def differences(trace: dict[str, Any], nodes: dict[str, NodeExplanation], message: str | None,
                preemption: Any) -> list[str]:
    out = []
    for name, f in trace["filter"].items():
        n = nodes[name]
        if f["code"] == "NotEvaluated":
            if n.examined:
                out.append(f"{name}: examined, the trace says not evaluated")
        elif f["code"] == "Success":
            if not n.feasible:
                out.append(f"{name}: not feasible")
        else:
            s = n.status
            got = (s.code.upstream, s.plugin, list(s.reasons)) if s else None
            if got != (f["code"], f.get("plugin", ""), f.get("reasons", [])):
                out.append(f"{name}: first failure {got}, trace {f}")
    for name, sc in (trace.get("scores") or {}).items():
        n = nodes[name]
        got = {p: (n.scores[p].weighted if n.scores and p in n.scores else None) for p in sc["plugins"]}
        if got != sc["plugins"] or n.total != sc["total"]:
            out.append(f"{name}: scores {got} total {n.total}, trace {sc}")
    if trace.get("fit_error") and not (message or "").startswith(trace["fit_error"]):
        out.append(f"message {message!r}, trace fit error {trace['fit_error']!r}")
    post = trace.get("postfilter")
    if post and post.get("candidates") is not None and preemption is not None:
        want = {c["node"]: (sorted(c["victims"]), c["num_pdb_violations"]) for c in post["candidates"]}
        got = {c.node: (sorted(v.key for v in c.victims), c.pdb_violations) for c in preemption.candidates}
        if got != want:
            out.append(f"preemption candidates {got}, trace {want}")
        if (preemption.nominated_node or None) != (post.get("nominated_node") or None):
            out.append(f"nominated {preemption.nominated_node!r}, trace {post.get('nominated_node')!r}")
    return out


# without the suite, one case that skips (or fails when the suite is required) stands in for them
@pytest.mark.parametrize("scenario", SCENARIOS or [None], ids=[d.name for d in SCENARIOS] or ["conformance suite"])
def test_explained_attempts_match_the_real_schedulers_trace(scenario: Path | None) -> None:
    require()
    assert scenario is not None, f"no scenario with an expected-trace.json in {ROOT}"
    trace = json.loads((scenario / "expected-trace.json").read_text())
    loaded = load_inputs([str(scenario / "cluster.yaml")], [str(scenario / "pods.yaml")])
    inputs = loaded.inputs
    config = scenario / "scheduler-config.yaml"
    try:
        # the traces are kube-scheduler 1.34's: model that release, whatever the default is
        planner = open_planner(loaded, str(config) if config.exists() else None, seed=0,
                               tie_break=TieBreak.lowest_name, kube_version="1.34")
        explainers = {p.uid: PodExplainer(p.uid, remediation=False) for p in inputs.pending}
        cycles: list[tuple[str, int]] = []

        def observe(sim: Any, q: Any, r: Any) -> None:
            cycles.append((q.pod.key, q.attempts))
            explainers[q.pod.uid](sim, q, r)

        planner.simulate(observer=observe)
    except UnsupportedError as e:
        pytest.skip(str(e))
    uid = {p.key: p.uid for p in inputs.pending}
    compared = 0
    for i, t in enumerate(trace["attempts"]):
        if t["attempt"] != 1 or i >= len(cycles) or cycles[i] != (t["pod"], 1):
            break
        att = explainers[uid[t["pod"]]].attempts[0]
        nodes = {n.name: n for n in explain_nodes(att)}
        diffs = differences(t, nodes, att.result.message, att.result.preemption)
        assert not diffs, f"{t['pod']} attempt 1: " + "; ".join(diffs[:3])
        compared += 1
    assert compared > 0
