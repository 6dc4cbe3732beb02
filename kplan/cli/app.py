"""The ``kplan`` command: one typer app; each command lives in its own module.

Only this layer catches KplanError: it prints the one-line message on stderr and exits with the
error's code (2 bad input, 3 cluster unreachable), never with a traceback.
"""

from __future__ import annotations

import sys

import typer

from kplan import SCHEDULER_VERSION, __version__
from kplan.cli import capacity as capacity_cmd
from kplan.cli import explain as explain_cmd
from kplan.cli import simulate as simulate_cmd
from kplan.cli import snapshot as snapshot_cmd
from kplan.cli import whatif as whatif_cmd

app = typer.Typer(
    name="kplan",
    help="Offline capacity planner for Kubernetes: replays kube-scheduler "
    f"{SCHEDULER_VERSION} on a cluster snapshot and your manifests.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kplan {__version__} (models kube-scheduler {SCHEDULER_VERSION})")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print kplan's version and the kube-scheduler version it models."),
) -> None:
    """Offline capacity planner for Kubernetes."""


app.command("simulate", help=simulate_cmd.HELP)(simulate_cmd.simulate)
app.add_typer(explain_cmd.app, name="explain")
app.command("whatif", help=whatif_cmd.HELP)(whatif_cmd.whatif)
app.command("capacity", help=capacity_cmd.HELP)(capacity_cmd.capacity)
app.command("snapshot", help=snapshot_cmd.HELP)(snapshot_cmd.snapshot)


def main() -> None:
    from kplan.errors import KplanError

    try:
        app()
    except KplanError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
