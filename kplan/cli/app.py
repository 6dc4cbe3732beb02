"""The ``kplan`` command: one typer app; each command lives in its own module.

Exit codes, the same for every command (docs/exit-codes.md):

- 0: success: the command did its work and its check passed;
- 1: the check failed (``simulate``: see ``--fail-on``; each command's help says what it checks);
- 2: bad input or usage: a file, manifest, option or configuration kplan cannot use, and every
  usage error the command-line parser finds (unknown option, missing or malformed value); also a
  result that cannot be written (a full disk);
- 3: the cluster could not be reached or read;
- 70: an internal error (a bug in kplan; the traceback is printed to report it);
- 130: interrupted (Ctrl-C); 141: the reader of stdout went away (as a process killed by SIGPIPE),
  or left part of the result unread in the pipe (``kplan.cli.terminal.reader_left``).

Only this layer catches KplanError: it prints the one-line message on stderr and exits with the
error's code (2 or 3), never with a traceback.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

import typer
from typer._click.exceptions import NoArgsIsHelpError, UsageError  # typer's vendored click

from kplan import __version__
from kplan.cli import capacity as capacity_cmd
from kplan.cli import explain as explain_cmd
from kplan.cli import simulate as simulate_cmd
from kplan.cli import snapshot as snapshot_cmd
from kplan.cli import sweep as sweep_cmd
from kplan.cli import whatif as whatif_cmd
from kplan.cli.options import PanelledCommand
from kplan.cli.terminal import NO_COLOR_HELP, QUIET_HELP, RootOptions, disable_color
from kplan.framework.release_tables import DEFAULT_RELEASE, RELEASES
from kplan.scheduler.kernel_switch import use_kernel

#: exit codes besides 0, 1 (check failed) and the KplanError codes (2 bad input, 3 cluster)
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

PROG = "kplan"
_SHORT_EQUALS = re.compile(r"(-[A-Za-z])=(.*)", re.DOTALL)

app = typer.Typer(
    name=PROG,
    help="Offline capacity planner for Kubernetes: replays kube-scheduler "
    f"{', '.join(r.scheduler_version for r in RELEASES.values())} (--kube-version; by default the release the cluster states, else "
    f"{DEFAULT_RELEASE}) on a cluster snapshot and your manifests.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help: it wraps option help at word boundaries to the terminal (at most 80
    # columns), where rich's boxed help truncated it ("A KubeSchedulerConfigurat…") at 80
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from kplan.io.cluster_version import modelled_releases

        releases = modelled_releases()
        from kplan.cli.terminal import fitted

        typer.echo(fitted(f"kplan {__version__} (models kube-scheduler "
                          f"{', '.join(RELEASES[v].scheduler_version for v in releases)}; releases modelled: "
                          f"{', '.join(map(str, releases))})", sys.stdout))
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print kplan's version and the kube-scheduler releases it models."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP + " For every command."),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP + " For every command.",
                                  callback=disable_color, is_eager=True),
) -> None:
    """Offline capacity planner for Kubernetes."""
    ctx.obj = RootOptions(quiet=quiet)
    # KPLAN_KERNEL=python runs every cycle through the per-plugin Python alone (the reference the
    # compiled cycle is tested against; the same results, slower)
    use_kernel(os.environ.get("KPLAN_KERNEL", "") != "python")


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


COMPLETION_HELP = """Print the shell completion script for bash, zsh or fish.

The scripts are also committed under completions/. Install one, for example:
bash: kplan completion bash > ~/.local/share/bash-completion/completions/kplan;
zsh: kplan completion zsh > ~/.zfunc/_kplan (with ~/.zfunc in fpath before compinit);
fish: kplan completion fish > ~/.config/fish/completions/kplan.fish."""


app.command("simulate", help=simulate_cmd.HELP, short_help="Where every pending pod lands, or why it cannot.")(simulate_cmd.simulate)
app.add_typer(explain_cmd.app, name="explain")
app.command("whatif", cls=PanelledCommand, help=whatif_cmd.HELP, short_help="Simulate before and after a change to the cluster.")(whatif_cmd.whatif)
app.command("capacity", help=capacity_cmd.HELP, short_help="How many more replicas of a pod fit, and where.")(capacity_cmd.capacity)
app.command("sweep", cls=PanelledCommand, help=sweep_cmd.HELP, short_help="Simulate a grid of changes, each with several seeds.")(sweep_cmd.sweep)
app.command("snapshot", help=snapshot_cmd.HELP, short_help="Capture a live cluster into a file (read-only).")(snapshot_cmd.snapshot)


def completion(shell: Shell = typer.Argument(..., metavar="SHELL", help="The shell: bash, zsh or fish.")) -> None:
    from kplan.cli.completion import completion_script
    from kplan.cli.terminal import emit

    emit(completion_script(shell.value))


app.command("completion", help=COMPLETION_HELP, short_help="Print the shell completion script.")(completion)


def kubectl_args(args: Sequence[str]) -> list[str]:
    """``-o=json`` as kubectl reads it: a short option joined to its value by ``=`` (click would
    take ``=json`` for the value). Arguments after ``--`` are left alone."""
    out: list[str] = []
    for i, a in enumerate(args):
        if a == "--":
            return out + list(args[i:])
        m = _SHORT_EQUALS.fullmatch(a)
        out += [m.group(1), m.group(2)] if m else [a]
        if out == ["explain"] and i + 1 < len(args) and explain_cmd.workload_of(args[i + 1]) is not None:
            out.append("pod")  # kubectl's 'explain deployment/web': the explain pod command takes TYPE/NAME
    return out


def command_path(args: Sequence[str]) -> str:
    """``kplan`` and the (sub)commands named at the start of ``args``, for a usage error the
    parser found before it had a command's context."""
    from typer.main import get_command

    cmd: Any = get_command(app)
    path = [PROG]
    for a in args:
        sub = getattr(cmd, "commands", {}).get(a)
        if a.startswith("-") or sub is None:
            if not a.startswith("-"):
                break
            continue
        path.append(a)
        cmd = sub
    return " ".join(path)


def usage_error(e: UsageError, args: Sequence[str]) -> None:
    """A usage error as one ``error:`` line and a pointer to the command's help; ``kplan`` or
    ``kplan explain`` alone print their help (on stderr: it is not the result)."""
    from kplan.cli.terminal import error

    ctx = getattr(e, "ctx", None)
    if isinstance(e, NoArgsIsHelpError):
        print(e.format_message(), file=sys.stderr)
        return
    message = e.format_message()
    error(message[:1].lower() + message[1:] if message[1:2].islower() else message)
    print(f"see '{ctx.command_path if ctx is not None else command_path(args)} --help'", file=sys.stderr)


def main(args: list[str] | None = None) -> None:
    from kplan.cli.completion import enable_completion
    from kplan.cli.terminal import (
        Interrupted,
        OutputClosed,
        error,
        interrupts_and_pipes,
        no_color_in,
        silence_stdout,
    )
    from kplan.errors import KplanError, OutputError

    args = sys.argv[1:] if args is None else args
    # before parsing: a usage error is found (and drawn by rich) before any option's callback runs
    disable_color(no_color_in(args))
    enable_completion()
    try:
        with interrupts_and_pipes():
            code = app(args=kubectl_args(args), prog_name=PROG, standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except UsageError as e:
        usage_error(e, args)
        sys.exit(EXIT_USAGE)
    except KplanError as e:
        if isinstance(e, OutputError):
            silence_stdout()  # what is left in Python's buffer would fail again at exit
        for line in str(e).splitlines() or [""]:  # validation reports one line per invalid object
            error(line)
        sys.exit(e.exit_code)
    except OutputClosed:
        silence_stdout()
        sys.exit(EXIT_BROKEN_PIPE)
    except (KeyboardInterrupt, Interrupted):
        print("interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except Exception:
        traceback.print_exc()
        error(f"internal error in kplan {__version__}: this is a bug; please report it with the traceback above")
        sys.exit(EXIT_INTERNAL)
