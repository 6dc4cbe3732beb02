"""Per-cycle plugin state (framework.CycleState): written at PreFilter/PreScore, read later.

Preemption and nominated-pod filtering work on a clone, as upstream does, so plugins whose
state changes in AddPod/RemovePod must store :class:`StateData` (objects with ``clone()``);
anything else is shared between the clones and must not change after it is written.
"""

from __future__ import annotations

from typing import Any, Self


class StateData:
    """framework.StateData: cycle state that AddPod/RemovePod change, copied for each clone.
    A base class rather than a protocol: clone() runs for every preemption fork, and a nominal
    isinstance is a pointer check where a protocol's is an attribute lookup."""

    __slots__ = ()

    def clone(self) -> Self:
        raise NotImplementedError(f"{type(self).__name__} must define clone()")


_NONE: frozenset[str] = frozenset()


class CycleState:
    __slots__ = ("data", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        # the two sets are frozen, so clones share them, and the framework hands the same object
        # to every cycle whose plugins skipped alike: what is looked up by them hashes it once
        #: plugins whose PreFilter returned Skip: their Filter/AddPod/RemovePod do not run
        self.skip_filter: frozenset[str] = _NONE
        #: plugins whose PreScore returned Skip: they score 0 everywhere
        self.skip_score: frozenset[str] = _NONE

    def read(self, key: str) -> Any:
        return self.data.get(key)

    def write(self, key: str, value: Any) -> None:
        self.data[key] = value

    def clone(self) -> CycleState:
        out = CycleState()
        out.data = {k: (v.clone() if isinstance(v, StateData) else v) for k, v in self.data.items()}
        out.skip_filter = self.skip_filter
        out.skip_score = self.skip_score
        return out
