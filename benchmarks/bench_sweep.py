"""Benchmark ``kplan sweep``: 100 grid points on a 500-node / 5,000-pending-pod cluster, 1 worker against 2.

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_sweep.py [--nodes 500] [--replicas 5000] [--runs 3] [--workers 1,2]
                                     [--add-step 1] [--scale-step 100] [--simulate-points 6]

A seeded cluster (500 nodes of 16 cpu / 64 Gi in 3 zones, 2,500 running pods) and a Deployment of
5,000 replicas (1.5 cpu / 4 Gi each, so the cluster holds about 5,000 of them) are written to a
temporary folder. The sweep is ``--add-node like=node-0000:0..9`` x ``--scale
deployment/bench/app=4,550..5,450:100`` (10 x 10 = 100 points, each about 5,000 pending pods;
``--add-step 9 --scale-step 225`` gives a 2 x 5 grid for a quicker look), one seed, run as a fresh
``python -m kplan sweep`` process per run and per worker count. Printed: the whole-process wall
time and the run phase (kplan's -v line: the simulations after loading, and apart the part of it
before the first task, starting the workers and sending them the inputs), their medians per worker
count, the ratio 2 workers / 1 worker (target <= 0.6), and the cost of one point on one worker (the
run phase after the workers' start, over the points: changes, build, schedule, summary and Dask's
handling of the task; also with each point's share of the start) against ``kplan simulate`` of
points of the same grid (their scheduling time, loading excluded; target: a point costs no more).
The sweep runs each node count's replica counts as a chain (kplan.io.sweep.run_chain): 5,050 to
5,350 are forks of the run of 5,450; the five below 5,000 are scale-downs, whose deleted replicas
come up within the run's first pops, too early for a fork to save anything: they run alone.
``kplan simulate`` runs ``--simulate-points`` points spread over the grid (its corners and
middles), each from a cluster file with the added nodes written as whatif clones them and the
Deployment at the point's replicas, and their mean scheduling time stands for the grid's mean.
Each runs right before and right after each run's sweeps and counts with the mean of the two, so
that each run's ratio compares times taken under the same load, even when the machine's speed
drifts during the minutes of the sweeps.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.bench_simulate import release_words  # noqa: E402
from benchmarks.releases import add_release_option, banner, releases  # noqa: E402

ZONES = ("zone-a", "zone-b", "zone-c")
RUN_LINE = re.compile(r"(\d+) simulations on (\d+) workers? in ([0-9.]+) s \(([0-9.]+) s of it starting")


def cluster(nodes: int, running: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for i in range(nodes):
        name = f"node-{i:04d}"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3],
            "node-pool": "general"}}, "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}})
    for j in range(running):
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"base-{j:05d}", "namespace": "base"},
                      "spec": {"nodeName": f"node-{rng.randrange(nodes):04d}", "containers": [{
                          "name": "c", "image": "base", "resources": {"requests": {"cpu": "100m",
                                                                                   "memory": "256Mi"}}}]}})
    return items


def deployment(replicas: int) -> dict[str, Any]:
    labels = {"app": "app"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app", "namespace": "bench"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "app:1", "resources": {
                    "requests": {"cpu": "1500m", "memory": "4Gi"}}}]}}}}


def axes(replicas: int, add_step: int, scale_step: int) -> tuple[list[int], list[int]]:
    """The values of the two axes, as kplan sweep's ranges 0..9:STEP and R-450..R+450:STEP give them."""
    nodes = list(range(0, 10, add_step))
    scale = list(range(replicas - 450, replicas + 451, scale_step))
    return (nodes if nodes[-1] == 9 else [*nodes, 9]), (scale if scale[-1] == replicas + 450 else
                                                          [*scale, replicas + 450])


def sweep_args(dpath: str, cpath: str, replicas: int, add_step: int, scale_step: int) -> list[str]:
    lo, hi = replicas - 450, replicas + 450
    return ["sweep", dpath, "--cluster", cpath, "--add-node", f"like=node-0000:0..9:{add_step}", "--scale",
            f"deployment/bench/app={lo}..{hi}:{scale_step}", "-o", "json", "-v"]


def spread(values: list[int], k: int) -> list[int]:
    """``k`` values of an axis, evenly spread from its first to its last."""
    if k <= 1 or len(values) == 1:
        return [values[len(values) // 2]]
    return sorted({values[round(i * (len(values) - 1) / (k - 1))] for i in range(k)})


def sample_points(nodes: list[int], scale: list[int], n: int) -> list[tuple[int, int]]:
    """About ``n`` points of the grid: both ends of the node axis times values spread over the scale axis."""
    node_values = spread(nodes, 2 if n >= 2 else 1)
    return [(k, r) for k in node_values for r in spread(scale, max(1, n // len(node_values)))]


def point_cluster(items: list[dict[str, Any]], added: int) -> list[dict[str, Any]]:
    """The cluster with ``added`` nodes like node-0000, named and labelled as kplan whatif clones them."""
    template = next(i for i in items if i["kind"] == "Node" and i["metadata"]["name"] == "node-0000")
    out = list(items)
    for i in range(1, added + 1):
        name = f"node-0000-whatif-{i}"
        labels = {**template["metadata"]["labels"], "kubernetes.io/hostname": name}
        out.append({**template, "metadata": {"name": name, "labels": labels}})
    return out


def simulate_points(tmp: str, items: list[dict[str, Any]], points: list[tuple[int, int]], release: str
                    ) -> list[float]:
    """``kplan simulate``'s scheduling time (timing.scheduleSeconds) of each point."""
    out = []
    for added, replicas in points:
        cpath, dpath = os.path.join(tmp, f"point-cluster-{added}.json"), os.path.join(tmp, "point-app.json")
        with open(cpath, "w") as fh:
            json.dump({"apiVersion": "v1", "kind": "List", "items": point_cluster(items, added)}, fh)
        with open(dpath, "w") as fh:
            json.dump(deployment(replicas), fh)
        sim = subprocess.run([sys.executable, "-m", "kplan", "simulate", dpath, "--cluster", cpath, "-o", "json",
                              "--kube-version", release], cwd=ROOT, capture_output=True, text=True)
        if sim.returncode not in (0, 1):
            sys.exit(f"kplan simulate failed ({sim.returncode}): {sim.stderr.strip()[-800:]}")
        out.append(float(json.loads(sim.stdout)["timing"]["scheduleSeconds"]))
        print(f"kplan simulate of {added} more nodes, {replicas} replicas: scheduled in {out[-1]:.2f} s", flush=True)
    return out


def release_of(cpath: str, dpath: str, release: str) -> str:
    """The release ``kplan simulate --kube-version release`` models, as its document names it."""
    sim = subprocess.run([sys.executable, "-m", "kplan", "simulate", dpath, "--cluster", cpath, "-o", "json",
                          "--kube-version", release], cwd=ROOT, capture_output=True, text=True)
    if sim.returncode not in (0, 1):
        sys.exit(f"kplan simulate failed ({sim.returncode}): {sim.stderr.strip()[-800:]}")
    return release_words(json.loads(sim.stdout))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--running", type=int, default=2500)
    ap.add_argument("--replicas", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", default="1,2", help="worker counts to compare, comma-separated")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--add-step", type=int, default=1, help="step of the node axis 0..9")
    ap.add_argument("--scale-step", type=int, default=100, help="step of the replica axis R-450..R+450")
    ap.add_argument("--simulate-points", type=int, default=6, help="grid points kplan simulate runs (0: none)")
    add_release_option(ap)
    a = ap.parse_args()
    counts = [int(w) for w in a.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        cpath, dpath = os.path.join(tmp, "cluster.json"), os.path.join(tmp, "deployment.json")
        items = cluster(a.nodes, a.running, a.seed)
        with open(cpath, "w") as fh:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, fh)
        with open(dpath, "w") as fh:
            json.dump(deployment(a.replicas), fh)
        for release in releases(a.kube_version):
            print(banner(release), flush=True)
            at_release(a, counts, tmp, cpath, dpath, items, release)


def at_release(a: argparse.Namespace, counts: list[int], tmp: str, cpath: str, dpath: str,
               items: list[dict[str, Any]], release: str) -> None:
    """The benchmark's runs with kplan modelling ``release``."""
    print(f"release: {release_of(cpath, dpath, release)}")
    walls: dict[int, list[float]] = {w: [] for w in counts}
    phases: dict[int, list[float]] = {w: [] for w in counts}
    #: of each run phase, the part before the first task: workers started, inputs sent
    setups: dict[int, list[float]] = {w: [] for w in counts}
    nodes, scale = axes(a.replicas, a.add_step, a.scale_step)
    sampled = sample_points(nodes, scale, a.simulate_points) if a.simulate_points > 0 else []
    #: kplan simulate's scheduling times of the sampled points, per run: each point right before and
    #: right after that run's sweeps, so that a drift of the machine's speed during the run cancels
    schedules: list[list[float]] = []
    points = 0
    for k in range(a.runs):
        before = simulate_points(tmp, items, sampled, release) if sampled else []
        for w in counts:  # interleaved, so a change of load on a shared machine hits both alike
            t = time.perf_counter()
            run = subprocess.run([sys.executable, "-m", "kplan",
                                  *sweep_args(dpath, cpath, a.replicas, a.add_step, a.scale_step),
                                  "--workers", str(w), "--kube-version", release], cwd=ROOT,
                                 capture_output=True, text=True)
            walls[w].append(time.perf_counter() - t)
            if run.returncode not in (0, 1):
                sys.exit(f"kplan sweep failed ({run.returncode}): {run.stderr.strip()[-800:]}")
            m = RUN_LINE.search(run.stderr)
            assert m is not None, run.stderr
            points = len(json.loads(run.stdout)["points"])
            phases[w].append(float(m.group(3)))
            setups[w].append(float(m.group(4)))
            print(f"run {k + 1}, {w} worker{'s' if w != 1 else ''}: {walls[w][-1]:.1f} s wall, "
                  f"{phases[w][-1]:.1f} s for {m.group(1)} simulations ({setups[w][-1]:.1f} s of it starting "
                  "the workers)", flush=True)
        if sampled:
            after = simulate_points(tmp, items, sampled, release)
            schedules.append([(x + y) / 2 for x, y in zip(before, after, strict=True)])
    print()
    for w in counts:
        print(f"{w} worker{'s' if w != 1 else ''}: median {statistics.median(walls[w]):.1f} s wall, "
              f"{statistics.median(phases[w]):.1f} s of simulations ({points} points); "
              f"runs {', '.join(f'{x:.1f}' for x in walls[w])} s")
    if 1 in counts and 2 in counts:
        ratio = statistics.median(walls[2]) / statistics.median(walls[1])
        phase_ratio = statistics.median(phases[2]) / statistics.median(phases[1])
        print(f"2 workers / 1 worker: {ratio:.2f} of the wall time, {phase_ratio:.2f} of the simulation time "
              "(target <= 0.6)")
    if 1 in counts and schedules:
        ratios, shared = [], []
        for k, (phase, setup, times) in enumerate(zip(phases[1], setups[1], schedules, strict=True)):
            per_point, mean = (phase - setup) / points, statistics.fmean(times)
            ratios.append(per_point / mean)
            shared.append(phase / points / mean)
            print(f"run {k + 1}: one point on 1 worker {per_point:.2f} s (changes, build, schedule, summary, and "
                  f"Dask's handling of the task; {phase / points:.2f} s with its share of the workers' start); "
                  f"kplan simulate of {len(times)} points of the grid, each run right before and right after "
                  f"the sweeps, schedules in {mean:.2f} s on average (per point, the mean of its two runs: "
                  f"{', '.join(f'{x:.2f}' for x in times)}): {ratios[-1]:.2f} of it "
                  f"({shared[-1]:.2f} with the start)")
        print(f"one point / kplan simulate's scheduling of the grid: median {statistics.median(ratios):.2f} "
              f"over {len(ratios)} run{'s' if len(ratios) != 1 else ''} (target <= 1); "
              f"{statistics.median(shared):.2f} counting each point's share of the workers' start")


if __name__ == "__main__":
    main()
