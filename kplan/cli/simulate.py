"""``kplan simulate``: where every pending pod lands, or the exact reason it cannot."""

from __future__ import annotations

import sys
import time
from enum import StrEnum

import typer

from kplan.cli.render import format_completer
from kplan.cli.terminal import no_color_option, quiet_option
from kplan.report.check import FailOn

HELP = """Replay pending pods through kube-scheduler v1.34 and report where each one lands.

Without --cluster, the live cluster of the kubeconfig is read first (list calls only).

Exit codes: 0 the check passed, 1 it failed (see --fail-on: by default, a pending pod does not run), 2 bad input or usage, 3 cluster unreachable or unreadable."""

OUTPUT_HELP = ("Output format: table, wide, json, yaml, junit (JUnit XML), github (GitHub Actions annotations), "
               "markdown (a summary for pull requests) or html (a self-contained page with charts).")
FAIL_ON_HELP = ("What makes the exit code 1: 'unschedulable' (a pending pod does not run), 'preemption' (that, or "
                "a running pod is preempted) or 'never'.")


class TieBreak(StrEnum):
    random = "random"
    lowest_name = "lowest-name"


def simulate(
    ctx: typer.Context,
    manifests: list[str] | None = typer.Argument(
        None, help="Manifest files or folders (recursive *.yaml, *.yml, *.json); '-' reads stdin."),
    filename: list[str] = typer.Option(
        [], "--filename", "-f", metavar="FILE", help="A manifest file or folder, '-' for stdin, as kubectl's -f. "
        "Repeatable; read after the MANIFESTS arguments."),
    cluster: list[str] = typer.Option(
        [], "--cluster", "-c", metavar="FILE", help="Cluster description: a snapshot or 'kubectl get nodes,pods -A -o yaml' output. "
        "Repeatable. Without it, the live cluster is read (read-only) into memory."),
    kubeconfig: str | None = typer.Option(
        None, "--kubeconfig", metavar="PATH", help="Read the live cluster of this kubeconfig (default: $KUBECONFIG, ~/.kube/config, "
        "then in-cluster)."),
    context: str | None = typer.Option(None, "--context", metavar="NAME", help="Kubeconfig context of the live cluster to read."),
    scheduler_config: str | None = typer.Option(
        None, "--scheduler-config", metavar="FILE", help="A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1)."),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Seed for the scheduler's random choices (score ties, preemption) "
                             "and for the random suffixes of the pod names the controllers generate."),
    namespace: str = typer.Option("default", "--namespace", "-n", metavar="NS",
                                  help="Namespace of the manifests' objects that name none."),
    keep_existing: bool = typer.Option(
        False, "--keep-existing", help="Workloads already in the cluster keep their pods running while the "
        "applied ones are scheduled (default: the applied workload replaces them, its old pods leave first)."),
    tie_break: TieBreak = typer.Option(
        TieBreak.random, "--tie-break", help="How equal top scores are broken: 'random' as kube-scheduler does "
        "(seeded), or 'lowest-name' for reproducible diffs."),
    output: str = typer.Option("table", "--output", "-o", metavar="FORMAT", help=OUTPUT_HELP,
                               autocompletion=format_completer("SimulationResult")),
    fail_on: FailOn = typer.Option(FailOn.unschedulable, "--fail-on", help=FAIL_ON_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print load and scheduling times on stderr."),
    quiet: bool = quiet_option(),
    no_color: bool = no_color_option(),
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.progress import HUMAN_FORMATS, run_progress
    from kplan.cli.render import check_format, render
    from kplan.cli.terminal import emit, is_quiet, render_options
    from kplan.cli.workspace import load_inputs, open_planner
    from kplan.report.check import failed
    from kplan.report.document import simulation_document

    t0 = time.perf_counter()
    quiet = is_quiet(ctx, quiet, verbose)
    check_format("SimulationResult", output)
    workspace = load_inputs(cluster, [*(manifests or []), *filename], kubeconfig=kubeconfig, context=context,
                            namespace=namespace, keep_existing=keep_existing, seed=seed, progress=not quiet)
    planner = open_planner(workspace, scheduler_config, seed=seed, tie_break=tie_break)
    t1 = time.perf_counter()
    with run_progress(not quiet and output in HUMAN_FORMATS) as planner.progress:
        result = planner.simulate().result
    t2 = time.perf_counter()
    print_warnings(planner.warnings, quiet)
    # the CLI measures the times: the engine reads no clock
    timing = {"loadSeconds": round(t1 - t0, 4), "scheduleSeconds": round(t2 - t1, 4)}
    doc = simulation_document(result, timing)
    emit(render(doc, output, render_options(fail_on=fail_on)))
    if verbose:
        print(f"loaded in {t1 - t0:.3f} s, scheduled in {t2 - t1:.3f} s "
              f"({time.perf_counter() - t0:.3f} s in all)", file=sys.stderr)
    if failed(doc, fail_on):
        raise typer.Exit(1)
