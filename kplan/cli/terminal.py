"""What the CLI writes besides the result: colour, warnings, errors, and the options that govern them.

- The result goes to stdout; warnings, progress and errors go to stderr.
- Colour only on a terminal, never when ``NO_COLOR`` is set (to anything but the empty string,
  as https://no-color.org asks) or ``TERM=dumb``. ``--no-color`` sets ``NO_COLOR`` for the rest
  of the run, so rich (which draws help, usage errors and progress bars) follows it too.
- ``--quiet``: no warnings and no progress, only errors and the result.

``--quiet`` and ``--no-color`` are accepted before the command (``kplan -q simulate …``) and
after it (``kplan simulate -q …``); either place counts.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TextIO

import typer

QUIET_HELP = "No warnings or progress on stderr: only errors and the result."
NO_COLOR_HELP = "No colours, even on a terminal (as NO_COLOR=1)."


@dataclass
class RootOptions:
    """The options given before the command, kept in the click context for the command to read."""

    quiet: bool = False


def color_enabled(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


#: the narrowest width tables are fitted to: below it they would be all wrapping
MIN_WIDTH = 40


def render_options(**kw: Any) -> Any:
    """The RenderOptions for stdout: colour as ``color_enabled`` says; on a terminal, its width
    (``COLUMNS`` first, as ``shutil.get_terminal_size`` reads it) and block-glyph bars; elsewhere no
    wrapping at all, so that scripts can grep whole lines."""
    import shutil

    from kplan.cli.render import RenderOptions

    terminal = is_terminal(sys.stdout)
    width = max(shutil.get_terminal_size((80, 24)).columns, MIN_WIDTH) if terminal else None
    return RenderOptions(color=color_enabled(sys.stdout), width=width, terminal=terminal, **kw)


def disable_color(value: bool) -> bool:
    """Callback of ``--no-color``: from here on, kplan and rich see NO_COLOR."""
    if value:
        os.environ["NO_COLOR"] = "1"
    return value


def no_color_in(args: Sequence[str]) -> bool:
    """Whether ``--no-color`` is among the options (before ``--``): looked at before parsing, so that
    even a usage error found while parsing is printed without colour."""
    for a in args:
        if a == "--":
            return False
        if a == "--no-color":
            return True
    return False


def is_quiet(ctx: typer.Context, quiet: bool, verbose: bool = False) -> bool:
    """The command's ``--quiet``, or the one given before the command; with ``--verbose`` too,
    a usage error."""
    root = ctx.find_root().obj
    quiet = quiet or (isinstance(root, RootOptions) and root.quiet)
    if quiet and verbose:
        from kplan.errors import InputError

        raise InputError("--quiet and --verbose contradict each other: give one")
    return quiet


def _prefix(word: str, style: str) -> str:
    from kplan.cli.render.style import paint

    return paint(word, style, color_enabled(sys.stderr))


def warn(message: str) -> None:
    print(f"{_prefix('warning:', 'yellow')} {message}", file=sys.stderr)


def print_warnings(warnings: Sequence[str], quiet: bool = False) -> None:
    if quiet:
        return
    for w in warnings:
        warn(w)


def error(message: str) -> None:
    print(f"{_prefix('error:', 'bold red')} {message}", file=sys.stderr)


def emit(text: str) -> None:
    """Write the result to stdout (see OutputClosed for a reader that went away)."""
    sys.stdout.write(text)
    sys.stdout.flush()


class OutputClosed(Exception):
    """The reader of stdout went away (``kplan … | head``): the run ends with 141, silently, as a
    process killed by SIGPIPE would, rather than with 1 ("the check failed"). Not an OSError, so
    that typer, which turns a broken pipe into exit code 1, lets it through to ``main``."""


class Interrupted(BaseException):
    """Ctrl-C. Not a KeyboardInterrupt, which typer turns into a silent exit 130: ``main`` says
    ``interrupted``. A BaseException, so that ``except Exception`` cleanups let it through."""


class GuardedStdout:
    """sys.stdout, whose broken pipe raises OutputClosed at whichever write or flush meets it."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise OutputClosed() from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise OutputClosed() from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def silence_stdout() -> None:
    """Point stdout's file descriptor at /dev/null: the interpreter flushes stdout again at exit,
    and a second broken pipe there would print a complaint and change the exit code."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
    except (OSError, ValueError):
        pass


def raise_interrupted(signum: int, frame: Any) -> None:
    raise Interrupted()


@contextmanager
def interrupts_and_pipes() -> Iterator[None]:
    """For the run of a command: Ctrl-C raises Interrupted (unless SIGINT is ignored, as in a
    background job) and stdout raises OutputClosed; both are put back afterwards."""
    import signal

    stdout, handler = sys.stdout, signal.getsignal(signal.SIGINT)
    catch = handler is signal.default_int_handler and threading.current_thread() is threading.main_thread()
    if catch:
        signal.signal(signal.SIGINT, raise_interrupted)
    sys.stdout = GuardedStdout(stdout)
    try:
        yield
    finally:
        sys.stdout = stdout
        if catch:
            signal.signal(signal.SIGINT, handler)
