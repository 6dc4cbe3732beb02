"""Benchmark of ``kplan simulate`` on a large generated cluster (run by hand; not a test).

    python benchmarks/bench_simulate.py                 # 5,000 nodes, 50,000 running, 10,000 pending
    python benchmarks/bench_simulate.py --scale 0.1     # a tenth of that, for a quick look
    python benchmarks/bench_simulate.py --unschedulable 0.12   # 12 % of the pending pods fit nowhere

A seeded generator writes a cluster (3 zones; general, memory, spot and tainted GPU pools) and
pending pods (plain requests, nodeSelectors, required and preferred node affinity, tolerations,
GPU requests, and 0.5 % (``--unschedulable``) that fit nowhere: each of those requests a whole
node's cpu, so preemption's dry run tries every node that has a pod and finds nothing of lower
priority to evict) as JSON under benchmarks/out/. The command then runs
in-process (typer's CliRunner, ``-o json``) ``--repeat`` times with the default
percentageOfNodesToScore, and once more as a subprocess to measure its peak RSS.

Printed: median wall time of the whole command, median scheduling time (kplan's own
``scheduleSeconds``), the median CPU time of the scheduling loop (Simulation.drain, measured
here: on a loaded machine wall time overstates it), pods/s for each, and the subprocess's own peak RSS (benchmarks/peak_rss.py).

It runs at every release kplan models in turn, printing each release first (``--kube-version``
picks some: benchmarks/releases.py).

``--python-path`` also runs kplan with ``KPLAN_KERNEL=python`` (every cycle through the
per-plugin Python alone, without the compiled cycle) after each release's runs, and prints the
compiled cycle's speed-up.

``--oracle 1.37`` (a release whose oracle is built in oracle/bin, ``1.34=PATH``, or a binary's path
named ``kube-scheduler-oracle-<release>``; repeatable) also replays the same files through the real
kube-scheduler of that release (``kube-scheduler-oracle replay``, its real-time mode: the
scheduler's own goroutines and informers on a fake API server), right after kplan's runs at that
release, and prints its release, pods bound, pods/s and kplan's speed-up over it.
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
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.peak_rss import MeasuredKplan  # noqa: E402
from benchmarks.releases import add_release_option, banner, releases  # noqa: E402

REGION = "bench-1"
ZONES = ("a", "b", "c")
#: (pool, weight, cpu, memory, extra allocatable, taints)
POOLS: tuple[tuple[str, int, str, str, dict[str, str], list[dict[str, str]]], ...] = (
    ("general", 70, "15900m", "60Gi", {}, []),
    ("memory", 15, "15900m", "124Gi", {}, []),
    ("spot", 8, "7900m", "30Gi", {}, [{"key": "capacity-type", "value": "spot", "effect": "PreferNoSchedule"}]),
    ("gpu", 7, "31900m", "240Gi", {"nvidia.com/gpu": "8"},
     [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]),
)
CPU_CHOICES = ("50m", "100m", "250m", "500m", "1", "2")
MEM_CHOICES = ("64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi")
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
SPOT_TOLERATION = {"key": "capacity-type", "operator": "Equal", "value": "spot", "effect": "PreferNoSchedule"}


def _pod(name: str, ns: str, rng: random.Random, node: str | None = None, **spec: Any) -> dict[str, Any]:
    req = {"cpu": rng.choice(CPU_CHOICES), "memory": rng.choice(MEM_CHOICES)}
    req.update(spec.pop("extra_requests", {}))
    # extended resources cannot be overcommitted: the API server wants their limit equal to the request
    limits = {k: v for k, v in req.items() if "/" in k}
    resources: dict[str, Any] = {"requests": req, **({"limits": limits} if limits else {})}
    container: dict[str, Any] = {"name": "main", "image": f"registry.example.com/app-{rng.randrange(40)}:1",
                                 "resources": resources}
    body: dict[str, Any] = {"containers": [container], **spec}
    if node is not None:
        body["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name.rsplit("-", 1)[0]}},
            "spec": body}


#: the share of pending pods that fit nowhere unless --unschedulable says otherwise
UNSCHEDULABLE = 0.005
#: the cpu request of those: the allocatable cpu of the largest pool without a NoSchedule taint
MISFIT_CPU = "15900m"


def generate(nodes: int, running: int, pending: int, seed: int, unschedulable: float = UNSCHEDULABLE
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    cluster: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in ("default", "apps", "ml")]
    pools: dict[str, list[str]] = {p[0]: [] for p in POOLS}
    weights = [p[1] for p in POOLS]
    for i in range(nodes):
        pool, _, cpu, mem, extra, taints = rng.choices(POOLS, weights)[0]
        zone = ZONES[i % len(ZONES)]
        name = f"node-{i:05d}"
        alloc = {"cpu": cpu, "memory": mem, "pods": "110", "ephemeral-storage": "200Gi", **extra}
        cluster.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "topology.kubernetes.io/region": REGION,
                "topology.kubernetes.io/zone": f"{REGION}{zone}", "node-pool": pool,
                "disk": rng.choice(("ssd", "hdd")), "generation": str(rng.randrange(1, 6))}},
            "spec": {"taints": taints} if taints else {},
            "status": {"allocatable": alloc, "capacity": dict(alloc)}})
        pools[pool].append(name)
    cpu_nodes = pools["general"] + pools["memory"] + pools["spot"]
    for i in range(running):
        if pools["gpu"] and rng.random() < 0.01:
            cluster.append(_pod(f"trainer-{i}", "ml", rng, rng.choice(pools["gpu"]), tolerations=[GPU_TOLERATION],
                                extra_requests={"nvidia.com/gpu": str(rng.choice((1, 2)))}))
        else:
            cluster.append(_pod(f"svc{i % 500}-{i}", "apps", rng, rng.choice(cpu_nodes)))

    pods: list[dict[str, Any]] = []
    # the other kinds keep their proportions among the pods that fit somewhere (the default
    # share gives the same pods as before the option existed)
    share = (1 - unschedulable) / (1 - UNSCHEDULABLE)
    for i in range(pending):
        r = rng.random() / share
        if r < 0.55:
            pods.append(_pod(f"web{i % 200}-{i}", "apps", rng))
        elif r < 0.70:
            pods.append(_pod(f"cache{i % 50}-{i}", "apps", rng, nodeSelector={"node-pool": "memory"}))
        elif r < 0.80:
            zones = [f"{REGION}{z}" for z in rng.sample(ZONES, 2)]
            pods.append(_pod(f"zonal{i % 50}-{i}", "apps", rng, affinity={"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": zones},
                    {"key": "generation", "operator": "Gt", "values": ["2"]}]}]}}}))
        elif r < 0.90:
            pods.append(_pod(f"pref{i % 50}-{i}", "apps", rng, affinity={"nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 60, "preference": {"matchExpressions": [
                        {"key": "disk", "operator": "In", "values": ["ssd"]}]}},
                    {"weight": 20, "preference": {"matchExpressions": [
                        {"key": "node-pool", "operator": "NotIn", "values": ["spot"]}]}}]}}))
        elif r < 0.95:
            pods.append(_pod(f"batch{i % 50}-{i}", "apps", rng, tolerations=[SPOT_TOLERATION]))
        elif r < 0.995:
            pods.append(_pod(f"infer{i % 20}-{i}", "ml", rng, tolerations=[GPU_TOLERATION],
                             extra_requests={"nvidia.com/gpu": "1"}))
        else:
            # fits nowhere: as much cpu as the largest untainted node has, so every node with a
            # pod on it lacks cpu (Unschedulable: preemption's dry run tries the node) and the
            # others are ruled out for good (spot: less cpu; GPU: the taint); every pod has
            # priority 0, so no node has a pod to preempt
            pods.append(_pod(f"huge-{i}", "apps", rng, extra_requests={"cpu": MISFIT_CPU}))
    return cluster, pods


def write_list(path: Path, items: list[dict[str, Any]]) -> None:
    with path.open("w") as fh:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, fh, separators=(",", ":"))


#: CPU seconds spent in Simulation.drain (the scheduling loop) during the last run_in_process
DRAIN_CPU = [0.0]
#: the median of those of the last report
LAST_DRAIN_CPU = [0.0]


def run_in_process(args: list[str]) -> tuple[float, dict[str, Any]]:
    """One in-process run: its wall time and document; DRAIN_CPU[0] is then the CPU time of its
    scheduling loops (on a loaded machine the wall time of scheduling overstates it)."""
    from typer.testing import CliRunner

    from kplan.cli.app import app
    from kplan.scheduler.simulate import Simulation

    drain = Simulation.drain

    def timed_drain(self: Simulation, *a: Any, **k: Any) -> bool:
        cpu0 = time.process_time()
        try:
            return drain(self, *a, **k)
        finally:
            DRAIN_CPU[0] += time.process_time() - cpu0

    runner = CliRunner()
    DRAIN_CPU[0] = 0.0
    Simulation.drain = timed_drain  # type: ignore[method-assign]
    t0 = time.perf_counter()
    try:
        result = runner.invoke(app, args, catch_exceptions=False)
    finally:
        Simulation.drain = drain  # type: ignore[method-assign]
    wall = time.perf_counter() - t0
    if result.exit_code not in (0, 1):
        raise SystemExit(f"kplan failed with exit code {result.exit_code}: {result.output[-2000:]}")
    return wall, json.loads(result.stdout)


def peak_rss_of_subprocess(args: list[str]) -> int:
    """Peak RSS in bytes of one ``python -m kplan`` run, as the child measures it (peak_rss.py)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    measured = MeasuredKplan(args)
    run = subprocess.run(measured.argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    peak = measured.peak_rss()
    if run.returncode not in (0, 1):
        raise SystemExit(f"kplan failed with exit code {run.returncode}: {run.stderr[-2000:]}")
    return peak


def parse_arguments(doc: str | None, pending_flag: str, pending: int, pending_help: str,
                    shares: Sequence[tuple[str, float, str]] = ()) -> argparse.Namespace:
    """The options of the simulate benchmarks: cluster size, the pending count, seed, runs, and
    any ``shares`` (flag, default, help) of the benchmark's own."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--running", type=int, default=50000)
    ap.add_argument(pending_flag, type=int, default=pending, help=pending_help)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the three sizes (0.1 for a quick run)")
    ap.add_argument("--seed", type=int, default=20250101, help="seed of the generator")
    ap.add_argument("--repeat", type=int, default=3, help="in-process runs to take the median of")
    ap.add_argument("--no-rss", action="store_true", help="skip the extra subprocess run for peak RSS")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    add_release_option(ap)
    ap.add_argument("--python-path", action="store_true",
                    help="also run kplan with KPLAN_KERNEL=python (the per-plugin Python alone, no compiled "
                         "cycle) after each release's runs, and print the compiled cycle's speed-up over it")
    ap.add_argument("--oracle", action="append", default=[], metavar="RELEASE|RELEASE=PATH|PATH",
                    help="also replay the files through this kube-scheduler oracle at its release (repeatable)")
    for flag, default, text in shares:
        ap.add_argument(flag, type=float, default=default, help=text)
    return ap.parse_args()


def main() -> None:
    a = parse_arguments(__doc__, "--pending", 10000, "pending pods",
                        [("--unschedulable", UNSCHEDULABLE, "share of the pending pods that fit nowhere")])

    nodes, running, pending = (max(1, int(x * a.scale)) for x in (a.nodes, a.running, a.pending))
    a.out.mkdir(parents=True, exist_ok=True)
    cluster_path, pods_path = a.out / "cluster.json", a.out / "pods.json"
    t0 = time.perf_counter()
    cluster, pods = generate(nodes, running, pending, a.seed, a.unschedulable)
    write_list(cluster_path, cluster)
    write_list(pods_path, pods)
    print(f"generated {nodes} nodes, {running} running pods, {pending} pending pods "
          f"({a.unschedulable:.1%} fitting nowhere, seed {a.seed}) in {time.perf_counter() - t0:.1f} s -> {a.out}")

    args = ["simulate", str(pods_path), "--cluster", str(cluster_path), "-o", "json", "--seed", "1"]
    each_release(a, args, [cluster_path, pods_path], pending)


def each_release(a: argparse.Namespace, args: list[str], files: Sequence[Path], pending: int) -> None:
    """kplan's figures (``report``) at each release of ``--kube-version`` (default: every modelled
    one), each followed by those of the ``--oracle`` binaries of that release."""
    oracles = oracles_by_release(a.oracle)
    for release in releases(a.kube_version):
        print(banner(release), flush=True)
        sched = report(args, pending, a.repeat, a.no_rss, release)
        if getattr(a, "python_path", False):
            kernel_cpu = LAST_DRAIN_CPU[0]
            print("the per-plugin Python alone (KPLAN_KERNEL=python):")
            os.environ["KPLAN_KERNEL"] = "python"
            try:
                reference = report(args, pending, a.repeat, True, release)
            finally:
                del os.environ["KPLAN_KERNEL"]
            print(f"compiled cycle's speed-up: {reference / sched:.2f}x in median scheduling time, "
                  f"{LAST_DRAIN_CPU[0] / max(kernel_cpu, 1e-9):.2f}x in its CPU time")
        oracle_report(oracles.get(release, []), files, pending, kplan_seconds=sched)


def with_kube_version(args: list[str], kube_version: str | None) -> list[str]:
    """``args`` with ``--kube-version`` when one is asked for (else kplan's default release)."""
    return [*args, "--kube-version", kube_version] if kube_version else list(args)


def release_words(doc: dict[str, Any]) -> str:
    """The release a run modelled, as its document names it: ``Kubernetes 1.37 (default feature gates)``."""
    release = doc.get("release") or {}
    gates = release.get("featureGates") or {}
    changed = ",".join(f"{g}={str(on).lower()}" for g, on in gates.items()) or "default feature gates"
    return f"Kubernetes {release.get('version', '?')} ({changed})"


def report(args: list[str], pending: int, repeat: int, no_rss: bool, kube_version: str | None = None) -> float:
    """Run ``kplan ARGS`` (at ``kube_version``, else kplan's default release) in-process
    ``repeat`` times and print the release and the medians, then the peak RSS of one more run as
    a subprocess unless ``no_rss``. Returns the median scheduling time."""
    args = with_kube_version(args, kube_version)
    walls, scheds, cpus, drains = [], [], [], []
    summary: dict[str, Any] = {}
    for k in range(repeat):
        cpu0 = time.process_time()
        wall, doc = run_in_process(args)
        cpus.append(time.process_time() - cpu0)
        walls.append(wall)
        scheds.append(float(doc["timing"]["scheduleSeconds"]))
        drains.append(DRAIN_CPU[0])
        summary = doc["summary"]
        if k == 0:
            print(f"release: {release_words(doc)}")
        print(f"  run {k + 1}: {wall:.2f} s in all ({cpus[-1]:.2f} s of CPU), {scheds[-1]:.2f} s scheduling "
              f"({drains[-1]:.2f} s of CPU; load {doc['timing']['loadSeconds']:.2f} s)")
    wall, sched = statistics.median(walls), statistics.median(scheds)
    print(f"result: {summary['scheduled']} scheduled, {summary['unschedulable']} unschedulable of {pending}")
    print(f"median wall time (whole command, in-process): {wall:.2f} s  -> {pending / wall:,.0f} pods/s")
    print(f"median CPU time (whole command, in-process):  {statistics.median(cpus):.2f} s")
    print(f"median scheduling time:                        {sched:.2f} s  -> {pending / sched:,.0f} pods/s")
    drain_cpu = LAST_DRAIN_CPU[0] = statistics.median(drains)
    print(f"median scheduling CPU time (the queue's loop):  {drain_cpu:.2f} s  -> {pending / max(drain_cpu, 1e-9):,.0f} pods/s")
    if not no_rss:
        rss = peak_rss_of_subprocess(args)
        print(f"peak RSS of one 'python -m kplan simulate' run:  {rss / 2**20:,.0f} MiB")
    return sched


def oracle_binary(name: str) -> Path:
    """A release (``1.36``: oracle/bin/kube-scheduler-oracle-1.36) or a binary's path."""
    path = Path(name)
    if not path.is_file() and "/" not in name:
        path = ROOT / "oracle" / "bin" / f"kube-scheduler-oracle-{name}"
    if not path.is_file():
        raise SystemExit(f"no oracle binary {path} (build it: oracle/build.sh {name})")
    return path


def oracles_by_release(values: Sequence[str]) -> dict[str, list[str]]:
    """``--oracle`` values by the minor release they run: ``1.37`` (oracle/bin's binary of it),
    ``1.34=PATH``, or a PATH whose name ends in the release (kube-scheduler-oracle-1.34.0)."""
    out: dict[str, list[str]] = {}
    for value in values:
        release, _, path = value.partition("=") if "=" in value else ("", "", value)
        if not release:
            release = ".".join(Path(path).name.rsplit("-", 1)[-1].split(".")[:2])
        oracle_binary(path)  # a missing binary stops the benchmark before it runs
        out.setdefault(release, []).append(path)
    return out


#: the real-time run's own limit (``replay --timeout``): the full size takes the real scheduler
#: far longer than its default 600 s on a loaded machine
ORACLE_TIMEOUT = 7200.0


def run_oracle_realtime(binary: Path, files: Sequence[Path], quiet: float = 3.0) -> tuple[str, dict[str, Any], float]:
    """(version, output, process wall seconds) of one real-time ``replay`` of ``files``."""
    version = subprocess.run([str(binary), "version"], capture_output=True, text=True).stdout.strip() or binary.name
    cmd = [str(binary), "replay", "--no-pods", "--compact", "--quiet-seconds", str(quiet)]
    if "--timeout" in subprocess.run([str(binary), "replay", "--help"], capture_output=True, text=True).stdout:
        cmd += ["--timeout", str(ORACLE_TIMEOUT)]  # a binary built before the option has no limit
    for f in files:
        cmd += ["--cluster", str(f)]
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - t0
    if run.returncode != 0:
        raise SystemExit(f"{binary.name} failed with exit code {run.returncode}: {run.stderr[-2000:]}")
    out: dict[str, Any] = json.loads(run.stdout)
    out["process_cpu_seconds"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return version, out, wall


def oracle_report(oracles: Sequence[str], files: Sequence[Path], pending: int, quiet: float = 3.0,
                  kplan_seconds: float | None = None) -> None:
    """The real scheduler's figures on the same files, one line per oracle: its release, pods
    bound, and its own scheduling time (the burst's creation to the last API write) with pods/s
    over it, and kplan's speed-up over it when ``kplan_seconds`` (kplan's median scheduling time
    at the same release) is given; the process's wall time includes reading the files and the
    quiet period."""
    for name in oracles:
        version, out, wall = run_oracle_realtime(oracle_binary(name), files, quiet)
        secs = float(out["seconds"])
        rate = pending / secs if secs > 0 else float("inf")
        print(f"{version}, real-time replay: {out['bound']} bound, {out['unschedulable']} unschedulable of {pending}")
        print(f"  scheduling time (creation of the burst to the last API write): {secs:.2f} s  -> {rate:,.0f} pods/s"
              f"  (process {wall:.1f} s with {quiet:g} s of quiet, {out['process_cpu_seconds']:.1f} s of CPU)")
        if kplan_seconds:
            print(f"  kplan's scheduling is {secs / kplan_seconds:.1f}x the real scheduler's speed at this release")


if __name__ == "__main__":
    main()
