"""The options the commands share, defined once: each command's signature takes them from here.

kubectl habits: ``-f/--filename``, ``-c/--cluster``, ``--kubeconfig``, ``--context``,
``-n/--namespace``, ``-o/--output``. ``-n`` defaults to none given: the manifests' objects that
name no namespace then go to ``default`` (kplan.io.workspace), as kubectl puts them without a
context namespace, and ``kplan explain pod NAME`` looks for NAME in every namespace.

This module imports no engine code (``kplan --help`` and completion start fast), and no command
module: the commands import it, never each other, for their options (the change options whatif and
sweep share are in kplan.cli.change_options). Each option names the heading it is listed under in
the help of a command built with ``PanelledCommand`` (its ``rich_help_panel``: inputs, changes,
node autoscaler, scheduler, output), where a reader looks for it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import typer
import typer.core

from kplan.cli.terminal import NO_COLOR_HELP, QUIET_HELP, disable_color
from kplan.framework.release_tables import DEFAULT_RELEASE
from kplan.report.check import FailOn

#: the headings a command's help lists its options under (PanelledCommand)
INPUTS = "Inputs"
CHANGES = "Changes"
AUTOSCALER = "Node autoscaler"
SCHEDULER = "Scheduler"
OUTPUT = "Output"


class PanelledCommand(typer.core.TyperCommand):
    """A command whose help lists its options under headings: each option's ``rich_help_panel``,
    in the order the headings first appear among its parameters (the help option last). typer draws
    such headings only in rich's boxed help, which kplan turns off (kplan.cli.app); this is the same
    grouping in click's plain help."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments: list[tuple[str, str]] = []
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append(record)
            else:
                sections.setdefault(getattr(param, "rich_help_panel", None) or "Help", []).append(record)
        for title, records in [("Arguments", arguments), *sections.items()]:
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


class TieBreak(StrEnum):
    """``--tie-break``: how equal top scores are broken."""

    random = "random"
    lowest_name = "lowest-name"


def help_text(text: str) -> str:
    """A command help written as wrapped paragraphs, as one line per paragraph (the help formatter
    wraps it again to the terminal)."""
    return "\n\n".join(" ".join(p.split()) for p in text.strip().split("\n\n"))


MANIFESTS_HELP = "Manifest files or folders (recursive *.yaml, *.yml, *.json); '-' reads stdin."
PENDING_MANIFESTS_HELP = ("Manifest files or folders with pending pods (recursive *.yaml, *.yml, *.json); '-' reads "
                          "stdin.")
FILENAME_HELP = ("A manifest file or folder (recursive *.yaml, *.yml, *.json), '-' for stdin, as kubectl's -f. "
                 "Repeatable; read after the MANIFESTS arguments.")
NAMESPACE_HELP = "Namespace of the manifests' objects that name none (default: default)."
FAIL_ON_HELP = ("What makes the exit code 1: 'unschedulable' (a pending pod does not run), 'preemption' (that, or "
                "a running pod is preempted), 'newly-unschedulable' (whatif: a pod that does not run after the change "
                "but did before it, or that the change created) or 'never'.")


def manifests_argument(what: str = MANIFESTS_HELP) -> Any:
    return typer.Argument(None, help=what, metavar="[MANIFESTS]...")


def filename_option(what: str = FILENAME_HELP) -> Any:
    return typer.Option([], "--filename", "-f", metavar="FILE", help=what, rich_help_panel=INPUTS)


def cluster_option() -> Any:
    return typer.Option([], "--cluster", "-c", metavar="FILE", help="Cluster description: a snapshot or 'kubectl get "
                        "nodes,pods,... -A -o yaml' output. Repeatable. Without it, the live cluster is read "
                        "(read-only) into memory.", rich_help_panel=INPUTS)


def kubeconfig_option(what: str = "Read the live cluster of this kubeconfig (default: $KUBECONFIG, ~/.kube/config, "
                                  "then in-cluster).") -> Any:
    return typer.Option(None, "--kubeconfig", metavar="PATH", help=what, rich_help_panel=INPUTS)


def context_option(what: str = "Kubeconfig context of the live cluster to read.") -> Any:
    return typer.Option(None, "--context", metavar="NAME", help=what, rich_help_panel=INPUTS)


def namespace_option(what: str = NAMESPACE_HELP) -> Any:
    return typer.Option(None, "--namespace", "-n", metavar="NS", help=what, rich_help_panel=INPUTS)


ALL_NAMESPACES_HELP = ("Every namespace, as kubectl's -A: the cluster's pods of all namespaces are read and "
                       "placed, which is what kplan does without it (accepted for kubectl habits).")


def all_namespaces_option(what: str = ALL_NAMESPACES_HELP) -> Any:
    return typer.Option(False, "--all-namespaces", "-A", help=what, rich_help_panel=INPUTS)


def keep_existing_option() -> Any:
    return typer.Option(False, "--keep-existing", help="Workloads already in the cluster keep their pods running "
                        "while the applied ones are scheduled (default: the applied workload replaces them, its old "
                        "pods leave first).", rich_help_panel=INPUTS)


def scheduler_config_option(what: str = "A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).",
                            flag: str = "--scheduler-config") -> Any:
    return typer.Option(None, flag, metavar="FILE", help=what, rich_help_panel=SCHEDULER)


def seed_option() -> Any:
    # min=0: numpy's generators take non-negative seeds only; the parser says so as a usage error
    return typer.Option(0, "--seed", metavar="N", min=0, help="Seed for the scheduler's random choices (score ties, "
                        "preemption) and for the random suffixes of the pod names the controllers generate; 0 or "
                        "more.", rich_help_panel=SCHEDULER)


def tie_break_option() -> Any:
    return typer.Option(TieBreak.random, "--tie-break", help="How equal top scores are broken: 'random' as "
                        "kube-scheduler does (seeded), or 'lowest-name' for reproducible results.",
                        rich_help_panel=SCHEDULER)


def output_option(kind: str, what: str = "Output format: table, json or yaml.") -> Any:
    """``-o``: the formats of the registry for documents of ``kind`` (kplan.cli.render)."""
    from kplan.cli.render import format_completer

    return typer.Option("table", "--output", "-o", metavar="FORMAT", help=what, autocompletion=format_completer(kind),
                        rich_help_panel=OUTPUT)


def output_file_option() -> Any:
    """``--output-file``: the result into a file instead of stdout (kplan.cli.output)."""
    return typer.Option(None, "--output-file", metavar="FILE", help="Write the result into FILE instead of stdout, "
                        "atomically (a temporary file renamed over it; gzip-compressed for *.gz). Replaces FILE if "
                        "it exists.", rich_help_panel=OUTPUT)


def fail_on_option(what: str = FAIL_ON_HELP, *, change: bool = False) -> Any:
    """``--fail-on``; ``change``: the command compares runs before and after a change (whatif), so
    it offers newly-unschedulable, which the others refuse, at <Tab> too."""
    offered = [f.value for f in FailOn if change or f is not FailOn.newly_unschedulable]
    return typer.Option(FailOn.unschedulable, "--fail-on", help=what, rich_help_panel=OUTPUT,
                        autocompletion=lambda incomplete: [v for v in offered if v.startswith(incomplete)])


KUBE_VERSION_HELP = ("The Kubernetes release to model, such as 1.34 (default: the version the cluster states: a "
                     "snapshot's API server version, else its newest kubelet's; else the newest release kplan "
                     f"models, {DEFAULT_RELEASE}). 'kplan --version' lists the releases modelled.")
FEATURE_GATES_HELP = ("Feature gates as kube-scheduler's --feature-gates takes them: Gate=true,Other=false, checked "
                      "against the release's gates.")


def kube_versions(incomplete: str) -> list[str]:
    """What --kube-version <Tab> offers: the releases kplan models (not file names)."""
    from kplan.framework.release_tables import RELEASES

    return [str(v) for v in RELEASES if str(v).startswith(incomplete)]


def kube_version_option(what: str = KUBE_VERSION_HELP, metavar: str = "VERSION") -> Any:
    return typer.Option(None, "--kube-version", metavar=metavar, help=what, rich_help_panel=SCHEDULER,
                        autocompletion=kube_versions)


HPA_BOUNDS_HELP = ("Scale the target of every HorizontalPodAutoscaler of the inputs (Deployment, StatefulSet, "
                   "ReplicaSet, ReplicationController) to its maxReplicas, minReplicas (1 when unset) or "
                   "status.currentReplicas (current; the declared replicas when it has no status); none, the "
                   "default, keeps the declared replicas.")
#: for the commands that have --scale too
HPA_HELP = HPA_BOUNDS_HELP + " --scale of the same workload wins."


def hpa_option(what: str = HPA_HELP, metavar: str = "max|min|current|none") -> Any:
    return typer.Option(None, "--hpa", metavar=metavar, help=what,
                        autocompletion=lambda incomplete: [b for b in ("max", "min", "current", "none")
                                                           if b.startswith(incomplete)], rich_help_panel=CHANGES)


def feature_gates_option() -> Any:
    return typer.Option("", "--feature-gates", metavar="GATE=BOOL,...", help=FEATURE_GATES_HELP,
                        rich_help_panel=SCHEDULER)


def verbose_option(what: str) -> Any:
    return typer.Option(False, "--verbose", "-v", help=what, rich_help_panel=OUTPUT)


def quiet_option() -> Any:
    return typer.Option(False, "--quiet", "-q", help=QUIET_HELP, rich_help_panel=OUTPUT)


def no_color_option() -> Any:
    return typer.Option(False, "--no-color", help=NO_COLOR_HELP, callback=disable_color, is_eager=True,
                        rich_help_panel=OUTPUT)


AUTOSCALER_HELP = ("Let a node autoscaler launch nodes for the pods kube-scheduler leaves unschedulable, then "
                   "schedule them again on the old and new nodes, as a real cluster does (at most 10 rounds): "
                   "'karpenter' uses the inputs' NodePools and NodeClaims (karpenter.sh/v1) and the "
                   "--instance-types catalog; 'cluster-autoscaler' grows the node groups of --node-groups. "
                   "See docs/autoscaler.md.")
INSTANCE_TYPES_HELP = ("The instance types Karpenter may launch, with their offerings and prices: a JSON file in "
                       "the format of Karpenter's KWOK provider, or 'aws' for the built-in catalog. Needed with "
                       "--autoscaler karpenter.")


def autoscaler_option() -> Any:
    return typer.Option(None, "--autoscaler", metavar="karpenter|cluster-autoscaler", help=AUTOSCALER_HELP,
                        autocompletion=lambda incomplete: [a for a in ("karpenter", "cluster-autoscaler")
                                                           if a.startswith(incomplete)],
                        rich_help_panel=AUTOSCALER)


def instance_types_option() -> Any:
    return typer.Option(None, "--instance-types", metavar="FILE|aws", help=INSTANCE_TYPES_HELP,
                        rich_help_panel=AUTOSCALER)


NODE_GROUPS_HELP = ("The cluster-autoscaler's node groups: YAML with a list nodeGroups: of name, minSize, maxSize, "
                    "optional nodeSelector (its nodes now) or size, a template (like: NODE, or instanceType: NAME of "
                    "--instance-types, with optional labels and taints), optional pricePerHour and priority. "
                    "Needed with --autoscaler cluster-autoscaler.")
EXPANDER_HELP = ("The cluster-autoscaler's expanders, as its --expander flag takes them: a comma-separated chain "
                 "of least-waste, most-pods, least-nodes, price, priority, random (random draws from --seed; price "
                 "prices nodes by pricePerHour or --instance-types).")
MAX_NODES_TOTAL_HELP = ("The cluster-autoscaler's --max-nodes-total: the most nodes the cluster may have (0: no "
                        "limit).")


def node_groups_option() -> Any:
    return typer.Option(None, "--node-groups", metavar="FILE", help=NODE_GROUPS_HELP, rich_help_panel=AUTOSCALER)


def expander_option() -> Any:
    return typer.Option("least-waste", "--expander", metavar="NAME[,NAME...]", help=EXPANDER_HELP,
                        rich_help_panel=AUTOSCALER)


BALANCE_HELP = ("The cluster-autoscaler's --balance-similar-node-groups: share a scale-up among the node groups "
                "similar to the chosen one (same capacity and labels but zone), smallest first.")


def balance_similar_node_groups_option() -> Any:
    return typer.Option(False, "--balance-similar-node-groups", help=BALANCE_HELP, rich_help_panel=AUTOSCALER)


def max_nodes_total_option() -> Any:
    return typer.Option(0, "--max-nodes-total", metavar="N", min=0, help=MAX_NODES_TOTAL_HELP,
                        rich_help_panel=AUTOSCALER)
