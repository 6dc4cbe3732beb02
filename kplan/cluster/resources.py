"""Resource names → columns of the node table.

cpu, memory and ephemeral-storage always have columns 0, 1, 2 (the scheduler's fixed fields);
scalar resources (extended, hugepages-*, attachable-volumes-*) get a column when first seen.
"""

from __future__ import annotations

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
