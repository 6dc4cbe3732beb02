"""Benchmark the cluster-autoscaler's scale-up (issue 48 item 5: 10 node groups, 5,000 pending pods, a
1,000-node cluster, in at most 10 s).

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_cluster_autoscaler.py [--nodes 1000] [--pending 5000] [--groups 10] [--seed 1]

A seeded cluster: nodes of 8 cores / 32 GiB over three zones, each with running pods filling it to
50-95 %; pending pods in 50 Deployments (250m-4 cores, 256Mi-8Gi, some with a zone selector or
hostname anti-affinity, unless --no-anti-affinity); node groups of 4-32 cores, each ``like`` one node of its zone with a
``workload`` label, maxSize 200. One scale-up (kplan.autoscaler.clusterautoscaler.orchestrator) runs
on the cluster as kube-scheduler's pass would leave it; the figures printed: its time, the options and
the choice. It runs at every release kplan models in turn (``--kube-version`` picks some), each
release first: the estimator places pods with that release's kube-scheduler filters.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.releases import add_release_option, banner, releases  # noqa: E402

ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")


def node(name: str, zone: str, cpu: int, mem_gi: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": str(cpu), "memory": f"{mem_gi}Gi", "pods": "110"},
                       "capacity": {"cpu": str(cpu), "memory": f"{mem_gi}Gi", "pods": "110"}}}


def pod(name: str, app: str, cpu_m: int, mem_mi: int, node_name: str = "", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}", "labels": {"app": app},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app,
                                              "uid": f"rs-{app}", "controller": True}]},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x", "resources": {
                "requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"}}}], **spec}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pending", type=int, default=5000)
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-anti-affinity", action="store_true",
                    help="no Deployment with hostname anti-affinity: the estimator reserves its nodes ahead")
    ap.add_argument("--one-by-one", action="store_true", help="never reserve the estimate's nodes ahead")
    add_release_option(ap)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    from kplan.autoscaler.clusterautoscaler.expander import build_chain
    from kplan.autoscaler.clusterautoscaler.orchestrator import Template, scale_up
    from kplan.framework.release import Release
    from kplan.model.clusterautoscaler import NodeGroup
    from kplan.model.parse import parse_node, parse_pod
    from kplan.scheduler.setup import SchedulerSetup
    from kplan.whatif.changes import clone_node

    nodes = [parse_node(node(f"n-{i}", ZONES[i % 3], 8, 32), "bench") for i in range(args.nodes)]
    bound: dict[str, list[Any]] = {}
    for i, n in enumerate(nodes):
        share = rng.uniform(0.5, 0.95)
        bound[n.name] = [parse_pod(pod(f"run-{i}", f"run-{i % 20}", int(8000 * share), int(32768 * share),
                                       n.name), "bench")]
    pending = []
    for d in range(50):
        cpu, mem = rng.choice([(250, 256), (500, 1024), (1000, 2048), (2000, 4096), (4000, 8192)])
        extra: dict[str, Any] = {}
        if d % 7 == 0:
            extra["nodeSelector"] = {"topology.kubernetes.io/zone": ZONES[d % 3]}
        if d % 11 == 0 and not args.no_anti_affinity:
            extra["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": f"app-{d}"}}, "topologyKey": "kubernetes.io/hostname"}]}}
        for r in range(args.pending // 50):
            pending.append(parse_pod(pod(f"app-{d}-{r}", f"app-{d}", cpu, mem, **extra), "bench"))
    templates = []
    for g in range(args.groups):
        cpu = (4, 8, 16, 32)[g % 4]
        like = nodes[g % 3]
        t = clone_node(like, f"template-node-for-g{g}")
        t = parse_node(node(t.name, ZONES[g % 3], cpu, cpu * 4), "bench")
        templates.append(Template(NodeGroup(f"g{g}", 0, 200, like=like.name, size=0), t))
    for release in releases(args.kube_version):
        print(banner(release), flush=True)
        setup = SchedulerSetup.of(Release.of(release))
        print(f"release: {setup.release}")
        chain = build_chain(["least-waste"], seed=args.seed)
        t0 = time.perf_counter()
        got = scale_up(setup, nodes, bound, pending, templates, {}, chain, reserve=not args.one_by_one)
        took = time.perf_counter() - t0
        print(f"{args.nodes} nodes, {len(pending)} pending pods, {args.groups} node groups: scale-up {took:.2f} s")
        for o in got.considered:
            print(f"  {o.node_group}: {o.node_count} nodes, {len(o.pods)} pods, score {o.score}")
        print(f"  chosen {got.chosen} +{got.node_count} ({got.decided_by}); {len(got.unhelped)} pods unhelped")

if __name__ == "__main__":
    main()
