"""NodeAffinity (reference 3.1 row 4, 3.4, 4.5, 5.3)."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import PreFilterResult
from kplan.framework.status import Code
from tests.builders import (
    PodBuilder,
    Verdict,
    expr,
    make_node,
    make_plugin,
    make_pod,
    make_snapshot,
    name_in,
    run_filter,
    run_score,
    term,
)

OK = Verdict(Code.SUCCESS, ())
NO_MATCH = Verdict(Code.UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",))
ENFORCED = Verdict(Code.UNRESOLVABLE, ("node(s) didn't match scheduler-enforced node affinity",))
CONFLICT = Verdict(Code.UNRESOLVABLE, ("pod affinity terms conflict",))

NODES = [
    make_node("a1").zone("a").labels(disk="ssd", gpus="2"),
    make_node("a2").zone("a").labels(disk="hdd", gpus="8"),
    make_node("b1").zone("b").labels(gpus="x"),
    make_node("c1"),
]


def verdicts(ok: set[str]) -> dict[str, Verdict]:
    return {n: OK if n in ok else NO_MATCH for n in ("a1", "a2", "b1", "c1")}


@pytest.mark.parametrize("pod, fits", [
    pytest.param(make_pod(), {"a1", "a2", "b1", "c1"}, id="a pod without node constraints fits everywhere"),
    pytest.param(make_pod().node_selector(disk="ssd"), {"a1"}, id="a nodeSelector needs the exact label"),
    pytest.param(make_pod().node_selector(disk="ssd", gpus="8"), set(), id="nodeSelector entries are ANDed"),
    pytest.param(make_pod().node_selector(missing="x"), set(), id="a nodeSelector to a missing label fits nowhere"),
    pytest.param(make_pod().required(term(expr("topology.kubernetes.io/zone", "In", "a", "b"))),
                 {"a1", "a2", "b1"}, id="In matches any listed value"),
    pytest.param(make_pod().required(term(expr("disk", "NotIn", "hdd"))), {"a1", "b1", "c1"},
                 id="NotIn also matches nodes without the label"),
    pytest.param(make_pod().required(term(expr("disk", "Exists"))), {"a1", "a2"}, id="Exists needs the label"),
    pytest.param(make_pod().required(term(expr("disk", "DoesNotExist"))), {"b1", "c1"},
                 id="DoesNotExist needs the label absent"),
    pytest.param(make_pod().required(term(expr("gpus", "Gt", "4"))), {"a2"},
                 id="Gt compares integers and skips a non-integer label"),
    pytest.param(make_pod().required(term(expr("gpus", "Lt", "4"))), {"a1"}, id="Lt compares integers"),
    pytest.param(make_pod().required(term(expr("gpus", "Gt", "four"))), set(),
                 id="Gt with a non-integer value matches no node"),
    pytest.param(make_pod().required(term(expr("disk", "In", "ssd")), term(expr("gpus", "In", "x"))), {"a1", "b1"},
                 id="nodeSelectorTerms are ORed"),
    pytest.param(make_pod().required(term(expr("disk", "Exists"), expr("gpus", "Gt", "4"))), {"a2"},
                 id="expressions of a term are ANDed"),
    pytest.param(make_pod().required(term()), set(), id="an empty term matches no node"),
    pytest.param(make_pod().required(term(), term(expr("disk", "In", "hdd"))), {"a2"},
                 id="an empty term is dropped and the others still count"),
    pytest.param(make_pod().required(), set(), id="a required block without terms matches no node"),
    pytest.param(make_pod().required(term(expr("gpus", "Gt", "x")), term(expr("disk", "In", "ssd"))), {"a1"},
                 id="a term that does not parse never matches but the others still count"),
    pytest.param(make_pod().node_selector(disk="ssd").required(term(expr("gpus", "Lt", "1"))), set(),
                 id="nodeSelector and required affinity must both hold"),
    pytest.param(make_pod().required(term(fields=[expr("metadata.name", "NotIn", "a1")])), {"a2", "b1", "c1"},
                 id="matchFields NotIn excludes the named node"),
    pytest.param(make_pod().required(term(expr("disk", "Exists"), fields=[name_in("a2")])), {"a2"},
                 id="matchFields and matchExpressions are ANDed"),
])
def test_node_affinity_filter(pod: PodBuilder, fits: set[str]) -> None:
    snap = make_snapshot(NODES)
    assert run_filter(make_plugin("NodeAffinity", snap), pod.build(), snap) == verdicts(fits)


@pytest.mark.parametrize("pod, skip, names, code", [
    pytest.param(make_pod(), True, None, Code.SUCCESS, id="a pod without node constraints skips the plugin"),
    pytest.param(make_pod().node_selector(disk="ssd"), False, None, Code.SUCCESS,
                 id="a nodeSelector alone gives no node-name restriction"),
    pytest.param(make_pod().required(term(fields=[name_in("a1")])), False, {"a1"}, Code.SUCCESS,
                 id="a metadata.name In requirement restricts the nodes to examine"),
    pytest.param(make_pod().required(term(fields=[name_in("a1")]), term(fields=[name_in("b1")])), False,
                 {"a1", "b1"}, Code.SUCCESS, id="terms naming nodes give the union of their names"),
    pytest.param(make_pod().required(term(fields=[name_in("a1", "a2"), name_in("a2")])), False, {"a2"},
                 Code.SUCCESS, id="requirements inside a term give the intersection of names"),
    pytest.param(make_pod().required(term(fields=[name_in("a1")]), term(expr("disk", "Exists"))), False, None,
                 Code.SUCCESS, id="one term without names lets every node through"),
    pytest.param(make_pod().required(term(fields=[name_in("a1"), name_in("a2")])), False, None, Code.UNRESOLVABLE,
                 id="terms whose names cannot all hold conflict"),
    pytest.param(make_pod().required(term(fields=[name_in("gone")])), False, {"gone"}, Code.SUCCESS,
                 id="names that are not in the cluster are left for the cycle to drop"),
])
def test_node_affinity_pre_filter(pod: PodBuilder, skip: bool, names: set[str] | None, code: Code) -> None:
    snap = make_snapshot(NODES)
    result, status = make_plugin("NodeAffinity", snap).pre_filter(CycleState(), pod.build())
    assert (status.code == Code.SKIP) is skip
    if not skip:
        assert status.code == code
    assert (result.node_names if isinstance(result, PreFilterResult) else None) == (
        frozenset(names) if names is not None else None)


def test_conflicting_name_terms_reject_every_node_with_the_conflict_message() -> None:
    snap = make_snapshot(NODES)
    pod = make_pod().required(term(fields=[name_in("a1"), name_in("a2")])).build()
    assert set(run_filter(make_plugin("NodeAffinity", snap), pod, snap).values()) == {CONFLICT}


ADDED = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    term(expr("topology.kubernetes.io/zone", "In", "a"))]}}}


@pytest.mark.parametrize("args, pod, expected", [
    pytest.param(ADDED, make_pod(), {"a1": OK, "a2": OK, "b1": ENFORCED, "c1": ENFORCED},
                 id="addedAffinity rejects nodes outside it even for a pod without constraints"),
    pytest.param(ADDED, make_pod().node_selector(disk="hdd"), {"a1": NO_MATCH, "a2": OK, "b1": ENFORCED,
                                                                "c1": ENFORCED},
                 id="addedAffinity is checked before the pod's own affinity"),
])
def test_added_affinity(args: dict[str, Any], pod: PodBuilder, expected: dict[str, Verdict]) -> None:
    snap = make_snapshot(NODES)
    assert run_filter(make_plugin("NodeAffinity", snap, args), pod.build(), snap) == expected


@pytest.mark.parametrize("args, pod, raw, normalized", [
    pytest.param(None, make_pod().preferred(10, term(expr("disk", "In", "ssd")))
                 .preferred(30, term(expr("topology.kubernetes.io/zone", "In", "a"))),
                 {"a1": 40, "a2": 30, "b1": 0, "c1": 0}, {"a1": 100, "a2": 75, "b1": 0, "c1": 0},
                 id="matching preferred terms add their weights and the maximum scales to 100"),
    pytest.param(None, make_pod().preferred(0, term(expr("disk", "Exists"))).preferred(5, term()),
                 {"a1": 0, "a2": 0, "b1": 0, "c1": 0}, {"a1": 0, "a2": 0, "b1": 0, "c1": 0},
                 id="weight-0 and empty preferred terms are ignored and all-zero scores stay zero"),
    pytest.param({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 3, "preference": term(expr("gpus", "Exists"))}]}},
                 make_pod().preferred(1, term(expr("disk", "In", "hdd"))),
                 {"a1": 3, "a2": 4, "b1": 3, "c1": 0}, {"a1": 75, "a2": 100, "b1": 75, "c1": 0},
                 id="addedAffinity preferred terms add to the pod's own"),
])
def test_node_affinity_score(args: dict[str, Any] | None, pod: PodBuilder, raw: dict[str, int],
                             normalized: dict[str, int]) -> None:
    snap = make_snapshot(NODES)
    plugin = make_plugin("NodeAffinity", snap, args)
    assert run_score(plugin, pod.build(), snap, normalize=False) == raw
    assert run_score(plugin, pod.build(), snap) == normalized


def test_a_pod_without_preferred_terms_skips_scoring() -> None:
    snap = make_snapshot(NODES)
    assert run_score(make_plugin("NodeAffinity", snap), make_pod().node_selector(disk="ssd").build(), snap) is None
