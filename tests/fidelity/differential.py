"""Differential run: generated scenarios through kplan and the real scheduler (the oracle).

    python -m tests.fidelity.differential --count 100 --seed 1 --release 1.34 [--oracle PATH]

Each seed's scenario (tests/fidelity/generate.py) goes through kplan (as the conformance checker
runs it, ``--tie-break lowest-name``) and through the oracle (serial replay with
ORACLE_TIE_BREAK=lowest-name, ORACLE_PATCH_RV=1, ORACLE_REAL_BACKOFF=1) and the results are
compared as the checker compares them (status, node and message of every pending pod, the
victims). Every difference is printed; each differing scenario is then shrunk while kplan and
the oracle still differ in the same way (the same kind of difference — status, node, message
or victims — on a pending pod of the same name, or on the victims) and the reduction is written
to ``--out/<scenario>/`` with the oracle's result as expected.json, kplan's as kplan.json and
the differences in differences.txt; ``python3 ../shared/conformance/check.py --only <scenario>
--out`` style replays work on it as on any conformance folder. A run where either side fails
(an error exit, a timeout) is counted apart and not shrunk.

With ``--oracle-cache DIR`` the oracle's answers are kept in DIR, keyed by the oracle binary's
digest, the oracle's environment and the scenario's files: a later run of the same seeds (kplan
changed, the oracle did not) asks the oracle nothing it has answered before. Failed runs are not kept.

Prints one line per scenario and the figures: scenarios, agree, differ, errors, time.
Exit status 0 when every scenario agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.fidelity.generate import FEATURES, generate
from tests.fidelity.runners import ORACLE_ENV, ROOT, RunError, oracle_path, run_kplan, run_oracle
from tests.fidelity.scenario import Doc, Scenario, compare, without_taint_names
from tests.fidelity.shrink import shrink


@dataclass
class Outcome:
    name: str
    differences: list[str] = field(default_factory=list)
    error: str | None = None
    kplan_seconds: float = 0.0
    oracle_seconds: float = 0.0
    shrunk: Path | None = None
    shrunk_size: str = ""


class OracleCache:
    """The oracle's answers on disk, one JSON file per (oracle binary, environment, scenario files)."""

    def __init__(self, folder: Path, oracle: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        with oracle.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(json.dumps(sorted(ORACLE_ENV.items())).encode())
        self.oracle_digest = digest.hexdigest()

    def path(self, scenario_folder: Path) -> Path:
        key = hashlib.sha256(self.oracle_digest.encode())
        for name in ("cluster.yaml", "pods.yaml", "scheduler-config.yaml"):
            key.update(name.encode() + b"\0" + (scenario_folder / name).read_bytes() + b"\0")
        return self.folder / f"{key.hexdigest()}.json"

    def get(self, scenario_folder: Path) -> Doc | None:
        p = self.path(scenario_folder)
        if not p.is_file():
            return None
        doc: Doc = json.loads(p.read_text())
        return doc

    def put(self, scenario_folder: Path, result: Doc) -> None:
        p = self.path(scenario_folder)
        tmp = p.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(result, sort_keys=True))
        tmp.replace(p)


class Differ:
    """Runs one scenario through both sides, in a scratch folder of its own."""

    def __init__(self, oracle: Path, kplan: str | None, timeout: float, merge_taints: bool = False,
                 release: str = "1.34", cache: OracleCache | None = None) -> None:
        self.oracle, self.kplan, self.timeout = oracle, kplan, timeout
        self.cache = cache
        #: the release kplan is asked to model (--kube-version), the oracle's
        self.release = release
        self.merge_taints = merge_taints
        self.scratch = Path(tempfile.mkdtemp(prefix="kplan-fidelity-"))
        self.runs = 0

    def results(self, sc: Scenario) -> tuple[Doc, Doc, float, float]:
        """(oracle's result, kplan's result, oracle seconds, kplan seconds); RunError if either fails."""
        self.runs += 1
        folder = sc.write(self.scratch / f"{sc.name}-{self.runs}")
        try:
            t0 = time.perf_counter()
            cached = self.cache.get(folder) if self.cache else None
            if cached is not None:
                want = cached
            else:
                want = run_oracle(folder, self.oracle, timeout=self.timeout)
                if self.cache:
                    self.cache.put(folder, want)
            t1 = time.perf_counter()
            got = run_kplan(folder, self.kplan, timeout=self.timeout, release=self.release)
            t2 = time.perf_counter()
        finally:
            for f in folder.iterdir():
                f.unlink()
            folder.rmdir()
        if self.merge_taints:
            want, got = without_taint_names(want), without_taint_names(got)
        return want, got, t1 - t0, t2 - t1


def signature(diffs: list[str], want: Doc | None = None, got: Doc | None = None) -> set[str]:
    """What a difference is about: ``<pod>: <field>`` (with both sides' status of the pod when the
    results are given) or ``preempted``; the shrinker keeps one, so it does not drift to another."""
    status: dict[str, str] = {}
    for side, doc in (("oracle", want), ("kplan", got)):
        for p in (doc or {}).get("pods", []):
            k = f"{p.get('namespace') or 'default'}/{p['name']}"
            status[k] = status.get(k, "") + f" {side} {p.get('status')}"
    out = set()
    for d in diffs:
        if d.startswith("preempted:"):
            out.add("preempted")
        else:
            pod, _, rest = d.partition(": ")
            out.add(f"{pod}: {rest.split(':')[0]}{status.get(pod, '')}")
    return out


def still_differs(differ: Differ, wanted: set[str]) -> Callable[[Scenario], bool]:
    def holds(sc: Scenario) -> bool:
        try:
            want, got, _, _ = differ.results(sc)
        except RunError:
            return False
        return bool(signature(compare(want, got), want, got) & wanted)
    return holds


def write_repro(folder: Path, sc: Scenario, want: Doc, got: Doc, diffs: list[str], release: str) -> Path:
    sc.write(folder)
    expected = {"scenario": folder.name,
                "source": f"kube-scheduler oracle {release}, serial run, score ties broken by the smallest node name",
                **want}
    (folder / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    (folder / "kplan.json").write_text(json.dumps(got, indent=1) + "\n")
    notes = "".join(f"{k}: {v}\n" for k, v in sc.notes.items())
    (folder / "differences.txt").write_text(notes + "".join(f"{d}\n" for d in diffs))
    return folder


def run_one(differ: Differ, sc: Scenario, out: Path | None, release: str, shrink_runs: int,
            shrink_seconds: float) -> Outcome:
    o = Outcome(sc.name)
    try:
        want, got, o.oracle_seconds, o.kplan_seconds = differ.results(sc)
    except RunError as e:
        o.error = str(e)
        return o
    o.differences = compare(want, got)
    if not o.differences or out is None:
        return o
    (out / sc.name).mkdir(parents=True, exist_ok=True)
    (out / sc.name / "original-differences.txt").write_text("".join(f"{d}\n" for d in o.differences))
    first = sorted(signature(o.differences, want, got))[:1]
    focus = frozenset(f.split(": ")[0] for f in first if f != "preempted")
    small, _ = shrink(sc, still_differs(differ, set(first)), runs=shrink_runs, seconds=shrink_seconds, focus=focus)
    want, got, _, _ = differ.results(small)
    diffs = compare(want, got)
    nodes = sum(1 for d in small.cluster if d["kind"] == "Node")
    o.shrunk_size = f"{nodes} nodes, {len(small.cluster)} cluster objects, {len(small.pods)} pending pods"
    o.shrunk = write_repro(out / sc.name, small, want, got, diffs, release)
    return o


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fidelity.differential",
                                 description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--count", type=int, default=30, help="how many scenarios (seeds seed .. seed+count-1)")
    ap.add_argument("--seed", type=int, default=1, help="first seed")
    ap.add_argument("--seeds", default=None, help="comma-separated seeds to run instead of --seed/--count")
    ap.add_argument("--release", default="1.34", help="the release compared: kplan runs with --kube-version RELEASE "
                    "and the oracle is oracle/bin/kube-scheduler-oracle-<release> unless --oracle says otherwise")
    ap.add_argument("--oracle", type=Path, default=None, help="the oracle binary (default: by --release)")
    ap.add_argument("--kplan", default=None, help="command that runs kplan (default: this source tree, in-process)")
    ap.add_argument("--nodes", type=int, default=None, help="node count of every scenario (default: drawn, 3-500)")
    ap.add_argument("--max-nodes", type=int, default=None, help="skip seeds whose scenario has more nodes than this")
    ap.add_argument("--features", default=None, help=f"comma-separated subset of {','.join(FEATURES)}")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fidelity" / "out",
                    help="folder for the shrunk reproductions (default tests/fidelity/out)")
    ap.add_argument("--no-shrink", action="store_true", help="report differences without shrinking them")
    ap.add_argument("--shrink-runs", type=int, default=300, help="most oracle+kplan runs one shrink may take")
    ap.add_argument("--shrink-seconds", type=float, default=600, help="most seconds one shrink may take")
    ap.add_argument("--timeout", type=float, default=600, help="seconds one run of either side may take")
    ap.add_argument("--merge-taint-reasons", action="store_true",
                    help="compare 'node(s) had untolerated taint {k: v}' reasons as 'node(s) had untolerated taint(s)' "
                         "(the text of v1.34.2 and later; kplan prints v1.34.1's)")
    ap.add_argument("--oracle-cache", type=Path, default=None,
                    help="folder keeping the oracle's answers, so a rerun of the same seeds runs only kplan")
    ap.add_argument("--quiet", action="store_true", help="print only differences, errors and the figures")
    a = ap.parse_args(argv)
    oracle = a.oracle or oracle_path(a.release)
    if not oracle.is_file():
        print(f"no oracle at {oracle}: build it with oracle/build.sh {a.release}", file=sys.stderr)
        return 2
    features = tuple(a.features.split(",")) if a.features else None
    cache = OracleCache(a.oracle_cache, oracle) if a.oracle_cache else None
    differ = Differ(oracle, a.kplan, a.timeout, a.merge_taint_reasons, release=a.release, cache=cache)
    started = time.monotonic()
    agree = differ_count = errors = skipped = 0
    kplan_s = oracle_s = 0.0
    seeds = [int(x) for x in a.seeds.split(",")] if a.seeds else range(a.seed, a.seed + a.count)
    for seed in seeds:
        sc = generate(seed, a.nodes, features)
        if a.max_nodes is not None and sc.notes["nodes"] > a.max_nodes:
            skipped += 1
            continue
        o = run_one(differ, sc, None if a.no_shrink else a.out, a.release, a.shrink_runs, a.shrink_seconds)
        kplan_s += o.kplan_seconds
        oracle_s += o.oracle_seconds
        what = f"{sc.notes['nodes']} nodes, {len(sc.pods)} pods, {sc.notes['features']}"
        if o.error:
            errors += 1
            print(f"ERROR {sc.name} ({what}): {o.error}", flush=True)
        elif o.differences:
            differ_count += 1
            print(f"DIFF  {sc.name} ({what}): {len(o.differences)} differences", flush=True)
            for d in o.differences[:30]:
                print(f"      {d}")
            if len(o.differences) > 30:
                print(f"      ... {len(o.differences) - 30} more (all in {a.out / sc.name}/original-differences.txt)")
            if o.shrunk:
                print(f"      shrunk to {o.shrunk_size}: {o.shrunk}", flush=True)
        else:
            agree += 1
            if not a.quiet:
                print(f"ok    {sc.name} ({what}; oracle {o.oracle_seconds:.1f} s, kplan {o.kplan_seconds:.1f} s)",
                      flush=True)
    total = agree + differ_count + errors
    print(f"release {a.release}: {total} scenarios, {agree} agree, {differ_count} differ, {errors} errors"
          + (f", {skipped} skipped (over --max-nodes)" if skipped else "")
          + f"; {time.monotonic() - started:.0f} s (oracle {oracle_s:.0f} s, kplan {kplan_s:.0f} s)")
    return 0 if differ_count == 0 and errors == 0 and total > 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
