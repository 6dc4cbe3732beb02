"""Rich progress bars on stderr, for reading a live cluster and for scheduling runs, drawn only
when stderr is a terminal (pipes, files and CI logs get no control sequences) and never with
--quiet."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the live-cluster reader is imported only by the commands that read one
    from kplan.io.kube import Kind, ProgressSink


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
#: the formats people read; documents and CI formats never get a bar, even on a terminal
HUMAN_FORMATS = ("table", "wide")


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
    --quiet, a format for people) and stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    import os
    import time

    bar = RunProgress(time.monotonic, float(os.environ.get("KPLAN_PROGRESS_AFTER") or SHOW_AFTER_SECONDS))
    try:
        yield bar
    finally:
        bar.close()
