"""--balance-similar-node-groups (processors/nodegroupset): which groups are similar, and how a
scale-up is shared among them."""

from __future__ import annotations

import dataclasses

import pytest

from kplan.autoscaler.clusterautoscaler.nodegroupset import balance_scale_up, is_similar
from kplan.model.objects import Node
from tests.builders import make_node
from tests.unit.autoscaler.clusterautoscaler.test_scale_up import GROUPS, decisions, planner


def template(zone: str, cpu: str = "8", memory: str = "16Gi", **labels: str) -> Node:
    return make_node(f"t-{zone}").alloc(cpu=cpu, memory=memory, pods="110").zone(zone).label_map(labels).build()


@pytest.mark.parametrize(("other", "similar"), [
    pytest.param(template("b"), True, id="the same shape in another zone is similar"),
    pytest.param(template("b", memory="16200Mi"), True, id="memory within 1.5 percent is similar"),
    pytest.param(template("b", memory="17Gi"), False, id="memory 6 percent apart is not"),
    pytest.param(template("b", cpu="16"), False, id="another cpu capacity is not"),
    pytest.param(template("b", team="x"), False, id="another label is not"),
])
def test_similar_node_groups(other: Node, similar: bool) -> None:
    assert is_similar(template("a"), (), other, ()) is similar


@pytest.mark.parametrize(("groups", "new", "added"), [
    pytest.param([("a", 1, 10), ("b", 3, 10)], 4, {"a": 3, "b": 1}, id="the smallest group first"),
    pytest.param([("a", 1, 2), ("b", 1, 10)], 5, {"a": 1, "b": 4}, id="each up to its maxSize"),
    pytest.param([("a", 1, 2), ("b", 9, 10)], 5, {"a": 1, "b": 1}, id="capped at the groups' room"),
    pytest.param([("a", 5, 5)], 2, {}, id="a group at its maxSize takes none"),
])
def test_balance_scale_up(groups: list[tuple[str, int, int]], new: int, added: dict[str, int]) -> None:
    assert balance_scale_up(groups, new) == added


def test_a_scale_up_is_shared_with_a_similar_group_in_another_zone() -> None:
    compute = GROUPS[1]
    twin = dataclasses.replace(compute, name="compute-b", labels={**compute.labels,
                                                                   "topology.kubernetes.io/zone": "eu-west-1b"})
    groups = (GROUPS[0], compute, twin, GROUPS[2])
    (first,) = decisions(planner(groups=groups, balance=True))
    # compute and compute-b tie under least-waste; the random fallback picks one, which gets 2 of the 3
    other = "compute-b" if first.chosen == "compute" else "compute"
    assert first.node_count == 3 and first.balanced == {first.chosen: 2, other: 1}
    (plain,) = decisions(planner(groups=groups))
    assert plain.balanced == {} and plain.chosen in ("compute", "compute-b")
