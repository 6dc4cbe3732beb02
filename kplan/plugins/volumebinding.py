"""VolumeBinding (plugins/volumebinding/volume_binding.go, binder.go and scorer.go, v1.34.1, v1.37.2).

PreFilter (``podHasPVCs``, ``GetPodVolumeClaims``): Skip for a pod without claims; a claim
that is missing, Lost or being deleted → UnschedulableAndUnresolvable with the lister's error
text (``persistentvolumeclaim "x" not found``, or for a generic ephemeral volume ``waiting for
ephemeral volume controller to create the persistentvolumeclaim "x"``); an unbound claim that
does not wait for its first consumer (or names a volume it is not bound to yet) →
``pod has unbound immediate PersistentVolumeClaims`` (U&U). Claims are read from the assume
cache (cluster/storage.py), the PVs of every waiting claim's class are listed once.

Filter (``FindPodVolumes``), per node, all reasons U&U and in this order:
``node(s) didn't match PersistentVolume's node affinity`` (a bound claim's volume),
``node(s) didn't find available persistent volumes to bind`` (a waiting claim whose selected
node is another one, or for which no volume matches and none can be provisioned here),
``node(s) did not have enough free storage`` (CSIStorageCapacity),
``node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)``.
Static matching is ``FindMatchingVolume`` (smallest fitting volume of the class, access modes,
volume mode, selector, volume attributes class, node affinity; claims in increasing size; a
volume chosen for one claim is not offered to the next); provisioning needs a provisioner, the
node in ``allowedTopologies`` and, for a driver with ``storageCapacity``, a CSIStorageCapacity
of the class that the node can reach with room for the claim.

Reserve (``AssumePodVolumes``) assumes the chosen bindings in the cache; PreBind
(``BindPodVolumes``) writes them: a static volume is claimed and the PV controller completes
the binding; a provisioned claim gets the selected-node annotation and the provisioner creates
its volume (cluster/storage.py). Unreserve reverts the assumptions.

PreScore/Score: Skip while StorageCapacityScoring is off (alpha until 1.36, reference 1.2).
With it on (beta and on from 1.37, KEP-4049; v1.37.2) every node is scored by
``capacity_score``: the utilization of its static bindings' volumes, else of the
CSIStorageCapacity its provisions were checked against, through the args' shape (default
100 at utilization 0 down to 0 at 100: the emptiest pool wins). No NormalizeScore.

Deviations: volumes of a class are listed in name order (upstream: cache order), which decides
between volumes of equal size; in-tree PVs are not translated to CSI (their node affinity is
taken as written).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.cluster.storage import StorageState, check_access_modes, is_volume_bound_to_claim
from kplan.framework import signers
from kplan.framework.cycle_state import CycleState, StateData
from kplan.framework.events import (
    CSI_NODE_ADD,
    NODE_ADD,
    NODE_UPDATE_LABEL,
    PV_ADD,
    PV_UPDATE,
    PVC_ADD,
    PVC_UPDATE,
    STORAGE_CLASS_ADD,
    ClusterEvent,
)
from kplan.framework.features import Gate
from kplan.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    IdleScore,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ReservePlugin,
)
from kplan.framework.registry import ArgsError
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id, skip
from kplan.model.objects import Pod
from kplan.model.selectors import IN, NodeSelector
from kplan.model.storage import (
    ANN_SELECTED_NODE,
    NO_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kplan.plugins.helper import (
    MAX_CUSTOM_PRIORITY_SCORE,
    PluginBase,
    ShapePoint,
    broken_linear,
    decode_shape,
    go_round,
    shape_json,
    shape_problems,
)
from kplan.plugins.nodeaffinity import requirement_mask

NAME = "VolumeBinding"
_STATE = "VolumeBinding/state"

ERR_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass
class VolumeBindingArgs:
    bind_timeout_seconds: int = 600
    #: the capacity-scoring shape (None: not given, and not defaulted with StorageCapacityScoring off)
    shape: tuple[ShapePoint, ...] | None = None


#: SetDefaults_VolumeBindingArgs: the shape given when StorageCapacityScoring is on and none is
DEFAULT_SHAPE = (ShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE), ShapePoint(100, 0))


def decode_args(raw: Mapping[str, Any] | None, *, storage_capacity_scoring: bool = False) -> VolumeBindingArgs:
    """Strict decoding and SetDefaults_VolumeBindingArgs, which fills the shape only when the
    release's StorageCapacityScoring gate is on."""
    raw = raw or {}
    for k in raw:
        if k not in ("bindTimeoutSeconds", "shape"):
            raise ArgsError(f'unknown field "{k}"')
    out = VolumeBindingArgs()
    if raw.get("bindTimeoutSeconds") is not None:
        out.bind_timeout_seconds = int(raw["bindTimeoutSeconds"])
    if raw.get("shape") is not None:
        out.shape = decode_shape(raw["shape"], "shape")
    if not out.shape and storage_capacity_scoring:
        out.shape = DEFAULT_SHAPE
    return out


def validate_args(args: VolumeBindingArgs, *, storage_capacity_scoring: bool = False) -> list[str]:
    """ValidateVolumeBindingArgsWithOptions: ``storage_capacity_scoring`` is its
    AllowStorageCapacityScoring option, the release's StorageCapacityScoring gate."""
    errs: list[str] = []
    if args.bind_timeout_seconds < 0:
        errs.append(f"bindTimeoutSeconds: Invalid value: {args.bind_timeout_seconds}: invalid BindTimeoutSeconds, "
                    "should not be a negative value")
    if storage_capacity_scoring:
        errs += shape_problems(args.shape or (), "shape")
    elif args.shape is not None:
        # the gate is off: a shape is refused so that it takes no effect when the gate turns on
        errs.append(f"shape: Invalid value: {shape_json(args.shape)}: unexpected field `shape`, remove it or turn on "
                    "the feature gate StorageCapacityScoring")
    return errs


def storage_of(handle: Handle) -> StorageState:
    """The snapshot's storage objects (an empty state when the input has none)."""
    storage = handle.snapshot.storage
    if storage is None:
        storage = handle.snapshot.storage = StorageState()
    assert isinstance(storage, StorageState)
    return storage


def not_found(resource: str, name: str) -> str:
    """apierrors.NewNotFound's message, as the listers return it."""
    return f'{resource} "{name}" not found'


def pv_affinity_mask(table: NodeTable, rows: np.ndarray, selector: NodeSelector | None) -> np.ndarray:
    """volume.CheckNodeAffinity for every row: the node is built from its labels only, so a
    matchFields term sees an empty name."""
    if selector is None:
        return np.ones(len(rows), dtype=bool)
    out = np.zeros(len(rows), dtype=bool)
    for term in selector.terms:
        if not term.valid or term.is_empty:
            continue
        mask = np.ones(len(rows), dtype=bool)
        for r in term.match_expressions:
            mask &= requirement_mask(table, rows, r)
        for f in term.match_fields:
            # the nameless node is "" : In ["x"] never holds, NotIn ["x"] always does
            holds = (f.values[0] == "") if f.operator == IN else (f.values[0] != "")
            if not holds:
                mask[:] = False
        out |= mask
    return out


@dataclass
class PodVolumes:
    """What Filter found for one node: static bindings (claim, volume) and claims to provision."""

    static: list[tuple[PersistentVolumeClaim, PersistentVolume]] = field(default_factory=list)
    provision: list[PersistentVolumeClaim] = field(default_factory=list)
    #: per claim to provision, its DynamicProvision.NodeCapacity's capacity (None: no
    #: CSIStorageCapacity was consulted, the driver not tracking capacity or the claim asking none)
    node_capacity: list[int | None] = field(default_factory=list)


class _PassedNodes:
    """node name → PodVolumes of the nodes that passed Filter, each built when first read:
    Filter passes hundreds of nodes per cycle, Reserve and PreBind read one. Later Filter calls
    add to what earlier ones found, as entries of a map would (a node keeps a passing entry)."""

    def __init__(self) -> None:
        #: per Filter call: its table, its rows, which passed, and what it found for them
        self._calls: list[tuple[NodeTable, np.ndarray, np.ndarray, _Unbound | None]] = []
        self._built: dict[str, PodVolumes] = {}

    def add(self, table: NodeTable, rows: np.ndarray, passed: np.ndarray, unbound: _Unbound | None) -> None:
        self._calls.append((table, rows, passed, unbound))
        # an entry read before this call is replaced by this call's, as a map assignment would
        for name in [n for n in self._built if (r := table.row_of.get(n)) is not None
                     and bool(passed[rows == r].any())]:
            del self._built[name]

    def get(self, node: str) -> PodVolumes | None:
        found = self._built.get(node)
        if found is not None:
            return found
        for table, rows, passed, unbound in reversed(self._calls):
            r = table.row_of.get(node)
            if r is None:
                continue
            hits = np.flatnonzero(passed & (rows == r))
            if len(hits):
                k = int(hits[-1])
                found = self._built[node] = unbound.volumes(k) if unbound is not None else PodVolumes()
                return found
        return None

    def __contains__(self, node: object) -> bool:
        return isinstance(node, str) and self.get(node) is not None

    def __getitem__(self, node: str) -> PodVolumes:
        found = self.get(node)
        if found is None:
            raise KeyError(node)
        return found


@dataclass
class _State(StateData):
    bound: list[PersistentVolumeClaim]
    delayed: list[PersistentVolumeClaim]
    #: claim key → the volumes of its class listed at PreFilter (GetPodVolumeClaims) that
    #: FindMatchingVolume can pick for it (StorageState.volumes_for_claim)
    volumes: dict[str, list[PersistentVolume]]
    #: node name → PodVolumes, for the nodes that passed Filter
    by_node: _PassedNodes = field(default_factory=_PassedNodes)
    all_bound: bool = True

    def clone(self) -> _State:
        # stateData.Clone returns the same object: Filter results are shared with forks
        return self


class VolumeBinding(PluginBase, PreFilterPlugin, FilterPlugin, PreScorePlugin,
                    IdleScore, ReservePlugin, PreBindPlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, args: VolumeBindingArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        #: StorageCapacityScoring (New builds a scorer only with the gate on)
        self._capacity_scoring = handle.release.enabled(Gate.STORAGE_CAPACITY_SCORING)

    def sign_pod(self, pod: Pod) -> tuple[signers.Fragment, ...] | None:
        """SignPod (opportunistic batching, framework/signers.py)."""
        return ((signers.VOLUMES, signers.volumes(pod)),)

    # ------------------------------------------------------------------ PreFilter

    def _claims(self, pod: Pod) -> tuple[list[PersistentVolumeClaim] | None, Status]:
        """podHasPVCs then GetPodVolumeClaims' lookups: the pod's claims, or a rejection."""
        st = storage_of(self.handle)
        out = []
        for v in pod.volumes:
            if not v.claim_name:
                continue
            claim = st.pvc(pod.namespace, v.claim_name)
            if claim is None:
                msg = (f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{v.claim_name}"'
                       if v.ephemeral else not_found("persistentvolumeclaim", v.claim_name))
                return None, Status(Code.UNRESOLVABLE, (msg,))
            if claim.phase == "Lost":
                return None, Status(Code.UNRESOLVABLE, (f'persistentvolumeclaim "{claim.name}" bound to non-existent '
                                                        f'persistentvolume "{claim.volume_name}"',))
            if claim.deleting:
                return None, Status(Code.UNRESOLVABLE, (f'persistentvolumeclaim "{claim.name}" is being deleted',))
            if v.ephemeral:
                err = ephemeral_owner_error(pod, claim)
                if err:
                    return None, Status(Code.UNRESOLVABLE, (err,))
            cached = st.cached_pvc(pod.namespace, v.claim_name)
            out.append(cached if cached is not None else claim)
        return out, OK

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        claims, status = self._claims(pod)
        if claims is None:
            return None, status
        if not claims:
            state.write(_STATE, _State([], [], {}))
            return None, skip(NAME)
        st = storage_of(self.handle)
        bound, delayed, immediate = [], [], []
        for c in claims:
            if c.fully_bound:
                bound.append(c)
            elif st.is_delay_binding(c) and not c.volume_name:
                delayed.append(c)
            else:
                immediate.append(c)
        if immediate:
            return None, Status(Code.UNRESOLVABLE, (UNBOUND_IMMEDIATE,))
        volumes = {c.key: st.volumes_for_claim(c) for c in delayed}
        state.write(_STATE, _State(bound, delayed, volumes))
        return None, OK

    # ------------------------------------------------------------------ Filter

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        s: _State = state.read(_STATE)
        st = storage_of(self.handle)
        n = len(rows)
        node_conflict = np.zeros(n, dtype=bool)
        pv_missing = np.zeros(n, dtype=bool)
        # checkBoundClaims: stops at the first claim whose volume is missing or does not fit
        undecided = np.ones(n, dtype=bool)
        for c in s.bound:
            pv = st.cached_pv(c.volume_name)
            if pv is None:
                pv_missing |= undecided
                break
            ok = pv_affinity_mask(table, rows, pv.node_affinity)
            node_conflict |= undecided & ~ok
            undecided &= ok
        unbound = _Unbound(s, st, table, rows) if s.delayed else None
        bind_conflict = unbound.bind_conflict if unbound is not None else np.zeros(n, dtype=bool)
        no_space = unbound.no_space if unbound is not None else np.zeros(n, dtype=bool)
        codes = np.zeros(n, dtype=np.int8)
        reasons = np.zeros(n, dtype=np.int32)
        for k in map(int, np.flatnonzero(node_conflict | pv_missing | bind_conflict | no_space)):
            rs = []
            if node_conflict[k]:
                rs.append(ERR_NODE_CONFLICT)
            if bind_conflict[k]:
                rs.append(ERR_BIND_CONFLICT)
            if no_space[k]:
                rs.append(ERR_NOT_ENOUGH_SPACE)
            if pv_missing[k]:
                rs.append(ERR_PV_NOT_EXIST)
            codes[k] = int(Code.UNRESOLVABLE)
            reasons[k] = np.int32(reason_id(*rs))
        s.by_node.add(table, np.array(rows, copy=True), codes == 0, unbound)
        return Verdicts(codes, reasons)

    # ------------------------------------------------------------------ Score

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        # without StorageCapacityScoring upstream has no scorer and always skips; with it, it scores
        return OK if self._capacity_scoring else skip(NAME)

    def scores_nothing(self, state: CycleState, pod: Pod) -> bool:
        """Score gives every node 0 (IdleScore): no scorer, or no claim to provision."""
        s: _State | None = state.data.get(_STATE)
        return not self._capacity_scoring or s is None or not s.delayed

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows), dtype=np.int64)
        s: _State | None = state.data.get(_STATE)
        if not self._capacity_scoring or s is None or not s.delayed:
            # bound claims make neither static bindings nor provisions: no class to score, 0
            return out
        shape = self.args.shape or DEFAULT_SHAPE
        for i, r in enumerate(map(int, rows)):
            volumes = s.by_node.get(table.names[r])
            if volumes is not None:
                out[i] = capacity_score(volumes, shape)
        return out

    # ------------------------------------------------------------------ Reserve / PreBind

    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        s: _State | None = state.read(_STATE)
        if s is None or node not in s.by_node:
            if s is not None:
                s.all_bound = True
            return OK
        st = storage_of(self.handle)
        if all(c.fully_bound for v in pod.volumes if v.claim_name
               for c in [st.cached_pvc(pod.namespace, v.claim_name)] if c is not None):
            s.all_bound = True
            return OK
        s.all_bound = False
        volumes = s.by_node[node]
        assumed_static = []
        for claim, pv in volumes.static:
            # GetBindVolumeToClaim: the volume claimed by this claim (bound-by-controller)
            ref = _claim_ref(claim)
            if pv.claim_ref != ref:
                ann = dict(pv.annotations)
                if pv.claim_ref is None:
                    ann["pv.kubernetes.io/bound-by-controller"] = "yes"
                pv = dataclasses.replace(pv, claim_ref=ref, annotations=ann)
                st.assume_pv(pv)
            assumed_static.append((claim, pv))
        assumed_claims = []
        for claim in volumes.provision:
            claim = dataclasses.replace(claim, annotations={**claim.annotations, ANN_SELECTED_NODE: node})
            st.assume_pvc(claim)
            assumed_claims.append(claim)
        volumes.static, volumes.provision = assumed_static, assumed_claims
        return OK

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        s: _State | None = state.read(_STATE)
        if s is None or node not in s.by_node:
            return
        st = storage_of(self.handle)
        for _, pv in s.by_node[node].static:
            st.restore_pv(pv.name)
        for claim in s.by_node[node].provision:
            st.restore_pvc(claim.key)

    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        s: _State | None = state.read(_STATE)
        if s is None or s.all_bound:
            return OK
        volumes = s.by_node.get(node)
        if volumes is None:
            return Status(Code.ERROR, (f'no pod volumes found for node "{node}"',), NAME)
        st = storage_of(self.handle)
        row = self.handle.snapshot.row_of(node)
        node_obj = self.handle.snapshot.table.nodes[row] if row is not None else None
        for claim, pv in volumes.static:
            # the API update of the volume, then the PV controller binds the claim to it
            before = st.pvs.get(pv.name, pv)
            st.pvs[pv.name] = pv
            st.restore_pv(pv.name)
            st.emit(PV_UPDATE, (before, pv))
            st.bind(claim.key, pv.name)
        for claim in volumes.provision:
            st.pvcs[claim.key] = claim
            st.restore_pvc(claim.key)
            st.emit("PersistentVolumeClaimUpdate", claim)
            st.provision(claim, node_obj)
        return OK

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [
            (STORAGE_CLASS_ADD, None),
            (PVC_ADD, _claim_of_pod), (PVC_UPDATE, _claim_of_pod),
            (PV_ADD, None), (PV_UPDATE, None),
            (NODE_ADD, None), (NODE_UPDATE_LABEL, None),
            (CSI_NODE_ADD, None),
        ]


def _claim_ref(claim: PersistentVolumeClaim) -> Any:
    from kplan.model.storage import ClaimRef

    return ClaimRef(claim.namespace, claim.name, claim.uid)


class _Unbound:
    """The unbound half of FindPodVolumes for every row at once.

    A claim whose provisioning started (selected-node annotation) rules out every other node.
    The other claims, in increasing size (``byPVCSize``), go through ``FindMatchingVolume``: its
    node-independent tests are done once per claim, then the volumes' node affinity decides per
    row, smallest volume first, a volume chosen for an earlier claim being excluded on that row.
    The claims with a selected node, then those left without a volume, are checked for
    provisioning in that order (``checkVolumeProvisions``): the first failing claim decides."""

    def __init__(self, s: _State, st: StorageState, table: NodeTable, rows: np.ndarray) -> None:
        n = len(rows)
        self.bind_conflict = np.zeros(n, dtype=bool)
        self.no_space = np.zeros(n, dtype=bool)
        selected = [c for c in s.delayed if ANN_SELECTED_NODE in c.annotations]
        to_match = sorted((c for c in s.delayed if ANN_SELECTED_NODE not in c.annotations), key=lambda c: c.request or 0)
        active = np.ones(n, dtype=bool)
        for c in selected:
            # only the selected node (none, if it is not in the table)
            active &= rows == table.row_of.get(c.annotations[ANN_SELECTED_NODE], -1)
        self.bind_conflict |= ~active

        #: per claim to match: (claim, its candidate volumes, the chosen candidate per row, -1 = none)
        self.static: list[tuple[PersistentVolumeClaim, list[PersistentVolume], np.ndarray]] = []
        satisfied_static = np.ones(n, dtype=bool)
        unmatched: list[tuple[PersistentVolumeClaim, np.ndarray]] = []
        taken: dict[str, np.ndarray] = {}
        for c in to_match:
            prebound, eligible = _candidates(c, s.volumes.get(c.key, []))
            choice = np.full(n, -1, dtype=np.int64)
            if prebound is not None:
                eligible = [prebound]
                choice[pv_affinity_mask(table, rows, prebound.node_affinity)] = 0
            else:
                for i, pv in enumerate(eligible):
                    free = choice < 0
                    if pv.name in taken:
                        free &= ~taken[pv.name]
                    if free.any():
                        choice[free & pv_affinity_mask(table, rows, pv.node_affinity)] = i
            for i, pv in enumerate(eligible):
                taken[pv.name] = taken.get(pv.name, np.zeros(n, dtype=bool)) | (choice == i)
            self.static.append((c, eligible, choice))
            unmatched.append((c, choice < 0))
            satisfied_static &= choice >= 0

        order = [(c, np.ones(n, dtype=bool)) for c in selected] + unmatched
        needs = np.zeros(n, dtype=bool)
        for _, applies in order:
            needs |= applies
        # checkVolumeProvisions' answer replaces findMatchingVolumes' where it runs
        satisfied = satisfied_static | needs
        enough = np.ones(n, dtype=bool)
        undecided = needs & active
        #: per claim to provision: (claim, the rows it applies to, the capacity of the
        #: CSIStorageCapacity hasEnoughCapacity found for it per row, NO_CAPACITY: none consulted)
        self.provision: list[tuple[PersistentVolumeClaim, np.ndarray, np.ndarray]] = []
        for c, applies in order:
            here = applies & undecided
            chosen = np.full(n, NO_CAPACITY, dtype=np.int64)
            self.provision.append((c, applies, chosen))
            if not here.any():
                continue
            sc = st.storage_class(c.class_name)
            if sc is None or not sc.provisioner or sc.provisioner == NO_PROVISIONER:
                bad = here
            else:
                bad = here & ~_topology_mask(table, rows, sc.allowed_topologies)
            satisfied &= ~bad
            undecided &= ~bad
            here &= ~bad
            if sc is not None and here.any():
                room, chosen[:] = _capacity_mask(st, sc.provisioner, c, sc.name, table, rows)
                short = here & ~room
                enough &= ~short
                undecided &= ~short
        self.bind_conflict |= active & ~satisfied
        self.no_space |= active & ~enough

    def volumes(self, k: int) -> PodVolumes:
        """PodVolumes of row position ``k`` (a row that passed)."""
        out = PodVolumes()
        for c, eligible, choice in self.static:
            if choice[k] >= 0:
                out.static.append((c, eligible[int(choice[k])]))
        out.provision = [c for c, applies, _ in self.provision if applies[k]]
        out.node_capacity = [None if chosen[k] == NO_CAPACITY else int(chosen[k])
                             for _, applies, chosen in self.provision if applies[k]]
        return out


def _candidates(claim: PersistentVolumeClaim, volumes: list[PersistentVolume]
                ) -> tuple[PersistentVolume | None, list[PersistentVolume]]:
    """FindMatchingVolume's node-independent tests: (the first volume bound to the claim, which
    decides alone; else the free volumes that fit, smallest first, earlier first among equals)."""
    requested = claim.request or 0
    eligible: list[tuple[int, int, PersistentVolume]] = []
    for i, pv in enumerate(volumes):
        if pv.claim_ref is not None and not is_volume_bound_to_claim(pv, claim):
            continue
        if pv.capacity < requested or pv.volume_mode != claim.volume_mode:
            continue
        if claim.volume_attributes_class != pv.volume_attributes_class or pv.deleting:
            continue
        if is_volume_bound_to_claim(pv, claim):
            return pv, []
        if pv.phase != "Available" or (claim.selector is not None and not claim.selector.matches(pv.labels)):
            continue
        if pv.class_name != claim.class_name or not check_access_modes(claim, pv):
            continue
        eligible.append((pv.capacity, i, pv))
    return None, [pv for _, _, pv in sorted(eligible, key=lambda t: (t[0], t[1]))]


def _topology_mask(table: NodeTable, rows: np.ndarray, terms: tuple[Any, ...]) -> np.ndarray:
    """MatchTopologySelectorTerms for every row: no terms match all; a term is ``key In values``s."""
    if not terms:
        return np.ones(len(rows), dtype=bool)
    out = np.zeros(len(rows), dtype=bool)
    for t in terms:
        if not t.expressions or any(not values for _, values in t.expressions):
            continue
        m = np.ones(len(rows), dtype=bool)
        for key, values in t.expressions:
            m &= table.labels(key).isin(values)[rows]
        out |= m
    return out


def _capacity_mask(st: StorageState, provisioner: str, claim: PersistentVolumeClaim, class_name: str,
                   table: NodeTable, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """hasEnoughCapacity for every row: only for a CSIDriver that opts into capacity tracking, a
    CSIStorageCapacity of the class, reachable from the node, with room for the claim. Also,
    per row, the capacity of the object it returns (the first that fits; NO_CAPACITY where it
    returns none), which StorageCapacityScoring scores: upstream takes the first in its
    lister's order, here the input order (they differ only where several objects fit a node)."""
    ok = np.ones(len(rows), dtype=bool)
    chosen = np.full(len(rows), NO_CAPACITY, dtype=np.int64)
    if claim.request is None:
        return ok, chosen
    driver = st.csi_driver(provisioner)
    if driver is None or not driver.storage_capacity:
        return ok, chosen
    ok[:] = False
    for cap in st.capacities:
        limit = cap.limit
        if cap.storage_class_name != class_name or limit is None or limit < claim.request or cap.node_topology is None:
            continue
        m = np.ones(len(rows), dtype=bool)
        for r in cap.node_topology.requirements():
            m &= requirement_mask(table, rows, r)
        # a capacity object without status.capacity scores as capacity 0
        chosen[m & ~ok] = cap.capacity or 0
        ok |= m
    return ok, chosen


#: no CSIStorageCapacity was consulted for a claim on a row (DynamicProvision.NodeCapacity nil)
NO_CAPACITY = -1
#: maxUtilization
_MAX_UTILIZATION = 100


def capacity_score(volumes: PodVolumes, shape: tuple[ShapePoint, ...]) -> int:
    """VolumeBinding.Score with StorageCapacityScoring for one node: the node's static bindings
    grouped by the volume's class (requests and capacities summed), else its provisions whose
    NodeCapacity is known grouped by the claim's class (requests summed, the capacity that of
    the class's last provision); each class scored by the shape at its utilization
    (``requested * 100 / capacity``, 100 when the capacity is 0 or exceeded), the node's score
    the classes' mean rounded half away from zero; 0 without a class."""
    classes: dict[str, list[int]] = {}
    if volumes.static:
        for claim, pv in volumes.static:
            entry = classes.setdefault(pv.class_name, [0, 0])
            entry[0] += claim.request or 0
            entry[1] += pv.capacity
    else:
        for claim, capacity in zip(volumes.provision, volumes.node_capacity, strict=True):
            if capacity is None:
                continue
            entry = classes.setdefault(claim.class_name, [0, 0])
            entry[1] = capacity
            entry[0] += claim.request or 0
    if not classes:
        return 0
    utilization = np.array([_MAX_UTILIZATION if capacity == 0 or requested > capacity
                            else requested * _MAX_UTILIZATION // capacity
                            for requested, capacity in classes.values()], dtype=np.int64)
    total = int(broken_linear(shape, utilization).sum())
    return int(go_round(np.array(total / len(classes))))


def ephemeral_owner_error(pod: Pod, claim: PersistentVolumeClaim) -> str:
    """ephemeral.VolumeIsForPod: the claim of a generic ephemeral volume must be the pod's."""
    for o in claim.owners:
        if o.controller and o.uid == pod.uid:
            return ""
    return (f"PVC {claim.namespace}/{claim.name} was not created for pod {pod.namespace}/{pod.name} "
            "(pod is not owner)")


def _claim_of_pod(pod: Pod, event: ClusterEvent) -> bool:
    """isSchedulableAfterPersistentVolumeClaimChange: a claim of this pod, in its namespace."""
    claim = event.obj
    if not isinstance(claim, PersistentVolumeClaim) or claim.namespace != pod.namespace:
        return False
    return any(v.claim_name == claim.name for v in pod.volumes if v.claim_name)


__all__ = ["NAME", "VolumeBinding", "check_access_modes", "is_volume_bound_to_claim"]
