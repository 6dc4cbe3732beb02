"""Pods that do not run, grouped by what kube-scheduler's reason says, not by its node counts.

``0/500 nodes are available: 3 Insufficient cpu, 497 node(s) didn't match Pod's node
affinity/selector.`` and the same with 5 and 495 say the same thing of two identical pods that
met the cluster at different moments; a report that groups pods by reason puts them together,
and shows the counts as ranges: ``0/500 nodes are available: 3-5 Insufficient cpu, 495-497
node(s) didn't match Pod's node affinity/selector.`` The counts are read from the document's
FitError parts (``PendingPod.fit_error``); a pod whose message is no FitError, or one that
PreFilter rejected for every node, is grouped by its reason as it reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from kplan.report.document import PendingPod


def _listed(p: PendingPod) -> dict[str, int] | None:
    """The reasons and node counts a pod's short reason lists, None when it lists none."""
    f = p.fit_error
    return f.reasons if f is not None and not f.pre_filter and f.reasons else None


def shape(p: PendingPod) -> str:
    """What a pod's reason says, without its counts: the key that groups pods."""
    listed = _listed(p)
    if listed is None:
        return p.reason
    return "0/N nodes are available: " + ", ".join(sorted(listed)) + "."


def _span(values: Sequence[int]) -> str:
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def merged(pods: Sequence[PendingPod]) -> str:
    """The reasons of pods of one shape as one: each count replaced by the range of its values,
    the reasons in the order of the first pod's."""
    first = _listed(pods[0])
    if first is None:
        return pods[0].reason
    counts: dict[str, list[int]] = {reason: [] for reason in first}
    totals: list[int] = []
    for p in pods:
        listed, f = _listed(p), p.fit_error
        assert listed is not None and f is not None and shape(p) == shape(pods[0]), "pods of different shapes"
        totals.append(f.nodes)
        for reason, count in listed.items():
            counts[reason].append(count)
    listed_text = ", ".join(f"{_span(counts[reason])} {reason}" for reason in counts)
    return f"0/{_span(totals)} nodes are available: {listed_text}."
