"""Instance types as Karpenter's scheduler sees them: sigs.k8s.io/karpenter v1.15.0
pkg/cloudprovider/types.go (Offerings: Available, Compatible, Cheapest; InstanceTypes.OrderByPrice)
and kwok/cloudprovider/helpers.go newInstanceType (the requirements a type carries).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from kplan.autoscaler.gosort import sort_slice
from kplan.autoscaler.karpenter.requirements import Req, Requirements, from_spec
from kplan.model.karpenter import (
    ARCH_LABEL,
    CAPACITY_TYPE_LABEL,
    CAPACITY_TYPE_RESERVED,
    INSTANCE_TYPE_LABEL,
    OS_LABEL,
    ZONE_LABEL,
    InstanceType,
    Offering,
)


class CatalogIndexLike(Protocol):
    """What order_by_price reads of catalogindex.CatalogIndex (which imports this module)."""

    @property
    def position(self) -> Mapping[InstanceType, int]: ...

    def cheapest_launch_prices(self, reqs: Requirements) -> npt.NDArray[np.float64]: ...


# caches keyed by the objects themselves (an InstanceType hashes by identity, an Offering by value)
_requirements: dict[InstanceType, Requirements] = {}
_offering_requirements: dict[Offering, Requirements] = {}


def _in(key: str, *values: str) -> Req:
    return Req(key, False, frozenset(values))


def instance_type_requirements(it: InstanceType) -> Requirements:
    """The type's requirements as the KWOK provider builds them: its name, architecture,
    operating systems, the zones and capacity types of its offerings, and its own labels."""
    got = _requirements.get(it)
    if got is not None:
        return got
    zones = {r.values[0] for o in it.offerings for r in o.requirements if r.key == ZONE_LABEL and r.values}
    capacity_types = {r.values[0] for o in it.offerings for r in o.requirements
                      if r.key == CAPACITY_TYPE_LABEL and r.values}
    reqs = Requirements([_in(INSTANCE_TYPE_LABEL, it.name), _in(ARCH_LABEL, it.architecture),
                         _in(OS_LABEL, *it.operating_systems), _in(ZONE_LABEL, *zones),
                         _in(CAPACITY_TYPE_LABEL, *capacity_types)])
    reqs.add(*(_in(k, v) for k, v in it.labels.items()))
    _requirements[it] = reqs
    return reqs


def offering_requirements(o: Offering) -> Requirements:
    got = _offering_requirements.get(o)
    if got is None:
        got = _offering_requirements[o] = from_spec(o.requirements)
    return got


def launchable(o: Offering) -> bool:
    """Offering.Launchable: available, and a reserved offering only with capacity left."""
    if not o.available:
        return False
    return o.capacity_type != CAPACITY_TYPE_RESERVED or o.reservation_capacity > 0


def compatible_offerings(offerings: Sequence[Offering], reqs: Requirements,
                         well_known: frozenset[str]) -> list[Offering]:
    """Offerings.Compatible: the offerings whose requirements the claim's requirements allow
    (well-known labels may be undefined on the claim)."""
    return [o for o in offerings if reqs.is_compatible(offering_requirements(o), well_known)]


def has_compatible_offering(it: InstanceType, reqs: Requirements, well_known: frozenset[str]) -> bool:
    """Offerings.Available().HasCompatible."""
    return any(o.available and reqs.is_compatible(offering_requirements(o), well_known) for o in it.offerings)


def cheapest_launch_price(it: InstanceType, reqs: Requirements, well_known: frozenset[str]) -> float:
    """The price OrderByPrice sorts a type by: its cheapest launchable compatible offering."""
    best = float("inf")
    for o in it.offerings:
        if o.price < best and launchable(o) and reqs.is_compatible(offering_requirements(o), well_known):
            best = o.price
    return best


def order_by_price(types: Sequence[InstanceType], reqs: Requirements, well_known: frozenset[str],
                   index: CatalogIndexLike | None = None) -> list[InstanceType]:
    """InstanceTypes.OrderByPrice: by the cheapest launchable offering the requirements allow,
    with Go's sort.Slice (so types of equal price end where Go leaves them)."""
    if index is not None:
        prices = index.cheapest_launch_prices(reqs)
        price = {it: float(prices[index.position[it]]) for it in types}
    else:
        price = {it: cheapest_launch_price(it, reqs, well_known) for it in types}
    out = list(types)
    sort_slice(out, lambda a, b: price[a] < price[b])
    return out
