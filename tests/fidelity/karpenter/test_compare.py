"""compare(): what counts as a difference between the oracle's result and kplan's."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.fidelity.karpenter.compare import compare

BASE: dict[str, Any] = {
    "newNodeClaims": [{
        "nodePool": "default", "pods": ["default/a", "default/b"],
        "instanceTypes": [{"name": "c-2x", "price": 0.085}, {"name": "m-2x", "price": 0.096}],
        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                         {"key": "karpenter.kwok.sh/instance-family", "operator": "In", "values": ["m", "c"],
                          "minValues": 2}],
        "requests": {"cpu": "1100m", "memory": "1Gi", "pods": "2"},
        "launch": {"capacityType": "on-demand", "instanceType": "c-2x", "zone": "z1", "price": 0.085,
                   "ec2Chooses": False, "options": [{"instanceType": "c-2x", "zone": "z1", "price": 0.085}]},
    }],
    "existingNodes": [{"node": "n1", "nodeClaim": "n1", "pods": ["default/c"]}],
    "podErrors": [{"pod": "default/d", "error": "no instance type satisfied resources"}],
    "ignored": [],
}


def changed(path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    node: Any = out
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if k.isdigit() else node[k]
    last = keys[-1]
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return out


SAME = [
    ("an identical result", copy.deepcopy(BASE)),
    ("a null minValues where the other has none",
     changed("newNodeClaims.0.requirements.0", {"key": "karpenter.sh/capacity-type", "operator": "In",
                                                 "values": ["on-demand"], "minValues": None})),
    ("requests as integers instead of quantities", changed("newNodeClaims.0.requests",
                                                           {"cpu": 1100, "memory": 1073741824, "pods": 2})),
    ("requirement values in another order", changed("newNodeClaims.0.requirements.1.values", ["c", "m"])),
    ("a price off in the 12th digit", changed("newNodeClaims.0.instanceTypes.0.price", 0.085000000000001)),
    ("another nodeClaim name for an existing node", changed("existingNodes.0.nodeClaim", "")),
]

DIFFERENT = [
    ("another NodePool", changed("newNodeClaims.0.nodePool", "other"), "newNodeClaims[0].nodePool"),
    ("pods packed in another order", changed("newNodeClaims.0.pods", ["default/b", "default/a"]),
     "newNodeClaims[0].pods"),
    ("instance types in another order", changed("newNodeClaims.0.instanceTypes",
                                                [{"name": "m-2x", "price": 0.096}, {"name": "c-2x", "price": 0.085}]),
     "newNodeClaims[0].instanceTypes"),
    ("another price", changed("newNodeClaims.0.instanceTypes.0.price", 0.09), "newNodeClaims[0].instanceTypes[c-2x].price"),
    ("another minValues", changed("newNodeClaims.0.requirements.1.minValues", 1), "newNodeClaims[0].requirements"),
    ("other requests", changed("newNodeClaims.0.requests", {"cpu": "1", "memory": "1Gi", "pods": "2"}),
     "newNodeClaims[0].requests"),
    ("another launch zone", changed("newNodeClaims.0.launch.zone", "z2"), "newNodeClaims[0].launch.zone"),
    ("other launch options", changed("newNodeClaims.0.launch.options", []), "newNodeClaims[0].launch.options"),
    ("one claim fewer", changed("newNodeClaims", []), "newNodeClaims"),
    ("another existing node", changed("existingNodes.0.node", "n2"), "existingNodes"),
    ("another pod error", changed("podErrors.0.error", "other"), "podErrors[default/d]"),
    ("a pod error missing", changed("podErrors", []), "podErrors[default/d]"),
    ("a pod ignored", changed("ignored", [{"pod": "default/e", "error": "ignoring pod"}]), "ignored[default/e]"),
]


@pytest.mark.parametrize(("case", "got"), SAME, ids=[f"{c} is no difference" for c, _ in SAME])
def test_no_difference(case: str, got: dict[str, Any]) -> None:
    assert compare(BASE, got) == []


@pytest.mark.parametrize(("case", "got", "where"), DIFFERENT, ids=[f"{c} is a difference" for c, _, _ in DIFFERENT])
def test_difference(case: str, got: dict[str, Any], where: str) -> None:
    found = compare(BASE, got)
    assert found, case
    assert found[0].startswith(where), found
