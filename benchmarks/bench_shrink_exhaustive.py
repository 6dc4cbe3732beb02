"""``kplan whatif --shrink``'s greedy answer against an exhaustive search, on seeded clusters of up
to 12 nodes (issue 38, item 3). The unit test (tests/unit/whatif/test_shrink.py) does 4–8 nodes;
12 nodes take minutes, so they are here.

Run by hand from the repository root (not part of the test suite):

    python benchmarks/bench_shrink_exhaustive.py [--sizes 4-12] [--seeds 12] [--first-seed 0]

The clusters are the unit test's (``random_cluster``: nodes of 4 cpu, pods of ReplicaSets of
250 m to 1 cpu, node loads of 0 to 62 %), one per seed, of ``4 + seed % (span)`` nodes over the
sizes asked. For each: the greedy answer (``shrink`` with the default options); the eligible
nodes (those it removed, and those it kept because their pods had no place to go, the only
reason another choice of removals could change); then the exhaustive search, which is exact:
every set of eligible nodes larger than the greedy answer, largest first, is replayed without
those nodes (``RemoveNode``: their pods rescheduled, every pending pod too) unless a sound bound
rules it out (the pods' total cpu, memory or pod count exceeds what the nodes left hold: no
placement exists); the first set that replays with every pod placed and no eviction is the
best answer. No monotonicity is assumed (the unit test's search assumes that a set passes only
if every set inside it passes; here nothing is skipped on that ground). Where the greedy answer
is smaller, the case says why it stopped (the nodes of the larger answer it kept, and where the
pods of its removals went).

``--clusters tight`` draws every node's load from 25 to 50 % instead, so that every node is a
candidate and the room left decides.

Printed per cluster: nodes, eligible, greedy size, best size, replays, seconds; then the
agreement figure and the load average.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.releases import add_release_option, banner, releases  # noqa: E402


def tight_cluster(seed: int, nodes: int) -> tuple[list[tuple[str, str]], list[tuple[str, str, str, str | None]]]:
    """Every node below the threshold (25 to 50 % of its 4 cpu), so every node is a candidate and
    the room left decides: the choice of removals matters more than on the light clusters."""
    import random

    rng = random.Random(seed)
    node_list = [(f"n{i:02d}", "4") for i in range(nodes)]
    pods = []
    for i, (name, _) in enumerate(node_list):
        load = rng.choice([4, 5, 6, 7, 8])  # in 250m steps
        k = 0
        while load > 0:
            size = min(load, rng.choice([1, 2, 3, 4]))
            pods.append((f"app{i}-{k}", name, f"{size * 250}m", f"ReplicaSet/rs{i % 3}"))
            load -= size
            k += 1
    return node_list, pods


def parse_sizes(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def fits_at_all(table: Any, pending: list[Any], removed: frozenset[str]) -> bool:
    """A sound bound: the pods' total requests (cpu, memory, …, pod count), those placed on
    ``table`` (the cluster as it runs) and the pending ones, fit the nodes left. False means no
    placement of every pod exists, whatever the scheduler does."""
    keep = [i for i, n in enumerate(table.names) if n not in removed]
    if int(table.pod_count.sum()) + len(pending) > int(table.allowed_pods[keep].sum()):
        return False
    for col, name in enumerate(table.res.names):
        want = int(table.requested[:, col].sum()) + sum(p.requests.get(name, 0) for p in pending)
        if want > int(table.alloc[keep, col].sum()):
            return False
    return True


def best_larger_than(planner: Any, eligible: list[str], floor: int, replays: list[int]) -> frozenset[str] | None:
    """The largest set of eligible nodes, larger than ``floor``, whose removal replays with every
    pod placed (the lexicographically first of that size); None when there is none."""
    from tests.unit.whatif.test_shrink import replays_with_every_pod_placed

    table = planner.simulate().result.snapshot.table
    pending = list(planner.inputs.pending)
    for size in range(len(eligible), floor, -1):
        for combo in itertools.combinations(sorted(eligible), size):
            s = frozenset(combo)
            if not fits_at_all(table, pending, s):
                continue
            replays[0] += 1
            if replays_with_every_pod_placed(planner, sorted(s)):
                return s
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=parse_sizes, default=(4, 12), metavar="LOW-HIGH",
                    help="cluster sizes, nodes (default 4-12)")
    ap.add_argument("--seeds", type=int, default=12, help="how many seeded clusters (default 12)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--clusters", choices=("light", "tight"), default="light",
                    help="light: the unit test's clusters (loads 0-62 %%); tight: every node at 25-50 %%")
    add_release_option(ap)
    args = ap.parse_args()
    for release in releases(args.kube_version):
        print(banner(release), flush=True)
        at_release(args, release)


def at_release(args: argparse.Namespace, release: str) -> None:
    """The comparison on every seeded cluster with kplan modelling ``release``."""
    from kplan.cli.options import TieBreak
    from kplan.cli.workspace import load_inputs, open_planner, release_words
    from kplan.whatif.shrink import shrink
    from tests.unit.whatif.test_shrink import DEFAULT, random_cluster, write_cluster

    low, high = args.sizes
    agree = 0
    rows = []
    t_all = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        size = low + seed % (high - low + 1)
        nodes, pods = (random_cluster if args.clusters == "light" else tight_cluster)(seed, size)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            write_cluster(Path(tmp), nodes, pods)  # the unit test's cluster file, modelled at the release
            planner = open_planner(load_inputs([str(Path(tmp) / "cluster.yaml")], [], progress=False), None,
                                   seed=0, tie_break=TieBreak.lowest_name, kube_version=release)
            if seed == args.first_seed:
                print(f"release: {release_words(planner.setup.release)}")
            found = shrink(planner, [], DEFAULT)
            greedy = [v.node for v in found.removed]
            eligible = greedy + [v.node for v in found.kept if v.reason in ("NoPlaceToMovePods", "DroppedInReplay")]
            replays = [0]
            better = best_larger_than(planner, eligible, len(greedy), replays)
            took = time.perf_counter() - t0
        same = better is None
        agree += same
        why = ""
        if not same:
            assert better is not None
            missed = sorted(v.node for v in found.kept if v.node in better and v.node not in greedy)
            moved_to = sorted({m[1] for v in found.removed for m in v.moved} & better)
            why = (f"  greedy kept {', '.join(missed)} (no place for their pods after its removals, whose pods "
                   f"went to {', '.join(moved_to) or 'other nodes'})")
        best = len(greedy) if same else len(better or ())
        rows.append((seed, size, len(eligible), len(greedy), best, replays[0], took))
        print(f"seed {seed:3d}: {size:2d} nodes, {len(eligible):2d} eligible, greedy removes {len(greedy):2d}, "
              f"best {best:2d}, {replays[0]:5d} replays, {took:7.1f} s{why}", flush=True)
    print(f"greedy = exhaustive on {agree} of {len(rows)} {args.clusters} clusters of {low}-{high} nodes "
          f"({time.perf_counter() - t_all:.0f} s; load average {os.getloadavg()[0]:.1f}, 2 cores shared)")


if __name__ == "__main__":
    main()
