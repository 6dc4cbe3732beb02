"""Benchmark a pre-deploy CI check: the whole ``kplan simulate`` process, start to exit.

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_ci_check.py [--nodes 500] [--running 10000] [--deployments 10] [--replicas 100] [--runs 5]

A seeded cluster (500 nodes in 3 zones, 10,000 running pods owned by ReplicaSets, with their
ReplicaSets and a Service per app) and 10 Deployments of 100 replicas each, some with zone spread
and hostname anti-affinity (preferred), are written to a temporary folder; each run is
``python -m kplan simulate deployments.yaml --cluster cluster.json -o github`` in a fresh process,
so the figure includes interpreter start-up, imports, loading, scheduling and rendering; one
more run gives the process's own peak RSS. Target: <= 2 s wall (median over the runs).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.bench_simulate import release_words  # noqa: E402
from benchmarks.peak_rss import MeasuredKplan  # noqa: E402
from benchmarks.releases import add_release_option, banner, releases  # noqa: E402

ZONES = ("zone-a", "zone-b", "zone-c")


def cluster(nodes: int, running: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for i in range(nodes):
        name = f"node-{i:04d}"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3]}},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}})
    apps = 50
    for a in range(apps):
        sel = {"app": f"svc-{a}"}
        items.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": f"svc-{a}-abc", "namespace": "prod"},
                      "spec": {"selector": {"matchLabels": sel}}})
        items.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-{a}", "namespace": "prod"},
                      "spec": {"selector": sel}})
    for j in range(running):
        a = j % apps
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"svc-{a}-abc-{j:05d}", "namespace": "prod", "labels": {"app": f"svc-{a}"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"svc-{a}-abc", "controller": True}]},
            "spec": {"nodeName": f"node-{rng.randrange(nodes):04d}", "containers": [{"name": "c", "image": "app",
                     "resources": {"requests": {"cpu": rng.choice(["100m", "250m", "500m"]),
                                                "memory": rng.choice(["256Mi", "512Mi"])}}}]}})
    return items


def deployments(count: int, replicas: int) -> list[dict[str, Any]]:
    out = []
    for d in range(count):
        labels = {"app": f"new-{d}"}
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": f"new-{d}:1", "resources": {
            "requests": {"cpu": "200m", "memory": "256Mi"}}}]}
        if d % 2 == 0:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                  "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": labels}}]
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                   "labelSelector": {"matchLabels": labels}}}]}}
        out.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"new-{d}", "namespace": "prod"},
                    "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                             "template": {"metadata": {"labels": labels}, "spec": spec}}})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--running", type=int, default=10_000)
    ap.add_argument("--deployments", type=int, default=10)
    ap.add_argument("--replicas", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    add_release_option(ap)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cpath, dpath = os.path.join(tmp, "cluster.json"), os.path.join(tmp, "deployments.json")
        with open(cpath, "w") as fh:
            json.dump({"apiVersion": "v1", "kind": "List", "items": cluster(a.nodes, a.running, a.seed)}, fh)
        with open(dpath, "w") as fh:
            json.dump({"apiVersion": "v1", "kind": "List", "items": deployments(a.deployments, a.replicas)}, fh)
        # kplan as pip installs it runs from compiled bytecode: let the child write and read .pyc
        # files even where the environment turns them off (PYTHONDONTWRITEBYTECODE), and compile them
        # in one untimed run, or every timed run would pay for compiling kplan's sources
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for version in releases(a.kube_version):
            print(banner(version), flush=True)
            at_release(a, cpath, dpath, env, version)


def at_release(a: argparse.Namespace, cpath: str, dpath: str, env: dict[str, str], version: str) -> None:
    """``--runs`` whole processes modelling ``version``, and their median."""
    release = ["--kube-version", version]
    argv = [sys.executable, "-m", "kplan", "simulate", dpath, "--cluster", cpath, "-o", "github", *release]
    subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    # the release the runs model, as kplan's document names it (one more untimed run)
    doc = subprocess.run([*argv[:-2 - len(release)], "-o", "json", *release], cwd=ROOT, capture_output=True,
                         text=True, env=env).stdout
    parsed = json.loads(doc)
    print(f"release: {release_words(parsed)}")
    timing = parsed.get("timing") or {}
    print(f"(the -o json run: loading {timing.get('loadSeconds', 0):.2f} s, scheduling "
          f"{timing.get('scheduleSeconds', 0):.2f} s of wall time)")
    walls, cpus = [], []
    for k in range(a.runs):
        t = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        walls.append(time.perf_counter() - t)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if run.returncode not in (0, 1):
            sys.exit(f"kplan failed ({run.returncode}): {run.stderr.strip()[-500:]}")
        notice = [line for line in run.stdout.splitlines() if line.startswith("::notice")]
        print(f"run {k + 1}: {walls[-1]:.2f} s ({cpus[-1]:.2f} s of CPU), exit {run.returncode}; "
              f"{notice[-1] if notice else ''}")
    pods = a.deployments * a.replicas
    # one more run, measured by the child itself (its start-up imports benchmarks/peak_rss.py,
    # so its wall time is not one of the above)
    measured = MeasuredKplan(["simulate", dpath, "--cluster", cpath, "-o", "github", *release])
    subprocess.run(measured.argv, cwd=ROOT, capture_output=True, text=True, env=env)
    print(f"median: {statistics.median(walls):.2f} s wall for {pods} pods (targets: <= 2 s, and <= 1 s for the hostile-input issue), "
          f"{pods / statistics.median(walls):.0f} pods/s over the whole process, "
          f"median CPU {statistics.median(cpus):.2f} s, "
          f"peak RSS {measured.peak_rss() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
