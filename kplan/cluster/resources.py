"""Resource names → columns of the node table.

cpu, memory and ephemeral-storage always have columns 0, 1, 2 (the scheduler's fixed fields);
scalar resources (extended, hugepages-*, attachable-volumes-*) get a column when first seen.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CPU, MEMORY, EPHEMERAL = 0, 1, 2
FIXED = ("cpu", "memory", "ephemeral-storage")


class ResourceIndex:
    __slots__ = ("names", "_col")

    def __init__(self, names: tuple[str, ...] = FIXED) -> None:
        self.names: list[str] = list(names)
        self._col = {n: i for i, n in enumerate(self.names)}

    def get(self, name: str) -> int | None:
        return self._col.get(name)

    def add(self, name: str) -> int:
        col = self._col.get(name)
        if col is None:
            col = len(self.names)
            self.names.append(name)
            self._col[name] = col
        return col

    def __len__(self) -> int:
        return len(self.names)

    def copy(self) -> ResourceIndex:
        return ResourceIndex(tuple(self.names))


def gather(matrix_t: np.ndarray, cols: Sequence[int], rows: np.ndarray) -> np.ndarray:
    """``matrix_t[cols][:, rows]`` as one (len(cols) × len(rows)) array. Columns in a run (cpu
    and memory, the usual request) are a slice, and a slice's take is several times cheaper
    than a fancy index over both axes."""
    first = cols[0]
    n = len(cols)
    if n == 1 or (n == 2 and cols[1] == first + 1) or list(cols) == list(range(first, first + n)):
        return np.asarray(matrix_t[first:first + len(cols)].take(rows, axis=1))
    return np.asarray(matrix_t[np.asarray(cols, dtype=np.intp)[:, None], rows])
