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
from typing import Any

from kplan.model.dra import (
    DELETE_PROTECTION,
    FEATURES_OFF,
    POD_CLAIM_NAME_ANNOTATION,
    ConsumerRef,
    DeviceClass,
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
        #: the allocator's features of the run's release (the DynamicResources plugin sets them)
        self.features = FEATURES_OFF
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
        self.pod_claims: dict[str, dict[str, str | None]] = {}
        self.events: list[tuple[str, ResourceClaim | None, ResourceClaim]] = []
        #: the allocator's per-run caches (selector results, pools per node), kept here because
        #: slices and classes do not change during a run
        self.caches: dict[str, Any] = {}
        for c in claims:
            self._put(c)
        self.events.clear()

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
            if not r.admin_access:
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
                if not r.admin_access:
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
            else:
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


def pod_claim_entries(pod: Pod) -> Sequence[PodClaim]:
    return pod.resource_claims


def consumer(pod: Pod) -> ConsumerRef:
    return ConsumerRef(pod.name, pod.uid)
