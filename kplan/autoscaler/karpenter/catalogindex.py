"""The catalog in columns: kplan's vectorised form of the per-instance-type tests Karpenter runs in a
loop (sigs.k8s.io/karpenter v1.15.0 nodeclaim.go filterInstanceTypesByRequirements: ``compatible``
and ``fits``; pkg/cloudprovider/types.go Offerings.Compatible, OrderByPrice's price). Each answer is
the readable functions' (instancetypes.py, nodeclaim.py) for every type at once; the unit tests
check the two agree.

A requirement on a key allows a type when one of the type's values for that key is allowed
(``Requirement.HasIntersection`` of an ``In`` set); the allowed-type mask is computed once per
distinct requirement and kept. Offerings are indexed when each of their requirements is a
single-valued ``In`` (zone, capacity type, as every catalog kplan reads writes them); a catalog
with other offering requirements takes the readable path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from kplan.autoscaler.karpenter.instancetypes import instance_type_requirements, launchable
from kplan.autoscaler.karpenter.requirements import Req, Requirements
from kplan.model.karpenter import DOES_NOT_EXIST, IN, NOT_IN, Catalog, InstanceType

Mask = npt.NDArray[np.bool_]


class CatalogIndex:
    """Columns over a catalog's instance types (in catalog order) and their offerings."""

    def __init__(self, catalog: Catalog) -> None:
        self.types: tuple[InstanceType, ...] = catalog.instance_types
        self.position = {it: i for i, it in enumerate(self.types)}
        self.well_known = catalog.well_known_labels
        n = len(self.types)
        self.n = n
        # the types' requirements, per key: value -> types having it; the types defining the key;
        # the types whose requirement on the key allows nothing (DoesNotExist)
        self.values: dict[str, dict[str, Mask]] = {}
        self.defines: dict[str, Mask] = {}
        self.empty: dict[str, Mask] = {}
        for i, it in enumerate(self.types):
            for r in instance_type_requirements(it).values():
                d = self.defines.setdefault(r.key, np.zeros(n, dtype=bool))
                d[i] = True
                if r.complement:
                    raise ValueError("an instance type's requirement is a complement")  # never built so
                if not r.values:
                    self.empty.setdefault(r.key, np.zeros(n, dtype=bool))[i] = True
                vals = self.values.setdefault(r.key, {})
                for v in r.values:
                    vals.setdefault(v, np.zeros(n, dtype=bool))[i] = True
        self._allowed: dict[Req, Mask] = {}
        self._has_offering: dict[tuple[Req | None, ...], Mask] = {}
        # allocatable per resource (absent: 0); types with a negative allocatable never fit
        names = sorted({k for it in self.types for k in it.allocatable})
        self.alloc = {k: np.array([it.allocatable.get(k, 0) for it in self.types], dtype=np.int64) for k in names}
        self.negative = np.zeros(n, dtype=bool)
        for col in self.alloc.values():
            self.negative |= col < 0
        self.capacity = {k: np.array([it.capacity.get(k, 0) for it in self.types], dtype=np.int64)
                         for k in sorted({k for it in self.types for k in it.capacity})}
        # offerings
        offs = [(i, o) for i, it in enumerate(self.types) for o in it.offerings]
        self.simple_offerings = all(r.operator == IN and len(r.values) == 1 for _, o in offs for r in o.requirements)
        self.off_type = np.array([i for i, _ in offs], dtype=np.int64)
        self.off_available = np.array([o.available for _, o in offs], dtype=bool)
        self.off_launchable = np.array([launchable(o) for _, o in offs], dtype=bool)
        self.off_price = np.array([o.price for _, o in offs], dtype=np.float64)
        keys = sorted({r.key for _, o in offs for r in o.requirements})
        self.off_codes: dict[str, npt.NDArray[np.int64]] = {}
        self.off_vocab: dict[str, list[str]] = {}
        for k in keys:
            vocab: dict[str, int] = {}
            codes = np.full(len(offs), -1, dtype=np.int64)  # -1: the offering has no requirement on k
            for j, (_, o) in enumerate(offs):
                for spec in o.requirements:
                    if spec.key == k:
                        codes[j] = vocab.setdefault(spec.values[0], len(vocab))
            self.off_codes[k] = codes
            self.off_vocab[k] = list(vocab)

    # ------------------------------------------------------------------------------ types
    def _allowed_by(self, r: Req) -> Mask:
        """The types one of whose values for r's key r allows (HasIntersection with an In set)."""
        got = self._allowed.get(r)
        if got is None:
            got = np.zeros(self.n, dtype=bool)
            for v, m in self.values.get(r.key, {}).items():
                if r.has(v):
                    got |= m
            if len(self._allowed) < 65536:
                self._allowed[r] = got
        return got

    def compatible(self, reqs: Requirements) -> Mask:
        """``instance_type_requirements(it).intersects(reqs) is None`` for every type."""
        out = np.ones(self.n, dtype=bool)
        for key in reqs.keys():
            defines = self.defines.get(key)
            if defines is None:
                continue
            r = reqs.get(key)
            ok = ~defines | self._allowed_by(r)
            empty = self.empty.get(key)
            if empty is not None and r.operator in (NOT_IN, DOES_NOT_EXIST):
                ok |= empty  # two requirements that only exclude never conflict
            out &= ok
        return out

    def fits(self, need: Mapping[str, int]) -> Mask:
        """resources.Fits(need, allocatable) for every type."""
        out = ~self.negative
        for k, v in need.items():
            col = self.alloc.get(k)
            out = out & (col >= v) if col is not None else (out if v <= 0 else np.zeros(self.n, dtype=bool))
        return out

    # ------------------------------------------------------------------------------ offerings
    def offerings_compatible(self, reqs: Requirements) -> Mask:
        """``reqs.is_compatible(offering requirements, well known)`` for every offering."""
        out = np.ones(len(self.off_type), dtype=bool)
        for k, codes in self.off_codes.items():
            has = codes >= 0
            if reqs.has(k):
                r = reqs.get(k)
                allowed = np.array([r.has(v) for v in self.off_vocab[k]] + [True], dtype=bool)
                out &= allowed[codes]  # code -1 reads the trailing True: no requirement on k
            elif k not in self.well_known:
                out &= ~has  # an In on a key the requirements do not define
        return out

    def has_offering(self, reqs: Requirements) -> Mask:
        """Offerings.Available().HasCompatible(reqs) for every type (kept per the requirements on
        the offerings' keys, the only ones it reads)."""
        key = tuple(reqs.get(k) if reqs.has(k) else None for k in self.off_codes)
        got = self._has_offering.get(key)
        if got is None:
            m = self.off_available & self.offerings_compatible(reqs)
            got = np.bincount(self.off_type[m], minlength=self.n) > 0
            if len(self._has_offering) < 4096:
                self._has_offering[key] = got
        return got

    def cheapest_launch_prices(self, reqs: Requirements) -> npt.NDArray[np.float64]:
        """OrderByPrice's price of every type: its cheapest launchable compatible offering."""
        m = self.off_launchable & self.offerings_compatible(reqs)
        out = np.full(self.n, np.inf)
        np.minimum.at(out, self.off_type[m], self.off_price[m])
        return out

    def positions(self, types: Iterable[InstanceType]) -> npt.NDArray[np.int64]:
        return np.array([self.position[it] for it in types], dtype=np.int64)

    def max_allocatable(self, types: Sequence[InstanceType]) -> dict[str, int]:
        """The largest allocatable of each resource among ``types`` (a bound on what fits any)."""
        idx = self.positions(types)
        if not len(idx):
            return {}
        return {k: int(col[idx].max()) for k, col in self.alloc.items()}


_indexes: dict[Catalog, CatalogIndex] = {}


def catalog_index(catalog: Catalog) -> CatalogIndex | None:
    """The catalog's index, built once; None for a catalog the index does not cover (offering
    requirements other than single-valued In), which takes the readable path."""
    got = _indexes.get(catalog)
    if got is None:
        got = CatalogIndex(catalog)
        if len(_indexes) > 8:
            _indexes.clear()
        _indexes[catalog] = got
    return got if got.simple_offerings else None
