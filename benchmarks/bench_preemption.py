"""Benchmark: preemption at cluster scale (run by hand; not a test).

    python benchmarks/bench_preemption.py                     # 5,000 nodes, 1,000 preemptors
    python benchmarks/bench_preemption.py --pending 5000      # 5,000 preemptors
    python benchmarks/bench_preemption.py --constrained       # PDBs, zone spread, anti-affinity
    python benchmarks/bench_preemption.py --scale 0.1         # a tenth of it, for a quick look
    python benchmarks/bench_preemption.py --kube-version 1.37 --oracle 1.37   # and the real scheduler

A seeded generator writes a full cluster and pending pods that each must preempt, as JSON under
benchmarks/out/preemption/: 5,000 nodes (cpu 4, memory 16Gi, pods 110; zones a/b/c round robin;
hostname and zone labels), PriorityClasses ``low`` (10) and ``high`` (1000), four running ``low``
pods per node, each requesting 1000m minus 0, 50 or 100m cpu and 1Gi memory, with distinct
creationTimestamps, and pending ``high`` pods requesting 1500m, 2 or 2500m cpu and 2Gi memory.
``--constrained`` adds a PodDisruptionBudget over a third of the low pods, and a required zone
topology spread plus preferred hostname anti-affinity on the high pods, so that the filters that
read other pods take part in the dry run. The default KubeSchedulerConfiguration is used
(adaptive percentageOfNodesToScore, DefaultPreemption's default arguments).

Printed (bench_simulate's report), at every release kplan models in turn (``--kube-version``
picks some), each release first: median wall time of the whole command in-process, median
scheduling time (``timing.scheduleSeconds``) and pods/s of both, and the peak RSS of one more
run as a subprocess. ``--oracle RELEASE`` (as bench_simulate's) replays the same files through
the real kube-scheduler of that release after kplan's runs at it, and prints kplan's speed-up.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_simulate import each_release, write_list  # noqa: E402
from benchmarks.releases import add_release_option  # noqa: E402

ZONES = ("a", "b", "c")
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def _stamp(seconds: int) -> str:
    return (EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(name: str, labels: dict[str, str], cpu: str, memory: str, priority_class: str,
         **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"priorityClassName": priority_class,
                     "containers": [{"name": "main", "image": "registry.example.com/app:1",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
                     **spec}}


def generate(nodes: int, pending: int, seed: int, constrained: bool
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    cluster: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    ]
    started = 0
    for i in range(nodes):
        name = f"node-{i:05d}"
        alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
        cluster.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                              "topology.kubernetes.io/zone": ZONES[i % 3]}},
                        "status": {"allocatable": alloc, "capacity": dict(alloc)}})
        for k in range(4):
            started += 1
            # a third of the low pods are the PDB's (constrained variant), spread over the nodes
            group = "guarded" if constrained and (i * 4 + k) % 3 == 0 else "batch"
            pod = _pod(f"low-{i:05d}-{k}", {"app": group, "tier": "low"}, f"{1000 - rng.choice((0, 50, 100))}m",
                       "1Gi", "low", nodeName=name)
            pod["metadata"]["creationTimestamp"] = _stamp(started)
            pod["status"] = {"phase": "Running", "startTime": _stamp(started)}
            cluster.append(pod)
    if constrained:
        guarded = sum(1 for i in range(nodes * 4) if i % 3 == 0)
        cluster.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": "guarded", "namespace": "default"},
                        "spec": {"selector": {"matchLabels": {"app": "guarded"}}, "minAvailable": guarded // 2}})

    pods: list[dict[str, Any]] = []
    for j in range(pending):
        spec: dict[str, Any] = {}
        if constrained:
            spec["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "serving"}}}]
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 50, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                  "labelSelector": {"matchLabels": {"app": "serving"}}}}]}}
        pods.append(_pod(f"high-{j:05d}", {"app": "serving", "tier": "high"}, rng.choice(("1500m", "2", "2500m")),
                         "2Gi", "high", **spec))
    return cluster, pods


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pending", type=int, default=1000, help="pending high-priority pods (preemptors)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the node and pending counts")
    ap.add_argument("--constrained", action="store_true",
                    help="add a PDB over a third of the low pods, zone spread and hostname anti-affinity")
    ap.add_argument("--seed", type=int, default=20250101, help="seed of the generator")
    ap.add_argument("--repeat", type=int, default=3, help="in-process runs to take the median of")
    ap.add_argument("--no-rss", action="store_true", help="skip the extra subprocess run for peak RSS")
    add_release_option(ap)
    ap.add_argument("--oracle", action="append", default=[], metavar="RELEASE|RELEASE=PATH|PATH",
                    help="also replay the files through this kube-scheduler oracle at its release (repeatable)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "preemption")
    a = ap.parse_args()

    nodes, pending = (max(1, int(x * a.scale)) for x in (a.nodes, a.pending))
    a.out.mkdir(parents=True, exist_ok=True)
    cluster_path, pods_path = a.out / "cluster.json", a.out / "pods.json"
    t0 = time.perf_counter()
    cluster, pods = generate(nodes, pending, a.seed, a.constrained)
    write_list(cluster_path, cluster)
    write_list(pods_path, pods)
    variant = "constrained" if a.constrained else "plain"
    print(f"generated {nodes} nodes, {nodes * 4} running low pods, {pending} pending high pods ({variant}, "
          f"seed {a.seed}) in {time.perf_counter() - t0:.1f} s -> {a.out}")
    each_release(a, ["simulate", str(pods_path), "--cluster", str(cluster_path), "-o", "json", "--seed", "1"],
                 [cluster_path, pods_path], pending)


if __name__ == "__main__":
    main()
