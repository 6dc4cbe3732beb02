"""One protocol per extension point (pkg/scheduler/framework/interface.go).

Filters and scores are vectorised: they answer for an array of node rows of a NodeTable at
once. The registry declares which points a plugin implements; the framework builds one typed
list per point from that, once, and calls the plugins only through these protocols, so
``mypy --strict`` checks every call. A plugin class states its roles by subclassing the
protocols (``class MyScore(PluginBase, PreScorePlugin, ScorePlugin)``): mypy then checks its
method signatures against them and reports, for instance,
``Argument 4 of "score" is incompatible with supertype "ScorePlugin"``. The optional interfaces
(PreFilterExtensions, ScoreExtensions, EnqueueExtensions and kplan's own FixedInputFilter,
FixedInputScore, IdleScore, ScoreExplainer, RejectionExplainer, BatchReprieveFilter) are recognised once, when the framework is
built.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from kplan.framework.cycle_state import CycleState
from kplan.framework.status import Status, Verdicts

if TYPE_CHECKING:
    from kplan.cluster.node_table import NodeTable
    from kplan.cluster.snapshot import Snapshot
    from kplan.framework.config import SchedulerConfig
    from kplan.framework.diagnosis import Diagnosis
    from kplan.framework.events import ClusterEvent
    from kplan.framework.release import Release
    from kplan.framework.runtime import Framework, Nominator
    from kplan.model.objects import Pod, PodDisruptionBudget


#: framework.MaxNodeScore: the highest score a Score plugin may give after NormalizeScore
MAX_NODE_SCORE = 100


class Handle(Protocol):
    """Everything plugins and the framework may read of the running scheduler (framework.Handle):
    the current snapshot, the nominations, the configuration and its release (version and feature
    gates), the seeded RNG and tie-break rule,
    and what DefaultPreemption asks of the running simulation."""

    @property
    def snapshot(self) -> Snapshot: ...

    @property
    def nominator(self) -> Nominator: ...

    @property
    def config(self) -> SchedulerConfig: ...

    @property
    def release(self) -> Release:
        """The Kubernetes release and feature gates of the run (upstream: feature.Features)."""
        ...

    @property
    def rng(self) -> np.random.Generator: ...

    @property
    def lowest_name(self) -> bool:
        """``--tie-break lowest-name``: break ties by the smallest node name instead of at random."""
        ...

    def framework_for(self, pod: Pod) -> Framework: ...

    def nominated_node(self, pod: Pod) -> str:
        """The pod's status.nominatedNodeName in this run ("" for none): the run's state, not the pod's."""
        ...

    def preemption_in_progress(self, pod: Pod) -> bool: ...

    def disruptions_allowed(self, pdb: PodDisruptionBudget) -> int: ...

    def terminating_by_preemption(self, pod: Pod) -> bool: ...


@runtime_checkable
class Plugin(Protocol):
    name: str


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """A PreFilter plugin's restriction of the nodes to examine (None = all nodes)."""

    node_names: frozenset[str] | None = None


class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status: ...


class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: Any, b: Any) -> bool: ...


class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """AddPod/RemovePod: keep PreFilter state right when pods are added to or removed from a node."""

    def add_pod(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None: ...

    def remove_pod(self, state: CycleState, pod: Pod, other: Pod, table: NodeTable, row: int) -> None: ...


class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts: ...


class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status: ...


class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    """NormalizeScore, for a Score plugin that has it."""

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class FixedInputFilter(FilterPlugin, Protocol):
    """kplan's own addition: a Filter whose verdict on a node depends only on the node's fixed
    attributes (name, labels, taints, spec.unschedulable: none change during a simulation) and
    on the pod's ``filter_signature``. Pods of one signature share their verdicts, so the
    framework computes them once per node table when such plugins lead the filter list."""

    def filter_signature(self, pod: Pod) -> Hashable: ...


class Normalization(IntEnum):
    """What a FixedInputScore plugin's NormalizeScore is (the compiled cycle applies it)."""

    #: no NormalizeScore: the raw score is the score
    NONE = 0
    #: helper.DefaultNormalizeScore(MaxNodeScore, false): scaled so the highest is 100
    DEFAULT = 1
    #: helper.DefaultNormalizeScore(MaxNodeScore, true): scaled, then 100 minus it
    REVERSED = 2


@runtime_checkable
class FixedInputScore(ScorePlugin, Protocol):
    """kplan's own addition: a Score plugin whose raw score of a node depends only on the
    node's fixed attributes (name, labels, taints, images: none change during a simulation) and
    on the pod's ``score_signature``, and whose NormalizeScore is ``normalization``. The
    compiled cycle (kplan/scheduler/compiled.py) computes its raw scores of every node once
    per node table and signature, and normalizes them itself."""

    normalization: Normalization

    def score_signature(self, pod: Pod) -> Hashable: ...


@runtime_checkable
class IdleScore(ScorePlugin, Protocol):
    """kplan's own addition: a Score plugin that tells, from the cycle state after PreScore,
    that it scores every node 0 for the pod, after its NormalizeScore too (no volume to
    provision, no claim to weigh). The compiled cycle leaves it out of the sum."""

    def scores_nothing(self, state: CycleState, pod: Pod) -> bool: ...


class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None: ...


class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status: ...


class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node: str) -> Status: ...


class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node: str) -> None: ...


class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node: str) -> Status: ...


#: Queueing hint: given the pod that was rejected and an event, may the event make it schedulable?
QueueingHint = Callable[["Pod", "ClusterEvent"], bool]


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]: ...


class PostFilterResult(Protocol):
    """What a PostFilter plugin returns beside its status: the node to nominate (None: no
    nomination change; "" clears it)."""

    @property
    def nominated_node(self) -> str | None: ...


class PostFilterPlugin(Plugin, Protocol):
    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis
                    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class BatchReprieveFilter(FilterPlugin, Protocol):
    """kplan's own addition: a Filter whose verdict, where other pods join or leave a node, can
    be told from their requests alone (NodeResourcesFit): ``filter_with_load`` settles nominated
    pods without copying nodes, and ``reprieve_rows`` is SelectVictimsOnNode's greedy walk for
    many nodes at once (framework/fast_path.py; preemption's _BatchReprieve)."""

    def reprieve_rows(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray, requests: np.ndarray,
                      counts: np.ndarray, reserved: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def filter_with_load(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                         pods: np.ndarray | None, requests: Mapping[str, np.ndarray] | None) -> Verdicts:
        """Filter's verdicts as if ``pods[k]`` more pods, requesting ``requests[name][k]`` of each
        resource in all, were on the node of ``rows[k]`` (negative: fewer): what Filter says on
        a fork with such pods added (nominated pods) or removed (victims)."""
        ...


@runtime_checkable
class SelectiveStateFilter(FilterPlugin, PreFilterExtensions, Protocol):
    """kplan's own addition: a Filter whose verdicts come only from its PreFilter state and the
    nodes' labels, and which tells whether AddPod/RemovePod of another pod would change that
    state (PodTopologySpread, InterPodAffinity). Where no pod leaving or joining a node does, its
    verdict on the node is the same with or without them, so preemption's dry run need not fork
    the node for it (framework/preemption.py). ``affected_by`` may say True when unsure, never
    False when AddPod or RemovePod would change the state."""

    def affected_by(self, state: CycleState, pod: Pod, other: Pod) -> bool: ...


@runtime_checkable
class CountingStateFilter(SelectiveStateFilter, Protocol):
    """kplan's own addition: a SelectiveStateFilter that tells its verdicts with other pods
    added to or removed from each node at once, without forking (PodTopologySpread)."""

    def filter_with_pods(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                         examples: Sequence[Pod], counts: np.ndarray) -> Verdicts | None:
        """Filter's verdicts on ``rows`` where, for each ``k`` on its own (as on a fork of that
        node alone, the cycle state cloned), ``counts[k, j]`` more pods like ``examples[j]``
        were added to the node of ``rows[k]`` through AddPod (negative: removed through
        RemovePod). Pods alike to AddPod/RemovePod (namespace and labels, no required
        anti-affinity) may share an example. None when it cannot tell for this state: the
        caller then forks."""
        ...


@runtime_checkable
class RejectionExplainer(Plugin, Protocol):
    """kplan's own addition, no upstream counterpart: a filter plugin's account of why it rejected
    one node, beyond its reason text (NodeVolumeLimits: the attach counts against the limit).
    ``kplan explain`` asks it for each node the plugin rejected, while the cycle's cluster is
    still as the filter saw it; "" adds nothing."""

    def explain_rejection(self, pod: Pod, table: NodeTable, row: int) -> str: ...


@runtime_checkable
class ScoreExplainer(Plugin, Protocol):
    """kplan's own addition, no upstream counterpart: why a score plugin scored each node.

    ``explain`` returns one short human-readable line per row of ``rows``, in that order, starting
    with the plugin's final 0..100 score for the node and a colon (e.g. ``"97: 3 of 110 allowed
    pods running, ..."``); the node's name is not repeated. ``state`` is the cycle state after
    PreScore ran (the plugin's PreScore data, if any, is in it); for a pod the plugin skipped at
    PreScore every line says so. ``kplan explain`` shows these lines; plugins without the method
    show only their numbers.
    """

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> list[str]: ...


#: extension point → the method that implements it, in the order upstream fills the lists
POINT_METHODS: dict[str, str] = {
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "reserve": "reserve",
    "preScore": "pre_score",
    "score": "score",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "permit": "permit",
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
}

#: the Go interface name of each point, as error messages print it
POINT_IFACE: dict[str, str] = {
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "reserve": "ReservePlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
    "permit": "PermitPlugin",
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
}
