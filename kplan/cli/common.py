"""Loading shared by the commands: inputs → scenario → simulation."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from kplan.io.inputs import Scenario, load_scenario
from kplan.io.manifests import load_objects
from kplan.io.scheduler_config import read_scheduler_config
from kplan.scheduler.simulate import SimulationResult, run_simulation


@dataclass
class Run:
    scenario: Scenario
    result: SimulationResult
    warnings: list[str]
    load_seconds: float


def print_warnings(warnings: Sequence[str]) -> None:
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)


def load_and_simulate(cluster: Sequence[str], manifests: Sequence[str], scheduler_config: str | None, *,
                      seed: int = 0, lowest_name: bool = False, keep_cycles: bool = False,
                      namespace: str = "default", keep_existing: bool = False) -> Run:
    from kplan.plugins import in_tree_registry

    t0 = time.perf_counter()
    registry = in_tree_registry()
    config = read_scheduler_config(scheduler_config, registry)
    scenario = load_scenario(load_objects(cluster), load_objects(manifests), namespace=namespace,
                             keep_existing=keep_existing, seed=seed)
    load_seconds = time.perf_counter() - t0
    result = run_simulation(scenario.snapshot, config, registry, scenario.pending, seed=seed,
                            lowest_name=lowest_name, pdb_allowed=scenario.pdb_allowed, keep_cycles=keep_cycles,
                            created_after=scenario.inputs.created_after)
    result.replaced = list(scenario.inputs.replaced)
    return Run(scenario, result, scenario.warnings, load_seconds)
