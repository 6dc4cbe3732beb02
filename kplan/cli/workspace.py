"""Every command's way into the one loading path (kplan.io.workspace); its options are kplan.cli.options.

The cluster's objects come from ``common.cluster_objects`` (the --cluster files, or the live
cluster of --kubeconfig/--context); the manifests are applied onto them (workloads become their
controllers' pods, replacing the cluster's); a Planner runs the result, changed or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kplan.cli.options import TieBreak

if TYPE_CHECKING:  # the engine loads only when a command runs, so that --help starts fast
    from kplan.framework.release import Release
    from kplan.io.workspace import Workspace
    from kplan.model.raw import RawObject
    from kplan.scheduler.setup import SchedulerSetup
    from kplan.whatif.changes import ScaleWorkload
    from kplan.whatif.plan import Planner

__all__ = ["autoscaling", "load_inputs", "open_planner"]


# ------------------------------------------------------------------------------ loading

def load_inputs(cluster: Sequence[str], manifests: Sequence[str], *, kubeconfig: str | None = None,
                context: str | None = None, namespace: str | None = None, keep_existing: bool = False,
                seed: int = 0, progress: bool = True, objects: Sequence[RawObject] | None = None) -> Workspace:
    """The options' inputs, loaded by kplan.io.workspace: the --cluster files or the live cluster
    (with a progress line unless ``progress`` is False), and the manifests applied onto them.
    ``objects``: the manifests already read (stdin can be read only once)."""
    from kplan.cli.common import cluster_objects
    from kplan.cli.progress import load_progress
    from kplan.io.manifests import load_manifests
    from kplan.io.workspace import bulk_load, load_workspace

    with bulk_load():
        given, live_warnings, server_version = cluster_objects(cluster, kubeconfig, context, progress)
        # a large cluster takes seconds to parse: a count of its objects on a terminal meanwhile
        with load_progress(progress) as shown:
            return load_workspace(given if shown is None else shown.count(given),
                                  load_manifests(manifests) if objects is None else objects, namespace=namespace,
                                  keep_existing=keep_existing, seed=seed, warnings=live_warnings,
                                  server_version=server_version, cluster_files=cluster)


def open_planner(workspace: Workspace, scheduler_config: str | None, *, seed: int, tie_break: TieBreak,
                 kube_version: str | None = None, feature_gates: str = "", verbose: bool = False) -> Planner:
    """A planner of the workspace modelling the release of ``--kube-version`` and ``--feature-gates``
    (by default, the one the cluster states: kplan.io.cluster_version), warning when the release
    the cluster states is not modelled; ``verbose``: the release and gates used on stderr."""
    import sys

    from kplan.io.cluster_version import choose_release
    from kplan.io.workspace import open_planner as planner_of

    release, warnings = choose_release(kube_version, feature_gates, workspace.stated)
    planner = planner_of(workspace, scheduler_config, seed=seed, lowest_name=tie_break == TieBreak.lowest_name,
                         release=release)
    planner.warnings = warnings + planner.warnings
    if verbose:
        print(f"modelling {release_words(release)}", file=sys.stderr)
    return planner


def release_setups(scheduler_config: str | None, kube_versions: Sequence[str], feature_gates: str, *,
                   verbose: bool = False) -> list[SchedulerSetup]:
    """The scheduler set-up of each release (sweep's --kube-version axis): ``--scheduler-config``
    and ``--feature-gates`` read and checked at each release."""
    import sys

    from kplan.io.cluster_version import choose_release
    from kplan.io.scheduler_config import scheduler_setup

    out = []
    for v in kube_versions:
        release, _ = choose_release(v, feature_gates, None)
        out.append(scheduler_setup(scheduler_config, release))
        if verbose:
            print(f"modelling {release_words(release)}", file=sys.stderr)
    return out


def autoscaling(workspace: Workspace, hpa: str | None, *, seed: int, scaled: Sequence[str] = ()
                ) -> tuple[list[ScaleWorkload], list[str]]:
    """``--hpa``: the scale change of each HorizontalPodAutoscaler's target at the bound (none
    without the option), resolved with ``seed``, and the warnings about autoscalers that scale
    nothing. ``scaled``: the workloads --scale scales (they keep that count)."""
    from kplan.io.hpa import hpa_changes, hpa_targets, parse_bound

    if hpa is None:
        return [], []
    targets, notes = hpa_targets(workspace.inputs, workspace.workloads, parse_bound(hpa), scaled)
    return hpa_changes(workspace.inputs, workspace.workloads, targets, seed=seed), notes


def release_words(release: Release) -> str:
    """``kube-scheduler 1.34 (default feature gates)``, or the gates changed from the defaults."""
    from kplan.report.document import ReleaseInfo

    return f"kube-scheduler {release} ({ReleaseInfo.of(release).gates})"


#: the node autoscalers --autoscaler names
AUTOSCALERS = ("karpenter", "cluster-autoscaler")


def check_autoscaler(autoscaler: str | None, instance_types: str | None, node_groups: str | None = None,
                     expander: str = "least-waste", max_nodes_total: int = 0, balance: bool = False) -> Any:
    """--autoscaler and its options, checked before loading: Karpenter's catalog read, or the
    cluster-autoscaler's settings (node groups read); None without --autoscaler."""
    from kplan.errors import InputError

    if autoscaler is None:
        if instance_types is not None:
            raise InputError("--instance-types goes with --autoscaler karpenter or cluster-autoscaler")
        if node_groups is not None:
            raise InputError("--node-groups goes with --autoscaler cluster-autoscaler")
        return None
    if autoscaler not in AUTOSCALERS:
        raise InputError(f"--autoscaler {autoscaler}: kplan models {', '.join(AUTOSCALERS)}")
    if autoscaler == "cluster-autoscaler":
        return _cluster_autoscaler_settings(instance_types, node_groups, expander, max_nodes_total, balance)
    if node_groups is not None:
        raise InputError("--node-groups goes with --autoscaler cluster-autoscaler")
    if instance_types is None:
        raise InputError("--autoscaler karpenter needs the instance types it may launch: give --instance-types FILE "
                         "(the KWOK provider's JSON format) or --instance-types aws")
    from kplan.io.catalog import read_catalog

    return read_catalog(instance_types)


def _cluster_autoscaler_settings(instance_types: str | None, node_groups: str | None, expander: str,
                                 max_nodes_total: int, balance: bool) -> Any:
    from kplan.autoscaler.clusterautoscaler.expander import parse_expanders
    from kplan.errors import InputError
    from kplan.io.catalog import read_catalog
    from kplan.io.nodegroups import read_node_groups
    from kplan.whatif.autoscale import ClusterAutoscalerSettings

    if node_groups is None:
        raise InputError("--autoscaler cluster-autoscaler needs its node groups: give --node-groups FILE")
    names = parse_expanders(expander)
    groups = read_node_groups(node_groups)
    catalog = read_catalog(instance_types) if instance_types is not None else None
    return ClusterAutoscalerSettings(groups, catalog, names, max_nodes_total, balance)


def attach_autoscaler(planner: Planner, catalog: Any, *, seed: int, attach: bool = True) -> Any:
    """Karpenter for the planner's inputs (when --autoscaler gave a catalog; else None), given to
    the planner unless ``attach`` is False: each run then lets it launch nodes for the pods
    kube-scheduler leaves unschedulable."""
    if catalog is None:
        return None
    from kplan.whatif.autoscale import (
        ClusterAutoscalerSettings,
        check_node_pools,
        cluster_autoscaler,
        karpenter,
    )

    if isinstance(catalog, ClusterAutoscalerSettings):
        from kplan.io.nodegroups import with_configmaps

        catalog = with_configmaps(catalog, planner.inputs.other.get("ConfigMap", []))
        ca = cluster_autoscaler(planner.inputs, catalog, planner.setup, seed=seed)
        if attach:
            planner.autoscaler = ca
        return ca

    check_node_pools(planner.inputs)
    from kplan.autoscaler.karpenter.scheduler import solve

    found = karpenter(planner.inputs, catalog, solve, seed=seed)
    if attach:
        planner.autoscaler = found
    return found
