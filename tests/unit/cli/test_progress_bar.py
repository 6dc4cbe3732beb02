"""Progress of loading and scheduling runs: a rich bar on stderr when it is a terminal, with pods
done of pending (and objects loaded), whatever the format and wherever stdout goes; cleared at the
end; none with --quiet, none when stderr is not a terminal."""

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
    ("JSON draws it too", [*SIMULATE, "-o", "json"], True),
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


def run_with_stderr_on_terminal(args: list[str], **env: str) -> tuple[str, str]:
    """kplan with stderr on a pseudo-terminal and stdout into a pipe, as ``kplan … -o json >
    result.json`` at a terminal: (stdout, what the terminal showed)."""
    import os
    import pty
    import subprocess
    import sys

    from tests.golden.test_golden import ROOT

    leader, follower = pty.openpty()
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "TERM": "xterm", **env}
    proc = subprocess.Popen([sys.executable, "-m", "kplan", *args], cwd=ROOT, env=full_env, stdout=subprocess.PIPE,
                            stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.stdout is not None
    with proc.stdout:
        out = proc.stdout.read().decode()
    proc.wait(timeout=300)
    os.close(leader)
    return out, b"".join(chunks).decode()


def test_json_into_a_file_at_a_terminal_shows_progress_and_clears_it() -> None:
    import json

    out, screen = run_with_stderr_on_terminal([*SIMULATE, "-o", "json"], **NOW)
    assert json.loads(out)["kind"] == "SimulationResult"  # stdout has the document alone
    text = ANSI.sub("", screen)
    assert re.search(r"loading the cluster\s+[\d,]+ objects", text), text[-2000:]
    assert re.search(r"scheduling\s.*\d+/\d+ pods", text), text[-2000:]
    # cleared, as every display is: the last thing on the terminal is the cursor going up to the
    # display's line and erasing it
    assert screen.endswith("\r\x1b[1A\x1b[2K"), repr(screen[-200:])
    assert screen.count("\r\x1b[1A\x1b[2K") == 2, "the loading display is cleared before scheduling starts"


def test_loading_shows_nothing_before_a_second() -> None:
    # fixtures load in well under the default SHOW_AFTER_SECONDS: no flicker of a display
    _, screen = run_with_stderr_on_terminal([*SIMULATE, "-o", "json"])
    assert "loading the cluster" not in screen


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Stream:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


def test_sweep_progress_speaks_from_the_start_estimates_the_time_left_and_clears() -> None:
    # issue 47 item 16: 25 s of silence before the first progress line, no estimate, and after
    # Ctrl-C the line was left for 'interrupted' to be written after it
    from kplan.cli.sweep import StderrProgress

    clock, out = _Clock(), _Stream()
    show = StderrProgress(out, clock)
    show.stage("starting 2 workers")
    assert out.text.endswith("sweep: starting 2 workers…")
    show(0, 60)
    assert out.text.endswith("sweep: 0/60 simulations")
    clock.now += 30
    show(15, 60)  # 15 in 30 s: 45 more take about 90 s
    assert out.text.endswith("sweep: 15/60 simulations, about 0:01:30 left")
    show.clear()  # what an interrupted sweep does before 'interrupted' is printed
    assert out.text.endswith("\r\x1b[2K")
    before = out.text
    show.clear()  # nothing drawn since: nothing written
    assert out.text == before
