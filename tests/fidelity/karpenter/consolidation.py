"""Karpenter's disruption, kplan against the oracle (``karpenter-oracle consolidate``,
oracle/karpenter/README.md), on a scenario folder.

A consolidation scenario folder (tests/fidelity/karpenter/consolidate/<case>/) holds the object
files and ``catalog.json`` as a provisioning scenario does (the layout and its readers are
oracle.py's), ``options.json`` with ``now`` (RFC
3339, the fake clock's time) and optionally ``spotToSpot``, and the oracle's ``expected.json``.

What is compared: every command in order (pass, method, reason, decision, candidates, the
replacements' NodePool, instance-type options, launched type, capacity type, zone and price, the
savings), and per node of the input its verdict (deleted, replaced, kept), the command that took
it, and for a kept node the message when Karpenter published one for it in the last pass (kplan
words its own reasons where Karpenter publishes none: budgets, consolidateAfter, Balanced scores).
"""

from __future__ import annotations

import calendar
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from kplan.autoscaler.karpenter.disruption.controller import (
    NO_DISRUPTION_FOUND,
    ConsolidationResult,
    DisruptionOptions,
)
from tests.fidelity.karpenter.oracle import CATALOG, object_files, options

ROOT = Path(__file__).resolve().parents[3]
FAMILY = Path(__file__).resolve().parent / "consolidate"
PRICE_TOLERANCE = 1e-9
#: kplan's own words for a kept node (Karpenter publishes no event for these)
KPLAN_WORDS = ("No allowed disruptions", "ConsolidateAfter (", "Balanced: ", NO_DISRUPTION_FOUND)


def oracle_command(binary: Path, folder: Path) -> list[str]:
    cmd = [str(binary), "consolidate", "--instance-types", str(folder / CATALOG), "--compact"]
    for f in object_files(folder):
        cmd += ["--cluster", str(f)]
    opts = options(folder)
    if "now" in opts:
        cmd += ["--now", opts["now"]]
    if opts.get("spotToSpot"):
        cmd.append("--spot-to-spot")
    return cmd


def run_oracle(binary: Path, folder: Path, timeout: float = 600) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "ORACLE_VERBOSE"}
    proc = subprocess.run(oracle_command(binary, folder), capture_output=True, text=True, timeout=timeout, env=env,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or f"exit status {proc.returncode}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def parse_now(text: str) -> float:
    return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))


def run_kplan(folder: Path) -> ConsolidationResult:
    """kplan's answer for the scenario: its inputs loaded as ``kplan --cluster`` loads them."""
    from kplan.autoscaler.karpenter import KarpenterCluster
    from kplan.autoscaler.karpenter.disruption.world import consolidate
    from kplan.cli.workspace import load_inputs
    from kplan.io.catalog import read_catalog
    from kplan.whatif.daemons import daemonset_template_pods

    inputs = load_inputs([str(f) for f in object_files(folder)], [], progress=False).inputs
    catalog = read_catalog(str(folder / CATALOG))
    bound = tuple(p for p in inputs.running if p.node_name)
    pending = list(inputs.pending)
    cluster = KarpenterCluster(tuple(inputs.nodes), bound, tuple(inputs.node_pools), tuple(inputs.node_claims),
                               tuple(daemonset_template_pods(inputs)), catalog)
    opts = options(folder)
    now = parse_now(opts["now"]) if "now" in opts else parse_now("2025-01-11T00:00:00Z")
    return consolidate(cluster, pending, inputs.pdbs, {}, now, DisruptionOptions(spot_to_spot=bool(opts.get("spotToSpot"))))


def as_json(r: ConsolidationResult) -> dict[str, Any]:
    """kplan's answer in the oracle's JSON."""
    return {
        "commands": [{"round": c.round, "method": c.method, "reason": c.reason, "decision": c.decision,
                      "candidates": list(c.candidates), "savings": c.savings,
                      "replacements": [{"name": x.name, "nodePool": x.node_pool,
                                        "instanceTypes": list(x.instance_type_options),
                                        "instanceType": x.instance_type, "capacityType": x.capacity_type,
                                        "zone": x.zone, "price": x.price, "pods": list(x.pods)}
                                       for x in c.replacements]} for c in r.commands],
        "nodes": [{"name": n.name, "verdict": n.verdict, "reason": n.reason, "method": n.method, "round": n.round,
                   "replacedBy": list(n.replaced_by)} for n in r.nodes],
    }


def _close(a: Any, b: Any) -> bool:
    return abs(float(a) - float(b)) <= PRICE_TOLERANCE * max(1.0, abs(float(a)))


def compare(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    out = []
    wc, gc = want.get("commands") or [], got.get("commands") or []
    for i, (w, g) in enumerate(zip(wc, gc, strict=False)):
        where = f"commands[{i}]"
        for key in ("round", "method", "reason", "decision", "candidates"):
            if w.get(key) != g.get(key):
                out.append(f"{where}.{key}: oracle {w.get(key)!r}, kplan {g.get(key)!r}")
        if not _close(w.get("savings", 0), g.get("savings", 0)):
            out.append(f"{where}.savings: oracle {w.get('savings')}, kplan {g.get('savings')}")
        wr, gr = w.get("replacements") or [], g.get("replacements") or []
        if len(wr) != len(gr):
            out.append(f"{where}.replacements: oracle {len(wr)}, kplan {len(gr)}")
        for j, (a, b) in enumerate(zip(wr, gr, strict=False)):
            for key in ("name", "nodePool", "instanceTypes", "instanceType", "capacityType", "zone", "pods"):
                if a.get(key) != b.get(key):
                    out.append(f"{where}.replacements[{j}].{key}: oracle {a.get(key)!r}, kplan {b.get(key)!r}")
            if not _close(a.get("price", 0), b.get("price", 0)):
                out.append(f"{where}.replacements[{j}].price: oracle {a.get('price')}, kplan {b.get('price')}")
    if len(wc) != len(gc):
        out.append(f"commands: oracle {len(wc)}, kplan {len(gc)}")
    wn = {n["name"]: n for n in want.get("nodes") or []}
    gn = {n["name"]: n for n in got.get("nodes") or []}
    for name in sorted(set(wn) | set(gn)):
        w, g = wn.get(name, {}), gn.get(name, {})
        for key in ("verdict", "method", "round", "replacedBy"):
            if (w.get(key) or None) != (g.get(key) or None):
                out.append(f"nodes[{name}].{key}: oracle {w.get(key)!r}, kplan {g.get(key)!r}")
        if w.get("verdict") == "kept" and w.get("events") and not str(g.get("reason", "")).startswith(KPLAN_WORDS):
            if g.get("reason") != w.get("reason"):
                out.append(f"nodes[{name}].reason: oracle {w.get('reason')!r}, kplan {g.get('reason')!r}")
    return out
