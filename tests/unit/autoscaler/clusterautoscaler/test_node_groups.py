"""--node-groups: parsing (one line naming file, group and field for each mistake) and the templates."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.errors import InputError
from kplan.model.parse_clusterautoscaler import parse_node_groups
from kplan.whatif.autoscale import node_group_template
from tests.builders import make_node


def doc(**fields: Any) -> dict[str, Any]:
    return {"nodeGroups": [{"name": "g", "minSize": 0, "maxSize": 3, "like": "n1", **fields}]}


@pytest.mark.parametrize(("d", "message"), [
    pytest.param({}, "f.yaml: expected a document with a list nodeGroups:", id="a document without nodeGroups"),
    pytest.param({"nodeGroups": []}, "f.yaml: nodeGroups: lists no node group", id="an empty list"),
    pytest.param({"nodeGroups": [{"minSize": 1}]}, "f.yaml: node group #1: name: required", id="a group without name"),
    pytest.param(doc(maxSize=None), "f.yaml: node group g: maxSize: required", id="a group without maxSize"),
    pytest.param(doc(minSize=4), "f.yaml: node group g: maxSize: 3 is below minSize 4", id="max below min"),
    pytest.param(doc(minSize=-1), "f.yaml: node group g: minSize: must be 0 or more", id="a negative size"),
    pytest.param(doc(minSize="x"), "f.yaml: node group g: minSize:", id="a size that is not a number"),
    pytest.param(doc(instanceType="m6i.large"), "f.yaml: node group g: like: give exactly one template",
                 id="two templates"),
    pytest.param(doc(like=None), "f.yaml: node group g: like: give exactly one template", id="no template"),
    pytest.param(doc(pricePerHour="cheap"), "f.yaml: node group g: pricePerHour: expected a number",
                 id="a price that is not a number"),
    pytest.param(doc(maxsize=3), "f.yaml: node group g: maxsize: unknown field", id="a misspelt field"),
    pytest.param({"nodeGroups": [doc()["nodeGroups"][0]] * 2}, "f.yaml: node group g: name: duplicate",
                 id="two groups of one name"),
])
def test_bad_node_groups_fail_in_one_line(d: Any, message: str) -> None:
    d = {"nodeGroups": [{k: v for k, v in g.items() if v is not None} for g in d["nodeGroups"]]} \
        if isinstance(d.get("nodeGroups"), list) else d
    with pytest.raises(InputError) as e:
        parse_node_groups(d, "f.yaml")
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_a_group_like_a_node_copies_it_with_its_labels_and_taints_added() -> None:
    (g,) = parse_node_groups(doc(labels={"team": "a"}, taints=[{"key": "k", "effect": "NoSchedule"}],
                                 size=1, priority=10, pricePerHour=0.5), "f.yaml")
    node = make_node("n1").alloc(cpu="4", memory="8Gi", pods="110").taint("node.kubernetes.io/not-ready").build()
    t = node_group_template(g, {"n1": node}, None)
    assert t.name == "template-node-for-g"
    assert t.labels["team"] == "a" and t.labels["kubernetes.io/hostname"] == "template-node-for-g"
    assert [x.key for x in t.taints] == ["k"]  # the node-lifecycle taint is not copied
    assert t.allocatable == node.allocatable
    assert (g.size, g.priority, g.price_per_hour) == (1, 10, 0.5)


@pytest.mark.parametrize(("fields", "message"), [
    pytest.param({"like": "nope"}, "f.yaml: node group g: like: no node nope in the cluster", id="an unknown node"),
    pytest.param({"like": None, "instanceType": "m6i.large"},
                 "f.yaml: node group g: instanceType: needs the catalog of --instance-types",
                 id="an instance type without a catalog"),
])
def test_templates_name_what_is_missing(fields: dict[str, Any], message: str) -> None:
    g = {k: v for k, v in doc(**fields)["nodeGroups"][0].items() if v is not None}
    (group,) = parse_node_groups({"nodeGroups": [g]}, "f.yaml")
    with pytest.raises(InputError, match=message):
        node_group_template(group, {}, None)
