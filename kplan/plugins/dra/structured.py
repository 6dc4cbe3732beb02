"""The structured-parameters allocator, "experimental" variant (dynamic-resource-allocation v0.34.1,
structured/internal/experimental), the one kube-scheduler 1.34 uses with its default feature gates.

scheduler-reference-dra.md section 2: pools gathered per node (2.1), claims validated before the
search (2.2), devices matched by CEL selectors (2.3), ``All`` mode (2.4), the depth-first search
claim → request → device with backtracking (2.5), "in use" (2.6), ``matchAttribute`` (2.7) and
the allocation result with its node selector (2.8).

Pool and slice order is unspecified upstream (a Go map); kplan fixes it as (driver, pool name)
and slice name, so which device is picked is deterministic. Feasibility does not depend on it.
The Filter deadline (10 s) is not modelled: kplan never reads a clock in the engine.

Release features (``DeviceFeatures``, structured.Features from the release's gates): with
DRADeviceTaints a device's NoSchedule/NoExecute taints keep it from every request that does not
tolerate them (``taint_prevents_allocation``; the "incubating" allocator of 1.36 and the "stable"
one of 1.37, allocateDevice); with DRADeviceTaintRules the taints of DeviceTaintRules are added to
the devices they select first (``apply_taint_rules``, the ResourceSlice tracker's patches).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kplan.cluster.dra import InUseView
from kplan.model.dra import (
    ALL,
    FEATURES_OFF,
    MAX_DEVICES_PER_CLAIM,
    NO_EXECUTE,
    NO_SCHEDULE,
    Allocation,
    AttributeValue,
    Device,
    DeviceClass,
    DeviceFeatures,
    DeviceResult,
    DeviceTaintRule,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
    SubRequest,
)
from kplan.model.selectors import IN, NodeSelector, NodeSelectorTerm, Requirement

DeviceId = tuple[str, str, str]
#: matching devices of a node for one request shape, and the error the search meets after them
Matching = tuple[list[tuple[ResourceSlice, Device]], tuple[DeviceId | None, Any] | None]


class AllocatorError(Exception):
    """An allocator failure that aborts the scheduling attempt (Filter returns Error)."""


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    #: (slice, device) in slice order, then device order
    devices: list[tuple[ResourceSlice, Device]] = field(default_factory=list)
    incomplete: bool = False
    invalid: str = ""


def taint_prevents_allocation(device: Device, tolerations: Sequence[DeviceToleration]) -> bool:
    """taintPreventsAllocation: some NoSchedule or NoExecute taint of the device is tolerated by
    none of the request's tolerations (other effects, None included, never prevent anything)."""
    return any(t.effect in (NO_SCHEDULE, NO_EXECUTE) and not any(tol.tolerates(t) for tol in tolerations)
               for t in device.taints)


def apply_taint_rules(slices: Sequence[ResourceSlice], rules: Sequence[DeviceTaintRule]) -> list[ResourceSlice]:
    """The ResourceSlice tracker's patched slices (resourceslice/tracker applyPatches): each rule's
    taint appended, in rule order, to every device it selects. Slices no rule touches are kept."""
    if not rules:
        return list(slices)
    out = []
    for s in slices:
        devices = list(s.devices)
        touched = False
        for rule in rules:
            for i, d in enumerate(devices):
                if rule.selects(s.driver, s.pool, d.name):
                    devices[i] = dataclasses.replace(d, taints=d.taints + (rule.taint,))
                    touched = True
        out.append(dataclasses.replace(s, devices=tuple(devices)) if touched else s)
    return out


def gather_pools(slices: Sequence[ResourceSlice], node_name: str, labels: Mapping[str, str]) -> list[Pool]:
    """GatherPools: the pools of the slices that reach this node, highest generation only."""
    by_id: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if s.node_name:
            if s.node_name != node_name:
                continue
        elif s.all_nodes:
            pass
        elif s.node_selector is not None:
            if not s.node_selector.matches(node_name, labels):
                continue
        else:
            continue
        key = (s.driver, s.pool)
        have = by_id.get(key)
        if have is None or s.generation > have[0].generation:
            by_id[key] = [s]
        elif s.generation == have[0].generation:
            have.append(s)
    pools = []
    for (driver, name), group in sorted(by_id.items()):
        pool = Pool(driver, name)
        pool.incomplete = len(group) != group[0].slice_count
        seen: set[str] = set()
        for s in group:
            for d in s.devices:
                if d.name in seen and not pool.invalid:
                    pool.invalid = f"duplicate device name {d.name}"
                seen.add(d.name)
                pool.devices.append((s, d))
        pools.append(pool)
    return pools


class SelectorCache:
    """Selector results per (expression, identical device): devices of one model on many nodes are
    evaluated once. A device is identified by its driver, attributes and capacity (its fingerprint,
    numbered in order of appearance). Lives as long as the slices do (one simulation)."""

    def __init__(self) -> None:
        self._ids: dict[tuple[int, str], int] = {}
        self._fingerprints: dict[tuple[object, ...], int] = {}
        self._activations: dict[int, dict[str, Any] | SelectorError] = {}
        self._results: dict[tuple[str, int], bool | tuple[str, str]] = {}
        self._keep: list[Device] = []

    def fingerprint(self, driver: str, device: Device) -> int:
        """The number of the device's (driver, attributes, capacity)."""
        k = self._ids.get((id(device), driver))
        if k is None:
            fp = (driver, tuple(sorted(device.attributes.items())), tuple(sorted(device.capacity.items())))
            k = self._fingerprints.setdefault(fp, len(self._fingerprints))
            self._ids[(id(device), driver)] = k
            self._keep.append(device)  # keeps id() stable for the cache's lifetime
        return k

    def matches(self, expression: str, driver: str, device: Device) -> bool:
        """Raises SelectorError (args: kind, detail)."""
        key = self.fingerprint(driver, device)
        r = self._results.get((expression, key))
        if r is None:
            r = self._results[(expression, key)] = _evaluate(expression, driver, device, key, self._activations)
        if isinstance(r, tuple):
            raise SelectorError(*r)
        return r


def _evaluate(expression: str, driver: str, device: Device, key: int,
              activations: dict[int, dict[str, Any] | SelectorError]) -> bool | tuple[str, str]:
    """One selector on one device: its result, or (kind, detail) of its error. cel-python is
    imported on first use: building its parser takes over a second, which runs without resource
    claims should not pay."""
    from kplan.cel import CelError, compile_selector, device_activation, evaluate

    try:
        program = compile_selector(expression)
    except CelError as e:
        return ("compile", str(e))
    act = activations.get(key)
    if act is None:
        try:
            act = device_activation(driver, device)
        except CelError as e:
            act = SelectorError("runtime", str(e))
        activations[key] = act
    if isinstance(act, SelectorError):
        return (act.args[0], act.args[1])
    try:
        return evaluate(program, act)
    except CelError as e:
        return ("runtime", str(e))


class SelectorError(Exception):
    """A selector's compile or runtime error: args are (kind, detail)."""


def _selector_error(prefix: str, i: int, e: SelectorError) -> AllocatorError:
    kind, detail = e.args
    return AllocatorError(f"{prefix}: selector #{i}: CEL {kind} error: {detail}")


def _lookup(attrs: Mapping[str, AttributeValue], driver: str, name: str) -> AttributeValue | None:
    v = attrs.get(name)
    if v is not None:
        return v
    domain, _, ident = name.partition("/")
    if domain == driver:
        return attrs.get(ident)
    return None


@dataclass(slots=True)
class _Constraint:
    requests: tuple[str, ...]
    attribute: str
    value: AttributeValue | None = None
    count: int = 0

    def applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, driver: str, device: Device) -> bool:
        v = _lookup(device.attributes, driver, self.attribute)
        if v is None:
            return False
        if self.count == 0:
            self.value = v
        elif v != self.value:  # same type and value; versions compare as strings
            return False
        self.count += 1
        return True

    def remove(self) -> None:
        self.count -= 1


@dataclass(frozen=True, slots=True)
class _Slot:
    """One request alternative: ``exactly`` (sub "") or one firstAvailable subrequest."""

    request: str
    sub: str
    spec: SubRequest

    @property
    def label(self) -> str:
        return f"{self.request}/{self.sub}" if self.sub else self.request


class Inventory:
    """What stays fixed for a run (slices and classes) and what is derived from it once: the slices
    that reach each node, each node's pools, the devices of a node matching a request shape, and the
    selector results per identical device."""

    def __init__(self, slices: Sequence[ResourceSlice], classes: Mapping[str, DeviceClass],
                 cache: SelectorCache | None = None, features: DeviceFeatures = FEATURES_OFF,
                 taint_rules: Sequence[DeviceTaintRule] = ()) -> None:
        self.given = slices
        self.features = features
        self.slices: Sequence[ResourceSlice] = apply_taint_rules(slices, taint_rules) \
            if features.device_taint_rules and taint_rules else slices
        self.classes = classes
        self.cache = cache or SelectorCache()
        #: slice positions by nodeName, and those of slices with a node selector or allNodes
        self._by_node: dict[str, list[int]] = {}
        self._shared: list[int] = []
        for i, s in enumerate(slices):
            if s.node_name:
                self._by_node.setdefault(s.node_name, []).append(i)
            elif s.all_nodes or s.node_selector is not None:
                self._shared.append(i)
        self._sizes = (len(slices), len(classes))
        self._pools: dict[str, list[Pool]] = {}
        self._local: dict[str, bool] = {}
        self._pool_keys: dict[str, tuple[tuple[str, str], ...]] = {}
        self._matching: dict[tuple[str, str, tuple[str, ...]], Matching] = {}
        #: (class, request selectors, device fingerprint) → matches, or the SelectorError's args
        self._shape_results: dict[tuple[str, tuple[str, ...], int], bool | tuple[Any, ...]] = {}

    def describes(self, slices: Sequence[ResourceSlice], classes: Mapping[str, DeviceClass],
                  features: DeviceFeatures = FEATURES_OFF) -> bool:
        """Whether this inventory was built from these very slices and classes, unchanged in number,
        with these features (a run does not change them; a caller that did gets a new inventory)."""
        return slices is self.given and classes is self.classes and self._sizes == (len(slices), len(classes)) \
            and features == self.features

    def pools(self, node_name: str, labels: Mapping[str, str]) -> list[Pool]:
        """GatherPools for the node (cached: a node's name and labels do not change in a run)."""
        p = self._pools.get(node_name)
        if p is None:
            reach = self._by_node.get(node_name, [])
            if self._shared:
                reach = sorted(reach + self._shared)
            p = gather_pools([self.slices[i] for i in reach], node_name, labels)
            self._pools[node_name] = p
            self._local[node_name] = all(s.node_name for pool in p for s, _ in pool.devices)
            self._pool_keys[node_name] = tuple((pool.driver, pool.name) for pool in p)
        return p

    def node_local(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """Whether every device the node sees is published for this node alone (nodeName slices)."""
        self.pools(node_name, labels)
        return self._local[node_name]

    def pool_keys(self, node_name: str, labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        """(driver, pool) of each pool the node sees, in search order."""
        keys = self._pool_keys.get(node_name)
        if keys is None:
            self.pools(node_name, labels)
            keys = self._pool_keys[node_name]
        return keys

    def candidates(self, node_name: str, pools: list[Pool], spec: SubRequest) -> Matching:
        """The devices of the node that match the (sub)request, in search order, up to the first
        error the search would meet (an invalid pool, a selector error on a device): cached per
        node and request shape for the whole run, since slices and classes do not change."""
        key = (node_name, spec.class_name, spec.selectors)
        hit = self._matching.get(key)
        if hit is not None:
            return hit
        found: list[tuple[ResourceSlice, Device]] = []
        stop: tuple[DeviceId | None, Any] | None = None
        for pool in pools:
            if pool.invalid:
                stop = (None, AllocatorError(f"pool {pool.name} is invalid: {pool.invalid}"))
                break
            for s, d in pool.devices:
                try:
                    ok = self.matches_raw(spec, s.driver, d)
                except SelectorError as e:
                    stop = ((s.driver, s.pool, d.name), e)
                    break
                if ok:
                    found.append((s, d))
            if stop is not None:
                break
        self._matching[key] = (found, stop)
        return found, stop

    def matches_raw(self, spec: SubRequest, driver: str, device: Device) -> bool:
        """Class selectors, then the request's: SelectorError args gain ("class"|"request", index).
        Cached per request shape and identical device."""
        key = (spec.class_name, spec.selectors, self.cache.fingerprint(driver, device))
        r = self._shape_results.get(key)
        if r is None:
            try:
                r = self._matches_raw(spec, driver, device)
            except SelectorError as e:
                r = e.args
            self._shape_results[key] = r
        if isinstance(r, tuple):
            raise SelectorError(*r)
        return r

    def _matches_raw(self, spec: SubRequest, driver: str, device: Device) -> bool:
        cls = self.classes.get(spec.class_name)
        if cls is None:
            raise SelectorError("class", 0, "missing", "")
        for i, expr in enumerate(cls.selectors):
            try:
                if not self.cache.matches(expr, driver, device):
                    return False
            except SelectorError as e:
                raise SelectorError("class", i, *e.args) from None
        for i, expr in enumerate(spec.selectors):
            try:
                if not self.cache.matches(expr, driver, device):
                    return False
            except SelectorError as e:
                raise SelectorError("request", i, *e.args) from None
        return True


class Allocator:
    """One cycle's allocator: the devices in use when PreFilter ran (a set, or a view of the run's
    in-use set that is rebuilt only if the set changed since), over the run's inventory."""

    def __init__(self, slices: Sequence[ResourceSlice], classes: Mapping[str, DeviceClass],
                 allocated: Iterable[DeviceId] | InUseView, inventory: Inventory | SelectorCache | None = None,
                 features: DeviceFeatures = FEATURES_OFF, taint_rules: Sequence[DeviceTaintRule] = ()) -> None:
        """``inventory``: the run's (it must hold these slices and classes, and its features are
        the allocator's), or a selector cache to build a fresh one with (with ``features`` and
        ``taint_rules``), or None."""
        self.inventory = inventory if isinstance(inventory, Inventory) else \
            Inventory(slices, classes, inventory, features, taint_rules)
        self.features = self.inventory.features
        self.slices = self.inventory.slices
        self.classes = self.inventory.classes
        self.cache = self.inventory.cache
        self._view = allocated if isinstance(allocated, InUseView) else None
        self._allocated: Collection[DeviceId] = frozenset() if isinstance(allocated, InUseView) \
            else frozenset(allocated)
        self._plans: dict[str, _Plan] = {}

    @property
    def allocated(self) -> Collection[DeviceId]:
        return self._view.devices() if self._view is not None else self._allocated

    @property
    def current(self) -> bool:
        """Whether the devices in use are still those of PreFilter (nothing changed since)."""
        return self._view is None or self._view.unchanged

    def pools(self, node_name: str, labels: Mapping[str, str]) -> list[Pool]:
        return self.inventory.pools(node_name, labels)

    # ---------------------------------------------------------------- matching (2.3)

    def matches(self, claim: ResourceClaim, slot: _Slot, driver: str, device: Device) -> bool:
        cls = self.classes.get(slot.spec.class_name)
        if cls is None:
            raise AllocatorError(f"claim {claim.key}, request {slot.spec.name}: could not retrieve device class "
                                 f'{slot.spec.class_name}: deviceclass.resource.k8s.io "{slot.spec.class_name}" '
                                 "not found")
        for i, expr in enumerate(cls.selectors):
            try:
                if not self.cache.matches(expr, driver, device):
                    return False
            except SelectorError as e:
                raise _selector_error(f"class {cls.name}", i, e) from None
        for i, expr in enumerate(slot.spec.selectors):
            try:
                if not self.cache.matches(expr, driver, device):
                    return False
            except SelectorError as e:
                raise _selector_error(f"claim {claim.key}", i, e) from None
        return True

    def _matching_error(self, claim: ResourceClaim, slot: _Slot, e: SelectorError) -> AllocatorError:
        where, i, kind, detail = e.args
        if where == "class" and kind == "missing":
            return AllocatorError(f"claim {claim.key}, request {slot.spec.name}: could not retrieve device class "
                                  f'{slot.spec.class_name}: deviceclass.resource.k8s.io "{slot.spec.class_name}" '
                                  "not found")
        prefix = f"class {slot.spec.class_name}" if where == "class" else f"claim {claim.key}"
        return AllocatorError(f"{prefix}: selector #{i}: CEL {kind} error: {detail}")

    # ---------------------------------------------------------------- the search

    def allocate(self, node_name: str, labels: Mapping[str, str],
                 claims: Sequence[ResourceClaim]) -> list[Allocation] | None:
        """Allocation results for ``claims`` (in order) on this node, or None when there is no
        solution. Raises AllocatorError for what aborts the attempt upstream."""
        pools = self.pools(node_name, labels)
        plans = [self._plan(c, pools) for c in claims]
        picked: list[list[tuple[DeviceResult, ResourceSlice]]] = [[] for _ in claims]
        in_call: set[DeviceId] = set()
        constraints = [[_Constraint(c.requests, c.match_attribute) for c in claim.spec.constraints]
                       for claim in claims]

        def claim_step(ci: int) -> bool:
            if ci == len(claims):
                return True
            return request_step(ci, 0)

        def request_step(ci: int, ri: int) -> bool:
            slots = plans[ci].slots
            if ri == len(slots):
                return claim_step(ci + 1)
            for slot in slots[ri]:
                if slot.sub and len(picked[ci]) + slot.spec.count > MAX_DEVICES_PER_CLAIM \
                        and slot.spec.mode != ALL:
                    continue
                if device_step(ci, ri, slot, 0):
                    return True
            return False

        taints = self.features.device_taints

        def try_device(ci: int, ri: int, slot: _Slot, k: int, s: ResourceSlice, d: Device, strict: bool) -> bool:
            # allocateDevice: after "in use", before the constraints; a taint is never an error
            if taints and d.taints and taint_prevents_allocation(d, slot.spec.tolerations):
                return False
            cons = [c for c in constraints[ci] if c.applies(slot.request, slot.sub)]
            added: list[_Constraint] = []
            for c in cons:
                if not c.add(s.driver, d):
                    for a in added:
                        a.remove()
                    if strict:
                        raise AllocatorError(f"claim {claims[ci].key}, request {slot.label}: cannot add device "
                                             f"{s.driver}/{s.pool}/{d.name} because a claim constraint would not "
                                             "be satisfied")
                    return False
                added.append(c)
            dev_id = (s.driver, s.pool, d.name)
            picked[ci].append((DeviceResult(slot.label, s.driver, s.pool, d.name, slot.spec.admin_access), s))
            fresh = dev_id not in in_call
            in_call.add(dev_id)
            if device_step(ci, ri, slot, k + 1):
                return True
            picked[ci].pop()
            if fresh:
                in_call.discard(dev_id)
            for a in added:
                a.remove()
            return False

        allocated = self.allocated

        def in_use(ci: int, slot: _Slot, dev_id: DeviceId) -> bool:
            if slot.spec.admin_access:
                return any(r.device_id == dev_id for r, _ in picked[ci])
            return dev_id in allocated or dev_id in in_call

        def device_step(ci: int, ri: int, slot: _Slot, k: int) -> bool:
            if slot.spec.mode == ALL:
                listed = plans[ci].all_devices[slot.label]
                if not listed:
                    return False
                if k == len(listed):
                    return request_step(ci, ri + 1)
                s, d = listed[k]
                if in_use(ci, slot, (s.driver, s.pool, d.name)):
                    return False
                return try_device(ci, ri, slot, k, s, d, True)
            if k == slot.spec.count:
                return request_step(ci, ri + 1)
            found, stop = self.inventory.candidates(node_name, pools, slot.spec)
            for s, d in found:
                if in_use(ci, slot, (s.driver, s.pool, d.name)):
                    continue
                if try_device(ci, ri, slot, k, s, d, False):
                    return True
            if stop is None:
                return False
            at, error = stop
            if at is not None and in_use(ci, slot, at):
                # upstream skips a device in use before evaluating selectors on it, so the error
                # is not reached that way: search the rest device by device
                return slow_device_step(ci, ri, slot, k, at)
            raise error if isinstance(error, AllocatorError) else self._matching_error(claims[ci], slot, error)

        def slow_device_step(ci: int, ri: int, slot: _Slot, k: int, after: DeviceId) -> bool:
            seen = False
            for pool in pools:
                for s, d in pool.devices:
                    dev_id = (s.driver, s.pool, d.name)
                    if not seen:
                        seen = dev_id == after
                        continue
                    if pool.invalid:
                        raise AllocatorError(f"pool {pool.name} is invalid: {pool.invalid}")
                    if in_use(ci, slot, dev_id):
                        continue
                    if not self.matches(claims[ci], slot, s.driver, d):
                        continue
                    if try_device(ci, ri, slot, k, s, d, False):
                        return True
            return False

        if not claim_step(0):
            return None
        return [Allocation(tuple(r for r, _ in p), _node_selector(claims[i], node_name, [s for _, s in p]))
                for i, p in enumerate(picked)]

    # ---------------------------------------------------------------- validation (2.2, 2.4)

    def validate(self, claim: ResourceClaim) -> None:
        """The checks of _validate that do not depend on the node (all of them unless a request
        asks for All devices); raises AllocatorError."""
        self._validate(claim, [])

    def _plan(self, claim: ResourceClaim, pools: list[Pool]) -> _Plan:
        """_validate, kept per claim for the cycle when it does not depend on the node (no All)."""
        plan = self._plans.get(claim.uid)
        if plan is None:
            plan = self._validate(claim, pools)
            if not plan.all_devices:
                self._plans[claim.uid] = plan
        return plan

    def _validate(self, claim: ResourceClaim, pools: list[Pool]) -> _Plan:
        plan = _Plan()
        minimum = 0
        for req in claim.spec.requests:
            alternatives = [_Slot(req.name, "", req.exactly)] if req.exactly is not None else \
                [_Slot(req.name, s.name, s) for s in req.first_available]
            if not alternatives:
                raise AllocatorError(f"claim {claim.key}, request {req.name}: unknown request type")
            counts = []
            for slot in alternatives:
                spec = slot.spec
                where = f"claim {claim.key}, request {spec.name}"
                for i, expr in enumerate(spec.selectors):
                    if not expr:
                        raise AllocatorError(f"{where}, selector #{i}: CEL expression empty (unsupported selector "
                                             "type?)")
                if not spec.class_name:
                    raise AllocatorError(f"{where}: missing device class name (unsupported request type?)")
                if spec.class_name not in self.classes:
                    raise AllocatorError(f"{where}: could not retrieve device class {spec.class_name}: "
                                         f'deviceclass.resource.k8s.io "{spec.class_name}" not found')
                if spec.mode == ALL:
                    listed = []
                    for pool in pools:
                        if pool.incomplete:
                            raise AllocatorError(f"{where}: asks for all devices, but resource pool "
                                                 f"{pool.driver}/{pool.name} is currently being updated")
                        if pool.invalid:
                            raise AllocatorError(f"{where}: asks for all devices, but resource pool "
                                                 f"{pool.driver}/{pool.name} is currently invalid")
                        for s, d in pool.devices:
                            if self.matches(claim, slot, s.driver, d):
                                listed.append((s, d))
                    if len(listed) > MAX_DEVICES_PER_CLAIM:
                        raise AllocatorError(f"claim {claim.key}: number of requested devices {len(listed)} "
                                             f"exceeds the claim limit of {MAX_DEVICES_PER_CLAIM}")
                    plan.all_devices[slot.label] = listed
                    counts.append(len(listed))
                else:
                    counts.append(spec.count)
            minimum += min(counts)
            plan.slots.append(alternatives)
        if minimum > MAX_DEVICES_PER_CLAIM:
            raise AllocatorError(f"claim {claim.key}: number of requested devices {minimum} exceeds the claim limit "
                                 f"of {MAX_DEVICES_PER_CLAIM}")
        for i, c in enumerate(claim.spec.constraints):
            if not c.match_attribute:
                raise AllocatorError(f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint "
                                     "type?)")
        return plan


@dataclass(slots=True)
class _Plan:
    slots: list[list[_Slot]] = field(default_factory=list)
    all_devices: dict[str, list[tuple[ResourceSlice, Device]]] = field(default_factory=dict)


def _node_selector(claim: ResourceClaim, node_name: str, used: list[ResourceSlice]) -> NodeSelector | None:
    """The allocation's node selector (2.8)."""
    if any(s.node_name for s in used):
        return NodeSelector((NodeSelectorTerm((), (Requirement("metadata.name", IN, (node_name,)),)),))
    exprs: list[Requirement] = []
    fields: list[Requirement] = []
    for s in used:
        if s.node_selector is None:
            continue
        if len(s.node_selector.terms) != 1:
            raise AllocatorError(f"create NodeSelector for claim {claim.name}: unsupported "
                                 f"ResourceSlice.NodeSelector with {len(s.node_selector.terms)} terms")
        term = s.node_selector.terms[0]
        for r in term.match_expressions:
            if r not in exprs:
                exprs.append(r)
        for r in term.match_fields:
            if r not in fields:
                fields.append(r)
    if not exprs and not fields:
        return None
    return NodeSelector((NodeSelectorTerm(tuple(exprs), tuple(fields)),))
