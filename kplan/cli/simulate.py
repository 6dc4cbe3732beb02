"""``kplan simulate``: where every pending pod lands, or the exact reason it cannot."""

from __future__ import annotations

import sys
import time

import typer

from kplan.cli import options as opt
from kplan.framework.release_tables import RELEASES
from kplan.report.check import FailOn

HELP = f"""Replay pending pods through kube-scheduler ({', '.join(r.scheduler_version for r in RELEASES.values())}: --kube-version) and
report where each one lands.

Without --cluster, the live cluster of the kubeconfig is read first (list calls only).

Exit codes: 0 the check passed, 1 it failed (see --fail-on: by default, a pending pod does not run), 2 bad input or usage, 3 cluster unreachable or unreadable."""

OUTPUT_HELP = ("Output format: table, wide, json, yaml, name (pod/NAME for each pending pod), jsonpath=TEMPLATE "
               "(kubectl's JSONPath over the JSON document), junit (JUnit XML), github (GitHub Actions "
               "annotations), markdown (a summary for pull requests) or html (a self-contained page with charts).")


def simulate(
    ctx: typer.Context,
    manifests: list[str] | None = opt.manifests_argument(),
    filename: list[str] = opt.filename_option(),
    cluster: list[str] = opt.cluster_option(),
    kubeconfig: str | None = opt.kubeconfig_option(),
    context: str | None = opt.context_option(),
    scheduler_config: str | None = opt.scheduler_config_option(),
    kube_version: str | None = opt.kube_version_option(),
    feature_gates: str = opt.feature_gates_option(),
    seed: int = opt.seed_option(),
    namespace: str | None = opt.namespace_option(),
    all_namespaces: bool = opt.all_namespaces_option(),
    keep_existing: bool = opt.keep_existing_option(),
    hpa: str | None = opt.hpa_option(opt.HPA_BOUNDS_HELP),
    tie_break: opt.TieBreak = opt.tie_break_option(),
    autoscaler: str | None = opt.autoscaler_option(),
    instance_types: str | None = opt.instance_types_option(),
    node_groups: str | None = opt.node_groups_option(),
    expander: str = opt.expander_option(),
    max_nodes_total: int = opt.max_nodes_total_option(),
    balance_similar_node_groups: bool = opt.balance_similar_node_groups_option(),
    output: str = opt.output_option("SimulationResult", OUTPUT_HELP),
    fail_on: FailOn = opt.fail_on_option(),
    show_all: bool = typer.Option(False, "--all", help="List every pod and node in the table at a terminal "
                                  "(default there: the first 20 pods of each status and the 20 fullest nodes; "
                                  "pipes, files, JSON and YAML always list all)."),
    verbose: bool = opt.verbose_option("Print load and scheduling times on stderr."),
    output_file: str | None = opt.output_file_option(),
    quiet: bool = opt.quiet_option(),
    no_color: bool = opt.no_color_option(),
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.output import check_destination, deliver, result_options, run_info, with_release
    from kplan.cli.progress import run_progress
    from kplan.cli.render import check_format, render
    from kplan.cli.terminal import is_quiet
    from kplan.cli.workspace import (
        attach_autoscaler,
        autoscaling,
        check_autoscaler,
        load_inputs,
        open_planner,
    )
    from kplan.io.hpa import parse_bound
    from kplan.report.check import failed
    from kplan.report.document import autoscaled_docs, simulation_document

    t0 = time.perf_counter()
    quiet = is_quiet(ctx, quiet, verbose)
    check_format("SimulationResult", output)
    if fail_on is FailOn.newly_unschedulable:
        from kplan.errors import InputError

        raise InputError("--fail-on newly-unschedulable compares the runs before and after a change: kplan whatif "
                         "takes it, simulate has no change (use unschedulable)")
    check_destination(output, output_file)
    if hpa is not None:
        parse_bound(hpa)  # a bad value fails before any loading
    catalog = check_autoscaler(autoscaler, instance_types, node_groups, expander, max_nodes_total,
                               balance_similar_node_groups)
    workspace = load_inputs(cluster, [*(manifests or []), *filename], kubeconfig=kubeconfig, context=context,
                            namespace=namespace, keep_existing=keep_existing, seed=seed, progress=not quiet)
    planner = open_planner(workspace, scheduler_config, seed=seed, tie_break=tie_break, kube_version=kube_version, feature_gates=feature_gates, verbose=verbose)
    attach_autoscaler(planner, catalog, seed=seed)
    scaled, notes = autoscaling(workspace, hpa, seed=seed)
    t1 = time.perf_counter()
    with run_progress(not quiet) as planner.progress:
        if scaled:  # the workloads at their autoscalers' bound, then the run as always
            changed, _ = planner.changed(scaled)
            run = planner.simulate(changed)
        else:
            run = planner.simulate()
    t2 = time.perf_counter()
    print_warnings(planner.warnings + notes, quiet)
    # the CLI measures the times: the engine reads no clock
    timing = {"loadSeconds": round(t1 - t0, 4), "scheduleSeconds": round(t2 - t1, 4)}
    doc = simulation_document(run.result, timing, run.autoscaling)
    if scaled:
        from dataclasses import replace

        doc = replace(doc, autoscaled=autoscaled_docs(scaled))
    doc = with_release(doc, planner.setup.release)
    deliver(render(doc, output, result_options(output_file, fail_on=fail_on, full=show_all, run=run_info(
        cluster=cluster, manifests=[*(manifests or []), *filename], context=context,
        scheduler_config=scheduler_config, seed=seed, tie_break=tie_break.value,
        release=planner.setup.release))), output_file, quiet)
    if verbose:
        print(f"loaded in {t1 - t0:.3f} s, scheduled in {t2 - t1:.3f} s "
              f"({time.perf_counter() - t0:.3f} s in all)", file=sys.stderr)
    if failed(doc, fail_on):
        raise typer.Exit(1)
