"""Differential run of Karpenter's disruption: generated consolidation scenarios through the
oracle (`karpenter-oracle consolidate`) and through kplan (kplan.autoscaler.karpenter.disruption).

    python -m tests.fidelity.karpenter.consolidate_differential --seed 1 --count 1000 \
        [--oracle PATH] [--out DIR]

Each seed's scenario is written to ``--out/consolidate-<seed>/`` and run through both; the
results are compared (consolidation.compare). A differing scenario keeps its folder with
``expected.json`` (the oracle's), ``kplan.json`` and ``differences.txt``; an agreeing one is
removed. Prints one line per differing scenario and the figures: scenarios, agree, differ,
errors, commands, the oracle's and kplan's time. Exit status 0 when every scenario agrees.

A scenario: one or two NodePools (policy WhenEmptyOrUnderutilized, sometimes WhenEmpty or Balanced;
consolidateAfter 0s, 30m or Never; budgets as counts or percentages, some per reason; some
restricted to spot or to a few instance types), 2 to 12 nodes of the catalog's types (a few
spot, a few NotReady, some annotated do-not-disrupt), their NodeClaims (some with a recent pod
event, some drifted by requirements), and 0 to 5 pods per node that fit it (some under a
PodDisruptionBudget, some do-not-disrupt, some DaemonSet pods); sometimes a pending pod or two,
sometimes the SpotToSpotConsolidation gate on.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from tests.fidelity.karpenter import consolidate_family as fam
from tests.fidelity.karpenter.consolidation import as_json, compare, run_kplan, run_oracle
from tests.fidelity.karpenter.oracle import EXPECTED

CPU_STEPS = (100, 250, 500, 750, 1000, 1500, 2000)


def generate(seed: int) -> tuple[list[fam.Doc], dict[str, Any]]:
    rng = random.Random(seed)
    docs: list[fam.Doc] = []
    pools = ["default"] if rng.random() < 0.6 else ["alpha", "beta"]
    spot_pool = None
    for name in pools:
        reqs: list[fam.Doc] = [{"key": fam.CT, "operator": "In", "values": ["on-demand"]}]
        if rng.random() < 0.15:
            reqs = [{"key": fam.CT, "operator": "In", "values": ["spot", "on-demand"]}]
            spot_pool = name
        if rng.random() < 0.2:
            types = sorted(rng.sample([t[0] for t in fam.TYPES], rng.randint(2, 4)))
            reqs.append({"key": fam.IT, "operator": "In", "values": types})
        r = rng.random()
        policy = "WhenEmpty" if r < 0.15 else "Balanced" if r < 0.25 else None
        after = rng.choice([None, None, None, "30m", "Never"]) if rng.random() < 0.4 else None
        budgets: list[fam.Doc] = [{"nodes": rng.choice(["100%", "50%", "10%", "1", "2", "0"])}]
        if rng.random() < 0.2:
            budgets.append({"nodes": "0", "reasons": [rng.choice(["Empty", "Underutilized", "Drifted"])]})
        docs.append(fam.node_pool(name, requirements=reqs, policy=policy, after=after, budgets=budgets))
    pdb_apps: list[str] = []
    for i in range(rng.randint(2, 12)):
        name = f"node-{i:02d}"
        pool = rng.choice(pools)
        it = rng.choice(fam.TYPES)
        ct = "spot" if pool == spot_pool and rng.random() < 0.5 else "on-demand"
        ann = {"karpenter.sh/do-not-disrupt": "true"} if rng.random() < 0.05 else None
        n = fam.node(name, it[0], pool=pool, ct=ct, annotations=ann, ready=rng.random() > 0.05)
        docs.append(n)
        if rng.random() < 0.4:
            recent = rng.random() < 0.4
            docs.append(fam.claim(n, last_pod_event="2025-01-10T23:50:00Z" if recent else "2025-01-10T12:00:00Z"))
        free = it[1] * 1000 - 100
        for j in range(rng.choice([0, 0, 1, 1, 2, 3, 4, 5])):
            cpu = rng.choice([c for c in CPU_STEPS if c <= free] or [0])
            if cpu == 0:
                break
            free -= cpu
            labels, annotations, owner = None, None, "ReplicaSet"
            r = rng.random()
            if r < 0.1:
                app = f"app{rng.randint(0, 2)}"
                labels = {"app": app}
                pdb_apps.append(app)
            elif r < 0.14:
                annotations = {"karpenter.sh/do-not-disrupt": "true"}
            elif r < 0.2:
                owner = "DaemonSet"
            docs.append(fam.pod(f"p-{i:02d}-{j}", name, f"{cpu}m", "256Mi", labels=labels, annotations=annotations,
                                owner=owner))
    for app in sorted(set(pdb_apps)):
        docs.append(fam.pdb(f"pdb-{app}", app, rng.choice([0, 1, 1, 2])))
    if rng.random() < 0.1:
        for k in range(rng.randint(1, 2)):
            docs.append(fam.pod(f"pending-{k}", None, rng.choice(["100m", "250m"]), "128Mi"))
    opts: dict[str, Any] = {"now": fam.NOW}
    if spot_pool is not None and rng.random() < 0.5:
        opts["spotToSpot"] = True
    return docs, opts


def write(seed: int, out: Path) -> Path:
    docs, opts = generate(seed)
    folder = out / f"consolidate-{seed}"
    fam.write(folder, docs, opts)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--oracle", default="oracle/bin/karpenter-oracle")
    ap.add_argument("--out", default="/tmp/kplan-consolidate-differential")
    args = ap.parse_args()
    out = Path(args.out)
    binary = Path(args.oracle)
    agree = differ = errors = commands = 0
    oracle_s = kplan_s = 0.0
    for seed in range(args.seed, args.seed + args.count):
        folder = write(seed, out)
        try:
            t = time.monotonic()
            want = run_oracle(binary, folder)
            oracle_s += time.monotonic() - t
            t = time.monotonic()
            got = as_json(run_kplan(folder))
            kplan_s += time.monotonic() - t
        except Exception as e:  # a failure on either side is reported, not fatal to the run
            errors += 1
            print(f"seed {seed}: error: {type(e).__name__}: {e}")
            continue
        commands += len(want.get("commands") or [])
        d = compare(want, got)
        if d:
            differ += 1
            (folder / EXPECTED).write_text(json.dumps(want, indent=1, sort_keys=True) + "\n")
            (folder / "kplan.json").write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
            (folder / "differences.txt").write_text("\n".join(d) + "\n")
            print(f"seed {seed}: {len(d)} differences, first: {d[0]}")
        else:
            agree += 1
            shutil.rmtree(folder)
        sys.stdout.flush()
    print(f"scenarios {args.count}, agree {agree}, differ {differ}, errors {errors}, oracle commands {commands}, "
          f"oracle {oracle_s:.1f} s, kplan {kplan_s:.1f} s")
    sys.exit(0 if differ == 0 and errors == 0 else 1)


if __name__ == "__main__":
    main()
