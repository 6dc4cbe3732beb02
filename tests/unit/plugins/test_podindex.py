"""The incremental pod index agrees with a recount after any sequence of binds and removals."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.model.objects import Pod
from kplan.model.selectors import LabelSelector
from kplan.plugins.podindex import REQUIRED_ANTI_AFFINITY, PodIndex, PodQuery, TermScope, scope_of
from tests.unit.plugins._builders import ZONE, make_node, make_pod, make_snapshot, namespace, term

NODES = [make_node(f"n{i}", "ab"[i % 2]) for i in range(4)]
QUERIES = [
    PodQuery((TermScope(frozenset({"default"}), None, LabelSelector((("app", "web"),))),)),
    PodQuery((TermScope(frozenset({"default"}), None, LabelSelector((("app", "web"),))),), skip_terminating=True),
    PodQuery((TermScope(frozenset(), LabelSelector(), LabelSelector()),)),
    PodQuery((TermScope(frozenset(), LabelSelector((("env", "prod"),)), LabelSelector((("tier", "fe"),))),
              TermScope(frozenset({"other"}), None, LabelSelector((("app", "web"),))))),
]



def _shape(i: int, ns: str, app: str, tier: str, term_app: str, dying: bool) -> object:
    b = make_pod(f"p{i}", ns).labels(**{k: v for k, v in (("app", app), ("tier", tier)) if v})
    if term_app:
        b.anti_affinity(term(ZONE, {"app": term_app}))
    if dying:
        b.terminating()
    return b


pod_shapes = st.builds(_shape, st.integers(0, 10**6), st.sampled_from(["default", "other"]),
                       st.sampled_from(["web", "db", ""]), st.sampled_from(["fe", ""]), st.sampled_from(["web", ""]),
                       st.booleans())
ops = st.lists(st.tuples(st.booleans(), pod_shapes, st.integers(0, len(NODES) - 1)), max_size=30)


def recount(snap, query: PodQuery) -> list[int]:  # type: ignore[no-untyped-def]
    out = []
    for pods in snap.table.pods:
        out.append(sum(1 for p in pods if not (query.skip_terminating and p.terminating) and all(
            part.matches(p.namespace, p.labels, snap.namespace_labels(p.namespace)) for part in query.parts)))
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(ops)
def test_counts_match_a_recount(operations: list[tuple[bool, object, int]]) -> None:
    snap = make_snapshot(NODES, namespaces=[namespace("default"), namespace("other", env="prod")])
    index = PodIndex.of(snap)
    counters = {q: index.counter(q) for q in QUERIES[:2]}
    placed: list[Pod] = []
    for i, (add, shape, node) in enumerate(operations):
        if add or not placed:
            pod = shape.build()  # type: ignore[attr-defined]
            pod = dataclasses.replace(pod, uid=f"{pod.uid}-{i}")
            snap.add_pod(pod, node)
            placed.append(pod)
        else:
            snap.remove_pod(placed.pop(node % len(placed)))
        if i == len(operations) // 2:
            counters.update({q: index.counter(q) for q in QUERIES[2:]})  # created midway
    for q, c in counters.items():
        assert c.rows.tolist() == recount(snap, q)
    carried = [0] * len(NODES)
    for row, pods in enumerate(snap.table.pods):
        carried[row] = sum(len(p.anti_affinity_required) for p in pods)
    by_carriers = [0] * len(NODES)
    for carrier in index.carriers[REQUIRED_ANTI_AFFINITY]:
        for row in range(len(NODES)):
            by_carriers[row] += carrier.rows.get(row, 0)
    assert by_carriers == carried


def test_a_term_scope_defaults_to_the_owner_namespace() -> None:
    scope = scope_of(make_pod().anti_affinity(term(ZONE, {"app": "web"})).build().anti_affinity_required[0], "own")
    assert scope.namespaces == frozenset({"own"})
    assert scope.matches("own", {"app": "web"}, {}) and not scope.matches("else", {"app": "web"}, {})


def test_evicted_counters_are_rebuilt_correctly(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import kplan.plugins.podindex as podindex

    monkeypatch.setattr(podindex, "MAX_COUNTERS", 2)
    snap = make_snapshot(NODES, [make_pod("w", "default").labels(app="web", tier="fe").on("n1")],
                         namespaces=[namespace("default"), namespace("other", env="prod")])
    index = PodIndex.of(snap)
    first = index.counter(QUERIES[0])
    index.counter(QUERIES[2])
    index.counter(QUERIES[3])  # evicts the least recently used
    assert QUERIES[0] not in index.counters
    snap.add_pod(make_pod("w2", "default").labels(app="web").build(), 3)
    again = index.counter(QUERIES[0])
    assert again is not first
    assert again.rows.tolist() == recount(snap, QUERIES[0]) == [0, 1, 0, 1]


def test_values_read_through_a_table_with_other_codes() -> None:
    from kplan.cluster.node_table import NodeTable
    from kplan.plugins.podindex import read_by_value

    snap = make_snapshot(NODES)
    col = snap.table.labels(ZONE)
    arr = np.zeros(len(col.values) + 1, dtype=np.int64)
    arr[col.code_of["b"]] = 7
    other = NodeTable([make_node("m1", "b"), make_node("m2", "c"), make_node("m3")])
    got = read_by_value(arr, col, other.labels(ZONE), np.arange(3))
    assert got.tolist() == [7, 0, 0]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(pod_shapes, st.integers(0, len(NODES) - 1)), max_size=20), st.integers(0, 20))
def test_an_index_built_over_running_pods_matches_a_recount(placements: list[tuple[object, int]],
                                                            removals: int) -> None:
    # the index is built after the pods run (the bulk path), then some of them leave
    snap = make_snapshot(NODES, namespaces=[namespace("default"), namespace("other", env="prod")])
    placed: list[Pod] = []
    for i, (shape, node) in enumerate(placements):
        pod = shape.build()  # type: ignore[attr-defined]
        pod = dataclasses.replace(pod, uid=f"{pod.uid}-{i}")
        snap.add_pod(pod, node)
        placed.append(pod)
    index = PodIndex.of(snap)
    counters = {q: index.counter(q) for q in QUERIES}
    for pod in placed[:removals]:
        snap.remove_pod(pod)
    for q, c in counters.items():
        assert c.rows.tolist() == recount(snap, q)
    by_carriers = [0] * len(NODES)
    for carrier in index.carriers[REQUIRED_ANTI_AFFINITY]:
        for row, k in carrier.rows.items():
            by_carriers[row] += k
    assert by_carriers == [sum(len(p.anti_affinity_required) for p in pods) for pods in snap.table.pods]
