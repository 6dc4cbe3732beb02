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


@dataclass
class _State:
    signature: Hashable
    #: node names, best first
    nodes: deque[str] = field(default_factory=deque)


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
              others: Callable[[], Sequence[str]] | None) -> None:
        """StoreScheduleResults: ``others`` gives the cycle's other feasible nodes, best first
        (None: the cycle had one feasible node or took a nominated or hinted one)."""
        self._last_cycle = cycle
        self._last_chosen = chosen
        if hint and hint == chosen:
            self.batched_pods += 1
            return
        rest = others() if (others is not None and signature is not None) else ()
        self._state = _State(signature, deque(rest)) if rest else None
