"""TaintToleration (plugins/tainttoleration/taint_toleration.go, v1.34.1).

Filter: the first NoSchedule/NoExecute taint of the node (in the node's order) that the pod does
not tolerate rejects it, UnschedulableAndUnresolvable, "node(s) had untolerated taint {k: v}" (the
release's Messages.untolerated_taint).
Score: the number of PreferNoSchedule taints not tolerated by the pod's tolerations whose effect
is empty or PreferNoSchedule; normalised in reverse (fewer is better).

Nodes share few distinct taint lists, so both are computed once per (taint list, tolerations)
and spread over the nodes by the table's taint-list ids.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import NODE_ADD, NODE_UPDATE_TAINT, UPDATE_POD_TOLERATION, ClusterEvent
from kplan.framework.interfaces import (
    EnqueueExtensions,
    FixedInputFilter,
    FixedInputScore,
    Handle,
    Normalization,
    PreScorePlugin,
    QueueingHint,
    ScoreExtensions,
)
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id
from kplan.model.objects import PREFER_NO_SCHEDULE, Pod, Taint, Toleration, tolerates, untolerated_taints
from kplan.plugins.helper import PluginBase, default_normalize

NAME = "TaintToleration"


def untolerated_taint(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> Taint | None:
    """FindMatchingUntoleratedTaint restricted to NoSchedule and NoExecute: the first of them."""
    found = untolerated_taints(taints, tolerations)
    return found[0] if found else None


def intolerable_prefer_no_schedule(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> int:
    relevant = tuple(t for t in tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
    return sum(1 for t in taints if t.effect == PREFER_NO_SCHEDULE and not tolerates(relevant, t))


class TaintToleration(PluginBase, FixedInputFilter, PreScorePlugin, FixedInputScore,
                      ScoreExtensions, EnqueueExtensions):
    name = NAME
    #: NormalizeScore: fewer untolerated PreferNoSchedule taints score higher
    normalization = Normalization.REVERSED

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.TOLERATIONS, signers.tolerations(pod)),)

    def __init__(self, args: object, handle: Handle) -> None:
        super().__init__(args, handle)
        #: the release's wording of the Filter reason (Messages.untolerated_taint)
        self._untolerated = handle.release.messages.untolerated_taint
        self._filter_cache: dict[tuple[int, int, tuple[Toleration, ...]], np.ndarray] = {}
        self._score_cache: dict[tuple[int, int, tuple[Toleration, ...]], np.ndarray] = {}

    def _per_set(self, cache: dict[tuple[int, int, tuple[Toleration, ...]], np.ndarray], table: NodeTable,
                 tolerations: tuple[Toleration, ...],
                 fn: Callable[[tuple[Taint, ...], tuple[Toleration, ...]], int]) -> np.ndarray:
        key = (table.taint_sets_key, len(table.taint_sets), tolerations)
        out = cache.get(key)
        if out is None:
            out = np.array([fn(ts, tolerations) for ts in table.taint_sets], dtype=np.int64)
            if len(cache) > 4096:
                cache.clear()
            cache[key] = out
        return out

    def filter_signature(self, pod: Pod) -> tuple[Toleration, ...]:
        return pod.tolerations

    def score_signature(self, pod: Pod) -> tuple[Toleration, ...]:
        return pod.tolerations

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        def reason_of(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> int:
            t = untolerated_taint(taints, tolerations)
            return 0 if t is None else reason_id(self._untolerated.format(taint=t.render(), effect=t.effect))

        by_set = self._per_set(self._filter_cache, table, pod.tolerations, reason_of)
        reasons = by_set[table.taint_ids[rows]].astype(np.int32)
        codes = np.where(reasons != 0, np.int8(Code.UNRESOLVABLE), np.int8(0)).astype(np.int8)
        return Verdicts(codes, reasons)

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        return OK

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        by_set = self._per_set(self._score_cache, table, pod.tolerations, intolerable_prefer_no_schedule)
        return np.asarray(by_set[table.taint_ids[rows]])

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return default_normalize(scores, reverse=True)

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(NODE_ADD, _node_now_tolerated), (NODE_UPDATE_TAINT, _node_now_tolerated),
                (UPDATE_POD_TOLERATION, _pod_itself)]


def _node_now_tolerated(pod: Pod, event: ClusterEvent) -> bool:
    if event.node is None:
        return False
    was_ok = event.old_node is not None and untolerated_taint(event.old_node.taints, pod.tolerations) is None
    return not was_ok and untolerated_taint(event.node.taints, pod.tolerations) is None


def _pod_itself(pod: Pod, event: ClusterEvent) -> bool:
    return event.pod is pod
