"""ImageLocality (plugins/imagelocality/image_locality.go, v1.34.1, v1.36.3 and v1.37.2).

Score (reference 4.3): the sizes of the pod's images present on the node, each scaled by the
fraction of all nodes that have it, clamped to [23 MiB, 1000 MiB × containers] and mapped to
0..100. No NormalizeScore. Names match exactly after adding ":latest" to untagged names.

From 1.36 (#130231) the images of image volumes (``volumes[].image.reference``) are summed too,
while the maximum still counts containers only (release rule ``sums_image_volumes``); from 1.37
(#138951) each image volume also raises the maximum by 1000 MiB (``counts_image_volumes``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import MAX_NODE_SCORE, FixedInputScore, Handle, Normalization
from kplan.model.objects import Pod
from kplan.plugins.helper import PluginBase, decode_rules

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class ImageIndex:
    """image name → (rows that have it, the image's size on each of those rows) for one node table.

    The scheduler cache keeps one state per image name whose size is set by the first node that
    reports the name (cache.go addNodeImageStates) and shared by every node; the cache receives
    the nodes in name order (reference 12.1). So when nodes report different sizes for one name,
    every node scores with the size of the first node by name.
    """

    def __init__(self, table: NodeTable) -> None:
        rows: dict[str, list[int]] = {}
        size_of: dict[str, int] = {}
        for i in sorted(range(len(table)), key=lambda i: int(table.name_rank[i])):
            for image in table.nodes[i].images:
                for name in image.names:
                    size_of.setdefault(name, image.size)
                    per_node = rows.setdefault(name, [])
                    if not per_node or per_node[-1] != i:
                        per_node.append(i)
        self.sizes: dict[str, np.ndarray] = {}
        self.num_nodes: dict[str, int] = {}
        for name, node_rows in rows.items():
            sizes = np.zeros(len(table), dtype=np.int64)
            sizes[node_rows] = size_of[name]
            self.sizes[name] = sizes
            self.num_nodes[name] = len(node_rows)


@dataclass(frozen=True)
class ImageLocalityRules:
    """ImageLocality's release rules (framework/release_tables.py)."""

    #: the images of image volumes are summed too (1.36, #130231)
    sums_image_volumes: bool
    #: each image volume raises the maximum like a container (1.37, #138951)
    counts_image_volumes: bool

    def images(self) -> Callable[[Pod], tuple[tuple[str, ...], int]]:
        """sumImageScores' images and calculatePriority's count, as the release has them."""
        if self.counts_image_volumes:
            return _containers_and_volumes_counted
        return _containers_and_volumes if self.sums_image_volumes else _containers


def _containers(pod: Pod) -> tuple[tuple[str, ...], int]:
    """The images of the init containers and containers, counted."""
    return pod.images, len(pod.images)


def _containers_and_volumes(pod: Pod) -> tuple[tuple[str, ...], int]:
    """Image volumes' images too; the containers counted (1.36)."""
    return pod.images + pod.volume_images, len(pod.images)


def _containers_and_volumes_counted(pod: Pod) -> tuple[tuple[str, ...], int]:
    """Image volumes' images too, each counted like a container (1.37)."""
    return pod.images + pod.volume_images, len(pod.images) + len(pod.volume_images)


class ImageLocality(PluginBase, FixedInputScore):
    name = NAME
    #: no NormalizeScore
    normalization = Normalization.NONE

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.IMAGE_NAMES, tuple(sorted({normalized_image_name(i) for i in pod.images}))),)

    def __init__(self, args: object, handle: Handle) -> None:
        super().__init__(args, handle)
        # the table is held by a weak reference: its id() could be reused by a later table
        self._index: tuple[weakref.ref[NodeTable], ImageIndex] | None = None
        self.rules = decode_rules(ImageLocalityRules, handle, NAME)
        #: sumImageScores' images (init containers, containers) and calculatePriority's count
        self.images = self.rules.images()

    def score_signature(self, pod: Pod) -> Hashable:
        # the images it sums and how many count towards the maximum, as the release has them
        return self.images(pod)

    def index(self) -> ImageIndex:
        table = self.handle.snapshot.table
        if self._index is None or self._index[0]() is not table:
            self._index = (weakref.ref(table), ImageIndex(table))
        return self._index[1]

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        index = self.index()
        total_nodes = len(self.handle.snapshot.table)
        images, count = self.images(pod)
        present = [name for image in images if (name := normalized_image_name(image)) in index.sizes]
        if count and not present:
            # no node has any of the images: every sum is clamped up to the minimum, scored 0
            return np.zeros(len(rows), dtype=np.int64)
        source = table.source_rows[rows]
        total = np.zeros(len(rows), dtype=np.int64)
        for name in present:
            sizes = index.sizes[name]
            spread = index.num_nodes[name] / total_nodes
            total += (sizes[source].astype(np.float64) * spread).astype(np.int64)
        max_threshold = MAX_CONTAINER_THRESHOLD * count
        total = np.clip(total, MIN_THRESHOLD, None)
        total = np.where(total > max_threshold, max_threshold, total)
        return MAX_NODE_SCORE * (total - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
