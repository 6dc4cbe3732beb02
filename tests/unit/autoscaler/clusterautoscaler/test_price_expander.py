"""The price expander on the cases of the cluster-autoscaler's TestPriceExpander
(kubernetes/autoscaler cluster-autoscaler/expander/price/price_test.go), with upstream's test pricing
model (prices by pod and node name, the stabilisation pod at 10), and kplan's pricing model
(kplan.autoscaler.clusterautoscaler.price)."""

from __future__ import annotations

import math

import pytest

from kplan.autoscaler.clusterautoscaler.expander import ClusterView, Option, build_chain, parse_expanders
from kplan.autoscaler.clusterautoscaler.price import (
    GPU_LABEL,
    best_priced,
    cheapest,
    node_unfitness,
    pod_price,
    preferred_cpu,
)
from kplan.model.objects import Node, Pod
from tests.builders import make_node, make_pod

# price_test.go: n1 of 1 core, n2 of 4 cores; p1 asks 1 core, p2 half a core (prices by name below)
N1 = make_node("n1").alloc(cpu="1000m", memory="1000", pods="110").build()
N2 = make_node("n2").alloc(cpu="4000m", memory="1000", pods="110").build()
P1 = make_pod("p1").req(cpu="1000m").build()
P2 = make_pod("p2").req(cpu="500m").build()
POD_PRICES = {"p1": 20.0, "p2": 10.0}
STABILIZE = 10.0


def option(group: str, template: Node, count: int, *pods: Pod) -> Option:
    return Option(group, count, pods, template)


BOTH = [option("ng1", N1, 2, P1, P2), option("ng2", N2, 1, P1, P2)]
MANY = [option("ng1", N1, 80, P1, P2), option("ng2", N2, 40, P1, P2)]
ONE_AND_TWO = [option("ng1", N1, 2, P1), option("ng2", N2, 1, P1, P2)]
# (name, options, node prices by node name, preferred node's milli-CPU, groups kept)
UPSTREAM = [
    ("first node group is cheaper", BOTH, {"n1": 20.0, "n2": 200.0}, 2000, ["ng1"]),
    ("first node group is cheaper, however, the second one is preferred", BOTH, {"n1": 50.0, "n2": 200.0}, 4000,
     ["ng2"]),
    ("first node group is cheaper, the second is preferred but there is lots of nodes to be created", MANY,
     {"n1": 20.0, "n2": 200.0}, 4000, ["ng1"]),
    ("second node group is cheaper", BOTH, {"n1": 200.0, "n2": 100.0}, 2000, ["ng2"]),
    ("both node groups are equally expensive, however 2 accept two pods", ONE_AND_TWO, {"n1": 200.0, "n2": 200.0},
     2000, ["ng2"]),
    ("errors are expected: no prices at all", ONE_AND_TWO, {}, 2000, []),
]
# Not carried over: the two cases of an autoprovisioned node group yet to be created (kplan's node
# groups all exist, so upstream's notExistCoeficient has nothing to apply to).


@pytest.mark.parametrize(("options", "node_prices", "preferred", "kept"),
                         [pytest.param(o, n, p, k, id=name) for name, o, n, p, k in UPSTREAM])
def test_price_expander_as_upstream(options: list[Option], node_prices: dict[str, float], preferred: int,
                                    kept: list[str]) -> None:
    def node_price(o: Option) -> float | None:
        return None if o.template is None else node_prices.get(o.template.name)

    got = best_priced(options, node_price, lambda p: POD_PRICES.get(p.name) if node_prices else None,
                      STABILIZE, preferred)
    assert [o.node_group for o in got] == kept


def test_an_option_with_an_unpriced_pod_is_skipped() -> None:
    stranger = make_pod("p3").req(cpu="1").build()
    options = [option("ng1", N1, 1, P1, stranger), option("ng2", N2, 4, P1)]
    got = best_priced(options, lambda o: 1.0, lambda p: POD_PRICES.get(p.name), STABILIZE, 1000)
    assert [o.node_group for o in got] == ["ng2"]


# --- kplan's pricing model: the AWS provider's pod prices, nodes priced by pricePerHour or the catalog
@pytest.mark.parametrize(("pod", "price"), [
    pytest.param(make_pod("m4").req(cpu="2", memory="8Gi").build(), 0.111, id="an m4.large's worth of pod costs $0.111"),
    pytest.param(make_pod("cpu").req(cpu="500m").build(), 0.013875, id="half a core costs a quarter of 0.0555"),
    pytest.param(make_pod("none").build(), 0.0, id="a pod without requests costs nothing"),
])
def test_pod_price_as_the_aws_pricing_model(pod: Pod, price: float) -> None:
    assert pod_price(pod) == pytest.approx(price, abs=1e-12)


@pytest.mark.parametrize(("nodes", "cores"), [
    pytest.param(0, 1, id="an empty cluster prefers 1 core"),
    pytest.param(2, 1, id="2 nodes prefer 1 core"),
    pytest.param(3, 2, id="3 nodes prefer 2 cores"),
    pytest.param(20, 4, id="20 nodes prefer 4 cores"),
    pytest.param(60, 8, id="60 nodes prefer 8 cores"),
    pytest.param(200, 16, id="200 nodes prefer 16 cores"),
    pytest.param(201, 32, id="201 nodes prefer 32 cores"),
])
def test_preferred_node_grows_with_the_cluster(nodes: int, cores: int) -> None:
    assert preferred_cpu(nodes) == cores * 1000


def test_unfitness_is_the_cpu_ratio_either_way() -> None:
    assert node_unfitness(2000, N1) == 2.0
    assert node_unfitness(2000, N2) == 2.0
    assert math.isinf(node_unfitness(2000, make_node("zero").alloc(cpu="0", memory="1").build()))


def test_a_gpu_node_is_picked_only_when_nothing_else_helps() -> None:
    gpu = make_node("g").alloc(cpu="4", memory="16Gi", pods="110").label_map({GPU_LABEL: "nvidia-t4"}).build()
    plain = make_node("c").alloc(cpu="4", memory="16Gi", pods="110").build()
    pod = make_pod("p").req(cpu="1", memory="1Gi").build()
    options = [Option("gpu", 1, (pod,), gpu), Option("cpu", 1, (pod,), plain)]
    # the GPU group is far cheaper, yet its unfitness of 1000 loses
    assert cheapest(options, {"gpu": 0.01, "cpu": 0.5}, 10) == [options[1]]


def test_a_group_without_a_price_is_skipped_and_ties_are_kept() -> None:
    node = make_node("c").alloc(cpu="4", memory="16Gi", pods="110").build()
    pod = make_pod("p").req(cpu="1", memory="1Gi").build()
    a, b, c = (Option(g, 1, (pod,), node) for g in "abc")
    assert cheapest([a, b, c], {"a": 0.2, "b": None, "c": 0.2}, 10) == [a, c]


def test_the_price_expander_in_the_chain_reads_the_cluster_size() -> None:
    # with 2 nodes the preferred node has 1 core: the 1-core group wins at a 3.5x higher price per core;
    # with 201 nodes (32 cores preferred) the cheaper 8-core group wins
    small = make_node("s").alloc(cpu="1", memory="4Gi", pods="110").build()
    large = make_node("l").alloc(cpu="8", memory="32Gi", pods="110").build()
    pod = make_pod("p").req(cpu="500m", memory="1Gi").build()
    options = [Option("small", 1, (pod,), small), Option("large", 1, (pod,), large)]
    chain = build_chain(parse_expanders("price"), seed=1, prices={"small": 0.05, "large": 0.115})
    assert chain.best_option(options, ClusterView(2)) == (options[0], "price")
    assert chain.best_option(options, ClusterView(201)) == (options[1], "price")
