"""The versioned SweepResult document (apiVersion kplan.dev/v1alpha1) of ``kplan sweep``.

Fields may be added; none are renamed. ``points`` lists every grid point in grid order (the
product of the axes, the last axis varying fastest); each has its runs, one per seed, in seed
order. ``fitProbability`` is the share of seeds in which every pending pod was scheduled (gated
pods aside). ``cost`` is the price per hour of the nodes the axes add (null without --price).
``cheapest`` names up to three points whose fit probability reaches ``confidence``: the cheapest
first (by cost, then nodes added, then grid order). ``cheapestPerScale`` gives, for each
combination of the scaled workloads' replica counts (and of the autoscalers' bounds and the
releases, with such axes), the cheapest such point (null when none fits): the node mix for that
growth. With a release axis (``--kube-version 1.34,1.37``) each point names its ``release``, and
the document's ``release`` is the first one's; with an autoscaler axis (``--hpa``) each point
names its ``hpa`` bound. ``bestPoint``, present only when no point fits, names the
point that comes closest and the pods its runs leave pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal

from kplan.report.codec import is_none, member
from kplan.report.document import API_VERSION, ApiVersion, ReleaseInfo
from kplan.report.whatif import CpuShare, MemoryShare
from kplan.whatif.sweep import (
    Axis as PlanAxis,
)
from kplan.whatif.sweep import (
    HpaAxis,
    NodeAxis,
    PointResult,
    ReleaseAxis,
    RunSummary,
    ScaleAxis,
    SweepPlan,
    WordAxis,
    best_unfitting,
    cheapest,
    cheapest_by_scale,
    grouping_axes,
    percent,
)


def _number(x: Decimal | Fraction | float) -> float:
    """A number as JSON writes it: an integer when it is whole (3, not 3.0)."""
    f = float(x)
    return int(f) if f == int(f) else f


def _maybe(x: Decimal | Fraction | float | None) -> float | None:
    return None if x is None else _number(x)


@dataclass(frozen=True, kw_only=True)
class NodeAxisDoc:
    """An axis that adds 0, 1, … nodes like a template node."""

    change: Literal["addNodes"] = "addNodes"
    template: str
    values: tuple[int, ...]
    price_per_node: float | None


@dataclass(frozen=True, kw_only=True)
class ScaleAxisDoc:
    """An axis that scales a workload to each of its replica counts."""

    change: Literal["scale"] = "scale"
    workload: str
    values: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class HpaAxisDoc:
    """An axis that scales every HorizontalPodAutoscaler's target to each of its bounds (a
    point's value indexes ``values``)."""

    change: Literal["hpa"] = "hpa"
    values: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ReleaseAxisDoc:
    """An axis of the Kubernetes releases modelled (a point's value indexes ``values``)."""

    change: Literal["release"] = "release"
    values: tuple[str, ...]


Axis = NodeAxisDoc | ScaleAxisDoc | HpaAxisDoc | ReleaseAxisDoc


@dataclass(frozen=True, kw_only=True)
class RunDoc:
    """One simulation of a point, with one seed."""

    seed: int
    fits: bool
    pending: int
    scheduled: int
    gated: int
    preempted: int
    nodes: int
    cpu: CpuShare
    memory: MemoryShare
    #: with --autoscaler only: the nodes it launched and their price per hour
    launched: int | None = member(omit=is_none, default=None)
    launched_price_per_hour: float | None = member(omit=is_none, default=None)


@dataclass(frozen=True, kw_only=True)
class PendingRange:
    """Pending pods left over the seeds: fewest, median, most."""

    min: int
    median: float
    max: int


@dataclass(frozen=True, kw_only=True)
class PercentRange:
    """Smallest and largest requested share over the seeds (null when nothing is allocatable)."""

    min: int | None
    max: int | None


@dataclass(frozen=True, kw_only=True)
class PointDoc:
    """A grid point: the axes' values, its changes, and its runs."""

    index: int
    values: tuple[int, ...]
    changes: tuple[str, ...]
    added_nodes: int
    cost: float | None
    fits: int
    fit_probability: float
    pending: PendingRange
    cpu_percent: PercentRange
    memory_percent: PercentRange
    runs: tuple[RunDoc, ...]
    #: the release the point was modelled at (a release axis only)
    release: str | None = member(omit=is_none, default=None)
    #: the bound the autoscalers scaled their targets to (an --hpa axis only)
    hpa: str | None = member(omit=is_none, default=None)


@dataclass(frozen=True, kw_only=True)
class Choice:
    """A point that fits with probability >= confidence."""

    index: int
    changes: tuple[str, ...]
    cost: float | None
    added_nodes: int
    fit_probability: float


@dataclass(frozen=True, kw_only=True)
class ScaleChoice:
    """The cheapest fitting point for one combination of the scaled workloads' replica counts."""

    replicas: dict[str, int]
    cheapest: Choice | None
    #: the release of these points (a release axis only)
    release: str | None = member(omit=is_none, default=None)
    #: the autoscalers' bound of these points (an --hpa axis only)
    hpa: str | None = member(omit=is_none, default=None)


@dataclass(frozen=True, kw_only=True)
class BestPoint:
    """When no point fits: the point that comes closest (highest fit probability, then fewest
    pods left pending), and the pods its runs leave pending (up to 50 per run, the seeds'
    union in run order)."""

    index: int
    changes: tuple[str, ...]
    fit_probability: float
    pending: PendingRange
    pending_pods: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class SweepSummary:
    points: int
    simulations: int
    points_that_fit: int


@dataclass(frozen=True, kw_only=True)
class SweepDocument:
    """The result of ``kplan sweep``: every grid point's runs, and the cheapest points that fit."""

    api_version: ApiVersion = API_VERSION
    kind: Literal["SweepResult"] = "SweepResult"
    #: the release modelled
    release: ReleaseInfo | None = member(omit=is_none, default=None)
    seeds: tuple[int, ...]
    tie_break: str
    confidence: float
    axes: tuple[Axis, ...]
    fixed_changes: tuple[str, ...]
    summary: SweepSummary
    cheapest: tuple[Choice, ...]
    cheapest_per_scale: tuple[ScaleChoice, ...]
    points: tuple[PointDoc, ...]
    #: null unless no point fits with probability >= confidence
    best_point: BestPoint | None = member(omit=is_none, default=None)
    timing: dict[str, float] | None = member(omit=is_none, default=None)

    @property
    def priced(self) -> bool:
        """Nodes of an axis have a price (--price), or an autoscaler's new nodes do (--autoscaler)."""
        return (any(isinstance(a, NodeAxisDoc) and a.price_per_node is not None for a in self.axes)
                or any(p.cost is not None for p in self.points))


def _axis(a: PlanAxis) -> Axis:
    if isinstance(a, NodeAxis):
        return NodeAxisDoc(template=a.template_name, values=tuple(a.values), price_per_node=_maybe(a.price))
    if isinstance(a, HpaAxis):
        return HpaAxisDoc(values=a.words)
    if isinstance(a, ReleaseAxis):
        return ReleaseAxisDoc(values=a.words)
    return ScaleAxisDoc(workload=a.workload or a.target, values=tuple(a.values))


def _word(axes: Sequence[PlanAxis], values: Sequence[int], kind: type[WordAxis]) -> str | None:
    """The word of the point's value on the first of ``axes`` of ``kind`` (None without one)."""
    for a, v in zip(axes, values, strict=True):
        if isinstance(a, kind):
            return a.word(v)
    return None


def _run(r: RunSummary) -> RunDoc:
    return RunDoc(seed=r.seed, fits=r.fits, pending=r.pending, scheduled=r.scheduled, gated=r.gated,
                  preempted=r.preempted, nodes=r.nodes,
                  cpu=CpuShare(requested=r.cpu_requested, allocatable=r.cpu_allocatable,
                               percent=percent(r.cpu_requested, r.cpu_allocatable)),
                  memory=MemoryShare(requested=r.memory_requested, allocatable=r.memory_allocatable,
                                     percent=percent(r.memory_requested, r.memory_allocatable)),
                  launched=r.launched, launched_price_per_hour=r.launched_price)


def _point(plan: SweepPlan, p: PointResult) -> PointDoc:
    lo, med, hi = p.pending()
    cpu, mem = p.share("cpu"), p.share("memory")
    return PointDoc(index=p.index, values=tuple(p.values), changes=tuple(plan.describe(p.values)),
                    added_nodes=p.added_nodes, cost=_maybe(p.cost), fits=p.fits,
                    fit_probability=_number(p.fit_probability), pending=PendingRange(min=lo, median=_number(med), max=hi),
                    cpu_percent=PercentRange(min=cpu[0], max=cpu[1]), memory_percent=PercentRange(min=mem[0], max=mem[1]),
                    runs=tuple(_run(r) for r in p.runs), release=_word(plan.axes, p.values, ReleaseAxis),
                    hpa=_word(plan.axes, p.values, HpaAxis))


def _choice(plan: SweepPlan, p: PointResult) -> Choice:
    return Choice(index=p.index, changes=tuple(plan.describe(p.values)), cost=_maybe(p.cost),
                  added_nodes=p.added_nodes, fit_probability=_number(p.fit_probability))


def _best(plan: SweepPlan, points: Sequence[PointResult]) -> BestPoint | None:
    p = best_unfitting(points)
    if p is None:
        return None
    lo, med, hi = p.pending()
    names: dict[str, None] = {}
    for r in p.runs:
        names.update(dict.fromkeys(r.unplaced))
    return BestPoint(index=p.index, changes=tuple(plan.describe(p.values)), fit_probability=_number(p.fit_probability),
                     pending=PendingRange(min=lo, median=_number(med), max=hi), pending_pods=tuple(names))


def sweep_document(plan: SweepPlan, fixed: Sequence[str], seeds: Sequence[int], tie_break: str,
                   confidence: Fraction, points: Sequence[PointResult], timing: dict[str, float] | None = None
                   ) -> SweepDocument:
    best = cheapest(points, confidence)
    groups = [plan.axes[i] for i in grouping_axes(plan)]

    def per_scale(key: tuple[int, ...], p: PointResult | None) -> ScaleChoice:
        at = dict(zip(groups, key, strict=True))
        return ScaleChoice(replicas={a.workload or a.target: v for a, v in at.items() if isinstance(a, ScaleAxis)},
                           cheapest=_choice(plan, p) if p is not None else None,
                           release=_word(groups, key, ReleaseAxis), hpa=_word(groups, key, HpaAxis))

    return SweepDocument(
        seeds=tuple(seeds),
        tie_break=tie_break,
        confidence=_number(confidence),
        axes=tuple(_axis(a) for a in plan.axes),
        fixed_changes=tuple(fixed),
        summary=SweepSummary(points=len(points), simulations=sum(len(p.runs) for p in points),
                             points_that_fit=sum(1 for p in points if p.fit_probability >= confidence)),
        cheapest=tuple(_choice(plan, p) for p in best),
        cheapest_per_scale=tuple(per_scale(key, p) for key, p in cheapest_by_scale(plan, points, confidence)),
        points=tuple(_point(plan, p) for p in points),
        best_point=_best(plan, points) if not best else None,
        timing=timing,
    )
