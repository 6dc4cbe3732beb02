"""ImageLocality (plugins/imagelocality/image_locality.go, v1.34.1).

Score (reference 4.3): the sizes of the pod's images present on the node, each scaled by the
fraction of all nodes that have it, clamped to [23 MiB, 1000 MiB × containers] and mapped to
0..100. No NormalizeScore. Names match exactly after adding ":latest" to untagged names.
"""

from __future__ import annotations

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework.cycle_state import CycleState
from kplan.model.objects import Pod
from kplan.plugins.helper import MAX_NODE_SCORE, PluginBase

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class ImageIndex:
    """image name → (rows that have it, size on each of those rows) for one node table."""

    def __init__(self, table: NodeTable) -> None:
        rows: dict[str, dict[int, int]] = {}
        for i, node in enumerate(table.nodes):
            for image in node.images:
                for name in image.names:
                    rows.setdefault(name, {})[i] = image.size
        self.sizes: dict[str, np.ndarray] = {}
        self.num_nodes: dict[str, int] = {}
        for name, per_row in rows.items():
            sizes = np.zeros(len(table), dtype=np.int64)
            for i, s in per_row.items():
                sizes[i] = s
            self.sizes[name] = sizes
            self.num_nodes[name] = len(per_row)


class ImageLocality(PluginBase):
    name = NAME

    def __init__(self, args: object, handle: object) -> None:
        super().__init__(args, handle)  # type: ignore[arg-type]
        self._index: tuple[int, ImageIndex] | None = None

    def index(self) -> ImageIndex:
        table = self.handle.snapshot.table
        if self._index is None or self._index[0] != id(table):
            self._index = (id(table), ImageIndex(table))
        return self._index[1]

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        index = self.index()
        total_nodes = len(self.handle.snapshot.table)
        source = table.source_rows[rows]
        total = np.zeros(len(rows), dtype=np.int64)
        for image in pod.images:
            name = normalized_image_name(image)
            sizes = index.sizes.get(name)
            if sizes is None:
                continue
            spread = index.num_nodes[name] / total_nodes
            total += (sizes[source].astype(np.float64) * spread).astype(np.int64)
        max_threshold = MAX_CONTAINER_THRESHOLD * len(pod.images)
        total = np.clip(total, MIN_THRESHOLD, None)
        total = np.where(total > max_threshold, max_threshold, total)
        return MAX_NODE_SCORE * (total - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
