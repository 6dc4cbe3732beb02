"""What the resource plugins tell the compiled cycle (kplan/scheduler/compiled.py) of one pod:
the inputs of the kernel's own copies of their rules (kernel/src/lib.rs), or None where the
pod or the plugin's configuration takes a branch the kernel does not have.

The kernel reads these objects' attributes by name (PyO3's FromPyObject), so the names here
are the kernel's field names. They are named tuples: one of each is made per pod, and a tuple is
made several times faster than a frozen dataclass.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: FitScore.strategy
LEAST_ALLOCATED, MOST_ALLOCATED = 0, 1


class FitFilter(NamedTuple):
    """NodeResourcesFit's Filter for one pod: the table's columns of the checked resources and
    the pod's request of each (fitsRequest's pairs), besides the pod count every node checks."""

    cols: list[int]
    wanted: list[int]


class FitScore(NamedTuple):
    """NodeResourcesFit's Score on cpu and memory: the strategy, the resources' weights and the
    pod's non-zero requests; ``weight`` is the plugin's score weight in the profile."""

    strategy: int
    weight_cpu: int
    weight_memory: int
    pod_cpu: int
    pod_memory: int
    weight: int = 1


class BalancedScore(NamedTuple):
    """NodeResourcesBalancedAllocation's Score on cpu and memory: the pod's requests, whether the
    release scores the change of balance (1.36, #135573) and then the nodes' own balance per row
    (``without``, kept current as pods come and go); ``weight`` is the plugin's score weight."""

    change: bool
    pod_cpu: int
    pod_memory: int
    without: np.ndarray | None
    weight: int = 1
