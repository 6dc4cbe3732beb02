"""NodeResourcesFit (plugins/noderesources/fit.go and the scorers beside it, v1.34.1).

Filter (reference 3.3): "Too many pods" (never unresolvable), then cpu, memory,
ephemeral-storage and scalar resources; each insufficient resource adds "Insufficient <name>",
UnschedulableAndUnresolvable when the request exceeds the node's whole allocatable.
Score (reference 4.1): LeastAllocated (default), MostAllocated or RequestedToCapacityRatio over the
configured resources, using the non-zero requests for cpu/memory and ignoring pod-level resources
for the incoming pod, as v1.34.1 does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.cluster.resources import CPU, EPHEMERAL, MEMORY, gather
from kplan.framework import signers
from kplan.framework.compiled import LEAST_ALLOCATED, MOST_ALLOCATED, FitFilter, FitScore
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import (
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_SCALE_DOWN,
    NODE_ADD,
    NODE_UPDATE_ALLOCATABLE,
    ClusterEvent,
)
from kplan.framework.features import Gate
from kplan.framework.interfaces import (
    MAX_NODE_SCORE,
    BatchReprieveFilter,
    EnqueueExtensions,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
)
from kplan.framework.registry import ArgsError
from kplan.framework.release import Release
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id
from kplan.model.objects import Node, Pod
from kplan.model.parse import is_scalar_resource
from kplan.plugins.dra.extended import device_totals, extended_mapping
from kplan.plugins.helper import (
    PluginBase,
    ShapePoint,
    broken_linear,
    decode_rules,
    decode_shape,
    go_round,
    shape_problems,
)
from kplan.plugins.noderesources.cpu_memory import CpuMemoryLoad, cpu_memory_allocatable

NAME = "NodeResourcesFit"
LEAST, MOST, RTCR = "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"
TOO_MANY_PODS = "Too many pods"
#: 2**k: the bit of a pattern that says the (k-1)-th checked resource is short (bit 0: too many pods)
_BIT_VALUES = np.int64(1) << np.arange(63, dtype=np.int64)
MAX_UTILIZATION = 100
_PRE_FILTER_KEY = "PreFilterNodeResourcesFit"
#: Filter tells its verdicts by flag patterns (FlagPatterns) for up to this many checked resources
_FLAGGED_RESOURCES = 3
#: distinct checked lists whose FlagPatterns are kept before starting afresh
_PATTERNS_KEPT = 4096


def fit_reasons(bits: int, names: Sequence[str]) -> list[str]:
    """Filter's reasons for one pattern of bits (bit 0: too many pods; bit j+1: the j-th of
    ``names`` is short), in fitsRequest's order."""
    return ([TOO_MANY_PODS] if bits & 1 else []) + [
        f"Insufficient {name}" for j, name in enumerate(names) if bits >> (j + 1) & 1]


class FlagPatterns:
    """Filter's verdict per node for one tuple of checked resources, told by one pattern of
    flags per node: bit 0 too many pods, bit j+1 the j-th resource short, bit k+1+j its request
    above the node's whole allocatable (k resources). Each pattern's code and reason id is
    worked out once, when it first appears, from fitsRequest's rules as filter_with_load's
    general path applies them: "Too many pods" then "Insufficient <name>" in order, Unschedulable
    where any flag of the first k+1 is set, UnschedulableAndUnresolvable where a resource is
    both short and above the node's allocatable. A node's verdict is then two lookups."""

    __slots__ = ("names", "wanted", "weights", "codes", "reasons")

    def __init__(self, checked: list[tuple[str, int]]) -> None:
        k = len(checked)
        assert k <= _FLAGGED_RESOURCES  # 2k+1 bits in a uint8
        self.names = tuple(name for name, _ in checked)
        self.wanted = np.array([q for _, q in checked], dtype=np.int64)[:, None]
        self.weights = (1 << np.arange(2 * k + 1)).astype(np.uint8)
        self.codes = np.zeros(1 << (2 * k + 1), dtype=np.int8)
        #: -1: the pattern has not appeared yet
        self.reasons = np.full(1 << (2 * k + 1), -1, dtype=np.int32)

    def verdicts(self, count: np.ndarray, allowed: np.ndarray, alloc: np.ndarray, requested: np.ndarray) -> Verdicts:
        """The verdicts of nodes with ``count`` pods of ``allowed`` and, per checked resource,
        ``alloc`` allocatable of which ``requested`` is taken (resources × nodes; ``requested``
        is overwritten)."""
        k = len(self.names)
        n = count.shape[0]
        flags = np.empty((2 * k + 1, n), dtype=bool)
        np.greater_equal(count, allowed, out=flags[0])
        np.subtract(alloc, requested, out=requested)
        np.greater(self.wanted, requested, out=flags[1:k + 1])
        if not np.count_nonzero(flags[:k + 1]):
            return Verdicts.passing(n)  # the usual outcome: every node fits
        np.greater(self.wanted, alloc, out=flags[k + 1:])
        bits = self.weights @ flags.view(np.uint8)
        reasons = self.reasons.take(bits)
        if np.minimum.reduce(reasons) < 0:
            self._learn(bits[reasons < 0])
            reasons = self.reasons.take(bits)
        return Verdicts(self.codes.take(bits), reasons)

    def _learn(self, new: np.ndarray) -> None:
        """Code and reason id of each pattern of ``new``; reasons are interned in the order of
        their first k+1 bits, as the general path interns them."""
        k = len(self.names)
        low = (1 << (k + 1)) - 1
        for b in sorted(set(new.tolist()), key=lambda b: (b & low, b)):
            short = [b >> (j + 1) & 1 for j in range(k)]
            over = [b >> (k + 1 + j) & 1 for j in range(k)]
            if any(s and o for s, o in zip(short, over, strict=True)):
                self.codes[b] = Code.UNRESOLVABLE
            elif b & low:
                self.codes[b] = Code.UNSCHEDULABLE
            if not b & low:
                self.reasons[b] = 0
                continue
            self.reasons[b] = reason_id(*fit_reasons(b, self.names))


@dataclass(frozen=True)
class ResourceSpec:
    name: str
    weight: int


@dataclass
class FitArgs:
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    strategy: str = LEAST
    resources: tuple[ResourceSpec, ...] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    shape: tuple[ShapePoint, ...] | None = None


DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def _check_fields(m: Mapping[str, Any], known: set[str], prefix: str) -> None:
    for k in m:
        if k not in known:
            raise ArgsError(f'unknown field "{prefix}{k}"')


def _ints(v: Any, path: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ArgsError(f"{path}: expected an integer, got {v!r}")
    return int(v)


def decode_resource_specs(v: Any, path: str) -> tuple[ResourceSpec, ...]:
    out = []
    for i, r in enumerate(v or []):
        if not isinstance(r, Mapping):
            raise ArgsError(f"{path}[{i}]: expected an object")
        _check_fields(r, {"name", "weight"}, f"{path}[{i}].")
        out.append(ResourceSpec(str(r.get("name") or ""), _ints(r.get("weight") or 0, f"{path}[{i}].weight")))
    return tuple(out)


def decode_args(raw: Mapping[str, Any] | None) -> FitArgs:
    raw = raw or {}
    _check_fields(raw, {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"}, "")
    args = FitArgs(tuple(str(x) for x in raw.get("ignoredResources") or ()),
                   tuple(str(x) for x in raw.get("ignoredResourceGroups") or ()))
    ss = raw.get("scoringStrategy")
    if ss is None:
        return args
    if not isinstance(ss, Mapping):
        raise ArgsError("scoringStrategy: expected an object")
    _check_fields(ss, {"type", "resources", "requestedToCapacityRatio"}, "scoringStrategy.")
    # the type is not defaulted once scoringStrategy is present (reference 1.5.5)
    args.strategy = str(ss.get("type") or "")
    resources = decode_resource_specs(ss.get("resources"), "scoringStrategy.resources") or DEFAULT_RESOURCES
    args.resources = tuple(ResourceSpec(r.name, r.weight or 1) for r in resources)
    rtcr = ss.get("requestedToCapacityRatio")
    if rtcr is not None:
        if not isinstance(rtcr, Mapping):
            raise ArgsError("scoringStrategy.requestedToCapacityRatio: expected an object")
        _check_fields(rtcr, {"shape"}, "scoringStrategy.requestedToCapacityRatio.")
        args.shape = decode_shape(rtcr.get("shape"), "scoringStrategy.requestedToCapacityRatio.shape")
    return args


def validate_args(args: FitArgs | None) -> list[str]:
    """validation_pluginargs.go ValidateNodeResourcesFitArgs (run when the plugin is built)."""
    if args is None:
        return []
    errs: list[str] = []
    for i, g in enumerate(args.ignored_resource_groups):
        if "/" in g:
            errs.append(f'ignoredResourceGroups[{i}]: Invalid value: "{g}": resource group name can\'t contain \'/\'')
    if args.strategy not in (LEAST, MOST, RTCR):
        errs.append(f'scoringStrategy.type: Unsupported value: "{args.strategy}": supported values: '
                    '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"')
    for i, r in enumerate(args.resources):
        if not 1 <= r.weight <= 100:
            errs.append(f"scoringStrategy.resources[{i}].weight: Invalid value: {r.weight}: "
                        f"resource weight of {r.name} not in valid range (0, 100]")
    if args.shape is not None:
        errs += shape_problems(args.shape, "scoringStrategy.shape")
    elif args.strategy == RTCR:
        # v1.34.1 panics here; later releases report this (kubernetes/kubernetes#132120)
        errs.append("scoringStrategy.requestedToCapacityRatio: Required value: "
                    "must be specified when type is RequestedToCapacityRatio")
    return errs


def is_extended_resource(name: str) -> bool:
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


@dataclass(frozen=True)
class FitRules:
    """NodeResourcesFit's release rules (framework/release_tables.py)."""

    #: from 1.36, with DRAExtendedResource on (KEP-5004, #134058): an extended resource a
    #: DeviceClass serves (its extendedResourceName or implicit
    #: ``deviceclass.resource.kubernetes.io/<class>``) is left to DynamicResources on every node
    #: whose allocatable does not have it above 0 (shouldDelegateResourceToDRA), in Filter and in
    #: preemption's dry run; Score counts it from the node's devices; SignPod refuses only a pod
    #: that requests such a resource, where 1.35 refused every pod
    extended_resources_from_devices: bool


def no_mapping() -> Mapping[str, Any]:
    """No extended resource is left to DRA (before 1.36, or DRAExtendedResource off)."""
    return {}


#: a plugin's SignPod
Signer = Callable[[Pod], tuple[signers.Fragment, ...] | None]


def sign_pod_rule(from_devices: bool, release: Release, mapping: Callable[[], Mapping[str, Any]]) -> Signer:
    """SignPod of NodeResourcesFit and NodeResourcesBalancedAllocation at ``release``, chosen
    once: with the rule ``extended_resources_from_devices`` (1.36, #134058), refuse a pod that
    requests a resource of ``mapping()`` (empty but with DRAExtendedResource on); before it,
    refuse every pod while DRAExtendedResource is on (1.35); else sign the pod's requests."""
    if from_devices:
        return _sign_requests if mapping is no_mapping else functools.partial(_sign_unless_served, mapping)
    if release.gates.get(Gate.DRA_EXTENDED_RESOURCE) and release.enabled(Gate.DRA_EXTENDED_RESOURCE):
        return _refuse
    return _sign_requests


def _sign_requests(pod: Pod) -> tuple[signers.Fragment, ...] | None:
    return ((signers.RESOURCES, signers.requests(pod)),)


def _refuse(pod: Pod) -> tuple[signers.Fragment, ...] | None:
    return None  # signature disabled when DRA extended resources are enabled


def _sign_unless_served(mapping: Callable[[], Mapping[str, Any]], pod: Pod) -> tuple[signers.Fragment, ...] | None:
    served = mapping()
    if any(q and name in served for name, q in pod.requests.items()):
        return None  # signature disabled when DRA extended resources are used in the cluster
    return ((signers.RESOURCES, signers.requests(pod)),)


class NodeResourcesFit(PluginBase, PreFilterPlugin, BatchReprieveFilter, PreScorePlugin,
                       ScorePlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py), as the release's rule has it
        (picked in the constructor, ``sign_pod_rule``)."""
        return self._sign(pod)

    def _served_mapping(self) -> Mapping[str, Any]:
        """The extended resources DeviceClasses serve (the release leaves them to DRA)."""
        dra = self.handle.snapshot.dra
        if dra is None or not dra.classes:
            return {}
        return extended_mapping(dra)

    def __init__(self, args: FitArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        self.rules = decode_rules(FitRules, handle, NAME)
        delegates = self.rules.extended_resources_from_devices and handle.release.enabled(
            Gate.DRA_EXTENDED_RESOURCE)
        #: the extended resources DeviceClasses serve, where the release leaves them to DRA
        #: (from 1.36 with DRAExtendedResource on); else none
        self._mapping: Callable[[], Mapping[str, Any]] = self._served_mapping if delegates else no_mapping
        #: SignPod's rule at this release
        self._sign = sign_pod_rule(self.rules.extended_resources_from_devices, handle.release, self._mapping)
        self.ignored = set(args.ignored_resources)
        self.ignored_groups = set(args.ignored_resource_groups)
        #: the default scoring: LeastAllocated over cpu then memory (_least_allocated_cpu_memory)
        self._least_cpu_memory = (args.strategy == LEAST
                                  and tuple(r.name for r in args.resources) == ("cpu", "memory"))
        weights = [r.weight for r in args.resources]
        self._unit_weights = weights == [1, 1]
        self._weights = np.array(weights, dtype=np.int64)[:, None]
        self._weight_sum = sum(weights)
        #: the nodes' non-zero cpu and memory with the pod's added, for the default scoring
        self._score_load = CpuMemoryLoad()
        #: per tuple of checked resource names, the reason id of each pattern of Filter's bits
        #: (-1: not met yet); ids are interned as patterns first appear, as one call at a time would
        self._reason_of: dict[tuple[str, ...], np.ndarray] = {}
        #: per checked (resource, request) list of up to _FLAGGED_RESOURCES, its FlagPatterns
        self._patterns: dict[tuple[tuple[str, int], ...], FlagPatterns] = {}

    # -------------------------------------------------------------------------- filter

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        # computePodResourceRequest, once per cycle
        state.write(_PRE_FILTER_KEY, self.checked_resources(pod))
        return None, OK

    def checked_of(self, state: CycleState, pod: Pod) -> list[tuple[str, int]]:
        """The checked resources PreFilter wrote for the cycle, else the pod's own (a state that
        did not run PreFilter: preemption's and the hints' checks)."""
        checked: list[tuple[str, int]] | None = state.read(_PRE_FILTER_KEY)
        return checked if checked is not None else self.checked_resources(pod)

    def checked_resources(self, pod: Pod) -> list[tuple[str, int]]:
        """The (resource, request) pairs fitsRequest compares, in its order."""
        req = pod.requests
        out = [(n, req.get(n, 0)) for n in ("cpu", "memory", "ephemeral-storage") if req.get(n, 0) > 0]
        for name in sorted(k for k in req if k not in ("cpu", "memory", "ephemeral-storage")):
            q = req[name]
            if q == 0:
                continue
            if is_extended_resource(name) and (name in self.ignored or name.split("/")[0] in self.ignored_groups):
                continue
            out.append((name, q))
        return out

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        return self.filter_with_load(state, pod, table, rows, None, None)

    def compiled_filter(self, state: CycleState, pod: Pod, table: NodeTable) -> FitFilter | None:
        """Filter's inputs for the compiled cycle (kplan/scheduler/compiled.py): the checked
        resources' columns (added to the table where no node has one, as filter_with_load adds
        them) and requests; None where a checked resource is left to DynamicResources."""
        checked = self.checked_of(state, pod)
        mapping = self._mapping()
        if any(name in mapping for name, _ in checked):
            return None
        return FitFilter([table.column(name) for name, _ in checked], [q for _, q in checked])

    def filter_with_load(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                         pods: np.ndarray | None, requests: Mapping[str, np.ndarray] | None) -> Verdicts:
        """Filter as if ``pods[k]`` more pods requesting ``requests[name][k]`` in all were on the
        node of ``rows[k]`` (negative: fewer): the verdicts Filter gives on a fork of those nodes
        with such pods added or removed."""
        n = len(rows)
        count = table.pod_count.take(rows)
        if pods is not None:
            count = count + pods
        checked = self.checked_of(state, pod)
        if not checked:
            too_many = count >= table.allowed_pods.take(rows)
            if not too_many.any():
                return Verdicts.passing(n)
            return Verdicts.where(too_many, Code.UNSCHEDULABLE, reason_id(TOO_MANY_PODS))
        cols = [table.column(name) for name, _ in checked]
        alloc = gather(table.alloc_t, cols, rows)                  # resources × nodes
        requested = gather(table.requested_t, cols, rows)
        if requests:
            for k, (name, _) in enumerate(checked):
                more = requests.get(name)
                if more is not None:
                    requested[k] += more
        delegated = self.delegated(checked, alloc)
        if delegated is None and len(checked) <= _FLAGGED_RESOURCES:
            key = tuple(checked)
            patterns = self._patterns.get(key)
            if patterns is None:
                if len(self._patterns) >= _PATTERNS_KEPT:
                    self._patterns.clear()
                patterns = self._patterns[key] = FlagPatterns(checked)
            return patterns.verdicts(count, table.allowed_pods.take(rows), alloc, requested)
        too_many = count >= table.allowed_pods.take(rows)
        wanted = np.array([q for _, q in checked], dtype=np.int64)[:, None]
        short = wanted > alloc - requested
        if delegated is not None:
            short &= ~delegated
        if not short.any() and not too_many.any():
            return Verdicts.passing(n)  # the usual outcome: every node fits
        # bit 0: too many pods; bit k+1: the k-th checked resource is short. One reason set per
        # distinct bit pattern, in fitsRequest's order.
        bits = too_many.astype(np.int64) | (_BIT_VALUES[1:len(checked) + 1] @ short)
        codes = (bits != 0).view(np.int8)  # Code.UNSCHEDULABLE is 1
        # a request larger than the node's whole allocatable cannot be fixed by preemption
        codes[(short & (wanted > alloc)).any(axis=0)] = Code.UNRESOLVABLE
        return Verdicts(codes, self._reason_ids(checked, bits))

    def _reason_ids(self, checked: list[tuple[str, int]], bits: np.ndarray) -> np.ndarray:
        """The reason id of each of Filter's bit patterns (bit 0: too many pods; bit k+1: the k-th
        checked resource is short), the reasons in fitsRequest's order."""
        key = tuple(name for name, _ in checked)
        reason_of = self._reason_of.get(key)
        if reason_of is None:
            reason_of = self._reason_of[key] = np.full(1 << (len(checked) + 1), -1, dtype=np.int32)
            reason_of[0] = 0
        ids = reason_of.take(bits)
        if (ids < 0).any():
            for b in np.unique(bits[ids < 0]).tolist():
                reason_of[b] = reason_id(*fit_reasons(b, key))
            ids = reason_of.take(bits)
        return ids

    def reprieve_rows(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray,
                      requests: np.ndarray, counts: np.ndarray, reserved: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """SelectVictimsOnNode's walk for many nodes at once. Row ``k`` of ``rows`` has ``counts[k]``
        lower-priority pods, whose requests (over the table's resource columns) are ``requests[k, :counts[k]]`` in
        the order they are added back; ``reserved[k]`` is what other pods (nominated there) hold on
        top of the node's own, per resource column and, in its last column, in pods. Returns (fits
        with all of them gone per row, victim per row and pod): the pods added back one by one,
        each kept where the pod still fits beside it (Filter's test), one step per pod position
        for every node."""
        checked = self.checked_of(state, pod)
        k_rows, width = requests.shape[0], requests.shape[1]
        cols = [table.column(name) for name, _ in checked]
        wanted = np.array([q for _, q in checked], dtype=np.int64)
        # a column added to the table after the requests were gathered is one no pod here uses
        per_pod = np.zeros((k_rows, width, len(cols)), dtype=np.int64)
        held = np.zeros((k_rows, len(cols)), dtype=np.int64)
        for j, c in enumerate(cols):
            if c < requests.shape[2]:
                per_pod[:, :, j] = requests[:, :, c]
                held[:, j] = reserved[:, c]
        grid = np.ix_(np.array(cols, dtype=np.int64), rows)
        free = (table.alloc_t[grid] - table.requested_t[grid]).T + per_pod.sum(axis=1) - held
        slots = table.allowed_pods.take(rows) - table.pod_count.take(rows) + counts - reserved[:, -1]
        delegated = self.delegated(checked, table.alloc_t[grid])
        skip = np.zeros((k_rows, len(cols)), dtype=bool) if delegated is None else delegated.T
        fits_all = (slots >= 1) & ((wanted <= free) | skip).all(axis=1)
        victim = np.zeros((k_rows, width), dtype=bool)
        for j in range(width):
            present = j < counts
            after = free - per_pod[:, j]
            keep = present & (slots - 1 >= 1) & ((wanted <= after) | skip).all(axis=1)
            free = np.where(keep[:, None], after, free)
            slots = slots - keep
            victim[:, j] = present & ~keep
        return fits_all, victim

    def delegated(self, checked: list[tuple[str, int]], alloc: np.ndarray) -> np.ndarray | None:
        """Per checked resource and node (``alloc`` is their allocatable), whether Filter leaves
        the resource to DynamicResources there (shouldDelegateResourceToDRA); None: nowhere."""
        mapping = self._mapping()
        mapped = [k for k, (name, _) in enumerate(checked) if name in mapping]
        if not mapped:
            return None
        out = np.zeros(alloc.shape, dtype=bool)
        out[mapped] = alloc[mapped] <= 0
        return out

    def scores_from_devices(self, name: str) -> bool:
        """Whether Score may count ``name`` from DRA devices on nodes without it."""
        return name in self._mapping()

    def device_totals(self, names: list[str], table: NodeTable, rows: np.ndarray, alloc: np.ndarray,
                      req: np.ndarray) -> None:
        """Score's allocatable and requested (resources × nodes, the pod not yet added), changed in
        place where DRA devices count instead: calculateResourceAllocatableRequest with DRA
        (#134058): a resource a DeviceClass serves, on a node whose allocatable lacks it (or has 0),
        counts the node's devices of that class as allocatable and those in use as requested; a
        node without such devices leaves it out."""
        mapping = self._mapping()
        dra = self.handle.snapshot.dra
        if mapping and dra is not None:
            device_totals(dra, mapping, names, table, rows, alloc, req)

    # -------------------------------------------------------------------------- score

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        return OK

    def score_request(self, pod: Pod, name: str) -> int:
        """Request D of reference 2.3."""
        if name == "cpu":
            return pod.score_cpu
        if name == "memory":
            return pod.score_mem
        return pod.requests.get(name, 0)

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        args: FitArgs = self.args
        if self._least_cpu_memory:
            alloc, positive = cpu_memory_allocatable(state, table, rows)
            if positive:
                return self._least_allocated_cpu_memory(pod, table, rows, alloc)
        cols: list[int] = []
        names: list[str] = []
        pod_reqs: list[int] = []
        weights: list[int] = []
        from_nonzero: list[bool] = []
        for spec in args.resources:
            pod_req = self.score_request(pod, spec.name)
            if pod_req == 0 and is_scalar_resource(spec.name):
                continue
            if spec.name in ("cpu", "memory"):
                # cpu and memory use the non-zero requests (reference 2.3 C and D)
                col = CPU if spec.name == "cpu" else MEMORY
            else:
                found = EPHEMERAL if spec.name == "ephemeral-storage" else table.res.get(spec.name)
                if found is None:
                    if not self.scores_from_devices(spec.name):
                        continue
                    found = table.column(spec.name)
                col = found
            cols.append(col)
            names.append(spec.name)
            pod_reqs.append(pod_req)
            weights.append(spec.weight)
            from_nonzero.append(spec.name in ("cpu", "memory"))
        n = len(rows)
        if not cols:
            return np.zeros(n, dtype=np.int64)
        # one (resources × nodes) computation instead of one per resource
        alloc = gather(table.alloc_t, cols, rows)
        if all(from_nonzero):
            req = gather(table.nonzero_t, cols, rows)
        else:
            req = np.stack([(table.nonzero_t if nz else table.requested_t)[c].take(rows)
                            for c, nz in zip(cols, from_nonzero, strict=True)])
        self.device_totals(names, table, rows, alloc, req)
        req += np.array(pod_reqs, dtype=np.int64)[:, None]
        w = np.array(weights, dtype=np.int64)[:, None]
        live = alloc != 0
        all_live = bool(live.all())
        if all_live and args.strategy == LEAST:
            # the default and usual case, without the masks a node lacking a resource needs
            s = (alloc - req) * MAX_NODE_SCORE // alloc
            s[req > alloc] = 0
            wsum = int(w.sum())
            return np.asarray((s * w).sum(axis=0) // wsum)
        safe_alloc = np.where(live, alloc, 1)
        if args.strategy == MOST:
            s = np.minimum(req, alloc) * MAX_NODE_SCORE // safe_alloc
        elif args.strategy == RTCR:
            assert args.shape is not None
            util = np.where(req > alloc, MAX_UTILIZATION, req * MAX_UTILIZATION // safe_alloc)
            s = broken_linear(args.shape, util)
            live = live & (s > 0)
        else:
            s = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // safe_alloc)
        total = np.where(live, s * w, 0).sum(axis=0)
        weight_sum = np.where(live, w, 0).sum(axis=0)
        safe = np.where(weight_sum == 0, 1, weight_sum)
        if args.strategy == RTCR:
            out = go_round(total / safe).astype(np.int64)
        else:
            out = total // safe
        return np.where(weight_sum == 0, 0, out)

    def compiled_score(self, pod: Pod, weight: int) -> FitScore | None:
        """Score's inputs for the compiled cycle: LeastAllocated or MostAllocated over cpu and
        memory (the default is LeastAllocated, each weighing 1); None for any other strategy or
        set of resources."""
        args: FitArgs = self.args
        weights = {r.name: r.weight for r in args.resources}
        if args.strategy not in (LEAST, MOST) or len(args.resources) != 2 or set(weights) != {"cpu", "memory"}:
            return None
        return FitScore(LEAST_ALLOCATED if args.strategy == LEAST else MOST_ALLOCATED, weights["cpu"],
                        weights["memory"], pod.score_cpu, pod.score_mem, weight)

    def _least_allocated_cpu_memory(self, pod: Pod, table: NodeTable, rows: np.ndarray,
                                    alloc: np.ndarray) -> np.ndarray:
        """score for the default strategy and resources (LeastAllocated on cpu then memory)
        where every node has both: what the general path computes, with fewer arrays. With
        allocatable positive, ``(alloc - req) * 100 // alloc`` is negative exactly where the
        request exceeds allocatable, so clipping at 0 is the general path's zeroing there."""
        req = self._score_load.with_request(table.nonzero_t, rows, pod.score_cpu, pod.score_mem)
        s = (alloc - req) * MAX_NODE_SCORE // alloc
        np.maximum(s, 0, out=s)
        if self._unit_weights:
            return np.asarray((s[0] + s[1]) // 2)
        return np.asarray((s * self._weights).sum(axis=0) // self._weight_sum)

    # -------------------------------------------------------------------------- hints

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(ASSIGNED_POD_DELETE, _pod_deleted), (ASSIGNED_POD_SCALE_DOWN, _scaled_down),
                (NODE_ADD, self._node_fits), (NODE_UPDATE_ALLOCATABLE, self._node_fits)]

    def _node_fits(self, pod: Pod, event: ClusterEvent) -> bool:
        node = event.node
        if node is None:
            return False
        if 1 > node.allocatable.get("pods", 0):
            return False
        for name, q in self.checked_resources(pod):
            if q > node.allocatable.get(name, 0):
                return False
        old = event.old_node
        return old is None or _grew(old, node, pod)


def _grew(old: Node, new: Node, pod: Pod) -> bool:
    if new.allocatable.get("pods", 0) > old.allocatable.get("pods", 0):
        return True
    return any(new.allocatable.get(n, 0) > old.allocatable.get(n, 0) for n in pod.requests)


def _pod_deleted(pod: Pod, event: ClusterEvent) -> bool:
    return bool(event.node_name or event.nominated_node)


def _scaled_down(pod: Pod, event: ClusterEvent) -> bool:
    return event.pod is pod or bool(event.pod and any(k in pod.requests for k in event.pod.requests))
