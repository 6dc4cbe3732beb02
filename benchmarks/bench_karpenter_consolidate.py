"""Benchmark Karpenter's disruption (issue 45 item 6: consolidation of a 500-node Karpenter cluster
in at most 30 s), side by side with the oracle on the same files.

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_karpenter_consolidate.py [--nodes 500] [--seed 1] [--max-rounds N]
        [--oracle oracle/bin/karpenter-oracle] [--keep DIR]

A seeded cluster is written to a folder in the oracle's scenario shape (cluster.json,
nodepools.json, catalog.json = the built-in AWS catalog): 3 NodePools (general on-demand m5/c5/r5
with a 10 % budget, spot with 20 %, arm64 on-demand with 5 nodes), Karpenter nodes of m5/c5/r5/m6g
types spread over us-west-2a-c, ready and initialized the day before, most of them filled to
5-60 % with running pods of 50 Deployments (some under PodDisruptionBudgets, a few
do-not-disrupt), some empty. kplan loads the files as the CLI does, then runs the disruption
controller to its end (kplan.autoscaler.karpenter.disruption.world.consolidate); printed: load,
catalog, consolidate, the passes, commands, nodes deleted/replaced/kept and the price per hour
before and after. With --oracle the same folder goes to ``karpenter-oracle consolidate`` and its
wall time (process, loading included) and figures are printed too.
"""

from __future__ import annotations

import argparse
import calendar
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

NOW = "2026-01-02T00:00:00Z"
BEFORE = "2026-01-01T00:00:00Z"
ZONES = ("us-west-2a", "us-west-2b", "us-west-2c")
NODE_TYPES = (("m5.2xlarge", "amd64", 8, 32), ("c5.2xlarge", "amd64", 8, 16), ("r5.xlarge", "amd64", 4, 32),
              ("m6g.2xlarge", "arm64", 8, 32), ("m5.4xlarge", "amd64", 16, 64))
CLASS = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}


def req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def node_pools() -> list[dict[str, Any]]:
    def pool(name: str, reqs: list[dict[str, Any]], budget: str) -> dict[str, Any]:
        return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
                "spec": {"template": {"spec": {"nodeClassRef": CLASS, "requirements": reqs}},
                         "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s",
                                        "budgets": [{"nodes": budget}]}}}
    amd = req("kubernetes.io/arch", "In", "amd64")
    return [
        pool("general", [amd, req("karpenter.sh/capacity-type", "In", "on-demand"),
                         req("karpenter.kwok.sh/instance-family", "In", "m5", "c5", "r5")], "10%"),
        pool("spot", [amd, req("karpenter.sh/capacity-type", "In", "spot"),
                      req("karpenter.kwok.sh/instance-family", "In", "m5", "c5", "r5")], "20%"),
        pool("arm", [req("kubernetes.io/arch", "In", "arm64"), req("karpenter.sh/capacity-type", "In", "on-demand")],
             "5"),
    ]


def cluster(nodes: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    apps_with_pdb = {f"svc{k:02d}" for k in range(0, 50, 10)}
    for i in range(nodes):
        name = f"node-{i:04d}"
        it, arch, cpu, mem = NODE_TYPES[i % len(NODE_TYPES)]
        pool = "arm" if arch == "arm64" else ("spot" if i % 4 == 1 else "general")
        labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3],
                  "node.kubernetes.io/instance-type": it, "kubernetes.io/arch": arch, "kubernetes.io/os": "linux",
                  "karpenter.kwok.sh/instance-family": it.split(".")[0], "karpenter.sh/nodepool": pool, "karpenter.sh/capacity-type": "spot" if pool == "spot" else "on-demand",
                  "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"}
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": labels, "creationTimestamp": BEFORE},
                      "spec": {"providerID": f"aws:///{ZONES[i % 3]}/i-{i:08x}"},
                      "status": {"capacity": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "58"},
                                 "allocatable": {"cpu": f"{cpu * 1000 - 100}m", "memory": f"{mem * 1024 - 800}Mi",
                                                 "pods": "58"},
                                 "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": BEFORE}]}})
        fill = 0.0 if rng.random() < 0.08 else rng.uniform(0.05, 0.6)
        used = 0
        j = 0
        while used + 500 < fill * cpu * 1000:
            c = rng.choice((250, 500, 1000))
            used += c
            app = f"svc{(i + j) % 50:02d}"
            md: dict[str, Any] = {"name": f"run-{i:04d}-{j:02d}", "namespace": "apps", "uid": f"run-{i:04d}-{j:02d}",
                                  "labels": {"app": app}, "creationTimestamp": BEFORE,
                                  "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app,
                                                       "uid": f"rs-{app}", "controller": True}]}
            if rng.random() < 0.01:
                md["annotations"] = {"karpenter.sh/do-not-disrupt": "true"}
            items.append({"apiVersion": "v1", "kind": "Pod", "metadata": md,
                          "spec": {"nodeName": name, "containers": [{"name": "c", "image": "app", "resources": {
                              "requests": {"cpu": f"{c}m", "memory": f"{c * 2}Mi"}}}]},
                          "status": {"phase": "Running", "startTime": BEFORE}})
            j += 1
    for app in sorted(apps_with_pdb):
        items.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                      "metadata": {"name": app, "namespace": "apps"},
                      "spec": {"maxUnavailable": 5, "selector": {"matchLabels": {"app": app}}},
                      "status": {"disruptionsAllowed": 5}})
    return items


def write(folder: Path, nodes: int, seed: int) -> None:
    from kplan.io.catalog import BUILT_IN

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster(nodes, seed)}))
    (folder / "nodepools.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": node_pools()}))
    data = (Path(ROOT) / "kplan" / "io" / "catalogs" / BUILT_IN["aws"]).read_bytes()
    (folder / "catalog.json").write_bytes(gzip.decompress(data))


def run_kplan(folder: Path, max_rounds: int) -> None:
    from kplan.autoscaler.karpenter import KarpenterCluster
    from kplan.autoscaler.karpenter.disruption.controller import DisruptionOptions
    from kplan.autoscaler.karpenter.disruption.world import consolidate
    from kplan.cli.common import cluster_objects
    from kplan.io.catalog import read_catalog
    from kplan.io.workspace import load_workspace

    t0 = time.perf_counter()
    objects, _, _ = cluster_objects([str(folder / "cluster.json"), str(folder / "nodepools.json")], progress=False)
    inputs = load_workspace(objects, []).inputs
    t1 = time.perf_counter()
    catalog = read_catalog(str(folder / "catalog.json"))
    t2 = time.perf_counter()
    c = KarpenterCluster(tuple(inputs.nodes), tuple(inputs.running), tuple(inputs.node_pools),
                         tuple(inputs.node_claims), (), catalog)
    now = float(calendar.timegm(time.strptime(NOW, "%Y-%m-%dT%H:%M:%SZ")))
    r = consolidate(c, inputs.pending, inputs.pdbs, {}, now, DisruptionOptions(max_rounds=max_rounds))
    t3 = time.perf_counter()
    verdicts = Counter(n.verdict for n in r.nodes)
    methods = Counter(x.method for x in r.commands)
    print(f"kplan: load {t1 - t0:.2f} s, catalog {t2 - t1:.2f} s, consolidate {t3 - t2:.2f} s; {len(r.nodes)} nodes: "
          f"{dict(verdicts)}; {len(r.commands)} commands {dict(methods)}; {len(r.launched)} new nodes; "
          f"${r.cost_before:.2f}/h -> ${r.cost_after:.2f}/h")


def run_oracle(binary: str, folder: Path, max_rounds: int) -> None:
    cmd = [binary, "consolidate", "--instance-types", str(folder / "catalog.json"), "--now", NOW,
           "--max-rounds", str(max_rounds), "--compact", "--cluster", str(folder / "cluster.json"),
           "--cluster", str(folder / "nodepools.json")]
    s = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - s
    if p.returncode != 0:
        print(f"oracle failed ({p.returncode}): {p.stderr.strip()[:300]}")
        return
    out = json.loads(p.stdout)
    verdicts = Counter(n["verdict"] for n in out["nodes"])
    methods = Counter(x["method"] for x in out["commands"])
    print(f"oracle: {wall:.2f} s wall (process, loading included); {dict(verdicts)}; {len(out['commands'])} commands "
          f"{dict(methods)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-rounds", type=int, default=10_000, help="stop after this many passes (both sides)")
    ap.add_argument("--oracle", help="karpenter-oracle binary to time on the same files")
    ap.add_argument("--keep", help="write the scenario folder here (else a temporary folder)")
    args = ap.parse_args()
    # the other benchmarks run at every modelled kube-scheduler release (benchmarks/releases.py)
    print("release: none (Karpenter's consolidation reads no kube-scheduler release)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        write(folder, args.nodes, args.seed)
        run_kplan(folder, args.max_rounds)
        if args.oracle:
            run_oracle(args.oracle, folder, args.max_rounds)


if __name__ == "__main__":
    main()
