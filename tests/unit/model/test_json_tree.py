"""copy_tree: what copy.deepcopy gives for the trees manifests are read into, sharing only scalars."""

from __future__ import annotations

import copy
import datetime
from collections import OrderedDict
from typing import Any

import pytest

from kplan.model.json_tree import copy_tree

TREES: dict[str, Any] = {
    "a pod spec": {"containers": [{"name": "c", "image": "app:1", "ports": [{"containerPort": 80}],
                                   "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
                   "nodeSelector": {"disk": "ssd"}, "priority": None, "hostNetwork": False,
                   "terminationGracePeriodSeconds": 30, "overhead": {"cpu": 0.5}},
    "scalars of the safe YAML loader": {"when": datetime.datetime(2026, 12, 4, 18, 0), "day": datetime.date(2026, 1, 1),
                                        "blob": b"\x00\x01", "empty": [], "nested": [[[]], {}]},
    "a list at the top": [1, "two", [3.0, {"four": [True]}]],
    "a scalar": "just a string",
}


@pytest.mark.parametrize("name", list(TREES))
def test_a_copy_equals_deepcopy_and_shares_no_dict_or_list(name: str) -> None:
    tree = TREES[name]
    out = copy_tree(tree)
    assert out == copy.deepcopy(tree) == tree

    def containers(x: Any) -> list[Any]:
        if isinstance(x, dict):
            return [x, *(c for v in x.values() for c in containers(v))]
        if isinstance(x, list):
            return [x, *(c for v in x for c in containers(v))]
        return []

    assert not {id(c) for c in containers(out)} & {id(c) for c in containers(tree)}


def test_changing_the_copy_leaves_the_original_as_read() -> None:
    tree = copy.deepcopy(TREES["a pod spec"])
    out = copy_tree(tree)
    out["containers"][0]["resources"]["requests"]["cpu"] = "2"
    out["containers"].append({"name": "sidecar"})
    out["nodeSelector"].clear()
    assert tree == TREES["a pod spec"]


def test_a_yaml_alias_becomes_two_copies_as_the_api_server_receives_it() -> None:
    shared = {"cpu": "1"}
    out = copy_tree({"requests": shared, "limits": shared})
    assert out == {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}
    assert out["requests"] is not out["limits"]


def test_other_containers_are_deep_copied_with_their_type() -> None:
    inner = OrderedDict(a=[1, {"b": 2}])
    tree = {"ordered": inner, "tags": {"x", "y"}}
    out = copy_tree(tree)
    assert type(out["ordered"]) is OrderedDict and out["ordered"] == inner and out["ordered"] is not inner
    assert out["ordered"]["a"] is not inner["a"]
    assert out["tags"] == {"x", "y"} and out["tags"] is not tree["tags"]
