"""``kplan snapshot``: capture a live cluster into a file, with list calls only."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from kplan.cli.terminal import NO_COLOR_HELP, QUIET_HELP, disable_color

HELP = (
    "Capture a live cluster into a snapshot file, read-only: list calls (HTTP GET) only.\n\n"
    "Reads nodes, pods (not finished ones), namespaces, services, workloads, PodDisruptionBudgets, "
    "PriorityClasses, storage objects and LimitRanges, and writes one kind: List document: JSON by default, "
    "YAML for *.yaml / *.yml, gzip-compressed for *.gz (snapshot.json.gz). Without -o the JSON goes to stdout. "
    "Use it with 'kplan simulate --cluster FILE'.\n\n"
    "Exit codes: 0 written, 2 bad input or usage, 3 cluster unreachable or unreadable (no permission to list nodes or pods)."
)


def snapshot(
    ctx: typer.Context,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="File to write (.json, .yaml, .yml, optionally .gz). Default: JSON on stdout.")] = None,
    kubeconfig: Annotated[str | None, typer.Option(
        "--kubeconfig", help="Kubeconfig file. Default: $KUBECONFIG (several paths allowed), then ~/.kube/config, "
        "then the in-cluster service account.")] = None,
    context: Annotated[str | None, typer.Option(
        "--context", help="Kubeconfig context to read. Default: the kubeconfig's current-context.")] = None,
    namespace: Annotated[str | None, typer.Option(
        "--namespace", "-n", help="Read pods and other namespaced objects from this namespace only, for users who "
        "may read no other; nodes then look emptier than they are.")] = None,
    all_namespaces: Annotated[bool, typer.Option(
        "--all-namespaces", "-A", help="Read every namespace (the default; accepted for kubectl habits).")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace the output file if it exists.")] = False,
    chunk_size: Annotated[int, typer.Option(
        "--chunk-size", min=1, help="Objects per list call (as kubectl's --chunk-size).")] = 500,
    request_timeout: Annotated[float, typer.Option(
        "--request-timeout", min=0.1, help="Seconds to wait for each answer before retrying the call.")] = 60.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help=QUIET_HELP)] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help=NO_COLOR_HELP, callback=disable_color,
                                           is_eager=True)] = False,
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.progress import list_progress
    from kplan.cli.terminal import is_quiet
    from kplan.errors import InputError
    from kplan.io import kube
    from kplan.io.snapshot_file import check_target, write_snapshot

    if namespace is not None and all_namespaces:
        raise InputError("-n/--namespace and -A/--all-namespaces cannot be used together")
    if namespace == "":
        raise InputError("-n/--namespace: give a namespace name")
    to_file = output is not None and output != "-"
    if output is not None and to_file:
        check_target(output, force)  # before reading a cluster for minutes
    quiet = is_quiet(ctx, quiet)
    with list_progress(not quiet) as progress:
        cap = kube.snapshot(kubeconfig, context, namespace=namespace, timeout=request_timeout,
                            chunk_size=chunk_size, progress=progress)
    print_warnings(cap.warnings, quiet)
    write_snapshot(cap.head(), cap.encoded, output, force=force)
    if to_file and not quiet:
        counts = ", ".join(f"{n:,} {resource}" for resource, n in cap.counts.items() if n)
        print(f"captured {counts or 'nothing'} from context {cap.context} (server {cap.server_version}) into "
              f"{output}", file=sys.stderr)
