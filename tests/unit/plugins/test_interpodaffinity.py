"""InterPodAffinity (reference 3.7, 4.6, 6.4, 12.2): filter, AddPod/RemovePod, score, hints."""

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
    ASSIGNED_POD_UPDATE_LABEL,
    NODE_ADD,
    ClusterEvent,
)
from kplan.framework.status import Code
from kplan.plugins import interpodaffinity
from kplan.plugins.interpodaffinity import InterPodAffinity
from kplan.plugins.interpodaffinity.scoring import PreScoreState, normalize
from kplan.plugins.podindex import AffinityCarriers, PodIndex
from tests.unit.plugins._builders import (
    HOSTNAME,
    ZONE,
    filter_table,
    make_node,
    make_plugin,
    make_pod,
    make_snapshot,
    namespace,
    run_filter,
    run_score,
    term,
    verdict_text,
)

AFF = "UnschedulableAndUnresolvable: node(s) didn't match pod affinity rules"
ANTI = "Unschedulable: node(s) didn't match pod anti-affinity rules"
EXISTING = "Unschedulable: node(s) didn't satisfy existing pods anti-affinity rules"

#: a1, a2 in zone a; b1 in zone b; c1 without a zone label
NODES = [make_node("a1", "a"), make_node("a2", "a"), make_node("b1", "b"), make_node("c1")]
NAMESPACES = [namespace("default"), namespace("other", env="prod"), namespace("prod", env="prod")]


def plugin_for(running: list[Any], args: dict[str, Any] | None = None) -> tuple[InterPodAffinity, Any]:
    snap = make_snapshot(NODES, running, namespaces=NAMESPACES)
    return make_plugin(InterPodAffinity, interpodaffinity, snap, args), snap


def verdicts(**by_node: str) -> dict[str, str]:
    return {n: by_node.get(n, "") for n in ("a1", "a2", "b1", "c1")}


FILTER_CASES = [
    pytest.param(
        [make_pod("web").labels(app="web").on("a1")],
        make_pod().affinity(term(ZONE, {"app": "web"})),
        verdicts(b1=AFF, c1=AFF),
        id="required affinity passes only in the zone of a matching pod"),
    pytest.param(
        [],
        make_pod().labels(app="db").affinity(term(ZONE, {"app": "db"})),
        verdicts(c1=AFF),
        id="the first pod of a self-affine group may go anywhere that has the key"),
    pytest.param(
        [],
        make_pod().labels(app="api").affinity(term(ZONE, {"app": "db"})),
        verdicts(a1=AFF, a2=AFF, b1=AFF, c1=AFF),
        id="the first-pod rule needs the pod to match its own terms"),
    pytest.param(
        [make_pod("db").labels(app="db").on("b1")],
        make_pod().labels(app="db").affinity(term(ZONE, {"app": "db"})),
        verdicts(a1=AFF, a2=AFF, c1=AFF),
        id="the first-pod rule no longer applies once some pod matches"),
    pytest.param(
        [make_pod("web").labels(app="web").on("a1"), make_pod("fe").labels(tier="fe").on("b1")],
        make_pod().affinity(term(ZONE, {"app": "web"}), term(ZONE, {"tier": "fe"})),
        verdicts(a1=AFF, a2=AFF, b1=AFF, c1=AFF),
        id="a pod counts only when it matches every affinity term"),
    pytest.param(
        [make_pod("web").labels(app="web", tier="fe").on("b1")],
        make_pod().affinity(term(ZONE, {"app": "web"}), term(HOSTNAME, {"tier": "fe"})),
        verdicts(a1=AFF, a2=AFF, c1=AFF),
        id="each term's domain must hold the pod that matches all terms"),
    pytest.param(
        [make_pod("web").labels(app="web").on("a1")],
        make_pod().anti_affinity(term(HOSTNAME, {"app": "web"})),
        verdicts(a1=ANTI),
        id="required anti-affinity keeps the pod off a host with a matching pod"),
    pytest.param(
        [make_pod("web").labels(app="web").on("a1")],
        make_pod().anti_affinity(term(ZONE, {"app": "web"})),
        verdicts(a1=ANTI, a2=ANTI),
        id="zone anti-affinity covers the whole zone and not nodes without the key"),
    pytest.param(
        [make_pod("guard").anti_affinity(term(ZONE, {"app": "web"})).on("b1")],
        make_pod().labels(app="web"),
        verdicts(b1=EXISTING),
        id="an existing pod's anti-affinity keeps matching pods out of its zone"),
    pytest.param(
        [make_pod("guard", "prod").anti_affinity(term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {
            "env": "prod"}})).on("b1")],
        make_pod("p", "other").labels(app="web"),
        verdicts(b1=EXISTING),
        id="an existing pod's namespaceSelector is matched against the incoming pod's namespace labels"),
    pytest.param(
        [make_pod("web", "other").labels(app="web").on("a1")],
        make_pod().labels(app="api").affinity(term(ZONE, {"app": "web"})),
        verdicts(a1=AFF, a2=AFF, b1=AFF, c1=AFF),
        id="an incoming term looks only in the pod's own namespace by default"),
    pytest.param(
        [make_pod("web", "other").labels(app="web").on("a1")],
        make_pod().affinity(term(ZONE, {"app": "web"}, namespaces=["other"])),
        verdicts(b1=AFF, c1=AFF),
        id="a namespaces list names the namespaces a term looks in"),
    pytest.param(
        [make_pod("web", "other").labels(app="web").on("a1")],
        make_pod().affinity(term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {"env": "prod"}})),
        verdicts(b1=AFF, c1=AFF),
        id="a namespaceSelector selects namespaces by their labels"),
    pytest.param(
        [make_pod("web", "other").labels(app="web").on("a1")],
        make_pod().affinity(term(ZONE, {"app": "web"}, ns_selector={})),
        verdicts(b1=AFF, c1=AFF),
        id="an empty namespaceSelector selects every namespace"),
    pytest.param(
        [make_pod("web", "other").labels(app="web").on("a1")],
        make_pod().affinity(term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {"env": "dev"}})),
        verdicts(a1=AFF, a2=AFF, b1=AFF, c1=AFF),
        id="a namespaceSelector that matches no namespace adds none"),
    pytest.param(
        [make_pod("web").labels(app="web").on("a1").terminating()],
        make_pod().anti_affinity(term(HOSTNAME, {"app": "web"})),
        verdicts(a1=ANTI),
        id="terminating pods still count"),
    pytest.param(
        [make_pod("web").labels(app="web").on("a1")],
        make_pod().anti_affinity(term(HOSTNAME, nil_selector=True)),
        verdicts(),
        id="a term without a label selector matches no pod"),
    pytest.param(
        [make_pod("web").labels(app="web").on("a1")],
        make_pod().anti_affinity(term(HOSTNAME, {})),
        verdicts(a1=ANTI),
        id="an empty label selector matches every pod of the namespace"),
    pytest.param(
        [make_pod("web").labels(app="web").on("a1")],
        make_pod().labels(app="x").affinity(term(ZONE, {"app": "db"})).anti_affinity(term(HOSTNAME, {"app": "web"})),
        verdicts(a1=AFF, a2=AFF, b1=AFF, c1=AFF),
        id="affinity is checked before anti-affinity"),
    pytest.param(
        [make_pod("web").labels(app="web").anti_affinity(term(HOSTNAME, {"app": "x"})).on("a1")],
        make_pod().labels(app="x").anti_affinity(term(HOSTNAME, {"app": "web"})),
        verdicts(a1=ANTI),
        id="the pod's own anti-affinity is checked before existing pods'"),
    pytest.param(
        [make_pod("v1").labels(app="web", version="1").on("a1"),
         make_pod("v2").labels(app="web", version="2").on("b1")],
        make_pod().labels(app="web", version="2").anti_affinity({**term(HOSTNAME, {"app": "web"}),
                                                                 "matchLabelKeys": ["version"]}),
        verdicts(b1=ANTI),
        id="matchLabelKeys narrow the selector to the pod's own values"),
]


@pytest.mark.parametrize("running, pod, want", FILTER_CASES)
def test_filter(running: list[Any], pod: Any, want: dict[str, str]) -> None:
    plugin, snap = plugin_for(running)
    status, got = run_filter(plugin, pod.build(), snap)
    assert status.ok
    assert got == want


@pytest.mark.parametrize("running, pod", [
    pytest.param([make_pod("web").labels(app="web").on("a1")], make_pod().labels(app="web"),
                 id="a pod without required terms and no existing anti-affinity is skipped"),
    pytest.param([make_pod("guard", "other").anti_affinity(term(ZONE, {"app": "web"})).on("b1")],
                 make_pod().labels(app="web"),
                 id="an existing pod's anti-affinity looks only in its own namespace by default"),
    pytest.param([make_pod("guard").avoid(10, term(ZONE, {"app": "web"})).on("b1")],
                 make_pod().labels(app="web"),
                 id="existing pods' preferred anti-affinity does not filter"),
])
def test_pre_filter_skips(running: list[Any], pod: Any) -> None:
    plugin, snap = plugin_for(running)
    status, _ = run_filter(plugin, pod.build(), snap)
    assert status.code == Code.SKIP


def test_a_pod_added_on_a_fork_satisfies_affinity() -> None:
    plugin, snap = plugin_for([])
    pod = make_pod().labels(app="api").affinity(term(ZONE, {"app": "db"})).build()
    state = CycleState()
    plugin.pre_filter(state, pod)
    db = make_pod("db").labels(app="db").build()
    fork_state = state.clone()
    fork = snap.table.take([snap.row_of("b1")])
    fork.add_pod(db, 0)
    plugin.add_pod(fork_state, pod, db, fork, 0)
    assert filter_table(plugin, fork_state, pod, fork) == [""]
    # the original state is untouched by the fork
    assert filter_table(plugin, state, pod, fork) == [AFF]


def test_a_pod_removed_on_a_fork_lifts_anti_affinity_both_ways() -> None:
    web = make_pod("web").labels(app="web").anti_affinity(term(HOSTNAME, {"app": "api"})).on("a1").build()
    plugin, snap = plugin_for([web])
    pod = make_pod().labels(app="api").anti_affinity(term(HOSTNAME, {"app": "web"})).build()
    state = CycleState()
    plugin.pre_filter(state, pod)
    fork = snap.table.take([snap.row_of("a1")])
    fork_state = state.clone()
    fork.remove_pod(web, 0)
    plugin.remove_pod(fork_state, pod, web, fork, 0)
    assert filter_table(plugin, fork_state, pod, fork) == [""]
    assert filter_table(plugin, state, pod, fork) == [ANTI]
    fork.add_pod(web, 0)
    plugin.add_pod(fork_state, pod, web, fork, 0)
    assert filter_table(plugin, fork_state, pod, fork) == [ANTI]


def test_the_first_pod_rule_sees_pods_added_on_a_fork() -> None:
    plugin, snap = plugin_for([])
    pod = make_pod().labels(app="db").affinity(term(ZONE, {"app": "db"})).build()
    state = CycleState()
    plugin.pre_filter(state, pod)
    fork = snap.table.take([snap.row_of("a1"), snap.row_of("b1")])
    other = make_pod("db").labels(app="db").build()
    fork.add_pod(other, 1)
    plugin.add_pod(state, pod, other, fork, 1)
    assert filter_table(plugin, state, pod, fork) == [AFF, ""]
    fork.remove_pod(other, 1)
    plugin.remove_pod(state, pod, other, fork, 1)
    assert filter_table(plugin, state, pod, fork) == ["", ""]


def test_counts_follow_binds_and_removals_on_the_snapshot() -> None:
    plugin, snap = plugin_for([])
    pod = make_pod().anti_affinity(term(HOSTNAME, {"app": "web"})).build()
    web = make_pod("web").labels(app="web").on("b1").build()
    assert run_filter(plugin, pod, snap)[1] == verdicts()
    snap.add_pod(web, snap.row_of("b1"))
    assert run_filter(plugin, pod, snap)[1] == verdicts(b1=ANTI)
    snap.remove_pod(web)
    assert run_filter(plugin, pod, snap)[1] == verdicts()


SCORE_NODES = [make_node("a1", "a"), make_node("a2", "a"), make_node("b1", "b"),
               make_node("n0", hostname=False)]

SCORE_CASES = [
    pytest.param(
        [make_pod("web").labels(app="web").on("a1")], make_pod().prefer(10, term(ZONE, {"app": "web"})), None,
        {"a1": 10, "a2": 10, "b1": 0, "n0": 0}, {"a1": 100, "a2": 100, "b1": 0, "n0": 0},
        id="preferred affinity favours the zone of matching pods"),
    pytest.param(
        [make_pod("web").labels(app="web").on("a1")], make_pod().avoid(5, term(HOSTNAME, {"app": "web"})), None,
        {"a1": -5, "a2": 0, "b1": 0, "n0": 0}, {"a1": 0, "a2": 100, "b1": 100, "n0": 100},
        id="preferred anti-affinity scores negative before normalisation"),
    pytest.param(
        [make_pod("keeper").affinity(term(ZONE, {"app": "web"})).on("b1")], make_pod().labels(app="web"), None,
        {"a1": 0, "a2": 0, "b1": 1, "n0": 0}, {"a1": 0, "a2": 0, "b1": 100, "n0": 0},
        id="existing pods' required affinity adds hardPodAffinityWeight"),
    pytest.param(
        [make_pod("keeper").affinity(term(ZONE, {"app": "web"})).on("b1")], make_pod().labels(app="web"),
        {"hardPodAffinityWeight": 5},
        {"a1": 0, "a2": 0, "b1": 5, "n0": 0}, {"a1": 0, "a2": 0, "b1": 100, "n0": 0},
        id="hardPodAffinityWeight sets that weight"),
    pytest.param(
        [make_pod("p").prefer(7, term(ZONE, {"app": "web"})).avoid(3, term(HOSTNAME, {"app": "web"})).on("a1")],
        make_pod().labels(app="web"), None,
        {"a1": 4, "a2": 7, "b1": 0, "n0": 0}, {"a1": 57, "a2": 100, "b1": 0, "n0": 0},
        id="existing pods' preferred terms add and subtract their weights"),
    pytest.param(
        [make_pod("p").prefer(7, term(ZONE, {"app": "web"})).avoid(3, term(HOSTNAME, {"app": "web"})).on("a1")],
        make_pod().labels(app="web").avoid(1, term(HOSTNAME, {"app": "none"})),
        {"ignorePreferredTermsOfExistingPods": True},
        {"a1": 4, "a2": 7, "b1": 0, "n0": 0}, {"a1": 57, "a2": 100, "b1": 0, "n0": 0},
        id="ignorePreferredTermsOfExistingPods keeps existing terms when the pod has preferred terms"),
    pytest.param(
        [make_pod("w1").labels(app="web").on("a1"), make_pod("w2").labels(app="web").on("b1"),
         make_pod("w3").labels(app="web").on("b1")],
        make_pod().prefer(2, term(ZONE, {"app": "web"})).avoid(3, term(HOSTNAME, {"app": "web"})), None,
        {"a1": -1, "a2": 2, "b1": -2, "n0": 0}, {"a1": 25, "a2": 100, "b1": 0, "n0": 50},
        id="terms on different keys add up per node and normalise with float math"),
    pytest.param(
        [make_pod("w0").labels(app="web").on("a1")],
        make_pod().prefer(0, term(ZONE, {"app": "web"})), None,
        {"a1": 0, "a2": 0, "b1": 0, "n0": 0}, {"a1": 0, "a2": 0, "b1": 0, "n0": 0},
        id="a matching term of weight 0 still turns scoring on"),
]


@pytest.mark.parametrize("running, pod, args, raw, norm", SCORE_CASES)
def test_score(running: list[Any], pod: Any, args: dict[str, Any] | None, raw: dict[str, int],
               norm: dict[str, int]) -> None:
    snap = make_snapshot(SCORE_NODES, running, namespaces=NAMESPACES)
    plugin = make_plugin(InterPodAffinity, interpodaffinity, snap, args)
    assert run_score(plugin, pod.build(), snap) == (raw, norm)


@pytest.mark.parametrize("running, pod, args", [
    pytest.param([make_pod("keeper").affinity(term(ZONE, {"app": "web"})).on("b1")], make_pod().labels(app="web"),
                 {"hardPodAffinityWeight": 0}, id="hardPodAffinityWeight 0 ignores existing required affinity"),
    pytest.param([make_pod("p").prefer(7, term(ZONE, {"app": "web"})).on("a1")], make_pod().labels(app="web"),
                 {"ignorePreferredTermsOfExistingPods": True},
                 id="ignorePreferredTermsOfExistingPods skips a pod without preferred terms"),
    pytest.param([make_pod("web").labels(app="web").on("a1")], make_pod().prefer(10, term(ZONE, {"app": "db"})),
                 None, id="nothing matching anywhere skips scoring"),
    pytest.param([make_pod("web").labels(app="web").on("n0")], make_pod().prefer(10, term(HOSTNAME, {"app": "web"})),
                 None, id="pods on nodes without labels do not contribute"),
    pytest.param([make_pod("guard").anti_affinity(term(ZONE, {"app": "web"})).on("a1")], make_pod().labels(app="web"),
                 None, id="existing pods' required anti-affinity does not score"),
])
def test_pre_score_skips(running: list[Any], pod: Any, args: dict[str, Any] | None) -> None:
    snap = make_snapshot(SCORE_NODES, running, namespaces=NAMESPACES)
    plugin = make_plugin(InterPodAffinity, interpodaffinity, snap, args)
    assert run_score(plugin, pod.build(), snap) is None


def test_no_running_pod_with_a_term_skips_without_building_the_index_until_one_is_bound() -> None:
    snap = make_snapshot(SCORE_NODES, [make_pod("web").labels(app="web").on("a1")], namespaces=NAMESPACES)
    plugin = make_plugin(InterPodAffinity, interpodaffinity, snap, None)
    plain = make_pod().labels(app="web").build()
    assert run_filter(plugin, plain, snap)[0].code == Code.SKIP
    assert run_score(plugin, plain, snap) is None
    assert not any(isinstance(x, PodIndex) for x in snap.table.listeners)
    # a bound pod with preferred affinity: the plain pod is scored by it (the index is built
    # from every running pod), and its removal skips again
    keeper = make_pod("keeper").prefer(7, term(ZONE, {"app": "web"})).on("b1").build()
    snap.add_pod(keeper, snap.row_of("b1"))
    assert AffinityCarriers.of(snap).count == 1
    assert run_score(plugin, plain, snap) == ({"a1": 0, "a2": 0, "b1": 7, "n0": 0},
                                              {"a1": 0, "a2": 0, "b1": 100, "n0": 0})
    snap.remove_pod(keeper)
    assert AffinityCarriers.of(snap).count == 0
    assert run_score(plugin, plain, snap) is None
    # a pod with terms of its own is never skipped on the count
    assert run_score(plugin, make_pod().prefer(10, term(ZONE, {"app": "web"})).build(), snap) is not None


@pytest.mark.parametrize("scores, want", [
    pytest.param([-3, 0, 4], [0, 42, 100], id="min-max normalisation truncates toward zero"),
    pytest.param([5, 5, 5], [0, 0, 0], id="equal scores normalise to 0"),
    pytest.param([1, 2, 3, 4], [0, 33, 66, 100], id="thirds truncate"),
])
def test_normalize(scores: list[int], want: list[int]) -> None:
    state = PreScoreState({"k": (np.zeros(1, dtype=np.int64), make_snapshot(NODES).table.labels("k"))})
    assert normalize(state, np.array(scores, dtype=np.int64)).tolist() == want


def hint(pod: Any, event: ClusterEvent, release: str = "1.35") -> bool:
    snap = make_snapshot(NODES, [], namespaces=NAMESPACES)
    plugin = make_plugin(InterPodAffinity, interpodaffinity, snap, release=release)
    built = pod.build()
    return any(h(built, event) for kind, h in plugin.events_to_register() if kind == event.kind)


WEB = make_pod("web").labels(app="web", tier="fe")
HINT_CASES = [
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"}), term(HOSTNAME, {"tier": "fe"})),
                 ClusterEvent(ASSIGNED_POD_ADD, WEB.build(), "a1"), True,
                 id="a bound pod matching every required affinity term requeues"),
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"}), term(HOSTNAME, {"tier": "be"})),
                 ClusterEvent(ASSIGNED_POD_ADD, WEB.build(), "a1"), False,
                 id="a bound pod matching only some affinity terms does not"),
    pytest.param(make_pod().anti_affinity(term(ZONE, {"app": "web"})),
                 ClusterEvent(ASSIGNED_POD_ADD, WEB.build(), "a1"), False,
                 id="a bound pod never requeues a pod without required affinity"),
    pytest.param(make_pod().anti_affinity(term(ZONE, {"app": "web"})),
                 ClusterEvent(ASSIGNED_POD_DELETE, WEB.build(), "a1"), True,
                 id="a deleted pod matching every anti-affinity term requeues"),
    pytest.param(make_pod().anti_affinity(term(ZONE, {"app": "db"})),
                 ClusterEvent(ASSIGNED_POD_DELETE, WEB.build(), "a1"), False,
                 id="a deleted pod not matching the anti-affinity does not"),
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"})),
                 ClusterEvent(ASSIGNED_POD_DELETE, WEB.build(), "a1"), False,
                 id="a deletion never requeues a pod without required anti-affinity"),
    pytest.param(make_pod().anti_affinity(term(ZONE, {"app": "web"})),
                 ClusterEvent(ASSIGNED_POD_DELETE, WEB.build(), "", "a1"), False,
                 id="a nominated pod leaving its nomination never requeues (1.35)"),
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {"env": "prod"}})),
                 ClusterEvent(ASSIGNED_POD_ADD, make_pod("w", "prod").labels(app="web").build(), "a1"), False,
                 id="hints match a namespaceSelector against no labels"),
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"}, ns_selector={})),
                 ClusterEvent(ASSIGNED_POD_ADD, make_pod("w", "prod").labels(app="web").build(), "a1"), True,
                 id="an empty namespaceSelector matches every namespace in hints"),
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"})),
                 ClusterEvent(ASSIGNED_POD_UPDATE_LABEL, WEB.build(), "a1",
                              old_pod=make_pod("web").labels(app="old").build()), True,
                 id="a pod relabelled to match the affinity requeues"),
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"})),
                 ClusterEvent(NODE_ADD, node=make_node("z1", "z")), True,
                 id="an added node with an affinity topology key requeues"),
    pytest.param(make_pod().affinity(term("rack", {"app": "web"})),
                 ClusterEvent(NODE_ADD, node=make_node("z1", "z")), False,
                 id="an added node without any term's key does not"),
]


@pytest.mark.parametrize("pod, event, want", HINT_CASES)
def test_queueing_hints(pod: Any, event: ClusterEvent, want: bool) -> None:
    assert hint(pod, event) is want


def db() -> Any:
    return make_pod("db").labels(app="db")


#: the hints' release rules (release.queueing_hints): the answer at 1.34, 1.35, 1.36, 1.37
RELEASE_HINT_CASES = [
    pytest.param(make_pod().labels(app="web"), ClusterEvent(ASSIGNED_POD_DELETE, db().anti_affinity(
        term(HOSTNAME, {"app": "web"})).build(), "a1"), (False, False, True, True),
                 id="a deleted pod whose own anti-affinity selects the pod requeues it from 1.36 (#135325)"),
    pytest.param(make_pod().labels(app="web"), ClusterEvent(ASSIGNED_POD_DELETE, db().anti_affinity(
        term(HOSTNAME, {"app": "db"})).build(), "a1"), (False, False, False, False),
                 id="a deleted pod whose anti-affinity does not select the pod never requeues it"),
    pytest.param(make_pod().anti_affinity(term(HOSTNAME, {"app": "web"})),
                 ClusterEvent(ASSIGNED_POD_DELETE, WEB.build(), "", "a1"), (False, False, True, True),
                 id="a pod leaving its nomination counts as a deleted pod from 1.36 (#135392)"),
    pytest.param(make_pod().labels(app="web"), ClusterEvent(ASSIGNED_POD_DELETE, db().anti_affinity(
        term(HOSTNAME, {"app": "web"})).build(), "", "a1"), (False, False, True, True),
                 id="a pod leaving its nomination whose anti-affinity selects the pod: from 1.36"),
    pytest.param(make_pod().anti_affinity(term(HOSTNAME, {"app": "web"})),
                 ClusterEvent(ASSIGNED_POD_DELETE, WEB.build(), ""), (False, False, False, False),
                 id="an unassigned pod without a nomination never requeues"),
    pytest.param(make_pod().anti_affinity(term(HOSTNAME, {"app": "web"}), term(HOSTNAME, {"team": "z"})),
                 ClusterEvent(ASSIGNED_POD_DELETE, WEB.build(), "a1"), (False, False, False, True),
                 id="a deleted pod matching one of two anti-affinity terms requeues from 1.37 (#139161)"),
    pytest.param(make_pod().labels(app="web", team="z"), ClusterEvent(ASSIGNED_POD_DELETE, db().anti_affinity(
        term(HOSTNAME, {"app": "web"}), term(HOSTNAME, {"team": "y"})).build(), "a1"), (False, False, False, True),
                 id="the pod matching one of the deleted pod's two anti-affinity terms: from 1.37"),
    pytest.param(make_pod().anti_affinity(term(HOSTNAME, {"app": "web"}), term(HOSTNAME, {"team": "z"})),
                 ClusterEvent(ASSIGNED_POD_UPDATE_LABEL, make_pod("web").labels(app="api").build(), "a1",
                              old_pod=WEB.build()), (False, False, False, True),
                 id="a pod relabelled out of one of two anti-affinity terms requeues from 1.37"),
    pytest.param(make_pod().labels(app="web").affinity(term(HOSTNAME, {"app": "db"})),
                 ClusterEvent(ASSIGNED_POD_ADD, db().build(), "", "a1"), (False, False, True, True),
                 id="nominated pods count in the add branch too from 1.36"),
]


@pytest.mark.parametrize("pod, event, want", RELEASE_HINT_CASES)
def test_queueing_hints_by_release(pod: Any, event: ClusterEvent, want: tuple[bool, ...]) -> None:
    got = tuple(hint(pod, event, release) for release in ("1.34", "1.35", "1.36", "1.37"))
    assert got == want


NS_HINT_CASES = [
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {"env": "prod"}})),
                 ClusterEvent(ASSIGNED_POD_ADD, make_pod("w", "prod").labels(app="web").build(), "a1"), (False, True),
                 id="a namespaceSelector term is matched against the namespace's labels from 1.38 (#141954)"),
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {"env": "prod"}})),
                 ClusterEvent(ASSIGNED_POD_ADD, make_pod("w", "ghost").labels(app="web").build(), "a1"), (False, True),
                 id="a namespace the cluster does not have requeues from 1.38"),
    pytest.param(make_pod().affinity(term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {"env": "prod"}})),
                 ClusterEvent(ASSIGNED_POD_ADD, make_pod("w", "prod").labels(app="db").build(), "a1"), (False, False),
                 id="a pod the term's label selector does not match needs no namespace and never requeues"),
    pytest.param(make_pod().anti_affinity(term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {"env": "prod"}})),
                 ClusterEvent(ASSIGNED_POD_DELETE, make_pod("w", "prod").labels(app="web").build(), "a1"),
                 (False, True), id="a deleted pod matching a namespaceSelector anti-affinity term requeues from 1.38"),
]


@pytest.mark.parametrize("pod, event, want", NS_HINT_CASES)
def test_queueing_hints_read_namespace_labels_from_1_38(pod: Any, event: ClusterEvent, want: tuple[bool, ...]) -> None:
    assert tuple(hint(pod, event, release) for release in ("1.37", "1.38")) == want


def verdict_texts(v: Any) -> list[str]:
    return [verdict_text(int(c), int(r)) for c, r in zip(v.codes, v.reasons, strict=True)]


def with_pods_by_fork(plugin: InterPodAffinity, state: CycleState, pod: Any, snap: Any, rows: list[int],
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


#: pods to add or remove: db, web and api pods, one in another namespace, one whose required
#: anti-affinity (zone) is against api pods
EXAMPLES = [make_pod("n-db").labels(app="db"), make_pod("n-web").labels(app="web"),
            make_pod("n-api").labels(app="api"), make_pod("n-db2", "other").labels(app="db"),
            make_pod("n-guard").labels(app="guard").anti_affinity(term(ZONE, {"app": "api"}))]

WITH_PODS_CASES = [
    pytest.param([], make_pod().labels(app="api").affinity(term(ZONE, {"app": "db"})), ["b1", "a1", "c1"],
                 [[1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [2, 0, 0, 0, 0]],
                 id="a db pod added satisfies affinity in its node's zone; a node without the key still fails"),
    pytest.param([make_pod("db").labels(app="db").on("a1")], make_pod().labels(app="db").affinity(
        term(ZONE, {"app": "db"})), ["a1", "b1"], [[-1, 0, 0, 0, 0], [0, 0, 0, 0, 0]],
                 id="the only matching pod removed makes the node the first of a self-affine group"),
    pytest.param([], make_pod().labels(app="api").anti_affinity(term(HOSTNAME, {"app": "web"})), ["a1", "b1"],
                 [[0, 1, 0, 0, 0], [0, 0, 1, 0, 0]], id="a web pod added fails anti-affinity on its node only"),
    pytest.param([], make_pod().labels(app="api").anti_affinity(term(HOSTNAME, {"app": "none"})), ["a1", "c1"],
                 [[0, 0, 0, 0, 1], [0, 0, 0, 0, 1]],
                 id="a pod with anti-affinity against the pod added fails it where the node has the key"),
]


@pytest.mark.parametrize("running, pod, nodes, counts", WITH_PODS_CASES)
def test_filter_with_pods_agrees_with_add_pod_on_a_fork(running: list[Any], pod: Any, nodes: list[str],
                                                        counts: list[list[int]]) -> None:
    plugin, snap = plugin_for(running)
    built = pod.build()
    state = CycleState()
    assert plugin.pre_filter(state, built)[1].ok
    rows = [snap.row_of(n) for n in nodes]
    examples = [e.build() for e in EXAMPLES]
    table = np.array(counts, dtype=np.int64)
    v = plugin.filter_with_pods(state, built, snap.table, np.array(rows), examples, table)
    assert v is not None
    assert verdict_texts(v) == with_pods_by_fork(plugin, state, built, snap, rows, examples, table)


def test_filter_with_pods_on_a_state_with_changes_leaves_it_to_a_fork() -> None:
    plugin, snap = plugin_for([])
    pod = make_pod().labels(app="api").affinity(term(ZONE, {"app": "db"})).build()
    state = CycleState()
    plugin.pre_filter(state, pod)
    plugin.add_pod(state, pod, EXAMPLES[0].build(), snap.table.take([0]), 0)
    assert plugin.filter_with_pods(state, pod, snap.table, np.array([0]), [], np.zeros((1, 0), dtype=np.int64)) is None


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from(["a1", "a2", "b1", "c1"]), st.sampled_from(["web", "db", "api"]),
                          st.sampled_from(["default", "other"]), st.booleans()), max_size=8),
       st.sampled_from([None, "db", "api"]), st.booleans(), st.booleans(),
       st.lists(st.lists(st.integers(-2, 2), min_size=5, max_size=5), min_size=1, max_size=6))
def test_filter_with_pods_agrees_with_forks_on_random_clusters(
        running: list[tuple[str, str, str, bool]], affinity: str | None, anti: bool, zone_anti: bool,
        counts: list[list[int]]) -> None:
    pods = []
    for i, (node, app, ns, guard) in enumerate(running):
        p = make_pod(f"r{i}", ns).labels(app=app).on(node)
        if guard:
            p = p.anti_affinity(term(ZONE if zone_anti else HOSTNAME, {"app": "api"}))
        pods.append(p)
    plugin, snap = plugin_for(pods)
    pod = make_pod().labels(app="api")
    if affinity is not None:
        pod = pod.affinity(term(ZONE, {"app": affinity}))
    if anti:
        pod = pod.anti_affinity(term(HOSTNAME if zone_anti else ZONE, {"app": "web"}))
    built = pod.build()
    state = CycleState()
    if plugin.pre_filter(state, built)[1].code == Code.SKIP:
        return
    examples = [e.build() for e in EXAMPLES]
    rows = [k % len(NODES) for k in range(len(counts))]
    table = np.array(counts, dtype=np.int64)
    v = plugin.filter_with_pods(state, built, snap.table, np.array(rows), examples, table)
    assert v is not None
    assert verdict_texts(v) == with_pods_by_fork(plugin, state, built, snap, rows, examples, table)
