"""In-place pod resize (KEP-1287): what a running pod counts on its node while a resize is under way.

kube-scheduler counts a pod on its node with ``PodRequests(pod, UseStatusResources)`` (framework
``PodInfo.CalculateResource``) whenever InPlacePodVerticalScaling is on: beta and on in 1.33 and
1.34, GA in 1.35. The incoming pod's own Fit request is its spec alone (``computePodResourceRequest``),
so only the pods already on nodes are affected. The rule is component-helpers' (resource/helpers.go)
and changed twice:

- v0.34–v0.36 (``PER_CONTAINER``): each container whose status has ``resources`` counts
  ``max(spec, status.resources.requests, allocatedResources)`` — without the spec when the pod's
  ``PodResizePending`` condition says ``Infeasible`` — before the sidecar formula adds them up; of the
  init containers only restartable ones (sidecars) read their status.
- v0.37 (``AGGREGATE``): the maximum is taken of three whole-pod sums — of the specs, of the allocated
  resources (a container without ``allocatedResources`` counts its spec) and of the actuated
  resources (``status.resources.requests``, else the allocated, else the spec) — every init container
  read; with an Infeasible resize the spec sum is left out and so is the spec of a container without
  a status.
- Pod-level resources (InPlacePodLevelResourcesVerticalScaling, beta and on from 1.36): the pod's
  ``spec.resources.requests`` give way to ``max(spec, status.resources.requests,
  status.allocatedResources)`` when ``status.resources`` is set; in v0.37 the two pod-level status
  lists also replace the container sums when both are set.

Parsed once (``ResizeFacts``, only for pods whose status could change what they count) and applied
per release by ``effective_requests`` (the release's rule from framework/release_tables.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from kplan.model.shared import share_frozen_dataclasses

#: resource name → amount in 1e-9 units (parse.py's ResourceList, read-only)
Amounts = Mapping[str, int]


class ResizeAccounting(Enum):
    """Which component-helpers rule a release counts resized pods by (see the module text)."""

    PER_CONTAINER = "per-container"
    AGGREGATE = "aggregate"


#: a container's role in the sidecar formula
CONTAINER, SIDECAR, INIT = "container", "sidecar", "init"


@dataclass(frozen=True, slots=True)
class ContainerResize:
    """One container's spec requests and what its status says."""

    role: str
    spec: Amounts
    #: a container status of this name exists
    has_status: bool = False
    #: the status has ``resources`` (its requests may still be absent)
    has_resources: bool = False
    #: ``resources.requests`` (None: absent)
    actuated: Amounts | None = None
    #: ``allocatedResources`` (None: absent)
    allocated: Amounts | None = None


@dataclass(frozen=True, eq=False, slots=True)
class ResizeFacts:
    """What a running pod's spec and status give the resize rules (resource amounts in 1e-9 units)."""

    containers: tuple[ContainerResize, ...]
    #: spec.resources.requests after API defaulting (empty: no pod-level requests)
    pod_spec: Amounts
    overhead: Amounts
    #: the PodResizePending condition's reason is Infeasible
    infeasible: bool = False
    #: status.resources is set
    pod_has_resources: bool = False
    #: status.resources.requests (None: absent)
    pod_actuated: Amounts | None = None
    #: status.allocatedResources (None: absent)
    pod_allocated: Amounts | None = None
    #: (accounting, pod level, non-missing defaults) → result, filled as releases ask
    cache: dict[tuple[ResizeAccounting, bool, tuple[tuple[str, int], ...]], dict[str, int]] = field(
        default_factory=dict, compare=False, repr=False)


def supported_pod_level(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and hugepages."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _max(*lists: Amounts | None) -> dict[str, int]:
    """component-helpers ``max``: per resource the largest of the lists that name it (None: none)."""
    out: dict[str, int] = {}
    for rl in lists:
        for k, q in (rl or {}).items():
            if k not in out or q > out[k]:
                out[k] = q
    return out


def _non_missing(rl: Amounts | None, defaults: Amounts) -> Amounts:
    """applyNonMissing: the defaults added for resources the list does not name."""
    if not defaults:
        return rl or {}
    out = dict(rl or {})
    for k, q in defaults.items():
        out.setdefault(k, q)
    return out


def aggregate_requests(containers: Iterable[Amounts], inits: Sequence[tuple[Amounts, bool]]) -> dict[str, int]:
    """AggregateContainerRequests' sidecar formula: the containers summed, the restartable init
    containers (``True``) added, and the peak of any init container's start (itself plus the
    sidecars started before it) when that is larger."""
    total: dict[str, int] = {}
    for rl in containers:
        for k, q in rl.items():
            total[k] = total.get(k, 0) + q
    sidecars: dict[str, int] = {}
    peak: dict[str, int] = {}
    for rl, restartable in inits:
        if restartable:
            for k, q in rl.items():
                total[k] = total.get(k, 0) + q
                sidecars[k] = sidecars.get(k, 0) + q
            use = dict(sidecars)
        else:
            use = dict(rl)
            for k, q in sidecars.items():
                use[k] = use.get(k, 0) + q
        for k, q in use.items():
            if k not in peak or q > peak[k]:
                peak[k] = q
    for k, q in peak.items():
        if k not in total or q > total[k]:
            total[k] = q
    return total


def _aggregate(facts: ResizeFacts, of: dict[int, Amounts | None], defaults: Amounts) -> dict[str, int]:
    rows = [(c, _non_missing(of[i], defaults)) for i, c in enumerate(facts.containers)]
    return aggregate_requests((rl for c, rl in rows if c.role == CONTAINER),
                              [(rl, c.role == SIDECAR) for c, rl in rows if c.role != CONTAINER])


def _per_container(facts: ResizeFacts, defaults: Amounts) -> dict[str, int]:
    """v0.34–v0.36 AggregateContainerRequests with UseStatusResources (determineEffectiveRequests)."""
    of: dict[int, Amounts | None] = {}
    for i, c in enumerate(facts.containers):
        if c.role != INIT and c.has_status and c.has_resources:
            of[i] = (_max(c.actuated, c.allocated) if facts.infeasible
                     else _max(c.spec, c.actuated, c.allocated))
        else:
            of[i] = c.spec
    return _aggregate(facts, of, defaults)


def _whole_pod(facts: ResizeFacts, defaults: Amounts, pod_level: bool) -> dict[str, int]:
    """v0.37 AggregateContainerRequests with UseStatusResources: the largest of three sums."""
    infeasible = facts.infeasible
    spec = _aggregate(facts, {i: c.spec for i, c in enumerate(facts.containers)}, defaults)
    if (pod_level and facts.pod_allocated is not None and facts.pod_has_resources
            and facts.pod_actuated is not None):
        allocated: Amounts = facts.pod_allocated
        actuated: Amounts = facts.pod_actuated
    else:
        alloc_of: dict[int, Amounts | None] = {}
        act_of: dict[int, Amounts | None] = {}
        for i, c in enumerate(facts.containers):
            fallback = None if infeasible else c.spec
            alloc = c.allocated if c.has_status and c.allocated is not None else None
            alloc_of[i] = alloc if alloc is not None else fallback
            if c.has_status and c.has_resources and c.actuated is not None:
                act_of[i] = c.actuated
            else:
                act_of[i] = alloc if alloc is not None else fallback
        allocated, actuated = _aggregate(facts, alloc_of, defaults), _aggregate(facts, act_of, defaults)
    return _max(actuated, allocated) if infeasible else _max(spec, actuated, allocated)


def effective_requests(facts: ResizeFacts, accounting: ResizeAccounting, pod_level: bool,
                       defaults: Amounts) -> dict[str, int]:
    """PodRequests(pod, UseStatusResources) of a release (amounts in 1e-9 units): ``accounting`` is
    its component-helpers rule, ``pod_level`` whether InPlacePodLevelResourcesVerticalScaling is
    on, ``defaults`` the NonMissingContainerRequests (empty for the exact requests)."""
    key = (accounting, pod_level, tuple(sorted(defaults.items())))
    found = facts.cache.get(key)
    if found is not None:
        return dict(found)
    if accounting is ResizeAccounting.PER_CONTAINER:
        reqs = _per_container(facts, defaults)
    else:
        reqs = _whole_pod(facts, defaults, pod_level)
    if any(supported_pod_level(k) for k in facts.pod_spec):
        effective = (_max(None if facts.infeasible else facts.pod_spec, facts.pod_actuated, facts.pod_allocated)
                     if pod_level and facts.pod_has_resources else facts.pod_spec)
        # v0.34–v0.36 give the spec's names the effective value (0 where it lacks one); v0.37 takes
        # the effective list's names
        names = facts.pod_spec if accounting is ResizeAccounting.PER_CONTAINER else effective
        for k in names:
            if supported_pod_level(k):
                reqs[k] = effective.get(k, 0)
    for k, q in facts.overhead.items():
        reqs[k] = reqs.get(k, 0) + q
    facts.cache[key] = reqs
    return dict(reqs)


share_frozen_dataclasses(globals())
