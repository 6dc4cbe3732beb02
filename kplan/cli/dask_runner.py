"""Where ``kplan sweep`` runs its simulations: Dask distributed, on this machine or on a Dask cluster.

Only ``kplan sweep`` imports this module (Dask takes a second or more to import; every other
command starts without it). By default a LocalCluster starts one worker process per core, with
one thread each (a simulation is pure Python and holds the GIL); ``--dask ADDRESS`` connects to
the scheduler of an existing cluster (``dask scheduler`` / ``dask worker``, or one hosted on
Kubernetes), whose workers must have the same kplan installed.

The parsed inputs go to every worker once (``scatter``, broadcast); each task is a chain of grid
points with one seed (points that differ only in one workload's replicas, simulated together by
kplan.io.sweep.run_chain; a single point where there is no such axis) and returns a RunSummary of
a few integers per point. A task's results depend only on its inputs, so they are the same
wherever it ran. Chains are cut into pieces when there are fewer of them than workers.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any, NamedTuple

from kplan.errors import ClusterAccessError, InputError
from kplan.io.collector import freeze_alive
from kplan.io.sweep import SweepInputs, run_chain
from kplan.whatif.sweep import RunSummary, split_chains

#: how long to wait for a worker to join a Dask scheduler that has none
CONNECT_TIMEOUT_S = 30

#: Dask's background work in the local cluster's processes, made rarer. A simulation holds the GIL
#: for seconds, and each time a worker's event loop wakes it takes the GIL from the simulation: with
#: Dask's defaults (the statistical profiler sampling the simulation's stack every 10 ms, the loop's
#: health tick every 20 ms, the memory monitor every 100 ms, the system monitor every 500 ms) the
#: loop used about 8% of a worker's CPU time beside a 4 s simulation, with these under 1%
#: (benchmarks/README.md). A cluster given with --dask keeps its own configuration.
LOCAL_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}

#: (index of the SweepInputs, the points of a chain: their indices and their values, seed)
Task = tuple[int, tuple[int, ...], tuple[tuple[int, ...], ...], int]
Progress = Callable[[int, int], None]


def local_workers() -> int:
    """One worker per core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def start_method() -> str:
    """How local workers start: forked from this process where the platform can, since a forked
    worker has kplan and Dask imported already (3x faster than a fresh interpreter on a busy
    2-core machine, which is seconds per sweep). At that point this process runs only Dask's own
    event-loop thread, which Dask supports forking from. Elsewhere, Dask's default (spawn)."""
    import multiprocessing

    if sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


def _ignore_ctrl_c() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


_IGNORING_IN_CHILDREN = False


def workers_ignore_ctrl_c() -> None:
    """Ctrl-C reaches every process of the terminal's foreground group: the local cluster's nanny
    and worker processes too, which inherited kplan's handler (or Python's) and died each with a
    traceback of their event loop. Only kplan handles it: it stops the cluster as it unwinds
    (LocalCluster's exit), and says ``interrupted``. Forked processes ignore SIGINT from their
    first instruction; a spawned one keeps the SIG_IGN it inherits (local_cluster_started)."""
    global _IGNORING_IN_CHILDREN
    if not _IGNORING_IN_CHILDREN:
        os.register_at_fork(after_in_child=_ignore_ctrl_c)
        _IGNORING_IN_CHILDREN = True


@contextmanager
def spawned_ignore_ctrl_c() -> Iterator[None]:
    """Where workers are spawned (not Linux), they start with the SIGINT disposition of this
    process: ignored while the cluster starts, kplan's own handler again afterwards."""
    import signal

    if start_method() == "fork" or threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)


def _kplan_version() -> str:
    import kplan

    return kplan.__version__


class SweepRun(NamedTuple):
    """What running a sweep's tasks gave."""

    #: every point's summaries, by (point index, seed)
    summaries: dict[tuple[int, int], RunSummary]
    #: the workers that ran them
    workers: int
    #: seconds before the first task was submitted: the local cluster started (or the given one
    #: reached) and the inputs sent to every worker. A sweep pays it once, whatever its size.
    setup_seconds: float


def sweep_tasks(chains: Sequence[Sequence[int]], points: Sequence[tuple[int, ...]], seeds: Sequence[int],
                context_of: Mapping[int, int], workers: int) -> list[Task]:
    """The tasks of a sweep: each chain with each seed, the chains cut so that there is a task for
    every worker where the points allow."""
    pieces = split_chains(chains, -(-workers // max(1, len(seeds))))
    return [(context_of[s], tuple(piece), tuple(points[i] for i in piece), s) for piece in pieces for s in seeds]


def run_sweep(contexts: Sequence[SweepInputs], chains: Sequence[Sequence[int]], points: Sequence[tuple[int, ...]],
              seeds: Sequence[int], context_of: Mapping[int, int], *, address: str | None, workers: int,
              progress: Progress | None = None) -> SweepRun:
    """Simulate every point of the chains with every seed on the local cluster, or on the Dask
    cluster at ``address``; ``context_of[seed]`` indexes the inputs loaded for the seed."""
    started = time.perf_counter()
    try:
        import dask
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise InputError("kplan sweep runs on Dask: install it with pip install 'kplan[sweep]' "
                         "(or pip install distributed)") from None
    import kplan

    with ExitStack() as stack:
        if address is None:
            stack.enter_context(dask.config.set({"distributed.worker.multiprocessing-method": start_method(),
                                                 **LOCAL_CONFIG}))
            workers_ignore_ctrl_c()
            # only on the loopback; the scheduler's HTTP server (which runs even without a
            # dashboard) on a free port, not 8787, which another Dask may hold
            with spawned_ignore_ctrl_c():
                cluster = stack.enter_context(LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                    dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))  # type: ignore[no-untyped-call]
        else:
            try:
                # the connect timeout is Dask's own (distributed.comm.timeouts.connect, 30 s by default)
                client = stack.enter_context(Client(address))  # type: ignore[no-untyped-call]
            except (OSError, TimeoutError) as e:
                raise ClusterAccessError(f"--dask {address}: cannot reach the Dask scheduler: {e}") from None
            try:
                client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
            except TimeoutError:
                raise ClusterAccessError(f"--dask {address}: the Dask scheduler has no worker (waited "
                                         f"{CONNECT_TIMEOUT_S} s)") from None
            _check_workers(client, address, kplan.__version__)
        if address is None:
            # pushed last, so it runs first on the way out: an interrupted sweep closes the
            # cluster with tasks running, which Dask's scheduler and workers log as errors
            stack.push(_quiet_when_interrupted)
        n_workers = len(client.scheduler_info()["workers"])
        # hash=False: random keys. Hashing the inputs to name them (dask's tokenize, walking every
        # parsed object) took 4 s of a sweep's start on a 500-node / 7,500-pod input, 0.2 s pickling them
        scattered = client.scatter(list(contexts), broadcast=True, hash=False)
        if address is None:
            # the scattered inputs are unpickled in the workers by now: take them (and what a
            # forked worker inherited unfrozen, Dask's own objects) out of the cyclic collector's
            # walks, as kplan simulate's loading does, so that its full collections during a point
            # walk what the point creates. Only in our own processes (io/collector.py).
            client.run(freeze_alive)
        setup = time.perf_counter() - started
        tasks = sweep_tasks(chains, points, seeds, context_of, n_workers)
        futures = [client.submit(run_chain, scattered[ctx], values, seed, pure=False)
                   for ctx, _, values, seed in tasks]
        if progress is not None:
            total, done = sum(len(t[1]) for t in tasks), 0
            progress(0, total)
            size = {f.key: len(t[1]) for f, t in zip(futures, tasks, strict=True)}
            for future in as_completed(futures):  # type: ignore[no-untyped-call]
                done += size[future.key]
                progress(done, total)
        results: list[list[RunSummary]] = client.gather(futures)
        out = {(i, seed): r for (_, indices, _, seed), rs in zip(tasks, results, strict=True)
               for i, r in zip(indices, rs, strict=True)}
        return SweepRun(out, n_workers, setup)


def _quiet_when_interrupted(kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> bool:
    """Ctrl-C (not an Exception): Dask's logging in this process goes quiet, and the local
    cluster's worker processes (this process's only children), busy in a simulation that would
    hold them for seconds and then log that their scheduler is gone, are killed; then the client
    and the cluster close."""
    if kind is not None and not issubclass(kind, Exception):
        import multiprocessing

        logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
        for child in multiprocessing.active_children():
            child.kill()
    return False


def _check_workers(client: Any, address: str, version: str) -> None:
    """Workers that cannot import kplan, or run another version, would fail or differ: say so at once."""
    try:
        versions: dict[str, str] = client.run(_kplan_version)
    except ImportError as e:
        raise InputError(f"--dask {address}: the Dask workers cannot import kplan ({e}); install kplan "
                         f"{version} where they run") from None
    other = sorted({v for v in versions.values() if v != version})
    if other:
        raise InputError(f"--dask {address}: the Dask workers run kplan {', '.join(other)}, this is kplan "
                         f"{version}; install the same version on both sides")
