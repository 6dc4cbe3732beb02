"""Differential run: generated Karpenter scenarios through the oracle and through kplan.

    python -m tests.fidelity.karpenter.differential --seed 1 --count 100 [--oracle PATH] \
        [--out DIR] [--oracle-only] [--large]

Each seed's scenario (generate.py) is written to ``--out/karpenter-<seed>/``, run through the
oracle (oracle/karpenter) and through kplan's engine (kplan_side.py), and the two JSON results
are compared (compare.py). A differing scenario keeps its folder with ``expected.json`` (the
oracle's), ``kplan.json`` and ``differences.txt``; an agreeing one is removed. ``--oracle-only``
runs the oracle twice per scenario and compares it with itself (its determinism).

Prints one line per scenario and the figures: scenarios, agree, differ, errors, time.
Exit status 0 when every scenario agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fidelity.karpenter.compare import compare
from tests.fidelity.karpenter.generate import write
from tests.fidelity.karpenter.oracle import EXPECTED, OracleError, oracle_path, run_oracle


@dataclass
class Outcome:
    seed: int
    name: str = ""
    differences: list[str] = field(default_factory=list)
    error: str | None = None
    oracle_seconds: float = 0.0
    kplan_seconds: float = 0.0


def run_seed(seed: int, binary: Path, out: Path, oracle_only: bool = False, keep: bool = False,
             large: bool = False) -> Outcome:
    folder = write(seed, out, large)
    o = Outcome(seed, folder.name)
    try:
        t = time.monotonic()
        want = run_oracle(binary, folder)
        o.oracle_seconds = time.monotonic() - t
        t = time.monotonic()
        got: dict[str, Any]
        if oracle_only:
            got = run_oracle(binary, folder)
        else:
            from tests.fidelity.karpenter.kplan_side import run_kplan

            got = run_kplan(folder)
        o.kplan_seconds = time.monotonic() - t
    except OracleError as e:
        o.error = f"oracle: {e}"
        return o
    except Exception as e:  # noqa: BLE001 - a kplan crash is a finding, reported with the seed
        o.error = f"kplan: {type(e).__name__}: {e}"
        return o
    o.differences = compare(want, got)
    if o.differences or keep:
        (folder / EXPECTED).write_text(json.dumps(want, indent=2, sort_keys=True) + "\n")
        (folder / "kplan.json").write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
        (folder / "differences.txt").write_text("\n".join(o.differences) + "\n")
    else:
        shutil.rmtree(folder)
    return o


def kind_of(difference: str) -> str:
    """The kind of a difference line: its field path without indexes and pod names."""
    head = difference.split(":", 1)[0]
    parts = []
    for part in head.split("."):
        parts.append(part.split("[", 1)[0])
    return ".".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1, help="the first seed")
    ap.add_argument("--count", type=int, default=100, help="how many consecutive seeds")
    ap.add_argument("--oracle", type=Path, default=None, help="the oracle binary (default: KPLAN_KARPENTER_ORACLE "
                    "or oracle/bin/karpenter-oracle)")
    ap.add_argument("--out", type=Path, default=Path("tests/fidelity/out/karpenter"),
                    help="where scenarios that differ are kept")
    ap.add_argument("--oracle-only", action="store_true", help="compare the oracle with itself (determinism)")
    ap.add_argument("--keep", action="store_true", help="keep every scenario's folder")
    ap.add_argument("--large", action="store_true", help="the generator's stream of large scenarios")
    args = ap.parse_args(argv)
    binary = args.oracle or oracle_path()
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    agree = differ = errors = 0
    kinds: Counter[str] = Counter()
    for seed in range(args.seed, args.seed + args.count):
        o = run_seed(seed, binary, args.out, args.oracle_only, args.keep, args.large)
        if o.error:
            errors += 1
            print(f"{o.name}: ERROR {o.error}", flush=True)
        elif o.differences:
            differ += 1
            kinds.update({kind_of(d) for d in o.differences})
            print(f"{o.name}: DIFFER ({len(o.differences)}): " + "; ".join(o.differences[:3]), flush=True)
        else:
            agree += 1
            print(f"{o.name}: agree ({o.oracle_seconds:.2f}s oracle, {o.kplan_seconds:.2f}s other)", flush=True)
    total = agree + differ + errors
    print(f"scenarios {total}, agree {agree}, differ {differ}, errors {errors}, "
          f"time {time.monotonic() - start:.0f}s")
    for kind, n in kinds.most_common():
        print(f"  {n:5d} scenarios differ in {kind}")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
