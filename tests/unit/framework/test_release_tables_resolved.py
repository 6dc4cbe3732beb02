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
    """Every release's rules, as JSON. Gates and plugins are sorted (a release's gate values are
    kept sorted by name, Features.of; plugins are a set); profiles, args and everything else keep
    their order. The keys before plugin_rules are those of the tables before issue 46 (the
    allocator's rules as the pairs they were, now DynamicResources' named rules)."""
    out: dict[str, Any] = {}
    for v, r in sorted(t.RELEASES.items()):
        dra = r.plugin_rules["DynamicResources"]
        # 1.37's three consumable-capacity rules came as one, and still change together
        assert dra["all_requests_listed_by_capacity_alone"] == dra["negative_capacity_aborts"] \
            == dra["shared_devices_count_as_in_use"]
        out[str(v)] = {
            "patch_release": r.scheduler_version,
            "gates": {g.value: [s.default, s.stage.value, s.locked]
                      for g, s in sorted(r.gates.items(), key=lambda kv: kv[0].value)},
            "modelled_gate_changes": sorted([g.value, on] for g, on in t.MODELLED_GATE_CHANGES[v]),
            "default_profile": [list(p) for p in r.default_profile],
            "default_args": r.default_args,
            "plugins": sorted(r.plugins),
            "messages": dataclasses.asdict(r.messages),
            "resize_accounting": r.resize.name,
            "nomination": dataclasses.asdict(r.nomination),
            "dra_pool_rules": [dra["skip_unusable_pools"], dra["counter_slices_reach_every_node"]],
            "dra_capacity_rules": [dra["distinct_per_request_name"], dra["all_requests_listed_by_capacity_alone"]],
            "queueing_hints": dataclasses.asdict(r.queueing_hints),
            "plugin_rules": {name: dict(rules) for name, rules in sorted(r.plugin_rules.items())},
        }
    return out


def test_every_release_s_resolved_tables_are_the_golden_ones() -> None:
    text = json.dumps(_resolved(), indent=1) + "\n"
    if UPDATE:
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "the resolved release tables differ (KPLAN_UPDATE_GOLDEN=1 regenerates them)"

