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


def stream_width(stream: TextIO) -> int | None:
    """The columns of ``stream`` when it is a terminal (``COLUMNS`` first, as for tables), else None:
    what goes to a pipe, a file or a CI log is never wrapped, so that it can be grepped."""
    if not is_terminal(stream):
        return None
    try:
        columns = int(os.environ.get("COLUMNS") or 0)
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 80
    return max(columns, MIN_WIDTH)


def fitted(text: str, stream: TextIO, hanging: str = "  ") -> str:
    """``text`` wrapped at word boundaries to the width of ``stream`` when it is a terminal (a word
    longer than a line keeps a line of its own, whole); the lines after the first are indented."""
    width = stream_width(stream)
    if width is None:
        return text
    import textwrap

    return "\n".join(textwrap.fill(line, width=width, subsequent_indent=hanging, break_long_words=False,
                                    break_on_hyphens=False) or line for line in text.split("\n"))


def _say(word: str, style: str, message: str) -> None:
    """``word message`` on stderr, wrapped to a terminal's width, the word coloured when allowed."""
    text = fitted(f"{word} {message}", sys.stderr)
    print(_prefix(word, style) + text[len(word):], file=sys.stderr)


def warn(message: str) -> None:
    _say("warning:", "yellow", message)


def print_warnings(warnings: Sequence[str], quiet: bool = False) -> None:
    if quiet:
        return
    for w in warnings:
        warn(w)


def error(message: str) -> None:
    _say("error:", "bold red", message)


def emit(text: str) -> None:
    """Write the result to stdout (see OutputClosed for a reader that went away, OutputError for a
    stdout that cannot take it)."""
    sys.stdout.write(text)
    sys.stdout.flush()


class OutputClosed(Exception):
    """The reader of stdout went away (``kplan … | head``): the run ends with 141, silently, as a
    process killed by SIGPIPE would, rather than with 1 ("the check failed"). Not an OSError, so
    that typer, which turns a broken pipe into exit code 1, lets it through to ``main``."""


class Interrupted(BaseException):
    """Ctrl-C. Not a KeyboardInterrupt, which typer turns into a silent exit 130: ``main`` says
    ``interrupted``. A BaseException, so that ``except Exception`` cleanups let it through."""


def _descriptor(stream: Any) -> int | None:
    """The file descriptor under ``stream``, or None for one without (a test's captured output)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None
    return fd if isinstance(fd, int) else None


def write_all(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to ``fd``, however many writes it takes. Python's buffered stdout is
    not used for this: when the reader of a pipe leaves in the middle of a large write, the write
    returns short and the rest was dropped without an error (seen with CPython 3.11), so a run
    ended as if its reader had read everything."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BrokenPipeError:
            raise OutputClosed() from None
        except InterruptedError:  # pragma: no cover - Python retries EINTR itself (PEP 475)
            continue
        except OSError as e:
            from kplan.errors import OutputError

            raise OutputError(f"cannot write to stdout: {e.strerror or e}") from None
        view = view[n:]


#: how long a run that has written everything waits for the reader of its pipe (see reader_left)
READER_WAIT_SECONDS = 2.0
#: the most of the result held back to be written at once into a pipe: a pipe's buffer (Linux)
PIPE_CHUNK = 64 * 1024


def _unread(fd: int) -> int:
    """The bytes written to the pipe ``fd`` that its reader has not read yet."""
    import fcntl
    import struct
    import termios

    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


def reader_left(fd: int, wait: float = READER_WAIT_SECONDS) -> bool:
    """Whether the reader of the pipe ``fd`` went away before reading everything written to it,
    waiting at most ``wait`` seconds for it to read or leave. A pipe buffers 64 KiB, so a short
    result is written whole before ``head`` has read a line: without this look, ``kplan … | head``
    would end with the check's exit code although ``head`` threw most of the result away. A reader
    that reads everything (``| cat``, ``| grep``, ``| head`` of a result shorter than its read)
    leaves nothing behind, even when it leaves at once; one slower than ``wait`` (``| less`` with
    the user reading) is given the benefit of the doubt."""
    import select
    import stat
    import time

    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, 0)  # POLLERR (no reader any more) is reported without asking
        deadline = time.monotonic() + wait
        while True:
            if _unread(fd) == 0:
                return False
            if any(events & select.POLLERR for _, events in poller.poll(10)):
                # gone: counted again, since it may have read the rest between the count above and
                # its leaving (head of a short result), which was 141 or the check's code at random
                return _unread(fd) > 0
            if time.monotonic() > deadline:
                return False
    except OSError:  # a platform without FIONREAD on pipes: as before, no look
        return False


def _is_pipe(fd: int | None) -> bool:
    import stat

    try:
        return fd is not None and stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


class GuardedStdout:
    """sys.stdout, whose every write goes straight to its file descriptor (see write_all): a broken
    pipe raises OutputClosed at whichever write meets it, any other failure (a full disk,
    ``> /dev/full``) OutputError. A stream without a descriptor is written as it is.

    Into a pipe, the result is held back and written at the end in one piece (in pieces of a pipe's
    buffer when it is longer): what the reader sees of a short result then does not depend on when
    it reads. Written as it came, ``| head -3`` could read the first part, leave, and make the
    next write fail (141), or read it all (the check's code), from one run to the next."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._fd = _descriptor(stream)
        self._held: list[bytes] | None = [] if _is_pipe(self._fd) else None
        self._held_size = 0

    def write(self, text: str) -> int:
        if self._fd is None:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:
                raise OutputClosed() from None
        self.flush()  # whatever was written to the stream itself goes first
        encoding = getattr(self._stream, "encoding", None) or "utf-8"
        data = text.encode(encoding, getattr(self._stream, "errors", None) or "strict")
        if self._held is None:
            write_all(self._fd, data)
            return len(text)
        self._held.append(data)
        self._held_size += len(data)
        if self._held_size >= PIPE_CHUNK:
            self._release()
        return len(text)

    def _release(self) -> None:
        """Write what is held back."""
        if self._held and self._fd is not None:
            data, self._held[:], self._held_size = b"".join(self._held), [], 0
            write_all(self._fd, data)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise OutputClosed() from None
        except OSError as e:
            from kplan.errors import OutputError

            raise OutputError(f"cannot write to stdout: {e.strerror or e}") from None

    def release_quietly(self) -> None:
        """Write what is held back, if the reader still takes it: for a run ending with an error."""
        from kplan.errors import KplanError

        try:
            self._release()
        except (OutputClosed, KplanError):
            pass

    def finish(self) -> None:
        """At the end of a run: what is held back is written, then OutputClosed when the reader of
        the pipe left unread output behind."""
        self.flush()
        self._release()
        if self._fd is not None and reader_left(self._fd):
            raise OutputClosed()

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
    guarded = sys.stdout = GuardedStdout(stdout)
    try:
        try:
            yield
        except BaseException:
            guarded.release_quietly()  # a run that fails after writing part of its result shows that part
            raise
        guarded.finish()
    finally:
        sys.stdout = stdout
        if catch:
            signal.signal(signal.SIGINT, handler)
