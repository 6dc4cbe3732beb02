"""DynamicResources (plugins/dynamicresources/dynamicresources.go, v1.34.1, default feature gates).

scheduler-reference-dra.md section 1. Every rejection is UnschedulableAndUnresolvable except
PostFilter's; an allocator error (an invalid CEL selector, a pool being updated for ``All``, ...)
aborts the whole attempt as an Error. The allocated-device snapshot is taken once at PreFilter
and the plugin has no AddPod/RemovePod, so preemption's dry run and nominated pods never change
what it sees (reference section 4). Its state is shared, not copied, by CycleState.clone. What
changes from 1.35 on (Score, its pairing of claims, the quiet PostFilter, the allocator's pool and
capacity rules) is the plugin's release rules, DynamicResourcesRules.

What the resourceclaim controller does (claims from templates, freeing a deleted pod's claims)
lives in cluster/dra.py; the structured allocator in plugins/dra/structured.py.

With DRAExtendedResource on (1.36, 1.37), a pod requesting an extended resource that a DeviceClass
serves gets one more claim, the scheduler's own (plugins/dra/extended.py): built in memory at
PreFilter, given per node the requests for the resources DRA serves there, allocated with the pod's
claims, and created at PreBind.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from kplan.cluster.dra import (
    CLAIM_ADD,
    CLAIM_UPDATE,
    NO_SHARES,
    ClaimLookupError,
    DraState,
    InUseView,
    SharedView,
    consumer,
)
from kplan.errors import UnsupportedError
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import NODE_ADD, NODE_UPDATE_ALLOCATABLE, NODE_UPDATE_LABEL, ClusterEvent
from kplan.framework.features import Gate
from kplan.framework.interfaces import (
    FilterPlugin,
    Handle,
    IdleScore,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    RejectionExplainer,
    ReservePlugin,
    ScoreExtensions,
)
from kplan.framework.registry import ArgsError
from kplan.framework.release import Release
from kplan.framework.status import OK, Code, PluginError, Status, Verdicts, reason_id, skip
from kplan.model.dra import DELETE_PROTECTION, Allocation, DeviceClass, DeviceFeatures, ResourceClaim
from kplan.model.objects import Pod
from kplan.plugins.dra import extended as ext
from kplan.plugins.dra.structured import NEW_SHARE, Allocator, AllocatorError, Inventory, run_selector_cache
from kplan.plugins.dra.summary import NodeSummaries
from kplan.plugins.helper import PluginBase, decode_rules, default_normalize

NAME = "DynamicResources"
_STATE = "DynamicResources/claims"
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
_CANNOT_ALLOCATE_ID = reason_id(CANNOT_ALLOCATE)
#: slots of one group of a Go swiss-table map (abi.SwissMapGroupSlots)
_GO_MAP_GROUP_SLOTS = 8
_NOT_AVAILABLE_ID = reason_id(NOT_AVAILABLE)
_CANNOT_FIT_ID = reason_id(ext.CANNOT_FIT)


@dataclass(frozen=True)
class DynamicResourcesArgs:
    #: a Go duration as written ("10s"); None when not set
    filter_timeout: str | None = None
    #: bindingTimeout, a Go duration as written; None when not set (device binding conditions
    #: are not modelled, so kplan only checks and reports it)
    binding_timeout: str | None = None


#: configv1.DynamicResourcesFilterTimeoutDefault
DEFAULT_FILTER_TIMEOUT = "10s"
#: configv1.DynamicResourcesBindingTimeoutDefault (10 minutes, as Duration.String prints it)
DEFAULT_BINDING_TIMEOUT = "10m0s"


def decode_args(raw: Mapping[str, Any] | None, *, filter_timeout: bool = True,
                binding_timeout: bool = False) -> DynamicResourcesArgs:
    """Strict decoding and SetDefaults_DynamicResourcesArgs, which sets filterTimeout only when the
    release's DRASchedulerFilterTimeout gate is on and bindingTimeout only when its
    DRADeviceBindingConditions and DRAResourceClaimDeviceStatus gates both are (from 1.36 by
    default). Deviation: with those gates off a bindingTimeout is refused as an unknown field,
    where 1.35 knows the field and forbids it."""
    raw = raw or {}
    known = ("filterTimeout", "bindingTimeout") if binding_timeout else ("filterTimeout",)
    for k in raw:
        if k not in known:
            raise ArgsError(f'unknown field "{k}"')
    given = raw.get("filterTimeout")
    timeout = str(given) if given is not None else DEFAULT_FILTER_TIMEOUT if filter_timeout else None
    binding = raw.get("bindingTimeout")
    return DynamicResourcesArgs(timeout, str(binding) if binding is not None
                                else DEFAULT_BINDING_TIMEOUT if binding_timeout else None)


def validate_args(args: DynamicResourcesArgs, *, filter_timeout: bool = True,
                  binding_timeout: bool = False) -> list[str]:
    """ValidateDynamicResourcesArgs with the release's features: ``filter_timeout`` is
    DRASchedulerFilterTimeout (a timeout set while it is off is refused, in upstream's words);
    ``binding_timeout`` is DRADeviceBindingConditions and DRAResourceClaimDeviceStatus."""
    errs = []
    if args.filter_timeout is not None:
        if not filter_timeout:
            errs.append("filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled")
        elif args.filter_timeout.startswith("-"):
            errs.append(f'filterTimeout: Invalid value: "{args.filter_timeout}": must be zero or positive')
    if args.binding_timeout is not None and binding_timeout:
        seconds = go_duration_seconds(args.binding_timeout)
        if seconds is None or seconds < 1:
            errs.append(f'bindingTimeout: Invalid value: "{args.binding_timeout}": must be at least 1 second')
    return errs


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")


def go_duration_seconds(text: str) -> float | None:
    """time.ParseDuration's value in seconds ("1m30s", "-2.5h", "0"); None when it is not one."""
    sign, rest = (-1.0, text[1:]) if text.startswith("-") else (1.0, text.removeprefix("+"))
    if rest == "0":
        return 0.0
    parts = _DURATION.findall(rest)
    if not rest or "".join(n + u for n, u in parts) != rest:
        return None
    return sign * sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


@dataclass(eq=False)
class DraCycle:
    """The plugin's cycle state (stateData). Shared by the clones preemption makes."""

    claims: list[ResourceClaim] = field(default_factory=list)
    #: claim index → its allocation's node selector, for allocated claims that have one
    selectors: dict[int, Any] = field(default_factory=dict)
    to_allocate: list[ResourceClaim] = field(default_factory=list)
    allocator: Allocator | None = None
    #: node name → allocation results for ``to_allocate`` (Filter's successes)
    results: dict[str, list[Allocation]] = field(default_factory=dict)
    #: indices of claims not available on some node where allocation succeeded (PostFilter), in
    #: the order Filter first met them (the insertion order of upstream's set)
    unavailable: dict[int, None] = field(default_factory=dict)
    #: per node id of the run's summaries: the allocator's verdict, if known at PreFilter
    plan: np.ndarray | None = None
    spec_id: int = -1
    #: DRAExtendedResource: the in-memory claim for the pod's extended resources (None: none),
    #: the extended resource → class mapping it was built with
    special: ResourceClaim | None = None
    mapping: Mapping[str, DeviceClass] = field(default_factory=dict)
    #: per node variant (extended.filter_extended_resources) met so far: the claims allocated on
    #: such nodes (the pod's own, then the special claim built for the variant), their spec id
    #: and the allocator's verdicts per node id
    variants: dict[ext.NodeVariant, tuple[list[ResourceClaim], int, np.ndarray]] = field(default_factory=dict)
    #: node name → its variant, for the nodes Filter passed
    node_variant: dict[str, ext.NodeVariant] = field(default_factory=dict)
    #: node name → the special claim allocated there (Filter's successes)
    special_results: dict[str, tuple[ResourceClaim, Allocation]] = field(default_factory=dict)


def dra_state(handle: Handle) -> DraState:
    """The run's DRA state; a snapshot built without one (no resource.k8s.io objects) gets an empty one."""
    snapshot = handle.snapshot
    if snapshot.dra is None:
        snapshot.dra = DraState()
    return snapshot.dra


@dataclass(frozen=True)
class DynamicResourcesRules:
    """DynamicResources' release rules (framework/release_tables.py): the plugin's own, and those
    of the structured allocator it runs (k8s.io/dynamic-resource-allocation at the tag; not gates)."""

    #: Score, weight 2 in the default profile (1.35, #134711): see ``score``
    scores: bool
    #: Score takes a claim already allocated by its own allocation, and the node's results in order
    #: for the claims to allocate (1.36's computeScore); before, all claims by position
    scores_allocated_claims_by_their_allocation: bool
    #: PostFilter gives no reason when it has nothing to do (a pod without claims; no claim to
    #: deallocate), where earlier releases said "no new claims to deallocate" and "still not
    #: schedulable" (v1.37.2 dynamicresources.go); the FitError then goes straight from the filter
    #: reasons to preemption's
    quiet_post_filter: bool
    #: a pool missing slices or invalid is skipped, and a node where nothing fits and that sees an
    #: invalid pool fails with "invalid resource pools were encountered" (1.35); before, such a
    #: pool's devices are used and an invalid pool aborts the attempt
    skip_unusable_pools: bool
    #: a slice with shared counters reaches every node whatever its node selection (1.35, 1.36)
    counter_slices_reach_every_node: bool
    #: DeviceFeatures' consumable-capacity rules of the same names (1.36, 1.37)
    distinct_per_request_name: bool
    all_requests_listed_by_capacity_alone: bool
    negative_capacity_aborts: bool
    shared_devices_count_as_in_use: bool
    #: k8s.io/dynamic-resource-allocation v0.38 (#141898): an All request on a node whose pool is
    #: incomplete or invalid fails that node; before, the attempt
    all_requests_fail_the_node: bool
    #: v0.38 (#142202): a request's capacity names match the device's with or without the driver as
    #: their domain; before, only as written
    qualified_capacity_names: bool


def device_features(release: Release) -> DeviceFeatures:
    """AllocatorFeatures (dynamicresources.go) and the ResourceSlice tracker's option, from the
    release's gates (a gate the release does not know is off) and the plugin's release rules."""
    gates = release.gates
    def on(gate: Gate) -> bool:
        return gate in gates and release.enabled(gate)

    rules = DynamicResourcesRules(**release.plugin_rules[NAME])
    return DeviceFeatures(device_taints=on(Gate.DRA_DEVICE_TAINTS), device_taint_rules=on(Gate.DRA_DEVICE_TAINT_RULES),
                          partitionable_devices=on(Gate.DRA_PARTITIONABLE_DEVICES),
                          skip_unusable_pools=rules.skip_unusable_pools,
                          counter_slices_reach_every_node=rules.counter_slices_reach_every_node,
                          consumable_capacity=on(Gate.DRA_CONSUMABLE_CAPACITY),
                          fractional_capacity_range=on(Gate.DRA_FRACTIONAL_CAPACITY_RANGE),
                          distinct_per_request_name=rules.distinct_per_request_name,
                          all_requests_listed_by_capacity_alone=rules.all_requests_listed_by_capacity_alone,
                          negative_capacity_aborts=rules.negative_capacity_aborts,
                          shared_devices_count_as_in_use=rules.shared_devices_count_as_in_use,
                          all_requests_fail_the_node=rules.all_requests_fail_the_node,
                          qualified_capacity_names=rules.qualified_capacity_names)


class DynamicResources(PluginBase, PreEnqueuePlugin, PreFilterPlugin, FilterPlugin,
                       PostFilterPlugin, ReservePlugin, PreBindPlugin, RejectionExplainer, IdleScore,
                       ScoreExtensions):
    name = NAME
    #: Score is a point of the plugin only where its release rule ``scores`` is on (1.35)
    ruled_points: ClassVar[Mapping[str, str]] = {"score": "scores"}

    def __init__(self, args: Any, handle: Handle) -> None:
        super().__init__(args, handle)
        self.rules = decode_rules(DynamicResourcesRules, handle, NAME)
        self.features = device_features(handle.release)
        #: computeScore's pairing of the pod's claims with a node's allocation results
        self._allocations = (allocations_own_first if self.rules.scores_allocated_claims_by_their_allocation
                             else allocations_by_position)
        #: PostFilter's status as the release words it: quiet or as it is (rule ``quiet_post_filter``)
        self._post_filter_status = _quiet_post_filter if self.rules.quiet_post_filter else _as_it_is

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return None if pod.resource_claims else ()  # pods with resource claims are not signable

    @property
    def dra(self) -> DraState:
        dra = dra_state(self.handle)
        dra.features = self.features
        return dra

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.resource_claims:
            return OK
        try:
            self.dra.lookup(pod)
        except ClaimLookupError as e:
            return Status(Code.UNRESOLVABLE, (str(e),), NAME)
        return OK

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        st = DraCycle()
        # written first, empty: a rejection below leaves PostFilter "no new claims to deallocate"
        state.write(_STATE, st)
        extended = self._extended and bool(pod.device_requests)
        if not pod.resource_claims and not extended:
            return None, skip(NAME)
        dra = self.dra
        try:
            claims = dra.lookup(pod)
        except ClaimLookupError as e:
            return None, Status(Code.UNRESOLVABLE, (str(e),), NAME)
        if extended:
            st.special = self._pre_filter_extended_resources(pod, st)
        if not claims and st.special is None:
            return None, skip(NAME)
        to_allocate = []
        for i, claim in enumerate(claims):
            if claim.allocation is not None:
                if claim.allocation.node_selector is not None:
                    st.selectors[i] = claim.allocation.node_selector
                continue
            if claim.uid in dra.in_flight:
                return None, Status(Code.UNRESOLVABLE,
                                    (f"resource claim {claim.key} is in the process of being allocated",), NAME)
            for req in claim.spec.requests:
                if req.exactly is not None:
                    checks = [(req.name, req.exactly.class_name)]
                elif req.first_available:
                    checks = [(f"{req.name}/{s.name}", s.class_name) for s in req.first_available]
                else:
                    return None, Status(Code.UNRESOLVABLE,
                                        (f"resource claim {claim.key}, request {req.name}: unknown request type",),
                                        NAME)
                for name, cls in checks:
                    if not cls:
                        return None, Status(Code.ERROR, (f"request {name}: unsupported request type",), NAME)
                    if cls not in dra.classes:
                        return None, Status(Code.UNRESOLVABLE,
                                            (f"request {name}: device class {cls} does not exist",), NAME)
            to_allocate.append(claim)
        st.claims = claims
        st.to_allocate = to_allocate
        if to_allocate or st.special is not None:
            summaries = self._summaries()
            summaries.node_ids(self.handle.snapshot.table)
            st.allocator = Allocator(dra.slices, dra.classes, InUseView(dra), summaries.inventory,
                                     shares=SharedView(dra) if self.features.consumable_capacity else NO_SHARES)
            if st.special is None:
                st.spec_id = summaries.spec_id(to_allocate)
                st.plan = summaries.plan(st.allocator, to_allocate, st.spec_id)
        return None, OK

    @property
    def _extended(self) -> bool:
        """DRAExtendedResource (feature.Features' EnableDRAExtendedResource)."""
        return self.handle.release.enabled(Gate.DRA_EXTENDED_RESOURCE)

    def _pre_filter_extended_resources(self, pod: Pod, st: DraCycle) -> ResourceClaim | None:
        """preFilterExtendedResources: the in-memory claim when a class serves one of the pod's
        extended resources. A claim an earlier attempt created for the pod is not modelled (its
        clean-up runs through Filter, PostFilter's deletion and a retry)."""
        mapping = ext.extended_mapping(self.dra)
        if not ext.has_device_class_mapped_extended_resource(pod, mapping):
            return None
        found = ext.find_extended_resource_claim(pod, (c for c in self.dra.claims.values()
                                                       if c.namespace == pod.namespace))
        if found is not None:
            raise UnsupportedError(f"pod {pod.key}: ResourceClaim {found.key} holds its extended resources from an "
                                   "earlier scheduling attempt; kplan does not model the scheduler's clean-up of it "
                                   "(delete the claim from the input)")
        st.mapping = mapping
        return ext.in_memory_claim(pod)

    def _summaries(self) -> NodeSummaries:
        """The run's inventory and node summaries (slices and classes do not change during a run)."""
        dra = self.dra
        found = dra.caches.get("summaries")
        if not isinstance(found, NodeSummaries) or not found.inventory.describes(dra.slices, dra.classes,
                                                                                  self.features):
            cache = run_selector_cache(dra.caches, self.features.consumable_capacity)
            found = dra.caches["summaries"] = NodeSummaries(
                Inventory(dra.slices, dra.classes, cache, self.features, dra.taint_rules), dra)
        return found

    def filter(self, state: CycleState, pod: Pod, table: Any, rows: np.ndarray) -> Verdicts:
        st: DraCycle | None = state.read(_STATE)
        n = len(rows)
        if st is not None and st.special is not None:
            return self._filter_extended(st, pod, table, np.asarray(rows))
        if st is None or not st.claims:
            return Verdicts.passing(n)
        rows = np.asarray(rows)
        codes = np.zeros(n, dtype=np.int8)
        reasons = np.zeros(n, dtype=np.int32)
        passing: Any = range(n)
        if st.allocator is not None and st.plan is not None:
            failures: dict[int, str] = {}
            try:
                ok, found = self._summaries().allocate_rows(st.allocator, table, rows, st.to_allocate, st.spec_id,
                                                            st.plan, failures)
            except AllocatorError as e:
                raise PluginError(NAME, str(e), e.row) from None
            st.results.update(found)
            codes[~ok], reasons[~ok] = Code.UNRESOLVABLE, _CANNOT_ALLOCATE_ID
            for k, text in failures.items():
                reasons[k] = reason_id(text)
            passing = ok.nonzero()[0].tolist()
        self._check_selectors(st, table, rows, passing, codes, reasons)
        return Verdicts(codes, reasons, bool(codes.any()))

    @staticmethod
    def _check_selectors(st: DraCycle, table: Any, rows: np.ndarray, passing: Any, codes: np.ndarray,
                         reasons: np.ndarray) -> None:
        """Claims allocated already: the node must be one their allocation can be used on
        (recorded for PostFilter only where allocation succeeded, as upstream)."""
        if not st.selectors:
            return
        for k in passing:
            node = table.nodes[int(rows[k])]
            unavailable = [i for i, sel in st.selectors.items() if not sel.matches(node.name, node.labels)]
            if unavailable:
                for i in unavailable:
                    st.unavailable.setdefault(i)
                codes[k], reasons[k] = Code.UNRESOLVABLE, _NOT_AVAILABLE_ID

    def _filter_extended(self, st: DraCycle, pod: Pod, table: Any, rows: np.ndarray) -> Verdicts:
        """Filter for a pod with the special claim: each node's variant
        (filterExtendedResources), then the allocator per variant on the nodes of that variant,
        with the pod's own claims and the special claim built for it."""
        n = len(rows)
        codes = np.zeros(n, dtype=np.int8)
        reasons = np.zeros(n, dtype=np.int32)
        names = sorted(r for r in pod.requests if r in st.mapping or "/" in r)
        seen: dict[tuple[int | None, ...], ext.NodeVariant] = {}
        groups: dict[ext.NodeVariant, list[int]] = {}
        for k in range(n):
            alloc = table.nodes[int(rows[k])].allocatable
            key = tuple(alloc.get(r) for r in names)
            v = seen.get(key)
            if v is None:
                v = seen[key] = ext.filter_extended_resources(pod, st.mapping, alloc, bool(st.claims))
            groups.setdefault(v, []).append(k)
        passing: list[int] = []
        summaries = self._summaries()
        for v, ks in groups.items():
            if v == ext.FAIL:
                codes[ks], reasons[ks] = Code.UNRESOLVABLE, _CANNOT_FIT_ID
                continue
            if v == ext.PASS:
                for k in ks:
                    st.node_variant[table.nodes[int(rows[k])].name] = v
                continue
            assert st.allocator is not None and isinstance(v, tuple)
            claims, spec_id, plan = self._variant(st, pod, v)
            sub = rows[ks]
            try:
                ok, found = summaries.allocate_rows(st.allocator, table, sub, claims, spec_id, plan)
            except AllocatorError as e:
                raise PluginError(NAME, str(e), e.row) from None
            special = claims[-1]
            for node_name, results in found.items():
                st.results[node_name] = results[:-1]
                st.special_results[node_name] = (special, results[-1])
            for j, k in enumerate(ks):
                if ok[j]:
                    passing.append(k)
                    st.node_variant[table.nodes[int(rows[k])].name] = v
                else:
                    codes[k], reasons[k] = Code.UNRESOLVABLE, _CANNOT_ALLOCATE_ID
        self._check_selectors(st, table, rows, sorted(passing), codes, reasons)
        return Verdicts(codes, reasons, bool(codes.any()))

    def _variant(self, st: DraCycle, pod: Pod, v: tuple[str, ...]) -> tuple[list[ResourceClaim], int, np.ndarray]:
        """The claims to allocate on nodes of variant ``v``, their spec id and the allocator's
        verdicts per node id (built once per cycle and variant)."""
        found = st.variants.get(v)
        if found is None:
            assert st.allocator is not None
            requests, _ = ext.create_requests(pod, v, st.mapping)
            claims = [*st.to_allocate, ext.in_memory_claim(pod, requests)]
            summaries = self._summaries()
            spec_id = summaries.spec_id(claims)
            found = st.variants[v] = (claims, spec_id, summaries.plan(st.allocator, claims, spec_id))
        return found

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Any) -> tuple[None, Status]:
        result, status = self._post_filter(state, pod)
        return result, self._post_filter_status(status)

    def _post_filter(self, state: CycleState, pod: Pod) -> tuple[None, Status]:
        st: DraCycle | None = state.read(_STATE)
        if st is None:
            # an earlier PreFilter plugin stopped the cycle before this one wrote its state
            return None, Status(Code.ERROR, ("not found",), NAME)
        if not st.claims and st.special is None:
            return None, Status(Code.UNSCHEDULABLE, ("no new claims to deallocate",), NAME)
        for i in self._deallocation_order(list(st.unavailable)):
            claim = self.dra.claims.get(st.claims[i].key)
            if claim is None or claim.allocation is None:
                continue
            if not claim.reserved_for or (len(claim.reserved_for) == 1 and claim.reserved_for[0].uid == pod.uid):
                self.dra.write(dataclasses.replace(claim, reserved_for=(), allocation=None))
                return None, Status(Code.UNSCHEDULABLE, ("deallocation of ResourceClaim completed",), NAME)
        return None, Status(Code.UNSCHEDULABLE, ("still not schedulable",), NAME)

    def _deallocation_order(self, indices: list[int]) -> list[int]:
        """The order PostFilter tries the unavailable claims in. Upstream ranges over a Go map
        (sets.Set[int]) on purpose, to pick one at random. With Go 1.24's maps (kube-scheduler
        1.34 is built with it), a set of at most 8 entries sits in one group of 8 slots in insertion
        order, and iteration starts at a random slot and wraps around: a start past the last entry
        begins with the first. The run's seeded generator draws that slot; a bigger set starts at a
        random entry. One claim needs no draw."""
        n = len(indices)
        if n <= 1:
            return indices
        start = int(self.handle.rng.integers(_GO_MAP_GROUP_SLOTS if n <= _GO_MAP_GROUP_SLOTS else n))
        if start >= n:
            start = 0
        return indices[start:] + indices[:start]

    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        st: DraCycle | None = state.read(_STATE)
        if st is not None and st.special is not None:
            return self._reserve_extended(st, pod, node)
        if st is None or not st.to_allocate:
            return OK
        results = st.results.get(node)
        if results is None and st.allocator is not None:
            # a node Filter passed on the allocator's earlier decision for the same claim specs
            results = self._summaries().decided(st.allocator, node, st.spec_id)
        if results is None:
            return Status(Code.ERROR, ("claim allocation not found for node",), NAME)
        for claim, alloc in zip(st.to_allocate, results, strict=True):
            self._set_in_flight(claim, alloc)
        return OK

    def _set_in_flight(self, claim: ResourceClaim, alloc: Allocation) -> None:
        """Reserve's in-flight allocation of ``claim``: with the delete-protection finalizer, and
        each share of a device allowing multiple allocations given its share ID."""
        finalizers = claim.finalizers if DELETE_PROTECTION in claim.finalizers else \
            claim.finalizers + (DELETE_PROTECTION,)
        if any(r.share_id == NEW_SHARE for r in alloc.results):
            alloc = dataclasses.replace(alloc, results=tuple(
                dataclasses.replace(r, share_id=self.dra.new_share_id()) if r.share_id == NEW_SHARE else r
                for r in alloc.results))
        self.dra.set_in_flight(dataclasses.replace(claim, allocation=alloc, finalizers=finalizers))

    def _reserve_extended(self, st: DraCycle, pod: Pod, node: str) -> Status:
        """Reserve with the special claim: nothing on a node where the device plugin serves every
        extended resource and the pod has no claims; else every claim to allocate (the special
        one last) goes in flight with its allocation."""
        v = st.node_variant.get(node)
        if v == ext.PASS:
            return OK
        results = st.results.get(node)
        special = st.special_results.get(node)
        if (results is None or special is None) and st.allocator is not None and isinstance(v, tuple):
            claims, spec_id, _ = self._variant(st, pod, v)
            decided = self._summaries().decided(st.allocator, node, spec_id)
            if decided is not None:
                results, special = decided[:-1], (claims[-1], decided[-1])
        if results is None or special is None:
            return Status(Code.ERROR, ("claim allocation not found for node",), NAME)
        for claim, alloc in [*zip(st.to_allocate, results, strict=True), special]:
            self._set_in_flight(claim, alloc)
        st.special_results[node] = special
        return OK

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        st: DraCycle | None = state.read(_STATE)
        if st is None:
            return
        if st.special is not None:
            self.dra.pop_in_flight(st.special.uid)
        for claim in st.claims:
            self.dra.pop_in_flight(claim.uid)
            current = self.dra.claims.get(claim.key)
            if current is not None and current.allocation is not None and \
                    any(r.uid == pod.uid for r in current.reserved_for):
                self.dra.write(dataclasses.replace(
                    current, reserved_for=tuple(r for r in current.reserved_for if r.uid != pod.uid)))

    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        st: DraCycle | None = state.read(_STATE)
        if st is None or not st.claims:
            return OK
        dra = self.dra
        for claim in st.claims:
            current = dra.claims.get(claim.key, claim)
            if any(r.uid == pod.uid for r in current.reserved_for):
                continue
            allocated = dra.in_flight.get(claim.uid)
            if allocated is not None:
                current = dataclasses.replace(current, allocation=allocated.allocation,
                                              finalizers=allocated.finalizers)
            dra.write(dataclasses.replace(current, reserved_for=current.reserved_for + (consumer(pod),)))
            # written before the in-flight entry goes, so that the devices never look free between
            dra.pop_in_flight(claim.uid)
        if st.special is not None:
            self._bind_extended_claim(st, pod, node)
        return OK

    def _bind_extended_claim(self, st: DraCycle, pod: Pod, node: str) -> None:
        """bindClaim for the special claim: created with its allocation and the pod's reservation,
        unless the node's device plugin serves everything (and the pod has no claims). A special
        claim that no container maps to a request (the pod's own claims on a node whose device
        plugin serves every extended resource) makes kube-scheduler's PreBind fail, on every retry
        ("nil or empty request mappings"): kplan does not model binding failures and says so."""
        v = st.node_variant.get(node)
        assert st.special is not None
        if v == ext.PASS or not isinstance(v, tuple):
            return
        dra = self.dra
        allocated = dra.in_flight.get(st.special.uid)
        _, mapped = ext.create_requests(pod, v, st.mapping)
        if not mapped:
            dra.pop_in_flight(st.special.uid)
            raise UnsupportedError(
                f'pod {pod.key}: kube-scheduler\'s PreBind fails on node {node} ("nil or empty request mappings, no '
                f'update of pod {pod.key} ExtendedResourceClaimStatus"): the pod has ResourceClaims and the node\'s '
                "device plugin serves every extended resource that a DeviceClass also serves, so the scheduler's "
                "own claim for them is empty; kplan does not model binding failures")
        claim = st.special_results[node][0]
        name = ext.generated_name(pod)
        dra.write(dataclasses.replace(
            claim, name=name, uid=f"{pod.namespace}/{name}", reserved_for=(consumer(pod),),
            allocation=allocated.allocation if allocated is not None else None, finalizers=(DELETE_PROTECTION,)))
        dra.pop_in_flight(st.special.uid)

    def explain_rejection(self, pod: Pod, table: Any, row: int) -> str:
        """kplan's own account (plugins/dra/diagnose.py): which claim and request fail on the node, and why."""
        from kplan.plugins.dra.diagnose import diagnose

        node = table.nodes[row]
        try:
            parts = [str(p) for p in diagnose(self.dra, pod, node.name, node.labels)]
        except ClaimLookupError:
            parts = []
        return "; ".join(parts + self._explain_extended(pod, node))

    def _explain_extended(self, pod: Pod, node: Any) -> list[str]:
        """The extended resources DRA serves the pod on the node: what each needs of its class there
        (the node's devices in all: which of them are in use depends on the attempt explained)."""
        if not self._extended or not pod.device_requests:
            return []
        mapping = ext.extended_mapping(self.dra)
        variant = ext.filter_extended_resources(pod, mapping, node.allocatable, bool(pod.resource_claims))
        if variant == ext.FAIL:
            missing = sorted(r for r, q in pod.requests.items()
                             if q and "/" in r and r not in mapping and r not in node.allocatable)
            return [f"no DeviceClass serves {', '.join(missing)} and the node does not advertise it"]
        if not isinstance(variant, tuple):
            return []
        out = []
        for r in variant:
            cls = mapping[r]
            capacity, _ = ext.dra_resource_totals(self.dra, node.name, node.labels, cls)
            out.append(f"{r}: {pod.requests[r]} device(s) of DeviceClass {cls.name} wanted, of {capacity} on the node "
                       "in all")
        return out

    def scores_nothing(self, state: CycleState, pod: Pod) -> bool:
        """Score gives every node 0, and so does NormalizeScore (IdleScore): no claim to weigh."""
        st: DraCycle | None = state.read(_STATE)
        return st is None or not st.claims or st.allocator is None

    def score(self, state: CycleState, pod: Pod, table: Any, rows: np.ndarray) -> np.ndarray:
        """From 1.35 (#134711): how early in each ``firstAvailable`` list the devices allocated on
        the node are: per claim and request, 8 minus the index of the allocated subrequest. The
        claims are paired with the node's allocation results as the release's computeScore pairs
        them (``allocations_by_position``, ``allocations_own_first``)."""
        st: DraCycle | None = state.read(_STATE)
        out = np.zeros(len(rows), dtype=np.int64)
        if st is None or not st.claims or st.allocator is None:
            return out
        for k, row in enumerate(np.asarray(rows)):
            name = table.names[int(row)]
            results = st.results.get(name)
            if results is None:
                results = self._summaries().decided(st.allocator, name, st.spec_id)
            if results is None:
                continue
            total = 0
            for claim, allocation in zip(st.claims, self._allocations(st.claims, results), strict=True):
                allocated = {r.request for r in allocation.results if "/" in r.request}
                for req in claim.spec.requests:
                    if req.exactly is not None:
                        continue
                    for j, sub in enumerate(req.first_available):
                        if f"{req.name}/{sub.name}" in allocated:
                            total += _FIRST_AVAILABLE_MAX - j
            out[k] = total
        return out

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return default_normalize(scores, False)

    def events_to_register(self) -> list[tuple[str, Any]]:
        return [
            (NODE_ADD, None), (NODE_UPDATE_LABEL, None), (NODE_UPDATE_ALLOCATABLE, None),
            (CLAIM_ADD, self._after_claim_change), (CLAIM_UPDATE, self._after_claim_change),
        ]

    def _after_claim_change(self, pod: Pod, event: ClusterEvent) -> bool:
        """isSchedulableAfterClaimChange (scheduler-reference-dra.md 1.9)."""
        old, new = event.obj
        try:
            claims = self.dra.lookup(pod)
        except ClaimLookupError:
            return False
        if old is not None and old.allocation is not None and new.allocation is None:
            return True
        if not any(c.uid == new.uid for c in claims):
            return False
        if old is None:
            return True
        # only the status counts: a change of finalizers, labels or deletion time is QueueSkip
        return not (old.allocation == new.allocation and old.reserved_for == new.reserved_for)


#: resourceapi.FirstAvailableDeviceRequestMaxSize: a claim's score for its first subrequest
_FIRST_AVAILABLE_MAX = 8


class ScoreError(PluginError):
    """A Score plugin's Error status: RunScorePlugins aborts the attempt (error backoff)."""

    def __init__(self, plugin: str, text: str) -> None:
        Exception.__init__(self, f'running Score plugins: plugin "{plugin}" failed with: {text}')
        self.plugin = plugin


def _quiet_post_filter(status: Status) -> Status:
    """From 1.37 (v1.37.2 dynamicresources.go): PostFilter's "no new claims to deallocate" and
    "still not schedulable" carry no reason."""
    if status.reasons in (("no new claims to deallocate",), ("still not schedulable",)):
        return Status(status.code, (), NAME)
    return status


def _as_it_is(status: Status) -> Status:
    """Before 1.37: PostFilter's status as it is."""
    return status


def allocations_by_position(claims: list[ResourceClaim], results: Sequence[Allocation]) -> list[Allocation]:
    """Each claim's allocation as v1.35.4's computeScore pairs them: by position among all the
    pod's claims, though only the claims to allocate have results; a pod with an allocated claim
    and one to allocate gets the error upstream gives when the positions run out."""
    if len(claims) > len(results):
        raise ScoreError(NAME, f"number of allocations {len(results)} is smaller than number of claims")
    return list(results[:len(claims)])


def allocations_own_first(claims: list[ResourceClaim], results: Sequence[Allocation]) -> list[Allocation]:
    """Each claim's allocation as v1.36.3's and v1.37.2's computeScore pair them: a claim already
    allocated by its own status allocation, the node's allocation results in order for the claims
    to allocate."""
    out: list[Allocation] = []
    unallocated = 0
    for claim in claims:
        if claim.allocation is not None:
            out.append(claim.allocation)
            continue
        if unallocated >= len(results):
            raise ScoreError(NAME, f"number of allocations {len(results)} is smaller than number of claims "
                                   "needing allocation")
        out.append(results[unallocated])
        unallocated += 1
    return out
