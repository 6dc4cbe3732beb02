"""Pins every release's resolved tables (framework/release_tables.py) to a golden JSON file.

release_tables.py states each release as the one before it plus its changes; this test checks
what those changes resolve to, table by table and release by release, so that a restructuring
of the tables changes nothing and a change to one release shows up as a diff of the golden file.
Regenerate after an intended change with
``KPLAN_UPDATE_GOLDEN=1 python -m pytest tests/unit/framework/test_release_tables_resolved.py``
and read the diff. DEFAULT_RELEASE is not pinned here (tests/unit/framework/test_release.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from kplan.framework import release_tables as t

GOLDEN = Path(__file__).with_name("release_tables.golden.json")
UPDATE = os.environ.get("KPLAN_UPDATE_GOLDEN") == "1"


def _resolved() -> dict[str, Any]:
    """Every table's row for every release, as JSON. Gates and plugins are sorted (a release's
    gate values are kept sorted by name, Features.of; plugins are a set); profiles, args and
    everything else keep their order."""
    out: dict[str, Any] = {}
    for v in sorted(t.GATES):
        out[str(v)] = {
            "patch_release": t.PATCH_RELEASES[v],
            "gates": {g.value: [s.default, s.stage.value, s.locked]
                      for g, s in sorted(t.GATES[v].items(), key=lambda kv: kv[0].value)},
            "modelled_gate_changes": sorted([g.value, on] for g, on in t.MODELLED_GATE_CHANGES[v]),
            "default_profile": [list(p) for p in t.DEFAULT_PROFILE[v]],
            "default_args": t.DEFAULT_ARGS[v],
            "plugins": sorted(t.PLUGINS[v]),
            "messages": dataclasses.asdict(t.MESSAGES[v]),
            "resize_accounting": t.RESIZE_ACCOUNTING[v].name,
            "nomination": dataclasses.asdict(t.NOMINATION[v]),
            "dra_pool_rules": list(t.DRA_POOL_RULES[v]),
            "dra_capacity_rules": list(t.DRA_CAPACITY_RULES[v]),
            "queueing_hints": dataclasses.asdict(t.QUEUEING_HINTS[v]),
        }
    return out


def test_every_release_s_resolved_tables_are_the_golden_ones() -> None:
    text = json.dumps(_resolved(), indent=1) + "\n"
    if UPDATE:
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "the resolved release tables differ (KPLAN_UPDATE_GOLDEN=1 regenerates them)"

