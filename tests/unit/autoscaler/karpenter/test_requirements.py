"""Karpenter's requirement algebra (pkg/scheduling/requirement.go, requirements.go)."""

from __future__ import annotations

import pytest

from kplan.autoscaler.karpenter.requirements import Requirements, new_requirement

R = new_requirement


@pytest.mark.parametrize("a, b, operator, values", [
    pytest.param(R("k", "In", ["a", "b"]), R("k", "In", ["b", "c"]), "In", {"b"}, id="In and In keep the common values"),
    pytest.param(R("k", "In", ["a", "b"]), R("k", "NotIn", ["b"]), "In", {"a"}, id="NotIn removes from In"),
    pytest.param(R("k", "NotIn", ["a"]), R("k", "NotIn", ["b"]), "NotIn", {"a", "b"},
                 id="NotIn and NotIn exclude both"),
    pytest.param(R("k", "In", ["a"]), R("k", "In", ["b"]), "DoesNotExist", set(),
                 id="disjoint In sets leave nothing"),
    pytest.param(R("k", "Gt", ["3"]), R("k", "In", ["2", "4", "x"]), "In", {"4"},
                 id="bounds keep only integers within them"),
    pytest.param(R("k", "Gt", ["5"]), R("k", "Lt", ["3"]), "DoesNotExist", set(),
                 id="crossing bounds leave nothing"),
])
def test_intersection(a, b, operator, values) -> None:  # type: ignore[no-untyped-def]
    r = a.intersection(b)
    assert r.operator == operator
    assert set(r.values) == values


def test_bounds_and_min_values_survive_on_a_complement() -> None:
    r = R("k", "Gt", ["3"], 2).intersection(R("k", "Lte", ["9"]))
    assert (r.gte, r.lte, r.min_values, r.operator) == (4, 9, 2, "Exists")
    assert str(r) == "k Exists >=4 <=9 minValues 2"


def test_a_deprecated_key_is_normalised() -> None:
    assert R("beta.kubernetes.io/arch", "In", ["amd64"]).key == "kubernetes.io/arch"


@pytest.mark.parametrize("node, pod, ok", [
    pytest.param([R("zone", "In", ["a", "b"])], [R("zone", "In", ["b"])], True, id="a shared value is compatible"),
    pytest.param([R("zone", "In", ["a"])], [R("zone", "In", ["b"])], False, id="disjoint values are not"),
    pytest.param([], [R("gpu", "In", ["yes"])], False, id="a key the node side does not define is not"),
    pytest.param([], [R("gpu", "NotIn", ["yes"])], True, id="an undefined key the pod excludes is"),
    pytest.param([], [R("gpu", "DoesNotExist")], True, id="an undefined key the pod wants absent is"),
    pytest.param([R("gpu", "NotIn", ["a"])], [R("gpu", "DoesNotExist")], True,
                 id="two requirements that only exclude never conflict"),
])
def test_compatible(node, pod, ok) -> None:  # type: ignore[no-untyped-def]
    assert Requirements(node).is_compatible(Requirements(pod)) is ok


def test_an_undefined_key_gets_karpenters_message_with_a_hint() -> None:
    msg = Requirements([R("topology.kubernetes.io/zone", "In", ["a"])]).compatible(
        Requirements([R("zone", "In", ["a"])]))
    assert msg == 'label "zone" does not have known values (typo of "topology.kubernetes.io/zone"?)'


def test_a_conflict_names_the_key_and_both_sides() -> None:
    msg = Requirements([R("zone", "In", ["a"])]).compatible(Requirements([R("zone", "In", ["b"])]))
    assert msg == "key zone, zone In [b] not in zone In [a]"


def test_well_known_keys_may_stay_undefined() -> None:
    assert Requirements().is_compatible(Requirements([R("topology.kubernetes.io/zone", "In", ["a"])]),
                                        frozenset({"topology.kubernetes.io/zone"}))
