"""Benchmark ``kplan whatif --until-fit`` on 5,000 nodes and 20,000 pending pods, with and without
the early stop (issue 38, items 2 and 6).

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_until_fit.py [--nodes 5000] [--pending 20000] [--limit 1024]
                                         [--only early|full] [--repeat 1]

A seeded cluster: nodes of 16 cpu / 64 Gi in 3 zones, one of them (``special-0``, zone-a) in a
pool of its own (``pool=special``) and full. Pending: small pods that fit in the free room, and
10 replicas of a Deployment that select the special pool and want a zone each (required pod
anti-affinity on the zone). An empty node like ``special-0`` takes one of them, so the empty-node
check cannot rule them out, yet nodes like it, all in zone-a, never hold a second: one node is
the answer and 9 replicas stay pending.

Without the early stop (``Planner.whatif(..., stop_early=False)``, the search before issue 38)
the exponential search runs to the limit (1, 2, 4, …, 1024 nodes), each probe a simulation of
every pending pod; with it the search stops at 2 nodes, which place no more pods than 1 while no
pod waits for room. Printed: the load time, each search's time (wall and CPU: on a shared
machine the CPU time is the figure that compares; with ``--repeat``, the median and every run, each
on a fresh load) and probes, and the answer.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.releases import add_release_option, banner, releases  # noqa: E402

ZONES = ("zone-a", "zone-b", "zone-c")


def inputs(nodes: int, pending: int) -> tuple[dict[str, Any], dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i in range(nodes):
        name = "special-0" if i == 0 else f"node-{i:04d}"
        labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3],
                  "pool": "special" if i == 0 else "general"}
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                      "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}})
    items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "filler", "namespace": "bench"},
                  "spec": {"nodeName": "special-0", "containers": [{"name": "c", "image": "f", "resources": {
                      "requests": {"cpu": "16", "memory": "60Gi"}}}]}})
    zonal = 10
    small = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "small", "namespace": "bench"},
             "spec": {"replicas": pending - zonal, "selector": {"matchLabels": {"app": "small"}}, "template": {
                 "metadata": {"labels": {"app": "small"}}, "spec": {"containers": [{"name": "c", "image": "s",
                                                                                     "resources": {"requests": {
                                                                                         "cpu": "100m",
                                                                                         "memory": "128Mi"}}}]}}}}
    anti = {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "zonal"}}, "topologyKey": "topology.kubernetes.io/zone"}]}
    zonal_dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "zonal", "namespace": "bench"},
                 "spec": {"replicas": zonal, "selector": {"matchLabels": {"app": "zonal"}}, "template": {
                     "metadata": {"labels": {"app": "zonal"}}, "spec": {
                         "nodeSelector": {"pool": "special"}, "affinity": {"podAntiAffinity": anti},
                         "containers": [{"name": "c", "image": "z", "resources": {"requests": {"cpu": "1",
                                                                                             "memory": "1Gi"}}}]}}}}
    return ({"apiVersion": "v1", "kind": "List", "items": items},
            {"apiVersion": "v1", "kind": "List", "items": [small, zonal_dep]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pending", type=int, default=20_000)
    ap.add_argument("--limit", type=int, default=1024)
    ap.add_argument("--only", choices=("early", "full"), default=None, help="run one of the two searches")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each search (medians printed)")
    add_release_option(ap)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        cluster_path, pods_path = os.path.join(tmp, "cluster.json"), os.path.join(tmp, "pods.json")
        c, p = inputs(args.nodes, args.pending)
        for path, doc in ((cluster_path, c), (pods_path, p)):
            with open(path, "w") as f:
                json.dump(doc, f)
        for release in releases(args.kube_version):
            print(banner(release), flush=True)
            at_release(args, cluster_path, pods_path, release)


def at_release(args: argparse.Namespace, cluster_path: str, pods_path: str, release: str) -> None:
    from kplan.cli.options import TieBreak
    from kplan.cli.workspace import load_inputs, open_planner, release_words

    runs = [("full", False), ("early", True)]
    loads: list[float] = []
    for label, stop in runs:
        if args.only is not None and args.only != label:
            continue
        walls: list[float] = []
        cpus: list[float] = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            loaded = load_inputs([cluster_path], [pods_path], progress=False)
            planner = open_planner(loaded, None, seed=0, tie_break=TieBreak.random, kube_version=release)
            loads.append(time.perf_counter() - t0)
            if len(loads) == 1:
                print(f"release: {release_words(planner.setup.release)}")
                print(f"kplan whatif --until-fit like=special-0: {args.nodes} nodes, {args.pending} pending pods, "
                      f"limit {args.limit}; loaded in {loads[0]:.1f} s")
            t1, c1 = time.perf_counter(), time.process_time()
            u = planner.whatif([], until_fit="special-0", limit=args.limit, stop_early=stop).until_fit
            walls.append(time.perf_counter() - t1)
            cpus.append(time.process_time() - c1)
            assert u is not None
        what = "before issue 38 (no early stop)" if not stop else "with the early stop"
        each = f" (runs: {', '.join(f'{c:.1f}' for c in cpus)} s CPU)" if args.repeat > 1 else ""
        print(f"  {what:32} {statistics.median(walls):8.1f} s ({statistics.median(cpus):.1f} s CPU){each}  "
              f"probes {sorted(u.probes)}  count {u.count}, placed {len(u.placed)}, "
              f"still pending {len(u.still_pending)}, never fit {len(u.never)}")
    print(f"  load average {os.getloadavg()[0]:.1f} at the end (2 cores shared)")


if __name__ == "__main__":
    main()
