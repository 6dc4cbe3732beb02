"""VolumeBinding (plugins/volumebinding/volume_binding.go and binder.go, v1.34.1).

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
its volume (cluster/storage.py). Unreserve reverts the assumptions. PreScore/Score: Skip, the
scorer only exists with the alpha StorageCapacityScoring gate (reference 1.2).

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
from kplan.framework.cycle_state import CycleState
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
from kplan.framework.interfaces import PreFilterResult
from kplan.framework.registry import ArgsError
from kplan.framework.status import OK, Code, Status, Verdicts, reason_id, skip
from kplan.model.objects import Pod
from kplan.model.selectors import IN, NodeSelector
from kplan.model.storage import (
    ANN_SELECTED_NODE,
    NO_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    match_topology_terms,
)
from kplan.plugins.helper import PluginBase
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


def decode_args(raw: Mapping[str, Any] | None) -> VolumeBindingArgs:
    raw = raw or {}
    for k in raw:
        if k not in ("bindTimeoutSeconds", "shape"):
            raise ArgsError(f'unknown field "{k}"')
    out = VolumeBindingArgs()
    if raw.get("bindTimeoutSeconds") is not None:
        out.bind_timeout_seconds = int(raw["bindTimeoutSeconds"])
    if raw.get("shape") is not None:
        raise ArgsError('shape: Invalid value: "shape": only allowed when the StorageCapacityScoring gate is on')
    return out


def validate_args(args: VolumeBindingArgs) -> list[str]:
    if args.bind_timeout_seconds < 0:
        return [f"bindTimeoutSeconds: Invalid value: {args.bind_timeout_seconds}: invalid BindTimeoutSeconds, "
                "should not be a negative value"]
    return []


def storage_of(handle: Any) -> StorageState:
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


@dataclass
class _State:
    bound: list[PersistentVolumeClaim]
    delayed: list[PersistentVolumeClaim]
    #: storage class → the volumes listed at PreFilter (GetPodVolumeClaims)
    volumes: dict[str, list[PersistentVolume]]
    #: node name → PodVolumes, for the nodes that passed Filter
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = True

    def clone(self) -> _State:
        # stateData.Clone returns the same object: Filter results are shared with forks
        return self


class VolumeBinding(PluginBase):
    name = NAME

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
        volumes = {c.class_name: st.cached_pvs(c.class_name) for c in delayed}
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

        bind_conflict = np.zeros(n, dtype=bool)
        no_space = np.zeros(n, dtype=bool)
        found: list[PodVolumes | None] = [None] * n
        if s.delayed:
            for k in range(n):
                found[k], bind_conflict[k], no_space[k] = self._unbound(s, st, table, int(rows[k]), pod)
        codes = np.zeros(n, dtype=np.int8)
        reasons = np.zeros(n, dtype=np.int32)
        for k in np.flatnonzero(node_conflict | pv_missing | bind_conflict | no_space):
            rs = []
            if node_conflict[k]:
                rs.append(ERR_NODE_CONFLICT)
            if bind_conflict[k]:
                rs.append(ERR_BIND_CONFLICT)
            if no_space[k]:
                rs.append(ERR_NOT_ENOUGH_SPACE)
            if pv_missing[k]:
                rs.append(ERR_PV_NOT_EXIST)
            codes[k] = Code.UNRESOLVABLE
            reasons[k] = reason_id(*rs)
        for k in np.flatnonzero(codes == 0):
            s.by_node[table.names[int(rows[k])]] = found[k] or PodVolumes()
        return Verdicts(codes, reasons)

    def _unbound(self, s: _State, st: StorageState, table: NodeTable, row: int, pod: Pod
                 ) -> tuple[PodVolumes | None, bool, bool]:
        """The unbound half of FindPodVolumes for one node: (volumes, bind conflict, no space)."""
        node = table.nodes[row]
        to_provision: list[PersistentVolumeClaim] = []
        to_match: list[PersistentVolumeClaim] = []
        for c in s.delayed:
            selected = c.annotations.get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node.name:
                    return None, True, False  # fast path: provisioning started for another node
                to_provision.append(c)
            else:
                to_match.append(c)
        out = PodVolumes()
        satisfied = True
        if to_match:
            chosen: set[str] = set()
            for c in sorted(to_match, key=lambda c: c.request or 0):  # byPVCSize
                pv = _find_matching(c, s.volumes.get(c.class_name, []), node.labels, chosen)
                if pv is None:
                    to_provision.append(c)
                    satisfied = False
                    continue
                chosen.add(pv.name)
                out.static.append((c, pv))
        if to_provision:
            satisfied, enough = True, True
            for c in to_provision:
                sc = st.storage_class(c.class_name)
                if sc is None or not sc.provisioner or sc.provisioner == NO_PROVISIONER:
                    satisfied, out.provision = False, []
                    break
                if not match_topology_terms(sc.allowed_topologies, node.labels):
                    satisfied, out.provision = False, []
                    break
                if not _has_enough_capacity(st, sc.provisioner, c, sc.name, node.labels):
                    enough, out.provision = False, []
                    break
                out.provision.append(c)
            return out, not satisfied, not enough
        return out, not satisfied, False

    # ------------------------------------------------------------------ Score (gate off)

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        return skip(NAME)

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows), dtype=np.int64)

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
            st.pvs[pv.name] = pv
            st.restore_pv(pv.name)
            st.emit("PersistentVolumeUpdate", pv)
            st.bind(claim.key, pv.name)
        for claim in volumes.provision:
            st.pvcs[claim.key] = claim
            st.restore_pvc(claim.key)
            st.emit("PersistentVolumeClaimUpdate", claim)
            st.provision(claim, node_obj)
        return OK

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> list[tuple[str, object]]:
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


def _find_matching(claim: PersistentVolumeClaim, volumes: list[PersistentVolume], labels: Mapping[str, str],
                   chosen: set[str]) -> PersistentVolume | None:
    from kplan.cluster.storage import find_matching_volume

    return find_matching_volume(claim, volumes, labels, chosen, delay_binding=True)


def _has_enough_capacity(st: StorageState, provisioner: str, claim: PersistentVolumeClaim, class_name: str,
                         labels: Mapping[str, str]) -> bool:
    """hasEnoughCapacity: only for a CSIDriver that opts into storage capacity tracking."""
    if claim.request is None:
        return True
    driver = st.csi_driver(provisioner)
    if driver is None or not driver.storage_capacity:
        return True
    for cap in st.capacities:
        limit = cap.limit
        if cap.storage_class_name != class_name or limit is None or limit < claim.request:
            continue
        if cap.node_topology is not None and cap.node_topology.matches(labels):
            return True
    return False


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
