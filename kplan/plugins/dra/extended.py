"""Extended resources served by DRA devices (DRAExtendedResource, KEP-5004; beta and on in 1.36,
GA in 1.37). Read from kube-scheduler v1.36.3 / v1.37.2: plugins/dynamicresources/
extendeddynamicresources.go, noderesources/fit.go (shouldDelegateResourceToDRA) and
k8s.io/dynamic-resource-allocation deviceclass/extendedresourcecache.

A pod that requests ``example.com/gpu`` (or a class's implicit
``deviceclass.resource.kubernetes.io/<class>``) in its containers' resources is served by the
devices of the DeviceClass that names that resource, on every node that does not advertise the
resource in its allocatable (a device plugin's). NodeResourcesFit leaves such a resource to
DynamicResources on those nodes; DynamicResources builds, per node, a claim with one ExactCount
request per container (``container-<i>-request-<j>``) and allocates it with the pod's own claims.
PreBind creates that claim (``<pod>-extended-resources-<5 chars>``) with the allocation.

One rule function per upstream one, named after it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from kplan.cluster.dra import DraState
from kplan.errors import UnsupportedError
from kplan.model.dra import (
    DEVICE_CLASS_RESOURCE_PREFIX,
    EXACT_COUNT,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    ClaimSpec,
    DeviceClass,
    DeviceRequest,
    ResourceClaim,
    SubRequest,
)
from kplan.model.objects import Pod
from kplan.model.parse import is_dra_extended_resource_name
from kplan.plugins.dra.structured import Inventory, SelectorError, run_selector_cache

#: specialClaimInMemName: the in-memory claim's name until PreBind creates it (not a valid name)
IN_MEMORY_NAME = "<extended-resources>"
#: filterExtendedResources' rejection of a node that has neither a device plugin nor a class for a
#: requested extended resource
CANNOT_FIT = "cannot fit resource"
#: the generated-name alphabet and suffix length of the API server (apimachinery util/rand)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATED_BASE = 58


def resolve_classes(classes: Iterable[DeviceClass]) -> Mapping[str, DeviceClass]:
    """ExtendedResourceCache after its informer's initial list (classes in name order, the API
    server's list order): extended resource name → the class that serves it. Every class serves
    its implicit ``deviceclass.resource.kubernetes.io/<name>``; of two classes naming the same
    ``extendedResourceName`` the newer one wins it (equal creation times: the lower name), and
    the losing class, added later, gets no mapping at all, not even its implicit name (upstream's
    updateResourceName2class returns before adding it)."""
    out: dict[str, DeviceClass] = {}
    for cls in sorted(classes, key=lambda c: c.name):
        holder = out.get(cls.extended_resource_name) if cls.extended_resource_name else None
        if holder is not None:
            mine, theirs = cls.created or 0.0, holder.created or 0.0
            if mine < theirs or (mine == theirs and cls.name >= holder.name):
                continue
        if cls.extended_resource_name:
            out[cls.extended_resource_name] = cls
        out[DEVICE_CLASS_RESOURCE_PREFIX + cls.name] = cls
    return MappingProxyType(out)


def extended_mapping(dra: DraState) -> Mapping[str, DeviceClass]:
    """The run's mapping (resolve_classes), kept with the classes it was made from."""
    classes = tuple(dra.classes.values())
    found = dra.caches.get("extended")
    if not (isinstance(found, tuple) and found[0] == classes):
        found = dra.caches["extended"] = (classes, resolve_classes(classes))
    mapping: Mapping[str, DeviceClass] = found[1]
    return mapping


def dra_resource_totals(dra: DraState, node_name: str, labels: Mapping[str, str], cls: DeviceClass,
                        plugin: str = "NodeResourcesFit") -> tuple[int, int]:
    """calculateDRAResourceTotals (noderesources/resource_allocation.go): the devices of the
    class on the node, and how many of them are in use (allocated or in flight). Every slice that
    reaches the node counts, whatever its pool's generation; a selector that cannot be evaluated
    on a device leaves the resource out on that node (0, 0), as upstream logs and does.
    NodeResourcesBalancedAllocation's scorer has no CEL cache upstream (v1.36.3, v1.37.2): the
    first device it checks against a class selector dereferences nil and kube-scheduler crashes;
    kplan refuses to go on there."""
    inventory = _inventory(dra)
    spec = SubRequest("", cls.name)
    capacity = used = 0
    for s in dra.slices:
        if not s.all_nodes and s.node_name != node_name:
            if s.node_selector is not None:
                if not s.node_selector.matches(node_name, labels):
                    continue
            elif s.node_name:
                continue
        for d in s.devices:
            if cls.selectors and plugin != "NodeResourcesFit":
                raise UnsupportedError(
                    f"kube-scheduler crashes here: {plugin} scores the extended resource that DeviceClass "
                    f"{cls.name} serves on node {node_name} and evaluates the class's selectors without a CEL "
                    "cache (a nil pointer in v1.36.3 and v1.37.2 deviceMatchesClass); leave the resource out of "
                    f"{plugin}'s resources, or give the class no selectors")
            try:
                if cls.selectors and not inventory.matches_raw(spec, s.driver, d):
                    continue
            except SelectorError:
                return 0, 0
            capacity += 1
            used += dra.device_allocated((s.driver, s.pool, d.name))
    return capacity, used


def device_totals(dra: DraState, mapping: Mapping[str, DeviceClass], names: Sequence[str], table: Any,
                  rows: np.ndarray, alloc: np.ndarray, used: np.ndarray, plugin: str = "NodeResourcesFit") -> None:
    """calculateResourceAllocatableRequest with DRA (#134058), for a score plugin's
    (resources × nodes) allocatable and requested, changed in place: a resource a DeviceClass
    serves, on a node whose allocatable lacks it (or has 0), counts the node's devices of that
    class as allocatable and those in use as requested; a node without such devices leaves it
    out (allocatable 0)."""
    for k, name in enumerate(names):
        cls = mapping.get(name)
        if cls is None:
            continue
        for j in (alloc[k] == 0).nonzero()[0].tolist():
            node = table.nodes[int(rows[j])]
            alloc[k, j], used[k, j] = dra_resource_totals(dra, node.name, node.labels, cls, plugin)


def _inventory(dra: DraState) -> Inventory:
    """The run's inventory for selector results (shared with DynamicResources' node summaries)."""
    found = dra.caches.get("extended-inventory")
    if not isinstance(found, Inventory) or not found.describes(dra.slices, dra.classes):
        cache = run_selector_cache(dra.caches, dra.features.consumable_capacity)
        found = dra.caches["extended-inventory"] = Inventory(dra.slices, dra.classes, cache)
    return found


def has_device_class_mapped_extended_resource(pod: Pod, mapping: Mapping[str, DeviceClass]) -> bool:
    """hasDeviceClassMappedExtendedResource: the pod requests (non-zero) a resource a class serves."""
    return any(q and is_dra_extended_resource_name(r) and r in mapping for r, q in pod.requests.items())


#: a node's way with the pod's extended resources: the resources DRA serves there (sorted), PASS
#: (nothing for DRA and no claims of the pod's own: DynamicResources' Filter has nothing to do) or
#: FAIL (a requested resource neither the node nor a class provides)
NodeVariant = tuple[str, ...] | str
PASS, FAIL = "pass", "fail"


def filter_extended_resources(pod: Pod, mapping: Mapping[str, DeviceClass], allocatable: Mapping[str, int],
                              has_user_claims: bool) -> NodeVariant:
    """filterExtendedResources for one node: which requested extended resources DRA must serve
    there (those a class maps and the node's allocatable lacks or has at 0)."""
    served = []
    for r, q in pod.requests.items():
        if not q or not is_dra_extended_resource_name(r):
            continue
        if r in mapping and not allocatable.get(r, 0):
            served.append(r)
        elif r not in allocatable:
            return FAIL
    if not served and not has_user_claims:
        return PASS
    return tuple(sorted(served))


@dataclass(frozen=True, slots=True)
class _Req:
    """One device request of the claim being built, and the containers mapped to it."""

    name: str
    count: int


def _container_request(c_index: int, requested: Sequence[str], amount: int | None, resource: str,
                       reusable: Sequence[_Req | None]) -> tuple[_Req | None, bool]:
    """createResourceRequestAndMappings: the container's request for ``resource`` after what it
    can reuse of ``reusable`` (the long-lived containers' requests from its own index on), and
    whether the container is mapped to any request at all (it is whenever it asks for an integer
    amount: to the requests it reuses, or to its own)."""
    if not amount:
        return None, False
    got = 0
    for r in reusable:
        if r is not None:
            got += r.count
            if got >= amount:
                return None, True
    return _Req(f"container-{c_index}-request-{list(requested).index(resource)}", amount - got), True


def create_requests(pod: Pod, served: Sequence[str], mapping: Mapping[str, DeviceClass]
                    ) -> tuple[tuple[DeviceRequest, ...], bool]:
    """createRequestsAndMappings: the claim's device requests for the resources DRA serves on a
    node (sorted by request name), and whether any container is mapped to one (PreBind fails
    without, see DynamicResources.pre_bind)."""
    requests: list[DeviceRequest] = []
    mapped = False
    n = max((c.index for c in pod.device_requests), default=-1) + 1
    for resource in sorted(served):
        cls = mapping.get(resource)
        if cls is None:
            continue
        long_lived: list[_Req | None] = [None] * n
        for c in pod.device_requests:
            if not c.short_lived:
                req, m = _container_request(c.index, c.requested, c.amounts.get(resource), resource, ())
                long_lived[c.index] = req
                mapped |= m
        short: _Req | None = None
        for c in pod.device_requests:
            if c.short_lived:
                req, m = _container_request(c.index, c.requested, c.amounts.get(resource), resource,
                                            long_lived[c.index:])
                mapped |= m
                if req is not None and (short is None or short.count < req.count):
                    short = req
        chosen = ([short] if short is not None else []) + [r for r in long_lived if r is not None]
        requests += [DeviceRequest(r.name, SubRequest(r.name, cls.name, (), EXACT_COUNT, r.count)) for r in chosen]
    requests.sort(key=lambda r: r.name)
    return tuple(requests), mapped


def in_memory_claim(pod: Pod, requests: tuple[DeviceRequest, ...] = ()) -> ResourceClaim:
    """The special claim of preFilterExtendedResources (owned by the pod, annotated), with the
    requests Filter gives it for a node."""
    return ResourceClaim(pod.namespace, IN_MEMORY_NAME, f"{pod.uid}/{IN_MEMORY_NAME}", ClaimSpec(requests),
                         owner_uid=pod.uid,
                         annotations=MappingProxyType({EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}))


def generated_name(pod: Pod) -> str:
    """The name the API server gives the claim PreBind creates (generateName
    ``<pod>-extended-resources-``): five characters of the name alphabet, here from a hash of the
    pod's uid so that runs repeat."""
    base = f"{pod.name}-extended-resources-"[:_MAX_GENERATED_BASE]
    v = int.from_bytes(hashlib.sha256(pod.uid.encode()).digest()[:8], "big")
    suffix = ""
    for _ in range(5):
        v, k = divmod(v, len(_ALPHABET))
        suffix += _ALPHABET[k]
    return base + suffix


def find_extended_resource_claim(pod: Pod, claims: Iterable[ResourceClaim]) -> ResourceClaim | None:
    """findExtendedResourceClaim: a claim created for the pod's extended resources by an earlier
    attempt (annotated, controlled by the pod)."""
    for c in claims:
        if c.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true" and c.owner_uid == pod.uid:
            return c
    return None
