#!/usr/bin/env python3
"""Benchmark: inter-pod anti-affinity and topology spread at scale (run by hand, not a test).

A seeded generator builds a cluster of nodes in three zones with running pods owned by
ReplicaSets, and pending pods of Deployments-worth of replicas (ownerReferences to ReplicaSets
that exist in the cluster) that carry hostname pod anti-affinity (required or preferred) and zone
topology spread (DoNotSchedule or ScheduleAnyway). Each run happens in a fresh child process so
that its peak RSS (its own high-water mark, benchmarks/peak_rss.py) is its own; the report gives
medians.

    PYTHONPATH=. python benchmarks/bench_affinity_spread.py [--nodes 5000 --running 30000
        --pending 10000 --deployments 100 --runs 3 --seed 1]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.peak_rss import own_peak_rss  # noqa: E402
from benchmarks.releases import add_release_option, banner, releases  # noqa: E402

ZONES = ("zone-a", "zone-b", "zone-c")


def node(i: int, rng: random.Random) -> dict[str, Any]:
    name = f"node-{i:05d}"
    zone = ZONES[i % len(ZONES)]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
                                                  "topology.kubernetes.io/region": "region-1"}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                       "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def replica_set(ns: str, app: str, h: str) -> dict[str, Any]:
    labels = {"app": app, "pod-template-hash": h}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": f"{app}-{h}", "namespace": ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}


def pod(ns: str, app: str, h: str, k: int, rng: random.Random, variant: int | None, node_name: str | None
        ) -> dict[str, Any]:
    labels = {"app": app, "pod-template-hash": h}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {
        "cpu": f"{rng.choice((100, 200, 250, 500))}m", "memory": f"{rng.choice((128, 256, 512, 1024))}Mi"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if variant is not None:
        term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
        if variant % 2 == 0:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        else:
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": term}]}}
        when = "DoNotSchedule" if variant % 4 in (0, 3) else "ScheduleAnyway"
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": when,
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{app}-{h}-{k:05d}", "namespace": ns, "labels": labels,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-{h}",
                                              "uid": f"uid-{app}-{h}", "controller": True}]},
            "spec": spec}


def generate(a: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(a.seed)
    cluster: list[dict[str, Any]] = [node(i, rng) for i in range(a.nodes)]
    names = [n["metadata"]["name"] for n in cluster]
    for ns in ("default", "prod"):
        cluster.append({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}})
    # the Deployments whose replicas are pending, and other workloads that only run
    deployments = [("prod" if d % 3 == 0 else "default", f"svc{d:03d}", f"{rng.getrandbits(32):08x}")
                   for d in range(a.deployments)]
    others = [("prod" if d % 3 == 0 else "default", f"bg{d:03d}", f"{rng.getrandbits(32):08x}")
              for d in range(2 * a.deployments)]
    for ns, app, h in deployments + others:
        cluster.append(replica_set(ns, app, h))
    # a tenth of the running pods are earlier replicas of the pending Deployments (with their
    # anti-affinity and spread), the rest background pods, a fifth of those with anti-affinity
    for k in range(a.running):
        if k % 10 == 0:
            d = rng.randrange(len(deployments))
            ns, app, h = deployments[d]
            variant: int | None = d if not a.plain else None
        else:
            d = rng.randrange(len(others))
            ns, app, h = others[d]
            variant = (d * 2) if d % 5 == 0 and not a.plain else None
        cluster.append(pod(ns, app, h, k, rng, variant, rng.choice(names)))
    pending = []
    per = a.pending // a.deployments
    for d, (ns, app, h) in enumerate(deployments):
        for k in range(per):
            pending.append(pod(ns, app, h, a.running + d * per + k, rng, d if not a.plain else None, None))
    return cluster, pending


def child(a: argparse.Namespace) -> None:
    from kplan.framework.release import Release
    from kplan.io.scheduler_config import scheduler_setup
    from kplan.io.workspace import load_scenario
    from kplan.model.raw import RawObject
    from kplan.report.document import ReleaseInfo
    from kplan.scheduler.simulate import run_simulation

    cluster, pending = generate(a)
    (version,) = releases(a.kube_version)
    release = Release.of(version)
    setup = scheduler_setup(None, release)
    t0 = time.perf_counter()
    scenario = load_scenario([RawObject(d, "cluster") for d in cluster], [RawObject(d, "pods") for d in pending])
    load_s = time.perf_counter() - t0
    del cluster, pending
    t1 = time.perf_counter()
    result = run_simulation(scenario.snapshot, setup, scenario.pending, seed=a.seed)
    schedule_s = time.perf_counter() - t1
    scheduled = sum(1 for o in result.pods if o.status == "Scheduled")
    rss_mb = own_peak_rss() / 2**20
    print(json.dumps({"pods_per_s": len(result.pods) / schedule_s, "seconds": schedule_s,
                      "load_seconds": load_s, "scheduled": scheduled, "pods": len(result.pods),
                      "peak_rss_mb": rss_mb, "release": ReleaseInfo.of(release).words}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--running", type=int, default=30000)
    ap.add_argument("--pending", type=int, default=10000)
    ap.add_argument("--deployments", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plain", action="store_true", help="the same pods without affinity or spread (baseline)")
    add_release_option(ap)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a)
        return
    for release in releases(a.kube_version):
        print(banner(release), flush=True)
        at_release(a, release)


def at_release(a: argparse.Namespace, release: str) -> None:
    """``--runs`` fresh processes modelling ``release``, and their medians."""
    runs = []
    for i in range(a.runs):
        argv = [sys.executable, __file__, "--child"] + [f"--{k}={v}" for k, v in (
            ("nodes", a.nodes), ("running", a.running), ("pending", a.pending), ("deployments", a.deployments),
            ("seed", a.seed), ("kube-version", release))] + (["--plain"] if a.plain else [])
        out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        runs.append(r)
        if i == 0:
            print(f"release: {r['release']}")
        print(f"run {i + 1}: {r['pods_per_s']:.0f} pods/s ({r['seconds']:.1f} s scheduling, {r['load_seconds']:.1f} s "
              f"loading), {r['scheduled']}/{r['pods']} scheduled, peak RSS {r['peak_rss_mb']:.0f} MiB", flush=True)
    print(f"median: {statistics.median(r['pods_per_s'] for r in runs):.0f} pods/s "
          f"({statistics.median(r['seconds'] for r in runs):.2f} s scheduling), "
          f"peak RSS {statistics.median(r['peak_rss_mb'] for r in runs):.0f} MiB over {len(runs)} runs")


if __name__ == "__main__":
    main()
