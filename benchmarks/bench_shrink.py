"""Benchmark ``kplan whatif --shrink``: 500 nodes, 10,000 running pods (issue 38, item 6: under a
minute on the project's machine).

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_shrink.py [--nodes 500] [--pods 10000] [--seed 1] [--repeat 1] [--pending 0]

A seeded cluster is written to a temporary folder: nodes of 16 cpu / 64 Gi in 3 zones (one
instance type), and running pods of 200 ReplicaSets (100m to 1 cpu, 256 Mi to 2 Gi each) on
nodes picked so that node loads spread from nearly empty to over the threshold (a node's share
of the pods follows a seeded weight). Then ``whatif_shrink`` runs in-process with the default
settings, as ``kplan whatif --cluster cluster.json --shrink`` does, and the figures are printed:
the load time (parsing, as the CLI loads), the search (the pending run, one probe per candidate
below the threshold, the replay of all removals; wall and CPU time, the figure that compares on a
shared machine) and the whole, with the nodes removed and kept by reason. ``--pending N`` adds a
Deployment of N pending replicas (100m / 128 Mi), which the run before and the search place first.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.releases import add_release_option, banner, releases  # noqa: E402

ZONES = ("zone-a", "zone-b", "zone-c")


def cluster(nodes: int, pods: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for i in range(nodes):
        name = f"node-{i:04d}"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3],
            "node.kubernetes.io/instance-type": "m5.4xlarge"}},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}})
    weights = [rng.uniform(0.2, 1.8) for _ in range(nodes)]
    for j in range(pods):
        app = j % 200
        node = rng.choices(range(nodes), weights)[0]
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"app{app:03d}-{j:05d}", "namespace": "bench", "labels": {"app": f"app{app:03d}"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"app{app:03d}-rs",
                                 "uid": f"rs-{app}", "controller": True}]},
            "spec": {"nodeName": f"node-{node:04d}", "containers": [{"name": "c", "image": "app", "resources": {
                "requests": {"cpu": f"{rng.choice([100, 250, 500, 1000])}m",
                             "memory": f"{rng.choice([256, 512, 1024, 2048])}Mi"}}}]}})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--pending", type=int, default=0, help="pending replicas of a Deployment, placed first")
    add_release_option(ap)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path, pods = os.path.join(tmp, "cluster.json"), os.path.join(tmp, "pending.json")
        with open(path, "w") as f:
            json.dump(cluster(args.nodes, args.pods, args.seed), f)
        with open(pods, "w") as f:
            json.dump(pending(args.pending), f)
        for release in releases(args.kube_version):
            print(banner(release), flush=True)
            at_release(args, path, pods if args.pending else None, release)


def pending(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "pending", "namespace": "bench"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "pending"}}, "template": {
                "metadata": {"labels": {"app": "pending"}}, "spec": {"containers": [{
                    "name": "c", "image": "p", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}}}


def at_release(args: argparse.Namespace, path: str, pods: str | None, release: str) -> None:
    from kplan.cli.options import TieBreak
    from kplan.cli.workspace import load_inputs, open_planner, release_words
    from kplan.whatif.shrink import ShrinkOptions, whatif_shrink

    loads, searches, cpus = [], [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        loaded = load_inputs([path], [pods] if pods else [], progress=False)
        planner = open_planner(loaded, None, seed=0, tie_break=TieBreak.random, kube_version=release)
        t1, c1 = time.perf_counter(), time.process_time()
        _, found = whatif_shrink(planner, [], ShrinkOptions())
        t2 = time.perf_counter()
        loads.append(t1 - t0)
        searches.append(t2 - t1)
        cpus.append(time.process_time() - c1)
    kept = Counter(v.reason for v in found.kept)
    print(f"release: {release_words(planner.setup.release)}")
    print(f"kplan whatif --shrink: {args.nodes} nodes, {args.pods} running pods (seed {args.seed}), "
          f"{args.pending} pending, {args.repeat} run(s), load average {os.getloadavg()[0]:.1f} at the end")
    print(f"  load   {statistics.median(loads):7.2f} s (median)")
    print(f"  search {statistics.median(searches):7.2f} s (median; CPU {statistics.median(cpus):.2f} s, runs "
          f"{', '.join(f'{c:.2f}' for c in cpus)}): pending run, "
          f"{len(found.removed) + kept['NoPlaceToMovePods'] + kept['DroppedInReplay']} probes, replay")
    print(f"  whole  {statistics.median(loads) + statistics.median(searches):7.2f} s   (target: under 60 s)")
    print(f"  removed {len(found.removed)} nodes; kept {len(found.kept)}: "
          + ", ".join(f"{n} {r}" for r, n in kept.most_common()) + (f"; dropped in the replay {len(found.dropped)}"
                                                                    if found.dropped else ""))


if __name__ == "__main__":
    main()
