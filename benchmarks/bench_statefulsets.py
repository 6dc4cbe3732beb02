"""Benchmark: StatefulSet replicas with volume claims on a large cluster (run by hand; not a test).

    python benchmarks/bench_statefulsets.py                 # 5,000 nodes, 50,000 running, 1,000 replicas
    python benchmarks/bench_statefulsets.py --scale 0.1     # a tenth of that

The cluster of bench_simulate.py (same generator and seed) gets storage: a default gp3 class
(the EBS CSI driver, WaitForFirstConsumer), a CSINode with an attach limit of 25 on every node,
and a tenth of the running pods own a bound claim on a CSI volume, so the volume plugins see
nodes with and without attached volumes. Pending: 5 StatefulSets (Parallel) of 200 replicas,
each replica with one claim from its volumeClaimTemplate. The command runs in-process
(``-o json``) ``--repeat`` times, then once as a subprocess for its own peak RSS.

Printed as by bench_simulate.py: the median wall time of the whole command and the median
scheduling time (kplan's ``scheduleSeconds``), pods/s over each, and the peak RSS.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_simulate import each_release, generate, parse_arguments, write_list  # noqa: E402

DRIVER = "ebs.csi.aws.com"
STATEFULSETS = 5


def storage(cluster: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """The cluster with storage: class, driver, CSINodes, and claims for a tenth of its pods."""
    out = list(cluster)
    out.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "gp3", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                "provisioner": DRIVER, "volumeBindingMode": "WaitForFirstConsumer"})
    out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": DRIVER},
                "spec": {"attachRequired": True}})
    for obj in cluster:
        if obj["kind"] == "Node":
            name = obj["metadata"]["name"]
            out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
                        "spec": {"drivers": [{"name": DRIVER, "nodeID": name, "allocatable": {"count": 25},
                                              "topologyKeys": ["topology.kubernetes.io/zone"]}]}})
    for i, obj in enumerate(cluster):
        if obj["kind"] != "Pod" or rng.random() >= 0.1:
            continue
        ns, claim = obj["metadata"]["namespace"], f"data-{i}"
        obj["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": claim, "namespace": ns, "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3", "volumeName": f"pv-{i}",
                             "resources": {"requests": {"storage": "10Gi"}}},
                    "status": {"phase": "Bound"}})
        out.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{i}"},
                    "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                             "storageClassName": "gp3", "csi": {"driver": DRIVER, "volumeHandle": f"vol-{i:08x}"},
                             "claimRef": {"namespace": ns, "name": claim}},
                    "status": {"phase": "Bound"}})
    return out


def statefulset(name: str, replicas: int, rng: random.Random) -> dict[str, Any]:
    requests = {"cpu": rng.choice(("250m", "500m", "1")), "memory": rng.choice(("512Mi", "1Gi", "2Gi"))}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "apps"},
            "spec": {"replicas": replicas, "serviceName": name, "podManagementPolicy": "Parallel",
                     "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                         {"name": "db", "image": "registry.example.com/db:1", "resources": {"requests": requests},
                          "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}}}]}}


def main() -> None:
    a = parse_arguments(__doc__, "--replicas", 1000, "replicas in all, over the StatefulSets")

    nodes, running, replicas = (max(1, int(x * a.scale)) for x in (a.nodes, a.running, a.replicas))
    a.out.mkdir(parents=True, exist_ok=True)
    cluster_path, sets_path = a.out / "cluster-storage.json", a.out / "statefulsets.json"
    t0 = time.perf_counter()
    rng = random.Random(a.seed)
    cluster, _ = generate(nodes, running, 0, a.seed)
    per_set = max(1, replicas // STATEFULSETS)
    write_list(cluster_path, storage(cluster, rng))
    write_list(sets_path, [statefulset(f"db{k}", per_set, rng) for k in range(STATEFULSETS)])
    pending = per_set * STATEFULSETS
    print(f"generated {nodes} nodes, {running} running pods with storage, {STATEFULSETS} StatefulSets of "
          f"{per_set} replicas (seed {a.seed}) in {time.perf_counter() - t0:.1f} s -> {a.out}")

    args = ["simulate", str(sets_path), "--cluster", str(cluster_path), "-o", "json", "--seed", "1"]
    each_release(a, args, [cluster_path, sets_path], pending)

if __name__ == "__main__":
    main()
