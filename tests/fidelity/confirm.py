"""Confirm the upstream change behind a scenario's new result by switching it off.

    python -m tests.fidelity.confirm --from 1.35 --to 1.36 --disable-score NodeResourcesBalancedAllocation affinity-1100012
    python -m tests.fidelity.confirm --from 1.36 --to 1.37 --feature-gates StorageCapacityScoring=false storage-1100001

A change that a profile can switch off (``--disable-score``/``--disable-filter``/``--disable-postfilter``
PLUGIN, ``--plugin-args`` PLUGIN JSON: merged into that plugin's args in every profile) is switched off in a
copy of the scenario under ``--work`` (default /tmp/oracle/confirm) that both releases' oracles run: the
change is confirmed when the two then give the same result. A change behind a feature gate
(``--feature-gates`` G=false,...: ``ORACLE_FEATURE_GATES``) is switched off in the newer release only and
confirmed when its result is then the older release's stored one (tests/fidelity/expected/<from>/). Both
comparisons leave out the message wording that changed between the two releases (``wording`` in
tests.fidelity.expected). Prints one line per scenario, and the differences that are left; exit 0 when
every scenario is confirmed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tests.conformance.locate import location
from tests.fidelity.expected import EXPECTED, RELEASES, load, reworded
from tests.fidelity.runners import ROOT, RunError, oracle_path, run_oracle
from tests.fidelity.scenario import Doc, Scenario, compare


def switched_off(config: Doc, disable: dict[str, list[str]], plugin_args: dict[str, dict[str, Any]]) -> Doc:
    """``config`` (a KubeSchedulerConfiguration) with the plugins of each extension point in
    ``disable`` disabled and ``plugin_args`` merged into the named plugins' args, in every profile."""
    out: Doc = json.loads(json.dumps(config))
    profiles = out.setdefault("profiles", [{"schedulerName": "default-scheduler"}]) or \
        [{"schedulerName": "default-scheduler"}]
    out["profiles"] = profiles
    for prof in profiles:
        plugins = prof.setdefault("plugins", {})
        for point, names in disable.items():
            section = plugins.setdefault(point, {})
            section.setdefault("disabled", [])
            section["disabled"] += [{"name": n} for n in names]
            # a plugin the profile enables explicitly (with a weight) stays enabled unless dropped there too
            section["enabled"] = [e for e in section.get("enabled") or [] if e.get("name") not in names]
        for name, args in plugin_args.items():
            confs = prof.setdefault("pluginConfig", [])
            mine = next((c for c in confs if c.get("name") == name), None)
            if mine is None:
                mine = {"name": name, "args": {}}
                confs.append(mine)
            mine.setdefault("args", {}).update(args)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fidelity.confirm",
                                 description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("scenarios", nargs="+", help="public scenario names (folders of the conformance suite)")
    ap.add_argument("--from", dest="old", required=True, choices=RELEASES, help="the older release")
    ap.add_argument("--to", dest="new", required=True, choices=RELEASES, help="the release whose change is checked")
    for point in ("score", "filter", "postfilter", "prescore", "prefilter"):
        ap.add_argument(f"--disable-{point}", action="append", default=[], metavar="PLUGIN",
                        help=f"disable PLUGIN at {point} in every profile, in both releases' runs")
    ap.add_argument("--plugin-args", nargs=2, action="append", default=[], metavar=("PLUGIN", "JSON"),
                    help="merge JSON into PLUGIN's args in every profile, in both releases' runs")
    ap.add_argument("--feature-gates", default="", help="gates for the newer release's oracle only (G=false,...)")
    ap.add_argument("--oracle-old", type=Path, default=None, help="the older release's oracle binary")
    ap.add_argument("--oracle-new", type=Path, default=None, help="the newer release's oracle binary")
    ap.add_argument("--conformance", type=Path, default=None, help="the public scenarios")
    ap.add_argument("--work", type=Path, default=Path("/tmp/oracle/confirm"), help="where the changed copies go")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds one oracle run may take")
    a = ap.parse_args(argv)
    conformance = a.conformance or location()
    if not a.conformance and not conformance.is_dir():
        conformance = ROOT.parent.parent / "shared" / "conformance"
    disable = {p: getattr(a, f"disable_{p}") for p in ("score", "filter", "postfilter", "prescore", "prefilter")
               if getattr(a, f"disable_{p}")}
    plugin_args = {name: json.loads(text) for name, text in a.plugin_args}
    profile_change = bool(disable or plugin_args)
    if not profile_change and not a.feature_gates:
        ap.error("nothing to switch off: give --disable-*, --plugin-args or --feature-gates")
    old_bin, new_bin = a.oracle_old or oracle_path(a.old), a.oracle_new or oracle_path(a.new)
    gates = {"ORACLE_FEATURE_GATES": a.feature_gates} if a.feature_gates else {}
    confirmed = 0
    for name in a.scenarios:
        src = conformance / name
        folder = src
        if profile_change:
            sc = Scenario.read(src)
            sc.config = switched_off(sc.config, disable, plugin_args)
            folder = sc.write(a.work / name)
        try:
            new = run_oracle(folder, new_bin, timeout=a.timeout, extra_env=gates)
            old = run_oracle(folder, old_bin, timeout=a.timeout) if profile_change \
                else load(EXPECTED / a.old / f"{name}.json")
        except (RunError, OSError) as e:
            print(f"ERROR     {name}: {e}", flush=True)
            continue
        diffs = compare(reworded(a.old, a.new, old), reworded(a.old, a.new, new))
        if diffs:
            print(f"differs   {name}: {len(diffs)} difference(s) left", flush=True)
            for d in diffs[:8]:
                print(f"    {d.replace('want', a.old).replace(', got', ', ' + a.new)}"[:400])
        else:
            confirmed += 1
            print(f"confirmed {name}: {a.old} and {a.new} give the same result", flush=True)
    print(f"{confirmed} of {len(a.scenarios)} confirmed")
    return 0 if confirmed == len(a.scenarios) else 1


if __name__ == "__main__":
    sys.exit(main())
