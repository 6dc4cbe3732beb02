"""DRA in the planning commands: clones get the template node's ResourceSlices (whatif --add-node,
--until-fit, sweep's node axes), on the shipped DRA fixtures and on slices of every kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from kplan.cli.options import TieBreak
from kplan.cli.workspace import load_inputs, open_planner
from kplan.model.dra import ResourceSlice
from kplan.model.parse_dra import parse_resource_slice
from kplan.scheduler.pod_status import PodStatus
from kplan.whatif.changes import CloneNode, apply_changes, clone_node, clone_slices
from kplan.whatif.sweep import AxisStep, NodeAxis, SweepPlan
from tests.builders import make_node

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = [str(ROOT / "fixtures/dra/cluster.yaml")]
SERVE = str(ROOT / "fixtures/dra/serve.yaml")
LATE = "ml/llm-serve-bf86849c9-n27v4"  # the replica no node has devices left for


def planner():
    loaded = load_inputs(CLUSTER, [SERVE], progress=False)
    return open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name)


def status(result, key: str) -> tuple[str, str | None]:
    o = result.outcome(*key.split("/"))
    return o.status, o.node


def test_the_fourth_replica_fits_only_on_a_node_added_like_a_gpu_node():
    p = planner()
    assert status(p.simulate().result, LATE)[0] != PodStatus.SCHEDULED
    w = p.whatif([CloneNode("gpu-2")])
    placed = {o.pod.key: o.node for o in w.after.result.pods}
    assert all(o.status == PodStatus.SCHEDULED for o in w.after.result.pods)
    assert "gpu-2-whatif-1" in placed.values()
    slices = [s for s in w.after.inputs.dra if isinstance(s, ResourceSlice) and s.node_name == "gpu-2-whatif-1"]
    assert [(s.name, s.pool, len(s.devices)) for s in slices] == [("gpu-2-whatif-1-gpu.example.com-q9d4m",
                                                                   "gpu-2-whatif-1", 4)]
    assert not any(isinstance(s, ResourceSlice) and "whatif" in s.name for s in p.inputs.dra), "inputs untouched"


def test_a_node_like_one_without_devices_does_not_help():
    w = planner().whatif([CloneNode("cpu-1", 3)])
    assert status(w.after.result, LATE)[0] != PodStatus.SCHEDULED


def test_until_fit_adds_one_gpu_node_and_says_cpu_nodes_never_help():
    p = planner()
    fit = p.whatif([], until_fit="gpu-2", limit=8).until_fit
    assert fit is not None and fit.count == 1
    none = p.whatif([], until_fit="cpu-1", limit=8).until_fit
    assert none is not None and none.count is None
    assert f"{LATE} (DynamicResources: cannot allocate all claims)" in none.reason


def test_a_sweep_node_axis_point_clones_the_slices_too():
    p = planner()
    plan = SweepPlan((NodeAxis("gpu-2", (0, 1)),), (AxisStep(0),))
    for value, fits in ((0, False), (1, True)):
        changed, _ = p.changed(plan.changes((value,), lambda spec: pytest.fail(spec)))
        run = p.simulate(changed)
        assert (status(run.result, LATE)[0] == PodStatus.SCHEDULED) is fits


def slice_doc(name: str, **spec: object) -> ResourceSlice:
    return parse_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
                                 "spec": {"driver": "gpu.example.com", "pool": {"name": spec.pop("pool", "p"),
                                                                                "generation": 1},
                                          "devices": [{"name": "gpu-0"}], **spec}})


def hostname_selector(*names: str) -> dict[str, object]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                         "values": list(names)}]}]}


CLONE_CASES = [
    ("a slice of the node is copied for the clone, pool named after it",
     slice_doc("n1-gpus", nodeName="n1", pool="n1"), [("n1-whatif-1-gpus", "n1-whatif-1", "n1-whatif-1")]),
    ("a pool name without the node's name gets the clone's as a prefix",
     slice_doc("gpus-abc", nodeName="n1", pool="gpus"), [("n1-whatif-1-gpus-abc", "n1-whatif-1-gpus", "n1-whatif-1")]),
    ("another node's slice is not copied", slice_doc("n2-gpus", nodeName="n2", pool="n2"), []),
    ("a slice for all nodes already reaches the clone", slice_doc("shared", allNodes=True), []),
    ("a slice selecting the zone already reaches the clone",
     slice_doc("zone", nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
         {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}), []),
    ("a slice selecting the node by hostname is copied with the clone's hostname",
     slice_doc("n1-nics", nodeSelector=hostname_selector("n1"), pool="n1"),
     [("n1-whatif-1-nics", "n1-whatif-1", "")]),
]


@pytest.mark.parametrize(("given", "want"), [c[1:] for c in CLONE_CASES], ids=[c[0] for c in CLONE_CASES])
def test_clone_slices(given: ResourceSlice, want: list[tuple[str, str, str]]) -> None:
    template = make_node("n1").labels(**{"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "a"}).build()
    clone = clone_node(template, "n1-whatif-1")
    got = clone_slices([given], template, clone)
    assert [(s.name, s.pool, s.node_name) for s in got] == want
    for s in got:
        assert s.devices == given.devices
        if s.node_selector is not None:
            assert s.node_selector.matches(clone.name, clone.labels)
            assert not s.node_selector.matches(template.name, template.labels)


def test_every_clone_of_a_count_gets_its_own_pool():
    inputs = load_inputs(CLUSTER, [SERVE], progress=False).inputs
    out, applied = apply_changes(inputs, [CloneNode("gpu-1", 3)])
    pools = sorted(s.pool for s in out.dra if isinstance(s, ResourceSlice) and "whatif" in s.pool)
    assert pools == ["gpu-1-whatif-1", "gpu-1-whatif-2", "gpu-1-whatif-3"] == applied.added_nodes


def test_capacity_gives_each_replica_its_own_claim_from_the_template(tmp_path: Path) -> None:
    import yaml

    from kplan.io.manifests import load_objects
    from kplan.io.replicas import replica_factory

    docs = list(yaml.safe_load_all(Path(SERVE).read_text()))
    deployment = docs[1]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "serve", "namespace": "ml"},
           "spec": deployment["spec"]["template"]["spec"]}
    manifest = tmp_path / "serve-pod.yaml"
    manifest.write_text(yaml.safe_dump_all([docs[0], pod]))
    loaded = load_inputs(CLUSTER, [str(manifest)], progress=False)
    target = [o for o in load_objects([str(manifest)]) if o.doc["kind"] == "Pod"][0]
    loaded.inputs.pending = [p for p in loaded.inputs.pending if p.name != "serve"]  # count replicas only
    _, replica, _ = replica_factory(loaded.inputs, target, seed=0)
    assert replica is not None
    out = open_planner(loaded, None, seed=0, tie_break=TieBreak.lowest_name).capacity(replica, 100)
    # two H100s on one PCIe root: gpu-1 has one such pair left, gpu-2 two
    assert (out.replicas, out.placements) == (3, {"gpu-1": 1, "gpu-2": 2})
    assert out.failed is not None and out.failed.message.startswith("0/5 nodes are available: 5 cannot allocate all "
                                                                    "claims.")
    assert out.result is not None
    dra = out.result.snapshot.dra
    assert dra is not None
    claims = {c.owner_uid: c for c in dra.claims.values() if c.owner_uid.endswith(tuple(f"-capacity-{k}"
                                                                                         for k in range(1, 5)))}
    assert len(claims) == 4, "one claim per replica, the one that did not fit included"
    assert all(c.name.startswith("serve-capacity-") and "-gpus-" in c.name for c in claims.values())
    allocated = [c for c in claims.values() if c.allocation is not None]
    devices = [r.device_id for c in allocated for r in c.allocation.results]
    assert len(allocated) == 3 and len(devices) == 6 == len(set(devices))


def _template_claims(seed: int, sweep_seed: int | None = None) -> list[str]:
    loaded = load_inputs(CLUSTER, [SERVE], progress=False)
    run = open_planner(loaded, None, seed=seed, tie_break=TieBreak.lowest_name).simulate(seed=sweep_seed)
    dra = run.result.snapshot.dra
    assert dra is not None
    return sorted(key for key in dra.claims if "llm-serve" in key)


def test_the_claims_made_from_templates_are_named_by_the_run_s_seed() -> None:
    """--seed names the pending pods' claims as it names their pods (the planner built them with
    seed 0 whatever --seed said); seed 0 keeps its names, and a sweep's per-point seed wins."""
    zero, seven = _template_claims(0), _template_claims(7)
    assert zero and len(zero) == len(seven) and set(zero).isdisjoint(seven)
    assert _template_claims(0) == zero and _template_claims(0, sweep_seed=7) == seven
