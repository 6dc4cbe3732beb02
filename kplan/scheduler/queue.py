"""The scheduling queue on a logical clock (backend/queue, v1.34.1; reference 6 and 12).

activeQ is ordered by the queue-sort plugin (priority, then queue timestamp); backoffQ by
(backoff expiry, priority, timestamp); pods without a rejecting plugin wait in an error heap;
pods rejected by plugins wait in the unschedulable pool until an event whose queueing hint says
Queue moves them. Time is in microseconds from T0, a whole second.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kplan.framework.diagnosis import FitError
from kplan.model.objects import Pod

US = 1
SECOND = 1_000_000


class Location(StrEnum):
    """Where a pending pod is: in one of the queue's structures, in a scheduling cycle, or out of
    the queue for the rest of the run."""

    #: created, not added to the queue yet
    NEW = "new"
    #: activeQ
    ACTIVE = "active"
    #: backoffQ
    BACKOFF = "backoff"
    #: the error heap (failed without a rejecting plugin)
    ERROR = "error"
    #: the unschedulable pool (unschedulablePods), until an event's queueing hint says Queue
    POOL = "pool"
    #: popped: in its scheduling cycle
    INFLIGHT = "inflight"
    #: not created yet: its controller waits for an earlier pod (StatefulSet OrderedReady)
    WAITING = "waiting"
    #: no profile of the configuration has its schedulerName: never queued
    IGNORED = "ignored"
    #: bound
    DONE = "done"
    #: bound, then evicted by the preemption of a later pending pod
    PREEMPTED = "preempted"


@dataclass(eq=False)
class QueuedPod:
    pod: Pod
    seq: int
    timestamp: int
    attempts: int = 0
    #: failures with a rejecting plugin (UnschedulableCount) and consecutive ones without (ConsecutiveErrorsCount)
    fails: int = 0
    errs: int = 0
    last_failure: int = 0
    rejectors: frozenset[str] = frozenset()
    where: Location = Location.NEW
    message: str | None = None
    #: the FitError the message prints, in parts (None for another message)
    fit: FitError | None = None
    #: DefaultPreemption holds the pod at PreEnqueue while its victims are being deleted
    held: bool = False
    first_pop: int = -1
    gate: str = ""

    @property
    def priority(self) -> int:
        return self.pod.priority

    def __deepcopy__(self, memo: dict[int, Any]) -> QueuedPod:
        # every field is immutable (the pod is shared by copies: kplan.model.shared), so a copy of
        # the fields is a deep copy
        new = QueuedPod.__new__(QueuedPod)
        new.__dict__.update(self.__dict__)
        return new


class SchedulingQueue:
    def __init__(self, initial_backoff_s: int = 1, max_backoff_s: int = 10) -> None:
        self.initial = initial_backoff_s * SECOND
        self.max = max_backoff_s * SECOND
        self.now = 0
        self._active: list[tuple[int, int, int, QueuedPod]] = []
        self._backoff: list[tuple[int, int, int, int, QueuedPod]] = []
        self._errors: list[tuple[int, int, QueuedPod]] = []
        self.pool: dict[str, QueuedPod] = {}
        #: the pool again, grouped by (schedulerName, rejecting plugins): the pods an event's
        #: queueing hints are asked about are the groups registered for its kind
        self.pool_groups: dict[tuple[str, frozenset[str]], dict[str, QueuedPod]] = {}

    # ------------------------------------------------------------------ backoff

    def backoff_expiry(self, q: QueuedPod) -> int:
        count = q.errs if q.errs > 0 else q.fails
        duration = self.initial
        for _ in range(1, count):
            duration *= 2
            if duration > self.max:
                duration = self.max
                break
        duration = min(duration, self.max)
        return ((q.last_failure + duration) // SECOND) * SECOND

    def backing_off(self, q: QueuedPod) -> bool:
        return self.backoff_expiry(q) >= (self.now // SECOND) * SECOND

    # ------------------------------------------------------------------ structures

    def add_active(self, q: QueuedPod) -> None:
        q.where = Location.ACTIVE
        heapq.heappush(self._active, (-q.priority, q.timestamp, q.seq, q))

    def add_backoff(self, q: QueuedPod) -> None:
        q.where = Location.BACKOFF
        heapq.heappush(self._backoff, (self.backoff_expiry(q), -q.priority, q.timestamp, q.seq, q))

    def add_error(self, q: QueuedPod) -> None:
        q.where = Location.ERROR
        heapq.heappush(self._errors, (self.backoff_expiry(q), q.seq, q))

    def add_pool(self, q: QueuedPod) -> None:
        q.where = Location.POOL
        self.pool[q.pod.uid] = q
        self.pool_groups.setdefault((q.pod.scheduler_name, q.rejectors), {})[q.pod.uid] = q

    def move_from_pool(self, q: QueuedPod) -> None:
        """An event said Queue: to backoffQ while backing off, else to activeQ."""
        del self.pool[q.pod.uid]
        key = (q.pod.scheduler_name, q.rejectors)
        group = self.pool_groups[key]
        del group[q.pod.uid]
        if not group:
            del self.pool_groups[key]
        if self.backing_off(q):
            self.add_backoff(q)
        else:
            self.add_active(q)

    def has_runnable(self) -> bool:
        return bool(self._active or self._backoff)

    def peek(self) -> QueuedPod | None:
        """The pod ``pop`` would take, left in its queue."""
        if self._active:
            return self._active[0][-1]
        if self._backoff:
            return self._backoff[0][-1]
        return None

    def pop(self) -> QueuedPod | None:
        """activeQ's head, else backoffQ's head even if still backing off (SchedulerPopFromBackoffQ)."""
        if self._active:
            q = heapq.heappop(self._active)[-1]
        elif self._backoff:
            q = heapq.heappop(self._backoff)[-1]
        else:
            return None
        q.where = Location.INFLIGHT
        return q

    def forget(self, uids: set[str]) -> None:
        """Take these pods out of every queue, as if they had never been created (a fork of a run
        without them, kplan.scheduler.simulate; a shrink probe undone, kplan.whatif.shrink)."""
        self._active = [e for e in self._active if e[-1].pod.uid not in uids]
        heapq.heapify(self._active)
        if any(e[-1].pod.uid in uids for e in self._backoff):
            self._backoff = [e for e in self._backoff if e[-1].pod.uid not in uids]
            heapq.heapify(self._backoff)
        if any(e[-1].pod.uid in uids for e in self._errors):
            self._errors = [e for e in self._errors if e[-1].pod.uid not in uids]
            heapq.heapify(self._errors)
        for uid in uids & self.pool.keys():
            q = self.pool.pop(uid)
            key = (q.pod.scheduler_name, q.rejectors)
            group = self.pool_groups[key]
            del group[uid]
            if not group:
                del self.pool_groups[key]

    def rekey(self, delta: int) -> None:
        """Move the clock ``delta`` µs back and rebuild every key from its pod's timestamp and
        sequence number (the caller's to change first: a fork of a run without some pods)."""
        self.now -= delta
        self._active = [(-q.priority, q.timestamp, q.seq, q) for *_, q in self._active]
        self._backoff = [(self.backoff_expiry(q), -q.priority, q.timestamp, q.seq, q) for *_, q in self._backoff]
        self._errors = [(self.backoff_expiry(q), q.seq, q) for *_, q in self._errors]
        heapq.heapify(self._active)
        heapq.heapify(self._backoff)
        heapq.heapify(self._errors)

    def errors_waiting(self) -> bool:
        return bool(self._errors)

    def flush_errors(self) -> None:
        """Jump the clock to the first error-heap expiry + 1 s; the 1 s flush moves expired pods."""
        if not self._errors:
            return
        self.now = self._errors[0][0] + SECOND
        keep = []
        for item in self._errors:
            q = item[-1]
            if self.backing_off(q):
                keep.append(item)
            else:
                self.add_active(q)
        self._errors = keep
        heapq.heapify(self._errors)
