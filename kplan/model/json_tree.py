"""Copies of the JSON-like trees manifests are read into (dicts, lists, scalars).

``copy.deepcopy`` copies any object graph: it dispatches on every value's type and keeps a memo
of every object copied, so that shared references stay shared. A manifest read from JSON or by the
safe YAML loader holds only dicts, lists and immutable scalars, and the API server receives it as
JSON, where no two places share an object (kubectl expands YAML aliases into copies). For such a
tree, copying the dicts and lists and sharing the scalars gives what deepcopy gives in
about 40% of the time (a pod spec: 11 us against 28 us), and controllers copy their template
once per replica.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any, TypeVar, cast

T = TypeVar("T")

#: values a tree shares between copies: immutable, as the loaders produce them (the safe YAML
#: loader reads timestamps as datetimes and !!binary as bytes)
_SHARED = frozenset({str, int, float, bool, type(None), bytes, datetime.datetime, datetime.date})


def copy_tree(tree: T) -> T:
    """A copy of ``tree`` whose dicts and lists are new and whose scalars are shared. Any other
    value (a dict or list subclass, a set, an object) is copied by ``copy.deepcopy``; two places
    that held one dict or list hold two equal copies."""
    return cast(T, _copy(tree))


def _copy(tree: Any) -> Any:
    kind = type(tree)
    if kind is dict:
        return {k: v if type(v) in _SHARED else _copy(v) for k, v in tree.items()}
    if kind is list:
        return [v if type(v) in _SHARED else _copy(v) for v in tree]
    if kind in _SHARED:
        return tree
    return copy.deepcopy(tree)
