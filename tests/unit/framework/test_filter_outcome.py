"""The two rules that combine filter verdicts (framework/outcome.py), and filtering with nominated
pods (Framework.run_filter_plugins_with_nominated_pods) through the cycle's fast path and on
copies alike."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.framework.cycle_state import CycleState
from kplan.framework.outcome import FilterOutcome
from kplan.framework.runtime import Framework, Nominator
from kplan.framework.status import Verdicts
from tests.builders import make_node, make_pod, make_snapshot
from tests.unit.framework.test_fixed_filter_verdicts import framework

# verdict codes per row, written as a string: "." passes, "1" Unschedulable, "2" UnschedulableAndUnresolvable


def verdicts(codes: str, reason: int) -> Verdicts:
    c = np.array([0 if ch == "." else int(ch) for ch in codes], dtype=np.int8)
    return Verdicts(c, np.where(c != 0, reason, 0).astype(np.int32))


def shown(out: FilterOutcome) -> list[str]:
    """Per row: "." where every filter passed, else code/reason/plugin of its verdict."""
    return ["." if c == 0 else f"{c}/{r}/{p}" for c, r, p in
            zip(out.codes.tolist(), out.reasons.tolist(), out.plugins.tolist(), strict=True)]


FIRST_REJECTIONS: dict[str, tuple[list[tuple[int, str]], list[str]]] = {
    "no filter: every row passes": ([], [".", ".", "."]),
    "one filter rejects the rows it rejects": ([(0, ".1.")], [".", "1/10/0", "."]),
    "the earlier filter's rejection wins over a later one's": (
        [(0, "1.."), (3, "22.")], ["1/10/0", "2/13/3", "."]),
    "filter order, not the order given, decides": (
        [(3, "22."), (0, "1..")], ["1/10/0", "2/13/3", "."]),
    "a filter that passes every row changes nothing": ([(1, "..."), (2, "..1")], [".", ".", "1/12/2"]),
}


@pytest.mark.parametrize(("given_verdicts", "expected"), FIRST_REJECTIONS.values(), ids=FIRST_REJECTIONS.keys())
def test_the_first_rejection_in_filter_order_is_the_rows_verdict(given_verdicts: list[tuple[int, str]],
                                                                 expected: list[str]) -> None:
    rows = np.array([7, 8, 9])
    out = FilterOutcome.first_rejections(rows, [(k, verdicts(codes, 10 + k)) for k, codes in given_verdicts])
    assert shown(out) == expected
    assert out.rows.tolist() == [7, 8, 9]


REJECT: dict[str, tuple[str, list[int], str, list[int], list[str]]] = {
    # (verdicts so far, pending positions, the next filter's codes on them, positions it passes, outcome)
    "it rejects some pending rows": ("....", [0, 1, 2, 3], ".1.2", [0, 2], [".", "1/5/4", ".", "2/5/4"]),
    "it judges only the pending rows": ("1...", [1, 3], "1.", [3], ["1/9/0", "1/5/4", ".", "."]),
    "it rejects none": ("....", [0, 1, 2, 3], "....", [0, 1, 2, 3], [".", ".", ".", "."]),
}


@pytest.mark.parametrize(("before", "pending", "codes", "passed", "expected"), REJECT.values(), ids=REJECT.keys())
def test_a_filter_decides_only_the_rows_every_earlier_filter_passed(
        before: str, pending: list[int], codes: str, passed: list[int], expected: list[str]) -> None:
    out = FilterOutcome.first_rejections(np.arange(4), [(0, verdicts(before, 9))])
    left = out.reject(np.array(pending), verdicts(codes, 5), 4)
    assert left.tolist() == passed
    assert shown(out) == expected


OVERRULE: dict[str, tuple[str, list[int], str, list[str]]] = {
    # (the pass without nominated pods, positions with some, the pass with them there, outcome)
    "the pass with them rejects: its verdict wins": ("...", [1], "1", [".", "1/7/6", "."]),
    "the pass with them passes: the pass without them stands": ("2..", [0, 2], "..", ["2/3/1", ".", "."]),
    "both reject: the pass with them wins": ("2.1", [0, 2], "11", ["1/7/6", ".", "1/7/6"]),
}


@pytest.mark.parametrize(("without", "at", "with_pods", "expected"), OVERRULE.values(), ids=OVERRULE.keys())
def test_the_pass_with_nominated_pods_overrules_the_pass_without_where_it_rejects(
        without: str, at: list[int], with_pods: str, expected: list[str]) -> None:
    out = FilterOutcome.first_rejections(np.arange(3), [(1, verdicts(without, 3))])
    first = FilterOutcome.first_rejections(np.array(at), [(6, verdicts(with_pods, 7))])
    out.overrule(np.array(at), first)
    assert shown(out) == expected


def test_all_pass_and_empty_have_the_outcome_dtypes() -> None:
    out = FilterOutcome.all_pass(np.array([4, 2]))
    assert (out.codes.dtype, out.reasons.dtype, out.plugins.dtype) == (np.int8, np.int32, np.int16)
    assert shown(out) == [".", "."] and out.plugins.tolist() == [-1, -1]
    assert len(FilterOutcome.empty().rows) == 0


# ------------------------------------------------------------- filtering with nominated pods

ZONES = "abc"


def _cluster(running: list[tuple[int, str, str]]) -> Any:
    nodes = [make_node(f"n{i}").labels(**{"kubernetes.io/hostname": f"n{i}", "topology.kubernetes.io/zone": ZONES[i % 3]})
             .alloc(cpu="4", memory="8Gi", pods=4 + i % 2) for i in range(6)]
    pods = [make_pod(f"r{k}").labels(app=app).req(cpu=cpu).node_name(f"n{row}")
            for k, (row, cpu, app) in enumerate(running)]
    return make_snapshot(nodes, pods)


def _pod(kind: str, name: str, cpu: str, priority: int) -> Any:
    serving = {"matchLabels": {"app": "serving"}}
    p = make_pod(name).labels(app="serving").req(cpu=cpu).priority(priority)
    if kind == "spread":
        p = p.spec(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                               "whenUnsatisfiable": "DoNotSchedule", "labelSelector": serving}])
    elif kind == "anti":
        p = p.spec(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": serving}]}})
    elif kind == "port":
        p = p.host_port(8080)
    return p.build()


def _filtered(fw: Framework, pod: Any, nominator: Nominator) -> list[str]:
    state = CycleState()
    fw.run_pre_filter(state, pod)
    table = fw.handle.snapshot.table
    return shown(fw.run_filter_plugins_with_nominated_pods(state, pod, table, np.arange(len(table)), nominator))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["1", "2"]), st.sampled_from(["web", "serving"])),
                max_size=10),
       st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["1", "2", "3"]), st.sampled_from([0, 10, 20]),
                          st.sampled_from(["plain", "spread", "anti"])), max_size=6),
       st.sampled_from(["plain", "spread", "anti", "port"]), st.sampled_from(["1", "2", "3"]))
def test_the_fast_path_gives_what_copies_of_the_nodes_give(
        running: list[tuple[int, str, str]], nominated: list[tuple[int, str, int, str]], kind: str, cpu: str) -> None:
    fw = framework(_cluster(running), True)
    nominator = Nominator()
    for k, (row, want, priority, shape) in enumerate(nominated):
        nominator.add(_pod(shape, f"nom{k}", want, priority), f"n{row}")
    pod = _pod(kind, "p", cpu, 10)
    fast = _filtered(fw, pod, nominator)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(Framework, "fast_path", lambda self, state: None)
        assert _filtered(fw, pod, nominator) == fast
