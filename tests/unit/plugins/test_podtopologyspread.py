"""PodTopologySpread (reference 3.6, 4.7, 6.4, 12.2): filter, AddPod/RemovePod, score, default
selector, hints."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.framework.cycle_state import CycleState
from kplan.framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    NODE_UPDATE_LABEL,
    NODE_UPDATE_TAINT,
    ClusterEvent,
)
from kplan.framework.status import Code
from kplan.model.selectors import IN, Requirement
from kplan.plugins import podtopologyspread
from kplan.plugins.podtopologyspread import PodTopologySpread
from kplan.plugins.podtopologyspread.common import default_selector
from kplan.plugins.podtopologyspread.scoring import go_round
from tests.unit.plugins._builders import (
    HOSTNAME,
    ZONE,
    filter_table,
    make_node,
    make_plugin,
    make_pod,
    make_snapshot,
    run_filter,
    run_score,
    selecting,
    verdict_text,
)

SKEW = "Unschedulable: node(s) didn't match pod topology spread constraints"
LABEL = "UnschedulableAndUnresolvable: node(s) didn't match pod topology spread constraints (missing required label)"

#: zone a: a1, a2; zone b: b1, b2; zone c: c1; x1 has no zone label; a* and b* are in pool x
NODES = [make_node("a1", "a", {"pool": "x"}), make_node("a2", "a", {"pool": "x"}), make_node("b1", "b", {"pool": "x"}),
         make_node("b2", "b", {"pool": "x"}), make_node("c1", "c"), make_node("x1")]
ALL = ("a1", "a2", "b1", "b2", "c1", "x1")


def web(name: str, node: str, namespace: str = "default") -> Any:
    return make_pod(name, namespace).labels(app="web").on(node)


def verdicts(**by_node: str) -> dict[str, str]:
    return {n: by_node.get(n, "") for n in ALL}


def incoming(max_skew: int = 1, **extra: Any) -> Any:
    return make_pod().labels(app="web").spread(ZONE, max_skew, {"app": "web"}, **extra)


FILTER_CASES = [
    pytest.param(
        [web("w1", "a1"), web("w2", "a2"), web("w3", "b1")], incoming(), [],
        verdicts(a1=SKEW, a2=SKEW, b1=SKEW, b2=SKEW, x1=LABEL),
        id="a domain more than maxSkew above the minimum fails"),
    pytest.param(
        [web("w1", "a1"), web("w2", "a2"), web("w3", "b1")], incoming(2), [],
        verdicts(a1=SKEW, a2=SKEW, x1=LABEL),
        id="maxSkew 2 lets in the domain one above the minimum"),
    pytest.param(
        [web("w1", "a1"), web("w2", "b1"), web("w3", "c1")], incoming(), [],
        verdicts(x1=LABEL),
        id="equal domains all pass"),
    pytest.param(
        [web("w1", "a1"), web("w2", "b1"), web("w3", "c1")], incoming(minDomains=4), [],
        verdicts(a1=SKEW, a2=SKEW, b1=SKEW, b2=SKEW, c1=SKEW, x1=LABEL),
        id="fewer domains than minDomains make the global minimum 0"),
    pytest.param(
        [web("w1", "a1"), web("w2", "b1")], incoming().node_selector(pool="x"), [],
        verdicts(x1=LABEL),
        id="nodeAffinityPolicy Honor counts only domains of nodes the pod may go to"),
    pytest.param(
        [web("w1", "a1"), web("w2", "b1")], incoming(nodeAffinityPolicy="Ignore").node_selector(pool="x"), [],
        verdicts(a1=SKEW, a2=SKEW, b1=SKEW, b2=SKEW, x1=LABEL),
        id="nodeAffinityPolicy Ignore counts every node"),
    pytest.param(
        [web("w1", "a1"), web("w2", "b1")], incoming(nodeTaintsPolicy="Honor"), [("c1", "dedicated")],
        verdicts(x1=LABEL),
        id="nodeTaintsPolicy Honor leaves out nodes with untolerated taints"),
    pytest.param(
        [web("w1", "a1"), web("w2", "b1")], incoming(nodeTaintsPolicy="Honor").tolerate("dedicated"),
        [("c1", "dedicated")],
        verdicts(a1=SKEW, a2=SKEW, b1=SKEW, b2=SKEW, x1=LABEL),
        id="a tolerated taint keeps the node in"),
    pytest.param(
        [web("w1", "a1"), web("w2", "b1")], incoming(), [("c1", "dedicated")],
        verdicts(a1=SKEW, a2=SKEW, b1=SKEW, b2=SKEW, x1=LABEL),
        id="nodeTaintsPolicy Ignore counts tainted nodes"),
    pytest.param(
        [web("w1", "a1").terminating(), web("w2", "b1")], incoming(), [],
        verdicts(b1=SKEW, b2=SKEW, x1=LABEL),
        id="terminating pods do not count"),
    pytest.param(
        [web("w1", "a1", "other"), web("w2", "b1")], incoming(), [],
        verdicts(b1=SKEW, b2=SKEW, x1=LABEL),
        id="pods of other namespaces do not count"),
    pytest.param(
        [web("w1", "a1"), web("w2", "a2"), web("w3", "a2")], make_pod().spread(ZONE, 1, {}), [],
        verdicts(x1=LABEL),
        id="an empty selector counts no pod"),
    pytest.param(
        [web("w1", "a1"), web("w2", "a2"), web("w3", "b1")],
        make_pod().labels(app="api").spread(ZONE, 1, {"app": "web"}), [],
        verdicts(a1=SKEW, a2=SKEW, x1=LABEL),
        id="a pod its own selector does not match adds nothing to the skew"),
    pytest.param(
        [web("w1", "a1"), web("w2", "a1")],
        make_pod().labels(app="web").spread("rack", 1, {"app": "web"}).spread(ZONE, 1, {"app": "web"}), [],
        verdicts(a1=LABEL, a2=LABEL, b1=LABEL, b2=LABEL, c1=LABEL, x1=LABEL),
        id="a node missing the first constraint's key fails with the missing label"),
    pytest.param(
        [web("w1", "a1"), web("w2", "a1")],
        make_pod().labels(app="web").spread(HOSTNAME, 1, {"app": "web"}).spread(ZONE, 1, {"app": "web"}), [],
        verdicts(a1=SKEW, a2=SKEW, x1=LABEL),
        id="constraints are checked in order on each node"),
]


@pytest.mark.parametrize("running, pod, taints, want", FILTER_CASES)
def test_filter(running: list[Any], pod: Any, taints: list[tuple[str, str]], want: dict[str, str]) -> None:
    nodes = [make_node(n.name, n.labels.get(ZONE), dict(n.labels), [(k, "NoSchedule") for m, k in taints
                                                                     if m == n.name]) for n in NODES]
    snap = make_snapshot(nodes, running)
    plugin = make_plugin(PodTopologySpread, podtopologyspread, snap)
    status, got = run_filter(plugin, pod.build(), snap)
    assert status.ok
    assert got == want


LIST_ARGS = {"defaultingType": "List", "defaultConstraints": [
    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]}


def test_list_defaulting_filters_with_the_default_selector() -> None:
    snap = make_snapshot(NODES, [web("w1", "a1")], selecting_objects=[selecting("Service", "web", {"app": "web"})])
    plugin = make_plugin(PodTopologySpread, podtopologyspread, snap, LIST_ARGS)
    status, got = run_filter(plugin, make_pod().labels(app="web").build(), snap)
    assert got == verdicts(a1=SKEW, a2=SKEW, x1=LABEL)


@pytest.mark.parametrize("pod, args, services", [
    pytest.param(make_pod().labels(app="web"), None, [], id="a pod without constraints is skipped"),
    pytest.param(make_pod().labels(app="web").spread(ZONE, 1, {"app": "web"}, when="ScheduleAnyway"), None, [],
                 id="ScheduleAnyway constraints do not filter"),
    pytest.param(make_pod().labels(app="web"), None, [selecting("Service", "web", {"app": "web"})],
                 id="system defaults never filter"),
    pytest.param(make_pod().labels(app="web"), LIST_ARGS, [],
                 id="List defaults need a Service or controller selecting the pod"),
])
def test_pre_filter_skips(pod: Any, args: dict[str, Any] | None, services: list[Any]) -> None:
    snap = make_snapshot(NODES, selecting_objects=services)
    plugin = make_plugin(PodTopologySpread, podtopologyspread, snap, args)
    assert run_filter(plugin, pod.build(), snap)[0].code == Code.SKIP


def prepared(running: list[Any], pod: Any) -> tuple[PodTopologySpread, Any, Any, CycleState]:
    snap = make_snapshot(NODES, running)
    plugin = make_plugin(PodTopologySpread, podtopologyspread, snap)
    built = pod.build()
    state = CycleState()
    assert plugin.pre_filter(state, built)[1].ok
    return plugin, snap, built, state


def test_a_pod_added_to_the_smallest_domain_on_a_fork_raises_the_minimum() -> None:
    plugin, snap, pod, state = prepared([web("w1", "a1"), web("w2", "b1")], incoming())
    fork = snap.table.take([snap.row_of("a1"), snap.row_of("c1")])
    assert filter_table(plugin, state, pod, fork) == [SKEW, ""]
    forked = state.clone()
    other = web("w3", "c1").build()
    fork.add_pod(other, 1)
    plugin.add_pod(forked, pod, other, fork, 1)
    assert filter_table(plugin, forked, pod, fork) == ["", ""]
    assert filter_table(plugin, state, pod, fork) == [SKEW, ""]


def test_a_pod_removed_on_a_fork_lowers_its_domain() -> None:
    w2 = web("w2", "a1").build()
    plugin, snap, pod, state = prepared([web("w1", "a1"), w2, web("w3", "b1"), web("w4", "c1")], incoming())
    fork = snap.table.take([snap.row_of("a1")])
    assert filter_table(plugin, state, pod, fork) == [SKEW]
    fork.remove_pod(w2, 0)
    plugin.remove_pod(state, pod, w2, fork, 0)
    assert filter_table(plugin, state, pod, fork) == [""]


def test_add_pod_counts_what_an_empty_selector_matches() -> None:
    # PreFilter counts nothing for an empty selector, but AddPod uses Selector.Matches
    plugin, snap, pod, state = prepared([], make_pod().spread(ZONE, 1, {}))
    fork = snap.table.take([snap.row_of("a1")])
    other = make_pod("any").labels(app="db").build()
    plugin.add_pod(state, pod, other, fork, 0)
    assert filter_table(plugin, state, pod, fork) == [SKEW]


@pytest.mark.parametrize("other, node", [
    pytest.param(web("o", "a1", "other"), "a1", id="AddPod ignores pods of other namespaces"),
    pytest.param(make_pod("o").labels(app="db"), "a1", id="AddPod ignores pods the selector does not match"),
    pytest.param(web("o", "x1"), "x1", id="AddPod ignores nodes without every key"),
])
def test_add_pod_ignores(other: Any, node: str) -> None:
    plugin, snap, pod, state = prepared([], incoming())
    fork = snap.table.take([snap.row_of(node)])
    plugin.add_pod(state, pod, other.build(), fork, 0)
    assert state.read("PreFilterPodTopologySpread").delta == [{}]


SCORE_NODES = [make_node("a1", "a"), make_node("a2", "a"), make_node("b1", "b"), make_node("x1")]
WEB_SERVICE = selecting("Service", "web", {"app": "web"})

SCORE_CASES = [
    pytest.param(
        [web("w1", "a1"), web("w2", "b1"), web("w3", "b1")], make_pod().labels(app="web"), [WEB_SERVICE], None, None,
        {"a1": 9, "a2": 8, "b1": 13, "x1": 2}, {"a1": 46, "a2": 53, "b1": 15, "x1": 100},
        id="system defaults weigh hostname and zone counts by the log of their domain counts"),
    pytest.param(
        [web("w1", "a1"), web("w2", "b1"), web("w3", "b1")],
        make_pod().labels(app="web").spread(ZONE, 1, {"app": "web"}, when="ScheduleAnyway"), [], None, None,
        {"a1": 1, "a2": 1, "b1": 3, "x1": 0}, {"a1": 100, "a2": 100, "b1": 33, "x1": 0},
        id="with the pod's own constraints nodes without a key are ignored"),
    pytest.param(
        [], make_pod().labels(app="web").spread(ZONE, 1, {"app": "web"}, when="ScheduleAnyway"), [], None, None,
        {"a1": 0, "a2": 0, "b1": 0, "x1": 0}, {"a1": 100, "a2": 100, "b1": 100, "x1": 0},
        id="no matching pods anywhere scores every counted node 100"),
    pytest.param(
        [web("w1", "a1")], make_pod().labels(app="web").spread(ZONE, 1, {"app": "web"}, when="ScheduleAnyway"), [],
        None, ["a2", "b1"],
        {"a2": 1, "b1": 0}, {"a2": 0, "b1": 100},
        id="pods on nodes outside the feasible set count toward their domain"),
    pytest.param(
        [web("w1", "a1").terminating(), web("w2", "b1")],
        make_pod().labels(app="web").spread(ZONE, 1, {"app": "web"}, when="ScheduleAnyway"), [], None, None,
        {"a1": 0, "a2": 0, "b1": 1, "x1": 0}, {"a1": 100, "a2": 100, "b1": 0, "x1": 0},
        id="terminating pods do not count"),
    pytest.param(
        [web("w1", "a1"), web("w2", "b1"), web("w3", "b1")], make_pod().labels(app="web"), [WEB_SERVICE],
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]}, None,
        {"a1": 1, "a2": 1, "b1": 3, "x1": 0}, {"a1": 100, "a2": 100, "b1": 33, "x1": 0},
        id="List defaults require every key like the pod's own constraints"),
]


@pytest.mark.parametrize("running, pod, services, args, nodes, raw, norm", SCORE_CASES)
def test_score(running: list[Any], pod: Any, services: list[Any], args: dict[str, Any] | None,
               nodes: list[str] | None, raw: dict[str, int], norm: dict[str, int]) -> None:
    snap = make_snapshot(SCORE_NODES, running, selecting_objects=services)
    plugin = make_plugin(PodTopologySpread, podtopologyspread, snap, args)
    assert run_score(plugin, pod.build(), snap, nodes) == (raw, norm)


@pytest.mark.parametrize("pod, services", [
    pytest.param(make_pod().labels(app="web"), [], id="system defaults need a Service or controller selecting the pod"),
    pytest.param(make_pod().labels(app="web").spread(ZONE, 1, {"app": "web"}), [WEB_SERVICE],
                 id="a pod with its own constraints gets no default ones"),
])
def test_pre_score_skips(pod: Any, services: list[Any]) -> None:
    snap = make_snapshot(SCORE_NODES, selecting_objects=services)
    plugin = make_plugin(PodTopologySpread, podtopologyspread, snap)
    assert run_score(plugin, pod.build(), snap) is None


def test_go_round_goes_half_away_from_zero() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.49999999999999994, 2.4999999999999996])
    assert go_round(x).tolist() == [1.0, 2.0, 3.0, -1.0, -2.0, 0.0, 2.0]


RS = selecting("ReplicaSet", "web-rs", {"matchLabels": {"app": "web"},
                                        "matchExpressions": [{"key": "tier", "operator": "Exists"}]})


@pytest.mark.parametrize("pod, objects, labels, requirements", [
    pytest.param(make_pod().labels(app="web", team="a"),
                 [selecting("Service", "s1", {"app": "web"}), selecting("Service", "s2", {"team": "a"})],
                 {"app": "web", "team": "a"}, [], id="the selectors of the Services selecting the pod are merged"),
    pytest.param(make_pod().labels(app="web"),
                 [selecting("Service", "s1", {"app": "db"}), selecting("Service", "s2", {"app": "web"}, "other")],
                 {}, [], id="Services not selecting the pod or in another namespace do not count"),
    pytest.param(make_pod().labels(app="web", tier="fe").owned_by("ReplicaSet", "web-rs"), [RS],
                 {}, [Requirement("app", IN, ("web",)), Requirement("tier", "Exists")],
                 id="the controlling ReplicaSet adds its selector"),
    pytest.param(make_pod().labels(app="web").owned_by("ReplicaSet", "web-rs", "extensions/v1beta1"), [RS],
                 {}, [], id="an owner of another API version is not followed"),
    pytest.param(make_pod().labels(app="web").owned_by("ReplicaSet", "gone"), [RS],
                 {}, [], id="an owner that does not exist adds nothing"),
    pytest.param(make_pod().labels(app="web").owned_by("ReplicationController", "rc", "v1"),
                 [selecting("ReplicationController", "rc", {"app": "web"})],
                 {"app": "web"}, [], id="a ReplicationController merges its selector"),
    pytest.param(make_pod().labels(app="web").owned_by("StatefulSet", "ss"),
                 [selecting("StatefulSet", "ss", {"matchLabels": {"app": "web"}})],
                 {}, [Requirement("app", IN, ("web",))], id="a StatefulSet adds its selector"),
])
def test_default_selector(pod: Any, objects: list[Any], labels: dict[str, str], requirements: list[Requirement]
                          ) -> None:
    sel = default_selector(pod.build(), objects)
    assert dict(sel.match_labels) == labels
    assert list(sel.expressions) == requirements


def hint(pod: Any, event: ClusterEvent, built: Any = None, release: str = "1.35") -> bool:
    snap = make_snapshot(NODES)
    plugin = make_plugin(PodTopologySpread, podtopologyspread, snap, release=release)
    p = built if built is not None else pod.build()
    return any(h(p, event) for kind, h in plugin.events_to_register() if kind == event.kind)


SELF = incoming().build()
HINT_CASES = [
    pytest.param(incoming(), ClusterEvent(ASSIGNED_POD_ADD, web("w", "a1").build(), "a1"), None, True,
                 id="a bound pod of the namespace matching a DoNotSchedule selector requeues"),
    pytest.param(incoming(), ClusterEvent(ASSIGNED_POD_ADD, web("w", "a1", "other").build(), "a1"), None, False,
                 id="a bound pod of another namespace does not"),
    pytest.param(make_pod().labels(app="web").spread(ZONE, 1, {"app": "web"}, when="ScheduleAnyway"),
                 ClusterEvent(ASSIGNED_POD_ADD, web("w", "a1").build(), "a1"), None, False,
                 id="ScheduleAnyway selectors do not requeue"),
    pytest.param(incoming(), ClusterEvent(ASSIGNED_POD_DELETE, web("w", "a1").build(), "a1"), None, True,
                 id="a deleted matching pod requeues"),
    pytest.param(None, ClusterEvent(ASSIGNED_POD_DELETE, SELF, "", "a1"), SELF, True,
                 id="the pod leaving its own nomination requeues when it matches its selectors"),
    pytest.param(None, ClusterEvent(ASSIGNED_POD_DELETE, SELF, "", "a1"),
                 make_pod("q").labels(app="web").spread(ZONE, 1, {"app": "web"}).build(), False,
                 id="a pod leaving a nomination never requeues another pod (1.35)"),
    pytest.param(incoming(), ClusterEvent(NODE_ADD, node=make_node("z1", "z")), None, True,
                 id="an added node with every key requeues"),
    pytest.param(incoming(), ClusterEvent(NODE_ADD, node=make_node("z1")), None, False,
                 id="an added node without every key does not"),
    pytest.param(incoming(), ClusterEvent(NODE_UPDATE_LABEL, node=make_node("z1", "z"), old_node=make_node("z1", "y")),
                 None, True, id="a node whose key value changed requeues"),
    pytest.param(incoming(), ClusterEvent(NODE_UPDATE_LABEL, node=make_node("z1", "z", {"x": "1"}),
                                          old_node=make_node("z1", "z")),
                 None, False, id="a node with an unrelated label change does not"),
    pytest.param(incoming(), ClusterEvent(NODE_UPDATE_TAINT, node=make_node("z1", "z", taints=[("t", "NoSchedule")]),
                                          old_node=make_node("z1", "z")),
                 None, True, id="a node with every key whose taints changed requeues"),
]


@pytest.mark.parametrize("pod, event, built, want", HINT_CASES)
def test_queueing_hints(pod: Any, event: ClusterEvent, built: Any, want: bool) -> None:
    assert hint(pod, event, built) is want


#: involvedInTopologySpreading by release (release.queueing_hints): the answer at 1.34, 1.35,
#: 1.36, 1.37
RELEASE_HINT_CASES = [
    pytest.param(incoming(), ClusterEvent(ASSIGNED_POD_DELETE, web("w", "").build(), "", "a1"),
                 (False, False, True, True),
                 id="a matching pod leaving its nomination requeues from 1.36 (#135392)"),
    pytest.param(incoming(), ClusterEvent(ASSIGNED_POD_DELETE, web("w", "", "other").build(), "", "a1"),
                 (False, False, False, False),
                 id="a pod of another namespace leaving its nomination never requeues"),
    pytest.param(incoming(), ClusterEvent(ASSIGNED_POD_DELETE, make_pod("w").labels(app="db").build(), "", "a1"),
                 (False, False, False, False),
                 id="a pod leaving its nomination that no selector matches never requeues"),
    pytest.param(incoming(), ClusterEvent(ASSIGNED_POD_DELETE, web("w", "").build(), ""),
                 (False, False, False, False),
                 id="an unassigned pod without a nomination never requeues"),
]


@pytest.mark.parametrize("pod, event, want", RELEASE_HINT_CASES)
def test_queueing_hints_by_release(pod: Any, event: ClusterEvent, want: tuple[bool, ...]) -> None:
    assert tuple(hint(pod, event, release=r) for r in ("1.34", "1.35", "1.36", "1.37")) == want


def with_pods_by_fork(plugin: PodTopologySpread, state: CycleState, pod: Any, snap: Any, rows: list[int],
                      examples: list[Any], counts: np.ndarray) -> list[str]:
    """The verdict on each row after AddPod/RemovePod of its counts on a fork of that node alone."""
    out = []
    for k, row in enumerate(rows):
        fork = snap.table.take([row])
        forked = state.clone()
        for j, other in enumerate(examples):
            for _ in range(abs(int(counts[k, j]))):
                (plugin.add_pod if counts[k, j] > 0 else plugin.remove_pod)(forked, pod, other, fork, 0)
        out += filter_table(plugin, forked, pod, fork)
    return out


def with_pods(plugin: PodTopologySpread, state: CycleState, pod: Any, snap: Any, rows: list[int],
              examples: list[Any], counts: np.ndarray) -> list[str]:
    v = plugin.filter_with_pods(state, pod, snap.table, np.array(rows, dtype=np.int64), examples, counts)
    assert v is not None
    return [verdict_text(int(c), int(r)) for c, r in zip(v.codes, v.reasons, strict=True)]


WITH_PODS_CASES = [
    pytest.param([web("w1", "a1"), web("w2", "b1")], incoming(), ["c1", "a1", "b2"], [[1], [0], [1]],
                 id="a pod added to the smallest domain raises the minimum; elsewhere it adds to its domain"),
    pytest.param([web("w1", "a1"), web("w2", "a2"), web("w3", "b1"), web("w4", "c1")], incoming(),
                 ["a1", "b1", "a2"], [[-1], [-1], [-2]],
                 id="pods removed lower their domain and, from the smallest, the minimum"),
    pytest.param([web("w1", "a1")], incoming(), ["x1", "a1", "b1"], [[3], [0], [2]],
                 id="a node without the key fails on the label whatever is added"),
    pytest.param([web("w1", "a1"), web("w2", "b1")], incoming(nodeTaintsPolicy="Honor"), ["c1", "a1"], [[1], [1]],
                 id="a node the inclusion policies leave out counts nothing"),
    pytest.param([web("w1", "a1"), web("w2", "b1"), web("w3", "c1")], incoming(minDomains=4), ["a1", "c1"],
                 [[0], [-1]], id="with fewer domains than minDomains the minimum is 0"),
]


@pytest.mark.parametrize("running, pod, nodes, counts", WITH_PODS_CASES)
def test_filter_with_pods_agrees_with_add_pod_on_a_fork(running: list[Any], pod: Any, nodes: list[str],
                                                        counts: list[list[int]]) -> None:
    plugin, snap, built, state = prepared(running, pod)
    rows = [snap.row_of(n) for n in nodes]
    examples = [web("nominated", "a1").build()]
    table = np.array(counts, dtype=np.int64)
    assert with_pods(plugin, state, built, snap, rows, examples, table) == with_pods_by_fork(
        plugin, state, built, snap, rows, examples, table)


def test_filter_with_pods_on_a_state_with_changes_leaves_it_to_a_fork() -> None:
    plugin, snap, pod, state = prepared([web("w1", "a1")], incoming())
    fork = snap.table.take([snap.row_of("a1")])
    plugin.remove_pod(state, pod, web("w1", "a1").build(), fork, 0)
    assert plugin.filter_with_pods(state, pod, snap.table, np.array([0]), [], np.zeros((1, 0), dtype=np.int64)) is None


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from(ALL), st.sampled_from(["web", "db"]), st.sampled_from(["default", "other"])),
                max_size=10),
       st.sampled_from([1, 2]), st.sampled_from([None, 2, 4]), st.booleans(), st.booleans(),
       st.lists(st.lists(st.integers(-2, 3), min_size=3, max_size=3), min_size=1, max_size=6))
def test_filter_with_pods_agrees_with_forks_on_random_clusters(
        running: list[tuple[str, str, str]], skew: int, min_domains: int | None, honor_taints: bool,
        two_constraints: bool, counts: list[list[int]]) -> None:
    nodes = [make_node("a1", "a", {"pool": "x"}), make_node("a2", "a", {"pool": "x"}),
             make_node("b1", "b", {"pool": "x"}, taints=[("gpu", "NoSchedule")]), make_node("b2", "b"),
             make_node("c1", "c", {"pool": "x"}), make_node("x1", labels={"pool": "x"})]
    pods = [make_pod(f"r{i}", ns).labels(app=app).on(node) for i, (node, app, ns) in enumerate(running)]
    extra: dict[str, Any] = {}
    if min_domains is not None:
        extra["minDomains"] = min_domains
    if honor_taints:
        extra["nodeTaintsPolicy"] = "Honor"
    pod = make_pod().labels(app="web").spread(ZONE, skew, {"app": "web"}, **extra)
    if two_constraints:
        pod = pod.spread("pool", 1, {"app": "web"})
    snap = make_snapshot(nodes, pods)
    plugin = make_plugin(PodTopologySpread, podtopologyspread, snap)
    built = pod.build()
    state = CycleState()
    assert plugin.pre_filter(state, built)[1].ok
    examples = [make_pod("n1").labels(app="web").build(), make_pod("n2").labels(app="db").build(),
                make_pod("n3", "other").labels(app="web").build()]
    rows = [k % len(nodes) for k in range(len(counts))]
    table = np.array(counts, dtype=np.int64)
    assert with_pods(plugin, state, built, snap, rows, examples, table) == with_pods_by_fork(
        plugin, state, built, snap, rows, examples, table)


#: a zone label with the empty value, nodes without a zone, a node without its hostname label
EDGE_NODES = [make_node("a1", "a"), make_node("a2", "a"), make_node("e1", ""), make_node("x1"), make_node("x2"),
              make_node("h1", "b", hostname=False)]


@pytest.mark.parametrize("running, nodes, raw, norm", [
    pytest.param([web("w1", "a1"), web("w2", "e1"), web("w3", "x1"), web("w4", "h1")], None,
                 {"a1": 10, "a2": 8, "e1": 11, "h1": 6, "x1": 4, "x2": 2},
                 {"a1": 27, "a2": 45, "e1": 18, "h1": 63, "x1": 81, "x2": 100}, id="every node feasible"),
    pytest.param([web("w1", "a1"), web("w2", "e1"), web("w3", "x1"), web("w4", "x1")], ["a2", "x2", "h1"],
                 {"a2": 8, "x2": 2, "h1": 4}, {"a2": 25, "x2": 100, "h1": 75}, id="some nodes feasible"),
])
def test_system_default_scores_with_an_empty_zone_missing_zones_and_a_missing_hostname(running, nodes, raw,
                                                                                       norm) -> None:
    # with the system defaults keys are not all required: a node without the zone label is in
    # the domain "" when some node has the label empty; without its hostname label a node gets
    # no hostname part
    snap = make_snapshot(EDGE_NODES, running, selecting_objects=[WEB_SERVICE])
    plugin = make_plugin(PodTopologySpread, podtopologyspread, snap, None)
    assert run_score(plugin, make_pod().labels(app="web").build(), snap, nodes) == (raw, norm)
