"""Loading shared by explain, whatif and capacity: inputs → a Planner that can run them, changed or not.

The cluster's objects come from ``cluster_objects``, the one place that knows where a cluster
description is read from (files today; a live cluster plugs in here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer

from kplan.cli.simulate import TieBreak
from kplan.errors import InputError
from kplan.io.inputs import Inputs, build_scenario, classify
from kplan.io.manifests import RawObject, load_objects
from kplan.io.scheduler_config import read_scheduler_config
from kplan.whatif.plan import Planner

__all__ = ["TieBreak", "load_inputs", "open_planner"]


# ------------------------------------------------------------------------------ options

def help_text(text: str) -> str:
    """A command help written as wrapped paragraphs, as one line per paragraph (the help formatter
    wraps it again to the terminal)."""
    return "\n\n".join(" ".join(p.split()) for p in text.strip().split("\n\n"))


def cluster_option() -> Any:
    return typer.Option([], "--cluster", "-c", help="Cluster description: a snapshot or 'kubectl get "
                        "nodes,pods,... -A -o yaml' output. Repeatable.")


def scheduler_config_option() -> Any:
    return typer.Option(None, "--scheduler-config",
                        help="A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).")


def seed_option() -> Any:
    return typer.Option(0, "--seed", help="Seed for the scheduler's random choices (score ties, preemption).")


def tie_break_option() -> Any:
    return typer.Option(TieBreak.random, "--tie-break", help="How equal top scores are broken: 'random' as "
                        "kube-scheduler does (seeded), or 'lowest-name' for reproducible results.")


def output_option() -> Any:
    return typer.Option("table", "--output", "-o", help="Output format: table, json or yaml.")


# ------------------------------------------------------------------------------ loading

def cluster_objects(cluster: Sequence[str]) -> list[RawObject]:
    """The cluster description's objects (files or folders; '-' reads stdin)."""
    return load_objects(cluster)


def load_inputs(cluster: Sequence[str], manifests: Sequence[str]) -> Inputs:
    if not cluster and not manifests:
        raise InputError("nothing to plan with: give --cluster FILE and/or manifests")
    inputs = classify(cluster_objects(cluster))
    return classify(load_objects(manifests), inputs, pending_role=True)


def open_planner(inputs: Inputs, scheduler_config: str | None, *, seed: int, tie_break: TieBreak) -> Planner:
    from kplan.plugins import in_tree_registry

    registry = in_tree_registry()
    config = read_scheduler_config(scheduler_config, registry)
    return Planner(inputs, build_scenario, config, registry, seed=seed,
                   lowest_name=tie_break == TieBreak.lowest_name)
