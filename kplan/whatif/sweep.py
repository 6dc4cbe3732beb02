"""Sweeps: many what-ifs over a grid of changes, each simulated with several seeds (``kplan sweep``).

A sweep's *axes* are numbers of nodes like a template (``--add-node like=NODE:0..20``),
workloads' replica counts (``--scale KIND/NS/NAME=3..30``), the bound the HorizontalPodAutoscalers
scale their targets to (``--hpa none,max``) and the Kubernetes release modelled (``--kube-version
1.34,1.37``: each point runs with its release's scheduler, gates and messages); the grid is their
product, in the order nodes, scales, autoscalers, release. An axis of words (bounds, releases)
takes the index of its word as the point's value. Besides the axes, a sweep has *fixed* changes (``--drain``, an
``--add-node`` file, …) that every point gets. A point's changes are ordered as ``kplan whatif``
orders them (added nodes, scaled workloads, cordons, drains, removals), and each (point, seed) is
simulated exactly as ``kplan whatif`` simulates the run after those changes with that seed.

Kube-scheduler breaks equal top scores at random, so one point can end differently from seed to
seed: its *fit probability* is the share of seeds in which every pending pod is scheduled (gated
pods aside), and its pending counts over the seeds give the spread.

This module is the pure part: grid, run summaries, aggregates, cost, ranking. Where runs happen
(worker processes, a Dask cluster) is decided above it.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from kplan.cluster.resources import CPU, MEMORY
from kplan.errors import InputError
from kplan.model.objects import Node
from kplan.scheduler.pod_status import PodStatus
from kplan.scheduler.simulate import SimulationResult
from kplan.whatif.autoscale import Autoscaling
from kplan.whatif.changes import AutoscaledBy, Change, CloneNode, ScaleWorkload

#: more points than this is almost surely a typo in a range (and hours of work): refuse it
MAX_POINTS = 100_000
RANGE = re.compile(r"^(?P<lo>[0-9]+)(?:\.\.(?P<hi>[0-9]+)(?::(?P<step>[0-9]+))?)?$")


def parse_range(text: str, where: str) -> tuple[int, ...]:
    """``N``, ``A..B`` or ``A..B:STEP`` (both ends included) → the values."""
    m = RANGE.match(text)
    if m is None:
        raise InputError(f"{where}: expected N, FROM..TO or FROM..TO:STEP (whole numbers), got {text!r}")
    lo = int(m["lo"])
    if m["hi"] is None:
        return (lo,)
    hi, step = int(m["hi"]), int(m["step"] or 1)
    if hi < lo:
        raise InputError(f"{where}: the range {text} runs backwards; write {hi}..{lo}")
    if step < 1:
        raise InputError(f"{where}: STEP must be at least 1")
    values = tuple(range(lo, hi + 1, step))
    if values[-1] != hi:  # the upper end is asked for explicitly: never drop it silently
        values += (hi,)
    return values


# ------------------------------------------------------------------------------ the plan

@dataclass(frozen=True)
class NodeAxis:
    """``count`` empty nodes like ``template``, the count from the point's value."""

    template: str | Node
    values: tuple[int, ...]
    #: price of one such node per hour (any unit), when --price names it
    price: Decimal | None = None

    @property
    def template_name(self) -> str:
        return self.template if isinstance(self.template, str) else self.template.name

    @property
    def label(self) -> str:
        return f"nodes like {self.template_name}"


@dataclass(frozen=True)
class ScaleAxis:
    """A workload (``KIND/[NS/]NAME`` as --scale writes it) scaled to the point's value."""

    target: str
    values: tuple[int, ...]
    #: "Deployment shop/web", as resolved against the inputs
    workload: str = ""

    @property
    def label(self) -> str:
        return f"replicas of {self.workload or self.target}"


@dataclass(frozen=True)
class WordAxis:
    """An axis of words (autoscaler bounds, releases): the point's value is the index of its word
    in ``words``."""

    words: tuple[str, ...]

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(range(len(self.words)))

    def word(self, value: int) -> str:
        return self.words[value]


@dataclass(frozen=True)
class HpaAxis(WordAxis):
    """Every HorizontalPodAutoscaler's target at a bound (``--hpa max,min,current,none``): the
    words are the bounds."""

    #: per bound, the --scale value of each target and the autoscaler that asks for it, resolved
    #: against the inputs (kplan.io.hpa) before any worker starts
    targets: tuple[tuple[tuple[str, AutoscaledBy], ...], ...] = ()

    @property
    def label(self) -> str:
        return "HorizontalPodAutoscalers at"


@dataclass(frozen=True)
class ReleaseAxis(WordAxis):
    """The release modelled (``--kube-version 1.34,1.37``): the words are the releases ("1.34");
    the runs of a point use that release's scheduler (kplan.io.sweep)."""

    @property
    def label(self) -> str:
        return "release"


Axis = NodeAxis | ScaleAxis | HpaAxis | ReleaseAxis


@dataclass(frozen=True)
class Fixed:
    """A change every point gets (``--add-node FILE``, ``--cordon``, ``--drain``, ``--remove-node``)."""

    change: Change


@dataclass(frozen=True)
class AxisStep:
    axis: int


Step = Fixed | AxisStep


@dataclass(frozen=True)
class SweepPlan:
    axes: tuple[Axis, ...]
    #: every change of a point in the order it applies; AxisStep takes the point's value
    steps: tuple[Step, ...]

    def points(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*(a.values for a in self.axes)))

    def size(self) -> int:
        n = 1
        for a in self.axes:
            n *= len(a.values)
        return n

    def changes(self, values: Sequence[int], resolve_scale: Callable[[str], Change]) -> list[Change]:
        """The changes of the point ``values``; ``resolve_scale("KIND/NS/NAME=N")`` turns a scale into
        its delta against the inputs (kplan.io.scale, with the run's seed)."""
        out: list[Change] = []
        for step in self.steps:
            if isinstance(step, Fixed):
                out.append(step.change)
            else:
                axis, value = self.axes[step.axis], values[step.axis]
                if isinstance(axis, NodeAxis):
                    if value:  # no nodes added is no change, as whatif without --add-node
                        out.append(CloneNode(axis.template, value))
                elif isinstance(axis, ScaleAxis):
                    out.append(resolve_scale(f"{axis.target}={value}"))
                elif isinstance(axis, HpaAxis) and axis.targets:
                    for spec, by in axis.targets[value]:
                        change = resolve_scale(spec)
                        assert isinstance(change, ScaleWorkload)
                        out.append(dataclasses.replace(change, autoscaler=by))
        return out

    def release_index(self, values: Sequence[int]) -> int:
        """The index of the point's release among the release axis's (0 without one)."""
        for axis, v in zip(self.axes, values, strict=True):
            if isinstance(axis, ReleaseAxis):
                return v
        return 0

    def release_axis(self) -> ReleaseAxis | None:
        return next((a for a in self.axes if isinstance(a, ReleaseAxis)), None)

    def chain_axis(self) -> int | None:
        """The scale axis along which points are simulated together (Planner.simulate_subsets):
        the one with the most values, the last of equals; None without a scale axis of two values."""
        best: int | None = None
        for i, a in enumerate(self.axes):
            if isinstance(a, ScaleAxis) and len(a.values) > 1 and (best is None or len(a.values) >= len(
                    self.axes[best].values)):
                best = i
        return best

    def chains(self) -> list[list[int]]:
        """The points (indices into ``points()``) in chains: those that differ only in the chain
        axis's value, from its smallest to its largest. A point's pending pods are then often the
        largest's without some replicas (the newest, for a scale-up), so that one run of the
        largest serves them (kplan.io.sweep.run_chain). Every point is in one chain."""
        axis = self.chain_axis()
        points = self.points()
        if axis is None:
            return [[i] for i in range(len(points))]
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, values in enumerate(points):
            groups.setdefault(values[:axis] + values[axis + 1:], []).append(i)
        return [sorted(g, key=lambda i: points[i][axis]) for g in groups.values()]

    def describe(self, values: Sequence[int]) -> list[str]:
        """The axis changes of a point, in words (fixed changes are listed once for the sweep)."""
        out = []
        for axis, v in zip(self.axes, values, strict=True):
            if isinstance(axis, NodeAxis):
                out.append(f"add {v} node{'s' if v != 1 else ''} like {axis.template_name}")
            elif isinstance(axis, ScaleAxis):
                out.append(f"scale {axis.workload or axis.target} to {v}")
            elif isinstance(axis, HpaAxis):
                bound = axis.word(v)
                out.append("HorizontalPodAutoscalers off (declared replicas)" if bound == "none"
                           else f"HorizontalPodAutoscalers at {bound}")
            else:
                out.append(f"kube-scheduler {axis.word(v)}")
        return out

    def added_nodes(self, values: Sequence[int]) -> int:
        return sum(v for a, v in zip(self.axes, values, strict=True) if isinstance(a, NodeAxis))

    def priced(self) -> bool:
        return any(isinstance(a, NodeAxis) and a.price is not None for a in self.axes)

    def cost(self, values: Sequence[int]) -> Decimal | None:
        """Price per hour of the nodes the axes add; None when no price was given."""
        if not self.priced():
            return None
        return sum((a.price * v for a, v in zip(self.axes, values, strict=True)
                    if isinstance(a, NodeAxis) and a.price is not None), Decimal(0))


# ------------------------------------------------------------------------------ results

@dataclass(frozen=True)
class RunSummary:
    """What a sweep keeps of one simulation: a few integers, cheap to send back from a worker."""

    seed: int
    #: pending pods the scheduler tried and did not schedule (gated pods are never tried)
    pending: int
    scheduled: int
    gated: int
    #: pods preempted during the run
    preempted: int
    cpu_requested: int
    cpu_allocatable: int
    memory_requested: int
    memory_allocatable: int
    nodes: int
    #: the first UNPLACED_KEPT pending pods left unscheduled (namespace/name), in the run's order
    unplaced: tuple[str, ...] = ()
    #: with --autoscaler: the nodes it launched, and what they cost per hour
    launched: int | None = None
    launched_price: float | None = None

    @property
    def fits(self) -> bool:
        return self.pending == 0


#: pending pods a run summary names (a summary travels back from a worker: it stays small)
UNPLACED_KEPT = 50


def summarize(seed: int, result: SimulationResult, autoscaling: Autoscaling | None = None) -> RunSummary:
    table = result.snapshot.table
    scheduled = sum(1 for o in result.pods if o.status == PodStatus.SCHEDULED)
    gated = sum(1 for o in result.pods if o.status == PodStatus.GATED)
    # the totals of every node, as kplan whatif's utilisation "(all)" row sums them
    unplaced = tuple(o.pod.key for o in result.pods
                     if o.status not in (PodStatus.SCHEDULED, PodStatus.GATED))[:UNPLACED_KEPT]
    return RunSummary(seed, len(result.pods) - scheduled - gated, scheduled, gated,
                      len(result.preempted),
                      int(table.requested[:, CPU].sum()), int(table.alloc[:, CPU].sum()),
                      int(table.requested[:, MEMORY].sum()), int(table.alloc[:, MEMORY].sum()), len(table), unplaced,
                      len(autoscaling.launched) if autoscaling is not None else None,
                      round(autoscaling.price_per_hour, 6) if autoscaling is not None else None)


def percent(used: int, total: int) -> int | None:
    """Whole percent, truncated, as the other documents give it; None when nothing is allocatable."""
    return used * 100 // total if total > 0 else None


@dataclass(frozen=True)
class PointResult:
    index: int
    values: tuple[int, ...]
    runs: tuple[RunSummary, ...]
    added_nodes: int
    cost: Decimal | None

    @property
    def fits(self) -> int:
        return sum(1 for r in self.runs if r.fits)

    @property
    def fit_probability(self) -> Fraction:
        return Fraction(self.fits, len(self.runs))

    def pending(self) -> tuple[int, float, int]:
        counts = [r.pending for r in self.runs]
        return min(counts), statistics.median(counts), max(counts)

    def share(self, resource: str) -> tuple[int | None, int | None]:
        """Smallest and largest requested share (whole percent) over the seeds."""
        if resource == "cpu":
            shares = [percent(r.cpu_requested, r.cpu_allocatable) for r in self.runs]
        else:
            shares = [percent(r.memory_requested, r.memory_allocatable) for r in self.runs]
        known = [s for s in shares if s is not None]
        return (min(known), max(known)) if known else (None, None)


def split_chains(chains: Sequence[Sequence[int]], tasks: int) -> list[list[int]]:
    """The chains cut into runs of neighbouring points so that there are at least ``tasks`` of
    them where the points allow (one per worker: a chain runs on one), each chain into pieces of
    sizes that differ by at most one."""
    pieces = max(1, -(-tasks // max(1, len(chains))))
    out: list[list[int]] = []
    for chain in chains:
        k = min(pieces, len(chain))
        size, extra = divmod(len(chain), k)
        start = 0
        for j in range(k):
            end = start + size + (1 if j < extra else 0)
            out.append(list(chain[start:end]))
            start = end
    return out


def point_results(plan: SweepPlan, runs: Sequence[Sequence[RunSummary]]) -> list[PointResult]:
    """``runs[i]`` are the runs of the i-th point of ``plan.points()``, in seed order. With
    --autoscaler, a point's cost adds the most its autoscaler's new nodes cost over the seeds (per
    hour, as the catalog prices them): the budget that covers every seed."""
    return [PointResult(i, values, tuple(rs), plan.added_nodes(values), _cost(plan.cost(values), rs))
            for i, (values, rs) in enumerate(zip(plan.points(), runs, strict=True))]


def _cost(axes: Decimal | None, runs: Sequence[RunSummary]) -> Decimal | None:
    launched = [r.launched_price for r in runs if r.launched_price is not None]
    if not launched:
        return axes
    return (axes or Decimal(0)) + Decimal(str(max(launched)))


def cheapest(points: Sequence[PointResult], confidence: Fraction, n: int = 3) -> list[PointResult]:
    """The ``n`` cheapest points whose fit probability reaches ``confidence``: by cost when priced,
    then by the number of nodes added, then in grid order."""
    fitting = [p for p in points if p.fit_probability >= confidence]
    return sorted(fitting, key=lambda p: (p.cost if p.cost is not None else Decimal(0), p.added_nodes,
                                          p.index))[:n]


def best_unfitting(points: Sequence[PointResult]) -> PointResult | None:
    """When no point fits: the point that comes closest, by fit probability, then the fewest
    pods left pending (median over the seeds), then cost and nodes added, then grid order."""
    if not points:
        return None
    return min(points, key=lambda p: (-p.fit_probability, p.pending()[1],
                                      p.cost if p.cost is not None else Decimal(0), p.added_nodes, p.index))


def grouping_axes(plan: SweepPlan) -> list[int]:
    """The axes whose every combination of values gets its own cheapest point: the scale axes
    (each workload size asked about), the autoscalers' bound and the release."""
    return [i for i, a in enumerate(plan.axes) if isinstance(a, (ScaleAxis, HpaAxis, ReleaseAxis))]


def cheapest_by_scale(plan: SweepPlan, points: Sequence[PointResult], confidence: Fraction
                      ) -> list[tuple[tuple[int, ...], PointResult | None]]:
    """For every combination of the values of the scale, autoscaler and release axes (each
    workload size, bound and release asked about), the cheapest point that fits: the node mix to
    buy for that growth, at that release. Empty without such axes."""
    scale_axes = grouping_axes(plan)
    if not scale_axes:
        return []
    groups: dict[tuple[int, ...], list[PointResult]] = {}
    for p in points:
        groups.setdefault(tuple(p.values[i] for i in scale_axes), []).append(p)
    return [(key, next(iter(cheapest(group, confidence, 1)), None)) for key, group in groups.items()]
