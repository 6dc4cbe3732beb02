"""``kplan capacity``: how many more replicas of a pod fit, where they go, and why the next does not."""

from __future__ import annotations

from typing import Any

import typer

from kplan.cli import options as opt
from kplan.cli.workspace import load_inputs, open_planner

HELP = opt.help_text("""Count how many more replicas of a pod fit, where they go, and why the next one does not.

Semantics: the cluster's pending pods are scheduled first, as 'kplan simulate' does. Then
identical replicas (the pod's labels, requests, constraints and admitted priority), named
NAME-capacity-1, 2, …, are created one at a time, each once the previous one has settled, and
scheduled by the real algorithm, preemption included (evicted pods are listed separately). The
count stops at the first replica that does not fit; its FitError is the reason. A StatefulSet's
replicas take its next ordinals, each with its claims (TEMPLATE-SET-ORDINAL) created just before
it, bound or provisioned as for the declared ones.

Exit codes: 0 the declared replicas fit and at least one replica does, 1 a declared replica does
not fit or none does, 2 bad input or usage, 3 cluster unreachable or unreadable.""")

def capacity(
    ctx: typer.Context,
    manifests: list[str] | None = opt.manifests_argument(
        "Files or folders with the Pod or workload whose replicas to count (Deployment, ReplicaSet, "
        "ReplicationController, StatefulSet, Job or CronJob) and what it comes with (Services, claims, ...); "
        "'-' reads stdin."),
    filename: list[str] = opt.filename_option(),
    workload: str | None = typer.Option(
        None, "--workload", metavar="KIND/[NS/]NAME", help="The Pod or workload of the manifests to count, "
        "e.g. Deployment/shop/web (needed when they hold more than one)."),
    namespace: str | None = opt.namespace_option(),
    all_namespaces: bool = opt.all_namespaces_option(),
    cluster: list[str] = opt.cluster_option(),
    kubeconfig: str | None = opt.kubeconfig_option(),
    context: str | None = opt.context_option(),
    scheduler_config: str | None = opt.scheduler_config_option(),
    kube_version: str | None = opt.kube_version_option(),
    feature_gates: str = opt.feature_gates_option(),
    hpa: str | None = opt.hpa_option(opt.HPA_BOUNDS_HELP + " Applied before counting: the replicas counted are "
                                     "those beyond the workloads at that bound."),
    limit: int = typer.Option(10000, "--limit", min=1, metavar="N", max=100_000, help="Stop after this many replicas fit."),
    seed: int = opt.seed_option(),
    tie_break: opt.TieBreak = opt.tie_break_option(),
    autoscaler: str | None = opt.autoscaler_option(),
    instance_types: str | None = opt.instance_types_option(),
    node_groups: str | None = opt.node_groups_option(),
    expander: str = opt.expander_option(),
    max_nodes_total: int = opt.max_nodes_total_option(),
    balance_similar_node_groups: bool = opt.balance_similar_node_groups_option(),
    output: str = opt.output_option("CapacityResult", "Output format: table, json, yaml, name "
                                    "(node/NAME for each node the replicas go to), jsonpath=TEMPLATE (kubectl's JSONPath "
                                    "over the JSON document) or html (a self-contained page with charts)."),
    output_file: str | None = opt.output_file_option(),
    quiet: bool = opt.quiet_option(),
    no_color: bool = opt.no_color_option(),
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.output import check_destination, deliver, result_options, run_info, with_release
    from kplan.cli.progress import run_progress
    from kplan.cli.render import check_format, render
    from kplan.cli.terminal import is_quiet
    from kplan.cli.workspace import autoscaling
    from kplan.errors import InputError
    from kplan.io.apply import with_namespace
    from kplan.io.hpa import parse_bound
    from kplan.io.manifests import load_manifests
    from kplan.io.replicas import choose_target, declared_pods, ordered_ready, replica_factory
    from kplan.report.capacity import capacity_document
    from kplan.scheduler.pod_status import PodStatus

    quiet = is_quiet(ctx, quiet)
    check_format("CapacityResult", output)
    check_destination(output, output_file)
    files = [*(manifests or []), *filename]
    if not files:
        raise InputError("give the Pod or workload whose replicas to count: a file or folder, or -f FILE")
    if hpa is not None:
        parse_bound(hpa)  # a bad value fails before any loading
    from kplan.cli.workspace import attach_autoscaler, check_autoscaler

    catalog = check_autoscaler(autoscaler, instance_types, node_groups, expander, max_nodes_total,
                               balance_similar_node_groups)
    objects = load_manifests(files)
    target = choose_target(with_namespace(objects, namespace or "default"), workload)
    # the whole bundle is applied as 'kplan simulate' applies it: the workload's declared replicas
    # are pending pods placed first, its Services and claims are there
    loaded = load_inputs(cluster, files, kubeconfig=kubeconfig, context=context, namespace=namespace, seed=seed,
                         progress=not quiet, objects=objects)
    in_order = [p.uid for p in declared_pods(loaded.inputs, target, seed)]
    declared = set(in_order)
    template, replica, label = replica_factory(loaded.inputs, target, seed=seed)
    planner = open_planner(loaded, scheduler_config, seed=seed, tie_break=tie_break, kube_version=kube_version, feature_gates=feature_gates)
    # --hpa: every autoscaler's target (the counted workload's too) at the bound, then the count
    scaled, notes = autoscaling(loaded, hpa, seed=seed)
    inputs = planner.changed(scaled)[0] if scaled else None
    if inputs is not None:  # the counted workload's own replicas, as its autoscaler left them
        in_order = [p.uid for p in declared_pods(inputs, target, seed)]
        declared = set(in_order)
    karpenter = attach_autoscaler(planner, catalog, seed=seed)
    print_warnings(planner.warnings + notes, quiet)

    helped = None
    with run_progress(not quiet) as planner.progress:
        if karpenter is not None:
            from kplan.whatif.autoscale import autoscaled_capacity

            def autoscaled_run(changed: Any, stage: str) -> Any:
                run = planner.simulate(changed, stage=stage)
                return run.result, run.autoscaling

            helped = autoscaled_capacity(inputs if inputs is not None else planner.inputs, replica, limit,
                                         autoscaled_run)
            out = helped.outcome
        else:
            out = planner.capacity(replica, limit, ordered_after=in_order if ordered_ready(target) else (),
                                   inputs=inputs)
    assert out.result is not None
    fit = sum(1 for o in out.result.pods if o.pod.uid in declared and o.status == PodStatus.SCHEDULED)
    doc = capacity_document(template, label, out, limit, declared=len(declared), declared_fit=fit)
    if helped is not None and helped.autoscaling is not None:
        from dataclasses import replace as with_fields

        from kplan.report.document import autoscaling_summary, launched_nodes

        doc = with_fields(doc, autoscaling=autoscaling_summary(helped.autoscaling),
                          launched=launched_nodes(out.result, helped.autoscaling), autoscaler=helped.reason)
    if scaled:
        from dataclasses import replace

        from kplan.report.document import autoscaled_docs

        doc = replace(doc, autoscaled=autoscaled_docs(scaled))
    doc = with_release(doc, planner.setup.release)
    deliver(render(doc, output, result_options(output_file, run=run_info(
        cluster=cluster, manifests=[*(manifests or []), *filename], context=context,
        scheduler_config=scheduler_config, seed=seed, tie_break=tie_break.value,
        release=planner.setup.release))), output_file, quiet)
    # as simulate fails on a pending pod that does not run: a declared replica that does not fit
    # fails the check, and so does an answer of no replica at all
    if fit < len(declared) or out.replicas + fit == 0:
        raise typer.Exit(1)
