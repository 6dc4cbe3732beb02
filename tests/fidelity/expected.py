"""Each release's results for the public conformance scenarios, and the report of what changes.

    python -m tests.fidelity.expected --release 1.34 --release 1.35 [--conformance DIR] [--only NAME]
    python -m tests.fidelity.expected --report-only

For every release asked (default: every release whose oracle binary is built, in
oracle/bin/kube-scheduler-oracle-<release>), every public scenario goes through that release's
oracle (serial replay, the settings of expected.json) and the result is written to
``tests/fidelity/expected/<release>/<scenario>.json`` in expected.json's shape. Then
tests/fidelity/expected/CHANGES.md is rewritten from the folders there: for 1.34 the scenarios whose
result differs from the suite's own expected.json (the harness judged), and for each next
release (1.34 → 1.35 → 1.36 → 1.37 → 1.38) the scenarios whose result changes, with the differences
and the upstream change that explains them (EXPLANATIONS below, written by hand from
../shared/scheduler-versions.md and the upstream code at the tag; "not explained yet" where
no one has).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from tests.conformance.locate import location
from tests.fidelity.runners import ROOT, RunError, oracle_path, oracle_version, run_oracle
from tests.fidelity.scenario import Doc, compare, without_taint_names

RELEASES = ("1.34", "1.35", "1.36", "1.37", "1.38")
HERE = ROOT / "tests" / "fidelity"
EXPECTED = HERE / "expected"
REPORT = EXPECTED / "CHANGES.md"

#: (from release, to release, scenario) → the upstream change behind the scenario's new result.
#: Each was confirmed by an experiment, not read off the map: the scenario run again with the
#: change's plugin or gate switched off gives the older release's result.
EXPLANATIONS: dict[tuple[str, str, str], str] = {
    ("1.34", "1.35", "dra-1100002"): (
        "DynamicResources gained a Score (#134711, KEP-4816 scoring for prioritized lists; weight 2 in the default "
        "profile): a node whose devices satisfy an earlier `firstAvailable` subrequest scores higher. db-1000005 "
        "(claim template gpu-prio: h100, then a100, then any) moves, and cache-1000007 takes the node it left. "
        "Confirmed: 1.35 with DynamicResources' score disabled gives 1.34's result."),
}
#: 1.34 → 1.35: binding a nominated pod no longer requeues the pods its nomination held back
_BIND_EVENT = (
    "The binding of a pod that had a nominated node no longer reaches the queue as the deletion of a pod "
    "nominated to that node (#134157, v1.35.4 eventhandlers.go: one pod informer handler; its binding path, "
    "`deletePodFromSchedulingQueue(pod, inBinding=true)`, returns before 1.34's `AssignedPodDelete` to the pods "
    "of at most the bound pod's priority). A pending pod that 1.34 retried after a preemptor's binding keeps the "
    "message of its earlier attempt in 1.35, so placements and victims are the same and only counts in a last "
    "failure message change. Confirmed by kplan, not by a gate (no gate switches it): modelling this change alone "
    "(release_tables.NOMINATION) turns kplan's 1.34 result into 1.35's.")
for _name in ("dra-1100005", "mixed-1100039", "preemption-1100004", "preemption-1100005", "priority-1100044"):
    EXPLANATIONS[("1.34", "1.35", _name)] = _BIND_EVENT
EXPLANATIONS[("1.34", "1.35", "storage-1100005")] = (
    "As in the five scenarios above (#134157): in 1.34 db-1000001's binding (it had preempted and been "
    "nominated) retried ml-1000006, whose second attempt found node-00000 one more volume closer to its limit "
    "(NodeVolumeLimits before VolumeZone); in 1.35 nothing retries it, as the volumes bound meanwhile keep their "
    "zone labels and VolumeZone's hint skips such a PersistentVolume update. Confirmed by kplan: the bind "
    "change together with VolumeZone's upstream hint (the same in both releases) gives 1.35's result, and "
    "1.34's still.")
#: 1.35 → 1.36: NodeResourcesBalancedAllocation scores the change of balance (#135573)
_BALANCE = (
    "NodeResourcesBalancedAllocation scores the change of the node's balance, with and without the pod "
    "(#135573, v1.36.3 balanced_allocation.go: 50 + (50 + with − without) / 2), where 1.35 scored the balance "
    "with the pod only; ordinary pods land elsewhere and later pods follow. Confirmed: with that score plugin "
    "disabled in the scenario's profiles, 1.35 and 1.36 give the same result.")
_BALANCE_SCENARIOS = (
    "affinity-1100012", "affinity-1100022", "affinity-1100032", "affinity-1100042", "affinity-1100052",
    "config-1100015", "config-1100025", "config-1100035", "config-1100055", "dra-1100002",
    "dra-1100003", "dra-1100004", "images-1100006", "images-1100016", "images-1100026",
    "images-1100036", "images-1100046", "images-1100056", "mixed-1100009", "mixed-1100029",
    "mixed-1100049", "owners-1100007", "owners-1100017", "owners-1100027", "owners-1100037",
    "owners-1100047", "owners-1100057", "placement-1100001", "placement-1100011", "placement-1100021",
    "placement-1100031", "placement-1100041", "preemption-1100000", "preemption-1100001",
    "preemption-1100003", "priority-1100004", "priority-1100024", "priority-1100034", "priority-1100044",
    "priority-1100054", "resources-1100000", "resources-1100010", "resources-1100020", "resources-1100030",
    "resources-1100040", "resources-1100050", "sampling-1100008", "sampling-1100018", "sampling-1100028",
    "sampling-1100038", "sampling-1100048", "sampling-1100058",
    # confirmed the same way with tests/fidelity/confirm.py (--disable-score NodeResourcesBalancedAllocation)
    "spread-1100003", "spread-1100013", "spread-1100023", "spread-1100033", "spread-1100043", "spread-1100053",
    "storage-1100000", "storage-1100002", "storage-1100003", "storage-1100004", "storage-1100005",
    "scale-affinity-1100000-n2000", "scale-mixed-1100000-n3000", "scale-preemption-1100000-n2500",
)
for _name in _BALANCE_SCENARIOS:
    EXPLANATIONS[("1.35", "1.36", _name)] = _BALANCE
#: 1.36 → 1.37: VolumeBinding scores (StorageCapacityScoring, KEP-4049, beta and on in 1.37)
_CAPACITY = (
    "VolumeBinding's Score runs: StorageCapacityScoring (KEP-4049, kubernetes/enhancements#4049) is beta and on "
    "by default in 1.37, so VolumeBinding builds its capacity scorer (default shape: the least utilised "
    "capacity scores highest) and scores each node by its statically bound PVs' fit and, for volumes to "
    "provision, the CSIStorageCapacity of the node's topology (weight 1 in the default profile); with the gate "
    "off, as in 1.36, the scorer is not built and VolumeBinding scores nothing. Pods with volumes land "
    "elsewhere, and the volume limits and later pods follow. Confirmed: 1.37 with "
    "`StorageCapacityScoring=false` gives 1.36's result (`python -m tests.fidelity.confirm --from 1.36 --to 1.37 "
    "--feature-gates StorageCapacityScoring=false ...`).")
for _name in ("storage-1100000", "storage-1100001", "storage-1100002", "storage-1100003", "storage-1100004",
              "storage-1100005"):
    EXPLANATIONS[("1.36", "1.37", _name)] = _CAPACITY


#: (from release, to release) → why no public scenario changes, where none does (printed under the count)
UNCHANGED: dict[tuple[str, str], str] = {
    ("1.37", "1.38"): (
        "v1.38.0-beta.0 changes results only for inputs the public scenarios do not have (regression cases at 1.37 "
        "and 1.38 in tests/fidelity/regressions/ where named below): a spread constraint "
        "with an empty `labelSelector: {}` counts every pod of the namespace (#141340, `spread-empty-selector-*`; none here has one); a "
        "PodDisruptionBudget with an empty selector guards every pod of its namespace, labelled or not (#141785, `pdb-empty-selector-*`; "
        "the budgets here all select by label); victims of equal priority and equal start time are ordered by pod "
        "UID (#140999, with #139210's fixed time for pods without one, `victim-tie-by-uid-*`; the oracle gives every running pod here a "
        "start time of its own); InterPodAffinity's hints on an assigned pod's add, update or delete read the "
        "namespace's labels for a term's namespaceSelector, and requeue when the namespace is unknown (#141954, `affinity-namespace-selector-hint-*`; no "
        "pod here waits on such a term when a matching pod arrives or leaves); an `allocationMode: All` request on "
        "a node whose pool is invalid or incomplete fails that node instead of the attempt (#141898, `dra-all-mode-unusable-pool-*`; the pools here "
        "are complete and valid); DRAFractionalCapacityRange is on (GA, KEP-5075, `dra-fractional-capacity-1.38`; no device here has a "
        "`requestPolicy.validRange`); a capacity request may name the device's capacity with the driver as its domain "
        "(#142202, `dra-qualified-capacity-name-*`; none here does); a node where preemption finds the pod fits with no victim is "
        "UnschedulableAndUnresolvable instead of an error (#135486). All 81 results are the same as 1.37's, "
        "messages included."),
}

#: (from release, to release) → message wordings that change without a change of placement:
#: (the upstream change, pattern of the older text, its newer text). ``reworded`` applies them
#: to both results before they are compared, so a scenario whose messages differ only in these
#: is listed by name, not line by line.
WORDING: dict[tuple[str, str], list[tuple[str, re.Pattern[str], str]]] = {
    ("1.36", "1.37"): [
        ("DynamicResources' PostFilter no longer adds its no-op reasons, `no new claims to deallocate` and "
         "`still not schedulable`, to the message (#140222)",
         re.compile(r"(no new claims to deallocate|still not schedulable)(, |$)"), ""),
        ("DefaultPreemption's PostFilter reports a successful preemption, `preemption: found a potential placement "
         "for pod on node N, preempting K victims`, where 1.36 said nothing (#140180): a preemptor that is still "
         "pending when the run ends (its node taken by an earlier pod, or its victims not yet gone) carries it",
         re.compile(r" ?preemption: found a potential placement for pod on node \S+, preempting \d+ victims$"), ""),
    ],
}


def reworded(old: str, new: str, result: Doc) -> Doc:
    """``result`` with every message in the wording of neither release: the texts that changed
    between ``old`` and ``new`` (WORDING, and the untolerated-taint text of #134740) removed or
    merged, so that what is left to compare is placement, victims and the reasons' counts."""
    steps = [w for (a, b), ws in WORDING.items()
             if RELEASES.index(old) <= RELEASES.index(a) < RELEASES.index(new) for w in ws]

    def text(message: str) -> str:
        for _, pattern, repl in steps:
            message = pattern.sub(repl, message)
        return message.rstrip(" ,")

    out = without_taint_names(result)
    out["pods"] = [{**p, "message": text(p["message"])} if p.get("message") else p for p in out["pods"]]
    return out


def scenarios(conformance: Path, only: str = "") -> list[Path]:
    return [d for d in sorted(conformance.iterdir())
            if (d / "expected.json").is_file() and only in d.name]


def write_release(release: str, binary: Path, folders: list[Path], timeout: float,
                  results: Path | None = None) -> tuple[int, int]:
    """Runs every folder through ``binary`` (or reads its result from ``results``/<scenario>.json,
    written by ``oracle/conformance.py --write-results`` with the same settings); (written, failed)."""
    out = EXPECTED / release
    out.mkdir(parents=True, exist_ok=True)
    written = failed = 0
    version = oracle_version(binary)
    if version == binary.name:  # a binary older than the `version` command: the module it was built from
        mod = ROOT / "oracle" / "releases" / f"{release}.mod"
        pins = [ln.split()[-1] for ln in mod.read_text().splitlines() if ln.strip().startswith("k8s.io/kubernetes v")] \
            if mod.is_file() else []
        version = f"kube-scheduler-oracle {release} (k8s.io/kubernetes {pins[0] if pins else 'unknown'})"
    source = f"{version}, serial run (ORACLE_TIE_BREAK=lowest-name, ORACLE_PATCH_RV=1, ORACLE_REAL_BACKOFF=1)"
    for d in folders:
        t0 = time.perf_counter()
        try:
            if results is not None:
                stored = results / f"{d.name}.json"
                if not stored.is_file():
                    raise RunError(f"no stored result {stored}")
                doc = load(stored)
                result = {"pods": doc["pods"], "preempted": doc["preempted"]}
            else:
                result = run_oracle(d, binary, timeout=timeout)
        except RunError as e:
            failed += 1
            print(f"ERROR {release} {d.name}: {e}", flush=True)
            continue
        doc = {"scenario": d.name, "source": source, **result}
        (out / f"{d.name}.json").write_text(json.dumps(doc, indent=1) + "\n")
        written += 1
        print(f"ok    {release} {d.name} ({time.perf_counter() - t0:.1f} s)", flush=True)
    return written, failed


def load(path: Path) -> Doc:
    doc: Doc = json.loads(path.read_text())
    return doc


def report(conformance: Path | None) -> str:
    """CHANGES.md from the folders under tests/fidelity/expected."""
    have = [r for r in RELEASES if (EXPECTED / r).is_dir() and any((EXPECTED / r).glob("*.json"))]
    lines = ["# Scheduling results that change between releases",
             "",
             "Written by `python -m tests.fidelity.expected` from `tests/fidelity/expected/<release>/` (each public",
             "conformance scenario through that release's oracle: serial replay, ties to the smallest node name).",
             "Releases with results: " + (", ".join(have) if have else "none yet") + ".",
             ""]
    if "1.34" in have and conformance is not None and conformance.is_dir():
        lines += ["## 1.34 against the suite's expected.json", ""]
        off = []
        for f in sorted((EXPECTED / "1.34").glob("*.json")):
            ref = conformance / f.stem / "expected.json"
            if ref.is_file():
                diffs = compare(load(ref), load(f))
                if diffs:
                    off.append((f.stem, diffs))
        total = len(list((EXPECTED / "1.34").glob("*.json")))
        text_only = [name for name, _ in off
                     if not compare(without_taint_names(load(conformance / name / "expected.json")), load(EXPECTED / "1.34" / f"{name}.json"))]
        lines.append(f"{total - len(off)} of {total} scenarios give the suite's result.")
        if text_only:
            lines.append(f"{len(text_only)} more differ only in TaintToleration's reason, which v1.34.2 and later print as "
                         "`node(s) had untolerated taint(s)` (#134740, backported) where v1.34.1 (the suite's release) "
                         "names the taint `{key: value}`: these results come from a v1.34.2 build, not v1.34.0's.")
        for name, diffs in off:
            lines += ["", f"- `{name}`:"] + [f"  - {d}" for d in diffs[:10]]
        lines.append("")
    for a, b in zip(have, have[1:], strict=False):
        lines += [f"## {a} → {b}", ""]
        changed = []
        for f in sorted((EXPECTED / b).glob("*.json")):
            old = EXPECTED / a / f.name
            if old.is_file():
                diffs = compare(load(old), load(f))
                if diffs:
                    # what is left once the wording that changed between a and b is left out
                    rest = compare(reworded(a, b, load(old)), reworded(a, b, load(f)))
                    changed.append((f.stem, diffs, rest))
        common = len({f.name for f in (EXPECTED / a).glob("*.json")} & {f.name for f in (EXPECTED / b).glob("*.json")})
        text_only = [name for name, _, rest in changed if not rest]
        lines.append(f"{len(changed)} of {common} scenarios change.")
        if not changed and (a, b) in UNCHANGED:
            lines += ["", UNCHANGED[(a, b)]]
        wordings = [desc for desc, _, _ in WORDING.get((a, b), [])]
        if a == "1.34":
            wordings.insert(0, "TaintToleration's reason: 1.34 names each taint (`N node(s) had untolerated taint "
                               "{key: value}`), 1.35 merges them into one reason, `N node(s) had untolerated taint(s)` "
                               "(#134740; in 1.35, backported to v1.34.2)")
        if wordings:
            lines += ["", "Wording that changes in every message it occurs in (left out of the differences below):", ""]
            lines += [f"- {w}." for w in wordings]
        if text_only:
            lines += ["", f"{len(text_only)} of them change only in that wording: "
                      + ", ".join(f"`{n}`" for n in text_only) + "."]
        for name, diffs, rest in changed:
            if not rest:
                continue
            why = EXPLANATIONS.get((a, b, name), "unexplained")
            lines += ["", f"### `{name}`", "", f"Why: {why}", ""]
            if len(rest) < len(diffs):
                lines.append("Besides the wording above:")
                lines.append("")
            lines += [f"- {d.replace('want', a).replace(', got', f', {b}')}" for d in rest[:15]]
            if len(rest) > 15:
                lines.append(f"- … {len(rest) - 15} more")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fidelity.expected",
                                 description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--release", action="append", default=[],
                    help="release to run (repeatable; default: every release with a built oracle)")
    ap.add_argument("--oracle", type=Path, default=None, help="the oracle binary (only with one --release)")
    ap.add_argument("--conformance", type=Path, default=None,
                    help="the public scenarios (default: KPLAN_CONFORMANCE or ../shared/conformance)")
    ap.add_argument("--only", default="", help="scenarios whose name contains this")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds one oracle run may take")
    ap.add_argument("--results", type=Path, default=None,
                    help="with one --release: take the oracle's results from DIR/<scenario>.json written by "
                         "oracle/conformance.py --write-results (the same settings) instead of running it again")
    ap.add_argument("--report-only", action="store_true", help="rewrite CHANGES.md from the stored results only")
    a = ap.parse_args(argv)
    conformance = a.conformance or location()
    if not a.conformance and not conformance.is_dir():
        # a worktree under wt/ sits two levels below the folder that holds shared/
        conformance = ROOT.parent.parent / "shared" / "conformance"
    failed = 0
    if not a.report_only:
        releases = a.release or [r for r in RELEASES if oracle_path(r).is_file()]
        if not releases:
            print("no oracle built: oracle/build.sh <release>", file=sys.stderr)
            return 2
        if not conformance.is_dir():
            print(f"no conformance scenarios at {conformance}", file=sys.stderr)
            return 2
        folders = scenarios(conformance, a.only)
        for r in releases:
            binary = a.oracle if a.oracle and len(releases) == 1 else oracle_path(r)
            if not binary.is_file():
                print(f"no oracle for {r} at {binary}", file=sys.stderr)
                failed += 1
                continue
            t0 = time.monotonic()
            n, bad = write_release(r, binary, folders, a.timeout, a.results if len(releases) == 1 else None)
            failed += bad
            print(f"release {r}: {n} written, {bad} failed, {time.monotonic() - t0:.0f} s")
    REPORT.write_text(report(conformance))
    print(f"wrote {REPORT.relative_to(ROOT)}")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
