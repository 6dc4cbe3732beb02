"""Colour only on a terminal and never with NO_COLOR, --no-color or TERM=dumb; --quiet before or
after the command silences warnings but not errors or the result."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from kplan.cli.app import main
from kplan.cli.terminal import no_color_in

ROOT = Path(__file__).resolve().parents[3]
SIMULATE = ["simulate", "tests/fixtures/planning/pending.yaml", "-c", "tests/fixtures/planning/cluster.yaml"]
ESC = b"\x1b["


def on_terminal(args: list[str], **env: str) -> bytes:
    """kplan's stdout when stdout is a terminal (a pseudo-terminal)."""
    leader, follower = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    full_env.update({"PYTHONPATH": str(ROOT), "COLUMNS": "200", "TERM": "xterm", **env})
    proc = subprocess.Popen([sys.executable, "-m", "kplan", *args], cwd=ROOT, env=full_env, stdout=follower,
                            stderr=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks)


TERMINAL = [
    ("a terminal gets colour", [], {}, True),
    ("NO_COLOR switches it off", [], {"NO_COLOR": "1"}, False),
    ("an empty NO_COLOR does not count", [], {"NO_COLOR": ""}, True),
    ("TERM=dumb switches it off", [], {"TERM": "dumb"}, False),
    ("--no-color before the command", ["--no-color"], {}, False),
    ("--no-color after the command", ["@", "--no-color"], {}, False),
    ("json is never coloured", ["@", "-o", "json"], {}, False),
]


@pytest.mark.parametrize(("extra", "env", "coloured"), [c[1:] for c in TERMINAL], ids=[c[0] for c in TERMINAL])
def test_colour_on_a_terminal_only_when_allowed(extra: list[str], env: dict[str, str], coloured: bool) -> None:
    if "@" in extra:
        args = SIMULATE + extra[1:]
    else:
        args = extra + SIMULATE
    out = on_terminal(args, **env)
    assert b"api-1" in out
    assert (ESC in out) == coloured


def test_a_pipe_gets_no_colour() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    proc = subprocess.run([sys.executable, "-m", "kplan", *SIMULATE], cwd=ROOT, capture_output=True,
                          env={**env, "PYTHONPATH": str(ROOT), "TERM": "xterm"}, timeout=120)
    assert proc.stdout and ESC not in proc.stdout


@pytest.mark.parametrize(("args", "found"), [
    (["simulate", "--no-color"], True), (["--no-color", "simulate"], True), (["simulate", "--", "--no-color"], False),
    (["simulate", "x.yaml"], False),
], ids=["after the command", "before it", "not after --", "absent"])
def test_no_color_is_seen_before_parsing(args: list[str], found: bool) -> None:
    assert no_color_in(args) == found


HELM = ["simulate", "-", "--cluster", "tests/golden/workloads/cluster.yaml", "--cluster", "fixtures/storage.yaml",
        "-n", "shop", "--tie-break", "lowest-name"]


@pytest.fixture
def helm_on_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = (ROOT / "fixtures/helm/webapp-rendered.yaml").read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(args)
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


@pytest.mark.usefixtures("helm_on_stdin")
@pytest.mark.parametrize("args", [HELM, ["-q", *HELM], [*HELM, "--quiet"], [*HELM, "-q"]],
                         ids=["without --quiet", "-q before the command", "--quiet after it", "-q after it"])
def test_quiet_silences_warnings_not_the_result(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, out, err = _run(capsys, args)
    assert code == 0 and "shop/shop-webapp" in out
    quiet = "-q" in args or "--quiet" in args
    assert (err == "") == quiet
    if not quiet:
        assert err.startswith("warning: ")


def test_quiet_keeps_errors(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = _run(capsys, ["-q", "simulate", "no-such.yaml", "-c", "tests/fixtures/planning/cluster.yaml"])
    assert code == 2 and out == "" and err.startswith("error: ")


class _Terminal:
    """A stderr that says it is a terminal, for the wrapping of warnings and errors."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


NODES = ", ".join(f"ip-10-0-{i}-{i * 7 % 250}.ec2.internal" for i in range(12))
STDERR_LINES = {
    "a warning": ("warning", "the cluster runs Kubernetes 1.31; kplan models 1.34 to 1.37 and runs it as 1.34, the "
                          "nearest modelled release (--kube-version chooses another)"),
    "an error naming nodes": ("error", f"--drain: no node named 'ip-10-0-99-1' in the cluster (nodes: {NODES})"),
}


@pytest.mark.parametrize(("say", "message"), STDERR_LINES.values(), ids=STDERR_LINES.keys())
def test_warnings_and_errors_wrap_at_a_terminals_width_between_words(monkeypatch: pytest.MonkeyPatch, say: str,
                                                                      message: str) -> None:
    # issue 47 item 9: a 153-column warning and node lists broken mid-word at the terminal's edge
    import kplan.cli.terminal as terminal

    for columns in (60, 80):
        fake = _Terminal()
        monkeypatch.setattr(sys, "stderr", fake)
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setenv("NO_COLOR", "1")
        getattr(terminal, {"warning": "warn"}.get(say, say))(message)
        lines = fake.text.rstrip("\n").split("\n")
        assert len(lines) > 1 and all(len(line) <= columns for line in lines)
        assert " ".join(line.strip() for line in lines) == f"{say}: {message}"  # no word cut
        assert all(line.startswith("  ") for line in lines[1:])


def test_a_pipe_gets_each_warning_on_one_line(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import kplan.cli.terminal as terminal

    monkeypatch.setenv("COLUMNS", "60")
    terminal.warn(STDERR_LINES["a warning"][1])
    assert capsys.readouterr().err == f"warning: {STDERR_LINES['a warning'][1]}\n"


def test_version_fits_an_80_column_terminal() -> None:
    out = on_terminal(["--version"], COLUMNS="80").decode().replace("\r\n", "\n").rstrip("\n").split("\n")
    assert len(out) == 2 and all(len(line) <= 80 for line in out) and out[0].startswith("kplan ")
