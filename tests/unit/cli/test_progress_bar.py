"""Progress of scheduling runs: a rich bar on stderr when it is a terminal, with pods done of
pending; none with --quiet, none for documents, none when stderr is not a terminal."""

from __future__ import annotations

import re

import pytest

from tests.golden.test_golden import run_on_terminal

SIMULATE = ["simulate", "fixtures/manifests", "-c", "fixtures/cluster.yaml", "--tie-break", "lowest-name"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: the bar shows from the first pod on (KPLAN_PROGRESS_AFTER=0), so a short run draws it too
NOW = {"KPLAN_PROGRESS_AFTER": "0"}

CASES = [
    ("simulate on a terminal draws the bar", SIMULATE, True),
    ("whatif draws it for its runs", ["whatif", *SIMULATE[1:], "--cordon", "gen-a-1"], True),
    ("capacity draws it", ["capacity", "fixtures/manifests/gpu-inference.yaml", "-c", "fixtures/cluster.yaml"], True),
    ("explain draws it", ["explain", "pod", "ml/notebook", *SIMULATE[1:]], True),
    ("--quiet draws none", [*SIMULATE, "--quiet"], False),
    ("JSON draws none", [*SIMULATE, "-o", "json"], False),
]


@pytest.mark.parametrize(("args", "drawn"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_progress_bar_on_a_terminal(args: list[str], drawn: bool) -> None:
    got = run_on_terminal(args, 100, stderr_too=True, **NOW)
    text = ANSI.sub("", got.stdout)
    bar = re.search(r"(scheduling|before|after|capacity)\s.*\d+/\d+ pods", text)
    assert bool(bar) == drawn, text[-2000:]


def test_a_stderr_that_is_not_a_terminal_gets_no_bar() -> None:
    got = run_on_terminal(SIMULATE, 100, **NOW)  # stdout on the terminal, stderr a pipe
    assert got.stderr == ""
