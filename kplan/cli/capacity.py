"""``kplan capacity``: how many more replicas of a pod fit, where they go, and why the next does not."""

from __future__ import annotations

import typer

from kplan.cli.terminal import no_color_option, quiet_option
from kplan.cli.workspace import (
    TieBreak,
    cluster_option,
    context_option,
    help_text,
    kubeconfig_option,
    load_inputs,
    open_planner,
    output_option,
    scheduler_config_option,
    seed_option,
    tie_break_option,
)

HELP = help_text("""Count how many more replicas of a pod fit, where they go, and why the next one does not.

Semantics: the cluster's pending pods are scheduled first, as 'kplan simulate' does. Then
identical replicas (the pod's labels, requests, constraints and admitted priority), named
NAME-capacity-1, 2, …, are created one at a time, each once the previous one has settled, and
scheduled by the real algorithm, preemption included (evicted pods are listed separately). The
count stops at the first replica that does not fit; its FitError is the reason.

Exit codes: 0 at least one replica fits, 1 none does, 2 bad input or usage, 3 cluster unreachable or unreadable.""")

def capacity(
    ctx: typer.Context,
    pod_file: str = typer.Argument(..., help="A file with the Pod, or the Deployment, ReplicaSet, "
                                   "ReplicationController, StatefulSet or Job, whose replicas to count."),
    cluster: list[str] = cluster_option(),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
    scheduler_config: str | None = scheduler_config_option(),
    limit: int = typer.Option(10000, "--limit", min=1, max=100_000, help="Stop after this many replicas fit."),
    seed: int = seed_option(),
    tie_break: TieBreak = tie_break_option(),
    output: str = output_option("CapacityResult"),
    quiet: bool = quiet_option(),
    no_color: bool = no_color_option(),
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.progress import HUMAN_FORMATS, run_progress
    from kplan.cli.render import check_format, render
    from kplan.cli.terminal import emit, is_quiet, render_options
    from kplan.errors import InputError
    from kplan.io.manifests import load_manifests
    from kplan.io.replicas import replica_factory
    from kplan.report.capacity import capacity_document

    quiet = is_quiet(ctx, quiet)
    check_format("CapacityResult", output)
    objects = load_manifests([pod_file])
    if len(objects) != 1:
        raise InputError(f"{pod_file}: expected one Pod or workload, found {len(objects)} objects")
    loaded = load_inputs(cluster, [], kubeconfig=kubeconfig, context=context, seed=seed, progress=not quiet)
    template, replica, label = replica_factory(loaded.inputs, objects[0], seed=seed)
    planner = open_planner(loaded, scheduler_config, seed=seed, tie_break=tie_break)
    print_warnings(planner.warnings, quiet)

    with run_progress(not quiet and output in HUMAN_FORMATS) as planner.progress:
        out = planner.capacity(replica, limit)
    doc = capacity_document(template, label, out, limit)
    emit(render(doc, output, render_options()))
    if out.replicas == 0:
        raise typer.Exit(1)
