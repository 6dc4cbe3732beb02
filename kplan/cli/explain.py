"""``kplan explain pod``: why a pending pod lands where it does, or why it cannot, and what would help."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from kplan.cli import options as opt
from kplan.cli.workspace import load_inputs, open_planner

if TYPE_CHECKING:  # the engine loads only when a command runs
    from kplan.model.objects import Pod
    from kplan.report.explain import MoreNodesDoc
    from kplan.scenario import Inputs
    from kplan.whatif.plan import Planner

HELP = opt.help_text("""Explain why a pending pod lands where it does, or why it cannot, and what would help.

The pod is explained at its last attempt in a full simulation of all pending pods: its place in
the queue, every filter plugin's verdict on every node (the first failure as kube-scheduler
reports it, and every other plugin that would also reject the node), the scores of the feasible
nodes, the exact FitError and the preemption analysis, and for an unschedulable pod what would
make it fit (each change checked by re-running the scheduler).

Exit codes: 0 the pod is scheduled, 1 it is not, 2 bad input or usage, 3 cluster unreachable or unreadable.""")

app = typer.Typer(help="Explain scheduling decisions.", no_args_is_help=True, rich_markup_mode=None)
#: above this many pending pods the node search (whole simulations) only runs when asked for
AUTO_NODE_SEARCH_PODS = 1000


def find_pending(inputs: Inputs, name: str, namespace: str | None) -> Pod:
    """The pending pod NAME (or NS/NAME) of the inputs; a clear error otherwise."""
    import os

    from kplan.errors import InputError

    original = name
    if "/" in name:
        ns, _, name = name.partition("/")
        if namespace and namespace != ns:
            raise InputError(f"pod {ns}/{name}: the namespace in the name differs from -n {namespace}")
        namespace = ns
    hits = [p for p in inputs.pending if p.name == name and (namespace is None or p.namespace == namespace)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise InputError(f"pod {name}: ambiguous, pending in namespaces {', '.join(sorted(p.namespace for p in hits))}; "
                         "give -n NAMESPACE or NAMESPACE/NAME")
    running = [p for p in inputs.running if p.name == name and (namespace is None or p.namespace == namespace)]
    if running:
        p = running[0]
        raise InputError(f"pod {p.key} already runs on node {p.node_name}; explain looks at pending pods")
    where = f" in namespace {namespace}" if namespace else ""
    similar = sorted(p.key for p in inputs.pending if p.name.startswith(name + "-")
                     and (namespace is None or p.namespace == namespace))
    if similar:
        raise InputError(f"no pending pod named {name}{where}; pods of that name's workload: "
                         f"{', '.join(similar[:10])}{', …' if len(similar) > 10 else ''}")
    given = f"{namespace}/{name}" if namespace and f"{namespace}/{name}" == original else original
    if os.path.exists(given):
        # 'kplan explain pod fixtures/manifests …': the pod's name forgotten, the path taken for NS/NAME
        raise InputError(f"{given} is a file or folder, where the pod's name is expected: the name comes first "
                         f"(kplan explain pod NAME {given} …)")
    keys = sorted(p.key for p in inputs.pending)
    known = ", ".join(keys[:10]) + (", …" if len(keys) > 10 else "") if keys else "none"
    raise InputError(f"no pending pod named {name}{where} (pending pods: {known})")


#: kubectl's TYPE names (and short names) of the workload kinds, as ``explain TYPE/NAME`` takes them
WORKLOAD_TYPES = {
    "deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
    "statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet",
    "daemonset": "DaemonSet", "daemonsets": "DaemonSet", "ds": "DaemonSet",
    "replicaset": "ReplicaSet", "replicasets": "ReplicaSet", "rs": "ReplicaSet",
    "job": "Job", "jobs": "Job", "cronjob": "CronJob", "cronjobs": "CronJob", "cj": "CronJob",
    "replicationcontroller": "ReplicationController", "replicationcontrollers": "ReplicationController",
    "rc": "ReplicationController",
}


def workload_of(name: str) -> tuple[str, str] | None:
    """(kind, name) when ``name`` is kubectl's TYPE/NAME of a workload (deployment/web), else None."""
    kind, sep, rest = name.partition("/")
    if not sep or kind.lower() not in WORKLOAD_TYPES or not rest or "/" in rest:
        return None
    return WORKLOAD_TYPES[kind.lower()], rest


def belongs_to(pod: Pod, kind: str, name: str) -> bool:
    """Whether the workload ``kind name`` created ``pod``: its controller, or (a Deployment's, a
    CronJob's) the ReplicaSet or Job its controller creates, named after it."""
    ref = pod.controller()
    if ref is None:
        return False
    if (ref.kind, ref.name) == (kind, name):
        return True
    if kind == "Deployment" and ref.kind == "ReplicaSet":
        return ref.name == f"{name}-{pod.labels.get('pod-template-hash', '')}"
    if kind == "CronJob" and ref.kind == "Job":
        head, _, tail = ref.name.rpartition("-")
        return head == name and tail.isdigit()
    return False


def workload_pods(inputs: Inputs, kind: str, name: str, namespace: str | None) -> list[Pod]:
    """The pending pods of the workload, in the order they were created; a clear error if none."""
    from kplan.errors import InputError

    pods = [p for p in inputs.pending if belongs_to(p, kind, name) and (namespace is None or p.namespace == namespace)]
    namespaces = sorted({p.namespace for p in pods})
    if len(namespaces) > 1:
        raise InputError(f"{kind} {name}: ambiguous, pending pods in namespaces {', '.join(namespaces)}; give -n "
                         "NAMESPACE")
    if not pods:
        where = f" in namespace {namespace}" if namespace else ""
        raise InputError(f"{kind} {name}{where}: no pending pod of this workload (explain looks at the pods the "
                         "manifests' workloads create and the cluster's pending pods)")
    return pods


@app.command("pod", help=HELP)
def pod(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME", help="The pending pod: NAME or NAMESPACE/NAME; or a workload as "
                               "kubectl's TYPE/NAME (deployment/web, statefulset/db, …): its first pod that does not "
                               "run (kplan explain deployment/web works too)."),
    manifests: list[str] | None = opt.manifests_argument(
        "Manifest files or folders with pending pods or workloads (recursive *.yaml, *.yml, *.json); "
        "'-' reads stdin."),
    namespace: str | None = opt.namespace_option("The pod's namespace (default: wherever the name is unique), and the "
                                             "namespace of the manifests' objects that name none."),
    all_namespaces: bool = opt.all_namespaces_option(
        "Look for the pod in every namespace, as kubectl's -A (the default without -n)."),
    filename: list[str] = opt.filename_option(),
    cluster: list[str] = opt.cluster_option(),
    kubeconfig: str | None = opt.kubeconfig_option(),
    context: str | None = opt.context_option(),
    keep_existing: bool = opt.keep_existing_option(),
    scheduler_config: str | None = opt.scheduler_config_option(),
    kube_version: str | None = opt.kube_version_option(),
    feature_gates: str = opt.feature_gates_option(),
    seed: int = opt.seed_option(),
    tie_break: opt.TieBreak = opt.tie_break_option(),
    output: str = opt.output_option("PodExplanation", "Output format: table, json, yaml, name (pod/NAME), "
                                    "jsonpath=TEMPLATE (kubectl's JSONPath over the JSON document) or html (a "
                                    "self-contained page)."),
    all_nodes: bool = typer.Option(False, "--all-nodes", help="List every node, not only the top 10."),
    show_all: bool = typer.Option(False, "--all", help="Also list the changes that open no node and the nearest "
                                  "nodes no node change helps (JSON and YAML always list all)."),
    node_search: bool | None = typer.Option(
        None, "--node-search/--no-node-search",
        help="For an unschedulable pod, search how many nodes like a nearby one would make it fit (re-runs the "
        f"whole simulation a few times). Default: on up to {AUTO_NODE_SEARCH_PODS} pending pods."),
    node_search_limit: int = typer.Option(128, "--node-search-limit", min=1, metavar="N",
                                          help="The most nodes the node search tries."),
    output_file: str | None = opt.output_file_option(),
    quiet: bool = opt.quiet_option(),
    no_color: bool = opt.no_color_option(),
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.output import check_destination, deliver, result_options, run_info, with_release
    from kplan.cli.progress import run_progress
    from kplan.cli.render import check_format, render
    from kplan.cli.terminal import is_quiet
    from kplan.report.explain import MoreNodesDoc, explain_document
    from kplan.scheduler.explain import PodExplainer, explain
    from kplan.scheduler.pod_status import PodStatus

    quiet = is_quiet(ctx, quiet)
    if all_namespaces and namespace is not None:
        from kplan.errors import InputError

        raise InputError("-n/--namespace and -A/--all-namespaces: give one (-A looks for the pod in every namespace)")
    check_format("PodExplanation", output)
    check_destination(output, output_file)
    loaded = load_inputs(cluster, [*(manifests or []), *filename], kubeconfig=kubeconfig, context=context, namespace=namespace,
                         keep_existing=keep_existing, seed=seed, progress=not quiet)
    workload = workload_of(name)
    if workload is not None and any(p.key == name for p in loaded.inputs.pending):
        workload = None  # a pod NAME in a namespace named like a workload type: the pod, as before
    planner = open_planner(loaded, scheduler_config, seed=seed, tie_break=tie_break, kube_version=kube_version, feature_gates=feature_gates)
    if workload is None:
        target = find_pending(loaded.inputs, name, namespace)
    else:
        # kubectl's TYPE/NAME: the workload's first pod that does not run (a first run finds it),
        # else its first pod
        pods = workload_pods(loaded.inputs, *workload, namespace)
        uids = {p.uid for p in pods}
        with run_progress(not quiet) as planner.progress:
            first = planner.simulate().result
        stuck = [o.pod for o in first.pods if o.pod.uid in uids and o.status != PodStatus.SCHEDULED]
        target = stuck[0] if stuck else pods[0]
    print_warnings(planner.warnings, quiet)
    explainer = PodExplainer(target.uid)
    with run_progress(not quiet) as planner.progress:
        run = planner.simulate(observer=explainer)
        ex = explain(run.result, explainer, target)
        more = None
        rem = ex.remedy
        pending = len(loaded.inputs.pending)
        if ex.outcome.status != PodStatus.SCHEDULED and rem is not None and ex.outcome.status != PodStatus.GATED and \
                (node_search or (node_search is None and pending <= AUTO_NODE_SEARCH_PODS)):
            more = more_nodes(planner, target.key, template_candidates(ex, planner.inputs.nodes), node_search_limit,
                              storage_only=storage_only(ex), claims=bool(target.resource_claims))
    if ex.outcome.status != PodStatus.SCHEDULED and rem is not None and ex.outcome.status != PodStatus.GATED and more is None \
            and node_search is None:
        more = MoreNodesDoc(template=None, count=None,
                            reason=f"not searched: with {pending} pending pods each probe is a long simulation "
                            "(--node-search runs it)")
    doc = explain_document(ex, all_nodes=all_nodes, tie_break=tie_break.value, more_nodes=more,
                           allocatable={n.name: n.allocatable for n in planner.inputs.nodes},
                           storage=run.result.snapshot.storage,
                           held_back=run.result.snapshot.dra.missing(target) if run.result.snapshot.dra else [])
    doc = with_release(doc, planner.setup.release)
    deliver(render(doc, output, result_options(output_file, full=show_all, run=run_info(
        cluster=cluster, manifests=[*(manifests or []), *filename], context=context,
        scheduler_config=scheduler_config, seed=seed, tie_break=tie_break.value,
        release=planner.setup.release))), output_file, quiet)
    if ex.outcome.status != PodStatus.SCHEDULED:
        raise typer.Exit(1)


def template_candidates(ex: Any, nodes: list[Any], most: int = 3) -> list[str]:
    """Rejected nodes, nearest first, whose every rejection a new empty copy might not have
    (status Unschedulable, not UnschedulableAndUnresolvable), one per node shape."""
    from kplan.framework.status import Code

    by_name = {n.name: n for n in nodes}
    seen: set[Any] = set()
    out: list[str] = []
    devices = ex.attempt.devices if ex.attempt is not None else None
    fresh = set(devices.fresh_nodes) if devices is not None else set()
    for ne in ex.nodes:
        # a copy is never cordoned, so NodeUnschedulable does not rule a node out; a copy has its
        # own copies of the node's ResourceSlices, all devices free, so DynamicResources does not
        # either when those devices would do
        failing = [f for f in ne.failing if f.plugin != "NodeUnschedulable"
                   and not (f.plugin == "DynamicResources" and ne.name in fresh)]
        if ne.feasible or not ne.failing or any(f.code != Code.UNSCHEDULABLE for f in failing):
            continue
        node = by_name.get(ne.name)
        if node is None:
            continue
        shape = (tuple(sorted(node.allocatable.items())), node.taints,
                 tuple(sorted((k, v) for k, v in node.labels.items() if k != "kubernetes.io/hostname")))
        if shape in seen:
            continue
        seen.add(shape)
        out.append(ne.name)
        if len(out) == most:
            break
    return out


def storage_only(ex: Any) -> bool:
    """VolumeBinding is what rejects every node: the pod's volume claims, not the nodes, are the problem."""
    from kplan.plugins.volumebinding import NAME as VOLUME_BINDING

    failing = [f for n in ex.nodes for f in n.failing]
    return bool(failing) and all(f.plugin == VOLUME_BINDING for f in failing)


def more_nodes(planner: Planner, key: str, templates: list[str], limit: int, *, storage_only: bool = False,
               claims: bool = False) -> MoreNodesDoc:
    """How many nodes like one of the template candidates make the pod fit, by whole simulations.

    The first candidate on which the pod passes every filter when it is new and empty is the
    template; nodes the pod can never fit on (labels, taints, size) are skipped.
    """
    from kplan.report.explain import MoreNodesDoc

    tried = []
    for template in templates[:3]:
        blocked = planner.blocked_on_empty_node(template, [key])
        if blocked:
            s = blocked[key]
            tried.append(f"{template}: {s.plugin + ': ' if s.plugin else ''}{s.message}")
            continue
        found = planner.nodes_for_pod(key, template, limit)
        if found.count is None:
            return MoreNodesDoc(template=template, count=None,
                                reason=f"still unschedulable with up to {limit} more nodes like {template} "
                                "(whole simulations)")
        return MoreNodesDoc(template=template, count=found.count, reason="")
    if storage_only and not tried:
        return MoreNodesDoc(template=None, count=None, reason="no number of them helps: the pod's volume claims stop "
                            "it on every node (see Storage above)")
    why = "labels, taints, or requests above the node's allocatable"
    if claims:
        why = "labels, taints, requests above the node's allocatable, or resource claims no node's devices satisfy"
    reason = ("the pod does not fit on a new empty node like " + "; ".join(tried) if tried else
              "no node of the cluster could hold the pod even if it were new and empty: every rejection is "
              f"UnschedulableAndUnresolvable ({why})")
    return MoreNodesDoc(template=None, count=None, reason=reason)
