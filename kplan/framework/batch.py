"""Opportunistic batching (KEP-5598; framework/runtime/batch.go, v1.35.4): a pod with the same
signature as the pod of the previous scheduling cycle may take the next node of that pod's
sorted, scored node list (a *hint*) instead of being filtered and scored on every node.

The rule, as upstream has it:

- After a cycle that chose a node (``store``): if the cycle used the hint it was given, the
  remaining list stays as it is; otherwise the cycle's own list (the feasible nodes it scored, by
  total score, best first, the chosen one taken off) becomes the state, when the pod has a
  signature and the list is not empty, and there is no state otherwise (a single feasible node
  or a nominated node leaves no list). A cycle that chose no node stores nothing.
- Before the next cycle's filtering (``node_hint``), after PreFilter passed: there is a hint
  only if there is state, this cycle immediately follows the cycle that stored (no other pop in
  between, for this or any other profile), the pod's signature equals the state's, the node
  chosen last time still exists, and this pod's Filter plugins *reject* that node (without
  nominated pods): the premise is one pod per node, so that the other nodes' scores did not
  change. The hint is then taken off the list, whether or not it is used.
- The cycle evaluates a hinted node as it evaluates a nominated node (a nominated node, if the
  pod has one, goes first and the hint is not evaluated): if it passes the filters, the pod goes
  there without scoring and without moving the rotating start index.

Upstream also drops a state older than 500 ms of wall-clock time; kplan does not model time
passing between cycles, so a state never expires here (a real scheduler under load, or one
that pauses between pods, starts afresh more often: its placements are then those of the full
computation).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


class NodeList(Protocol):
    """Node names, best first, taken from the front."""

    def __len__(self) -> int: ...

    def popleft(self) -> str: ...


class RankedNodes:
    """A cycle's other feasible nodes, best first (by total score, then by ``ties``), put in
    that order only when the first one is taken. A cycle stores its list for the next one, which
    reads it only when the next pod has the same signature and does not fit the node chosen
    last (batch.py's rule): in most runs no list is ever read, and ordering and naming every
    feasible node cost as much as filtering them. The ties are drawn when the cycle stores the
    list (from the run's generator for the random tie-break), so every draw is as it would be."""

    __slots__ = ("_rows", "_scores", "_ties", "_names", "_order", "_next")

    def __init__(self, rows: np.ndarray, scores: np.ndarray, ties: np.ndarray, names: Sequence[str]) -> None:
        self._rows, self._scores, self._ties, self._names = rows, scores, ties, names
        self._order: np.ndarray | None = None
        self._next = 0

    def __len__(self) -> int:
        return len(self._rows) - self._next

    def popleft(self) -> str:
        if self._next >= len(self._rows):
            raise IndexError("pop from an empty node list")
        if self._order is None:
            self._order = self._rows[np.lexsort((self._ties, -self._scores))]
        name = self._names[int(self._order[self._next])]
        self._next += 1
        return name

    def names(self) -> list[str]:
        """The names not taken yet, in order (what popleft would give, one by one)."""
        out = []
        while len(self):
            out.append(self.popleft())
        return out


@dataclass
class _State:
    signature: Hashable
    #: node names, best first
    nodes: NodeList = field(default_factory=deque)


class OpportunisticBatch:
    """One profile's batching state (upstream: one per framework)."""

    def __init__(self) -> None:
        self._state: _State | None = None
        self._last_cycle = -1
        self._last_chosen = ""
        #: pods placed on a hint (upstream's batchedPods)
        self.batched_pods = 0

    def node_hint(self, cycle: int, signature: Hashable | None, rejects_last_chosen: Callable[[str], bool]) -> str:
        """GetNodeHint: the node to try first, or "". ``rejects_last_chosen(name)`` runs the
        pod's Filter plugins on the node chosen last time (False too when that node is gone)."""
        st = self._state
        if st is None or not st.nodes:
            return ""
        if cycle != self._last_cycle + 1:
            return ""
        if signature is None or signature != st.signature:
            return ""
        if not rejects_last_chosen(self._last_chosen):
            return ""
        return st.nodes.popleft()

    def store(self, cycle: int, signature: Hashable | None, hint: str, chosen: str,
              others: Callable[[], Sequence[str] | RankedNodes] | None) -> None:
        """StoreScheduleResults: ``others`` gives the cycle's other feasible nodes, best first
        (None: the cycle had one feasible node or took a nominated or hinted one)."""
        self._last_cycle = cycle
        self._last_chosen = chosen
        if hint and hint == chosen:
            self.batched_pods += 1
            return
        rest = others() if (others is not None and signature is not None) else ()
        if not len(rest):
            self._state = None
            return
        self._state = _State(signature, rest if isinstance(rest, RankedNodes) else deque(rest))
