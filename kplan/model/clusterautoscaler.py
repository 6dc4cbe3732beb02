"""The cluster-autoscaler's node groups as ``--node-groups FILE`` gives them (issue 48): a name, the
group's minimum and maximum size, its current size, a template — an existing node (``like``) or an
instance type of ``--instance-types`` with labels and taints — and, optionally, a price per hour and a
priority for the priority expander. Parsed in kplan.model.parse_clusterautoscaler."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kplan.model.objects import Taint


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class NodeGroup:
    name: str
    min_size: int
    max_size: int
    #: the template: an existing node's name, copied without its pods ...
    like: str | None = None
    #: ... or an instance type of the catalog
    instance_type: str | None = None
    #: labels and taints added to the template
    labels: Mapping[str, str] = field(default_factory=_empty)
    taints: tuple[Taint, ...] = ()
    #: the group's nodes now (``size``); None: the nodes ``node_selector`` matches, else minSize
    size: int | None = None
    price_per_hour: float | None = None
    priority: int | None = None
    source: str = ""
    #: labels that pick the group's existing nodes (e.g. eks.amazonaws.com/nodegroup: NAME); empty: none known
    node_selector: Mapping[str, str] = field(default_factory=_empty)
