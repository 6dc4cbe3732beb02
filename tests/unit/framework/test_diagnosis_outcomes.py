"""Diagnosis keeps the filtering passes it is given and writes them into its per-node arrays when
first read: every reading must be what recording each step at once gives (NodeToStatus.Set, a
later status for a node replacing the earlier)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kplan.framework.diagnosis import Diagnosis
from kplan.framework.status import REASONS, Code, Status, reason_id

NAMES = ("NodeUnschedulable", "TaintToleration", "NodeResourcesFit")
OTHER_NAMES = ("NodeResourcesFit", "Other")
CPU = reason_id("Insufficient cpu")
TAINT = reason_id("node(s) had untolerated taint {a: b}")


def outcome(rows: list[int], codes: list[int], reasons: list[int], plugins: list[int],
            names: tuple[str, ...] = NAMES) -> tuple[Any, ...]:
    return (np.array(rows), np.array(codes, dtype=np.int8), np.array(reasons, dtype=np.int32),
            np.array(plugins, dtype=np.int16), names)


# each step: ("outcome", rows, codes, reasons, plugins[, names]) or ("record", row, status)
CASES = {
    "one pass": [("outcome", [4, 0, 2, 3], [0, 1, 2, 0], [0, CPU, TAINT, 0], [-1, 2, 1, -1])],
    "a pass that rejects nothing": [("outcome", [1, 2], [0, 0], [0, 0], [-1, -1])],
    "the nominated node, then a pass over it too": [
        ("record", 2, Status(Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit")),
        ("outcome", [1, 2, 3], [1, 1, 0], [CPU, CPU, 0], [2, 2, -1])],
    "a pass, then a status for one of its nodes": [
        ("outcome", [0, 1], [1, 2], [CPU, TAINT], [2, 1]),
        ("record", 1, Status(Code.UNRESOLVABLE, ("No preemption victims found for incoming pod",)))],
    "two passes with other plugin lists": [
        ("outcome", [0, 1], [1, 0], [CPU, 0], [2, -1]),
        ("outcome", [3, 4], [0, 1], [0, TAINT], [-1, 1], OTHER_NAMES)],
}


def eager(steps: list[tuple[Any, ...]]) -> tuple[dict[int, tuple[int, tuple[str, ...], str]], set[str]]:
    """NodeToStatus, step by step, and every plugin that rejected a node on the way (a status
    replaced later still counts, as UnschedulablePlugins gathers them)."""
    statuses: dict[int, tuple[int, tuple[str, ...], str]] = {}
    rejecting: set[str] = set()
    for step in steps:
        if step[0] == "record":
            _, row, st = step
            statuses[row] = (int(st.code), st.reasons, st.plugin)
            rejecting |= {st.plugin} - {""}
        else:
            rows, codes, reasons, plugins, names = outcome(*step[1:])
            for r, c, rid, p in zip(rows.tolist(), codes.tolist(), reasons.tolist(), plugins.tolist(), strict=True):
                if c:
                    statuses[r] = (c, REASONS[rid], names[p] if p >= 0 else "")
                    rejecting |= {names[p]} if p >= 0 else set()
    return statuses, rejecting


def apply(d: Diagnosis, steps: list[tuple[Any, ...]]) -> None:
    for step in steps:
        if step[0] == "record":
            d.record(step[1], step[2])
        else:
            d.record_outcome(*outcome(*step[1:]))


@pytest.mark.parametrize("name", list(CASES))
def test_every_reading_is_what_recording_each_step_at_once_gives(name: str) -> None:
    steps = CASES[name]
    want, rejecting = eager(steps)
    readings = {
        "num_recorded": lambda d: d.num_recorded,
        "statuses": lambda d: {r: (int(s.code), s.reasons, s.plugin) for r, s in d.statuses.items()},
        "unschedulable_plugins": lambda d: set(d.unschedulable_plugins),
        "rows_with_code": lambda d: d.rows_with_code(Code.UNSCHEDULABLE).tolist(),
        "histogram": lambda d: d.histogram(),
        "recorded": lambda d: np.flatnonzero(d.recorded).tolist(),
    }
    expected = {
        "num_recorded": len(want),
        "statuses": want,
        "unschedulable_plugins": rejecting,
        "rows_with_code": sorted(r for r, (c, _, _) in want.items() if c == Code.UNSCHEDULABLE),
        "recorded": sorted(want),
    }
    for first, read in readings.items():
        # whichever reading comes first, and however many follow, they agree
        d = Diagnosis(6)
        apply(d, steps)
        got = read(d)
        if first in expected:
            assert got == expected[first], first
        for other, read_other in readings.items():
            if other in expected:
                assert read_other(d) == expected[other], (first, other)


def test_plugins_added_to_the_set_before_a_pass_is_written_stay() -> None:
    d = Diagnosis(4)
    d.unschedulable_plugins |= {"VolumeBinding"}
    d.record_outcome(*outcome([0, 1], [1, 0], [CPU, 0], [2, -1]))
    assert d.unschedulable_plugins == {"VolumeBinding", "NodeResourcesFit"}
    assert d.num_recorded == 1
