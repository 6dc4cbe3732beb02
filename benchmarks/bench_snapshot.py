"""Benchmark ``kplan snapshot`` against a loopback API server: 5,000 nodes and 150,000 pods.

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_snapshot.py [--nodes 5000] [--pods 150000] [--runs 3] [--output snap.json] [--tls]

The objects are generated from a seed and look like a real cluster's (owner references, a few
containers with requests, env, probes, volume mounts, status conditions, managedFields, kubectl's
last-applied annotation), about 5 KB of JSON per pod as served. The server runs in its own process
so it does not share the GIL with kplan. Each run is ``python -m kplan snapshot`` in a fresh
process; the time is wall clock, the peak RSS is the child's own (benchmarks/peak_rss.py). Targets: <= 30 s and
<= 2 GiB (median over the runs).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.peak_rss import MeasuredKplan  # noqa: E402
from tests.integration.fake_apiserver import FakeApiServer  # noqa: E402

TOKEN = "bench-token"
ZONES = ("zone-a", "zone-b", "zone-c")


def _compact(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def make_node(i: int, rng: random.Random) -> dict[str, Any]:
    name = f"node-{i:05d}"
    cpu, mem = rng.choice(((8, 32), (16, 64), (32, 128), (64, 256)))
    return {
        "metadata": {
            "name": name, "uid": f"00000000-0000-4000-8000-{i:012d}", "resourceVersion": str(1000 + i),
            "creationTimestamp": "2025-01-01T00:00:00Z",
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "topology.kubernetes.io/zone": ZONES[i % 3], "topology.kubernetes.io/region": "region-1",
                       "node.kubernetes.io/instance-type": f"m.{cpu}x"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                               "time": "2025-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:status": {"f:allocatable": {}, "f:capacity": {}, "f:conditions": {},
                                                         "f:images": {}, "f:nodeInfo": {}}}}],
        },
        "spec": {"podCIDR": f"10.{i // 256}.{i % 256}.0/24", "providerID": f"fake://{name}"},
        "status": {
            "capacity": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "allocatable": {"cpu": f"{cpu * 1000 - 100}m", "memory": f"{mem * 1024 - 512}Mi", "pods": "110",
                            "ephemeral-storage": "95Gi"},
            "conditions": [{"type": t, "status": "False" if t != "Ready" else "True",
                            "lastHeartbeatTime": "2025-01-01T00:00:00Z", "lastTransitionTime": "2025-01-01T00:00:00Z",
                            "reason": f"Kubelet{t}", "message": f"kubelet reports {t}"}
                           for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
            "images": [{"names": [f"registry.example/app-{j}@sha256:{j:064x}", f"registry.example/app-{j}:v1"],
                        "sizeBytes": 50_000_000 + j * 1000} for j in rng.sample(range(200), 8)],
            "nodeInfo": {"kubeletVersion": "v1.34.1", "containerRuntimeVersion": "containerd://2.0.0",
                         "osImage": "Debian GNU/Linux 12", "architecture": "amd64", "operatingSystem": "linux"},
        },
    }


def make_pod(i: int, node: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
    ns = f"team-{i % 40:02d}"
    app = f"app-{i % 1500:04d}"
    rs = f"{app}-7d9f8c6b5"
    name = f"{rs}-{i:06x}"
    cpu = rng.choice(("100m", "250m", "500m", "1"))
    mem = rng.choice(("128Mi", "256Mi", "512Mi", "1Gi"))
    container = {
        "name": "main", "image": f"registry.example/{app}:v{i % 7}", "imagePullPolicy": "IfNotPresent",
        "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}],
        "env": [{"name": "APP", "value": app}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.name"}}}],
        "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": {"memory": mem}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10,
                           "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "readOnly": True}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
    }
    doc = {
        "metadata": {
            "name": name, "namespace": ns, "uid": f"10000000-0000-4000-8000-{i:012d}",
            "resourceVersion": str(100000 + i), "creationTimestamp": "2025-01-02T00:00:00Z",
            "generateName": f"{rs}-",
            "labels": {"app": app, "pod-template-hash": "7d9f8c6b5", "team": ns},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": app}}})},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "controller": True,
                                 "blockOwnerDeletion": True, "uid": f"20000000-0000-4000-8000-{i % 1500:012d}"}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                 "time": "2025-01-02T00:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}},
                              "f:spec": {"f:containers": {'k:{"name":"main"}': {".": {}, "f:env": {},
                                                                               "f:image": {}, "f:resources": {}}}}}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "subresource": "status",
                 "time": "2025-01-02T00:01:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:hostIP": {},
                                           "f:phase": {}, "f:podIP": {}, "f:startTime": {}}}}],
        },
        "spec": {
            "containers": [container], "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "serviceAccountName": "default", "nodeName": node,
            "schedulerName": "default-scheduler", "priority": 0, "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300},
                            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
        },
        "status": {
            "phase": "Running", "hostIP": "10.0.0.1", "podIP": f"10.1.{i // 256 % 256}.{i % 256}",
            "startTime": "2025-01-02T00:00:10Z", "qosClass": "Burstable",
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": "2025-01-02T00:00:10Z"}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                     "PodScheduled")],
            "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0, "started": True,
                                   "image": container["image"], "imageID": f"registry.example/{app}@sha256:{i:064x}",
                                   "containerID": f"containerd://{i:064x}",
                                   "state": {"running": {"startedAt": "2025-01-02T00:00:12Z"}}}],
        },
    }
    return ns, doc


def serve(nodes: int, pods: int, seed: int, tls: tuple[str, str] | None, conn: Any) -> None:
    """Child process: generate the cluster, serve it, report the URL and bytes served, wait for 'stop'."""
    rng = random.Random(seed)
    srv = FakeApiServer(token=TOKEN, tls=tls)
    names = [f"node-{i:05d}" for i in range(nodes)]
    served = 0
    for i in range(nodes):
        body = _compact(make_node(i, rng))
        served += len(body)
        srv.add_serialized("nodes", "", "", body)
    for i in range(pods):
        ns, doc = make_pod(i, names[rng.randrange(nodes)], rng)
        body = _compact(doc)
        served += len(body)
        srv.add_serialized("pods", ns, "Running", body)
    srv.add({"kind": "Namespace", "metadata": {"name": f"team-{t:02d}"}} for t in range(40))
    srv.add({"kind": "ReplicaSet", "metadata": {"name": f"app-{a:04d}-7d9f8c6b5", "namespace": f"team-{a % 40:02d}"},
             "spec": {"selector": {"matchLabels": {"app": f"app-{a:04d}"}}}} for a in range(1500))
    srv.start()
    conn.send((srv.url, served))
    conn.recv()
    srv.stop()


def run_once(config: str, out: str, extra: list[str]) -> tuple[float, float, int]:
    env = {**os.environ, "PYTHONPATH": ROOT}
    t0 = time.perf_counter()
    measured = MeasuredKplan(["snapshot", "--kubeconfig", config, "--output-file", out, "--force", *extra])
    proc = subprocess.Popen(measured.argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    peak = measured.peak_rss()
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"kplan snapshot failed ({proc.returncode}): {err.strip()}")
    # CPU seconds tell kplan's own cost when other work shares the machine's two cores
    return elapsed, usage.ru_utime + usage.ru_stime, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--output", default="snapshot.json", help="file name (suffix picks the format) in a temp folder")
    ap.add_argument("--tls", action="store_true", help="serve https with a throwaway CA and server certificate")
    ap.add_argument("--chunk-size", type=int, default=500)
    args = ap.parse_args()
    # the other benchmarks run at every modelled release (benchmarks/releases.py); this one has none
    print("release: none (kplan snapshot copies the cluster's objects and models no scheduler release)")

    with tempfile.TemporaryDirectory(prefix="kplan-bench-") as tmp:
        tls = None
        ca = None
        if args.tls:
            from tests.integration import certs

            made = certs.make(tmp)
            tls, ca = (made.server_cert, made.server_key), made.ca
        from tests.integration.live import kubeconfig

        parent, child = multiprocessing.Pipe()
        t0 = time.perf_counter()
        server = multiprocessing.get_context("fork").Process(
            target=serve, args=(args.nodes, args.pods, args.seed, tls, child), daemon=True)
        server.start()
        url, served = parent.recv()
        print(f"generated {args.nodes:,} nodes and {args.pods:,} pods ({served / 2**20:,.0f} MiB of JSON) "
              f"in {time.perf_counter() - t0:.1f} s; serving on {url}", file=sys.stderr)
        config = kubeconfig(tmp, url, token=TOKEN, ca=ca)
        out = os.path.join(tmp, args.output)
        times, cpus, peaks = [], [], []
        try:
            for i in range(args.runs):
                elapsed, cpu, peak = run_once(config, out, ["--chunk-size", str(args.chunk_size)])
                times.append(elapsed)
                cpus.append(cpu)
                peaks.append(peak)
                print(f"run {i + 1}: {elapsed:.2f} s ({cpu:.2f} s CPU), peak RSS {peak / 2**20:,.0f} MiB, "
                      f"{os.path.getsize(out) / 2**20:,.0f} MiB written; load average {os.getloadavg()[0]:.1f}",
                      file=sys.stderr)
        finally:
            parent.send("stop")
            server.join(10)
        t, m = statistics.median(times), statistics.median(peaks)
        verdict = "OK" if t <= 30 and m <= 2 * 2**30 else "OVER TARGET"
        print(f"kplan snapshot, {args.nodes:,} nodes + {args.pods:,} pods -> {args.output}: median {t:.2f} s "
              f"({statistics.median(cpus):.2f} s CPU), peak RSS {m / 2**20:,.0f} MiB over {args.runs} runs "
              f"(target <= 30 s, <= 2048 MiB): {verdict}")


if __name__ == "__main__":
    main()
