"""The Kubernetes release kplan models in a run: its minor version and its feature gates.

One frozen ``Release`` is built once (``Release.of``) from the version and ``--feature-gates``
syntax, carried by the SchedulerConfig and handed to every plugin factory through the framework
handle (``handle.release``), as upstream hands ``feature.Features`` to its plugins. What differs
between releases is looked up in the tables of framework/release_tables.py by ``release.version``
(default profile, default plugin args, the plugins the release has, message texts), never
decided by version checks inside plugins; where a formula changed, the tables pick a plugin
variant. How to add a release: docs/development.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import total_ordering
from typing import TYPE_CHECKING, Any

from kplan.errors import ConfigError
from kplan.framework.features import Features, Gate, GateSpec, parse_feature_gates
from kplan.model.objects import Pod, evolve_pod
from kplan.model.parse import resized_resources

if TYPE_CHECKING:
    from kplan.framework.events import ClusterEvent
    from kplan.framework.release_tables import ReleaseRows


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


@dataclass(frozen=True)
class Release:
    """One modelled kube-scheduler release and the values of its feature gates."""

    version: KubeVersion
    features: Features

    @classmethod
    def of(cls, version: KubeVersion | str | None = None, feature_gates: str | Mapping[str, bool] = "") -> Release:
        """The release ``version`` (None: the default) with ``feature_gates`` (``--feature-gates``
        syntax, or already parsed) applied to its defaults. Raises ConfigError for a release
        kplan does not model, a gate the release does not know or one locked to its default,
        and for a gate changed from its default where kplan has no variant for that."""
        from kplan.framework.release_tables import DEFAULT_RELEASE, GATES, MODELLED_GATE_CHANGES

        v = DEFAULT_RELEASE if version is None else (
            KubeVersion.parse(version) if isinstance(version, str) else version)
        if v not in GATES:
            raise ConfigError(f"kplan does not model Kubernetes {v} (it models {', '.join(map(str, sorted(GATES)))})")
        overrides = parse_feature_gates(feature_gates) if isinstance(feature_gates, str) else feature_gates
        features = Features.of(GATES[v], overrides)
        for gate, on in features.changed(GATES[v]).items():
            if (gate, on) not in MODELLED_GATE_CHANGES.get(v, frozenset()):
                raise ConfigError(f"feature gate {gate.value}={str(on).lower()}: kplan models kube-scheduler {v} "
                                  f"with this gate at its default ({str(not on).lower()}) only")
        return cls(v, features)

    def enabled(self, gate: Gate) -> bool:
        return self.features.enabled(gate)

    @property
    def rows(self) -> ReleaseRows:
        """This release's row of every table it inherits from the release before it
        (framework/release_tables.py, imported here because its tables are built of this module's
        types)."""
        from kplan.framework.release_tables import ROWS

        return ROWS[self.version]

    @property
    def gates(self) -> Mapping[Gate, GateSpec]:
        return self.rows.gates

    @property
    def default_profile(self) -> tuple[tuple[str, int], ...]:
        """The default MultiPoint set, in order, with weights (reference 1.2)."""
        return self.rows.profile

    def default_args(self, plugin: str) -> Mapping[str, Any] | None:
        """The args (v1 API shape) of ``plugin`` when the configuration gives none (None: the
        plugin's decoder decides alone)."""
        return self.rows.args.get(plugin)

    @property
    def plugins(self) -> frozenset[str]:
        """The in-tree plugins this release's registry has."""
        return self.rows.plugins

    @property
    def nomination(self) -> NominationRules:
        return self.rows.nomination

    @property
    def queueing_hints(self) -> QueueingHintRules:
        return self.rows.queueing_hints

    def resized(self, pod: Pod) -> Pod:
        """``pod``, running on a node, with the requests this release counts for it there: its
        spec's unless its status reports an in-place resize (kplan/model/resize.py)."""
        facts = pod.resize
        if facts is None or not self.enabled(Gate.IN_PLACE_POD_VERTICAL_SCALING):
            return pod
        pod_level = Gate.IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING  # from 1.35 (alpha, off)
        requests, nonzero_cpu, nonzero_mem = resized_resources(
            facts, self.rows.resize, pod_level in self.gates and self.enabled(pod_level))
        return evolve_pod(pod, requests=requests, nonzero_cpu=nonzero_cpu, nonzero_mem=nonzero_mem)

    @property
    def scheduler_version(self) -> str:
        """The kube-scheduler patch release modelled, such as v1.35.4."""
        from kplan.framework.release_tables import PATCH_RELEASES

        return PATCH_RELEASES[self.version]

    @property
    def messages(self) -> Messages:
        return self.rows.messages

    def __str__(self) -> str:
        return str(self.version)


def default_release() -> Release:
    """The release kplan models when none is asked for, with its default gates."""
    return Release.of()
