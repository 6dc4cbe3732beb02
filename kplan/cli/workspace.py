"""The options every command shares, and its way into the one loading path (kplan.io.workspace).

The cluster's objects come from ``common.cluster_objects`` (the --cluster files, or the live
cluster of --kubeconfig/--context); the manifests are applied onto them (workloads become their
controllers' pods, replacing the cluster's); a Planner runs the result, changed or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import typer

from kplan.cli.simulate import TieBreak

if TYPE_CHECKING:  # the engine loads only when a command runs, so that --help starts fast
    from kplan.io.manifests import RawObject
    from kplan.io.workspace import Workspace
    from kplan.whatif.plan import Planner

__all__ = ["TieBreak", "load_inputs", "open_planner"]


def help_text(text: str) -> str:
    """A command help written as wrapped paragraphs, as one line per paragraph (the help formatter
    wraps it again to the terminal)."""
    return "\n\n".join(" ".join(p.split()) for p in text.strip().split("\n\n"))


# ------------------------------------------------------------------------------ options

FILENAME_HELP = ("A manifest file or folder (recursive *.yaml, *.yml, *.json), '-' for stdin, as kubectl's -f. "
                 "Repeatable; read after the MANIFESTS arguments.")


def filename_option(what: str = FILENAME_HELP) -> Any:
    return typer.Option([], "--filename", "-f", metavar="FILE", help=what)


def cluster_option() -> Any:
    return typer.Option([], "--cluster", "-c", metavar="FILE", help="Cluster description: a snapshot or 'kubectl get "
                        "nodes,pods,... -A -o yaml' output. Repeatable. Without it, the live cluster is read "
                        "(read-only) into memory.")


def kubeconfig_option() -> Any:
    return typer.Option(None, "--kubeconfig", metavar="PATH", help="Read the live cluster of this kubeconfig (default: "
                        "$KUBECONFIG, ~/.kube/config, then in-cluster).")


def context_option() -> Any:
    return typer.Option(None, "--context", metavar="NAME", help="Kubeconfig context of the live cluster to read.")


def namespace_option(what: str = "Namespace of the manifests' objects that name none.") -> Any:
    return typer.Option(None, "--namespace", "-n", metavar="NS", help=what)


def keep_existing_option() -> Any:
    return typer.Option(False, "--keep-existing", help="Workloads already in the cluster keep their pods running "
                        "while the applied ones are scheduled (default: the applied workload replaces them).")


def scheduler_config_option() -> Any:
    return typer.Option(None, "--scheduler-config", metavar="FILE",
                        help="A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).")


def seed_option() -> Any:
    return typer.Option(0, "--seed", metavar="N", help="Seed for the scheduler's random choices (score ties, preemption) and "
                        "for the names the controllers generate.")


def tie_break_option() -> Any:
    return typer.Option(TieBreak.random, "--tie-break", help="How equal top scores are broken: 'random' as "
                        "kube-scheduler does (seeded), or 'lowest-name' for reproducible results.")


def output_option(kind: str, what: str = "Output format: table, json or yaml.") -> Any:
    """``-o``: the formats of the registry for documents of ``kind`` (kplan.cli.render)."""
    from kplan.cli.render import format_completer

    return typer.Option("table", "--output", "-o", metavar="FORMAT", help=what, autocompletion=format_completer(kind))


# ------------------------------------------------------------------------------ loading

def load_inputs(cluster: Sequence[str], manifests: Sequence[str], *, kubeconfig: str | None = None,
                context: str | None = None, namespace: str | None = None, keep_existing: bool = False,
                seed: int = 0, progress: bool = True, objects: Sequence[RawObject] | None = None) -> Workspace:
    """The options' inputs, loaded by kplan.io.workspace: the --cluster files or the live cluster
    (with a progress line unless ``progress`` is False), and the manifests applied onto them.
    ``objects``: the manifests already read (stdin can be read only once)."""
    from kplan.cli.common import cluster_objects
    from kplan.io.manifests import load_manifests
    from kplan.io.workspace import bulk_load, load_workspace

    with bulk_load():
        given, live_warnings = cluster_objects(cluster, kubeconfig, context, progress)
        return load_workspace(given, load_manifests(manifests) if objects is None else objects, namespace=namespace,
                              keep_existing=keep_existing, seed=seed, warnings=live_warnings)


def open_planner(workspace: Workspace, scheduler_config: str | None, *, seed: int, tie_break: TieBreak) -> Planner:
    from kplan.io.workspace import open_planner as planner_of

    return planner_of(workspace, scheduler_config, seed=seed, lowest_name=tie_break == TieBreak.lowest_name)
