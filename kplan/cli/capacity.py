"""``kplan capacity``: how many more replicas of a pod fit, where they go, and why the next does not."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import typer

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

Exit codes: 0 at least one replica fits, 1 none does, 2 bad input or usage.""")

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController", "Job", "CronJob", "DaemonSet")


def read_template(path: str) -> tuple[Any, tuple[bool, bool]]:
    """The pod of the file and whether it sets spec.priority / spec.preemptionPolicy."""
    from kplan.errors import InputError, UnsupportedError
    from kplan.io.inputs import check_supported, classify
    from kplan.io.manifests import load_objects

    objects = load_objects([path])
    kinds = [o.doc.get("kind") for o in objects]
    if len(objects) != 1:
        raise InputError(f"{path}: expected one Pod (or workload), found {len(objects)} objects")
    if kinds[0] in WORKLOAD_KINDS:
        raise UnsupportedError(f"{objects[0].source}: {kinds[0]}: capacity of workloads is not available yet: it "
                               "needs the workload expansion kplan does not have yet; give a Pod")
    if kinds[0] != "Pod":
        raise InputError(f"{objects[0].source}: expected a Pod, found kind {kinds[0]!r}")
    inputs = classify(objects)
    if inputs.running:
        p = inputs.running[0]
        raise InputError(f"{p.source}: Pod {p.key}: spec.nodeName is set; the scheduler never places such a pod")
    pod = inputs.pending[0]
    check_supported(pod)
    return pod, inputs.explicit.get(pod.uid, (False, False))


def capacity(
    pod_file: str = typer.Argument(..., help="A file with the Pod to replicate."),
    cluster: list[str] = cluster_option(),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
    scheduler_config: str | None = scheduler_config_option(),
    limit: int = typer.Option(10000, "--limit", min=1, help="Stop after this many replicas fit."),
    seed: int = seed_option(),
    tie_break: TieBreak = tie_break_option(),
    output: str = output_option(),
) -> None:
    from kplan.cli.common import print_warnings
    from kplan.cli.render.capacity import render_capacity
    from kplan.model.admission import admit_priority, with_builtin_classes
    from kplan.report.capacity import capacity_document

    template, (explicit_priority, explicit_policy) = read_template(pod_file)
    loaded = load_inputs(cluster, [], kubeconfig=kubeconfig, context=context, seed=seed)
    admit_priority(template, with_builtin_classes(loaded.inputs.priority_classes), explicit_priority, explicit_policy)
    planner = open_planner(loaded, scheduler_config, seed=seed, tie_break=tie_break)
    print_warnings(planner.warnings)

    def replica(k: int) -> Any:
        return dataclasses.replace(template, name=f"{template.name}-capacity-{k}",
                                   uid=f"{template.uid}-capacity-{k}", nominated_node="")

    out = planner.capacity(replica, limit)
    sys.stdout.write(render_capacity(capacity_document(template, out, limit), output))
    if out.replicas == 0:
        raise typer.Exit(1)
