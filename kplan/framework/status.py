"""Statuses of the scheduling framework (pkg/scheduler/framework/interface.go).

A filter reports one code per node and, for rejections, the id of its reasons in a
process-wide intern table, so the verdicts of thousands of nodes are two small arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np


class Code(IntEnum):
    SUCCESS = 0
    UNSCHEDULABLE = 1
    #: UnschedulableAndUnresolvable: preemption on this node cannot help
    UNRESOLVABLE = 2
    ERROR = 3
    SKIP = 4
    PENDING = 5

    @property
    def upstream(self) -> str:
        return _UPSTREAM[self]


_UPSTREAM = {
    Code.SUCCESS: "Success",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.ERROR: "Error",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}

SUCCESS, UNSCHEDULABLE, UNRESOLVABLE = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNRESOLVABLE


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNRESOLVABLE)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)


OK = Status()


_SKIPS: dict[str, Status] = {}


def skip(plugin: str = "") -> Status:
    st = _SKIPS.get(plugin)
    if st is None:
        st = _SKIPS[plugin] = Status(Code.SKIP, (), plugin)
    return st


class ReasonTable:
    """Interns reason tuples: id 0 is "no reasons"."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, ...], int] = {(): 0}
        self.items: list[tuple[str, ...]] = [()]

    def id(self, reasons: tuple[str, ...]) -> int:
        i = self._ids.get(reasons)
        if i is None:
            i = self._ids[reasons] = len(self.items)
            self.items.append(reasons)
        return i

    def __getitem__(self, i: int) -> tuple[str, ...]:
        return self.items[i]


REASONS = ReasonTable()


def reason_id(*reasons: str) -> int:
    return REASONS.id(tuple(reasons))


@dataclass(slots=True)
class Verdicts:
    """A filter plugin's answer for a set of nodes: a code and a reason id per node."""

    codes: np.ndarray    # int8, Code values
    reasons: np.ndarray  # int32 ids into REASONS
    #: False when it is known that every node passes (lets the framework skip the arrays)
    any_rejected: bool = True

    @classmethod
    def passing(cls, n: int) -> Verdicts:
        return cls(np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int32), False)

    @classmethod
    def where(cls, failed: np.ndarray, code: Code, reason: int) -> Verdicts:
        """Reject the nodes where ``failed`` is true with one code and reason."""
        if not failed.any():
            return cls.passing(len(failed))
        codes = np.where(failed, np.int8(code), np.int8(0)).astype(np.int8)
        reasons = np.where(failed, np.int32(reason), np.int32(0)).astype(np.int32)
        return cls(codes, reasons)

    def status(self, k: int, plugin: str) -> Status:
        return Status(Code(int(self.codes[k])), REASONS[int(self.reasons[k])], plugin)


class PluginError(Exception):
    """A Filter plugin's Error status: the framework aborts the whole scheduling attempt with
    ``running "<plugin>" filter plugin: <text>`` (the pod goes to the error backoff)."""

    def __init__(self, plugin: str, text: str, row: int | None = None) -> None:
        super().__init__(f'running "{plugin}" filter plugin: {text}')
        self.plugin = plugin
        #: the node table row whose Filter failed (None: not known): the nodes before it in the
        #: cycle's order count as processed for nextStartNodeIndex
        self.row = row
