"""RunScorePlugins' range check: a normalised score outside [0, 100] is an error naming the
first plugin (in the profile's order) that gave one, with the total and the scores of the
plugins before it; the check of all plugins at once must find the same plugin."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kplan.framework.cycle_state import CycleState
from kplan.framework.runtime import Framework
from kplan.framework.status import Code
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import SchedulerHandle
from tests.builders import make_node, make_pod, make_snapshot

NODES = [make_node(f"n{i}").alloc(cpu="4", memory="8Gi", pods=10) for i in range(4)]


def framework() -> tuple[Framework, Any]:
    snap = make_snapshot(NODES)
    setup = SchedulerSetup.of()
    registry, config = setup.registry, setup.config
    handle = SchedulerHandle(snap, config, 0, True, {})
    fw = Framework(config.profiles[0], registry, handle)
    handle.frameworks[fw.profile_name] = fw
    return fw, snap


def scores(fw: Framework, snap: Any) -> tuple[np.ndarray, dict[str, Any], Any]:
    pod = make_pod("p").req(cpu="500m", memory="1Gi").build()
    state = CycleState()
    fw.run_pre_filter(state, pod)
    rows = np.arange(len(NODES))
    fw.run_pre_score(state, pod, snap.table, rows)
    return fw.run_score(state, pod, snap.table, rows)


def test_scores_in_range_pass() -> None:
    fw, snap = framework()
    total, detail, status = scores(fw, snap)
    assert status.ok
    assert list(detail) == [p.name for p in fw.score_plugins if p.name in detail]


@pytest.mark.parametrize("bad_values", [(101, 50), (-1, 50), (50, 101)], ids=["first high", "first low", "second"])
def test_first_plugin_out_of_range_is_named(bad_values: tuple[int, int]) -> None:
    fw, snap = framework()
    plain_total, plain_detail, _ = scores(fw, snap)
    names = list(plain_detail)
    first, second = names[1], names[3]
    for name, value in zip((first, second), bad_values, strict=True):
        plugin = next(p for p in fw.score_plugins if p.name == name)
        fw.normalizers.pop(name, None)
        plugin.score = lambda *a, _v=value, **k: np.full(len(NODES), _v, dtype=np.int64)  # type: ignore[method-assign]
    total, detail, status = scores(fw, snap)
    culprit, value = (first, bad_values[0]) if not 0 <= bad_values[0] <= 100 else (second, bad_values[1])
    assert status.code == Code.ERROR
    assert status.plugin == culprit
    assert status.message == (f'applying score defaultWeights on Score plugins: plugin "{culprit}" returns an '
                              f"invalid score {value}, it should in the range of [0, 100] after normalizing")
    before = names[:names.index(culprit)]
    assert list(detail) == before
    expected = sum((detail[n][1] * fw.weights[n] for n in before), np.zeros(len(NODES), dtype=np.int64))
    assert total.tolist() == expected.tolist()
