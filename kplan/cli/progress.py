"""Rich progress bars on stderr, for reading a live cluster, loading a cluster's objects and
scheduling runs, drawn only when stderr is a terminal (pipes, files and CI logs get no control
sequences), whatever the format and wherever stdout goes, and never with --quiet; each one is
cleared when its work ends."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # the live-cluster reader is imported only by the commands that read one
    from kplan.io.kube import Kind, ProgressSink

T = TypeVar("T")


class RichListProgress:
    """One line per kind: a bar when the server says how many remain, a pulse when it does not."""

    def __init__(self, progress: Any) -> None:
        self._progress = progress
        self._tasks: dict[str, Any] = {}

    def begin(self, kind: Kind) -> None:
        self._tasks[kind.qualified] = self._progress.add_task(f"listing {kind.qualified}", total=None)

    def update(self, kind: Kind, done: int, total: int | None) -> None:
        self._progress.update(self._tasks[kind.qualified], completed=done, total=total)

    def end(self, kind: Kind, count: int) -> None:
        task = self._tasks.pop(kind.qualified)
        # finished kinds leave the screen: 19 lines of done bars would push the live one away
        self._progress.remove_task(task)


@contextmanager
def list_progress(enabled: bool = True) -> Iterator[ProgressSink | None]:
    """Progress of reading a live cluster: drawn when ``enabled`` (not --quiet) and stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed:,} objects"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as progress:
        yield RichListProgress(progress)


#: a run shorter than this shows no bar: it would only flicker. KPLAN_PROGRESS_AFTER (seconds)
#: overrides it, for the tests that watch the bar on a pseudo-terminal
SHOW_AFTER_SECONDS = 1.0


def _show_after() -> float:
    import os

    return float(os.environ.get("KPLAN_PROGRESS_AFTER") or SHOW_AFTER_SECONDS)


class LoadProgress:
    """``loading the cluster  48,210 objects  0:00:07`` with a spinner on stderr while a cluster's
    objects are read and parsed: shown once loading has lasted ``after`` seconds (a timer thread
    starts it, so a file parsed whole before its first object, as YAML is, shows it too), cleared
    when loading ends. Objects are counted as they pass (``count``)."""

    #: objects between two updates of the count: a lock and a dict update per object would cost
    EVERY = 512

    def __init__(self, what: str, after: float) -> None:
        import threading

        self._what = what
        self._done = 0
        self._lock = threading.Lock()
        self._progress: Any = None
        self._task: Any = None
        self._closed = False
        self._timer = threading.Timer(after, self._start)
        self._timer.daemon = True
        if after <= 0:  # KPLAN_PROGRESS_AFTER=0: drawn at once, whatever the threads do (the tests)
            self._start()
        else:
            self._timer.start()

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with self._lock:
            if self._closed:
                return
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                      TextColumn("{task.completed:,} objects"), TimeElapsedColumn(),
                                      console=Console(stderr=True), transient=True)
            self._task = self._progress.add_task(self._what, total=None, completed=self._done)
            self._progress.start()

    def count(self, objects: Iterable[T]) -> Iterator[T]:
        for obj in objects:
            self._done += 1
            if self._done % self.EVERY == 0 and self._progress is not None:
                with self._lock:
                    self._progress.update(self._task, completed=self._done)
            yield obj

    def close(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._closed = True
            if self._progress is not None:
                self._progress.stop()


@contextmanager
def load_progress(enabled: bool, what: str = "loading the cluster") -> Iterator[LoadProgress | None]:
    """Progress of loading a cluster, or None: drawn only when ``enabled`` (not --quiet) and
    stderr is a terminal, whatever stdout is (``-o json > result.json`` at a terminal too)."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    shown = LoadProgress(what, _show_after())
    try:
        yield shown
    finally:
        shown.close()


class RunProgress:
    """The callback the planner and the simulation report to, (stage, pods tried, pods created):
    a rich bar per stage with pods done of pending, rate and ETA, started only once the run has
    lasted SHOW_AFTER_SECONDS, cleared when it ends."""

    def __init__(self, clock: Any, after: float = SHOW_AFTER_SECONDS) -> None:
        self._clock = clock
        self._after = after
        self._started = clock()
        self._progress: Any = None
        self._task: Any = None
        self._stage = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self._progress is None:
            if self._clock() - self._started < self._after:
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("pods"), TaskProgressColumn(),
                                      TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
                                      console=Console(stderr=True), transient=True)
            self._progress.start()
        if stage != self._stage or self._task is None:
            if self._task is not None:
                self._progress.remove_task(self._task)
            self._stage = stage
            self._task = self._progress.add_task(stage, total=total, rate="")
        task = self._progress.tasks[-1]
        speed = task.speed
        self._progress.update(self._task, completed=done, total=total,
                              rate=f"{speed:,.0f} pods/s" if speed else "")

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


@contextmanager
def run_progress(enabled: bool = True) -> Iterator[Any]:
    """The progress callback of a scheduling run, or None: drawn only when ``enabled`` (not
    --quiet) and stderr is a terminal, whatever stdout is: ``-o json > result.json`` at a terminal
    shows it too (it is cleared before the result is written)."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    import time

    bar = RunProgress(time.monotonic, _show_after())
    try:
        yield bar
    finally:
        bar.close()
