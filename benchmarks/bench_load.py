"""Benchmark loading a 5,000-node / 150,000-pod snapshot (JSON) with ``kplan simulate``.

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_load.py [--nodes 5000] [--pods 150000] [--runs 3] [--raw]

The snapshot is generated from a seed with the realistic objects of bench_snapshot.py, written
as ``kplan snapshot`` writes it (a ``kind: List``, managedFields and kubectl's last-applied
annotation dropped; ``--raw`` keeps them, as ``kubectl get -o json`` would). Each run is
``python -m kplan simulate --cluster snapshot.json -o json`` in a fresh process with no pending
pods, so it measures loading: the figure is kplan's own ``timing.loadSeconds``, the process wall
time and its own peak RSS (benchmarks/peak_rss.py). Targets: <= 10 s and <= 2 GiB (median over the runs).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.bench_simulate import release_words  # noqa: E402
from benchmarks.bench_snapshot import make_node, make_pod  # noqa: E402
from benchmarks.peak_rss import MeasuredKplan  # noqa: E402
from benchmarks.releases import add_release_option, banner, releases  # noqa: E402


def write_snapshot(path: str, nodes: int, pods: int, seed: int, raw: bool) -> None:
    rng = random.Random(seed)
    with open(path, "w") as fh:
        fh.write('{"apiVersion":"v1","kind":"List","metadata":{},"items":[')
        first = True
        for i in range(nodes):
            doc = {"apiVersion": "v1", "kind": "Node", **make_node(i, rng)}
            fh.write(("" if first else ",") + json.dumps(_strip(doc, raw), separators=(",", ":")))
            first = False
        for i in range(pods):
            _, doc = make_pod(i, f"node-{rng.randrange(nodes):05d}", rng)
            fh.write("," + json.dumps(_strip({"apiVersion": "v1", "kind": "Pod", **doc}, raw), separators=(",", ":")))
        fh.write("]}")


def _strip(doc: dict, raw: bool) -> dict:  # type: ignore[type-arg]
    if not raw:
        md = doc["metadata"]
        md.pop("managedFields", None)
        md.get("annotations", {}).pop("kubectl.kubernetes.io/last-applied-configuration", None)
    return doc


def run_once(path: str, release: str) -> tuple[float, float, int, str]:
    measured = MeasuredKplan(["simulate", "--cluster", path, "-o", "json", "--kube-version", release])
    t = time.perf_counter()
    run = subprocess.run(measured.argv, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t
    rss = measured.peak_rss()
    if run.returncode != 0:
        sys.exit(f"kplan failed ({run.returncode}): {run.stderr.strip()[-500:]}")
    doc = json.loads(run.stdout)
    return doc["timing"]["loadSeconds"], wall, rss, release_words(doc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--raw", action="store_true", help="keep managedFields and last-applied annotations")
    add_release_option(ap)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "snapshot.json")
        t = time.perf_counter()
        write_snapshot(path, a.nodes, a.pods, a.seed, a.raw)
        size = os.path.getsize(path)
        print(f"generated {a.nodes} nodes, {a.pods} pods: {size / 2**20:.0f} MiB in {time.perf_counter() - t:.1f} s")
        for release in releases(a.kube_version):
            print(banner(release), flush=True)
            loads, walls, rss = [], [], 0
            for k in range(a.runs):
                load, wall, peak, words = run_once(path, release)
                if k == 0:
                    print(f"release: {words}")
                loads.append(load)
                walls.append(wall)
                rss = max(rss, peak)
                print(f"run {k + 1}: load {load:.2f} s, process {wall:.2f} s, peak RSS {peak / 2**20:.0f} MiB")
            load = statistics.median(loads)
            print(f"median: load {load:.2f} s (target <= 10 s, {a.pods / load:,.0f} pods/s), process "
                  f"{statistics.median(walls):.2f} s, peak RSS {rss / 2**20:.0f} MiB (target <= 2048 MiB)")


if __name__ == "__main__":
    main()
