"""Seeded random Karpenter provisioning scenarios, in the public family's shape (family.py).

``generate(seed)`` is a pure function of the seed: the same seed gives the same files byte for
byte. A scenario has a catalog (a random subset of the base instance types, prices varied, in one
to three zones), one to three NodePools (weights, requirements on arch/capacity type/family/zone/
cpu, sometimes minValues, taints, limits), zero to four existing nodes (Karpenter's, with running
pods, sometimes a plain node or an in-flight NodeClaim), sometimes DaemonSets, and one to twelve
pending pods in a few groups (requests, node selectors, tolerations, zonal spread, hostname
anti-affinity, preferred affinity, host ports). Features are turned on at random (FEATURES).

    python -m tests.fidelity.karpenter.generate --seed 7 --count 3 --out /tmp/karpenter-scenarios
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from tests.fidelity.karpenter import builders as b

FEATURES = ("existing", "pools", "minvalues", "taints", "limits", "daemonsets", "spread", "antiaffinity",
            "preferences", "inflight", "spot", "hostports", "selectors", "unavailable", "podaffinity",
            "poollabels", "startuptaints")
CPUS = ("100m", "250m", "500m", "750m", "1", "1500m", "2", "3")
MEMS = ("128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi", "6Gi")
FAMILIES = ("c", "m", "r", "g")


def _catalog(rng: random.Random, zones: tuple[str, ...], spot: bool, unavailable: bool = False) -> list[b.Doc]:
    names = [t[0] for t in b.BASE_TYPES]
    chosen = sorted(rng.sample(names, rng.randint(3, len(names))), key=names.index)
    out = []
    for name, cpu, mem, arch, price, extra in b.BASE_TYPES:
        if name not in chosen:
            continue
        p = round(price * rng.choice((0.9, 1.0, 1.0, 1.1)), 4)
        offs = []
        for i, z in enumerate(zones):
            if spot:
                offs.append(b.offering(round(p * rng.choice((0.3, 0.4, 0.5)) * (1 - 0.03 * i), 5), z, "spot"))
            offs.append(b.offering(p, z, "on-demand"))
        if unavailable:
            for o in offs:
                if rng.random() < 0.25:
                    o["Available"] = False
        out.append(b.instance_type(name, cpu, mem, arch, offs, extra))
    return out


def _pool(rng: random.Random, name: str, feats: set[str], zones: tuple[str, ...], spot: bool) -> b.Doc:
    reqs = [b.req(b.CT_KEY, "In", *(("spot", "on-demand") if spot and rng.random() < 0.6 else ("on-demand",)))]
    if rng.random() < 0.3:
        reqs.append(b.req(b.ARCH_KEY, "In", rng.choice(("amd64", "arm64"))))
    if rng.random() < 0.3:
        fams = sorted(rng.sample(FAMILIES, rng.randint(1, 3)))
        mv = rng.randint(1, len(fams)) if "minvalues" in feats and rng.random() < 0.6 else None
        reqs.append(b.req(b.FAMILY_KEY, "In", *fams, min_values=mv))
    if rng.random() < 0.2 and len(zones) > 1:
        reqs.append(b.req(b.ZONE_KEY, "In", *sorted(rng.sample(zones, rng.randint(1, len(zones))))))
    if rng.random() < 0.15:
        reqs.append(b.req(b.CPU_KEY, rng.choice(("Gt", "Lt")), rng.choice(("2", "3", "4", "7"))))
    taints = [b.taint("dedicated", name)] if "taints" in feats and rng.random() < 0.4 else []
    limits = None
    if "limits" in feats and rng.random() < 0.5:
        limits = rng.choice(({"cpu": str(rng.choice((2, 4, 6, 8, 12)))}, {"memory": f"{rng.choice((8, 16, 32))}Gi"},
                             {"nodes": str(rng.randint(1, 3))}))
    weight = rng.choice((None, None, 5, 10, 50)) if "pools" in feats else None
    labels = {"example.com/pool": name} if "poollabels" in feats and rng.random() < 0.6 else None
    startup = [b.taint("example.com/booting", "true")] if "startuptaints" in feats and rng.random() < 0.5 else []
    return b.node_pool(name, reqs, weight=weight, taints=taints, limits=limits, labels=labels, startup_taints=startup)


def generate(seed: int, large: bool = False) -> dict[str, str]:
    """The files of scenario ``seed`` (name → text). ``large``: another stream of scenarios, with 4 to
    15 existing nodes and 5 to 60 pending pods in one to three groups (Karpenter's sort.Slice calls then sort more than 12
    items, where Go's pdqsort is not an insertion sort)."""
    rng = random.Random(f"karpenter-large-{seed}" if large else f"karpenter-{seed}")
    n_nodes = (4, 15) if large else (1, 4)
    group = (5, 20) if large else (1, 5)
    feats = {f for f in FEATURES if rng.random() < 0.35} or {rng.choice(FEATURES)}
    zones = b.ZONES[:rng.randint(1, 3)]
    spot = "spot" in feats
    catalog = _catalog(rng, zones, spot, "unavailable" in feats)
    by_name = {it["name"]: it for it in catalog}
    n_pools = rng.randint(2, 3) if "pools" in feats else 1
    pool_names = ["default", "second", "third"][:n_pools]
    pools = [_pool(rng, n, feats, zones, spot) for n in pool_names]
    cluster: list[b.Doc] = []
    if "existing" in feats:
        for i in range(rng.randint(*n_nodes)):
            it = by_name[rng.choice(sorted(by_name))]
            name = f"node-{i}"
            pool = rng.choice(pool_names)
            cluster.append(b.managed_node(name, pool, it, rng.choice(zones), rng.choice(("on-demand", "spot"))
                                          if spot else "on-demand", taints=pools[pool_names.index(pool)]["spec"]
                                          ["template"]["spec"].get("taints", [])))
            cpu_milli = int(str(it["resources"]["cpu"])) * 1000 - 100
            used = rng.choice((0.2, 0.5, 0.8, 0.95))
            cluster.append(b.pod(f"running-{i}", f"{int(cpu_milli * used)}m", "512Mi", node=name,
                                 labels={"app": rng.choice(("web", "db", "api"))},
                                 tolerations=[b.toleration("dedicated")]))
        if rng.random() < 0.3:
            cluster.append(b.plain_node("static-0", rng.choice(("2", "4")), "8Gi", rng.choice(zones)))
    if "inflight" in feats:
        it = by_name[rng.choice(sorted(by_name))]
        cluster.append(b.in_flight_claim("default-inflt", "default", it, rng.choice(zones)))
    if "daemonsets" in feats:
        for i in range(rng.randint(1, 2)):
            tol = [b.toleration("dedicated")] if rng.random() < 0.5 else []
            cluster.append(b.daemon_set(f"agent-{i}", rng.choice(("100m", "250m", "500m")),
                                        rng.choice(("128Mi", "256Mi", "512Mi")), tolerations=tol))
    pending: list[b.Doc] = []
    n_groups = rng.randint(1, 3)
    for g in range(n_groups):
        app = ("web", "db", "api")[g]
        count = rng.randint(*group)
        cpu, mem = rng.choice(CPUS), rng.choice(MEMS)
        kw: dict[str, object] = {"labels": {"app": app}}
        if "selectors" in feats and rng.random() < 0.5:
            kw["node_selector"] = rng.choice(({b.ARCH_KEY: rng.choice(("amd64", "arm64"))},
                                              {b.ZONE_KEY: rng.choice(zones)}, {b.CT_KEY: "on-demand"},
                                              {b.FAMILY_KEY: rng.choice(FAMILIES)}))
        if "taints" in feats and rng.random() < 0.6:
            kw["tolerations"] = [b.toleration("dedicated", rng.choice(pool_names))]
        if "spread" in feats and rng.random() < 0.6:
            kw["spread"] = [b.zone_spread(app, rng.choice((1, 1, 2)), rng.choice(("DoNotSchedule", "ScheduleAnyway")))]
        if "antiaffinity" in feats and rng.random() < 0.5:
            kw["affinity"] = b.anti_affinity(app)
        elif "preferences" in feats and rng.random() < 0.6:
            kw["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                    {"key": rng.choice((b.ZONE_KEY, b.ARCH_KEY, b.FAMILY_KEY)), "operator": "In",
                     "values": [rng.choice(zones + ("arm64", "c", "m"))]}]}}]}}
        if "poollabels" in feats and rng.random() < 0.4:
            kw["node_selector"] = {"example.com/pool": rng.choice(pool_names)}
        if "podaffinity" in feats and rng.random() < 0.5 and "affinity" not in kw:
            other = rng.choice(("web", "db", "api"))
            term = {"topologyKey": rng.choice((b.ZONE_KEY, b.HOST_KEY)), "labelSelector": {"matchLabels": {"app": other}}}
            kw["affinity"] = rng.choice((
                {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
                {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": term}]}},
                {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50,
                                                                                          "podAffinityTerm": term}]}}))
        if "hostports" in feats and rng.random() < 0.4:
            kw["host_port"] = 8080
        for i in range(count):
            pending.append(b.pod(f"{app}-{i}", cpu, mem, **kw))  # type: ignore[arg-type]
    if large:
        feats.add("large")
    files = {"pending.yaml": b.yaml_text(pending), "nodepools.yaml": b.yaml_text(pools),
             "catalog.json": b.catalog_text(catalog),
             "README.md": f"# generated scenario {seed}\n\nfeatures: {', '.join(sorted(feats))}\n"}
    if cluster:
        files["cluster.yaml"] = b.yaml_text(cluster)
    return files


def write(seed: int, folder: Path, large: bool = False) -> Path:
    out = folder / (f"karpenter-large-{seed}" if large else f"karpenter-{seed}")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in generate(seed, large).items():
        (out / name).write_text(text)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1, help="the first seed")
    ap.add_argument("--count", type=int, default=1, help="how many consecutive seeds")
    ap.add_argument("--out", type=Path, required=True, help="folder to write the scenarios into")
    ap.add_argument("--large", action="store_true", help="the stream of large scenarios")
    args = ap.parse_args()
    for seed in range(args.seed, args.seed + args.count):
        print(write(seed, args.out, args.large))


if __name__ == "__main__":
    main()
