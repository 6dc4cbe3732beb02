"""Where a command's result goes: stdout, or ``--output-file FILE``, written atomically as a
snapshot is (kplan.io.atomic), gzip-compressed when the name ends in .gz.

An ``--output-file`` that could not be written, and ``-o html`` on a terminal (a page of tens of
kilobytes for a browser, not for reading there), fail before the run, with exit code 2, rather
than after minutes of simulation. A report replaces an existing file, as ``> FILE`` would; a
snapshot, slow to take again, asks for ``--force``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from kplan.framework.release import Release

#: a result document (kplan.cli.render.Document)
D = TypeVar("D", bound="DataclassInstance")

#: formats whose output is not for reading on a terminal
NOT_FOR_A_TERMINAL = {"html": "report.html"}


def to_file(output_file: str | None) -> bool:
    """``--output-file`` names a file ('-' is stdout, as for the manifests)."""
    return output_file is not None and output_file != "-"


def check_destination(fmt: str, output_file: str | None) -> None:
    """Before the run: the result could be written where it is to go."""
    from kplan.cli.terminal import is_terminal
    from kplan.errors import InputError
    from kplan.io.atomic import check_target

    if to_file(output_file):
        assert output_file is not None
        check_target(output_file, force=True)
    elif fmt in NOT_FOR_A_TERMINAL and is_terminal(sys.stdout):
        name = NOT_FOR_A_TERMINAL[fmt]
        raise InputError(f"-o {fmt} makes a page for a browser, not for a terminal: give --output-file {name}, "
                         f"or redirect stdout (> {name})")


def result_options(output_file: str | None, **kw: Any) -> Any:
    """The RenderOptions of the result: for stdout as kplan.cli.terminal.render_options says; for a
    file, no colour, no wrapping and ASCII bars, as for a pipe."""
    from kplan.cli.terminal import render_options

    opts = render_options(**kw)
    return replace(opts, color=False, width=None, terminal=False) if to_file(output_file) else opts


def with_release(doc: D, release: Release) -> D:
    """The document with the release the run modelled: every document kplan writes names it."""
    from kplan.report.document import ReleaseInfo

    return replace(doc, release=ReleaseInfo.of(release))


def run_info(*, release: Release, cluster: Sequence[str] = (), manifests: Sequence[str] = (),
             context: str | None = None, scheduler_config: str | None = None, seed: int | None = None,
             tie_break: str | None = None) -> Any:
    """The RunInfo of this run: its inputs as given, its seed, the release it modelled and the time
    now (SOURCE_DATE_EPOCH, when set, instead: reproducible reports)."""
    import os
    import time

    from kplan.cli.render import RunInfo
    from kplan.report.document import ReleaseInfo

    inputs = [("Cluster", ", ".join(cluster) if cluster else
               f"the live cluster of {'context ' + context if context else 'the current context'}")]
    if manifests:
        inputs.append(("Manifests", ", ".join("stdin" if m == "-" else m for m in manifests)))
    if scheduler_config:
        inputs.append(("Scheduler configuration", scheduler_config))
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    when = int(epoch) if epoch.isdigit() else time.time()
    made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(when))
    return RunInfo(inputs=tuple(inputs), seed=seed, tie_break=tie_break, release=ReleaseInfo.of(release).words,
                   made=made)


def deliver(text: str, output_file: str | None, quiet: bool = False) -> None:
    """The result to stdout, or into the file (a line on stderr says where, unless ``quiet``)."""
    from kplan.cli.terminal import emit
    from kplan.io.atomic import write_atomically

    if not to_file(output_file):
        emit(text)
        return
    assert output_file is not None
    write_atomically(output_file, lambda out: out.write(text), force=True, what="result")
    if not quiet:
        import os

        size = os.path.getsize(output_file)
        amount = f"{size} bytes" if size < 10_000 else f"{size // 1000} kB"
        print(f"wrote {output_file} ({amount})", file=sys.stderr)
