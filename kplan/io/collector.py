"""Pausing CPython's cyclic garbage collector while loading: the one place that does it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """Loading creates hundreds of thousands of long-lived dicts, lists and objects and no
    reference cycles: the cyclic collector would scan them again and again while they are young
    (json.loads of a page of pods takes about nine times as long with it on). Pause it meanwhile;
    with ``freeze``, move what was loaded to the permanent generation so later collections skip it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()


def freeze_alive() -> int:
    """Collect once, then move every object still alive to the permanent generation, where later
    collections do not walk it; the number of objects frozen so far. For a process that has just
    received large long-lived inputs any other way than loading them (a sweep's worker unpickles
    them): the collections during its runs then walk what the runs create, as after
    ``collector_paused(freeze=True)``. Frozen objects that later become cyclic garbage are never
    freed, so only for a process whose heap is ours (a local sweep worker, not a Dask cluster's)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
