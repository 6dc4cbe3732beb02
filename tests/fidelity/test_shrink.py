"""The shrinker and the differential runner's plumbing, without the oracle: a property that
holds of a few objects is shrunk to exactly those, and a "difference" planted in kplan's own
result is found, shrunk while it stays, and written out as a reproduction."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fidelity.differential import Differ, run_one, signature
from tests.fidelity.generate import generate
from tests.fidelity.runners import run_kplan
from tests.fidelity.scenario import Doc, Scenario, compare
from tests.fidelity.shrink import shrink, without_nodes, without_running


def kinds(sc: Scenario) -> list[str]:
    return sorted(d["kind"] for d in sc.cluster)


def tainted_nodes(sc: Scenario) -> list[Doc]:
    return [d for d in sc.cluster if d["kind"] == "Node" and d.get("spec", {}).get("taints")]


def tolerating(sc: Scenario) -> list[Doc]:
    return [p for p in sc.pods if p["spec"].get("tolerations")]


def test_a_property_of_one_node_and_one_pod_shrinks_to_them() -> None:
    sc = generate(4)       # 5 nodes, 29 pending pods, taints and tolerations among them
    assert tainted_nodes(sc) and tolerating(sc)

    def holds(s: Scenario) -> bool:
        return bool(tainted_nodes(s)) and bool(tolerating(s))
    small, runs = shrink(sc, holds)
    assert holds(small)
    assert len(small.pods) == 1 and [d["kind"] for d in small.cluster if d["kind"] == "Node"] == ["Node"]
    assert not any(d["kind"] == "Pod" for d in small.cluster)
    # every field the property does not need is gone
    assert set(small.pods[0]["spec"]) == {"containers", "tolerations"}
    node = tainted_nodes(small)[0]
    assert set(node["metadata"]["labels"]) == {"kubernetes.io/hostname"}
    assert runs < 400


def test_taking_out_a_node_takes_what_exists_for_it() -> None:
    sc = generate(1, nodes=4, features=("storage", "dra"))
    node = "node-00000"
    out = without_nodes(sc, {node})
    for d in out.cluster:
        assert d["metadata"]["name"] != node or d["kind"] == "Namespace"
        assert d.get("spec", {}).get("nodeName") != node
    claims = {d["metadata"]["name"] for d in out.cluster if d["kind"] == "ResourceClaim"}
    running = {d["metadata"]["name"] for d in out.cluster if d["kind"] == "Pod"}
    for d in out.cluster:
        if d["kind"] == "ResourceClaim":
            for r in d.get("status", {}).get("reservedFor", []):
                assert r["name"] in running, (d["metadata"]["name"], claims)


def test_taking_out_a_running_pod_drops_its_claims() -> None:
    sc = generate(7, nodes=6, features=("dra",))
    owned = [d for d in sc.cluster if d["kind"] == "ResourceClaim" and d["metadata"].get("ownerReferences")]
    assert owned
    owner = owned[0]["metadata"]["ownerReferences"][0]["name"]
    out = without_running(sc, {f"default/{owner}"})
    assert owned[0]["metadata"]["name"] not in {d["metadata"]["name"] for d in out.cluster}


class PlantedDifference(Differ):
    """kplan against kplan, where the "oracle" moves every pending pod with a toleration to another node."""

    def results(self, sc: Scenario) -> tuple[Doc, Doc, float, float]:
        self.runs += 1
        folder = sc.write(self.scratch / f"{sc.name}-{self.runs}")
        got = run_kplan(folder)
        want = json.loads(json.dumps(got))
        tolerant = {p["metadata"]["name"] for p in tolerating(sc)}
        for p in want["pods"]:
            if p["name"] in tolerant and p["status"] == "Scheduled":
                p["node"] = "node-elsewhere"
        return want, got, 0.0, 0.0


def test_a_planted_difference_is_found_shrunk_and_written(tmp_path: Path) -> None:
    sc = generate(11, nodes=4, features=("placement",))
    differ = PlantedDifference(Path("unused"), None, 60)
    o = run_one(differ, sc, tmp_path, "test", shrink_runs=150, shrink_seconds=120)
    assert o.differences and o.shrunk is not None
    assert all(": node:" in d for d in o.differences)
    repro = Scenario.read(o.shrunk)
    assert len(repro.pods) == 1 and tolerating(repro)
    assert sum(1 for d in repro.cluster if d["kind"] == "Node") == 1
    want = json.loads((o.shrunk / "expected.json").read_text())
    got = json.loads((o.shrunk / "kplan.json").read_text())
    assert signature(compare(want, got)) == {f"default/{repro.pods[0]['metadata']['name']}: node"}
    assert (o.shrunk / "differences.txt").read_text().strip()


def test_taint_reasons_merge_as_later_patch_releases_print_them() -> None:
    from tests.fidelity.scenario import without_taint_names
    kplan = ("0/9 nodes are available: 1 node(s) had untolerated taint {dedicated: ml}, 1 node(s) were unschedulable, "
             "2 Insufficient example.com/gpu, 2 node(s) had untolerated taint {nvidia.com/gpu: present}. still not "
             "schedulable, preemption: 0/9 nodes are available: 1 node(s) had untolerated taint {maintenance: }, "
             "8 Preemption is not helpful for scheduling.")
    oracle = ("0/9 nodes are available: 1 node(s) were unschedulable, 2 Insufficient example.com/gpu, 3 node(s) had "
              "untolerated taint(s). still not schedulable, preemption: 0/9 nodes are available: 1 node(s) had "
              "untolerated taint(s), 8 Preemption is not helpful for scheduling.")
    doc = {"pods": [{"name": "p", "message": kplan}], "preempted": []}
    assert without_taint_names(doc)["pods"][0]["message"] == oracle
