"""The pure part of ``kplan sweep``: ranges, the grid and its changes, cost, fit probability, ranking;
and the command's option parsing (before any loading)."""

from __future__ import annotations

import pickle
from decimal import Decimal
from fractions import Fraction

import pytest

from kplan.cli.change_options import parse_prices
from kplan.cli.sweep import parse_confidence, parse_plan
from kplan.errors import InputError
from kplan.model.objects import Node
from kplan.whatif.changes import CloneNode, DrainNode
from kplan.whatif.sweep import (
    AxisStep,
    Fixed,
    NodeAxis,
    PointResult,
    RunSummary,
    ScaleAxis,
    SweepPlan,
    best_unfitting,
    cheapest,
    cheapest_by_scale,
    parse_range,
    point_results,
    split_chains,
)

RANGES = [
    ("a single value", "5", (5,)),
    ("zero is a value", "0", (0,)),
    ("both ends are included", "0..3", (0, 1, 2, 3)),
    ("a step", "0..20:5", (0, 5, 10, 15, 20)),
    ("a step that overshoots keeps the upper end", "3..30:10", (3, 13, 23, 30)),
    ("an empty range of one", "4..4", (4,)),
]


@pytest.mark.parametrize(("text", "values"), [c[1:] for c in RANGES], ids=[c[0] for c in RANGES])
def test_ranges(text: str, values: tuple[int, ...]) -> None:
    assert parse_range(text, "--x") == values


BAD_RANGES = [
    ("a backwards range", "5..1", "runs backwards"),
    ("a zero step", "0..4:0", "STEP must be at least 1"),
    ("a negative number", "-1..3", "expected N, FROM..TO"),
    ("words", "some", "expected N, FROM..TO"),
    ("an open range", "3..", "expected N, FROM..TO"),
]


@pytest.mark.parametrize(("text", "message"), [c[1:] for c in BAD_RANGES], ids=[c[0] for c in BAD_RANGES])
def test_bad_ranges_are_refused_with_the_option_named(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as e:
        parse_range(text, "--scale deployment/web=" + text)
    assert str(e.value).startswith("--scale deployment/web=")


def test_the_grid_is_the_product_of_the_axes_with_the_last_varying_fastest() -> None:
    plan = SweepPlan((NodeAxis("a", (0, 1)), ScaleAxis("deployment/web", (3, 4, 5))), (AxisStep(0), AxisStep(1)))
    assert plan.points() == [(0, 3), (0, 4), (0, 5), (1, 3), (1, 4), (1, 5)]
    assert plan.size() == 6


CHAINS = [
    ("no scale axis: every point alone", (NodeAxis("a", (0, 1, 2)),), None, [[0], [1], [2]]),
    ("one scale axis: one chain per node count, smallest first",
     (NodeAxis("a", (0, 1)), ScaleAxis("deployment/web", (3, 4, 5))), 1, [[0, 1, 2], [3, 4, 5]]),
    ("the scale axis first", (ScaleAxis("deployment/web", (3, 4)), NodeAxis("a", (0, 1, 2))), 0,
     [[0, 3], [1, 4], [2, 5]]),
    ("of two scale axes, the one with more values", (ScaleAxis("deployment/web", (3, 4, 5)),
                                                     ScaleAxis("deployment/api", (1, 2))), 0, [[0, 2, 4], [1, 3, 5]]),
    ("of equal ones, the last", (ScaleAxis("deployment/web", (3, 4)), ScaleAxis("deployment/api", (1, 2))), 1,
     [[0, 1], [2, 3]]),
    ("a scale axis of one value is no chain", (NodeAxis("a", (0, 1)), ScaleAxis("deployment/web", (3,))), None,
     [[0], [1]]),
]


@pytest.mark.parametrize(("axes", "axis", "chains"), [c[1:] for c in CHAINS], ids=[c[0] for c in CHAINS])
def test_chains_are_the_points_that_differ_in_one_scale_axis_only(axes: tuple[NodeAxis | ScaleAxis, ...],
                                                                   axis: int | None, chains: list[list[int]]) -> None:
    plan = SweepPlan(axes, tuple(AxisStep(i) for i in range(len(axes))))
    assert plan.chain_axis() == axis
    assert plan.chains() == chains
    assert sorted(i for c in chains for i in c) == list(range(plan.size()))


SPLITS = [
    ("enough chains: kept whole", [[0, 1, 2], [3, 4, 5]], 2, [[0, 1, 2], [3, 4, 5]]),
    ("fewer chains than tasks: cut evenly", [[0, 1, 2, 3, 4]], 2, [[0, 1, 2], [3, 4]]),
    ("cut into at most one point each", [[0, 1], [2]], 8, [[0], [1], [2]]),
    ("each chain cut alike", [[0, 1, 2, 3], [4, 5, 6, 7]], 4, [[0, 1], [2, 3], [4, 5], [6, 7]]),
    ("no chains", [], 4, []),
]


@pytest.mark.parametrize(("chains", "tasks", "pieces"), [c[1:] for c in SPLITS], ids=[c[0] for c in SPLITS])
def test_chains_are_cut_into_neighbouring_points_for_the_workers(chains: list[list[int]], tasks: int,
                                                                 pieces: list[list[int]]) -> None:
    assert split_chains(chains, tasks) == pieces


def test_a_points_changes_keep_the_given_order_and_zero_nodes_is_no_change() -> None:
    plan = SweepPlan((NodeAxis("a", (0, 2)), ScaleAxis("deployment/web", (3,)), NodeAxis("b", (1,))),
                     (AxisStep(0), AxisStep(2), AxisStep(1), Fixed(DrainNode("n1"))))
    seen: list[str] = []

    def resolve(spec: str) -> DrainNode:  # stands in for the scale delta
        seen.append(spec)
        return DrainNode(spec)

    assert plan.changes((2, 3, 1), resolve) == [CloneNode("a", 2), CloneNode("b", 1), DrainNode("deployment/web=3"),
                                                DrainNode("n1")]
    assert plan.changes((0, 3, 1), resolve)[0] == CloneNode("b", 1)
    assert seen == ["deployment/web=3", "deployment/web=3"]


def run(seed: int, pending: int) -> RunSummary:
    return RunSummary(seed, pending, 10 - pending, 0, 0, 1000, 4000, 2, 8, 3)


def test_fit_probability_and_pending_spread_over_the_seeds() -> None:
    p = PointResult(0, (1,), (run(0, 0), run(1, 2), run(2, 0), run(3, 1)), 1, None)
    assert p.fits == 2 and p.fit_probability == Fraction(1, 2)
    assert p.pending() == (0, 0.5, 2)
    assert p.share("cpu") == (25, 25) and p.share("memory") == (25, 25)


def test_cost_counts_the_nodes_the_axes_add_at_their_prices() -> None:
    plan = SweepPlan((NodeAxis("a", (0, 2), Decimal("0.38")), NodeAxis("b", (0, 1), Decimal("1.5"))),
                     (AxisStep(0), AxisStep(1)))
    assert [plan.cost(v) for v in plan.points()] == [Decimal(0), Decimal("1.5"), Decimal("0.76"), Decimal("2.26")]
    assert SweepPlan((NodeAxis("a", (1,)),), (AxisStep(0),)).cost((1,)) is None


def test_the_cheapest_fitting_points_by_cost_then_nodes_then_grid_order() -> None:
    plan = SweepPlan((NodeAxis("a", (0, 1, 2), Decimal("2")), NodeAxis("b", (0, 1, 2), Decimal("1"))),
                     (AxisStep(0), AxisStep(1)))
    # fits when the nodes add up to at least 2 "a"-sized nodes, where a b counts half
    points = point_results(plan, [[run(0, 0 if 2 * a + b >= 4 else 1)] for a, b in plan.points()])
    best = cheapest(points, Fraction(1))
    # (2, 0) and (1, 2) cost the same: the one with fewer nodes first
    assert [(p.values, p.cost) for p in best] == [((2, 0), Decimal(4)), ((1, 2), Decimal(4)), ((2, 1), Decimal(5))]


def test_the_cheapest_node_mix_for_each_workload_size() -> None:
    plan = SweepPlan((NodeAxis("a", (0, 1, 2)), ScaleAxis("deployment/web", (3, 6, 9), "Deployment default/web")),
                     (AxisStep(0), AxisStep(1)))
    points = point_results(plan, [[run(0, 0 if web <= 3 * (a + 1) else 1)] for a, web in plan.points()])
    by_size = cheapest_by_scale(plan, points, Fraction(1))
    assert [(k, p.values if p else None) for k, p in by_size] == [((3,), (0, 3)), ((6,), (1, 6)), ((9,), (2, 9))]


def test_when_no_point_fits_the_closest_names_the_pods_it_leaves_pending() -> None:
    from kplan.report.sweep import sweep_document

    plan = SweepPlan((NodeAxis("a", (0, 1, 2)),), (AxisStep(0),))

    def left(seed: int, names: tuple[str, ...]) -> RunSummary:
        return RunSummary(seed, len(names), 10 - len(names), 0, 0, 1000, 4000, 2, 8, 3, names)

    points = point_results(plan, [[left(0, ("ns/a", "ns/b", "ns/c"))], [left(0, ("ns/b",)), left(1, ("ns/c",))],
                                  [left(0, ("ns/b",)), left(1, ("ns/b", "ns/c"))]])
    best = best_unfitting(points)
    assert best is not None and best.values == (1,), "fewest pending (median 1), then fewest nodes"
    doc = sweep_document(plan, [], [0, 1], "random", Fraction(1), points)
    assert doc.best_point is not None and doc.best_point.pending_pods == ("ns/b", "ns/c")
    fitting = point_results(plan, [[run(0, 1)], [run(0, 0)], [run(0, 0)]])
    assert sweep_document(plan, [], [0], "random", Fraction(1), fitting).best_point is None


def test_a_sweep_plan_with_a_node_template_survives_pickling() -> None:
    node = Node(name="big", allocatable={"cpu": 4000})
    plan = SweepPlan((NodeAxis(node, (0, 1)),), (AxisStep(0),))
    assert pickle.loads(pickle.dumps(plan)).axes[0].template_name == "big"


BAD_OPTIONS = [
    ("a price for a node no axis adds", dict(add_node=["like=a:0..2"], prices=["like=b=1"]),
     "--price like=b=…: no --add-node axis adds nodes like b"),
    ("prices for some node types only", dict(add_node=["like=a:0..2", "like=b:0..1"], prices=["like=a=1"]),
     "--price: nodes like b have no price"),
    ("a price that is not a number", dict(add_node=["like=a:0..2"], prices=["like=a=cheap"]),
     "--price like=a=cheap: PRICE must be a number"),
    ("a negative price", dict(add_node=["like=a:0..2"], prices=["like=a=-1"]), "at least 0"),
    ("a price without like=", dict(add_node=["like=a:0..2"], prices=["a=1"]), "expected like=NODE=PRICE"),
    ("a scale without a range", dict(scale=["deployment/web"]), "expected KIND/[NAMESPACE/]NAME=FROM..TO"),
    ("a scale of a DaemonSet", dict(scale=["daemonset/agent=1..3"]), "has no replica count"),
    ("a node range without a node", dict(add_node=["like=:0..3"]), "give like=NODE:FROM..TO"),
    ("a grid far too large", dict(add_node=["like=a:0..1000", "like=b:0..1000"]), "more than 100,000"),
    ("more nodes than a cluster holds", dict(add_node=["like=a:0..100000:50000"]), "at most 5000 nodes"),
    ("more replicas than a workload may have", dict(scale=["deployment/web=1..1000000:999999"]), "100000"),
]


@pytest.mark.parametrize(("kw", "message"), [c[1:] for c in BAD_OPTIONS], ids=[c[0] for c in BAD_OPTIONS])
def test_bad_options_are_one_line_errors_before_any_loading(kw: dict[str, list[str]], message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_plan(kw.get("add_node", []), kw.get("scale", []), [], [], [], parse_prices(kw.get("prices", [])))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_single_values_are_axes_of_one_point_and_files_without_range_are_fixed() -> None:
    plan, fixed = parse_plan(["like=a", "like=b:3"], ["deployment/web=4"], ["c1"], ["d1"], [], {})
    assert [a.values for a in plan.axes] == [(1,), (3,), (4,)]
    assert fixed == ["cordon node c1", "drain node d1"]


@pytest.mark.parametrize(("value", "share"), [(1.0, Fraction(1)), (0.9, Fraction(9, 10)), (0, Fraction(0))],
                         ids=["certain", "nine in ten is exactly nine in ten", "anything"])
def test_confidence(value: float, share: Fraction) -> None:
    assert parse_confidence(value) == share


def test_confidence_above_one_is_refused() -> None:
    with pytest.raises(InputError, match="between 0 and 1"):
        parse_confidence(1.5)


# ------------------------------------------------------------ the release and autoscaler axes

def test_several_releases_and_bounds_are_axes_after_the_others_in_whatifs_order() -> None:
    from kplan.whatif.sweep import HpaAxis, ReleaseAxis

    plan, _ = parse_plan(["like=a:0..1"], ["deployment/web=2..3"], ["c1"], [], [], {}, "none,max",
                         ("1.34", "1.37"))
    assert [type(a) for a in plan.axes] == [NodeAxis, ScaleAxis, HpaAxis, ReleaseAxis]
    assert plan.size() == 2 * 2 * 2 * 2
    # the autoscalers scale with the workloads, before the cordon; the release is no change
    assert plan.steps == (AxisStep(0), AxisStep(1), AxisStep(2), Fixed(plan.steps[-1].change))
    assert [plan.release_index(v) for v in plan.points()[:2]] == [0, 1]
    assert plan.describe((1, 3, 1, 1)) == ["add 1 node like a", "scale deployment/web to 3",
                                           "HorizontalPodAutoscalers at max", "kube-scheduler 1.37"]
    assert plan.describe((0, 2, 0, 0))[2:] == ["HorizontalPodAutoscalers off (declared replicas)",
                                               "kube-scheduler 1.34"]
    assert plan.chain_axis() == 1, "points along the scale axis share their release and bound"


def test_one_release_is_no_axis_and_repeated_words_count_once() -> None:
    from kplan.whatif.sweep import HpaAxis

    plan, _ = parse_plan(["like=a:0..1"], [], [], [], [], {}, "max,max", ("1.37",))
    assert [type(a) for a in plan.axes] == [NodeAxis, HpaAxis]
    assert plan.axes[1].values == (0,) and plan.release_index((1, 0)) == 0


def test_an_hpa_axis_point_gets_the_scale_changes_of_its_bound_with_the_autoscaler_named() -> None:
    from kplan.whatif.changes import AutoscaledBy, ScaleWorkload
    from kplan.whatif.sweep import HpaAxis

    by = AutoscaledBy("shop/web", "max", "maxReplicas")
    plan = SweepPlan((HpaAxis(("none", "max"), ((), (("deployment/shop/web=8", by),))),), (AxisStep(0),))
    asked: list[str] = []

    def resolve(spec: str) -> ScaleWorkload:
        asked.append(spec)
        return ScaleWorkload("Deployment shop/web", int(spec.rpartition("=")[2]), 3)

    assert plan.changes((0,), resolve) == []
    (change,) = plan.changes((1,), resolve)
    assert asked == ["deployment/shop/web=8"] and change.autoscaler == by and change.replicas == 8
    assert pickle.loads(pickle.dumps(plan)) == plan


def test_cheapest_per_release_groups_the_points_of_each_release() -> None:
    from kplan.whatif.sweep import ReleaseAxis

    plan = SweepPlan((NodeAxis("a", (0, 1)), ReleaseAxis(("1.34", "1.37"))), (AxisStep(0),))
    fits = {(0, 0): False, (0, 1): True, (1, 0): True, (1, 1): True}
    points = point_results(plan, [[RunSummary(0, 0 if fits[v] else 1, 1, 0, 0, 1, 2, 1, 2, 1)]
                                  for v in plan.points()])
    best = {key: p.values if p else None for key, p in cheapest_by_scale(plan, points, Fraction(1))}
    assert best == {(0,): (1, 0), (1,): (0, 1)}, "1.34 needs a node, 1.37 none"


@pytest.mark.parametrize(("value", "option", "message"), [
    ("1.34,,1.37", "--kube-version", "--kube-version 1.34,,1.37: give values separated by commas"),
    ("max,", "--hpa", "--hpa max,: give values separated by commas, e.g. --hpa max,min"),
])
def test_empty_axis_words_are_refused(value: str, option: str, message: str) -> None:
    from kplan.cli.sweep import parse_words

    with pytest.raises(InputError, match=message):
        parse_words(value, option)


def test_an_unknown_bound_is_refused_before_loading() -> None:
    with pytest.raises(InputError, match="--hpa most: expected one of max, min, current, none"):
        parse_plan(["like=a:0..1"], [], [], [], [], {}, "max,most")
