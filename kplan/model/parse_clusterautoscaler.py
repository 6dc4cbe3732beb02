"""Parsing ``--node-groups`` (kplan.model.clusterautoscaler): the only module that knows its field
names. Every mistake is one InputError line naming the file, the node group and the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.errors import InputError
from kplan.model.clusterautoscaler import NodeGroup
from kplan.model.name_rules import qualified_name
from kplan.model.parse import Where, _int, _labels, _list, _map, _str, parse_taints

FIELDS = frozenset({"name", "minSize", "maxSize", "size", "like", "instanceType", "labels", "taints",
                    "pricePerHour", "priority", "nodeSelector"})


def _size(v: Any, where: Where, path: str) -> int:
    n = _int(v, where, path)
    if n < 0:
        raise where.fail(path, f"must be 0 or more, got {n}")
    return n


def parse_node_group(d: Any, source: str, index: int) -> NodeGroup:
    where = Where(source, "node group", f"#{index + 1}")
    d = _map(d, where, "")
    name = _str(d.get("name"), where, "name")
    if not name:
        raise where.fail("name", "required")
    where = Where(source, "node group", name)
    unknown = sorted(str(k) for k in d if k not in FIELDS)
    if unknown:
        raise where.fail(unknown[0], f"unknown field (expected one of {', '.join(sorted(FIELDS))})")
    if "minSize" not in d:
        raise where.fail("minSize", "required")
    if "maxSize" not in d:
        raise where.fail("maxSize", "required")
    min_size = _size(d.get("minSize"), where, "minSize")
    max_size = _size(d.get("maxSize"), where, "maxSize")
    if max_size < min_size:
        raise where.fail("maxSize", f"{max_size} is below minSize {min_size}")
    size = None if d.get("size") is None else _size(d.get("size"), where, "size")
    like = _str(d.get("like"), where, "like") or None
    instance_type = _str(d.get("instanceType"), where, "instanceType") or None
    if (like is None) == (instance_type is None):
        raise where.fail("like", "give exactly one template: like: NODE or instanceType: NAME")
    labels = _labels(d.get("labels"), where, "labels")
    for key in labels:
        for problem in qualified_name(key):
            raise where.fail(f"labels.{key}", problem)
    taints = parse_taints(d.get("taints"), where, "taints")
    price = d.get("pricePerHour")
    if price is not None:
        if isinstance(price, bool) or not isinstance(price, (int, float)) or price < 0:
            raise where.fail("pricePerHour", f"expected a number of 0 or more, got {price!r}")
        price = float(price)
    priority = None if d.get("priority") is None else _int(d.get("priority"), where, "priority")
    selector = _labels(d.get("nodeSelector"), where, "nodeSelector")
    return NodeGroup(name, min_size, max_size, like, instance_type, labels, taints, size, price, priority, source,
                     selector)


def parse_node_groups(doc: Any, source: str) -> tuple[NodeGroup, ...]:
    """The node groups of a ``--node-groups`` document: ``nodeGroups:`` a list."""
    if not isinstance(doc, Mapping) or "nodeGroups" not in doc:
        raise InputError(f"{source}: expected a document with a list nodeGroups:")
    items = _list(doc.get("nodeGroups"), Where(source, "document", ""), "nodeGroups")
    groups = tuple(parse_node_group(d, source, i) for i, d in enumerate(items))
    seen: set[str] = set()
    for g in groups:
        if g.name in seen:
            raise InputError(f"{source}: node group {g.name}: name: duplicate node group name")
        seen.add(g.name)
    if not groups:
        raise InputError(f"{source}: nodeGroups: lists no node group")
    return groups
