"""The one loading path of every command: objects → parsed inputs → a Planner that runs them.

``kplan simulate``, ``explain``, ``whatif`` and ``capacity`` all load here: the cluster's objects
(from files, or read from a live cluster by the CLI) are classified, the manifests are applied
onto them as ``kubectl apply`` and the controllers would, and the result is kept as a
:class:`Workspace`. Each file is read and parsed once. A :class:`~kplan.whatif.plan.Planner`
then builds a snapshot per run from the workspace's inputs, so the same loaded input can be
simulated, changed and simulated again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from kplan.errors import InputError
from kplan.framework.release import Release
from kplan.io.apply import Applier, with_namespace
from kplan.io.cluster_version import KubeletVersions, Stated, stated
from kplan.io.collector import collector_paused
from kplan.io.scheduler_config import scheduler_setup
from kplan.model.raw import RawObject
from kplan.scenario import Inputs, Scenario, build_scenario, classify, settle
from kplan.scheduler.simulate import SimulationResult
from kplan.whatif.plan import Planner
from kplan.workloads import WORKLOAD_KINDS


def bulk_load() -> AbstractContextManager[None]:
    """Loading: the collector paused, and what was loaded frozen afterwards (io/collector.py)."""
    return collector_paused(freeze=True)


@dataclass
class Workspace:
    inputs: Inputs
    #: warnings of the reading so far (a live cluster's); building adds its own
    warnings: list[str]
    #: workload objects by (kind, namespace, name): the cluster's, then the manifests' (which win)
    workloads: dict[tuple[str, str, str], RawObject] = field(default_factory=dict)
    #: the Kubernetes version the cluster input states (kplan.io.cluster_version), if any
    stated: Stated | None = None


def load_workspace(cluster_objects: Iterable[RawObject], manifest_objects: Iterable[RawObject], *,
                   namespace: str | None = None, keep_existing: bool = False, seed: int = 0,
                   warnings: Iterable[str] = (), server_version: str | None = None,
                   cluster_files: Sequence[str] = ()) -> Workspace:
    """Classify the cluster's objects and apply the manifests onto them (each object parsed once).
    ``server_version``: the API server's, if the input states it (a snapshot, a live cluster);
    the nodes' kubelet versions are noted as they are read, for a hint otherwise.
    ``cluster_files``: the files the cluster's objects come from; without a Node among them, an
    InputError naming them (a kind configuration or a kubeconfig given as --cluster would
    otherwise be simulated as a cluster of no nodes, exit 1: "the pods do not fit")."""
    kinds: Counter[str] = Counter()
    kubelets = KubeletVersions(_counted(cluster_objects, kinds) if cluster_files else cluster_objects)
    with bulk_load():
        inputs = classify(kubelets)
        if cluster_files and not kinds["Node"]:  # invalid ones count: their own errors say more
            raise InputError(no_nodes_message(cluster_files, kinds))
        inputs.cluster_pods = (*inputs.running, *inputs.pending)
        applied = list(with_namespace(manifest_objects, namespace or "default"))
        Applier(inputs, keep_existing=keep_existing, seed=seed).apply(applied)
        settle(inputs)
    workloads: dict[tuple[str, str, str], RawObject] = {}
    for obj in [o for kind in WORKLOAD_KINDS for o in inputs.other.get(kind, [])] + applied:
        kind = str(obj.doc.get("kind"))
        md = obj.doc.get("metadata") or {}
        if kind in WORKLOAD_KINDS and isinstance(md, dict):
            workloads[(kind, str(md.get("namespace") or "default"), str(md.get("name") or ""))] = obj
    return Workspace(inputs, list(warnings), workloads, stated(server_version, kubelets.newest))


def _counted(objects: Iterable[RawObject], kinds: Counter[str]) -> Iterator[RawObject]:
    for obj in objects:
        kinds[str(obj.doc.get("kind"))] += 1
        yield obj


def no_nodes_message(files: Sequence[str], kinds: Counter[str]) -> str:
    """The error of cluster files without a Node, naming the files and what they hold instead."""
    held = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "no objects"
    return (f"no Nodes in the cluster inputs ({', '.join(files)}: {held}): --cluster takes a description of the "
            "cluster's nodes and pods (a 'kplan snapshot' file, or 'kubectl get nodes,pods -A -o yaml' output)")


def open_planner(workspace: Workspace, scheduler_config: str | None, *, seed: int = 0,
                 lowest_name: bool = False, release: Release | None = None) -> Planner:
    """A planner of the workspace's inputs under a scheduler configuration file (None: defaults),
    modelling ``release`` (None: the default one)."""
    planner = Planner(workspace.inputs, scheduler_setup(scheduler_config, release), seed=seed, lowest_name=lowest_name)
    planner.warnings = workspace.warnings + planner.warnings
    return planner


def load_scenario(cluster_objects: Iterable[RawObject], manifest_objects: Iterable[RawObject], *,
                  namespace: str = "default", keep_existing: bool = False, seed: int = 0) -> Scenario:
    """The workspace's inputs built into one scenario (a snapshot and its pending pods), for tests
    and benchmarks that drive a Simulation themselves."""
    ws = load_workspace(cluster_objects, manifest_objects, namespace=namespace, keep_existing=keep_existing, seed=seed)
    return build_scenario(ws.inputs, seed=seed)


def simulate_files(cluster: Sequence[str], manifests: Sequence[str], scheduler_config: str | None = None, *,
                   seed: int = 0, lowest_name: bool = False, namespace: str | None = None,
                   keep_existing: bool = False, keep_cycles: bool = False) -> SimulationResult:
    """``kplan simulate`` of these files without the rendering (for plugin authors' tests)."""
    from kplan.io.manifests import iter_objects, load_manifests

    workspace = load_workspace(iter_objects(cluster, cluster=True), load_manifests(manifests), namespace=namespace,
                               keep_existing=keep_existing, seed=seed)
    planner = open_planner(workspace, scheduler_config, seed=seed, lowest_name=lowest_name)
    return planner.simulate(keep_cycles=keep_cycles).result
