"""Benchmark: dynamic resource allocation at cluster scale (run by hand; not a test).

    python benchmarks/bench_dra.py                 # 1,000 GPU nodes, 20,000 running, 2,000 pending
    python benchmarks/bench_dra.py --scale 0.1     # a tenth of it, for a quick look

A seeded generator writes, as JSON under benchmarks/out/dra/: 1,000 nodes (cpu 64, memory
512Gi, pods 110) each publishing one ResourceSlice of 8 GPU devices of driver gpu.example.com
(attributes ``model`` — h100, a100 or l4 by node —, ``index`` and ``numa``; capacity ``memory``
80Gi, 40Gi or 24Gi), DeviceClass ``gpu`` (a CEL selector on the driver), 20,000 running pods of
which 2,000 hold one device through an allocated ResourceClaim, ResourceClaimTemplates asking for
1 or 2 GPUs of a model with at least some memory (a CEL selector with ``quantity``), and 2,000
pending pods each with a claim from one of these templates. The issue's goal: at least 300 pods/s
of scheduling and a peak RSS of at most 1 GiB.

Printed (bench_simulate's report): median wall time of the whole command in-process, median
scheduling time (``timing.scheduleSeconds``) and pods/s of both, and the peak RSS of one more
run as a subprocess.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_simulate import each_release, write_list  # noqa: E402
from benchmarks.releases import add_release_option  # noqa: E402

DRIVER = "gpu.example.com"
MODELS = (("h100", "80Gi"), ("a100", "40Gi"), ("l4", "24Gi"))
TEMPLATES = (("h100", 1, "40Gi"), ("h100", 2, "40Gi"), ("a100", 1, "32Gi"), ("l4", 2, "16Gi"))


def _pod(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": {"app": name.rsplit("-", 1)[0]}},
            "spec": {"containers": [{"name": "main", "image": "registry.example.com/app:1",
                                     "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}], **spec}}


def _template(model: str, count: int, memory: str) -> dict[str, Any]:
    sel = (f'device.attributes["{DRIVER}"].model == "{model}" && '
           f'device.capacity["{DRIVER}"].memory.compareTo(quantity("{memory}")) >= 0')
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": f"{model}-x{count}", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu", "count": count, "selectors": [{"cel": {"expression": sel}}]}}]}}}}


def generate(nodes: int, running: int, holding: int, pending: int, seed: int
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    cluster: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
        *(_template(*t) for t in TEMPLATES),
    ]
    names = [f"node-{i:05d}" for i in range(nodes)]
    for i, name in enumerate(names):
        alloc = {"cpu": "64", "memory": "512Gi", "pods": "110"}
        cluster.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                        "status": {"allocatable": alloc, "capacity": dict(alloc)}})
        model, memory = MODELS[i % len(MODELS)]
        cluster.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                        "metadata": {"name": f"{name}-gpu"},
                        "spec": {"driver": DRIVER, "nodeName": name,
                                 "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                 "devices": [{"name": f"gpu-{k}",
                                              "attributes": {"model": {"string": model}, "index": {"int": k},
                                                             "numa": {"int": k // 4}},
                                              "capacity": {"memory": {"value": memory}}} for k in range(8)]}})
    for j in range(running):
        node = j % nodes
        spec: dict[str, Any] = {"nodeName": names[node]}
        if j < holding:
            claim = f"held-{j:05d}"
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
            cluster.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": claim, "namespace": "default",
                                         "finalizers": ["resource.kubernetes.io/delete-protection"]},
                            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
                            "status": {"allocation": {"devices": {"results": [
                                {"request": "gpu", "driver": DRIVER, "pool": names[node],
                                 "device": f"gpu-{j // nodes}"}]}},
                                "reservedFor": [{"resource": "pods", "name": f"run-{j:05d}",
                                                 "uid": f"default/run-{j:05d}"}]}})
        pod = _pod(f"run-{j:05d}", "500m", **spec)
        pod["status"] = {"phase": "Running"}
        cluster.append(pod)
    pods = []
    for j in range(pending):
        model, count, _ = rng.choice(TEMPLATES)
        pods.append(_pod(f"train-{j:05d}", "2", resourceClaims=[
            {"name": "gpu", "resourceClaimTemplateName": f"{model}-x{count}"}]))
    return cluster, pods


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--running", type=int, default=20000)
    ap.add_argument("--holding", type=int, default=2000, help="running pods holding one device")
    ap.add_argument("--pending", type=int, default=2000)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every count")
    ap.add_argument("--seed", type=int, default=20250101, help="seed of the generator")
    ap.add_argument("--repeat", type=int, default=3, help="in-process runs to take the median of")
    ap.add_argument("--no-rss", action="store_true", help="skip the extra subprocess run for peak RSS")
    add_release_option(ap)
    ap.add_argument("--oracle", action="append", default=[], metavar="RELEASE|RELEASE=PATH|PATH",
                    help="also replay the files through this kube-scheduler oracle at its release (repeatable)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "dra")
    a = ap.parse_args()

    nodes, running, holding, pending = (max(1, int(x * a.scale)) for x in (a.nodes, a.running, a.holding, a.pending))
    a.out.mkdir(parents=True, exist_ok=True)
    cluster_path, pods_path = a.out / "cluster.json", a.out / "pods.json"
    t0 = time.perf_counter()
    cluster, pods = generate(nodes, running, holding, pending, a.seed)
    write_list(cluster_path, cluster)
    write_list(pods_path, pods)
    print(f"generated {nodes} GPU nodes ({nodes * 8} devices), {running} running pods ({holding} holding a "
          f"device), {pending} pending pods with claims (seed {a.seed}) in {time.perf_counter() - t0:.1f} s "
          f"-> {a.out}")
    each_release(a, ["simulate", str(pods_path), "--cluster", str(cluster_path), "-o", "json", "--seed", "1"],
                 [cluster_path, pods_path], pending)


if __name__ == "__main__":
    main()
