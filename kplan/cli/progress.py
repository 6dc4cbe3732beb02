"""A rich progress bar on stderr for reading a live cluster, drawn only when stderr is a terminal
(pipes, files and CI logs get no control sequences)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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
