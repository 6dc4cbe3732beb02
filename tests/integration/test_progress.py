"""The progress bar draws on a terminal and stays silent elsewhere."""

from __future__ import annotations

import io

import pytest

from kplan.cli.progress import RichListProgress, list_progress
from kplan.io.kube import KINDS


def test_no_bar_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    with list_progress() as progress:
        assert progress is None
    assert capsys.readouterr().err == ""


def test_a_bar_per_kind_with_and_without_a_known_total() -> None:
    from rich.console import Console
    from rich.progress import Progress

    out = io.StringIO()
    with Progress(console=Console(file=out, force_terminal=True, width=80)) as rich_progress:
        bar = RichListProgress(rich_progress)
        bar.begin(KINDS[0])
        bar.update(KINDS[0], 500, 5000)
        task = rich_progress.tasks[0]
        assert (task.description, task.completed, task.total) == ("listing nodes", 500, 5000)
        bar.end(KINDS[0], 5000)
        bar.begin(KINDS[1])
        bar.update(KINDS[1], 1000, None)
        assert [(t.description, t.completed, t.total) for t in rich_progress.tasks] == [("listing pods", 1000, None)]
    assert "listing" in out.getvalue()
