"""What a Kubernetes release can differ in: the kinds of release rule, and ``ReleaseRules``, one
release's value of every one of them.

The values per release are in framework/release_tables.py (1.34 whole, each later release as the
one before it plus its changes); framework/release.py's ``Release`` is a release's rules with its
feature gates' values, handed to every plugin factory. A rule is read one way: ``release.<rule>``
(``release.nomination.bind_clears``, ``release.plugin_rules["NodeName"]``). A new kind of rule is
one field of ``ReleaseRules`` (with its type here) and its 1.34 value in the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import total_ordering
from typing import TYPE_CHECKING, Any

from kplan.errors import ConfigError
from kplan.framework.features import Gate, GateSpec
from kplan.model.resize import ResizeAccounting

if TYPE_CHECKING:
    from kplan.framework.events import ClusterEvent


@dataclass(frozen=True)
class Messages:
    """Reason texts that releases word differently, as format strings."""

    #: TaintToleration's Filter reason; ``{taint}`` is the taint as Taint.render prints it
    #: (``{key: value}``), ``{effect}`` its effect
    untolerated_taint: str
    #: DefaultPreemption's PostFilter message when it nominates a node (``{node}``, ``{victims}``);
    #: None where a successful preemption leaves the pod's failure message without a postscript
    preemption_nominated: str | None = None


@dataclass(frozen=True)
class NominationRules:
    """What becomes of a pod's ``status.nominatedNodeName`` around binding and failure, where
    releases differ (NominatedNodeNameForExpectation, KEP-5278; the API server's
    ClearingNominatedNodeNameAfterBinding)."""

    #: a pod bound with a nominated node leaves the queue as the deletion of a nominated pod
    #: (AssignedPodDelete to the pods of lower or equal priority): 1.34's
    #: deletePodFromSchedulingQueue; from 1.35 a binding skips that (its ``inBinding``)
    bind_moves_pods: bool
    #: the binding clears status.nominatedNodeName (kube-apiserver's
    #: ClearingNominatedNodeNameAfterBinding, beta and on from 1.35)
    bind_clears: bool
    #: a FitError in a profile without PostFilter plugins clears the nomination (1.35's
    #: clearNominatedNode; 1.34 leaves it)
    no_post_filter_clears: bool
    #: a pod created gated (schedulingGates) with a nomination in its status holds room on that
    #: node from its creation: 1.37 records every new pod's nomination (#139057); before, the
    #: nominator learns it only when the pod enters activeQ, which a gated pod never does here
    gated_pods_nominated: bool


@dataclass(frozen=True)
class QueueingHintRules:
    """Where the in-tree plugins' queueing hints answer a pod event differently by release: which
    pods InterPodAffinity and PodTopologySpread requeue when another pod is deleted or leaves its
    nominated node (their isSchedulableAfterPodChange at the release's tag)."""

    #: an unassigned pod that holds a nominated node (one leaving its nomination) is looked at like
    #: an assigned one, as their filters count it (#135392, 1.36); before, such a pod never requeues
    nominated_pods_count: bool
    #: InterPodAffinity: a deleted pod whose own required anti-affinity selects the rejected pod
    #: requeues it (#135325, 1.36); before, only the rejected pod's anti-affinity is looked at
    deleted_pods_anti_affinity: bool
    #: InterPodAffinity: a pod matching ANY required anti-affinity term (not ALL of them) is
    #: enough (#139161, 1.37; podMatchesAnyAffinityTerms)
    anti_affinity_any_term: bool
    #: InterPodAffinity: a term's namespaceSelector is matched against the event pod's namespace's
    #: labels where the term needs them, and an unknown namespace requeues the pod (#141954, 1.38);
    #: before, against no labels (upstream passed nil)
    namespace_selector_labels: bool

    def pod_on_a_node(self, event: ClusterEvent) -> bool:
        """Whether the event's pod is on a node as InterPodAffinity's and PodTopologySpread's
        filters count pods: assigned, or with ``nominated_pods_count`` also nominated to a node (a
        pod leaving its nomination is offered as a deleted pod with no node and its old nominated
        node)."""
        return bool(event.node_name) or (self.nominated_pods_count and bool(event.nominated_node))


@total_ordering
@dataclass(frozen=True)
class KubeVersion:
    """A Kubernetes minor release, such as 1.34."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> KubeVersion:
        """"1.34", "v1.34" or "v1.34.1" (the patch level is not modelled apart)."""
        parts = text.strip().removeprefix("v").split(".")
        if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
            raise ConfigError(f'"{text}" is not a Kubernetes version (expected MAJOR.MINOR such as 1.34)')
        return cls(int(parts[0]), int(parts[1]))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, KubeVersion):
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


#: the default MultiPoint set in order, with score weights (0: none given)
Profile = tuple[tuple[str, int], ...]


@dataclass(frozen=True, kw_only=True)
class ReleaseRules:
    """One release's value of every rule that releases differ in (resolved: the release before it
    plus its changes, framework/release_tables.py)."""

    #: the kube-scheduler patch release the rules were read from and are judged against (v1.35.4)
    scheduler_version: str
    #: pkg/features/kube_features.go: the gates that change scheduling, with their default, stage and lock
    gates: Mapping[Gate, GateSpec]
    #: default_plugins.go: the default MultiPoint set in order, with score weights (0: none given)
    default_profile: Profile
    #: defaults.go / types_pluginargs.go: each plugin's args (v1 API shape) when pluginConfig has
    #: none (a plugin not named: its decoder decides alone)
    default_args: Mapping[str, Mapping[str, Any]]
    #: plugins/registry.go NewInTreeRegistry: the in-tree plugins the release has
    plugins: frozenset[str]
    #: per plugin, its named rules where its code differs by release (not gates): each plugin
    #: decodes its own once, in its constructor, into a frozen value that picks its strategy
    #: functions, as it decodes its args
    plugin_rules: Mapping[str, Mapping[str, Any]]
    #: reason texts that releases word differently
    messages: Messages
    #: component-helpers resource/helpers.go: how a running pod whose status reports an in-place
    #: resize is counted on its node (kplan/model/resize.py)
    resize: ResizeAccounting
    #: status.nominatedNodeName around binding and failures
    nomination: NominationRules
    #: what InterPodAffinity's and PodTopologySpread's pod-event hints look at
    queueing_hints: QueueingHintRules
