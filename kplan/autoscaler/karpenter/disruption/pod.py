"""Karpenter's rules for the pods of a node it disrupts.

Mirrors pkg/utils/pod/scheduling.go of sigs.k8s.io/karpenter v1.15.0: which pods count as
running (IsActive), which move to other capacity (IsReschedulable), which it evicts
(IsEvictable), and the ``karpenter.sh/do-not-disrupt`` annotation (IsDoNotDisruptActive: "true",
or a duration such as "5m" counted from the pod's start; a value that is neither is ignored, a
duration on a pod without a start time protects it).

Owners are matched on apiVersion and kind of any owner reference (IsOwnedBy), as upstream.
"""

from __future__ import annotations

from kplan.autoscaler.karpenter.disruption.durations import go_duration_seconds
from kplan.autoscaler.karpenter.disruption.state import DO_NOT_DISRUPT
from kplan.model.objects import Pod, Taint, tolerates

#: the taint Karpenter puts on a node it disrupts (v1.DisruptedNoScheduleTaint)
DISRUPTED_NO_SCHEDULE_TAINT = Taint("karpenter.sh/disruption", "disrupting", "NoSchedule")


def is_owned_by(pod: Pod, api_version: str, kind: str) -> bool:
    return any(o.api_version == api_version and o.kind == kind for o in pod.owners)


def is_terminal(pod: Pod) -> bool:
    return pod.phase in ("Failed", "Succeeded")


def is_terminating(pod: Pod) -> bool:
    return pod.deletion_time is not None


def is_active(pod: Pod) -> bool:
    return not is_terminal(pod) and not is_terminating(pod)


def is_owned_by_daemonset(pod: Pod) -> bool:
    return is_owned_by(pod, "apps/v1", "DaemonSet")


def is_owned_by_node(pod: Pod) -> bool:
    return is_owned_by(pod, "v1", "Node")


def is_reschedulable(pod: Pod) -> bool:
    """Active (or a terminating StatefulSet pod, which must go before its replacement comes),
    not a DaemonSet pod, not a mirror pod."""
    return ((is_active(pod) or (is_owned_by(pod, "apps/v1", "StatefulSet") and is_terminating(pod)))
            and not is_owned_by_daemonset(pod) and not is_owned_by_node(pod))


def tolerates_disrupted_taint(pod: Pod) -> bool:
    return tolerates(pod.tolerations, DISRUPTED_NO_SCHEDULE_TAINT)


def do_not_disrupt_seconds(value: str) -> float | None:
    """parseDoNotDisrupt: a positive Go duration in seconds; None when the value is not one."""
    seconds = go_duration_seconds(value)
    return seconds if seconds is not None and seconds > 0 else None


def is_do_not_disrupt_active(pod: Pod, now: float) -> bool:
    value = pod.annotations.get(DO_NOT_DISRUPT)
    if value is None:
        return False
    if value == "true":
        return True
    duration = do_not_disrupt_seconds(value)
    if duration is None:
        return False
    if pod.start_time is None:
        return True
    return now - pod.start_time < duration


def is_evictable(pod: Pod, now: float) -> bool:
    return (is_active(pod) and not tolerates_disrupted_taint(pod) and not is_owned_by_node(pod)
            and not is_do_not_disrupt_active(pod, now))


def is_disruptable(pod: Pod, now: float) -> bool:
    return not is_active(pod) or not is_do_not_disrupt_active(pod, now)
