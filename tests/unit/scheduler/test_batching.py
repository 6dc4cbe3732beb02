"""Opportunistic batching (KEP-5598, on by default from 1.35): when a pod reuses the previous pod's
sorted node list, when the list is dropped, and placements that differ from a fresh computation
(the same scenario, judged by the v1.35.4 oracle, is tests/fidelity/regressions/
batching-reuses-a-stale-order)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kplan.framework.batch import OpportunisticBatch
from kplan.framework.release import Release
from tests.builders import expr, make_node, make_pod, simulate, term

# ------------------------------------------------------------------------------ the state machine

SIG = ("sig",)


def rejects(_: str) -> bool:
    return True


def fits(_: str) -> bool:
    return False


def stored(nodes: Sequence[str] = ("b", "c"), cycle: int = 1, chosen: str = "a") -> OpportunisticBatch:
    b = OpportunisticBatch()
    b.store(cycle, SIG, "", chosen, lambda: list(nodes))
    return b


@pytest.mark.parametrize(("batch", "cycle", "signature", "last_chosen_rejects", "hint"), [
    (OpportunisticBatch(), 2, SIG, rejects, ""),
    (stored(), 2, SIG, rejects, "b"),
    (stored(), 3, SIG, rejects, ""),
    (stored(), 2, ("other",), rejects, ""),
    (stored(), 2, None, rejects, ""),
    (stored(), 2, SIG, fits, ""),
    (stored(()), 2, SIG, rejects, ""),
], ids=["no state", "the next cycle, same signature, last node full: the next node",
        "a cycle in between (another pod, another profile) drops the hint",
        "another signature", "a pod without a signature",
        "the pod still fits the node chosen last: no hint", "an empty list is no state"])
def test_when_a_hint_is_given(batch: OpportunisticBatch, cycle: int, signature: Any,
                              last_chosen_rejects: Any, hint: str) -> None:
    assert batch.node_hint(cycle, signature, last_chosen_rejects) == hint


def test_a_used_hint_keeps_the_rest_of_the_list() -> None:
    b = stored(("b", "c", "d"))
    assert b.node_hint(2, SIG, rejects) == "b"
    b.store(2, SIG, "b", "b", None)
    assert b.node_hint(3, SIG, rejects) == "c"
    b.store(3, SIG, "c", "c", None)
    assert b.node_hint(4, SIG, rejects) == "d"
    b.store(4, SIG, "d", "d", None)
    assert b.node_hint(5, SIG, rejects) == ""  # the list is used up
    assert b.batched_pods == 3


@pytest.mark.parametrize(("hint", "chosen", "others", "next_hint"), [
    ("b", "x", lambda: ["y", "z"], "y"),
    ("b", "x", None, ""),
    ("", "x", lambda: [], ""),
], ids=["a hint not used: the cycle's own list replaces the state",
        "one feasible node (or a nominated one) leaves no list",
        "no other feasible node leaves no list"])
def test_a_cycle_that_did_not_use_its_hint_stores_its_own_list(hint: str, chosen: str, others: Any,
                                                               next_hint: str) -> None:
    b = stored()
    b.store(2, SIG, hint, chosen, others)
    assert b.node_hint(3, SIG, rejects) == next_hint


def test_a_pod_without_a_signature_leaves_no_state() -> None:
    b = stored()
    b.store(2, None, "", "x", lambda: ["y"])
    assert b.node_hint(3, SIG, rejects) == ""


# ------------------------------------------------------------------------------ whole simulations

#: PodTopologySpread's system default constraints make every pod unsignable (upstream's
#: SignPod): batching needs a profile without them
LIST_DEFAULTING = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                   "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                       {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}]}

NODES = [make_node("node-a").alloc(cpu="4", memory="8Gi", pods="110").labels(a="1", b="1"),
         make_node("node-b").alloc(cpu="4", memory="8Gi", pods="110").labels(b="1"),
         make_node("node-c").alloc(cpu="16", memory="32Gi", pods="110")]
RUNNING = [make_pod("filler-b").node_name("node-b").req(cpu="1200m", memory="4Gi"),
           make_pod("filler-c").node_name("node-c").req(cpu="100m", memory="100Mi")]


def web(i: int) -> Any:
    return (make_pod(f"web-{i}").labels(app="web").req(cpu="2500m", memory="3Gi")
            .preferred(100, term(expr("a", "Exists"))).preferred(50, term(expr("b", "Exists"))))


def placements(config: Any, release: Release | str) -> list[str | None]:
    result = simulate(NODES, [web(i) for i in range(3)], RUNNING, config=config, release=release)
    return [p.node for p in result.pods]


@pytest.mark.parametrize(("config", "release", "nodes"), [
    (LIST_DEFAULTING, "1.35", ["node-a", "node-c", "node-b"]),
    (LIST_DEFAULTING, Release.of("1.35", "OpportunisticBatching=false"), ["node-a", "node-b", "node-c"]),
    (LIST_DEFAULTING, "1.34", ["node-a", "node-b", "node-c"]),
    (None, "1.35", ["node-a", "node-b", "node-c"]),
], ids=["1.35: web-1 takes web-0's next-best node (kube-scheduler 1.35.4 does)",
        "1.35 with the gate off scores web-1 afresh", "1.34 has no batching",
        "the default profile's spreading defaults make the pods unsignable"])
def test_batching_reuses_the_previous_pods_order(config: Any, release: Release | str, nodes: list[str]) -> None:
    assert placements(config, release) == nodes


def test_pods_with_other_signatures_do_not_reuse_the_list() -> None:
    pods = [web(0), web(1).labels(tier="x"), web(2)]
    result = simulate(NODES, pods, RUNNING, config=LIST_DEFAULTING, release="1.35")
    # web-1's labels differ (InterPodAffinity signs the labels): it is scored afresh
    assert [p.node for p in result.pods] == ["node-a", "node-b", "node-c"]


# ------------------------------------------------------------------------------ the stored list, ordered when read

RANKED = {
    "by score, best first": ([10, 30, 20], [0, 1, 2], ["b", "c", "a"]),
    "ties by their rank": ([5, 5, 5], [2, 0, 1], ["b", "c", "a"]),
    "score first, then the rank": ([7, 9, 7, 9], [3, 2, 1, 0], ["d", "b", "c", "a"]),
}


@pytest.mark.parametrize(("scores", "ties", "want"), RANKED.values(), ids=RANKED.keys())
def test_ranked_nodes_come_out_as_the_sorted_list_did(scores: list[int], ties: list[int], want: list[str]) -> None:
    import numpy as np

    from kplan.framework.batch import RankedNodes

    names = ["a", "b", "c", "d"]
    rows = np.arange(len(scores))
    ranked = RankedNodes(rows, np.array(scores), np.array(ties), names)
    order = np.lexsort((np.array(ties), -np.array(scores)))
    assert [names[r] for r in rows[order]] == want  # what _others returned before
    assert len(ranked) == len(want)
    assert ranked.popleft() == want[0] and len(ranked) == len(want) - 1
    assert ranked.names() == want[1:] and len(ranked) == 0
    with pytest.raises(IndexError):
        ranked.popleft()


def test_others_draws_its_random_ties_when_the_cycle_stores_them() -> None:
    """The random tie-break's draw is made by _others itself, not when the list is first read:
    every later draw of the run (selectHost's, preemption's) comes out as it would."""
    import numpy as np

    from kplan.scheduler.cycle import Scheduler

    class Handle:
        lowest_name = False
        rng = np.random.default_rng(5)

        class snapshot:  # noqa: N801 - stands for the handle's snapshot attribute
            class table:  # noqa: N801
                names = ["n0", "n1", "n2", "n3"]

    sched = Scheduler.__new__(Scheduler)
    sched.handle = Handle()  # type: ignore[assignment]
    ranked = sched._others(np.array([4, 4, 4, 1]), np.arange(4), 0)
    twin = np.random.default_rng(5)
    ties = twin.permutation(3)
    assert Handle.rng.integers(1 << 30) == twin.integers(1 << 30)  # the draw is behind us already
    order = np.lexsort((ties, -np.array([4, 4, 1])))
    assert ranked.names() == [["n1", "n2", "n3"][k] for k in order]
