"""The cluster's DRA objects as the scheduler and the resourceclaim controller see them.

* ``claims``: the claim assume cache (API objects plus the scheduler's own writes), by ``ns/name``;
* ``in_flight``: allocations made at Reserve and not yet written by PreBind, by claim uid
  (plugins/dynamicresources/dra_manager.go);
* ``allocated``: the devices of every allocated claim, admin-access results excluded
  (allocateddevices.go), kept up to date with each claim write;
* ``in_use``: those devices and the in-flight allocations' (what PreFilter snapshots), with a log
  of every device that became used or free (``in_use_log``): the allocator's per-node summaries
  follow it incrementally, and ``InUseView`` is a snapshot that costs nothing until the set changes;
* ``pod_claims``: each pod's ``status.resourceClaimStatuses`` (pod claim name → claim name or None).

With DRAConsumableCapacity (``features.consumable_capacity``) a result with a ``shareID`` is not a
device in use: it is one share of a device that allows multiple allocations (allocateddevices.go,
foreachAllocatedDevice). Per such device, ``shared`` keeps what the scheduler's tracker keeps (the
shared device IDs of allocated claims, their aggregated ``consumedCapacity`` with the tracker's
Insert/Remove rules) and the in-flight shares on top (GatherAllocatedState). Each change is logged
(``shared_log``, the record before it) so that ``SharedView`` can give the state PreFilter saw, and
marks the device's pool changed (an ``in_use_log`` entry of delta 0). With the gate off every
result is a device in use, as the tracker then has it.

The resourceclaim controller is emulated "instantly", like the API writes of reference section
12 (scheduler-reference.md 13.1): ``create_template_claims`` makes the claims of a pending pod
from its templates before the pod exists, and ``pod_deleted`` drops a deleted pod from its claims'
``reservedFor``, deallocating a claim left without consumers, and deletes the claims the pod
owned. Every claim write is recorded (``drain_events``) for the queue's hints.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kplan.model.dra import (
    DELETE_PROTECTION,
    FEATURES_OFF,
    POD_CLAIM_NAME_ANNOTATION,
    ConsumerRef,
    DeviceClass,
    DeviceFeatures,
    DeviceResult,
    DeviceTaintRule,
    PodClaim,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kplan.model.objects import Pod

CLAIM_ADD, CLAIM_UPDATE = "ResourceClaimAdd", "ResourceClaimUpdate"
#: maxBaseLen of the resourceclaim controller: room for "-" and five random characters in 63
_MAX_BASE_LEN = 57

DeviceId = tuple[str, str, str]
#: consumed capacity: (capacity name, nano units) in name order
Consumed = tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class SharedUse:
    """The shares of one device that allows multiple allocations: the tracker's entry of its
    aggregated consumed capacity (None: no entry), the share IDs of allocated claims' results, and
    the in-flight results (claim uid, share ID, consumed capacity or None)."""

    capacity: Consumed | None = None
    share_ids: frozenset[str] = frozenset()
    in_flight: tuple[tuple[str, str, Consumed | None], ...] = ()

    def aggregated(self) -> dict[str, int] | None:
        """AggregatedCapacity's entry for the device as GatherAllocatedState gives it: the
        tracker's, with each in-flight share's consumed capacity inserted; None: no entry."""
        if self.capacity is None and not any(c is not None for _, _, c in self.in_flight):
            return None
        out = dict(self.capacity or ())
        for _, _, consumed in self.in_flight:
            for name, amount in consumed or ():
                out[name] = out.get(name, 0) + amount
        return out

    @property
    def shared(self) -> bool:
        """Whether some share ID of the device is allocated or in flight."""
        return bool(self.share_ids or self.in_flight)


_NO_SHARES = SharedUse()


def insert_capacity(entry: Consumed | None, consumed: Consumed) -> Consumed:
    """ConsumedCapacityCollection.Insert for one device: added to the entry, or the entry."""
    out = dict(entry or ())
    for name, amount in consumed:
        out[name] = out.get(name, 0) + amount
    return tuple(sorted(out.items()))


def remove_capacity(entry: Consumed | None, consumed: Consumed) -> Consumed | None:
    """ConsumedCapacityCollection.Remove: subtracted from the entry's own capacities; the entry
    goes when every amount in it is zero."""
    if entry is None:
        return None
    out = dict(entry)
    for name, amount in consumed:
        if name in out:
            out[name] -= amount
    if all(v == 0 for v in out.values()):
        return None
    return tuple(sorted(out.items()))


def claim_base_name(pod_name: str, claim_name: str) -> str:
    """The controller's generateName for a claim from a template: ``<pod>-<claim>-``, both parts
    cut in proportion to their length when that is longer than 57 characters."""
    base = f"{pod_name}-{claim_name}-"
    if len(base) > _MAX_BASE_LEN:
        base = (pod_name[:len(pod_name) * _MAX_BASE_LEN // len(base)] + "-"
                + claim_name[:len(claim_name) * _MAX_BASE_LEN // len(base)])
    return base


class ClaimLookupError(Exception):
    """foreachPodResourceClaim's failure: its text is what PreEnqueue and PreFilter report."""


class DraState:
    def __init__(self, classes: Iterable[DeviceClass] = (), slices: Iterable[ResourceSlice] = (),
                 claims: Iterable[ResourceClaim] = (), templates: Iterable[ResourceClaimTemplate] = (),
                 taint_rules: Iterable[DeviceTaintRule] = ()) -> None:
        self.classes: dict[str, DeviceClass] = {c.name: c for c in classes}
        #: DeviceTaintRules in input order (they count only with DRADeviceTaintRules on)
        self.taint_rules: list[DeviceTaintRule] = list(taint_rules)
        self._features = FEATURES_OFF
        # lister order is unspecified upstream: a fixed one (by name) keeps runs reproducible
        self.slices: list[ResourceSlice] = sorted(slices, key=lambda s: s.name)
        self.templates: dict[str, ResourceClaimTemplate] = {t.key: t for t in templates}
        self.claims: dict[str, ResourceClaim] = {}
        self.allocated: Counter[DeviceId] = Counter()
        #: claim uid → the claim with the allocation Reserve made; change it through
        #: set_in_flight / pop_in_flight so that ``in_use`` follows
        self.in_flight: dict[str, ResourceClaim] = {}
        self.in_use: Counter[DeviceId] = Counter()
        #: (device, +1 now in use | -1 now free), one entry per change of the in-use set
        self.in_use_log: list[tuple[DeviceId, int]] = []
        #: (driver, pool) → length of ``in_use_log`` after the last change of one of its devices
        self.pool_versions: dict[tuple[str, str], int] = {}
        #: devices allowing multiple allocations with shares (consumable capacity), and the log of
        #: their changes: (device, its record before the change)
        self.shared: dict[DeviceId, SharedUse] = {}
        self.shared_log: list[tuple[DeviceId, SharedUse]] = []
        self._share_ids = 0
        self.pod_claims: dict[str, dict[str, str | None]] = {}
        self.events: list[tuple[str, ResourceClaim | None, ResourceClaim]] = []
        #: the allocator's per-run caches (selector results, pools per node), kept here because
        #: slices and classes do not change during a run
        self.caches: dict[str, Any] = {}
        for c in claims:
            self._put(c)
        self.events.clear()

    @property
    def features(self) -> DeviceFeatures:
        """The allocator's features of the run's release (the DynamicResources plugin sets them)."""
        return self._features

    @features.setter
    def features(self, features: DeviceFeatures) -> None:
        recount = features.consumable_capacity != self._features.consumable_capacity
        self._features = features
        if recount:
            # what is a device in use and what a share depends on the gate: count again (the
            # plugin sets the features before the first scheduling cycle of a run)
            self.allocated.clear()
            self.in_use.clear()
            self.in_use_log.clear()
            self.pool_versions.clear()
            self.shared.clear()
            self.shared_log.clear()
            self.caches.pop("summaries", None)
            for claim in self.claims.values():
                if claim.allocation is not None:
                    self._count(claim, 1)
            for claim in self.in_flight.values():
                self._count_in_flight(claim, 1)

    def is_share(self, r: DeviceResult) -> bool:
        """A result that is one share of a device (foreachAllocatedDevice's sharedDeviceCallback)."""
        return bool(r.share_id) and self._features.consumable_capacity

    def new_share_id(self) -> str:
        """A share ID for an allocation result (upstream: a random UUID), unique in the run."""
        self._share_ids += 1
        return f"kplan-share-{self._share_ids:06d}"

    def shares(self, device: DeviceId) -> SharedUse:
        return self.shared.get(device, _NO_SHARES)

    def _set_shares(self, device: DeviceId, new: SharedUse) -> None:
        old = self.shared.get(device, _NO_SHARES)
        self.shared_log.append((device, old))
        if new == _NO_SHARES:
            self.shared.pop(device, None)
        else:
            self.shared[device] = new
        # the device's pool changed for what the allocator can find there
        self.in_use_log.append((device, 0))
        self.pool_versions[device[:2]] = len(self.in_use_log)

    def _share(self, r: DeviceResult, delta: int) -> None:
        """The tracker's addDevices / removeDevices for one shared result."""
        old = self.shares(r.device_id)
        if delta > 0:
            ids = old.share_ids | {r.share_id}
            capacity = insert_capacity(old.capacity, r.consumed) if r.consumed is not None else old.capacity
        else:
            ids = old.share_ids - {r.share_id}
            capacity = remove_capacity(old.capacity, r.consumed) if r.consumed is not None else old.capacity
        self._set_shares(r.device_id, SharedUse(capacity, ids, old.in_flight))

    def _share_in_flight(self, uid: str, r: DeviceResult, delta: int) -> None:
        old = self.shares(r.device_id)
        entry = (uid, r.share_id, r.consumed)
        if delta > 0:
            flying = old.in_flight + (entry,)
        else:
            k = old.in_flight.index(entry)
            flying = old.in_flight[:k] + old.in_flight[k + 1:]
        self._set_shares(r.device_id, SharedUse(old.capacity, old.share_ids, flying))

    def device_allocated(self, device: DeviceId) -> bool:
        """IsDeviceAllocated on the state PreFilter gathers: in use, or shared."""
        use = self.shared.get(device)
        return device in self.in_use or use is not None and (use.shared or use.aggregated() is not None)

    # ------------------------------------------------------------------ claim writes

    def _put(self, claim: ResourceClaim) -> None:
        old = self.claims.get(claim.key)
        if old is not None and old.allocation is not None and (claim.allocation is None or old.uid != claim.uid):
            self._count(old, -1)
        if claim.allocation is not None and (old is None or old.allocation is None or old.uid != claim.uid):
            self._count(claim, 1)
        self.claims[claim.key] = claim
        self.events.append((CLAIM_UPDATE if old is not None else CLAIM_ADD, old, claim))

    def _count(self, claim: ResourceClaim, delta: int) -> None:
        assert claim.allocation is not None
        for r in claim.allocation.results:
            if r.admin_access:
                continue
            if self.is_share(r):
                self._share(r, delta)
            else:
                self.allocated[r.device_id] += delta
                if self.allocated[r.device_id] <= 0:
                    del self.allocated[r.device_id]
                self._use(r.device_id, delta)

    def _use(self, device: DeviceId, delta: int) -> None:
        before = self.in_use.get(device, 0)
        after = before + delta
        if after > 0:
            self.in_use[device] = after
        else:
            self.in_use.pop(device, None)
        if (before > 0) != (after > 0):
            self.in_use_log.append((device, 1 if after > 0 else -1))
            self.pool_versions[device[:2]] = len(self.in_use_log)

    def _count_in_flight(self, claim: ResourceClaim, delta: int) -> None:
        if claim.allocation is not None:
            for r in claim.allocation.results:
                if r.admin_access:
                    continue
                if self.is_share(r):
                    self._share_in_flight(claim.uid, r, delta)
                else:
                    self._use(r.device_id, delta)

    def set_in_flight(self, claim: ResourceClaim) -> None:
        """Reserve's allocation of ``claim`` (it carries the allocation), until PreBind writes it."""
        old = self.in_flight.get(claim.uid)
        self.in_flight[claim.uid] = claim
        self._count_in_flight(claim, 1)
        if old is not None:
            self._count_in_flight(old, -1)

    def pop_in_flight(self, uid: str) -> ResourceClaim | None:
        old = self.in_flight.pop(uid, None)
        if old is not None:
            self._count_in_flight(old, -1)
        return old

    def write(self, claim: ResourceClaim) -> None:
        """A status or object write by the scheduler or a controller."""
        self._put(claim)

    def delete(self, claim: ResourceClaim) -> None:
        old = self.claims.pop(claim.key, None)
        if old is not None and old.allocation is not None:
            self._count(old, -1)

    def drain_events(self) -> list[tuple[str, ResourceClaim | None, ResourceClaim]]:
        out, self.events = self.events, []
        return out

    def allocated_devices(self) -> set[DeviceId]:
        """What PreFilter snapshots: allocated claims' devices and in-flight allocations'."""
        return set(self.in_use)

    def in_use_at(self, mark: int) -> set[DeviceId]:
        """The in-use set as it was when ``in_use_log`` had ``mark`` entries (the log undone)."""
        out = set(self.in_use)
        for device, delta in reversed(self.in_use_log[mark:]):
            if delta > 0:
                out.discard(device)
            elif delta < 0:
                out.add(device)
        return out

    # ------------------------------------------------------------------ the pod's claims

    def set_pod_statuses(self, pod: Pod, statuses: Sequence[tuple[str, str | None]]) -> None:
        if statuses:
            self.pod_claims[pod.uid] = dict(statuses)

    def lookup(self, pod: Pod) -> list[ResourceClaim]:
        """foreachPodResourceClaim + the claim store (scheduler-reference-dra.md 1.1), in spec order."""
        out = []
        statuses = self.pod_claims.get(pod.uid, {})
        for entry in pod_claim_entries(pod):
            owned = False
            if entry.claim_name:
                name = entry.claim_name
            elif entry.template_name:
                if entry.name not in statuses:
                    raise ClaimLookupError(f'pod "{pod.key}": ResourceClaim not created yet')
                found = statuses[entry.name]
                if found is None:
                    continue
                name, owned = found, True
            else:
                raise ClaimLookupError(f'pod "{pod.key}", spec.resourceClaim "{entry.name}": none of the '
                                       "supported fields are set")
            claim = self.claims.get(f"{pod.namespace}/{name}")
            if claim is None:
                raise ClaimLookupError(f'could not find ResourceClaim "{pod.namespace}/{name}"')
            if claim.deleting:
                raise ClaimLookupError(f'resourceclaim "{name}" is being deleted')
            if owned and claim.owner_uid != pod.uid:
                raise ClaimLookupError(f"ResourceClaim {claim.key} was not created for pod {pod.key} "
                                       "(pod is not owner)")
            out.append(claim)
        return out

    def missing(self, pod: Pod) -> list[str]:
        """The claims and templates the pod names that do not exist, in words: the reason the
        scheduler keeps it at PreEnqueue without a word (lookup's text names no template)."""
        out = []
        for entry in pod_claim_entries(pod):
            if entry.claim_name and f"{pod.namespace}/{entry.claim_name}" not in self.claims:
                out.append(f'ResourceClaim "{pod.namespace}/{entry.claim_name}" does not exist')
            elif entry.template_name and f"{pod.namespace}/{entry.template_name}" not in self.templates:
                out.append(f'ResourceClaimTemplate "{pod.namespace}/{entry.template_name}" does not exist, '
                           "so no ResourceClaim is made from it")
        return out

    # ------------------------------------------------------------------ the resourceclaim controller

    def create_template_claims(self, pod: Pod, generate_name: Callable[[str], str]) -> None:
        """Claims from the pod's templates, created before the pod (scheduler-reference.md 13.1).
        A missing template creates nothing: the pod then waits at PreEnqueue."""
        statuses = self.pod_claims.setdefault(pod.uid, {})
        for entry in pod_claim_entries(pod):
            if not entry.template_name or entry.name in statuses:
                continue
            template = self.templates.get(f"{pod.namespace}/{entry.template_name}")
            if template is None:
                continue
            name = generate_name(claim_base_name(pod.name, entry.name))
            annotations = {**template.annotations, POD_CLAIM_NAME_ANNOTATION: entry.name}
            self._put(ResourceClaim(pod.namespace, name, f"{pod.namespace}/{name}", template.spec,
                                    owner_uid=pod.uid, annotations=annotations, labels=template.labels))
            statuses[entry.name] = name
        if not statuses:
            del self.pod_claims[pod.uid]

    def made_for(self, pod: Pod) -> list[ResourceClaim] | None:
        """The claims the controller made from the templates of a pod that has not been tried, when
        nothing has touched them since (unallocated, unreserved, not in flight); None otherwise."""
        out = []
        for name in self.pod_claims.get(pod.uid, {}).values():
            claim = self.claims.get(f"{pod.namespace}/{name}") if name is not None else None
            if (claim is None or claim.owner_uid != pod.uid or claim.allocation is not None or claim.reserved_for
                    or claim.uid in self.in_flight):
                return None
            out.append(claim)
        return out

    def forget_pods(self, pods: Iterable[Pod]) -> None:
        """As if these pods had never been created: the claims made from their templates go too
        (a fork of a run without them, kplan.scheduler.simulate; each passed ``made_for``)."""
        for pod in pods:
            for claim in self.made_for(pod) or ():
                del self.claims[claim.key]
            self.pod_claims.pop(pod.uid, None)

    def pod_deleted(self, pod: Pod) -> None:
        """The controller's sync for a deleted pod: drop its reservations, deallocate claims left
        without consumers (they carry the delete-protection finalizer), delete the claims it owned."""
        try:
            claims = self.lookup(pod)
        except ClaimLookupError:
            claims = []
        # and the claims the pod owns outside its spec (the scheduler's claim for its extended resources)
        claims += [c for c in self.claims.values() if c.owner_uid == pod.uid and c not in claims]
        for claim in claims:
            current = self.claims.get(claim.key)
            if current is None:
                continue
            reserved = tuple(r for r in current.reserved_for if r.uid != pod.uid)
            if reserved != current.reserved_for:
                alloc = current.allocation
                if not reserved and DELETE_PROTECTION in current.finalizers:
                    alloc = None
                current = dataclasses.replace(current, reserved_for=reserved, allocation=alloc)
                self._put(current)
            if current.owner_uid == pod.uid:
                self.delete(current)


class InUseView:
    """The in-use devices as they were when the view was taken (PreFilter's snapshot), without
    copying them: the live set while nothing has changed, the set rebuilt from the log after."""

    __slots__ = ("_dra", "mark", "_then")

    def __init__(self, dra: DraState) -> None:
        self._dra = dra
        self.mark = len(dra.in_use_log)
        self._then: set[DeviceId] | None = None

    @property
    def unchanged(self) -> bool:
        return len(self._dra.in_use_log) == self.mark

    def devices(self) -> Collection[DeviceId]:
        if self._then is not None:
            return self._then
        if self.unchanged:
            return self._dra.in_use.keys()
        self._then = self._dra.in_use_at(self.mark)
        return self._then


class SharedView:
    """The shares of devices as they were when the view was taken (PreFilter's allocated state):
    the live records while nothing has changed, the records before the first change since after."""

    __slots__ = ("_dra", "mark", "_then", "_seen")

    def __init__(self, dra: DraState) -> None:
        self._dra = dra
        self.mark = self._seen = len(dra.shared_log)
        #: device → its record at the mark, for the devices changed since
        self._then: dict[DeviceId, SharedUse] = {}

    def get(self, device: DeviceId) -> SharedUse:
        log = self._dra.shared_log
        if len(log) == self.mark:
            return self._dra.shares(device)
        for dev, old in log[self._seen:]:
            self._then.setdefault(dev, old)
        self._seen = len(log)
        found = self._then.get(device)
        return found if found is not None else self._dra.shares(device)


#: no device shared (an allocator without consumable capacity)
class NoShares:
    __slots__ = ()

    def get(self, device: DeviceId) -> SharedUse:
        return _NO_SHARES


NO_SHARES = NoShares()


def pod_claim_entries(pod: Pod) -> Sequence[PodClaim]:
    return pod.resource_claims


def consumer(pod: Pod) -> ConsumerRef:
    return ConsumerRef(pod.name, pod.uid)
