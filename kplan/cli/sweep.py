"""``kplan sweep``: many what-ifs at once over a grid of changes, with fit probability and cost."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

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
from kplan.cli.render.units import plural
from kplan.errors import InputError

if TYPE_CHECKING:
    from kplan.io.workspace import Workspace
    from kplan.whatif.plan import Planner
    from kplan.whatif.sweep import Axis, Step, SweepPlan

HELP = opt.help_text("""Simulate a grid of changes at once, each point with several seeds, and find the cheapest
point in which every pending pod fits.

Axes (each repeatable; the grid is their product): --add-node like=NODE:FROM..TO[:STEP] (or a
Node file FILE:FROM..TO[:STEP]) and --scale KIND/[NAMESPACE/]NAME=FROM..TO[:STEP]; --hpa
BOUND,... (every HorizontalPodAutoscaler's target at max, min, current or none) and
--kube-version RELEASE,... (each point modelled at its release: does it still fit after the
upgrade?) are axes of the values listed. --cordon,
--drain, --remove-node and --add-node FILE apply to every point. Each point with seed S is
exactly the run after the change of 'kplan whatif' with --seed S; --seeds N runs the seeds
--seed … --seed+N-1, and a point's fit probability is the share of them in which every pending
pod (gated ones aside) is scheduled. With --price like=NODE=PRICE the cheapest fitting points
are named. Runs on local worker processes (one per core), or on a Dask cluster with --dask.

Exit codes: 0 some point fits with probability at least --confidence, 1 none does, 2 bad input or usage, 3 the cluster (or the Dask scheduler) unreachable or unreadable.""")

#: the headings of sweep's own options in its help (the shared ones: kplan.cli.options)
FIT = "Fit and cost"
WORKERS = "Workers"

FILE_RANGE = re.compile(r"^(?P<path>.+):(?P<range>[0-9]+\.\.[0-9]+(?::[0-9]+)?)$")


def parse_words(value: str | None, option: str) -> tuple[str, ...]:
    """``a,b,c`` → ("a", "b", "c"): the values of an axis of words, each once, in the order given."""
    if value is None:
        return ()
    words = tuple(dict.fromkeys(w.strip() for w in value.split(",")))
    if not all(words):
        raise InputError(f"{option} {value}: give values separated by commas, e.g. {option} "
                         f"{'max,min' if option == '--hpa' else '1.34,1.37'}")
    return words


def parse_plan(add_node: Sequence[str], scale: Sequence[str], cordon: Sequence[str], drain: Sequence[str],
               remove_node: Sequence[str], prices: dict[str, Decimal], hpa: str | None = None,
               kube_versions: Sequence[str] = ()) -> tuple[SweepPlan, list[str]]:
    """The axes and the ordered steps of every point, and the fixed changes in words.
    ``kube_versions``: the releases of --kube-version (an axis when there are several)."""
    from kplan.io.hpa import parse_bound
    from kplan.io.scale import parse_scale
    from kplan.whatif.changes import AddNodes
    from kplan.whatif.sweep import (
        AxisStep,
        Fixed,
        HpaAxis,
        NodeAxis,
        ReleaseAxis,
        ScaleAxis,
        SweepPlan,
        parse_range,
    )

    axes: list[Axis] = []
    steps: list[Step] = []
    for v in add_node:
        m = FILE_RANGE.match(v)
        if v.startswith("like="):
            name, sep, rest = v[len("like="):].partition(":")
            if sep and ".." in rest:
                if not name:
                    raise InputError(f"--add-node {v}: give like=NODE:FROM..TO[:STEP]")
                values = parse_range(rest, f"--add-node {v}")
            else:
                name, count = parse_like(v, "--add-node")
                values = (count,)
            steps.append(AxisStep(len(axes)))
            axes.append(NodeAxis(name, values, prices.pop(name, None)))
        elif m is not None:
            nodes = read_nodes(m["path"], "--add-node")
            if len(nodes) != 1:
                raise InputError(f"{m['path']}: --add-node FILE:FROM..TO expects exactly one Node (the template), "
                                 f"found {len(nodes)}")
            steps.append(AxisStep(len(axes)))
            axes.append(NodeAxis(nodes[0], parse_range(m["range"], f"--add-node {v}"),
                                 prices.pop(nodes[0].name, None)))
        else:
            steps.append(Fixed(AddNodes(tuple(read_nodes(v, "--add-node")))))
    for v in scale:
        target, sep, rng = v.rpartition("=")
        if not sep:
            raise InputError(f"--scale {v}: expected KIND/[NAMESPACE/]NAME=FROM..TO[:STEP], e.g. deployment/web=3..30")
        values = parse_range(rng, f"--scale {v}")
        parse_scale(f"{target}={values[-1]}")  # kind, name and count are checked before any loading
        steps.append(AxisStep(len(axes)))
        axes.append(ScaleAxis(target, values))
    bounds = parse_words(hpa, "--hpa")
    if bounds:  # the autoscalers scale with the workloads, as whatif orders its changes
        steps.append(AxisStep(len(axes)))
        axes.append(HpaAxis(tuple(parse_bound(b) for b in bounds)))
    if len(kube_versions) > 1:
        axes.append(ReleaseAxis(tuple(kube_versions)))  # no change of its own: the point's scheduler
    _, tail = build_changes([], list(remove_node), list(cordon), list(drain))
    steps += [Fixed(c) for c in tail]
    if prices:
        raise InputError(f"--price like={next(iter(prices))}=…: no --add-node axis adds nodes like "
                         f"{next(iter(prices))}")
    node_axes = [a for a in axes if isinstance(a, NodeAxis)]
    unpriced = [a.template_name for a in node_axes if a.price is None]
    if unpriced and len(unpriced) < len(node_axes):
        raise InputError(f"--price: nodes like {unpriced[0]} have no price; give --price for every node type the "
                         "axes add, or none")
    for a in axes:
        if isinstance(a, NodeAxis) and max(a.values) > MAX_ADDED_NODES:
            raise InputError(f"--add-node like={a.template_name}: at most {MAX_ADDED_NODES} nodes (Kubernetes "
                             f"supports clusters of up to {MAX_ADDED_NODES} nodes), the range asks for "
                             f"{max(a.values)}")
    plan = SweepPlan(tuple(axes), tuple(steps))
    from kplan.whatif.sweep import MAX_POINTS

    if plan.size() > MAX_POINTS:
        raise InputError(f"the grid has {plan.size():,} points, more than {MAX_POINTS:,}: narrow the ranges or "
                         "give them a :STEP")
    fixed = [s.change.describe() for s in plan.steps if isinstance(s, Fixed)]
    return plan, fixed


def node_file(value: str) -> str:
    """The file of an --add-node value: FILE of FILE:FROM..TO, else the value."""
    m = FILE_RANGE.match(value)
    return m["path"] if m is not None else value


def parse_confidence(value: float) -> Fraction:
    if not 0 <= value <= 1:
        raise InputError(f"--confidence {value}: give a share between 0 and 1")
    return Fraction(repr(value))  # 0.9 means nine in ten, not the binary float just above it


def load_per_seed(cluster: Sequence[str], manifests: Sequence[str], seeds: Sequence[int], *,
                  kubeconfig: str | None, context: str | None, namespace: str | None, keep_existing: bool,
                  progress: bool) -> tuple[list[Workspace], dict[int, int]]:
    """The inputs as ``kplan whatif --seed S`` loads them, for every seed S (the seed names the pods
    the controllers generate); loads that come out identical are kept once."""
    import hashlib
    import pickle

    from kplan.cli.workspace import load_inputs

    loads: list[Workspace] = []
    digests: dict[bytes, int] = {}
    index: dict[int, int] = {}
    for s in seeds:
        loaded = load_inputs(cluster, manifests, kubeconfig=kubeconfig, context=context, namespace=namespace,
                             keep_existing=keep_existing, seed=s, progress=progress)
        digest = hashlib.sha256(pickle.dumps((loaded.inputs, loaded.workloads))).digest()
        if digest not in digests:
            digests[digest] = len(loads)
            loads.append(loaded)
        index[s] = digests[digest]
        progress = False  # a live cluster is read once per seed: one progress display is enough
    return loads, index


def resolve_labels(plan: SweepPlan, loaded: Workspace, planner: Planner, seed: int) -> tuple[SweepPlan, list[str]]:
    """Checks the grid's changes against the inputs, once, before any worker starts (an unknown
    node or workload is a one-line error here, not a failed task), names the scaled workloads and
    resolves the autoscalers' targets at each bound of an --hpa axis (with the warnings about
    those that scale nothing, each once).

    The largest point is resolved: its scale values create the most pods, and no smaller value can
    fail where it does not (the workload, its template and the node names are the same for all).
    Each bound of the autoscalers is resolved as well."""
    import dataclasses

    from kplan.io.hpa import hpa_targets
    from kplan.io.scale import resolve_scale
    from kplan.whatif.changes import ScaleWorkload
    from kplan.whatif.sweep import HpaAxis, ScaleAxis

    labels: dict[str, str] = {}

    def resolve(spec: str) -> ScaleWorkload:
        change = resolve_scale(loaded.inputs, loaded.workloads, spec, seed=seed)
        labels.setdefault(spec.rpartition("=")[0], change.label)
        return change

    largest = tuple(max(a.values) for a in plan.axes)
    planner.changed(plan.changes(largest, resolve))
    axes = [dataclasses.replace(a, workload=labels[a.target]) if isinstance(a, ScaleAxis) else a for a in plan.axes]
    notes: list[str] = []
    scaled = [a.workload for a in axes if isinstance(a, ScaleAxis)]
    for i, a in enumerate(axes):
        if isinstance(a, HpaAxis):
            per_bound = []
            for bound in a.words:
                targets, said = hpa_targets(loaded.inputs, loaded.workloads, bound, scaled)
                notes += [n for n in said if n not in notes]
                per_bound.append(tuple((t.spec, t.by) for t in targets))
            axes[i] = dataclasses.replace(a, targets=tuple(per_bound))
    plan = dataclasses.replace(plan, axes=tuple(axes))
    for i, a in enumerate(plan.axes):  # every bound's changes resolve (the largest point had one)
        if isinstance(a, HpaAxis):
            for v in a.values:
                planner.changed(plan.changes(tuple(v if j == i else largest[j] for j in range(len(largest))),
                                             resolve))
    return plan, notes


class StderrProgress:
    """``sweep: 37/100 simulations, about 0:01:20 left`` on stderr, redrawn in place on a terminal
    and cleared at the end (or when the sweep is interrupted, so that nothing is left half-drawn);
    before the first simulation, what the sweep is doing (``sweep: starting 2 workers…``), so that
    a start of many seconds on a loaded machine is not silence; nothing elsewhere."""

    def __init__(self, stream: Any = None, clock: Any = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.last = -1.0
        #: when the first simulation was handed out: the time left is estimated from there
        self.began: float | None = None
        self.drawn = False

    def _draw(self, text: str) -> None:
        self.stream.write(f"\r\x1b[2K{text}")
        self.stream.flush()
        self.drawn = True

    def stage(self, what: str) -> None:
        self._draw(f"sweep: {what}…")

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self.began is None:
            self.began = now
        if done >= total:
            self.clear()  # cleared when done, as simulate's progress bar is: the result follows on stdout
            return
        if 0 < done and now - self.last < 0.2:
            return
        self.last = now
        left = ""
        if done > 0 and now > self.began:
            seconds = round((now - self.began) * (total - done) / done)
            left = f", about {seconds // 3600}:{seconds // 60 % 60:02}:{seconds % 60:02} left"
        self._draw(f"sweep: {done}/{plural(total, 'simulation')}{left}")

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.drawn = False


def sweep(
    ctx: typer.Context,
    manifests: list[str] | None = opt.manifests_argument(opt.PENDING_MANIFESTS_HELP),
    filename: list[str] = opt.filename_option(),
    cluster: list[str] = opt.cluster_option(),
    kubeconfig: str | None = opt.kubeconfig_option(),
    context: str | None = opt.context_option(),
    namespace: str | None = opt.namespace_option(),
    all_namespaces: bool = opt.all_namespaces_option(),
    keep_existing: bool = opt.keep_existing_option(),
    add_node: list[str] = chg.add_node_option(
        "An axis of added nodes: like=NODE:FROM..TO[:STEP] (empty copies of NODE) or FILE:FROM..TO[:STEP] (copies "
        "of the one Node in FILE); like=NODE[:COUNT] is an axis of one value; a FILE alone adds its nodes to every "
        "point. Repeatable.", metavar="like=NODE:FROM..TO"),
    scale: list[str] = chg.scale_option(
        "An axis of replica counts: KIND/[NAMESPACE/]NAME=FROM..TO[:STEP] (Deployment, ReplicaSet, StatefulSet, "
        "ReplicationController, Job), or =N for one value. Repeatable.", metavar="KIND/NAME=FROM..TO"),
    cordon: list[str] = chg.cordon_option("Cordon a node in every point. Repeatable."),
    drain: list[str] = chg.drain_option("Drain a node in every point, as kplan whatif --drain. Repeatable."),
    remove_node: list[str] = chg.remove_node_option("Remove a node in every point, as kplan whatif --remove-node. "
                                                    "Repeatable."),
    hpa: str | None = opt.hpa_option(
        "An axis of the bound every HorizontalPodAutoscaler scales its target to: BOUND[,BOUND...] of max, min, "
        "current (status.currentReplicas) and none (the declared replicas), e.g. none,max. --scale of the same "
        "workload wins.", metavar="BOUND,..."),
    scheduler_config: str | None = opt.scheduler_config_option(),
    kube_version: str | None = opt.kube_version_option(
        opt.KUBE_VERSION_HELP + " Several, separated by commas (1.34,1.37), make an axis: each point is modelled "
        "at each release.", metavar="VERSION[,VERSION...]"),
    feature_gates: str = opt.feature_gates_option(),
    seed: int = opt.seed_option(),
    seeds: int = typer.Option(1, "--seeds", min=1, metavar="N", help="Simulate every point with this many seeds: --seed, "
                              "--seed+1, …", rich_help_panel=FIT),
    tie_break: opt.TieBreak = opt.tie_break_option(),
    autoscaler: str | None = opt.autoscaler_option(),
    instance_types: str | None = opt.instance_types_option(),
    node_groups: str | None = opt.node_groups_option(),
    expander: str = opt.expander_option(),
    max_nodes_total: int = opt.max_nodes_total_option(),
    balance_similar_node_groups: bool = opt.balance_similar_node_groups_option(),
    price: list[str] = chg.price_option(
        "like=NODE=PRICE: the price of one node like NODE per hour (any unit); the cost of a point is the price of "
        "the nodes its axes add. Repeatable.", panel=FIT),
    confidence: float = typer.Option(1.0, "--confidence", metavar="SHARE", help="The fit probability a point needs to count as "
                                     "fitting (0 to 1).", rich_help_panel=FIT),
    dask: str | None = typer.Option(
        None, "--dask", metavar="ADDRESS", help="Run on the Dask cluster whose scheduler is at ADDRESS (e.g. tcp://10.0.0.5:8786); "
        "its workers need the same kplan. Default: worker processes on this machine.", rich_help_panel=WORKERS),
    workers: int | None = typer.Option(None, "--workers", min=1, metavar="N", help="Local worker processes (default: one per "
                                       "core). Ignored with --dask.", rich_help_panel=WORKERS),
    output: str = opt.output_option("SweepResult", "Output format: table, json, yaml, "
                                "jsonpath=TEMPLATE (kubectl's JSONPath over the JSON document), markdown or html (a "
                                "self-contained page with the curves)."),
    verbose: bool = opt.verbose_option("Print load and run times on stderr."),
    output_file: str | None = opt.output_file_option(),
    quiet: bool = opt.quiet_option(),
    no_color: bool = opt.no_color_option(),
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.output import check_destination, deliver, result_options, run_info, with_release
    from kplan.cli.render import check_format, render
    from kplan.cli.terminal import is_quiet
    from kplan.cli.workspace import load_inputs
    from kplan.io.sweep import SweepInputs
    from kplan.report.sweep import sweep_document
    from kplan.whatif.sweep import point_results

    t0 = time.perf_counter()
    quiet = is_quiet(ctx, quiet, verbose)
    check_format("SweepResult", output)
    check_destination(output, output_file)
    prices = parse_prices(price)
    from kplan.cli.workspace import check_autoscaler

    catalog = check_autoscaler(autoscaler, instance_types, node_groups, expander, max_nodes_total,
                               balance_similar_node_groups)
    unread = [("--add-node", v) for v in add_node if not v.startswith("like=") and looks_like_a_node_name(node_file(v))]
    if unread:  # --add-node gen-c-3[:1..4] where like= was meant: the hint needs the cluster's node names
        check_node_names(unread, load_inputs(cluster, [*(manifests or []), *filename], kubeconfig=kubeconfig,
                                             context=context, namespace=namespace, keep_existing=keep_existing,
                                             seed=seed, progress=not quiet).inputs)
    releases = parse_words(kube_version, "--kube-version")
    plan, fixed = parse_plan(add_node, scale, cordon, drain, remove_node, prices, hpa, releases)
    bar = parse_confidence(confidence)
    seed_list = [seed + i for i in range(seeds)]
    loads, load_of = load_per_seed(cluster, [*(manifests or []), *filename], seed_list, kubeconfig=kubeconfig, context=context,
                                   namespace=namespace, keep_existing=keep_existing, progress=not quiet)
    from kplan.cli.workspace import open_planner, release_setups

    planner = open_planner(loads[0], scheduler_config, seed=seed, tie_break=tie_break,
                           kube_version=releases[0] if releases else None, feature_gates=feature_gates, verbose=verbose)
    # the other releases of a --kube-version axis: each its scheduler set-up (the first's is the planner's)
    setups = [planner.setup, *release_setups(scheduler_config, releases[1:], feature_gates, verbose=verbose)]
    plan, notes = resolve_labels(plan, loads[0], planner, seed)
    print_warnings(planner.warnings + notes, quiet)
    lowest = tie_break == opt.TieBreak.lowest_name
    from kplan.whatif.autoscale import ClusterAutoscalerSettings

    if isinstance(catalog, ClusterAutoscalerSettings):  # the templates' nodes and types, checked once
        from kplan.whatif.autoscale import node_group_template

        nodes = {n.name: n for n in loads[0].inputs.nodes}
        for g in catalog.node_groups:
            node_group_template(g, nodes, catalog.catalog)
        from kplan.io.nodegroups import with_configmaps

        catalog = with_configmaps(catalog, loads[0].inputs.other.get("ConfigMap", []))
    elif catalog is not None:
        from kplan.whatif.autoscale import check_node_pools

        check_node_pools(loads[0].inputs)
    contexts = [SweepInputs(ld.inputs, ld.workloads, tuple(setups), lowest, plan, catalog) for ld in loads]
    points = plan.points()
    t1 = time.perf_counter()

    from kplan.cli.dask_runner import local_workers, run_sweep

    show = StderrProgress() if not quiet and sys.stderr.isatty() else None
    n = workers or local_workers()
    if show is not None:
        show.stage(f"connecting to the Dask scheduler at {dask}" if dask else f"starting {plural(n, 'worker')}")
    try:
        summaries, n_workers, setup = run_sweep(contexts, plan.chains(), points, seed_list, load_of, address=dask,
                                                workers=n, progress=show)
    finally:
        if show is not None:
            show.clear()  # an interrupted or failed sweep leaves no half-drawn line before its message
    t2 = time.perf_counter()
    runs = [[summaries[i, s] for s in seed_list] for i in range(len(points))]
    results = point_results(plan, runs)
    doc = sweep_document(plan, fixed, seed_list, tie_break.value, bar, results)
    doc = with_release(doc, planner.setup.release)
    deliver(render(doc, output, result_options(output_file, run=run_info(
        cluster=cluster, manifests=[*(manifests or []), *filename], context=context,
        scheduler_config=scheduler_config, seed=seed, tie_break=tie_break.value,
        release=planner.setup.release))), output_file, quiet)
    if verbose:
        simulations = len(points) * len(seed_list)
        print(f"loaded in {t1 - t0:.3f} s, {plural(simulations, 'simulation')} on {n_workers} worker"
              f"{'s' if n_workers != 1 else ''} in {t2 - t1:.3f} s ({setup:.3f} s of it starting the workers "
              "and sending them the inputs)", file=sys.stderr)
    if not doc.cheapest:
        raise typer.Exit(1)

