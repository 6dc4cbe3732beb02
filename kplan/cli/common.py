"""Loading shared by the commands: inputs → scenario → simulation."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from kplan.io.inputs import Scenario, load_scenario
from kplan.io.manifests import RawObject, iter_objects, load_manifests
from kplan.io.scheduler_config import read_scheduler_config
from kplan.scheduler.simulate import SimulationResult, run_simulation


@dataclass
class Run:
    scenario: Scenario
    result: SimulationResult
    warnings: list[str]
    load_seconds: float
    #: wall time of the simulation, measured here: the engine reads no clock
    schedule_seconds: float


@contextmanager
def bulk_load() -> Iterator[None]:
    """Loading creates hundreds of thousands of long-lived objects and frees almost none: the
    cyclic garbage collector would traverse them again and again for nothing. Pause it while
    loading, then freeze what was loaded so later collections skip it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def print_warnings(warnings: Sequence[str], quiet: bool = False) -> None:
    """Each warning as one line on stderr; none with --quiet."""
    from kplan.cli.terminal import print_warnings as show

    show(warnings, quiet)


def cluster_objects(cluster: Sequence[str], kubeconfig: str | None = None, context: str | None = None,
                    progress: bool = True) -> tuple[Iterable[RawObject], list[str]]:
    """The cluster's objects and warnings: from the --cluster files, or else read from the live
    cluster (--kubeconfig/--context, $KUBECONFIG, ~/.kube/config or in-cluster) into memory.
    Live objects are decoded one at a time as they are iterated, so only their compact JSON text
    and the parsed model are ever held, never 150,000 pods as dicts."""
    from kplan.errors import InputError

    if cluster:
        if kubeconfig is not None or context is not None:
            raise InputError("--cluster reads a snapshot file; --kubeconfig/--context read a live cluster: "
                             "give one or the other")
        return iter_objects(cluster), []
    from kplan.cli.progress import list_progress
    from kplan.io.kube import NoClusterConfigured, snapshot

    try:
        with list_progress(progress) as sink:
            cap = snapshot(kubeconfig, context, progress=sink)
    except NoClusterConfigured as e:
        raise NoClusterConfigured(f"{e}; give --cluster FILE to work offline") from None
    return cap.raw_objects(), cap.warnings


def load_and_simulate(cluster: Sequence[str], manifests: Sequence[str], scheduler_config: str | None, *,
                      seed: int = 0, lowest_name: bool = False, keep_cycles: bool = False,
                      kubeconfig: str | None = None, context: str | None = None,
                      namespace: str = "default", keep_existing: bool = False, progress: bool = True,
                      schedule_progress: Callable[[int, int], None] | None = None) -> Run:
    from kplan.plugins import in_tree_registry

    t0 = time.perf_counter()
    registry = in_tree_registry()
    config = read_scheduler_config(scheduler_config, registry)
    with bulk_load():
        objects, live_warnings = cluster_objects(cluster, kubeconfig, context, progress)
        scenario = load_scenario(objects, load_manifests(manifests), namespace=namespace,
                                 keep_existing=keep_existing, seed=seed)
    load_seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    result = run_simulation(scenario.snapshot, config, registry, scenario.pending, seed=seed,
                            lowest_name=lowest_name, pdb_allowed=scenario.pdb_allowed, keep_cycles=keep_cycles,
                            created_after=scenario.inputs.created_after, progress=schedule_progress)
    schedule_seconds = time.perf_counter() - t1
    result.replaced = list(scenario.inputs.replaced)
    return Run(scenario, result, live_warnings + scenario.warnings, load_seconds, schedule_seconds)
