"""Karpenter's objects as kplan reads them: NodePools and NodeClaims (karpenter.sh/v1) and the
instance-type catalog a cloud provider offers (sigs.k8s.io/karpenter v1.15.0 pkg/apis/v1 and
pkg/cloudprovider/types.go). Frozen values, parsed once by kplan/model/parse_karpenter.py.

Resources are integers as everywhere in kplan: millicores for ``cpu``, units (bytes, pods) for
the rest. Prices are float64 dollars per hour, as upstream keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kplan.model.objects import Taint

GROUP = "karpenter.sh"
API_VERSION = "karpenter.sh/v1"
NODE_POOL_KIND = "NodePool"
NODE_CLAIM_KIND = "NodeClaim"

# label keys (pkg/apis/v1/labels.go and k8s.io/api/core/v1 well_known_labels.go)
NODE_POOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
NODE_INITIALIZED_LABEL = "karpenter.sh/initialized"
NODE_REGISTERED_LABEL = "karpenter.sh/registered"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
ARCH_LABEL = "kubernetes.io/arch"
OS_LABEL = "kubernetes.io/os"
HOSTNAME_LABEL = "kubernetes.io/hostname"
WINDOWS_BUILD_LABEL = "node.kubernetes.io/windows-build"

CAPACITY_TYPE_SPOT = "spot"
CAPACITY_TYPE_ON_DEMAND = "on-demand"
CAPACITY_TYPE_RESERVED = "reserved"
#: WellKnownValuesForRequirements: the values a requirement on the capacity type may name
CAPACITY_TYPES = (CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, CAPACITY_TYPE_RESERVED)

#: WellKnownLabels of pkg/apis/v1/labels.go: labels a requirement may name without a NodePool or
#: instance type defining them (the catalog adds its own, as the KWOK provider's init does)
WELL_KNOWN_LABELS = frozenset({NODE_POOL_LABEL, ZONE_LABEL, REGION_LABEL, INSTANCE_TYPE_LABEL, ARCH_LABEL,
                               OS_LABEL, CAPACITY_TYPE_LABEL, WINDOWS_BUILD_LABEL})
#: NormalizedLabels: deprecated keys read as their stable ones
NORMALIZED_LABELS: Mapping[str, str] = MappingProxyType({
    "failure-domain.beta.kubernetes.io/zone": ZONE_LABEL,
    "beta.kubernetes.io/arch": ARCH_LABEL,
    "beta.kubernetes.io/os": OS_LABEL,
    "beta.kubernetes.io/instance-type": INSTANCE_TYPE_LABEL,
    "failure-domain.beta.kubernetes.io/region": REGION_LABEL,
})
#: RestrictedLabels and RestrictedLabelDomains: never allowed in a NodePool's requirements
RESTRICTED_LABELS = frozenset({HOSTNAME_LABEL})
RESTRICTED_LABEL_DOMAINS = frozenset({GROUP})

# the operators of NodeSelectorRequirementWithMinValues (Gte/Lte are Karpenter's own)
IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT, GTE, LTE = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"
OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT, GTE, LTE)

# consolidation policies (NodePool.spec.disruption.consolidationPolicy)
WHEN_EMPTY = "WhenEmpty"
WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
BALANCED = "Balanced"
CONSOLIDATION_POLICIES = (WHEN_EMPTY, WHEN_EMPTY_OR_UNDERUTILIZED, BALANCED)
DISRUPTION_REASONS = ("Underutilized", "Empty", "Drifted", "Unhealthy")


def _empty_amounts() -> Mapping[str, int]:
    return MappingProxyType({})


def _empty_labels() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Requirement:
    """A NodeSelectorRequirementWithMinValues as written (the key already normalised); the
    requirement algebra lives in kplan/autoscaler/karpenter/requirements.py."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None


@dataclass(frozen=True, slots=True)
class NodeClassRef:
    group: str
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class Budget:
    """A disruption budget: ``nodes`` is "N" or "N%"; schedule/duration bound when it applies."""

    nodes: str = "10%"
    reasons: tuple[str, ...] = ()
    schedule: str | None = None
    #: seconds
    duration: int | None = None


@dataclass(frozen=True, slots=True)
class Disruption:
    consolidation_policy: str = WHEN_EMPTY_OR_UNDERUTILIZED
    #: seconds; None for "Never"
    consolidate_after: int | None = 0
    budgets: tuple[Budget, ...] = (Budget(),)


@dataclass(frozen=True, eq=False, slots=True)
class NodePool:
    """A karpenter.sh/v1 NodePool, with API defaults applied."""

    name: str
    #: spec.template.metadata
    labels: Mapping[str, str] = field(default_factory=_empty_labels)
    annotations: Mapping[str, str] = field(default_factory=_empty_labels)
    requirements: tuple[Requirement, ...] = ()
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()
    node_class_ref: NodeClassRef | None = None
    #: seconds; None for "Never"
    expire_after: int | None = 720 * 3600
    termination_grace_period: int | None = None
    disruption: Disruption = Disruption()
    #: spec.limits: resource name → integer amount ("nodes" counts nodes)
    limits: Mapping[str, int] = field(default_factory=_empty_amounts)
    #: spec.weight (1–100); None when unset (ordered as 0)
    weight: int | None = None
    #: spec.replicas: a static NodePool, which the provisioner does not launch for
    replicas: int | None = None
    creation_time: float | None = None
    source: str = ""


@dataclass(frozen=True, eq=False, slots=True)
class NodeClaim:
    """A karpenter.sh/v1 NodeClaim: a node Karpenter launched or is launching."""

    name: str
    #: the karpenter.sh/nodepool label ("" when the claim has none)
    node_pool: str = ""
    labels: Mapping[str, str] = field(default_factory=_empty_labels)
    annotations: Mapping[str, str] = field(default_factory=_empty_labels)
    requirements: tuple[Requirement, ...] = ()
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()
    #: spec.resources.requests
    requests: Mapping[str, int] = field(default_factory=_empty_amounts)
    node_class_ref: NodeClassRef | None = None
    expire_after: int | None = 720 * 3600
    termination_grace_period: int | None = None
    #: status
    node_name: str = ""
    provider_id: str = ""
    capacity: Mapping[str, int] = field(default_factory=_empty_amounts)
    allocatable: Mapping[str, int] = field(default_factory=_empty_amounts)
    #: status.conditions of type Launched/Registered/Initialized that are "True"
    launched: bool = False
    registered: bool = False
    initialized: bool = False
    creation_time: float | None = None
    deletion_time: float | None = None
    #: lastTransitionTime of the Initialized condition when it is True (None: not given)
    initialized_time: float | None = None
    #: status.lastPodEventTime: the last pod scheduled to or removed from its node (disruption's
    #: consolidateAfter counts from it)
    last_pod_event_time: float | None = None
    #: a Drifted condition is True: since when (lastTransitionTime) and why (its reason)
    drifted: bool = False
    drifted_time: float | None = None
    drift_reason: str = ""
    source: str = ""


@dataclass(frozen=True, slots=True)
class Offering:
    """One way to buy an instance type (cloudprovider.Offering): a zone and capacity type at a price."""

    #: dollars per hour (float64 upstream)
    price: float
    available: bool
    #: the offering's requirements (zone, capacity type, reservation id, …), as the catalog gives them
    requirements: tuple[Requirement, ...]
    zone: str = ""
    capacity_type: str = ""
    reservation_capacity: int = 0


@dataclass(frozen=True, eq=False, slots=True)
class InstanceType:
    """An instance type of the catalog (cloudprovider.InstanceType)."""

    name: str
    architecture: str
    operating_systems: tuple[str, ...]
    #: resource name → integer capacity (cpu in millicores), pods included
    capacity: Mapping[str, int]
    #: kube-reserved + system-reserved + eviction threshold (InstanceTypeOverhead.Total)
    overhead: Mapping[str, int]
    offerings: tuple[Offering, ...]
    #: labels the provider adds for the type beyond the well-known ones (KWOK: instance size,
    #: family, cpu, memory; AWS: instance category, generation, …), each a single value
    labels: Mapping[str, str] = field(default_factory=_empty_labels)

    @property
    def allocatable(self) -> Mapping[str, int]:
        return allocatable_of(self.capacity, self.overhead)


def allocatable_of(capacity: Mapping[str, int], overhead: Mapping[str, int]) -> Mapping[str, int]:
    """InstanceType.computeAllocatable (pkg/cloudprovider/types.go): each capacity entry minus its
    overhead (resources.Subtract keeps only the capacity's names and may go negative), then each
    hugepages capacity taken from memory, floored at zero."""
    out = {k: v - overhead.get(k, 0) for k, v in capacity.items()}
    for k, v in capacity.items():
        if k.startswith("hugepages-"):
            out["memory"] = max(0, out.get("memory", 0) - v)
    return MappingProxyType(out)


@dataclass(frozen=True, slots=True)
class Catalog:
    """The instance types a cloud provider offers, in the order the catalog lists them."""

    instance_types: tuple[InstanceType, ...]
    #: where it came from ("aws (built in)" or a file name), for messages
    source: str = ""
    #: label keys the provider makes well known (v1.WellKnownLabels plus the provider's own and
    #: every offering requirement's key, as the KWOK provider registers them)
    well_known_labels: frozenset[str] = WELL_KNOWN_LABELS
    #: RestrictedLabelDomains with the provider's own (KWOK adds karpenter.kwok.sh)
    restricted_label_domains: frozenset[str] = RESTRICTED_LABEL_DOMAINS

    def by_name(self) -> Mapping[str, InstanceType]:
        return {it.name: it for it in self.instance_types}
