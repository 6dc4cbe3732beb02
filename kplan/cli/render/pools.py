"""Node use per pool, for the HTML report: what is requested of every resource the pool's nodes
have (cpu, memory, pods and extended resources such as ``nvidia.com/gpu``), what is free, in
human units, and the share requested."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kplan.cli.render.units import human_bytes, human_cpu

NO_POOL = "(no pool)"
#: the resources every pool shows, first; the others (extended resources, ephemeral storage) follow by name
FIRST = ("cpu", "memory", "pods")


class NodeUse(Protocol):
    """What a report says of one node (a SimulationResult's ``nodes[]`` entry)."""

    @property
    def name(self) -> str: ...
    @property
    def pool(self) -> str | None: ...
    @property
    def allocatable(self) -> Mapping[str, int]: ...
    @property
    def requested(self) -> Mapping[str, int]: ...
    @property
    def pods(self) -> int: ...


@dataclass(frozen=True)
class Use:
    """One resource of a pool: amounts in the resource's base unit (millicores, bytes, counts)."""

    resource: str
    requested: int
    allocatable: int

    @property
    def free(self) -> int:
        return max(0, self.allocatable - self.requested)

    @property
    def percent(self) -> int | None:
        """The share requested, in whole percent rounded down (as the documents give it); None when
        nothing is allocatable."""
        return self.requested * 100 // self.allocatable if self.allocatable else None

    def text(self, amount: int) -> str:
        return amount_text(self.resource, amount)

    def free_short(self) -> str:
        return short_text(self.resource, self.free)

    def free_text(self) -> str:
        """What is free of what is allocatable, in the unit of the column's resource (cores for
        cpu): 19.7 of 31.8 cores free, 400m of 500m free, 72Gi of 120Gi free, 6 of 8 free."""
        cores = " cores" if self.resource == "cpu" and self.allocatable >= 1000 else ""
        return f"{short_text(self.resource, self.free)} of {short_text(self.resource, self.allocatable)}{cores} free"


@dataclass(frozen=True)
class PoolUse:
    pool: str
    nodes: int
    #: by resource, in the order of ``resources``
    use: Mapping[str, Use]


def short_text(resource: str, amount: int) -> str:
    """An amount in human units without a unit word: 25.5 (cores), 150m, 103Gi, 12, 3."""
    if resource == "cpu":
        return human_cpu(amount)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return human_bytes(amount)
    return str(amount)


def amount_text(resource: str, amount: int) -> str:
    """An amount in human units, with its unit: 25.5 cores (or 150m cpu below a core), 103Gi,
    12 pods, 3 nvidia.com/gpu."""
    if resource == "cpu":
        return f"{human_cpu(amount)} core{'' if amount == 1000 else 's'}" if amount >= 1000 else f"{amount}m cpu"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return human_bytes(amount) + ("" if resource == "memory" else f" {resource}")
    if resource == "pods":
        return f"{amount} pod{'' if amount == 1 else 's'}"
    return f"{amount} {resource}"


def resources_of(nodes: Sequence[NodeUse]) -> list[str]:
    """The resources any of the nodes has or has requested: cpu, memory and pods first."""
    names: set[str] = set()
    for n in nodes:
        names.update(r for r, a in n.allocatable.items() if a)
        names.update(r for r, a in n.requested.items() if a)
    return [*FIRST, *sorted(names - set(FIRST))]


def pools(nodes: Sequence[NodeUse], resources: Sequence[str] | None = None) -> tuple[list[str], list[PoolUse]]:
    """The resources (by default those any node has, cpu, memory and pods first), and each pool's
    use of them, pools by name."""
    grouped: dict[str, list[NodeUse]] = {}
    for n in nodes:
        grouped.setdefault(n.pool or NO_POOL, []).append(n)
    resources = list(resources) if resources is not None else resources_of(nodes)
    out = []
    for pool in sorted(grouped):
        members = grouped[pool]
        use = {}
        for r in resources:
            requested = sum(n.pods if r == "pods" else n.requested.get(r, 0) for n in members)
            allocatable = sum(n.allocatable.get(r, 0) for n in members)
            use[r] = Use(r, requested, allocatable)
        out.append(PoolUse(pool, len(members), use))
    return resources, out
