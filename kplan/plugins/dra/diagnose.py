"""Why a pod's resource claims cannot be allocated on a node, for ``kplan explain`` (kplan's own
account, no upstream counterpart: kube-scheduler only says ``cannot allocate all claims`` or
``resourceclaim not available on the node``).

For each claim of the pod, in spec order, and each of its requests, on one node:

* ``not-selected``: the claim is allocated, and its allocation's node selector does not select
  the node (the devices it holds are reachable from other nodes only);
* ``no-device``: no device the node can reach matches the request's class and selectors;
* ``not-enough``: fewer devices match than the request asks for;
* ``in-use``: enough devices match, but too many of them are allocated to other claims;
* ``constraint``: every request has free devices, but no choice of them satisfies a
  ``matchAttribute`` or ``distinctAttribute`` constraint (the free devices' values of the
  attribute are listed);
* ``together``: each request, and each claim, fits alone, but they compete for the same devices;
* ``counters``: enough devices match and are free, but the shared counters of their pool
  (partitionable devices) do not cover enough of them beside the allocated devices;
* ``tainted``: enough devices match and are free, but too many of them carry a NoSchedule or
  NoExecute taint the request does not tolerate (with DRADeviceTaints);
* ``capacity``: enough devices match and are free, but too few of them have the capacity the
  request consumes left beside what allocated claims consume (with DRAConsumableCapacity: the
  request's capacity rounded by the device's request policy, the policy's default or the whole
  capacity for what it does not name);
* ``error``: the allocator stops with an error (an invalid selector, a pool being updated).

The matching uses the allocator's own pieces (its pools, its selector cache, and the allocator
itself for constraints and competition), so it agrees with the Filter. ``fresh_nodes`` answers
the remedy question: on which nodes would an empty copy, with its own copies of the node's
ResourceSlices and their devices all free (what ``kplan whatif --add-node like=NODE`` adds), have
devices for every claim.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kplan.cluster.dra import NO_SHARES, ClaimLookupError, DraState, NoShares, SharedView, pod_claim_entries
from kplan.model.dra import ALL, Device, ResourceClaim, ResourceSlice, SubRequest
from kplan.model.objects import Pod
from kplan.plugins.dra.capacity import CapacityError, Unrepresentable, fits
from kplan.plugins.dra.structured import (
    Allocator,
    AllocatorError,
    Counters,
    SelectorCache,
    SelectorError,
    apply_taint_rules,
    gather_pools,
    run_selector_cache,
    taint_prevents_allocation,
)

CAPACITY = "capacity"
NOT_SELECTED, NO_DEVICE, NOT_ENOUGH, IN_USE, CONSTRAINT, TOGETHER, TAINTED, COUNTERS, ERROR = (
    "not-selected", "no-device", "not-enough", "in-use", "constraint", "together", "tainted", "counters", "error")
HOSTNAME = "kubernetes.io/hostname"

DeviceId = tuple[str, str, str]


@dataclass(frozen=True)
class ClaimProblem:
    #: the pod's name for the claim (``spec.resourceClaims[].name``)
    claim: str
    #: the ResourceClaim, ``namespace/name``
    claim_key: str
    #: ``<request>`` or ``<request>/<subrequest>``; "" for what concerns the whole claim
    request: str
    kind: str
    text: str

    def __str__(self) -> str:
        where = f"claim {self.claim}" + (f", request {self.request}" if self.request else "")
        return f"{where}: {self.text}"


@dataclass(frozen=True)
class PodClaimInfo:
    """One claim of the pod as the explanation lists it."""

    name: str
    claim_key: str
    template: str
    allocated: bool
    requests: tuple[str, ...]
    constraints: tuple[str, ...]
    #: allocated with a node selector: only the nodes it selects can run the pod
    pinned: bool = False


def pod_claims(dra: DraState, pod: Pod) -> list[tuple[str, ResourceClaim]]:
    """The pod's claims with the pod's name for each, in spec order (the plugin's claim lookup);
    [] when the lookup fails (PreFilter then says why)."""
    try:
        claims = dra.lookup(pod)
    except ClaimLookupError:
        return []
    names = []
    statuses = dra.pod_claims.get(pod.uid, {})
    for entry in pod_claim_entries(pod):
        if entry.template_name and statuses.get(entry.name) is None:
            continue
        names.append(entry.name)
    return list(zip(names, claims, strict=False))


def describe_claims(dra: DraState, pod: Pod) -> list[PodClaimInfo]:
    out = []
    by_entry = {e.name: e for e in pod_claim_entries(pod)}
    for name, claim in pod_claims(dra, pod):
        entry = by_entry.get(name)
        requests = []
        for req in claim.spec.requests:
            alts = [req.exactly] if req.exactly is not None else list(req.first_available)
            texts = [_request_text(s) for s in alts]
            requests.append(f"{req.name}: " + (texts[0] if req.exactly is not None else
                                               "first available of " + "; ".join(
                                                   f"{s.name}: {t}" for s, t in zip(alts, texts, strict=True))))
        constraints = tuple((f"matchAttribute {c.match_attribute}" if c.match_attribute or not c.distinct_attribute
                             else f"distinctAttribute {c.distinct_attribute}")
                            + (f" over {', '.join(c.requests)}" if c.requests else "")
                            for c in claim.spec.constraints)
        out.append(PodClaimInfo(name, claim.key, entry.template_name if entry else "",
                                claim.allocation is not None, tuple(requests), constraints,
                                claim.allocation is not None and claim.allocation.node_selector is not None))
    return out


def _request_text(s: SubRequest) -> str:
    count = "all devices" if s.mode == ALL else f"{s.count} device{'s' if s.count != 1 else ''}"
    sel = f" matching {len(s.selectors)} selector{'s' if len(s.selectors) != 1 else ''}" if s.selectors else ""
    admin = ", admin access" if s.admin_access else ""
    capacity = ", capacity " + ", ".join(f"{k} {_amount(v)}" for k, v in s.capacity) if s.capacity else ""
    return f"{count} of class {s.class_name}{sel}{admin}{capacity}"


def _amount(nanos: int) -> str:
    """A capacity amount in nano units, as a plain decimal."""
    whole, frac = divmod(nanos, 1_000_000_000)
    return f"{whole}.{frac:09d}".rstrip("0") if frac else str(whole)


# ------------------------------------------------------------------------------ one node

def reaching(slices: Sequence[ResourceSlice], node_name: str, labels: Mapping[str, str]) -> list[ResourceSlice]:
    """The slices GatherPools could consider for the node, and every other slice of their pools
    (a pool missing slices on the node is looked up among all of them); the others cannot matter
    to it."""
    keys = {(s.driver, s.pool) for s in slices
            if s.node_name == node_name or s.all_nodes or s.per_device_node_selection or s.shared_counters
            or (not s.node_name and s.node_selector is not None and s.node_selector.matches(node_name, labels))}
    return [s for s in slices if (s.driver, s.pool) in keys]


def allocator_slices(dra: DraState) -> Sequence[ResourceSlice]:
    """The slices as the allocator sees them: with the DeviceTaintRules' taints when they count."""
    return apply_taint_rules(dra.slices, dra.taint_rules) if dra.features.device_taint_rules else dra.slices


class _Matcher:
    def __init__(self, dra: DraState, cache: SelectorCache,
                 counters: Callable[[frozenset[DeviceId]], Counters] | None = None) -> None:
        self.dra = dra
        self.cache = cache
        #: the node's counter bookkeeping for a set of allocated devices (partitionable devices)
        self.counters = counters

    def within_counters(self, matching: list[tuple[ResourceSlice, Device]], used: frozenset[DeviceId]
                        ) -> list[tuple[ResourceSlice, Device]]:
        """The devices of ``matching`` whose counters their pool still covers, each alone."""
        if self.counters is None:
            return matching
        counters = self.counters(used)
        out = []
        for s, d in matching:
            if not d.consumes_counters or counters.take(s, d):
                if d.consumes_counters:
                    counters.give_back(s, d)
                out.append((s, d))
        return out

    def with_room(self, spec: SubRequest, matching: list[tuple[ResourceSlice, Device]]
                  ) -> list[tuple[ResourceSlice, Device]]:
        """The devices of ``matching`` with the capacity the request consumes left, each alone."""
        if not self.dra.features.consumable_capacity:
            return matching
        out = []
        for s, d in matching:
            try:
                room = fits(d, spec.capacity, self.dra.shares((s.driver, s.pool, d.name)).aggregated(), None,
                            self.dra.features.fractional_capacity_range)
            except (CapacityError, Unrepresentable):
                room = False
            if room:
                out.append((s, d))
        return out

    def tolerated(self, spec: SubRequest, matching: list[tuple[ResourceSlice, Device]]
                  ) -> list[tuple[ResourceSlice, Device]]:
        """The devices of ``matching`` no untolerated taint keeps from the request."""
        if not self.dra.features.device_taints:
            return matching
        return [(s, d) for s, d in matching if not taint_prevents_allocation(d, spec.tolerations)]

    def matching(self, spec: SubRequest, devices: Iterable[tuple[ResourceSlice, Device]]
                 ) -> list[tuple[ResourceSlice, Device]]:
        """Raises SelectorError."""
        cls = self.dra.classes.get(spec.class_name)
        exprs = (cls.selectors if cls is not None else ()) + spec.selectors
        return [(s, d) for s, d in devices if all(self.cache.matches(e, s.driver, d) for e in exprs)]


def _ident(s: ResourceSlice, d: Device) -> DeviceId:
    return (s.driver, s.pool, d.name)


def _lookup(attrs: Mapping[str, tuple[str, object]], driver: str, name: str) -> tuple[str, object] | None:
    v = attrs.get(name)
    if v is None:
        domain, _, ident = name.partition("/")
        if domain == driver:
            v = attrs.get(ident)
    return v


def _request_problem(spec: SubRequest, matching: Sequence[tuple[ResourceSlice, Device]],
                     node_devices: Sequence[tuple[ResourceSlice, Device]], allocated: frozenset[DeviceId],
                     class_devices: int) -> tuple[str, str] | None:
    """(kind, text) for one request alternative, or None when enough devices are free."""
    free = [m for m in matching if spec.admin_access or _ident(*m) not in allocated]
    used = len(matching) - len(free)
    if spec.mode == ALL:
        if not matching:
            pass
        elif used:
            return IN_USE, f"devices already in use — asks for all {len(matching)} matching devices, {used} in use"
        else:
            return None
    elif len(free) >= spec.count:
        return None
    elif len(matching) >= spec.count:
        return IN_USE, (f"devices already in use — asks for {spec.count}, {len(matching)} match, "
                        f"{used} of them in use")
    elif matching:
        return NOT_ENOUGH, (f"not enough devices — asks for {spec.count}, {len(matching)} match"
                            + (f", {used} of them in use" if used else ""))
    if not node_devices:
        return NO_DEVICE, "no matching device — no ResourceSlice publishes devices for this node"
    if not class_devices:
        return NO_DEVICE, (f"no matching device — none of the node's {len(node_devices)} devices is of class "
                           f"{spec.class_name}")
    return NO_DEVICE, (f"no matching device — {class_devices} device{'s' if class_devices != 1 else ''} of class "
                       f"{spec.class_name}, none matching the request's selectors")


def _alternatives(claim: ResourceClaim) -> list[tuple[str, list[tuple[str, SubRequest]]]]:
    out = []
    for req in claim.spec.requests:
        if req.exactly is not None:
            out.append((req.name, [(req.name, req.exactly)]))
        else:
            out.append((req.name, [(f"{req.name}/{s.name}", s) for s in req.first_available]))
    return out


def _constraint_text(claim: ResourceClaim, index: int, m: _Matcher, devices: Sequence[tuple[ResourceSlice, Device]],
                     allocated: frozenset[DeviceId]) -> str:
    c = claim.spec.constraints[index]
    values: Counter[str] = Counter()
    lacking = 0
    seen: set[DeviceId] = set()
    for req_name, alts in _alternatives(claim):
        for label, spec in alts:
            if c.requests and req_name not in c.requests and label not in c.requests:
                continue
            try:
                found = m.matching(spec, devices)
            except SelectorError:
                continue
            for s, d in found:
                ident = _ident(s, d)
                if ident in seen or (not spec.admin_access and ident in allocated):
                    continue
                seen.add(ident)
                v = _lookup(d.attributes, s.driver, c.match_attribute or c.distinct_attribute)
                if v is None:
                    lacking += 1
                else:
                    values[str(v[1])] += 1
    parts = [f"{v} ×{n}" for v, n in sorted(values.items())]
    if lacking:
        parts.append(f"{lacking} without it")
    have = f"the free matching devices have {', '.join(parts)}" if parts else "no free device matches"
    kind = f"matchAttribute {c.match_attribute}" if c.match_attribute else f"distinctAttribute {c.distinct_attribute}"
    return f"constraint {kind} cannot be satisfied — {have}"


def diagnose(dra: DraState, pod: Pod, node_name: str, labels: Mapping[str, str],
             allocated: Iterable[DeviceId] | None = None, cache: SelectorCache | None = None) -> list[ClaimProblem]:
    """What stands in the way of the pod's claims on one node (module docstring); [] when nothing
    does (or the pod's claims cannot be looked up)."""
    claims = pod_claims(dra, pod)
    if not claims:
        return []
    used = frozenset(dra.allocated_devices() if allocated is None else allocated)
    cache = cache if cache is not None else run_selector_cache(dra.caches, dra.features.consumable_capacity)
    # only the slices that reach the node matter to it: the allocators below index just these
    slices = reaching(allocator_slices(dra), node_name, labels)
    pools = gather_pools(slices, node_name, labels, dra.features)
    devices = [sd for pool in pools for sd in pool.devices]

    shares = SharedView(dra) if dra.features.consumable_capacity else NO_SHARES

    def counters(allocated: frozenset[DeviceId]) -> Counters:
        return Counters(Allocator(slices, dra.classes, allocated, cache, dra.features, shares=shares), pools)

    m = _Matcher(dra, cache, counters if dra.features.partitionable_devices else None)
    out: list[ClaimProblem] = []
    fitting: list[ResourceClaim] = []
    for name, claim in claims:
        if claim.allocation is not None:
            sel = claim.allocation.node_selector
            if sel is not None and not sel.matches(node_name, labels):
                out.append(ClaimProblem(name, claim.key, "", NOT_SELECTED,
                                        "allocated to devices this node cannot reach — its allocation's node "
                                        "selector does not select this node"))
            continue
        found = _claim_problems(name, claim, m, devices, used)
        if found:
            out += found
            continue
        allocator = Allocator(slices, dra.classes, used, cache, dra.features, shares=shares)
        try:
            alone = allocator.allocate(node_name, labels, [claim])
        except AllocatorError as e:
            out.append(ClaimProblem(name, claim.key, "", ERROR, str(e)))
            continue
        if alone is not None:
            fitting.append(claim)
            continue
        out.append(_why_claim_fails(name, claim, slices, dra, used, cache, node_name, labels, m, devices, shares))
    if not out and len(fitting) > 1:
        try:
            together = Allocator(slices, dra.classes, used, cache, dra.features, shares=shares).allocate(
                node_name, labels, fitting)
        except AllocatorError as e:
            return [ClaimProblem(claims[0][0], claims[0][1].key, "", ERROR, str(e))]
        if together is None:
            names = [n for n, c in claims if c in fitting]
            out.append(ClaimProblem(", ".join(names), ", ".join(c.key for c in fitting), "", TOGETHER,
                                    "each claim fits alone, but together they need more free devices than "
                                    "the node has"))
    return out


def _claim_problems(name: str, claim: ResourceClaim, m: _Matcher, devices: Sequence[tuple[ResourceSlice, Device]],
                    used: frozenset[DeviceId]) -> list[ClaimProblem]:
    out = []
    for req_name, alts in _alternatives(claim):
        problems = []
        for label, spec in alts:
            try:
                matching = m.matching(spec, devices)
            except SelectorError as e:
                where, detail = e.args[0], e.args[-1]
                problems.append((label, ERROR, f"selector error — {where}: {detail}"))
                continue
            class_devices = len(m.matching(SubRequest(spec.name, spec.class_name), devices)) if not matching else 0
            tolerated = m.tolerated(spec, matching)
            counted = m.within_counters(tolerated, used)
            usable = m.with_room(spec, counted)
            p = _request_problem(spec, usable, devices, used, class_devices)
            if len(usable) < len(counted) and p is not None and \
                    _request_problem(spec, counted, devices, used, 0) is None:
                n = len(counted) - len(usable)
                p = CAPACITY, (f"capacity used up — {n} of the {len(counted)} matching devices ha"
                               f"{'s' if n == 1 else 've'} less capacity left than the request consumes (or "
                               "lack a capacity it names)")
            elif len(counted) < len(tolerated) and p is not None and \
                    _request_problem(spec, tolerated, devices, used, 0) is None:
                p = COUNTERS, (f"shared counters used up — {len(tolerated) - len(usable)} of the "
                               f"{len(tolerated)} matching devices consume more of their pool's counters than "
                               "the allocated devices leave")
            elif len(tolerated) < len(matching) and (
                    spec.mode == ALL or (p is not None and _request_problem(spec, matching, devices, used, 0) is None)):
                p = TAINTED, _taint_text(spec, matching, tolerated)
            if p is None:
                problems = []
                break
            problems.append((label, *p))
        if not problems:
            continue
        if len(problems) == 1:
            label, kind, text = problems[0]
            out.append(ClaimProblem(name, claim.key, label, kind, text))
        else:
            text = "no alternative fits — " + "; ".join(f"{label}: {t}" for label, _, t in problems)
            kinds = {k for _, k, _ in problems}
            out.append(ClaimProblem(name, claim.key, req_name, kinds.pop() if len(kinds) == 1 else NO_DEVICE, text))
    return out


def _taint_text(spec: SubRequest, matching: Sequence[tuple[ResourceSlice, Device]],
                usable: Sequence[tuple[ResourceSlice, Device]]) -> str:
    kept = {_ident(*m) for m in usable}
    taints = sorted({f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for s, d in matching
                     if _ident(s, d) not in kept for t in d.taints if t.effect in ("NoSchedule", "NoExecute")})
    n = len(matching) - len(usable)
    return (f"devices tainted — {n} of the {len(matching)} matching devices ha{'s' if n == 1 else 've'} a taint "
            f"the request does not tolerate ({', '.join(taints)})")


def _why_claim_fails(name: str, claim: ResourceClaim, slices: Sequence[ResourceSlice], dra: DraState,
                     used: frozenset[DeviceId],
                     cache: SelectorCache, node_name: str, labels: Mapping[str, str], m: _Matcher,
                     devices: Sequence[tuple[ResourceSlice, Device]], shares: SharedView | NoShares) -> ClaimProblem:
    """Every request has free devices, yet the claim does not fit: a constraint, or its requests
    compete for the same devices."""
    spec = claim.spec
    for i in range(len(spec.constraints)):
        # the claim with only this constraint: the first one that alone makes it fail is named
        only = dataclasses.replace(claim, uid=f"{claim.uid}/constraint-{i}",
                                   spec=dataclasses.replace(spec, constraints=(spec.constraints[i],)))
        try:
            alone = Allocator(slices, dra.classes, used, cache, dra.features, shares=shares).allocate(
                node_name, labels, [only])
        except AllocatorError:
            alone = None
        if alone is None:
            return ClaimProblem(name, claim.key, "", CONSTRAINT, _constraint_text(claim, i, m, devices, used))
    return ClaimProblem(name, claim.key, "", TOGETHER,
                        "its requests together need more free devices than the node has")


# ------------------------------------------------------------------------------ the remedy

def copy_name(node_name: str) -> str:
    return f"{node_name}-copy"


def copy_labels(node_name: str, labels: Mapping[str, str]) -> dict[str, str]:
    """The labels a copy of the node gets (as ``kplan whatif`` clones it): every label whose value
    is the node's name, and the hostname label, name the copy."""
    new = copy_name(node_name)
    out = {k: (new if (k == HOSTNAME or v == node_name) else v) for k, v in labels.items()}
    out.setdefault(HOSTNAME, new)
    return out


def fresh_nodes(dra: DraState, pod: Pod, nodes: Sequence[tuple[str, Mapping[str, str]]],
                cache: SelectorCache | None = None) -> list[str]:
    """The nodes (of ``nodes``, in that order) an empty copy of which would have devices for every
    claim of the pod: the node's own ResourceSlices copied with every device free, the slices it
    shares with other nodes as they are (their devices in use stay in use). A claim already
    allocated must select the copy too."""
    claims = pod_claims(dra, pod)
    if not claims:
        return []
    cache = cache if cache is not None else run_selector_cache(dra.caches, dra.features.consumable_capacity)
    allocated = frozenset(dra.allocated_devices())
    m = _Matcher(dra, cache)
    out = []
    for name, labels in nodes:
        new, new_labels = copy_name(name), copy_labels(name, labels)
        pinned = [c for _, c in claims if c.allocation is not None and c.allocation.node_selector is not None
                  and not c.allocation.node_selector.matches(new, new_labels)]
        if pinned:
            continue
        slices, local = _copied_slices(allocator_slices(dra), name, labels, new, new_labels)
        slices = reaching(slices, new, new_labels)
        if not local:
            continue  # nothing of its own to copy: a copy has no devices a node of the cluster lacks
        todo = [(n, c) for n, c in claims if c.allocation is None]
        # a request with too few matching free devices rules the copy out without a search (the
        # allocator's search is exhaustive: asking 9 of 8 devices tries every combination first)
        devices = [sd for pool in gather_pools(slices, new, new_labels, dra.features) for sd in pool.devices]
        if any(_claim_problems(n, c, m, devices, allocated) for n, c in todo):
            continue
        try:
            ok = Allocator(slices, dra.classes, allocated, cache, dra.features,
                           shares=SharedView(dra) if dra.features.consumable_capacity else NO_SHARES).allocate(
                new, new_labels, [c for _, c in todo]) is not None
        except AllocatorError:
            ok = False
        if ok:
            out.append(name)
    return out


def _copied_slices(slices: Sequence[ResourceSlice], node: str, labels: Mapping[str, str], new: str,
                   new_labels: Mapping[str, str]) -> tuple[list[ResourceSlice], bool]:
    """The slices a copy sees: the node-local ones renamed to a pool no claim holds devices of."""
    out: list[ResourceSlice] = []
    local = False
    for s in slices:
        if s.node_name == node:
            out.append(dataclasses.replace(s, pool=f"{s.pool}\x00copy", node_name=new))
            local = True
        elif s.node_selector is not None and s.node_selector.matches(node, labels) \
                and not s.node_selector.matches(new, new_labels):
            out.append(dataclasses.replace(s, pool=f"{s.pool}\x00copy", node_selector=None, all_nodes=True))
            local = True
        else:
            out.append(s)
    return out, local
