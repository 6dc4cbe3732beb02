#!/usr/bin/env python3
"""Run a kube-scheduler oracle binary on conformance scenarios and compare with expected.json.

    python3 oracle/conformance.py oracle/bin/kube-scheduler-oracle-1.34 [--dir DIR] [--only SUBSTR]
                                  [--verbose] [--write-results OUTDIR] [--timeout S]
    python3 oracle/conformance.py --results OUTDIR [--merge-taint-reasons]   (judge a stored run)

Each scenario folder holds cluster.yaml, pods.yaml, scheduler-config.yaml and expected.json.
The oracle runs the way the contract derives expected.json: `replay --serial` with
ORACLE_TIE_BREAK=lowest-name, ORACLE_PATCH_RV=1 and ORACLE_REAL_BACKOFF=1; a pod's status is
Scheduled when its node is set, else Unschedulable with message = fit_error; preempted is
sorted. Prints one line per scenario and "N passed, M failed". Stdlib only; the functions
run_oracle(), to_expected(), compare() and merge_taint_reasons() are importable.
--merge-taint-reasons compares with v1.34.2's TaintToleration text (see oracle/README.md).
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# the project's ../shared/conformance (from a worktree under wt/: ../../shared/conformance)
DEFAULT_DIR = next((d for d in (os.path.normpath(os.path.join(HERE, *[".."] * up, "shared", "conformance"))
                                for up in (2, 3)) if os.path.isdir(d)),
                   os.path.normpath(os.path.join(HERE, "..", "..", "shared", "conformance")))
ORACLE_ENV = {"ORACLE_TIE_BREAK": "lowest-name", "ORACLE_PATCH_RV": "1", "ORACLE_REAL_BACKOFF": "1"}


class OracleError(Exception):
    """The oracle exited with an error or printed something that is not its JSON."""


def scenario_files(scenario_dir):
    """The oracle's inputs for a scenario folder: (cluster files, config file or None)."""
    clusters = [os.path.join(scenario_dir, f) for f in ("cluster.yaml", "pods.yaml")
                if os.path.isfile(os.path.join(scenario_dir, f))]
    config = os.path.join(scenario_dir, "scheduler-config.yaml")
    return clusters, (config if os.path.isfile(config) else None)


def run_oracle(binary, scenario_dir, timeout=600, extra_env=None, serial=True):
    """Run the oracle on one scenario folder and return its JSON output (a dict)."""
    clusters, config = scenario_files(scenario_dir)
    cmd = [binary, "replay"] + (["--serial"] if serial else [])
    for c in clusters:
        cmd += ["--cluster", c]
    if config:
        cmd += ["--config", config]
    env = dict(os.environ)
    env.update(ORACLE_ENV)
    env.update(extra_env or {})
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        raise OracleError(f"no answer in {timeout} s") from e
    if run.returncode != 0:
        raise OracleError(f"exit {run.returncode}: {run.stderr.strip()[-500:]}")
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError as e:
        raise OracleError(f"unreadable output: {e}") from e


def to_expected(oracle_out, scenario=""):
    """The oracle's output in expected.json's shape."""
    pods = []
    for p in oracle_out.get("pods") or []:
        ns, _, name = p["pod"].partition("/")
        node = p.get("node")
        pods.append({"namespace": ns, "name": name,
                     "status": "Scheduled" if node else "Unschedulable",
                     "node": node or None,
                     "message": None if node else p.get("fit_error")})
    return {"scenario": scenario, "pods": pods, "preempted": sorted(oracle_out.get("preempted") or [])}


_AVAILABLE = re.compile(r"(\d+/\d+ nodes are available: )(.*?)\.(?=\s|$)")
_TAINT = re.compile(r"^node\(s\) had untolerated taint \{.*\}$")


def merge_taint_reasons(message):
    """A FitError text with v1.34.1's per-taint reasons ("2 node(s) had untolerated taint {k: v}")
    merged into v1.34.2's one reason ("N node(s) had untolerated taint(s)", upstream #134740,
    backported to v1.34.2), the reasons sorted again as the scheduler sorts them."""
    if not message:
        return message

    def fix(m):
        merged, out = 0, []
        for item in m.group(2).split(", "):
            count, _, reason = item.partition(" ")
            if count.isdigit() and _TAINT.match(reason):
                merged += int(count)
            else:
                out.append(item)
        if not merged:
            return m.group(0)
        out.append(f"{merged} node(s) had untolerated taint(s)")
        return m.group(1) + ", ".join(sorted(out)) + "."
    return _AVAILABLE.sub(fix, message)


def _key(p):
    return f"{p.get('namespace') or 'default'}/{p['name']}"


def compare(expected, got):
    """Differences between two results in expected.json's shape (empty list: equal)."""
    diffs = []
    want = {_key(p): p for p in expected["pods"]}
    have = {_key(p): p for p in got["pods"]}
    for k in sorted(set(want) - set(have)):
        diffs.append(f"{k}: missing from the oracle's output")
    for k in sorted(set(have) - set(want)):
        diffs.append(f"{k}: not a pending pod of this scenario")
    for k in sorted(set(want) & set(have)):
        for field in ("status", "node", "message"):
            if (want[k].get(field) or None) != (have[k].get(field) or None):
                diffs.append(f"{k}: {field}: want {want[k].get(field)!r}, got {have[k].get(field)!r}")
    w, g = sorted(expected.get("preempted") or []), sorted(got.get("preempted") or [])
    if w != g:
        diffs.append(f"preempted: want {w}, got {g}")
    return diffs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary", nargs="?", help="the oracle binary (not with --results)")
    ap.add_argument("--dir", default=DEFAULT_DIR, help="folder of scenario folders")
    ap.add_argument("--only", default="", help="scenarios whose name contains this")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--merge-taint-reasons", action="store_true",
                    help="compare with expected messages whose per-taint reasons are merged into v1.34.2's "
                         "'node(s) had untolerated taint(s)' (for an oracle built on v1.34.2 or later)")
    ap.add_argument("--write-results", metavar="OUTDIR",
                    help="also write each scenario's result in expected.json's shape to OUTDIR/<scenario>.json")
    ap.add_argument("--results", metavar="OUTDIR",
                    help="compare the results a run wrote with --write-results instead of running a binary")
    a = ap.parse_args(argv)
    if bool(a.binary) == bool(a.results):
        ap.error("give the oracle binary or --results OUTDIR")
    passed = failed = 0
    for name in sorted(os.listdir(a.dir)):
        d = os.path.join(a.dir, name)
        if not os.path.isfile(os.path.join(d, "pods.yaml")) or a.only not in name:
            continue
        try:
            if a.results:
                stored = os.path.join(a.results, name + ".json")
                if not os.path.isfile(stored):
                    raise OracleError(f"no result {stored}")
                with open(stored) as f:
                    got = json.load(f)
            else:
                got = to_expected(run_oracle(a.binary, d, timeout=a.timeout), name)
        except OracleError as e:
            failed += 1
            print(f"FAIL {name}: {e}")
            continue
        if a.write_results and not a.results:
            os.makedirs(a.write_results, exist_ok=True)
            with open(os.path.join(a.write_results, name + ".json"), "w") as f:
                json.dump(got, f, indent=1)
                f.write("\n")
        exp_file = os.path.join(d, "expected.json")
        if not os.path.isfile(exp_file):
            print(f"ran  {name}")
            continue
        with open(exp_file) as f:
            expected = json.load(f)
        if a.merge_taint_reasons:
            for p in expected["pods"]:
                p["message"] = merge_taint_reasons(p.get("message"))
        diffs = compare(expected, got)
        if diffs:
            failed += 1
            print(f"FAIL {name} ({len(diffs)} differences)")
            for line in diffs[: (50 if a.verbose else 3)]:
                print(f"     {line}")
        else:
            passed += 1
            print(f"ok   {name}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
