"""Small builders for the disruption engine's tests: nodes with NodeClaims, NodePools with a
catalog of priced instance types, a scheduling simulation answered from a table, and a NodeClaim
whose options are (name, price) pairs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from kplan.autoscaler.karpenter.disruption.helpers import SimulationResults
from kplan.autoscaler.karpenter.disruption.nodepool import Budget
from kplan.autoscaler.karpenter.disruption.state import (
    CAPACITY_TYPE_LABEL,
    INSTANCE_TYPE_LABEL,
    NODEPOOL_LABEL,
    ON_DEMAND,
    SPOT,
    ZONE_LABEL,
    ClaimView,
    NodePoolView,
    StateNode,
)
from kplan.autoscaler.karpenter.disruption.types import Candidate
from kplan.model.objects import Node, OwnerRef, Pod, Toleration

NOW = 1_800_000_000.0


@dataclass(frozen=True)
class Offer:
    zone: str
    capacity_type: str
    price: float
    available: bool = True


@dataclass(frozen=True)
class Type:
    name: str
    offerings: tuple[Offer, ...]


def itype(name: str, od: float, spot: float | None = None, zones: Sequence[str] = ("a",)) -> Type:
    offers = [Offer(z, ON_DEMAND, od) for z in zones]
    if spot is not None:
        offers += [Offer(z, SPOT, spot) for z in zones]
    return Type(name, tuple(offers))


CATALOG = {t.name: t for t in (itype("small", 0.1, 0.03), itype("medium", 0.2, 0.06), itype("large", 0.4, 0.12))}


def pool(name: str = "default", **kw: object) -> NodePoolView:
    kw.setdefault("instance_types", CATALOG)
    return NodePoolView(name=name, **kw)  # type: ignore[arg-type]


def pod(name: str, ns: str = "default", *, owner: str = "ReplicaSet", api: str = "apps/v1", priority: int = 0,
        annotations: Mapping[str, str] | None = None, start: float | None = NOW - 3600,
        labels: Mapping[str, str] | None = None, tolerations: tuple[Toleration, ...] = (),
        phase: str = "Running") -> Pod:
    owners = (OwnerRef(owner, f"{name}-owner", True, api_version=api),) if owner else ()
    return Pod(namespace=ns, name=name, uid=f"uid-{ns}-{name}", owners=owners, priority=priority,
               annotations=annotations or {}, labels=labels or {}, start_time=start, phase=phase,
               tolerations=tolerations)


def node(name: str, *pods: Pod, pool_name: str = "default", it: str = "medium", ct: str = ON_DEMAND,
         zone: str = "a", ready: str = "True", annotations: Mapping[str, str] | None = None,
         claim: dict[str, object] | None = None, managed: bool = True, initialized: bool = True) -> StateNode:
    """A node; ``initialized=False``: registered but not initialized (no karpenter.sh/initialized label,
    no Initialized condition)."""
    labels = {NODEPOOL_LABEL: pool_name, INSTANCE_TYPE_LABEL: it, CAPACITY_TYPE_LABEL: ct, ZONE_LABEL: zone}
    node_labels = {**labels, "karpenter.sh/registered": "true"}
    if initialized:
        node_labels["karpenter.sh/initialized"] = "true"
    else:
        claim = {"initialized": None, **(claim or {})}
    n = Node(name=name, labels=node_labels if managed else {}, annotations=annotations or {}, ready=ready)
    fields: dict[str, object] = {"created": NOW - 86400, "initialized": NOW - 86000, **(claim or {})}
    cv = ClaimView(name=f"{name}-claim", labels=labels, **fields) if managed else None  # type: ignore[arg-type]
    return StateNode(name, n, cv, tuple(replace_node(p, name) for p in pods))


def replace_node(p: Pod, name: str) -> Pod:
    from kplan.model.objects import evolve_pod
    return evolve_pod(p, node_name=name)


@dataclass
class FakeClaim:
    """ClaimOptions over (name, worst launch price) pairs; the launch price is the first's."""

    node_pool: str
    options: list[tuple[str, float]]
    pods: tuple[str, ...] = ()
    capacity: list[str] = field(default_factory=lambda: [SPOT, ON_DEMAND])
    min_values: int = 0

    def instance_type_names(self) -> list[str]:
        return [n for n, _ in self.options]

    def allows_capacity_type(self, capacity_type: str) -> bool:
        return capacity_type in self.capacity

    def order_by_price(self) -> None:
        self.options.sort(key=lambda o: o[1])

    def require_capacity_type(self, capacity_type: str) -> None:
        self.capacity = [c for c in self.capacity if c == capacity_type]

    def keep_compatible(self) -> None:
        pass

    def remove_by_price(self, max_price: float) -> str | None:
        self.options = [o for o in self.options if o[1] < max_price]
        if self.min_values and len(self.options) < self.min_values:
            return "minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type])"
        return None

    def has_min_values(self) -> bool:
        return self.min_values > 0

    def min_instance_types(self) -> int:
        return self.min_values

    def truncate(self, n: int) -> None:
        del self.options[n:]

    def launch_price(self) -> float | None:
        return self.options[0][1] if self.options else None

    def capacity_types(self) -> tuple[str, ...]:
        return tuple(self.capacity)


class TableSimulator:
    """Answers SimulateScheduling from a function of the candidates' names; records the calls."""

    def __init__(self, answer: Callable[[frozenset[str]], SimulationResults]) -> None:
        self.answer = answer
        self.calls: list[tuple[tuple[str, ...], bool]] = []

    def __call__(self, candidates: Sequence[Candidate], consolidation: bool) -> SimulationResults:
        names = tuple(c.name for c in candidates)
        self.calls.append((names, consolidation))
        return self.answer(frozenset(names))


def fits(existing: Mapping[str, str] | None = None) -> SimulationResults:
    return SimulationResults(existing=dict(existing or {}))


def needs(*claims: FakeClaim) -> SimulationResults:
    return SimulationResults(new_claims=list(claims))


def fails(**errors: str) -> SimulationResults:
    return SimulationResults(errors={k.replace("__", "/"): v for k, v in errors.items()})


__all__ = ["NOW", "Budget", "ClaimView", "replace"]
