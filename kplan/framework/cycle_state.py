"""Per-cycle plugin state (framework.CycleState): written at PreFilter/PreScore, read later.

Preemption and nominated-pod filtering work on a clone, as upstream does, so plugins whose
state changes in AddPod/RemovePod must store objects with a ``clone()`` method.
"""

from __future__ import annotations

from typing import Any


class CycleState:
    __slots__ = ("data", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        #: plugins whose PreFilter returned Skip: their Filter/AddPod/RemovePod do not run
        self.skip_filter: set[str] = set()
        #: plugins whose PreScore returned Skip: they score 0 everywhere
        self.skip_score: set[str] = set()

    def read(self, key: str) -> Any:
        return self.data.get(key)

    def write(self, key: str, value: Any) -> None:
        self.data[key] = value

    def clone(self) -> CycleState:
        out = CycleState()
        out.data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self.data.items()}
        out.skip_filter = set(self.skip_filter)
        out.skip_score = set(self.skip_score)
        return out
