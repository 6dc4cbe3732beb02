"""``kplan snapshot``: capture a live cluster into a file, with list calls only."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from kplan.cli import options as opt

HELP = (
    "Capture a live cluster into a snapshot file, read-only: list calls (HTTP GET) only.\n\n"
    "Reads nodes, pods (not finished ones), namespaces, services, workloads, HorizontalPodAutoscalers, "
    "PodDisruptionBudgets, "
    "PriorityClasses, storage objects, DRA objects (DeviceClasses, ResourceSlices, ResourceClaims and their "
    "templates), LimitRanges and ResourceQuotas, and writes one kind: List document "
    "on stdout (-o json or yaml), or into --output-file FILE: YAML for *.yaml / *.yml, gzip-compressed for *.gz "
    "(snapshot.json.gz). Use it with 'kplan simulate --cluster FILE'. --print-rbac prints the read-only "
    "ClusterRole it needs.\n\n"
    "Exit codes: 0 written, 2 bad input or usage, 3 cluster unreachable or unreadable (no permission to list nodes or pods)."
)


def snapshot(
    ctx: typer.Context,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", metavar="FORMAT", help="Output format: json or yaml. Default: json, or what the "
        "--output-file name says.", autocompletion=lambda incomplete: [f for f in FORMATS if f.startswith(incomplete)])
    ] = None,
    output_file: Annotated[str | None, typer.Option(
        "--output-file", metavar="FILE", help="Write the snapshot into FILE (.json, .yaml, .yml, optionally .gz), "
        "atomically. Default: stdout.")] = None,
    print_rbac: Annotated[bool, typer.Option(
        "--print-rbac", help="Print the read-only ClusterRole kplan needs (list on the kinds it reads) and exit, "
        "without reading the cluster.")] = False,
    kubeconfig: str | None = opt.kubeconfig_option(
        "Kubeconfig file. Default: $KUBECONFIG (several paths allowed), then ~/.kube/config, then the in-cluster "
        "service account."),
    context: str | None = opt.context_option("Kubeconfig context to read. Default: the kubeconfig's current-context."),
    namespace: str | None = opt.namespace_option(
        "Read pods and other namespaced objects from this namespace only, for users who may read no other; nodes "
        "then look emptier than they are."),
    all_namespaces: Annotated[bool, typer.Option(
        "--all-namespaces", "-A", help="Read every namespace (the default; accepted for kubectl habits).")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace the output file if it exists.")] = False,
    chunk_size: Annotated[int, typer.Option(
        "--chunk-size", min=1, metavar="N", help="Objects per list call (as kubectl's --chunk-size).")] = 500,
    request_timeout: Annotated[float, typer.Option(
        "--request-timeout", min=0.1, metavar="SECONDS", help="Seconds to wait for each answer before retrying the call.")] = 60.0,
    quiet: bool = opt.quiet_option(),
    no_color: bool = opt.no_color_option(),
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.progress import list_progress
    from kplan.cli.terminal import emit, is_quiet
    from kplan.errors import InputError
    from kplan.io import kube
    from kplan.io.snapshot_file import check_target, write_snapshot

    if print_rbac:
        emit(kube.readonly_clusterrole())
        return
    fmt = snapshot_format(output, output_file)
    if namespace is not None and all_namespaces:
        raise InputError("-n/--namespace and -A/--all-namespaces cannot be used together")
    if namespace == "":
        raise InputError("-n/--namespace: give a namespace name")
    to_file = output_file is not None and output_file != "-"
    if output_file is not None and to_file:
        check_target(output_file, force)  # before reading a cluster for minutes
    quiet = is_quiet(ctx, quiet)
    with list_progress(not quiet) as progress:
        cap = kube.snapshot(kubeconfig, context, namespace=namespace, timeout=request_timeout,
                            chunk_size=chunk_size, progress=progress)
    from kplan.io.cluster_version import choose_release, stated

    # a server kplan does not model: said now, and again by each command that reads the snapshot
    print_warnings(cap.warnings + choose_release(None, "", stated(cap.server_version, None))[1], quiet)
    write_snapshot(cap.head(), cap.encoded, output_file if to_file else None, force=force, fmt=fmt)
    if to_file and not quiet:
        counts = ", ".join(count_of(n, resource) for resource, n in cap.counts.items() if n)
        print(f"captured {counts or 'nothing'} from context {cap.context} (server {cap.server_version}) into "
              f"{output_file}", file=sys.stderr)


FORMATS = ("json", "yaml")


def snapshot_format(output: str | None, output_file: str | None) -> str:
    """-o json|yaml, or what the file name says; a contradiction, or -o given a file name as
    before, is a usage error."""
    from kplan.errors import InputError
    from kplan.io.snapshot_file import is_yaml

    named = None if output_file in (None, "-") else "yaml" if is_yaml(str(output_file)) else "json"
    if output is None:
        return named or "json"
    if output not in FORMATS:
        hint = " (to write a file, give --output-file FILE)" if "." in output or "/" in output else ""
        raise InputError(f"--output: unknown format {output!r}; choose json or yaml{hint}")
    if named is not None and named != output:
        raise InputError(f"--output {output} and --output-file {output_file}: the file name says {named}; "
                         "give one or make them agree")
    return output


def count_of(n: int, resource: str) -> str:
    """``1 node``, ``2 nodes``, ``1 storageclass``: a count with the resource in the right number."""
    if n == 1:
        resource = resource[:-2] if resource.endswith("sses") else resource[:-1]
    return f"{n:,} {resource}"
