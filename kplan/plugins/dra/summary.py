"""Node-level summaries for DynamicResources' Filter: the exact allocator only where it can succeed.

For each request shape (device class and the request's selectors) the summaries keep, per node,
how many devices match and how many of those are free: numpy columns indexed by a node id. They
are built once per shape from the run's inventory and kept current incrementally from the in-use
log of the run's DRA state (a device allocated or freed at Reserve, PreBind, a claim write or a
deallocation changes one counter). A pod's PreFilter turns them into a mask of the nodes that may
pass; Filter rejects the others with ``cannot allocate all claims`` in one step and runs the exact
allocator, in the framework's node order, on every node that may pass.

The mask is a necessary condition, never a shortcut to success: a node is masked out only if the
exact allocator would return "no solution" there without an error. Each request needs ``count``
distinct matching devices that are free (admin access: merely matching), and the single-alternative
requests of one shape share the free devices of that shape. Nodes the counts cannot describe exactly
are always left to the allocator: nodes that see a pool published for more than this node (node
selector, allNodes, or a device id another node also publishes), and nodes where the search would
meet an invalid pool or a selector error. Pods with an ``All`` request, or whose claims fail the
allocator's validation, get no mask at all.

The allocator's decision per node is also remembered for the run, keyed by the pod's claim specs and
the version of each pool the node sees (the in-use log position of its last change): a node whose
devices did not change since decides the same way, so the search runs again only where it could
come out differently. Errors are never remembered (they name the claim and abort the attempt).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kplan.cluster.dra import DeviceId, DraState
from kplan.cluster.node_table import NodeTable
from kplan.model.dra import ALL, Allocation, ClaimSpec, ResourceClaim, SubRequest
from kplan.plugins.dra.structured import Allocator, AllocatorError, Inventory, NodeFailure

ShapeKey = tuple[str, tuple[str, ...]]
#: a node's verdict in ``NodeSummaries.plan``
NO, YES, SEARCH = 0, 1, 2


@dataclass(slots=True)
class _Shape:
    spec: SubRequest
    #: per node id: matching devices, those of them free, and "leave this node to the allocator"
    total: np.ndarray
    free: np.ndarray
    exact: np.ndarray
    #: matching device → the node id that sees it (devices of node-local pools only)
    members: dict[DeviceId, int]


@dataclass(slots=True)
class _Decisions:
    """The allocator's answers for one list of claim specs, per node id: the node's version when
    it decided (-1: never), whether it found devices, and what it found."""

    version: np.ndarray
    ok: np.ndarray
    results: dict[int, list[Allocation]]


def _requests(allocator: Allocator, claims: Sequence[ResourceClaim]) -> list[tuple[SubRequest, ...]] | None:
    """The alternatives of every request of ``claims``; None when the mask cannot be used: a claim
    the allocator's validation rejects (it must report that on the first node it tries) or a request
    for All devices (decided by the whole pool, in use or not)."""
    specs: list[tuple[SubRequest, ...]] = []
    for claim in claims:
        try:
            allocator.validate(claim)
        except AllocatorError:
            return None
        for req in claim.spec.requests:
            alternatives = (req.exactly,) if req.exactly is not None else req.first_available
            if not alternatives or any(a.mode == ALL for a in alternatives):
                return None
            specs.append(alternatives)
    return specs


class NodeSummaries:
    """Per-run summaries over the nodes seen so far; see the module docstring."""

    def __init__(self, inventory: Inventory, dra: DraState) -> None:
        self.inventory = inventory
        self.dra = dra
        self.names: list[str] = []
        self.labels: list[Mapping[str, str]] = []
        self.ids: dict[str, int] = {}
        self.shapes: dict[ShapeKey, _Shape] = {}
        self._mark = len(dra.in_use_log)
        self._rows: weakref.WeakKeyDictionary[NodeTable, np.ndarray] = weakref.WeakKeyDictionary()
        self._specs: dict[tuple[ClaimSpec, ...], int] = {}
        #: spec id → the alternatives of each request, or None (see _requests)
        self._requests: dict[int, list[tuple[SubRequest, ...]] | None] = {}
        #: per node id: the in-use log position of the last change of a device the node sees
        self.node_version = np.zeros(0, dtype=np.int64)
        self._pool_nodes: dict[tuple[str, str], list[int]] = {}
        #: spec id → the allocator's decisions per node
        self._decided: dict[int, _Decisions] = {}

    # ------------------------------------------------------------------ nodes and shapes

    def node_ids(self, table: NodeTable) -> np.ndarray:
        """Each row's node id (nodes seen for the first time are added)."""
        ids = self._rows.get(table)
        if ids is None or len(ids) != len(table):
            new = [row for row, name in enumerate(table.names) if name not in self.ids]
            if new:
                self._add_nodes([(table.names[row], table.nodes[row].labels) for row in new])
            ids = np.fromiter((self.ids[name] for name in table.names), dtype=np.int64, count=len(table))
            self._rows[table] = ids
        return ids

    def _add_nodes(self, nodes: Sequence[tuple[str, Mapping[str, str]]]) -> None:
        first = len(self.names)
        for name, labels in nodes:
            self.ids[name] = len(self.names)
            self.names.append(name)
            self.labels.append(labels)
        grow = len(self.names) - first
        self.sync()
        versions = self.dra.pool_versions
        added = np.zeros(grow, dtype=np.int64)
        for nid in range(first, len(self.names)):
            keys = self.inventory.pool_keys(self.names[nid], self.labels[nid])
            for key in keys:
                self._pool_nodes.setdefault(key, []).append(nid)
            added[nid - first] = max((versions.get(key, 0) for key in keys), default=0)
        self.node_version = np.concatenate([self.node_version, added])
        for dec in self._decided.values():
            dec.version = np.concatenate([dec.version, np.full(grow, -1, dtype=np.int64)])
            dec.ok = np.concatenate([dec.ok, np.zeros(grow, dtype=bool)])
        for shape in self.shapes.values():
            shape.total = np.concatenate([shape.total, np.zeros(grow, dtype=np.int64)])
            shape.free = np.concatenate([shape.free, np.zeros(grow, dtype=np.int64)])
            shape.exact = np.concatenate([shape.exact, np.zeros(grow, dtype=bool)])
            for nid in range(first, len(self.names)):
                self._fill(shape, nid)

    def shape(self, spec: SubRequest) -> _Shape:
        key = (spec.class_name, spec.selectors)
        shape = self.shapes.get(key)
        if shape is None:
            n = len(self.names)
            shape = _Shape(spec, np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                           np.zeros(n, dtype=bool), {})
            self.sync()
            for nid in range(n):
                self._fill(shape, nid)
            self.shapes[key] = shape
        return shape

    def _fill(self, shape: _Shape, nid: int) -> None:
        """One node's counts for one shape, from the inventory and the current in-use set."""
        inv, name, labels = self.inventory, self.names[nid], self.labels[nid]
        pools = inv.pools(name, labels)
        if not inv.node_local(name, labels) or (inv.features.skip_unusable_pools and any(p.invalid for p in pools)):
            # (a node with an invalid pool fails with its own text when nothing fits)
            shape.exact[nid] = True
            return
        found, stop = inv.candidates(name, pools, shape.spec)
        if stop is not None:
            shape.exact[nid] = True
            return
        in_use = self.dra.in_use
        if inv.features.consumable_capacity and any(d.allow_multiple_allocations for _, d in found):
            # a device shared by several requests, or out of capacity though not in use
            shape.exact[nid] = True
            return
        free = 0
        for s, d in found:
            dev = (s.driver, s.pool, d.name)
            other = shape.members.get(dev)
            if other is not None and other != nid:
                # one device id published for two nodes: in use on one is in use on both
                shape.exact[other] = shape.exact[nid] = True
                continue
            shape.members[dev] = nid
            if dev not in in_use:
                free += 1
        shape.total[nid] = len(found)
        shape.free[nid] = free

    def sync(self) -> None:
        """Apply the devices allocated or freed since the last call to every shape's free counts."""
        log = self.dra.in_use_log
        if self._mark == len(log):
            return
        for pos in range(self._mark, len(log)):
            dev, delta = log[pos]
            for shape in self.shapes.values():
                nid = shape.members.get(dev)
                if nid is not None:
                    shape.free[nid] -= delta
            seeing = self._pool_nodes.get(dev[:2])
            if seeing:
                self.node_version[seeing] = pos + 1
        self._mark = len(log)

    # ------------------------------------------------------------------ the mask

    def may_pass(self, allocator: Allocator, claims: Sequence[ResourceClaim], spec_id: int) -> np.ndarray | None:
        """Per node id, whether the exact allocator could find devices for ``claims`` there (False:
        it certainly returns no solution, without error). None when no node can be ruled out this
        way. ``spec_id`` is ``spec_id(claims)``."""
        if spec_id not in self._requests:
            self._requests[spec_id] = _requests(allocator, claims)
        specs = self._requests[spec_id]
        if specs is None:
            return None
        self.sync()
        n = len(self.names)
        ok = np.ones(n, dtype=bool)
        exact = np.zeros(n, dtype=bool)
        shared: dict[ShapeKey, int] = {}
        for alternatives in specs:
            any_ok = np.zeros(n, dtype=bool)
            for spec in alternatives:
                shape = self.shape(spec)
                exact |= shape.exact
                any_ok |= (shape.total if spec.admin_access else shape.free) >= spec.count
            ok &= any_ok
            if len(alternatives) == 1 and not alternatives[0].admin_access:
                key = (alternatives[0].class_name, alternatives[0].selectors)
                shared[key] = shared.get(key, 0) + alternatives[0].count
        for key, count in shared.items():
            ok &= self.shapes[key].free >= count
        return ok | exact

    # ------------------------------------------------------------------ the allocator's decisions

    def spec_id(self, claims: Sequence[ResourceClaim]) -> int:
        key = tuple(c.spec for c in claims)
        sid = self._specs.get(key)
        if sid is None:
            sid = self._specs[key] = len(self._specs)
        return sid

    def _decisions(self, spec_id: int) -> _Decisions:
        dec = self._decided.get(spec_id)
        if dec is None:
            n = len(self.names)
            dec = self._decided[spec_id] = _Decisions(np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=bool), {})
        return dec

    def plan(self, allocator: Allocator, claims: Sequence[ResourceClaim], spec_id: int) -> np.ndarray:
        """PreFilter's verdict per node id: NO where the allocator certainly finds nothing (the
        mask), YES or NO where it decided for the same claim specs with the node's devices as they
        are now, SEARCH elsewhere. Valid for the in-use set of this moment, the allocator's snapshot."""
        self.sync()
        mask = self.may_pass(allocator, claims, spec_id)
        dec = self._decisions(spec_id)
        out = np.full(len(self.names), SEARCH, dtype=np.int8)
        fresh = dec.version == self.node_version
        out[fresh] = dec.ok[fresh]
        if mask is not None:
            out[~mask] = NO
        return out

    def allocate_rows(self, allocator: Allocator, table: NodeTable, rows: np.ndarray,
                      claims: Sequence[ResourceClaim], spec_id: int, plan: np.ndarray,
                      failures: dict[int, str] | None = None) -> tuple[np.ndarray, dict[str, list[Allocation]]]:
        """Whether the allocator finds devices for ``claims`` on each of ``rows`` (a bool per
        position), and the results it found on the nodes it searched now: ``plan`` (from ``plan``)
        decides the nodes it can; the allocator searches the rest, in row order, raising
        AllocatorError as ``allocate`` does. What it finds is written into ``plan`` and, while the
        in-use set is still the allocator's, kept for later pods. A node that fails with a text of
        its own (NodeFailure) gets it in ``failures`` (position → text) and is searched again by
        later pods."""
        ids = self.node_ids(table).take(rows)
        if len(ids) and int(ids.max()) >= len(plan):
            # nodes first seen after PreFilter: searched
            verdicts = np.full(len(ids), SEARCH, dtype=np.int8)
            known = ids < len(plan)
            verdicts[known] = plan.take(ids[known])
        else:
            verdicts = plan.take(ids)
        ok = verdicts == YES
        todo = (verdicts == SEARCH).nonzero()[0]
        found_now: dict[str, list[Allocation]] = {}
        if not len(todo):
            return ok, found_now
        store = self._decisions(spec_id) if allocator.current else None
        nodes = table.nodes
        for k in todo.tolist():
            node = nodes[int(rows[k])]
            try:
                found = allocator.allocate(node.name, node.labels, claims)
            except NodeFailure as e:
                if failures is not None:
                    failures[k] = str(e)
                continue
            except AllocatorError as e:
                e.row = int(rows[k])
                raise
            nid = int(ids[k])
            if nid < len(plan):
                plan[nid] = NO if found is None else YES
            if store is not None:
                store.version[nid] = self.node_version[nid]
                store.ok[nid] = found is not None
                if found is not None:
                    store.results[nid] = found
            if found is not None:
                ok[k] = True
                found_now[node.name] = found
        return ok, found_now

    def decided(self, allocator: Allocator, node_name: str, spec_id: int) -> list[Allocation] | None:
        """The allocator's results for the node as Filter found them (None when Filter decided otherwise)."""
        nid = self.ids.get(node_name)
        dec = self._decided.get(spec_id)
        if nid is None or dec is None or not allocator.current:
            return None
        self.sync()
        if dec.version[nid] != self.node_version[nid] or not dec.ok[nid]:
            return None
        return dec.results.get(nid)
