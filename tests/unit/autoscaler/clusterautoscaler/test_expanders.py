"""The expanders on the cases of the cluster-autoscaler's own unit tests, each naming its source file
(kubernetes/autoscaler cluster-autoscaler/expander/...)."""

from __future__ import annotations

import random
import re

import pytest

from kplan.autoscaler.clusterautoscaler.expander import Option, build_chain, parse_expanders, random_choice
from kplan.autoscaler.clusterautoscaler.leastnodes import least_nodes
from kplan.autoscaler.clusterautoscaler.mostpods import most_pods
from kplan.autoscaler.clusterautoscaler.priority import highest_priority
from kplan.autoscaler.clusterautoscaler.waste import least_waste
from kplan.errors import InputError
from kplan.model.objects import Node
from tests.builders import make_node, make_pod

# --- leastnodes/leastnodes_test.go, TestLeastNodes: (name, node counts given, indices kept)
LEAST_NODES = [
    ("no options", [], []),
    ("no valid options", [0], []),
    ("1 valid option", [2], [0]),
    ("2 valid options, not equal", [2, 1], [1]),
    ("3 valid options, 2 equal", [6, 2, 2], [1, 2]),
    ("3 valid options, all equal", [8, 8, 8], [0, 1, 2]),
    ("6 valid options, 1 invalid option, 3 equal", [23, 0, 5, 8, 5, 5, 22], [2, 4, 5]),
]


@pytest.mark.parametrize(("counts", "kept"), [pytest.param(c, k, id=n) for n, c, k in LEAST_NODES])
def test_least_nodes_as_upstream(counts: list[int], kept: list[int]) -> None:
    options = [Option(f"EO{i}", n) for i, n in enumerate(counts)]
    assert least_nodes(options) == [options[i] for i in kept]


# --- priority/priority_test.go: the option ids are node-group names
CONFIG = {5: [r".*t2\.micro.*"], 10: [r".*t2\.large.*", r".*t3\.large.*"], 50: [r".*m4\.4xlarge.*"]}
ONE_ENTRY = {10: [r".*t2\.large.*"]}
NOT_MATCHING = {5: [r".*t\.micro.*"], 10: [r".*t\.large.*"]}
WILDCARD = {5: [r".*"], 10: [r".t2\.large.*"]}
T2_MICRO, T2_LARGE, T3_LARGE, M4_4XLARGE = (Option(f"my-asg.{t}", 1) for t in ("t2.micro", "t2.large", "t3.large",
                                                                                "m4.4xlarge"))
PRIORITY = [
    ("correctly filters single matching option out of one", CONFIG, [T2_LARGE], [T2_LARGE]),
    ("correctly filters single matching option out of many", CONFIG, [T2_LARGE, M4_4XLARGE], [M4_4XLARGE]),
    ("filters to higher priority match", WILDCARD, [T2_LARGE, T2_MICRO], [T2_LARGE]),
    ("correctly filters two matching options out of many", CONFIG, [T2_LARGE, T3_LARGE, T2_MICRO],
     [T2_LARGE, T3_LARGE]),
    ("correctly falls back to all when no matches", NOT_MATCHING, [T2_LARGE, T3_LARGE], [T2_LARGE, T3_LARGE]),
    ("handles config update: one entry", ONE_ENTRY, [T2_LARGE, T3_LARGE, M4_4XLARGE], [T2_LARGE]),
    ("handles config update: full config", CONFIG, [T2_LARGE, T3_LARGE, M4_4XLARGE], [M4_4XLARGE]),
]


@pytest.mark.parametrize(("config", "options", "kept"), [pytest.param(c, o, k, id=n) for n, c, o, k in PRIORITY])
def test_priority_as_upstream(config: dict[int, list[str]], options: list[Option], kept: list[Option]) -> None:
    compiled = {p: [re.compile(r) for r in rs] for p, rs in config.items()}
    assert highest_priority(options, compiled) == kept


# --- waste/waste_test.go, TestLeastWaste: pods of 500m and 1000 MiB; nodes of 16 or 8 pods' CPU
CPU, MEM = 500, 1000 * 1024 * 1024


def template(cpu_pods: int, mem_pods: int) -> Node:
    return make_node("t").alloc(cpu=f"{cpu_pods * CPU}m", memory=str(mem_pods * MEM), pods="100").build()


POD = make_pod("p").req(cpu=f"{CPU}m", memory=str(MEM)).build()
BALANCED = Option("balanced", 1, (POD,), template(16, 16))
HIGHMEM = Option("highmem", 1, (POD,), template(16, 32))
LOWCPU = Option("lowcpu", 1, (POD,), template(8, 16))
WASTE = [
    ("without any pods, one node info", [Option("balanced", 1, (), template(16, 16))], "balanced"),
    ("one pod, one node info", [BALANCED], "balanced"),
    ("one pod, two node infos, one that has lots of RAM one that has less", [BALANCED, HIGHMEM], "balanced"),
    ("one pod, three node infos, one that has lots of RAM one that has less, and one that has less CPU",
     [BALANCED, HIGHMEM, LOWCPU], "lowcpu"),
]


@pytest.mark.parametrize(("options", "best"), [pytest.param(o, b, id=n) for n, o, b in WASTE])
def test_least_waste_as_upstream(options: list[Option], best: str) -> None:
    assert [o.node_group for o in least_waste(options)] == [best]


def test_least_waste_keeps_ties_and_skips_options_without_a_template() -> None:
    twin = Option("twin", 1, (POD,), template(16, 16))
    assert least_waste([BALANCED, Option("none", 1, (POD,)), twin]) == [BALANCED, twin]


# --- mostpods/mostpods_test.go, TestMostPods: options of no pod (EO0) and of one pod (EO1, EO1b)
EO0, EO1, EO1B = Option("EO0", 1), Option("EO1", 1, (POD,)), Option("EO1b", 1, (POD,))
MOST_PODS = [
    ("one option of no pod is kept", [EO0], [EO0]),
    ("the option of more pods wins", [EO0, EO1], [EO1]),
    ("options tied on the most pods are all kept", [EO0, EO1, EO1B], [EO1, EO1B]),
]


@pytest.mark.parametrize(("options", "kept"), [pytest.param(o, k, id=n) for n, o, k in MOST_PODS])
def test_most_pods_as_upstream(options: list[Option], kept: list[Option]) -> None:
    assert most_pods(options) == kept


def test_most_pods_keeps_every_option_helping_the_most_pods() -> None:
    a, b, c = Option("a", 1, (POD,)), Option("b", 3, (POD, POD)), Option("c", 2, (POD, POD))
    assert most_pods([a, b, c]) == [b, c]


# --- random/random_test.go, TestRandomExpander: one option is chosen; of two, either; of none, nothing
EO1A = Option("EO1a", 1)
RANDOM = [
    ("a single option is chosen", [EO1A], [EO1A]),
    ("of two options one of them is chosen", [EO1A, EO1B], [EO1A, EO1B]),
    ("no option gives no choice", [], [None]),
]


@pytest.mark.parametrize(("options", "allowed"), [pytest.param(o, a, id=n) for n, o, a in RANDOM])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_as_upstream(options: list[Option], allowed: list[Option | None], seed: int) -> None:
    assert random_choice(options, random.Random(seed)) in allowed


def test_random_draws_both_of_two_options_across_seeds() -> None:
    drawn = {random_choice([EO1A, EO1B], random.Random(s)) for s in range(20)}
    assert drawn == {EO1A, EO1B}


# --- factory/chain.go: a filter leaving one option decides; otherwise the random fallback
def test_the_chain_stops_at_the_first_filter_that_leaves_one_option() -> None:
    a, b = Option("a", 2, (POD, POD)), Option("b", 1, (POD, POD))
    chain = build_chain(parse_expanders("most-pods,least-nodes"), seed=1)
    assert chain.best_option([a, b]) == (b, "least-nodes")


def test_the_chain_falls_back_to_a_seeded_random_choice() -> None:
    options = [Option(f"g{i}", 1, (POD,)) for i in range(5)]
    rng = random.Random(7)
    expected = options[rng.randrange(5)]
    assert build_chain(["most-pods"], seed=7).best_option(options) == (expected, "random")


@pytest.mark.parametrize(("value", "message"), [
    pytest.param("cheapest", "unknown expander 'cheapest'", id="an unknown expander is refused"),
    pytest.param("random,random", "cannot be specified more than once", id="a repeated expander is refused"),
])
def test_expander_flag_errors(value: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_expanders(value)
