"""Benchmark Karpenter's provisioning round (issue 45 item 6: 2,000 pending pods, the AWS catalog,
5 NodePools, a 1,000-node cluster in at most 5 s), side by side with the oracle on the same files.

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_karpenter_provision.py [--nodes 1000] [--pending 2000] [--seed 1]
        [--repeat 1] [--oracle oracle/bin/karpenter-oracle] [--keep DIR]

A seeded cluster is written to a folder in the oracle's scenario shape (cluster.json,
nodepools.json, pending.json, catalog.json = the built-in AWS catalog): 5 NodePools (general
on-demand, spot, arm64, memory families by weight, a tainted GPU-free batch pool with a cpu
limit), 1,000 Karpenter nodes of m5/c5/r5/m6g types spread over us-west-2a-c with running pods
filling them to 50-95 %, and 2,000 pending pods in 40 Deployments (100m-4 cpu, 128Mi-8Gi, some
with node selectors, tolerations, zonal spread or hostname anti-affinity). kplan loads the files
as the CLI does, then ``solve`` runs; the figures printed: load, catalog, solve (best of
--repeat), the claims and pods. With --oracle the same folder goes to ``karpenter-oracle
provision`` and its wall time is printed too; its answer is kept as expected.json beside the files (with
--keep, the folder is then a fidelity scenario: compare with tests/fidelity/karpenter/compare.py).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

ZONES = ("us-west-2a", "us-west-2b", "us-west-2c")
NODE_TYPES = (("m5.2xlarge", "amd64", 8, 32), ("c5.2xlarge", "amd64", 8, 16), ("r5.xlarge", "amd64", 4, 32),
              ("m6g.2xlarge", "arm64", 8, 32), ("m5.4xlarge", "amd64", 16, 64))
CLASS = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}


def req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def node_pools() -> list[dict[str, Any]]:
    def pool(name: str, weight: int | None, reqs: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        spec: dict[str, Any] = {"template": {"spec": {"nodeClassRef": CLASS, "requirements": reqs,
                                                      "taints": extra.pop("taints", [])}}}
        if weight is not None:
            spec["weight"] = weight
        spec.update(extra)
        return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}
    amd = req("kubernetes.io/arch", "In", "amd64")
    return [
        pool("general", 10, [amd, req("karpenter.sh/capacity-type", "In", "on-demand"),
                             req("karpenter.kwok.sh/instance-family", "In", "m5", "c5", "r5", "m6i", "c6i")]),
        pool("spot", 20, [amd, req("karpenter.sh/capacity-type", "In", "spot"),
                          req("node.kubernetes.io/instance-type", "Exists", )], limits={"cpu": "2000"}),
        pool("arm", 5, [req("kubernetes.io/arch", "In", "arm64"), req("karpenter.sh/capacity-type", "In", "on-demand")]),
        pool("memory", 1, [amd, req("karpenter.kwok.sh/instance-family", "In", "r5", "r6i", "x2idn")]),
        pool("batch", None, [amd, req("karpenter.sh/capacity-type", "In", "spot", "on-demand")],
             taints=[{"key": "batch", "value": "true", "effect": "NoSchedule"}], limits={"cpu": "500"}),
    ]


def cluster(nodes: int, pending: int, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    pools = ("general", "spot", "arm", "memory")
    for i in range(nodes):
        name = f"node-{i:04d}"
        it, arch, cpu, mem = NODE_TYPES[i % len(NODE_TYPES)]
        pool = "arm" if arch == "arm64" else pools[i % 4 if i % 4 != 2 else 0]
        labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3],
                  "node.kubernetes.io/instance-type": it, "kubernetes.io/arch": arch, "kubernetes.io/os": "linux",
                  "karpenter.sh/nodepool": pool, "karpenter.sh/capacity-type": "spot" if pool == "spot" else "on-demand",
                  "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"}
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                      "spec": {"providerID": f"aws:///{ZONES[i % 3]}/i-{i:08x}"},
                      "status": {"capacity": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "58"},
                                 "allocatable": {"cpu": f"{cpu * 1000 - 100}m", "memory": f"{mem * 1024 - 800}Mi",
                                                 "pods": "58"}}})
        fill = rng.uniform(0.5, 0.95)
        used = 0
        j = 0
        while used + 500 < fill * cpu * 1000:
            c = rng.choice((250, 500, 1000))
            used += c
            items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"run-{i:04d}-{j:02d}", "namespace": "apps", "uid": f"run-{i:04d}-{j:02d}",
                "labels": {"app": f"svc{(i + j) % 50:02d}"}},
                "spec": {"nodeName": name, "containers": [{"name": "c", "image": "app", "resources": {"requests": {
                    "cpu": f"{c}m", "memory": f"{c * 2}Mi"}}}]}, "status": {"phase": "Running"}})
            j += 1
    pods: list[dict[str, Any]] = []
    for k in range(pending):
        d = k % 40
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "app", "resources": {"requests": {
            "cpu": f"{(100, 250, 500, 1000, 2000, 4000)[d % 6]}m", "memory": f"{(128, 512, 1024, 2048, 4096, 8192)[d % 6]}Mi"}}}]}
        labels = {"app": f"dep{d:02d}"}
        if d % 7 == 1:
            spec["nodeSelector"] = {"kubernetes.io/arch": "arm64"}
        if d % 7 == 2:
            spec["tolerations"] = [{"key": "batch", "operator": "Exists", "effect": "NoSchedule"}]
            spec["nodeSelector"] = {"karpenter.sh/nodepool": "batch"}
        if d % 7 == 3:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": labels}}]
        if d % 7 == 4:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": labels}}]}}
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"dep{d:02d}-{k:05d}", "namespace": "apps", "uid": f"pending-{k:05d}", "labels": labels,
            "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec, "status": {"phase": "Pending"}})
    return items, pods


def write(folder: Path, nodes: int, pending: int, seed: int) -> None:
    from kplan.io.catalog import BUILT_IN

    items, pods = cluster(nodes, pending, seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    (folder / "nodepools.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": node_pools()}))
    (folder / "pending.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    data = (Path(ROOT) / "kplan" / "io" / "catalogs" / BUILT_IN["aws"]).read_bytes()
    (folder / "catalog.json").write_bytes(gzip.decompress(data))


def run_kplan(folder: Path, repeat: int) -> None:
    from kplan.autoscaler.karpenter import KarpenterCluster, solve
    from kplan.cli.common import cluster_objects
    from kplan.io.catalog import read_catalog
    from kplan.io.workspace import load_workspace

    t0 = time.perf_counter()
    files = [str(folder / f) for f in ("cluster.json", "nodepools.json", "pending.json")]
    objects, _, _ = cluster_objects(files, progress=False)
    inputs = load_workspace(objects, []).inputs
    t1 = time.perf_counter()
    catalog = read_catalog("aws")
    t2 = time.perf_counter()
    c = KarpenterCluster(tuple(inputs.nodes), tuple(inputs.running), tuple(inputs.node_pools),
                         tuple(inputs.node_claims), (), catalog)
    times = []
    cpu = []
    result = None
    for _ in range(repeat):
        s, sc = time.perf_counter(), time.process_time()
        result = solve(c, inputs.pending)
        times.append(time.perf_counter() - s)
        cpu.append(time.process_time() - sc)
    first, best = times[0], min(times)
    assert result is not None
    placed_new = sum(len(x.pods) for x in result.new_node_claims)
    placed_old = sum(len(x.pods) for x in result.existing_nodes)
    # the first solve also builds what later ones reuse: the catalog's columns and the NodePools'
    # templates (a whatif or a consolidation solves many times on the same NodePools and catalog)
    print(f"kplan: load {t1 - t0:.2f} s, catalog {t2 - t1:.2f} s, solve {first:.2f} s first ({cpu[0]:.2f} s cpu), "
          f"{best:.2f} s best of {repeat} ({min(cpu):.2f} s cpu); "
          f"{len(inputs.nodes)} nodes, {len(inputs.pending)} pending: {len(result.new_node_claims)} new claims "
          f"with {placed_new} pods, {placed_old} pods on existing nodes, {len(result.pod_errors)} errors")


def run_oracle(binary: str, folder: Path) -> None:
    cmd = [binary, "provision", "--instance-types", str(folder / "catalog.json"), "--compact"]
    for f in ("cluster.json", "nodepools.json", "pending.json"):
        cmd += ["--cluster", str(folder / f)]
    s = time.perf_counter()
    before = os.times()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - s
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    if p.returncode != 0:
        print(f"oracle failed ({p.returncode}): {p.stderr.strip()[:300]}")
        return
    out = json.loads(p.stdout)
    (folder / "expected.json").write_text(p.stdout)  # the scenario folder then runs as a fidelity case
    print(f"oracle: {wall:.2f} s wall, {cpu:.2f} s cpu (the process, loading included); "
          f"{len(out['newNodeClaims'])} new claims, "
          f"{sum(len(e['pods']) for e in out['existingNodes'])} pods on existing nodes, "
          f"{len(out['podErrors'])} errors")
    from tests.fidelity.karpenter.compare import compare
    from tests.fidelity.karpenter.kplan_side import run_kplan as kplan_json

    differences = compare(out, kplan_json(folder))
    print("kplan and the oracle agree" if not differences else
          f"kplan and the oracle differ ({len(differences)}): " + "; ".join(d[:300] for d in differences[:3]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pending", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--oracle", help="karpenter-oracle binary to time on the same files")
    ap.add_argument("--keep", help="write the scenario folder here (else a temporary folder)")
    args = ap.parse_args()
    # the other benchmarks run at every modelled kube-scheduler release (benchmarks/releases.py)
    print("release: none (Karpenter's provisioning (solve) reads no kube-scheduler release)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        write(folder, args.nodes, args.pending, args.seed)
        run_kplan(folder, args.repeat)
        if args.oracle:
            run_oracle(args.oracle, folder)


if __name__ == "__main__":
    main()
