"""``kplan whatif``: simulate before and after a change to the cluster, and print the difference."""

from __future__ import annotations

import sys
import time
from typing import Any

import typer

from kplan.cli import change_options as chg
from kplan.cli import options as opt
from kplan.cli.change_options import (
    MAX_ADDED_NODES,
    build_changes,
    check_node_names,
    looks_like_a_node_name,
    parse_like,
    parse_prices,
    read_nodes,
)
from kplan.cli.workspace import load_inputs, open_planner
from kplan.report.check import FailOn

HELP = opt.help_text("""Simulate before and after a change to the cluster and show what differs.

Both runs use the same seed. Reported: pods that change node, become schedulable or
unschedulable, evicted pods and where they go, per-node and per-zone utilisation, and a summary.
Changes are applied to the parsed inputs, never to files, in this order: added nodes, scaled
workloads, cordons, drains, removals. With --until-fit, the smallest number of nodes like a
template that places as many pending pods as any number does is searched (exponential, then
binary search over whole simulations, stopping once more nodes place no more pods); the pods
that never fit on such a node are named with the filter that rejects them. With --shrink, the
nodes that can go with every pod still placed, as cluster-autoscaler's scale-down finds them.

Exit codes: 0 the check passed after the change, 1 it failed (see --fail-on: by default, a pending pod does not run after the change), 2 bad input or usage, 3 cluster unreachable or unreadable.""")


#: the headings of whatif's own options in its help (the shared ones: kplan.cli.options)
UNTIL_FIT = "Finding the nodes to add (--until-fit)"
SHRINK = "Finding the nodes to remove (--shrink, as cluster-autoscaler's scale-down)"


def until_fit_template(value: str) -> Any:
    from kplan.errors import InputError

    if value.startswith("like="):
        name, count = parse_like(value, "--until-fit")
        if count != 1:
            raise InputError(f"--until-fit {value}: the template takes no count (the search finds it)")
        return name
    nodes = read_nodes(value, "--until-fit")
    if len(nodes) != 1:
        raise InputError(f"{value}: --until-fit expects exactly one Node, found {len(nodes)}")
    return nodes[0]


def parse_bool(value: str, option: str) -> bool:
    """cluster-autoscaler's boolean flags take true or false (``--skip-nodes-with-system-pods=false``)."""
    from kplan.errors import InputError

    v = value.strip().lower()
    if v in ("true", "1", "t"):
        return True
    if v in ("false", "0", "f"):
        return False
    raise InputError(f"{option} {value}: expected true or false")


class ShrinkRequest:
    """--shrink's options, checked before loading; ``resolve`` turns the candidates into node names."""

    def __init__(self, candidates: str | None, opts: Any) -> None:
        self.candidates = candidates
        self.opts = opts

    def resolve(self, nodes: Any) -> Any:
        import dataclasses

        from kplan.errors import InputError
        from kplan.model.selector_syntax import SelectorSyntaxError, parse_selector
        from kplan.model.selectors import selector_matches

        text = (self.candidates or "").strip()
        if not text:
            return self.opts
        if any(c in text for c in "=!() ") or "," not in text and not any(n.name == text for n in nodes):
            try:
                sel = parse_selector(text)
            except SelectorSyntaxError as e:
                raise InputError(f"--shrink-candidates {text}: {e}") from None
            names = [n.name for n in nodes if selector_matches(sel, n.labels)]
        else:
            names = [n.strip() for n in text.split(",") if n.strip()]
        return dataclasses.replace(self.opts, candidates=tuple(names))


def shrink_settings(shrink: bool, until_fit: list[str], candidates: str | None, threshold: float,
                    gpu_threshold: float, system_pods: str, local_storage: str, custom_controller: str,
                    ignore_daemonsets: str, ignore_mirror: str, price: list[str]) -> tuple[ShrinkRequest, Any] | None:
    from kplan.errors import InputError

    if not shrink:
        if candidates is not None or price:
            raise InputError(f"{'--shrink-candidates' if candidates is not None else '--price'} goes with --shrink")
        return None
    if until_fit:
        raise InputError("--shrink and --until-fit ask opposite questions: give one of them")
    from kplan.whatif.shrink import ShrinkOptions

    opts = ShrinkOptions(
        scale_down_utilization_threshold=threshold, scale_down_gpu_utilization_threshold=gpu_threshold,
        skip_nodes_with_system_pods=parse_bool(system_pods, "--skip-nodes-with-system-pods"),
        skip_nodes_with_local_storage=parse_bool(local_storage, "--skip-nodes-with-local-storage"),
        skip_nodes_with_custom_controller_pods=parse_bool(custom_controller, "--skip-nodes-with-custom-controller-pods"),
        ignore_daemonsets_utilization=parse_bool(ignore_daemonsets, "--ignore-daemonsets-utilization"),
        ignore_mirror_pods_utilization=parse_bool(ignore_mirror, "--ignore-mirror-pods-utilization"))
    return ShrinkRequest(candidates, opts), parse_prices(price)


def whatif(
    ctx: typer.Context,
    manifests: list[str] | None = opt.manifests_argument(opt.PENDING_MANIFESTS_HELP),
    filename: list[str] = opt.filename_option(),
    cluster: list[str] = opt.cluster_option(),
    kubeconfig: str | None = opt.kubeconfig_option(),
    context: str | None = opt.context_option(),
    namespace: str | None = opt.namespace_option(),
    all_namespaces: bool = opt.all_namespaces_option(),
    keep_existing: bool = opt.keep_existing_option(),
    add_node: list[str] = chg.add_node_option(),
    remove_node: list[str] = chg.remove_node_option(),
    cordon: list[str] = chg.cordon_option(),
    drain: list[str] = chg.drain_option(),
    scale: list[str] = chg.scale_option(),
    hpa: str | None = opt.hpa_option(opt.HPA_HELP + " Applied to the run after, with the scaled workloads."),
    scheduler_config: str | None = opt.scheduler_config_option("A KubeSchedulerConfiguration file for the 'after' run."),
    kube_version: str | None = opt.kube_version_option(),
    feature_gates: str = opt.feature_gates_option(),
    base_scheduler_config: str | None = opt.scheduler_config_option(
        "A KubeSchedulerConfiguration file for the 'before' run (and the 'after' run unless --scheduler-config is "
        "given).", flag="--base-scheduler-config"),
    until_fit: list[str] = typer.Option(
        [], "--until-fit", metavar="FILE|like=NODE", help="Find the smallest number of nodes like TEMPLATE (a Node file, or like=NODE) that "
        "places as many pending pods as any number does, on top of the other changes, and name the pods that never "
        "fit on such a node and why. Repeatable: one answer per template (the run shown after is the first's).", rich_help_panel=UNTIL_FIT),
    until_fit_limit: int = typer.Option(1024, "--until-fit-limit", min=1, metavar="N", max=MAX_ADDED_NODES,
                                        help="The most template nodes --until-fit tries.", rich_help_panel=UNTIL_FIT),
    shrink: bool = typer.Option(
        False, "--shrink", help="Find which nodes can be removed with every running pod rescheduled and every pending "
        "pod placed, as cluster-autoscaler's scale-down decides (on top of the other changes).", rich_help_panel=SHRINK),
    shrink_candidates: str | None = typer.Option(
        None, "--shrink-candidates", metavar="SELECTOR|NODE,…", help="The nodes --shrink considers: a label selector "
        "(kubectl -l syntax) or node names separated by commas (default: every node).", rich_help_panel=SHRINK),
    scale_down_utilization_threshold: float = typer.Option(
        0.5, "--scale-down-utilization-threshold", min=0.0, max=1.0, metavar="RATIO",
        help="--shrink: a node is a candidate while the larger of its cpu and memory requests over allocatable is "
        "below this (cluster-autoscaler's flag).", rich_help_panel=SHRINK),
    scale_down_gpu_utilization_threshold: float = typer.Option(
        0.5, "--scale-down-gpu-utilization-threshold", min=0.0, max=1.0, metavar="RATIO",
        help="--shrink: the same for nodes with GPUs, on their GPU requests (cluster-autoscaler's flag).", rich_help_panel=SHRINK),
    skip_nodes_with_system_pods: str = typer.Option(
        "true", "--skip-nodes-with-system-pods", metavar="true|false",
        help="--shrink: a kube-system pod no PodDisruptionBudget selects keeps its node (cluster-autoscaler's flag).", rich_help_panel=SHRINK),
    skip_nodes_with_local_storage: str = typer.Option(
        "true", "--skip-nodes-with-local-storage", metavar="true|false",
        help="--shrink: a pod with a hostPath or emptyDir volume keeps its node (cluster-autoscaler's flag).", rich_help_panel=SHRINK),
    skip_nodes_with_custom_controller_pods: str = typer.Option(
        "true", "--skip-nodes-with-custom-controller-pods", metavar="true|false",
        help="--shrink: a pod whose controller is not a ReplicationController, Job, ReplicaSet or StatefulSet keeps "
        "its node, as a pod without controller always does (cluster-autoscaler's flag).", rich_help_panel=SHRINK),
    ignore_daemonsets_utilization: str = typer.Option(
        "false", "--ignore-daemonsets-utilization", metavar="true|false",
        help="--shrink: leave DaemonSet pods out of a node's utilisation (cluster-autoscaler's flag).", rich_help_panel=SHRINK),
    ignore_mirror_pods_utilization: str = typer.Option(
        "false", "--ignore-mirror-pods-utilization", metavar="true|false",
        help="--shrink: leave mirror (static) pods out of a node's utilisation (cluster-autoscaler's flag).", rich_help_panel=SHRINK),
    price: list[str] = chg.price_option(
        "--shrink: the price of NODE and of every node of its instance type (node.kubernetes.io/instance-type) per "
        "hour, any unit: the answer gives the cost before and after. Repeatable.", panel=SHRINK),
    seed: int = opt.seed_option(),
    tie_break: opt.TieBreak = opt.tie_break_option(),
    autoscaler: str | None = opt.autoscaler_option(),
    instance_types: str | None = opt.instance_types_option(),
    node_groups: str | None = opt.node_groups_option(),
    expander: str = opt.expander_option(),
    max_nodes_total: int = opt.max_nodes_total_option(),
    balance_similar_node_groups: bool = opt.balance_similar_node_groups_option(),
    output: str = opt.output_option("WhatIfResult", "Output format: table, json, yaml, name (pod/NAME for each pod "
                                "the change affects), jsonpath=TEMPLATE (kubectl's JSONPath over the JSON document), "
                                "junit (JUnit XML of the run after the change), github (GitHub Actions annotations), markdown (a summary for pull requests) "
                                "or html (a self-contained page with charts)."),
    fail_on: FailOn = opt.fail_on_option(opt.FAIL_ON_HELP + " Judged after the change.", change=True),
    show_all: bool = typer.Option(False, "--all", help="List every changed pod and node in the table output "
                                  "(default: up to 20 of each kind; JSON and YAML always list all).", rich_help_panel=opt.OUTPUT),
    verbose: bool = opt.verbose_option("Print load and simulation times on stderr."),
    output_file: str | None = opt.output_file_option(),
    quiet: bool = opt.quiet_option(),
    no_color: bool = opt.no_color_option(),
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.output import check_destination, deliver, result_options, run_info, with_release
    from kplan.cli.progress import run_progress
    from kplan.cli.render import check_format, render
    from kplan.cli.terminal import is_quiet
    from kplan.cli.workspace import attach_autoscaler, autoscaling, check_autoscaler
    from kplan.errors import InputError
    from kplan.io.hpa import parse_bound
    from kplan.io.scale import parse_scale, resolve_scale
    from kplan.io.scheduler_config import scheduler_setup
    from kplan.report.check import failed
    from kplan.report.whatif import whatif_document

    t0 = time.perf_counter()
    quiet = is_quiet(ctx, quiet, verbose)
    check_format("WhatIfResult", output)
    check_destination(output, output_file)
    for v in scale:
        parse_scale(v)  # a malformed option fails before any loading
    if hpa is not None:
        parse_bound(hpa)
    unread: list[tuple[str, str]] = []
    added, node_changes = build_changes(add_node, remove_node, cordon, drain, unread)
    settings = shrink_settings(shrink, until_fit, shrink_candidates, scale_down_utilization_threshold,
                               scale_down_gpu_utilization_threshold, skip_nodes_with_system_pods,
                               skip_nodes_with_local_storage, skip_nodes_with_custom_controller_pods,
                               ignore_daemonsets_utilization, ignore_mirror_pods_utilization, price)
    for v in until_fit:
        if not v.startswith("like=") and looks_like_a_node_name(v):
            unread.append(("--until-fit", v))
    templates = [until_fit_template(v) for v in until_fit] if not unread else []
    if autoscaler is not None and until_fit:
        raise InputError("--autoscaler and --until-fit ask the same question: the autoscaler finds the nodes itself")
    if autoscaler == "karpenter" and shrink and (shrink_candidates is not None or price):
        # --shrink with Karpenter is Karpenter's consolidation: its NodePools say which nodes it may
        # disrupt, the catalog what they cost
        raise InputError(f"{'--shrink-candidates' if shrink_candidates is not None else '--price'} is for "
                         "cluster-autoscaler's --shrink; with --autoscaler karpenter the NodePools and the "
                         "--instance-types catalog decide")
    catalog = check_autoscaler(autoscaler, instance_types, node_groups, expander, max_nodes_total,
                               balance_similar_node_groups)
    loaded = load_inputs(cluster, [*(manifests or []), *filename], kubeconfig=kubeconfig, context=context, namespace=namespace,
                         keep_existing=keep_existing, seed=seed, progress=not quiet)
    check_node_names(unread, loaded.inputs)
    planner = open_planner(loaded, base_scheduler_config, seed=seed, tie_break=tie_break, kube_version=kube_version,
                           feature_gates=feature_gates, verbose=verbose)
    karpenter = attach_autoscaler(planner, catalog, seed=seed, attach=not shrink)
    scaled = [resolve_scale(loaded.inputs, loaded.workloads, v, seed=seed) for v in scale]
    autoscaled, notes = autoscaling(loaded, hpa, seed=seed, scaled=[c.label for c in scaled])
    changes = added + scaled + autoscaled + node_changes
    after = scheduler_setup(scheduler_config, planner.setup.release) if scheduler_config else None
    print_warnings(planner.warnings + notes, quiet)
    t1 = time.perf_counter()
    shrunk = consolidated = None
    with run_progress(not quiet) as planner.progress:
        if settings is not None and karpenter is not None and autoscaler == "karpenter":
            import os

            from kplan.whatif.consolidate import karpenter_consolidation

            # Karpenter's consolidateAfter and budget schedules read the time: now (the engine reads
            # no clock), or SOURCE_DATE_EPOCH for reproducible answers
            epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
            now = float(epoch) if epoch.isdigit() else time.time()
            result, consolidated = karpenter_consolidation(planner, karpenter, changes, now)
        elif settings is not None:
            from kplan.whatif.shrink import whatif_shrink

            opts = settings[0].resolve(loaded.inputs.nodes)
            if karpenter is not None:  # the cluster-autoscaler's scale-down honours each group's minSize
                from kplan.whatif.autoscale import node_groups_for_shrink

                opts = node_groups_for_shrink(opts, catalog, loaded.inputs.nodes)
            result, shrunk = whatif_shrink(planner, changes, opts, settings[1], karpenter)
        else:
            result = planner.whatif(changes, after=after, until_fit=templates, limit=until_fit_limit)
    t2 = time.perf_counter()
    doc = whatif_document(result, shrink=shrunk, consolidation=consolidated)
    doc = with_release(doc, planner.setup.release)
    deliver(render(doc, output, result_options(output_file, fail_on=fail_on, full=show_all, run=run_info(
        cluster=cluster, manifests=[*(manifests or []), *filename], context=context,
        scheduler_config=scheduler_config, seed=seed, tie_break=tie_break.value,
        release=planner.setup.release))), output_file, quiet)
    if verbose:
        print(f"loaded in {t1 - t0:.3f} s, simulated in {t2 - t1:.3f} s", file=sys.stderr)
    if failed(doc, fail_on):
        raise typer.Exit(1)
