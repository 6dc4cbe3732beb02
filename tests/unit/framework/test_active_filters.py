"""The filters a cycle runs (runtime._active_filters) and the signature fixed_filters_share notes.

The list of Filter plugins PreFilter did not skip is kept per set of skipped plugins, and
fixed_filters_share leaves the pod's fixed-filter signature in the cycle state for run_filters.
Neither may change an outcome: a cycle that skips a plugin never runs it and one that does not
skip it always does, in any order, and noting the signature gives what filtering without it gives.
"""

from __future__ import annotations

import numpy as np
import pytest

from kplan.cluster.node_table import NodeTable
from kplan.framework.cycle_state import CycleState
from kplan.framework.runtime import Framework
from kplan.model.objects import Pod
from tests.builders import make_node, make_pod, make_snapshot
from tests.unit.framework.test_fixed_filter_verdicts import NODES, PODS, framework

SMALL = [make_node("n1").alloc(cpu="1", memory="1Gi", pods=10), make_node("n2").alloc(cpu="8", memory="8Gi", pods=10)]


def codes_with_skips(fw: Framework, skipped: set[str], rows: np.ndarray) -> list[int]:
    pod = make_pod("big").req(cpu="4").build()
    state = CycleState()
    fw.run_pre_filter(state, pod)
    # PreFilter's own skips (the volume, spread and affinity plugins) plus the ones asked for
    state.skip_filter = state.skip_filter | skipped
    return fw.run_filters(state, pod, fw.handle.snapshot.table, rows).codes.tolist()


SKIP_SEQUENCES = {
    "skipped, then run, then skipped again": [True, False, True],
    "run, then skipped, then run again": [False, True, False],
}


@pytest.mark.parametrize("sequence", SKIP_SEQUENCES.values(), ids=SKIP_SEQUENCES.keys())
def test_a_plugin_runs_exactly_in_the_cycles_that_do_not_skip_it(sequence: list[bool]) -> None:
    fw = framework(make_snapshot(SMALL), True)
    rows = np.arange(2)
    for skip_fit in sequence:
        skipped = {"NodeResourcesFit"} if skip_fit else set()
        # n1 has 1 cpu: only NodeResourcesFit rejects the 4-cpu pod there, as unresolvable
        assert codes_with_skips(fw, skipped, rows) == ([0, 0] if skip_fit else [2, 0])


@pytest.mark.parametrize("rows", [np.arange(2), np.array([1]), np.array([0])], ids=["both", "second", "first"])
def test_skipping_the_last_filter_that_rejects_leaves_the_rows_it_passed(rows: np.ndarray) -> None:
    fw = framework(make_snapshot(SMALL), True)
    assert codes_with_skips(fw, set(), rows) == [2 if r == 0 else 0 for r in rows.tolist()]


@pytest.mark.parametrize("name", list(PODS))
def test_noting_the_signature_first_gives_the_same_verdicts(name: str) -> None:
    snap = make_snapshot(NODES)
    noted, plain = framework(snap, True), framework(snap, True)
    rows = np.arange(len(NODES))
    for _ in range(3):
        # the first pass meets each signature, the second fills the cache, the third reads it
        pod = PODS[name].build()
        a, b = CycleState(), CycleState()
        noted.run_pre_filter(a, pod)
        plain.run_pre_filter(b, pod)
        noted.fixed_filters_share(a, pod, snap.table)
        first, second = noted.run_filters(a, pod, snap.table, rows), plain.run_filters(b, pod, snap.table, rows)
        assert (first.codes.tolist(), first.reasons.tolist(), first.plugins.tolist()) == (
            second.codes.tolist(), second.reasons.tolist(), second.plugins.tolist())


def filtered(fw: Framework, pod: Pod, table: NodeTable, rows: np.ndarray) -> list[int]:
    state = CycleState()
    fw.run_pre_filter(state, pod)
    return fw.run_filters(state, pod, table, rows).codes.tolist()


def test_the_signature_noted_for_one_pod_is_not_read_for_another() -> None:
    snap = make_snapshot(NODES)
    fw = framework(snap, True)
    rows = np.arange(len(NODES))
    for _ in range(2):
        for name in ("selector", "tolerates all"):
            filtered(fw, PODS[name].build(), snap.table, rows)
    sel, tol = PODS["selector"].build(), PODS["tolerates all"].build()
    s1, s2 = CycleState(), CycleState()
    fw.run_pre_filter(s1, sel)
    fw.run_pre_filter(s2, tol)
    fw.fixed_filters_share(s1, sel, snap.table)
    expected = filtered(framework(snap, False), tol, snap.table, rows)
    assert fw.run_filters(s2, tol, snap.table, rows).codes.tolist() == expected


def test_cycles_whose_plugins_skip_alike_share_one_frozen_set_of_them() -> None:
    """run_pre_filter hands every cycle with the same skipped plugins the same frozenset (what the
    filters look up by it hashes it once), and a clone of the state shares it."""
    fw = framework(make_snapshot(SMALL), True)
    states = [CycleState() for _ in range(3)]
    for k, state in enumerate(states):
        fw.run_pre_filter(state, make_pod(f"p{k}").req(cpu="1").build())
    first = states[0].skip_filter
    assert isinstance(first, frozenset) and "NodePorts" in first and "NodeResourcesFit" not in first
    assert all(state.skip_filter is first for state in states)
    assert states[0].clone().skip_filter is first
    # a pod with a host port does not skip NodePorts: another set
    other = CycleState()
    fw.run_pre_filter(other, make_pod("web").req(cpu="1").host_port(8080).build())
    assert other.skip_filter == first - {"NodePorts"}
