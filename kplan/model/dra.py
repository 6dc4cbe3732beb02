"""Dynamic resource allocation objects (resource.k8s.io), parsed once into small typed values.

resource.k8s.io/v1 and the beta versions kube-scheduler 1.34 still serves (v1beta2 has v1's
shape; v1beta1 puts a request's fields directly on the request and a device's attributes under
``basic``). Inputs get the v1 defaults: allocationMode ExactCount, count 1.

Device taints and tolerations (KEP-5055), DeviceTaintRules, partitionable devices (KEP-4815:
shared counters, per-device node selection) and consumable capacity (KEP-5075: devices allowing
multiple allocations, capacity request policies, requests' capacity, ``distinctAttribute``, the
allocation results' ``shareID`` and ``consumedCapacity``) are parsed here whatever the release;
whether they count is the allocator's ``DeviceFeatures`` (the release's gates: with a gate off the
API server drops such fields, so the allocator ignores them). Fields kplan does not model (binding
conditions) are refused with a one-line error naming the object and field: ignoring them would
give wrong answers. A DeviceClass's
``extendedResourceName`` (DRAExtendedResource, KEP-5004) is kept: the releases whose gate is on
use it (plugins/dra/extended.py), the others ignore it as their scheduler does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kplan.model.selectors import NodeSelector
from kplan.model.shared import share_frozen_dataclasses


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


EXACT_COUNT, ALL = "ExactCount", "All"
#: AllocationResultsMaxSize: at most this many devices per claim
MAX_DEVICES_PER_CLAIM = 32
#: the finalizer the scheduler adds before writing an allocation
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"
#: the annotation the resourceclaim controller puts on claims it creates from templates
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: the annotation (value "true") of the claim the scheduler creates for a pod's extended resources
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: every DeviceClass also serves the extended resource ``<prefix><class name>`` (the implicit name)
DEVICE_CLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"
API_GROUP = "resource.k8s.io"
SERVED_VERSIONS = ("v1", "v1beta2", "v1beta1")
KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")
#: DeviceTaintRule: v1alpha3 (1.33–1.35), v1beta2 (1.36), v1 (1.37)
TAINT_RULE_VERSIONS = ("v1", "v1beta2", "v1alpha3")

#: attribute value: (type, value) with type one of "string", "int", "bool", "version"
AttributeValue = tuple[str, Any]


#: DeviceTaintEffect values that prevent allocation; any other effect (None, unknown) is ignored
NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"
#: DeviceTolerationOperator values ("" is Equal, the API default)
EQUAL, EXISTS = "Equal", "Exists"


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str = ""
    effect: str = ""


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    key: str = ""
    operator: str = EQUAL
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: DeviceTaint) -> bool:
        """resourceclaim.ToleratesTaint: effect and key match when given, then Equal compares the
        value and Exists does not; an unknown operator tolerates nothing."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", EQUAL):
            return self.value == taint.value
        return self.operator == EXISTS


@dataclass(frozen=True, slots=True)
class DeviceFeatures:
    """The allocator's optional behaviour (structured.Features), from the release's gates."""

    #: DRADeviceTaints: NoSchedule/NoExecute taints keep a device from requests that do not tolerate them
    device_taints: bool = False
    #: DRADeviceTaintRules: DeviceTaintRule objects add taints to the devices they select
    device_taint_rules: bool = False
    #: DRAPartitionableDevices: shared counters, devices consuming them, per-device node selection
    partitionable_devices: bool = False
    #: the pool rules of the allocators from 1.35 on (not a gate): a pool missing slices is not
    #: allocated from (an older generation elsewhere makes it obsolete, ignored); an invalid pool is
    #: skipped, and the node fails with "invalid resource pools were encountered" when nothing fits
    skip_unusable_pools: bool = False
    #: 1.35 and 1.36 (not a gate): a slice with shared counters reaches every node whatever its
    #: node selection (1.37: only its nodes; others get it when they look up a pool missing slices)
    counter_slices_reach_every_node: bool = False
    #: DRAConsumableCapacity: devices allowing multiple allocations, capacity request policies,
    #: requests' capacity, distinctAttribute constraints, shared allocation results
    consumable_capacity: bool = False
    #: DRAFractionalCapacityRange (1.37): a validRange whose min, max and step are whole
    #: thousandths is rounded in thousandths, not in whole units
    fractional_capacity_range: bool = False
    #: the "incubating" allocator of 1.36: distinctAttribute keeps one value per request name (a
    #: request's later device replaces its earlier one's), 1.37 keeps every device's
    distinct_per_request_name: bool = False
    #: the allocators from 1.37 (not a gate): an ``All`` request lists the devices whose capacity
    #: could serve it when empty (what is consumed is checked when allocating); 1.36 lists the
    #: devices with room left
    all_requests_listed_by_capacity_alone: bool = False
    #: from 1.37: a capacity request whose consumed amount would be negative aborts the attempt;
    #: 1.36 skips a device on any capacity error
    negative_capacity_aborts: bool = False
    #: from 1.37: a device shared without consumed capacity counts as in use for its counters
    shared_devices_count_as_in_use: bool = False
    #: the allocator from 1.38 (#141898): an ``All`` request on a node whose pool is incomplete or
    #: invalid fails that node (ErrFailedAllocationOnNode) rather than the attempt
    all_requests_fail_the_node: bool = False
    #: the allocator from 1.38 (#142202): a request's capacity names match the device's with or
    #: without the driver name as their domain (1.37: only as written)
    qualified_capacity_names: bool = False


#: every optional behaviour off: kube-scheduler 1.34 and 1.35 with their default gates
FEATURES_OFF = DeviceFeatures()


@dataclass(frozen=True, slots=True)
class CounterSet:
    """A ResourceSlice's sharedCounters entry, or a device's consumesCounters entry (``name`` is
    then the counter set it draws from): counter name → amount in nano units."""

    name: str
    counters: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class RequestPolicy:
    """A device capacity's requestPolicy (KEP-5075), amounts in nano units: ``default`` (None:
    none), then either ``valid_values`` (ascending) or the range ``min``/``max``/``step``."""

    default: int | None = None
    valid_values: tuple[int, ...] = ()
    min: int | None = None
    max: int | None = None
    step: int | None = None
    has_range: bool = False


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    #: qualified attribute name as written in the slice ("model" or "dra.example.com/numa")
    attributes: Mapping[str, AttributeValue]
    #: capacity name → the quantity as written
    capacity: Mapping[str, str]
    taints: tuple[DeviceTaint, ...] = ()
    consumes_counters: tuple[CounterSet, ...] = ()
    #: per-device node selection (the slice's perDeviceNodeSelection): exactly one is set
    node_name: str = ""
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    #: allowMultipleAllocations (DRAConsumableCapacity): several claims may share the device
    allow_multiple_allocations: bool = False
    #: capacity name → its requestPolicy, for the capacities that have one
    request_policies: Mapping[str, RequestPolicy] = field(default_factory=lambda: MappingProxyType({}))

    def on_node(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """NodeMatches with the device's own node selection."""
        if self.node_name:
            return self.node_name == node_name
        if self.all_nodes:
            return True
        return self.node_selector is not None and self.node_selector.matches(node_name, labels)


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str = ""
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    devices: tuple[Device, ...] = ()
    source: str = ""
    shared_counters: tuple[CounterSet, ...] = ()
    per_device_node_selection: bool = False


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    #: CEL expressions of spec.selectors, in order
    selectors: tuple[str, ...] = ()
    source: str = ""
    #: spec.extendedResourceName: pods requesting this extended resource get devices of the class
    #: (where the node does not advertise the resource itself); "" for none
    extended_resource_name: str = ""
    #: metadata.creationTimestamp, seconds since the epoch; None when the input has none (the
    #: newer of two classes naming one extended resource wins it)
    created: float | None = None


@dataclass(frozen=True, slots=True)
class SubRequest:
    """One alternative of ``firstAvailable``, or the ``exactly`` part of a request (name = request name)."""

    name: str
    class_name: str
    selectors: tuple[str, ...] = ()
    mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool = False
    tolerations: tuple[DeviceToleration, ...] = ()
    #: capacity.requests (DRAConsumableCapacity): (capacity name, nano units) in name order;
    #: None when the request has no ``capacity``
    capacity: tuple[tuple[str, int], ...] | None = None


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    name: str
    exactly: SubRequest | None = None
    first_available: tuple[SubRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class Constraint:
    requests: tuple[str, ...] = ()
    #: fully qualified attribute name; "" when the constraint has none (an error at allocation)
    match_attribute: str = ""
    #: distinctAttribute (DRAConsumableCapacity): every device needs its own value of it
    distinct_attribute: str = ""


@dataclass(frozen=True, slots=True)
class ClaimSpec:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[Constraint, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceResult:
    """One allocated device: ``request`` is ``<r>`` or ``<r>/<subrequest>``."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False
    #: shareID (DRAConsumableCapacity): set on results of devices allowing multiple allocations
    share_id: str = ""
    #: consumedCapacity: (capacity name, nano units) in name order; None when not given
    consumed: tuple[tuple[str, int], ...] | None = None

    @property
    def device_id(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)


@dataclass(frozen=True, slots=True)
class Allocation:
    results: tuple[DeviceResult, ...] = ()
    #: None: the claim's devices are reachable from every node
    node_selector: NodeSelector | None = None


@dataclass(frozen=True, slots=True)
class ConsumerRef:
    name: str
    uid: str


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    namespace: str
    name: str
    uid: str
    spec: ClaimSpec
    allocation: Allocation | None = None
    reserved_for: tuple[ConsumerRef, ...] = ()
    deleting: bool = False
    finalizers: tuple[str, ...] = ()
    #: uid of the controller owner reference ("" for none)
    owner_uid: str = ""
    annotations: Mapping[str, str] = field(default_factory=_empty)
    labels: Mapping[str, str] = field(default_factory=_empty)
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    spec: ClaimSpec
    labels: Mapping[str, str] = field(default_factory=_empty)
    annotations: Mapping[str, str] = field(default_factory=_empty)
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One entry of a pod's ``spec.resourceClaims``."""

    name: str
    claim_name: str = ""
    template_name: str = ""


@dataclass(frozen=True, slots=True)
class DeviceTaintRule:
    """A DeviceTaintRule: its taint goes to every device its selector selects (an empty field
    selects every value; a rule without selector selects nothing)."""

    name: str
    taint: DeviceTaint
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    selects_nothing: bool = False
    source: str = ""

    def selects(self, driver: str, pool: str, device: str) -> bool:
        return not self.selects_nothing and self.driver in (None, driver) and self.pool in (None, pool) \
            and self.device in (None, device)


#: the resource.k8s.io objects of the inputs, each of its own type
DraObject = DeviceClass | ResourceSlice | ResourceClaim | ResourceClaimTemplate | DeviceTaintRule

share_frozen_dataclasses(globals())
