"""The cluster as the scheduler's cache sees it: nodes, the pods bound to them, and the
objects plugins read (namespaces, PDBs, selecting objects, storage). No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kplan.cluster.node_table import NodeTable
from kplan.model.objects import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    SelectingObject,
)

if TYPE_CHECKING:
    from kplan.cluster.dra import DraState
    from kplan.cluster.storage import StorageState

ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")


def zone_key(node: Node) -> str:
    """component-helpers node/topology GetZoneKey: region and zone joined, "" when both absent."""
    zone = next((node.labels[k] for k in ZONE_LABELS if node.labels.get(k)), "")
    region = next((node.labels[k] for k in REGION_LABELS if node.labels.get(k)), "")
    if not zone and not region:
        return ""
    return region + ":\x00:" + zone


def node_tree_order(nodes: Iterable[Node]) -> list[Node]:
    """The scheduler cache's node list (backend/cache/node_tree.go).

    Nodes arrive sorted by name; zones are taken in order of first appearance and the list
    deals one node of each zone in turn.
    """
    zones: dict[str, list[Node]] = {}
    for n in sorted(nodes, key=lambda n: n.name.encode()):
        zones.setdefault(zone_key(n), []).append(n)
    out: list[Node] = []
    lists = list(zones.values())
    depth = 0
    while len(out) < sum(len(z) for z in lists):
        for z in lists:
            if depth < len(z):
                out.append(z[depth])
        depth += 1
    return out


@dataclass
class Snapshot:
    """Everything a scheduling cycle may read. Mutated only by bind/remove between cycles."""

    table: NodeTable
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    selecting: list[SelectingObject] = field(default_factory=list)
    #: storage objects (PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver)
    storage: StorageState | None = None
    #: the resource.k8s.io objects and claim state (cluster/dra.py DraState)
    dra: DraState | None = None
    #: uid → (pod, row) for every pod bound or assumed on a node
    placed: dict[str, tuple[Pod, int]] = field(default_factory=dict)

    @classmethod
    def build(cls, nodes: Sequence[Node], **objects: Any) -> Snapshot:
        return cls(NodeTable(node_tree_order(nodes)), **objects)

    def add_pod(self, pod: Pod, row: int) -> None:
        self.table.add_pod(pod, row)
        self.placed[pod.uid] = (pod, row)

    def add_pods(self, pods: Sequence[Pod], rows: Sequence[int]) -> None:
        self.table.add_pods(pods, rows)
        for pod, row in zip(pods, rows, strict=True):
            self.placed[pod.uid] = (pod, row)

    def remove_pod(self, pod: Pod) -> int:
        _, row = self.placed.pop(pod.uid)
        self.table.remove_pod(pod, row)
        return row

    def row_of(self, node_name: str) -> int | None:
        return self.table.row_of.get(node_name)

    def namespace_labels(self, name: str) -> dict[str, str]:
        ns = self.namespaces.get(name)
        # kube-apiserver labels every namespace with its own name
        return dict(ns.labels) if ns else {"kubernetes.io/metadata.name": name}
