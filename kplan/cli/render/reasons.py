"""kube-scheduler's FitError messages grouped by what they say, not by their node counts.

``0/500 nodes are available: 3 Insufficient cpu, 497 node(s) didn't match Pod's node
affinity/selector.`` and the same with 5 and 495 say the same thing of two identical pods that
met the cluster at different moments; a report that groups pods by reason puts them together,
and shows the counts as ranges: ``0/500 nodes are available: 3-5 Insufficient cpu, 495-497
node(s) didn't match Pod's node affinity/selector.`` A message of another shape is its own group.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_FIT_ERROR = re.compile(r"^0/(\d+) nodes are available: (.*?)\.?$", re.S)
#: one "COUNT reason" of the list; a reason runs to the next ", COUNT " or to the end
_PART = re.compile(r"(\d+) (.+?)(?=, \d+ |$)", re.S)


def parts(message: str) -> tuple[int, list[tuple[int, str]]] | None:
    """The node total and the (count, reason) pairs of a FitError message; None for another shape."""
    m = _FIT_ERROR.match(message)
    if m is None:
        return None
    found = [(int(count), reason) for count, reason in _PART.findall(m.group(2))]
    if not found or ", ".join(f"{c} {r}" for c, r in found) != m.group(2):
        return None  # not a list kplan can take apart: keep the message whole
    return int(m.group(1)), found


def shape(message: str) -> str:
    """What a message says, without its counts: the key that groups messages."""
    p = parts(message)
    if p is None:
        return message
    return "0/N nodes are available: " + ", ".join(sorted(reason for _, reason in p[1])) + "."


def _span(values: Sequence[int]) -> str:
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def merged(messages: Sequence[str]) -> str:
    """The messages of one shape as one: each count replaced by the range of its values, the
    reasons in the order of the first message."""
    first = parts(messages[0])
    if first is None:
        return messages[0]
    totals: list[int] = []
    counts: dict[str, list[int]] = {reason: [] for _, reason in first[1]}
    for message in messages:
        p = parts(message)
        assert p is not None and shape(message) == shape(messages[0]), "messages of different shapes"
        totals.append(p[0])
        for count, reason in p[1]:
            counts[reason].append(count)
    listed = ", ".join(f"{_span(counts[reason])} {reason}" for reason in counts)
    return f"0/{_span(totals)} nodes are available: {listed}."
