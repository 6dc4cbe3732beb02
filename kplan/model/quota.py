"""ResourceQuota and the part of a new pod that quota admission reads, as typed values.

Parsed by kplan.model.parse (parse_resource_quota, parse_quota_pod); judged by
kplan.workloads.resourcequota. Quantities keep their format (kplan.model.quantity.Quantity),
since the API server's messages print them as they were written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kplan.model.quantity import Quantity

#: a resource list whose quantities keep their format, by resource name
QuotaList = Mapping[str, Quantity]


@dataclass(frozen=True, slots=True)
class ScopeRequirement:
    """ScopedResourceSelectorRequirement: spec.scopes become (scope, Exists); the scopeSelector's
    matchExpressions are kept as written."""

    scope_name: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceQuota:
    namespace: str
    name: str
    #: status.hard, or spec.hard when the object has no status (the quota controller copies it)
    hard: QuotaList
    #: status.used; None when the object has none (a quota the manifests create)
    used: QuotaList | None
    scopes: tuple[ScopeRequirement, ...] = ()
    source: str = ""


@dataclass(frozen=True, slots=True)
class QuotaContainer:
    name: str
    #: requests as the API server defaults them (a missing request takes the limit)
    requests: QuotaList
    limits: QuotaList
    #: an init container with restartPolicy Always (a sidecar)
    restartable: bool = False


@dataclass(frozen=True, slots=True)
class QuotaPod:
    """What quota admission reads of a pod being created (pods.go's evaluator)."""

    containers: tuple[QuotaContainer, ...]
    init_containers: tuple[QuotaContainer, ...] = ()
    #: spec.resources (pod-level), requests defaulted as the API server does
    pod_requests: QuotaList | None = None
    pod_limits: QuotaList | None = None
    overhead: QuotaList | None = None
    #: spec.activeDeadlineSeconds (the Terminating scope)
    active_deadline_seconds: int | None = None
    phase: str = ""
