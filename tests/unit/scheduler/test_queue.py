"""The scheduling queue on its logical clock (reference 6.3 and 12.3)."""

from __future__ import annotations

import dataclasses

import pytest

from kplan.scheduler.queue import SECOND, QueuedPod, SchedulingQueue
from tests.builders import make_node, make_pod, simulate


def queued(name: str, prio: int, seq: int, fails: int = 0, errs: int = 0, last_failure: int = 0) -> QueuedPod:
    pod = dataclasses.replace(make_pod(name).build(), priority=prio)
    q = QueuedPod(pod, seq, seq)
    q.fails, q.errs, q.last_failure = fails, errs, last_failure
    return q


@pytest.mark.parametrize(("fails", "seconds"), [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (9, 10)],
                         ids=lambda v: str(v))
def test_backoff_doubles_from_one_second_up_to_ten(fails: int, seconds: int) -> None:
    q = SchedulingQueue()
    assert q.backoff_expiry(queued("p", 0, 1, fails=fails)) == seconds * SECOND


def test_backoff_expiry_is_rounded_down_to_the_second() -> None:
    q = SchedulingQueue()
    assert q.backoff_expiry(queued("p", 0, 1, fails=1, last_failure=1_300_000)) == 2 * SECOND


def test_consecutive_errors_set_the_backoff_when_there_are_some() -> None:
    q = SchedulingQueue()
    assert q.backoff_expiry(queued("p", 0, 1, fails=1, errs=3)) == 4 * SECOND


def test_active_queue_pops_higher_priority_then_earlier_timestamp() -> None:
    q = SchedulingQueue()
    for item in (queued("late-low", 0, 3), queued("early-low", 0, 1), queued("high", 10, 2)):
        q.add_active(item)
    assert [q.pop().pod.name for _ in range(3)] == ["high", "early-low", "late-low"]  # type: ignore[union-attr]


def test_backoff_queue_pops_fewer_failures_first_then_priority_even_before_expiry() -> None:
    q = SchedulingQueue()
    q.add_backoff(queued("twice-high", 100, 1, fails=2))
    q.add_backoff(queued("once-low", 0, 2, fails=1))
    q.add_backoff(queued("once-high", 100, 3, fails=1))
    assert [q.pop().pod.name for _ in range(3)] == ["once-high", "once-low", "twice-high"]  # type: ignore[union-attr]


def test_an_empty_queue_pops_nothing() -> None:
    assert SchedulingQueue().pop() is None


def test_a_pod_rejected_only_by_node_level_plugins_is_tried_once() -> None:
    result = simulate([make_node("n1").alloc(cpu="1", pods=10).taint("dedicated", "gpu")],
                      [make_pod("p").req(cpu="100m")])
    assert (result.pods[0].status, result.pods[0].attempts) == ("Unschedulable", 1)


def test_a_gated_pod_is_never_attempted() -> None:
    result = simulate([make_node("n1").alloc(cpu="1", pods=10)], [make_pod("p").gate("example.com/wait")])
    o = result.pods[0]
    assert (o.status, o.attempts, o.message) == ("Gated", 0, "waiting for scheduling gates: [example.com/wait]")


def test_pending_pods_are_popped_by_priority_then_creation_order() -> None:
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 10}
    result = simulate([make_node("n1").alloc(cpu="1", pods=10)],
                      [make_pod("first").req(cpu="1"), make_pod("second").req(cpu="1"),
                       make_pod("urgent").req(cpu="1").priority_class("high")], objects=[high])
    assert [o.pod.name for o in result.pods] == ["urgent", "first", "second"]
    assert result.outcome("default", "urgent").status == "Scheduled"  # type: ignore[union-attr]
