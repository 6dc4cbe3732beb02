"""The scenario generator: deterministic per seed, every conformance feature, 3 to 500 nodes,
objects the API server would accept and kplan loads without a word."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.fidelity.generate import FEATURES, generate
from tests.fidelity.runners import _kplan_in_process, kplan_args
from tests.fidelity.scenario import Doc, Scenario, dump_docs

DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
SEEDS = range(1, 61)


def files(sc: Scenario) -> str:
    return dump_docs(sc.cluster) + dump_docs(sc.pods) + dump_docs([sc.config])


def test_the_same_seed_gives_the_same_files() -> None:
    assert files(generate(17)) == files(generate(17))
    assert files(generate(17, nodes=40, features=("storage", "dra"))) == files(generate(17, nodes=40, features=("storage", "dra")))


def test_other_seeds_give_other_scenarios() -> None:
    assert len({files(generate(s)) for s in range(1, 11)}) == 10


def test_sizes_range_from_3_to_500_nodes() -> None:
    sizes = [generate(s).notes["nodes"] for s in range(1, 201)]
    assert min(sizes) >= 3 and max(sizes) <= 500
    assert min(sizes) <= 4 and max(sizes) > 150
    assert sum(1 for d in generate(7, nodes=500).cluster if d["kind"] == "Node") == 500


def kinds_and_features(sc: Scenario) -> set[str]:
    out = {d["kind"] for d in sc.cluster}
    for p in sc.pods + [d for d in sc.cluster if d["kind"] == "Pod"]:
        spec = p["spec"]
        out |= {f"pod.{k}" for k in spec}
        out |= {f"affinity.{k}" for k in spec.get("affinity", {})}
        for c in spec.get("initContainers", []):
            out.add("sidecar" if c.get("restartPolicy") == "Always" else "init")
        for c in spec["containers"]:
            out |= {f"request.{r}" for r in c.get("resources", {}).get("requests", {})}
            if c.get("ports"):
                out.add("hostPort")
        for v in spec.get("volumes", []):
            out.add("ephemeral" if "ephemeral" in v else "pvc")
        for t in spec.get("topologySpreadConstraints", []):
            out |= {f"spread.{k}" for k in t}
    for n in (d for d in sc.cluster if d["kind"] == "Node"):
        out |= {f"node.{k}" for k in n.get("spec", {})}
        if n["status"].get("images"):
            out.add("node.images")
    for pc in (d for d in sc.cluster if d["kind"] == "PriorityClass"):
        out |= {f"class.{k}" for k in pc if k in ("preemptionPolicy", "globalDefault")}
    if sc.config["profiles"][0].keys() - {"schedulerName"}:
        out.add("config.profile")
    if "parallelism" in sc.config:
        out.add("config.sampling")
    return out


def test_the_seeds_cover_every_feature_the_conformance_families_use() -> None:
    seen: set[str] = set()
    features: set[str] = set()
    for s in SEEDS:
        sc = generate(s)
        seen |= kinds_and_features(sc)
        features |= set(sc.notes["features"].split(","))
    assert features == set(FEATURES)
    wanted = {
        "Namespace", "Node", "Pod", "PriorityClass", "PodDisruptionBudget", "ReplicaSet", "Service",
        "DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim",
        "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSIDriver", "CSINode", "VolumeAttachment",
        "CSIStorageCapacity",
        "pod.initContainers", "init", "sidecar", "pod.overhead", "request.example.com/gpu", "request.ephemeral-storage",
        "pod.nodeSelector", "affinity.nodeAffinity", "affinity.podAffinity", "affinity.podAntiAffinity",
        "pod.tolerations", "hostPort", "pod.topologySpreadConstraints", "spread.minDomains", "spread.matchLabelKeys",
        "spread.nodeAffinityPolicy", "spread.nodeTaintsPolicy", "pod.priorityClassName", "class.preemptionPolicy",
        "class.globalDefault", "pod.resourceClaims", "pvc", "ephemeral", "node.taints", "node.unschedulable",
        "node.images", "config.profile", "config.sampling",
    }
    assert wanted - seen == set()


def quantity(q: str) -> float:
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    for u, f in units.items():
        if q.endswith(u):
            return float(q[: -len(u)]) * f
    return float(q)


def api_problems(sc: Scenario) -> list[str]:
    """What the API server (or a real cluster's controllers) would not have produced."""
    out: list[str] = []
    docs = sc.cluster + sc.pods
    names = Counter((d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in docs)
    out += [f"duplicate {k}" for k, n in names.items() if n > 1]
    out += [f"bad name {d['metadata']['name']}" for d in docs if not DNS1123.match(d["metadata"]["name"])]
    by_kind: dict[str, dict[str, Doc]] = {}
    for d in docs:
        by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
    nodes = by_kind.get("Node", {})
    used: dict[str, list[float]] = {}
    for p in docs:
        if p["kind"] != "Pod":
            continue
        spec, name = p["spec"], p["metadata"]["name"]
        for c in spec["containers"] + spec.get("initContainers", []):
            res = c.get("resources", {})
            for r, q in res.get("requests", {}).items():
                if "/" in r and res.get("limits", {}).get(r) != q:
                    out.append(f"{name}: extended resource {r} without an equal limit")
            if c.get("ports") and not all("containerPort" in port for port in c["ports"]):
                out.append(f"{name}: a port without containerPort")
        for t in spec.get("tolerations", []):
            if "tolerationSeconds" in t and t.get("effect") != "NoExecute":
                out.append(f"{name}: tolerationSeconds without NoExecute")
            if t.get("operator") == "Exists" and t.get("value"):
                out.append(f"{name}: Exists with a value")
        for t in spec.get("topologySpreadConstraints", []):
            if "minDomains" in t and t["whenUnsatisfiable"] != "DoNotSchedule":
                out.append(f"{name}: minDomains with ScheduleAnyway")
            if set(t.get("matchLabelKeys", [])) & set(t["labelSelector"].get("matchLabels", {})):
                out.append(f"{name}: matchLabelKeys overlaps the selector")
        for kind in ("podAffinity", "podAntiAffinity", "nodeAffinity"):
            for w in spec.get("affinity", {}).get(kind, {}).get("preferredDuringSchedulingIgnoredDuringExecution", []):
                if not 1 <= w["weight"] <= 100:
                    out.append(f"{name}: weight {w['weight']}")
        if spec.get("priorityClassName") and spec["priorityClassName"] not in by_kind.get("PriorityClass", {}):
            out.append(f"{name}: no PriorityClass {spec['priorityClassName']}")
        for v in spec.get("volumes", []):
            claim = v.get("persistentVolumeClaim", {}).get("claimName")
            if claim and claim not in by_kind.get("PersistentVolumeClaim", {}):
                out.append(f"{name}: no claim {claim}")
        for rc in spec.get("resourceClaims", []):
            if "resourceClaimTemplateName" in rc and rc["resourceClaimTemplateName"] not in by_kind.get("ResourceClaimTemplate", {}):
                out.append(f"{name}: no template {rc['resourceClaimTemplateName']}")
            if "resourceClaimName" in rc and rc["resourceClaimName"] not in by_kind.get("ResourceClaim", {}):
                out.append(f"{name}: no claim {rc['resourceClaimName']}")
        node = spec.get("nodeName")
        if node:
            if node not in nodes:
                out.append(f"{name}: on a missing node {node}")
                continue
            u = used.setdefault(node, [0.0, 0.0, 0.0])
            for c in spec["containers"]:
                req = c.get("resources", {}).get("requests", {})
                u[0] += quantity(req.get("cpu", "0"))
                u[1] += quantity(req.get("memory", "0"))
            u[2] += 1
    for node, (cpu, mem, pods) in used.items():
        alloc = nodes[node]["status"]["allocatable"]
        if cpu > quantity(alloc["cpu"]) or mem > quantity(alloc["memory"]) or pods > quantity(alloc["pods"]):
            out.append(f"running pods overcommit {node}")
    pvs, pvcs = by_kind.get("PersistentVolume", {}), by_kind.get("PersistentVolumeClaim", {})
    for c in pvcs.values():
        vol = c["spec"].get("volumeName")
        if vol and pvs[vol]["spec"].get("claimRef", {}).get("name") != c["metadata"]["name"]:
            out.append(f"claim {c['metadata']['name']} and volume {vol} do not name each other")
    for va in by_kind.get("VolumeAttachment", {}).values():
        if va["spec"]["source"]["persistentVolumeName"] not in pvs or va["spec"]["nodeName"] not in nodes:
            out.append(f"attachment {va['metadata']['name']} names a missing volume or node")
    taken: Counter[tuple[str, str]] = Counter()
    slices = {(s["spec"]["nodeName"], dev["name"]) for s in by_kind.get("ResourceSlice", {}).values() for dev in s["spec"]["devices"]}
    for claim in by_kind.get("ResourceClaim", {}).values():
        for r in claim.get("status", {}).get("allocation", {}).get("devices", {}).get("results", []):
            taken[(r["pool"], r["device"])] += 1
            if (r["pool"], r["device"]) not in slices:
                out.append(f"claim {claim['metadata']['name']} allocates a missing device")
    out += [f"device {k} allocated {n} times" for k, n in taken.items() if n > 1]
    for pdb in by_kind.get("PodDisruptionBudget", {}).values():
        st = pdb["status"]
        if st["disruptionsAllowed"] != max(0, st["currentHealthy"] - st["desiredHealthy"]):
            out.append(f"{pdb['metadata']['name']}: status does not add up")
    return out


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed {s} keeps the API server's rules" for s in SEEDS])
def test_generated_objects_keep_the_api_rules(seed: int) -> None:
    assert api_problems(generate(seed)) == []


KPLAN_SEEDS = [s for s in range(1, 41) if generate(s).notes["nodes"] <= 150]


@pytest.mark.parametrize("seed", KPLAN_SEEDS, ids=[f"kplan loads seed {s} without a warning" for s in KPLAN_SEEDS])
def test_kplan_loads_every_generated_scenario(seed: int, tmp_path: Path) -> None:
    sc = generate(seed)
    folder = sc.write(tmp_path / sc.name)
    out, err, code = _kplan_in_process([a for a in kplan_args(folder) if a != "-q"])
    assert code in (0, 1), err
    assert err.strip() == "", err
    pods = json.loads(out)["pods"]
    assert len(pods) == len(sc.pods)
    assert {p["status"] for p in pods} <= {"Scheduled", "Unschedulable", "Preempted"}
