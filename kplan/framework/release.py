"""The Kubernetes release kplan models in a run: its rules and the values of its feature gates.

One frozen ``Release`` is built once (``Release.of``) from the version and ``--feature-gates``
syntax, carried by the SchedulerSetup (scheduler/setup.py) and handed to every plugin factory
through the framework handle (``handle.release``), as upstream hands ``feature.Features`` to its
plugins. A release is its row of the release table (framework/release_tables.py, of the kinds of
rule in framework/release_rules.py) with its gates' values; every difference between releases is
read from it one way, ``release.<rule>`` (default profile and args, the plugins it has, message
texts, each plugin's own rules), never decided by version checks inside plugins. How to add a
release: docs/development.md.

The modules point one way: release -> release_tables -> release_rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from kplan.errors import ConfigError
from kplan.framework.features import Features, Gate, parse_feature_gates
from kplan.framework.release_rules import (
    KubeVersion,
    Messages,
    NominationRules,
    QueueingHintRules,
    ReleaseRules,
)
from kplan.framework.release_tables import DEFAULT_RELEASE, MODELLED_GATE_CHANGES, RELEASES
from kplan.model.objects import Pod, evolve_pod
from kplan.model.parse import resized_resources

__all__ = ["KubeVersion", "Messages", "NominationRules", "QueueingHintRules", "Release", "ReleaseRules",
           "default_release"]


@dataclass(frozen=True, kw_only=True, eq=False)
class Release(ReleaseRules):
    """One modelled kube-scheduler release: its rules (``ReleaseRules``' fields, read as
    ``release.<rule>``) and the values of its feature gates. Two releases are equal when their
    version and gate values are (the rules follow from the version)."""

    version: KubeVersion
    features: Features

    @classmethod
    def of(cls, version: KubeVersion | str | None = None, feature_gates: str | Mapping[str, bool] = "") -> Release:
        """The release ``version`` (None: the default) with ``feature_gates`` (``--feature-gates``
        syntax, or already parsed) applied to its defaults. Raises ConfigError for a release
        kplan does not model, a gate the release does not know or one locked to its default,
        and for a gate changed from its default where kplan does not model that."""
        v = DEFAULT_RELEASE if version is None else (
            KubeVersion.parse(version) if isinstance(version, str) else version)
        rules = RELEASES.get(v)
        if rules is None:
            raise ConfigError(f"kplan does not model Kubernetes {v} (it models {', '.join(map(str, sorted(RELEASES)))})")
        overrides = parse_feature_gates(feature_gates) if isinstance(feature_gates, str) else feature_gates
        features = Features.of(rules.gates, overrides)
        for gate, on in features.changed(rules.gates).items():
            if (gate, on) not in MODELLED_GATE_CHANGES.get(v, frozenset()):
                raise ConfigError(f"feature gate {gate.value}={str(on).lower()}: kplan models kube-scheduler {v} "
                                  f"with this gate at its default ({str(not on).lower()}) only")
        return cls.with_features(v, features)

    @classmethod
    def with_features(cls, version: KubeVersion, features: Features) -> Release:
        """The release ``version`` (modelled) with exactly these gate values, unchecked (tests)."""
        rules = RELEASES[version]
        return cls(version=version, features=features,
                   **{f.name: getattr(rules, f.name) for f in fields(ReleaseRules)})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Release):
            return NotImplemented
        return (self.version, self.features) == (other.version, other.features)

    def __hash__(self) -> int:
        return hash((self.version, self.features))

    def __repr__(self) -> str:
        return f"Release({self.version}, {self.features})"

    def enabled(self, gate: Gate) -> bool:
        return self.features.enabled(gate)

    def resized(self, pod: Pod) -> Pod:
        """``pod``, running on a node, with the requests this release counts for it there: its
        spec's unless its status reports an in-place resize (kplan/model/resize.py)."""
        facts = pod.resize
        # the gate is gone from 1.38 (GA since 1.35): in-place resize is always on there
        gate = Gate.IN_PLACE_POD_VERTICAL_SCALING
        if facts is None or (gate in self.gates and not self.enabled(gate)):
            return pod
        pod_level = Gate.IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING  # from 1.35 (alpha, off)
        requests, nonzero_cpu, nonzero_mem = resized_resources(
            facts, self.resize, pod_level in self.gates and self.enabled(pod_level))
        return evolve_pod(pod, requests=requests, nonzero_cpu=nonzero_cpu, nonzero_mem=nonzero_mem)

    def __str__(self) -> str:
        return str(self.version)


def default_release() -> Release:
    """The release kplan models when none is asked for, with its default gates."""
    return Release.of()
