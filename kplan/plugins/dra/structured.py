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

With DRAConsumableCapacity (the "incubating" allocators of 1.36 and 1.37): a device that allows
multiple allocations is never "in use" (it is not marked for the claim, and its shares are not
allocated devices); every request is checked against each candidate's capacities
(plugins/dra/capacity.py) beside what the allocated state and this attempt's earlier picks
consume; a shared device's counters are consumed once (not again while it has consumed capacity);
its result carries ``NEW_SHARE`` (Reserve gives it a share ID) and the capacity consumed; a
``distinctAttribute`` constraint wants a different value of the attribute on each device.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kplan.cluster.dra import NO_SHARES, InUseView, NoShares, SharedView
from kplan.errors import UnsupportedError
from kplan.model.dra import (
    ALL,
    FEATURES_OFF,
    MAX_DEVICES_PER_CLAIM,
    NO_EXECUTE,
    NO_SCHEDULE,
    Allocation,
    AttributeValue,
    CounterSet,
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
from kplan.plugins.dra import capacity as cap

DeviceId = tuple[str, str, str]
#: matching devices of a node for one request shape, and the error the search meets after them
Matching = tuple[list[tuple[ResourceSlice, Device]], tuple[DeviceId | None, Any] | None]


class AllocatorError(Exception):
    """An allocator failure that aborts the scheduling attempt (Filter returns Error)."""

    #: the node table row where Filter met it (set by the node summaries), None: unknown
    row: int | None = None


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    #: (slice, device) in slice order, then device order: the devices the node may use
    devices: list[tuple[ResourceSlice, Device]] = field(default_factory=list)
    incomplete: bool = False
    invalid: str = ""
    #: partitionable devices: the pool's counter sets by name, and every device of the pool (on
    #: this node or not) whose allocation consumes from them
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)
    counter_devices: list[tuple[ResourceSlice, Device]] = field(default_factory=list)


class NodeFailure(AllocatorError):
    """ErrFailedAllocationOnNode: this node fails with the text (U&U); other nodes may still fit."""


#: the allocators' text when nothing fits and the node sees an invalid pool (1.35 on)
INVALID_POOLS = "invalid resource pools were encountered"
#: the share ID of a result the allocator made for a device allowing multiple allocations: Reserve
#: replaces it with a fresh one (upstream: a random UUID)
NEW_SHARE = "?"


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


def _slice_on_node(s: ResourceSlice, node_name: str, labels: Mapping[str, str]) -> bool:
    """NodeMatches with the slice's nodeName, allNodes or nodeSelector."""
    if s.node_name:
        return s.node_name == node_name
    return s.all_nodes or (s.node_selector is not None and s.node_selector.matches(node_name, labels))


def gather_pools(slices: Sequence[ResourceSlice], node_name: str, labels: Mapping[str, str],
                 features: DeviceFeatures = FEATURES_OFF, all_slices: Sequence[ResourceSlice] | None = None
                 ) -> list[Pool]:
    """GatherPools: the pools of the slices that reach this node, highest generation only, in
    (driver, pool) order. ``all_slices``: every slice of the run (for the pools missing slices);
    None: ``slices`` are all of them."""
    if features.skip_unusable_pools:
        return _gather_pools(slices, node_name, labels, features, slices if all_slices is None else all_slices)
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
        _keep_newest_generation(by_id, s)
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


def _keep_newest_generation(by_id: dict[tuple[str, str], list[ResourceSlice]], s: ResourceSlice) -> None:
    """Group a slice by (driver, pool), keeping only the slices of the newest generation seen."""
    key = (s.driver, s.pool)
    have = by_id.get(key)
    if have is None or s.generation > have[0].generation:
        by_id[key] = [s]
    elif s.generation == have[0].generation:
        have.append(s)


def _gather_pools(slices: Sequence[ResourceSlice], node_name: str, labels: Mapping[str, str],
                  features: DeviceFeatures, all_slices: Sequence[ResourceSlice]) -> list[Pool]:
    """GatherPools of the allocators from 1.35 on ("incubating"): a slice with shared counters
    reaches every node in 1.35 and 1.36; a slice with per-device node selection reaches the node
    if one of its devices does. A pool missing slices here is looked up among all slices: an older generation
    than some other slice of it makes it obsolete (ignored), too few slices of its generation make
    it incomplete (no devices; ``All`` requests fail on it with an error). Without partitionable
    devices (the gate off, the API server drops the fields) slices with per-device node selection
    are ignored and counters play no role."""
    partitionable = features.partitionable_devices
    by_id: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if s.per_device_node_selection and not partitionable:
            continue
        if partitionable and s.shared_counters and features.counter_slices_reach_every_node:
            relevant = True
        elif s.node_name or s.all_nodes or s.node_selector is not None:
            relevant = _slice_on_node(s, node_name, labels)
        elif s.per_device_node_selection:
            relevant = any(d.on_node(node_name, labels) for d in s.devices)
        else:
            continue
        if not relevant:
            continue
        _keep_newest_generation(by_id, s)
    pools = []
    for (driver, name), group in sorted(by_id.items()):
        if len(group) == group[0].slice_count:
            pools.append(_build_pool(driver, name, group, None, partitionable, node_name, labels))
            continue
        everything = [s for s in all_slices if s.driver == driver and s.pool == name]
        if any(s.generation > group[0].generation for s in everything):
            continue  # obsolete: the driver is replacing this generation
        everything = [s for s in everything if s.generation == group[0].generation]
        if len(everything) != group[0].slice_count:
            pools.append(Pool(driver, name, incomplete=True))
            continue
        pools.append(_build_pool(driver, name, group, everything, partitionable, node_name, labels))
    return pools


def _build_pool(driver: str, name: str, group: list[ResourceSlice], everything: list[ResourceSlice] | None,
                partitionable: bool, node_name: str, labels: Mapping[str, str]) -> Pool:
    """buildPool: device names unique among the slices reaching the node; with partitionable
    devices, counter set names unique (among all the pool's counter slices) and every consumed
    counter known, also for the devices of the pool's slices that do not reach the node (their
    allocations consume the same counters)."""
    pool = Pool(driver, name)
    names = {s.name for s in group}
    others = [s for s in everything or () if s.name not in names]
    device_slices = [s for s in group if not (partitionable and s.shared_counters)]
    seen: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in seen:
                pool.invalid = f"duplicate device name {d.name}"
                return pool
            seen.add(d.name)
    if partitionable:
        for s in (*group, *others):
            for cs in s.shared_counters:
                if cs.name in pool.counter_sets:
                    pool.invalid = f"duplicate counter set name {cs.name}"
                    pool.counter_sets = {}
                    return pool
                pool.counter_sets[cs.name] = cs
        for s in (*group, *others):
            for d in s.devices:
                for use in d.consumes_counters:
                    have = pool.counter_sets.get(use.name)
                    problem = f"counter set {use.name} not found" if have is None else next(
                        (f"counter {c} not found in counter set {use.name}" for c in use.counters
                         if c not in have.counters), "")
                    if problem:
                        pool.invalid, pool.counter_sets = problem, {}
                        return pool
                if d.consumes_counters:
                    pool.counter_devices.append((s, d))
    pool.devices = [(s, d) for s in device_slices for d in s.devices
                    if not s.per_device_node_selection or d.on_node(node_name, labels)]
    return pool


class SelectorCache:
    """Selector results per (expression, identical device): devices of one model on many nodes are
    evaluated once. A device is identified by its driver, attributes and capacity (its fingerprint,
    numbered in order of appearance). Lives as long as the slices do (one simulation).

    ``consumable``: DRAConsumableCapacity: ``device.allowMultipleAllocations`` is the device's (part
    of its fingerprint); without it, false (the API server drops the field from slices)."""

    def __init__(self, consumable: bool = False) -> None:
        self.consumable = consumable
        self._ids: dict[tuple[int, str], int] = {}
        self._fingerprints: dict[tuple[object, ...], int] = {}
        self._activations: dict[int, dict[str, Any] | SelectorError] = {}
        self._results: dict[tuple[str, int], bool | tuple[str, str]] = {}
        self._keep: list[Device] = []

    def fingerprint(self, driver: str, device: Device) -> int:
        """The number of the device's (driver, attributes, capacity)."""
        k = self._ids.get((id(device), driver))
        if k is None:
            fp = (driver, tuple(sorted(device.attributes.items())), tuple(sorted(device.capacity.items())),
                  self.consumable and device.allow_multiple_allocations)
            k = self._fingerprints.setdefault(fp, len(self._fingerprints))
            self._ids[(id(device), driver)] = k
            self._keep.append(device)  # keeps id() stable for the cache's lifetime
        return k

    def matches(self, expression: str, driver: str, device: Device) -> bool:
        """Raises SelectorError (args: kind, detail)."""
        key = self.fingerprint(driver, device)
        r = self._results.get((expression, key))
        if r is None:
            r = self._results[(expression, key)] = _evaluate(expression, driver, device, key, self._activations,
                                                             self.consumable)
        if isinstance(r, tuple):
            raise SelectorError(*r)
        return r


def run_selector_cache(caches: dict[str, Any], consumable: bool) -> SelectorCache:
    """The run's selector cache for the CEL environment of the release's gates."""
    found = caches.setdefault(f"selectors/{consumable}", SelectorCache(consumable))
    assert isinstance(found, SelectorCache)
    return found


def _evaluate(expression: str, driver: str, device: Device, key: int,
              activations: dict[int, dict[str, Any] | SelectorError], consumable: bool) -> bool | tuple[str, str]:
    """One selector on one device: its result, or (kind, detail) of its error. cel-python is
    imported on first use: building its parser takes over a second, which runs without resource
    claims should not pay."""
    from kplan.cel import CelError, compile_selector, device_activation, evaluate

    try:
        program = compile_selector(expression, stored=True)
    except CelError as e:
        return ("compile", str(e))
    act = activations.get(key)
    if act is None:
        try:
            act = device_activation(driver, device, consumable)
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

    def remove(self, request: str) -> None:
        self.count -= 1


@dataclass(slots=True)
class _Distinct:
    """distinctAttribute: no two devices with the same value of the attribute. The 1.36 allocator
    keeps the values per request name (``per_request``): a request's later device replaces its
    earlier one's value, and removing one of a request's devices forgets the request's value; 1.37
    keeps every device's."""

    requests: tuple[str, ...]
    attribute: str
    per_request: bool
    by_request: dict[str, AttributeValue] = field(default_factory=dict)
    values: list[AttributeValue] = field(default_factory=list)
    count: int = 0

    def applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, driver: str, device: Device, request: str) -> bool:
        v = _lookup(device.attributes, driver, self.attribute)
        if v is None:
            return False
        if not self.per_request:
            if v in self.values:
                return False
            self.values.append(v)
            return True
        if self.count and v in self.by_request.values():
            return False
        self.by_request[request] = v
        self.count += 1
        return True

    def remove(self, request: str) -> None:
        if not self.per_request:
            self.values.pop()
            return
        self.by_request.pop(request, None)
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
        self.cache = cache or SelectorCache(features.consumable_capacity)
        #: slice positions by nodeName, and those of slices with a node selector or allNodes
        self._by_node: dict[str, list[int]] = {}
        self._shared: list[int] = []
        for i, s in enumerate(self.slices):
            if s.node_name and not (features.partitionable_devices and s.shared_counters
                                    and features.counter_slices_reach_every_node):
                self._by_node.setdefault(s.node_name, []).append(i)
            elif s.node_name or s.all_nodes or s.node_selector is not None or s.per_device_node_selection:
                self._shared.append(i)
        self._sizes = (len(slices), len(classes))
        self._pools: dict[str, list[Pool]] = {}
        self._local: dict[str, bool] = {}
        self._pool_keys: dict[str, tuple[tuple[str, str], ...]] = {}
        self._matching: dict[tuple[str, str, tuple[str, ...]], Matching] = {}
        self._positions: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}
        self._order: dict[str, dict[DeviceId, int]] = {}
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
            p = gather_pools([self.slices[i] for i in reach], node_name, labels, self.features, self.slices)
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
        skip_unusable = self.features.skip_unusable_pools
        for pool in pools:
            if skip_unusable and (pool.incomplete or pool.invalid):
                continue  # never allocated from, and no error (1.35 on)
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

    def candidate_positions(self, node_name: str, pools: list[Pool], spec: SubRequest) -> list[int]:
        """The position of each of ``candidates``' devices among all the node's devices in search
        order (pool, slice, device): where the search for a request's next device starts."""
        key = (node_name, spec.class_name, spec.selectors)
        hit = self._positions.get(key)
        if hit is None:
            order = self._order.get(node_name)
            if order is None:
                order = self._order[node_name] = {(s.driver, s.pool, d.name): i for i, (s, d) in
                                                  enumerate(sd for pool in pools for sd in pool.devices)}
            hit = self._positions[key] = [order[(s.driver, s.pool, d.name)]
                                          for s, d in self.candidates(node_name, pools, spec)[0]]
        return hit

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
                 features: DeviceFeatures = FEATURES_OFF, taint_rules: Sequence[DeviceTaintRule] = (),
                 shares: SharedView | NoShares = NO_SHARES) -> None:
        """``inventory``: the run's (it must hold these slices and classes, and its features are
        the allocator's), or a selector cache to build a fresh one with (with ``features`` and
        ``taint_rules``), or None. ``shares``: the shared devices' state PreFilter gathered
        (consumable capacity)."""
        self.inventory = inventory if isinstance(inventory, Inventory) else \
            Inventory(slices, classes, inventory, features, taint_rules)
        self.features = self.inventory.features
        self.slices = self.inventory.slices
        self.classes = self.inventory.classes
        self.cache = self.inventory.cache
        self._view = allocated if isinstance(allocated, InUseView) else None
        #: pool name → counter set → counter → what the allocated devices leave (per allocator)
        self._available_counters: dict[str, dict[str, dict[str, int]]] = {}
        self._allocated: Collection[DeviceId] = frozenset() if isinstance(allocated, InUseView) \
            else frozenset(allocated)
        self._plans: dict[str, _Plan] = {}
        self.shares = shares

    @property
    def allocated(self) -> Collection[DeviceId]:
        return self._view.devices() if self._view is not None else self._allocated

    @property
    def current(self) -> bool:
        """Whether the devices in use are still those of PreFilter (nothing changed since)."""
        return self._view is None or self._view.unchanged

    def device_allocated(self, dev: DeviceId) -> bool:
        """IsDeviceAllocated: in use, shared, or with consumed capacity."""
        if dev in self.allocated:
            return True
        use = self.shares.get(dev)
        return use.shared or use.capacity is not None

    def requested_capacity(self, claim: ResourceClaim, slot: _Slot, s: ResourceSlice, d: Device) -> cap.Amounts | None:
        """The request's capacity amounts under the device's names: as written up to 1.37, resolved
        with the driver as default domain from 1.38 (#142202)."""
        if not self.features.qualified_capacity_names:
            return slot.spec.capacity
        try:
            return cap.resolve_requests(d, s.driver, slot.spec.capacity)
        except cap.DuplicateCapacityRequest as e:
            raise UnsupportedError(
                f"claim {claim.key}, request {slot.label}: capacity {e.capacity!r} of device {s.driver}/{s.pool}/"
                f"{d.name} is requested both as {e.first!r} and as {e.second!r}: kube-scheduler aborts the attempt "
                "with an error kplan does not word; request it once") from None

    def capacity_fits(self, claim: ResourceClaim, slot: _Slot, s: ResourceSlice, d: Device,
                      allocating: Mapping[str, int] | None) -> bool:
        """CmpRequestOverCapacity for a candidate (DRAConsumableCapacity on): False also when the
        request names a capacity the device lacks (the device is skipped)."""
        try:
            return cap.fits(d, self.requested_capacity(claim, slot, s, d),
                            self.shares.get((s.driver, s.pool, d.name)).aggregated(),
                            allocating, self.features.fractional_capacity_range,
                            self.features.negative_capacity_aborts)
        except cap.CapacityError:
            return False
        except cap.NegativeCapacity:
            raise UnsupportedError(
                f"claim {claim.key}, request {slot.label}: device {s.driver}/{s.pool}/{d.name} would have a negative "
                "amount of capacity consumed (a negative capacity value or default): kube-scheduler aborts the attempt "
                "with an error kplan does not word") from None
        except cap.Unrepresentable:
            raise UnsupportedError(
                f"claim {claim.key}, request {slot.label}: a capacity request for device {s.driver}/{s.pool}/{d.name} "
                "is not a whole number of thousandths, and the device's validRange is rounded in thousandths "
                "(DRAFractionalCapacityRange): kube-scheduler aborts the attempt with an error kplan does not word; "
                "round the request to thousandths") from None

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
        #: per claim: (result, (slice, device), marked in use for the claim) of each pick
        picked: list[list[tuple[DeviceResult, tuple[ResourceSlice, Device], bool]]] = [[] for _ in claims]
        in_call: set[DeviceId] = set()
        consumable = self.features.consumable_capacity
        per_request = self.features.distinct_per_request_name
        constraints = [[_Distinct(c.requests, c.distinct_attribute, per_request)
                        if consumable and c.distinct_attribute and not c.match_attribute
                        else _Constraint(c.requests, c.match_attribute) for c in claim.spec.constraints]
                       for claim in claims]
        #: this attempt's shares of devices allowing multiple allocations (allocatingCapacity): the
        #: capacity they consume; an entry exists once a device is shared, even with nothing consumed
        allocating: dict[DeviceId, dict[str, int]] = {}

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
                if device_step(ci, ri, slot, 0, 0):
                    return True
            return False

        taints = self.features.device_taints
        counters = Counters(self, pools) if self.features.partitionable_devices else _NO_COUNTERS

        def capacity_in_use(dev_id: DeviceId) -> bool:
            """deviceCapacityInUse: consumed capacity allocated (1.37: or a share) or picked now."""
            if dev_id in allocating:
                return True
            use = self.shares.get(dev_id)
            return use.aggregated() is not None or (self.features.shared_devices_count_as_in_use and use.shared)

        def try_device(ci: int, ri: int, slot: _Slot, k: int, s: ResourceSlice, d: Device, strict: bool,
                       position: int) -> bool:
            # allocateDevice, after "in use": the device's counters, its taints, the constraints
            # (only a constraint is an error, and only for All), the capacity
            dev_id = (s.driver, s.pool, d.name)
            multiple = consumable and d.allow_multiple_allocations
            took = bool(d.consumes_counters) and counters.enabled and not (multiple and capacity_in_use(dev_id))
            if took and not counters.take(s, d):
                return False
            if taints and d.taints and taint_prevents_allocation(d, slot.spec.tolerations):
                if took:
                    counters.give_back(s, d)
                return False
            cons = [c for c in constraints[ci] if c.applies(slot.request, slot.sub)]
            added: list[_Constraint | _Distinct] = []

            def undo() -> None:
                for a in reversed(added):
                    a.remove(slot.request)
                if took:
                    counters.give_back(s, d)

            for c in cons:
                ok = c.add(s.driver, d, slot.request) if isinstance(c, _Distinct) else c.add(s.driver, d)
                if not ok:
                    undo()
                    if strict:
                        raise AllocatorError(f"claim {claims[ci].key}, request {slot.label}: cannot add device "
                                             f"{s.driver}/{s.pool}/{d.name} because a claim constraint would not "
                                             "be satisfied")
                    return False
                added.append(c)
            share = ""
            consumed: tuple[tuple[str, int], ...] | None = None
            existed = dev_id in allocating
            if consumable:
                if not self.capacity_fits(claims[ci], slot, s, d, allocating.get(dev_id)):
                    undo()
                    return False
                if multiple:
                    amounts = cap.consumed_capacity(d, self.requested_capacity(claims[ci], slot, s, d),
                                                    self.features.fractional_capacity_range)
                    entry = allocating.setdefault(dev_id, {})
                    for name, amount in amounts:
                        entry[name] = entry.get(name, 0) + amount
                    share, consumed = NEW_SHARE, amounts or None
            picked[ci].append((DeviceResult(slot.label, s.driver, s.pool, d.name, slot.spec.admin_access, share,
                                            consumed), (s, d), not multiple))
            fresh = not multiple and dev_id not in in_call
            if fresh:
                in_call.add(dev_id)
            if device_step(ci, ri, slot, k + 1, position + 1):
                return True
            picked[ci].pop()
            if fresh:
                in_call.discard(dev_id)
            if multiple:
                _release(allocating, dev_id, consumed or (), existed)
            undo()
            return False

        allocated = self.allocated

        def in_use(ci: int, slot: _Slot, dev_id: DeviceId) -> bool:
            if slot.spec.admin_access:
                return any(r.device_id == dev_id and marked for r, _, marked in picked[ci])
            return dev_id in allocated or dev_id in in_call

        def device_step(ci: int, ri: int, slot: _Slot, k: int, start: int) -> bool:
            if slot.spec.mode == ALL:
                listed = plans[ci].all_devices[slot.label]
                if not listed:
                    return False
                if k == len(listed):
                    return request_step(ci, ri + 1)
                s, d = listed[k]
                if in_use(ci, slot, (s.driver, s.pool, d.name)):
                    return False
                return try_device(ci, ri, slot, k, s, d, True, 0)
            if k == slot.spec.count:
                return request_step(ci, ri + 1)
            found, stop = self.inventory.candidates(node_name, pools, slot.spec)
            positions = self.inventory.candidate_positions(node_name, pools, slot.spec)
            for i in range(bisect.bisect_left(positions, start), len(found)):
                s, d = found[i]
                if in_use(ci, slot, (s.driver, s.pool, d.name)):
                    continue
                if consumable and not self.capacity_fits(claims[ci], slot, s, d,
                                                         allocating.get((s.driver, s.pool, d.name))):
                    continue
                if try_device(ci, ri, slot, k, s, d, False, positions[i]):
                    return True
            if stop is None:
                return False
            at, error = stop
            if at is not None and in_use(ci, slot, at):
                # upstream skips a device in use before evaluating selectors on it, so the error
                # is not reached that way: search the rest device by device
                return slow_device_step(ci, ri, slot, k, at, start)
            raise error if isinstance(error, AllocatorError) else self._matching_error(claims[ci], slot, error)

        def slow_device_step(ci: int, ri: int, slot: _Slot, k: int, after: DeviceId, start: int) -> bool:
            seen = False
            position = -1
            for pool in pools:
                for s, d in pool.devices:
                    position += 1
                    dev_id = (s.driver, s.pool, d.name)
                    if not seen:
                        seen = dev_id == after
                        continue
                    if position < start:
                        continue
                    if pool.invalid:
                        raise AllocatorError(f"pool {pool.name} is invalid: {pool.invalid}")
                    if in_use(ci, slot, dev_id):
                        continue
                    if not self.matches(claims[ci], slot, s.driver, d):
                        continue
                    if consumable and not self.capacity_fits(claims[ci], slot, s, d, allocating.get(dev_id)):
                        continue
                    if try_device(ci, ri, slot, k, s, d, False, position):
                        return True
            return False

        if not claim_step(0):
            if self.features.skip_unusable_pools and any(pool.invalid for pool in pools):
                raise NodeFailure(INVALID_POOLS)
            return None
        return [Allocation(tuple(r for r, _, _ in p), _node_selector(claims[i], node_name, [sd for _, sd, _ in p]))
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
                        # from 1.38 the error fails this node only (#141898)
                        fail = NodeFailure if self.features.all_requests_fail_the_node else AllocatorError
                        if pool.incomplete:
                            raise fail(f"{where}: asks for all devices, but resource pool "
                                       f"{pool.driver}/{pool.name} is currently being updated")
                        if pool.invalid:
                            raise fail(f"{where}: asks for all devices, but resource pool "
                                       f"{pool.driver}/{pool.name} is currently invalid")
                        for s, d in pool.devices:
                            if self.matches(claim, slot, s.driver, d) and self._all_capacity(claim, slot, s, d):
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
            if c.match_attribute or (c.distinct_attribute and self.features.consumable_capacity):
                continue
            if c.distinct_attribute:
                raise UnsupportedError(
                    f"ResourceClaim {claim.key}: spec.devices.constraints[{i}] has only distinctAttribute, which "
                    "needs DRAConsumableCapacity (off in this release or by --feature-gates): the API server "
                    "drops the field and then refuses the claim (matchAttribute: Required value)")
            raise AllocatorError(f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint "
                                 "type?)")
        return plan

    def _all_capacity(self, claim: ResourceClaim, slot: _Slot, s: ResourceSlice, d: Device) -> bool:
        """Whether an ``All`` request lists the device (DRAConsumableCapacity): 1.36 asks whether it
        can serve the request beside the capacity already allocated on it; 1.37 whether it could
        if nothing were consumed (what is, is checked when allocating)."""
        if not self.features.consumable_capacity:
            return True
        if not self.features.all_requests_listed_by_capacity_alone:
            return self.capacity_fits(claim, slot, s, d, None)
        try:
            return cap.fits(d, self.requested_capacity(claim, slot, s, d), None, None,
                            self.features.fractional_capacity_range,
                            self.features.negative_capacity_aborts)
        except cap.CapacityError:
            return False
        except (cap.Unrepresentable, cap.NegativeCapacity):
            return self.capacity_fits(claim, slot, s, d, None)  # raises kplan's refusal


def _release(allocating: dict[DeviceId, dict[str, int]], dev_id: DeviceId,
             consumed: tuple[tuple[str, int], ...], existed: bool) -> None:
    """rollbackDevice for a share: allocatingCapacity.Remove (the entry goes when it is all zero),
    and an empty entry put back when the device was shared before this pick."""
    entry = allocating.get(dev_id)
    if entry is not None:
        for name, amount in consumed:
            if name in entry:
                entry[name] -= amount
        if all(v == 0 for v in entry.values()):
            del allocating[dev_id]
    if existed and dev_id not in allocating:
        allocating[dev_id] = {}


class Counters:
    """checkAvailableCounters for one Allocate call: what each pool's counter sets have left
    after the allocated devices (computed once per allocator: kube-scheduler's cycle), and what
    the devices picked in this call consume. Both are keyed by pool *name*, as upstream keys them
    (two drivers' pools of one name share the entry)."""

    def __init__(self, allocator: Allocator | None, pools: list[Pool]) -> None:
        #: False: counters play no role (DRAPartitionableDevices off: the API server drops them)
        self.enabled = allocator is not None
        self.allocator = allocator
        self.pools = {(p.driver, p.name): p for p in pools}
        self.consumed: dict[str, dict[str, dict[str, int]]] = {}

    def available(self, pool: Pool) -> dict[str, dict[str, int]]:
        assert self.allocator is not None
        cache = self.allocator._available_counters
        have = cache.get(pool.name)
        if have is None:
            have = {name: dict(cs.counters) for name, cs in pool.counter_sets.items()}
            allocator = self.allocator
            for s, d in pool.counter_devices:
                if allocator.device_allocated((s.driver, s.pool, d.name)):
                    for use in d.consumes_counters:
                        left = have.get(use.name, {})
                        for c, amount in use.counters.items():
                            if c in left:
                                left[c] -= amount  # may go negative: nothing left
            cache[pool.name] = have
        return have

    def take(self, s: ResourceSlice, d: Device) -> bool:
        """Consume the device's counters; False (and nothing consumed) when some counter of the
        pool would be exceeded."""
        pool = self.pools[(s.driver, s.pool)]
        available = self.available(pool)
        consumed = self.consumed.setdefault(pool.name, {})
        for use in d.consumes_counters:
            used = consumed.setdefault(use.name, {})
            for c, amount in use.counters.items():
                used[c] = used.get(c, 0) + amount
        for set_name, left in available.items():
            used = consumed.get(set_name, {})
            if any(amount < used.get(c, 0) for c, amount in left.items()):
                self.give_back(s, d)
                return False
        return True

    def give_back(self, s: ResourceSlice, d: Device) -> None:
        consumed = self.consumed[s.pool]
        for use in d.consumes_counters:
            used = consumed[use.name]
            for c, amount in use.counters.items():
                used[c] -= amount


_NO_COUNTERS = Counters(None, [])


@dataclass(slots=True)
class _Plan:
    slots: list[list[_Slot]] = field(default_factory=list)
    all_devices: dict[str, list[tuple[ResourceSlice, Device]]] = field(default_factory=dict)


def _node_selector(claim: ResourceClaim, node_name: str, used: list[tuple[ResourceSlice, Device]]
                   ) -> NodeSelector | None:
    """The allocation's node selector (2.8): the node selection of each device's slice, or of the
    device itself when the slice has per-device node selection."""
    chosen = [(d.node_name, d.node_selector) if s.per_device_node_selection else (s.node_name, s.node_selector)
              for s, d in used]
    if any(name for name, _ in chosen):
        return NodeSelector((NodeSelectorTerm((), (Requirement("metadata.name", IN, (node_name,)),)),))
    exprs: list[Requirement] = []
    fields: list[Requirement] = []
    for _, sel in chosen:
        if sel is None:
            continue
        if len(sel.terms) != 1:
            raise AllocatorError(f"create NodeSelector for claim {claim.name}: unsupported "
                                 f"ResourceSlice.NodeSelector with {len(sel.terms)} terms")
        term = sel.terms[0]
        for r in term.match_expressions:
            if r not in exprs:
                exprs.append(r)
        for r in term.match_fields:
            if r not in fields:
                fields.append(r)
    if not exprs and not fields:
        return None
    return NodeSelector((NodeSelectorTerm(tuple(exprs), tuple(fields)),))
