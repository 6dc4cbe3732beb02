"""Consumable capacity (KEP-5075): how much of a device's capacity a request consumes, and whether
it still fits (structured/internal/incubating/consumable_capacity.go at v0.36.3 and v0.37.2).

Amounts are nano units (the exact value of a Kubernetes quantity). A request names the capacities
it wants (``capacity.requests``); every capacity of the device is consumed, the ones not named by
the policy's ``default`` or else in full. A named amount is rounded up by the capacity's request
policy: to ``min`` and then to a whole number of ``step`` above it (``validRange``), or to the first
of ``validValues`` at least as large. The rounding works in whole units (Quantity.Value(), each
operand rounded up first), or, with DRAFractionalCapacityRange (1.37) and a range whose min, max
and step are whole thousandths, in thousandths. A device is eligible when no rounded amount breaks
the policy (above ``max``, off the step, outside ``validValues``; the default never does) and the
amounts already consumed on it (allocated claims, in-flight allocations, this attempt's earlier
picks) plus this one stay within each capacity's value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.model.dra import Device, RequestPolicy
from kplan.model.quantity import nanos_to_milli, nanos_to_value, parse_nanos

_NANO, _MILLI = 1_000_000_000, 1_000_000

#: (capacity name, nano units) pairs
Amounts = tuple[tuple[str, int], ...]


class CapacityError(Exception):
    """CmpRequestOverCapacity's error: the request names a capacity the device does not have."""


class NegativeCapacity(Exception):
    """1.37's errNegativeCapacity: a consumed amount below zero (kube-scheduler aborts the attempt;
    kplan refuses)."""


class DuplicateCapacityRequest(Exception):
    """1.38: a request names one capacity twice, with and without the driver as its domain
    (resolveCapacityRequests' error: kube-scheduler aborts the attempt; kplan refuses)."""

    def __init__(self, capacity: str, first: str, second: str) -> None:
        super().__init__(capacity, first, second)
        self.capacity, self.first, self.second = capacity, first, second


class Unrepresentable(Exception):
    """1.37's errCapacityRequestNotRepresentable: a request that is not a whole number of
    thousandths, rounded in thousandths (kube-scheduler aborts the attempt; kplan refuses)."""


def _go_rem(a: int, b: int) -> int:
    """Go's ``%`` on int64: the remainder takes the dividend's sign."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _go_div(a: int, b: int) -> int:
    """Go's ``/`` on int64: truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _use_milli(policy: RequestPolicy, fractional: bool) -> bool:
    """useMilli: DRAFractionalCapacityRange on and min, max and step (those set) whole
    thousandths, the step at least one thousandth."""
    if not fractional:
        return False
    for q in (policy.min, policy.max, policy.step):
        if q is not None and q % _MILLI:
            return False
    return policy.step is None or nanos_to_milli(policy.step) >= 1


def _round_up_range(requested: int, policy: RequestPolicy, fractional: bool) -> int:
    """roundUpRange: at least min, then min plus a whole number of steps."""
    assert policy.min is not None
    if requested < policy.min:
        return policy.min
    if policy.step is None:
        return requested
    if _use_milli(policy, fractional):
        if requested % _MILLI:
            raise Unrepresentable(requested)
        unit, to = _MILLI, nanos_to_milli
    else:
        unit, to = _NANO, nanos_to_value
    req, step, low = to(requested), to(policy.step), to(policy.min)
    added = req - low
    n = _go_div(added, step)
    if _go_rem(added, step):
        n += 1
    return (low + step * n) * unit


def consumed_amount(requested: int | None, value: int, policy: RequestPolicy | None, fractional: bool = False) -> int:
    """calculateConsumedCapacity: what a request consumes of one capacity (``value``)."""
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else value
    if policy is None:
        return requested
    if policy.has_range and policy.min is not None:
        return _round_up_range(requested, policy, fractional)
    if policy.valid_values:
        return next((v for v in policy.valid_values if requested <= v), requested)
    return requested


def violates_policy(amount: int, policy: RequestPolicy | None, fractional: bool = False) -> bool:
    """violatesPolicy: above the range's max or off its step, or not one of validValues; the
    policy's default never violates it."""
    if policy is None:
        return False
    if policy.default is not None and amount == policy.default:
        return False
    if policy.has_range:
        if policy.max is not None and amount > policy.max:
            return True
        if policy.step is not None:
            assert policy.min is not None
            if _use_milli(policy, fractional):
                if amount % _MILLI:
                    return True
                to = nanos_to_milli
            else:
                to = nanos_to_value
            return _go_rem(to(amount) - to(policy.min), to(policy.step)) != 0
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def resolve_requests(device: Device, driver: str, requests: Amounts | None) -> Amounts | None:
    """From 1.38 (#142202, resolveCapacityRequests): each requested capacity name to the name the
    device publishes it under, a request and a capacity matching with or without the driver name as
    their domain (draapi.LookupByQualifiedName); a name the device lacks is kept (fits then skips
    the device). Two names of one capacity abort the attempt upstream: kplan refuses them
    (DuplicateCapacityRequest)."""
    if not requests:
        return requests
    out: dict[str, int] = {}
    spelled: dict[str, str] = {}
    for name, amount in requests:
        key = _lookup(device.capacity, name, driver)
        if key is None:
            out[name] = amount
            continue
        if key in spelled:
            raise DuplicateCapacityRequest(key, spelled[key], name)
        spelled[key] = name
        out[key] = amount
    return tuple(out.items())


def _lookup(capacity: Mapping[str, Any], name: str, driver: str) -> str | None:
    """LookupByQualifiedName: the key of ``capacity`` that ``name`` means, with ``driver`` as the
    default domain, or None."""
    domain, sep, ident = name.partition("/")
    if sep:
        if name in capacity:
            return name
        return ident if domain == driver and ident in capacity else None
    qualified = f"{driver}/{name}"
    if qualified in capacity:
        return qualified
    return name if name in capacity else None


def capacity_values(device: Device) -> dict[str, int]:
    """The device's capacities in nano units (its capacity map parsed)."""
    return {name: parse_nanos(q) for name, q in device.capacity.items()}


def fits(device: Device, requests: Amounts | None, consumed: Mapping[str, int] | None,
         allocating: Mapping[str, int] | None, fractional: bool = False, negative_aborts: bool = False) -> bool:
    """CmpRequestOverCapacity: whether the request can be served by the device beside what is
    already consumed on it (``consumed``: the allocated state's aggregated capacity of the device,
    ``allocating``: this attempt's earlier picks of it). Raises CapacityError when the request
    names a capacity the device does not have; with ``negative_aborts`` (1.37) NegativeCapacity
    when an amount consumed would be below zero (a negative capacity value or default)."""
    wanted = dict(requests or ())
    values = capacity_values(device)
    if any(name not in values for name in wanted):
        raise CapacityError("some requested capacity has not been defined")
    # every amount first (1.37: an unrepresentable one aborts whatever the others)
    amounts = {name: consumed_amount(wanted.get(name), value, device.request_policies.get(name), fractional)
               for name, value in values.items()}
    if negative_aborts and any(a < 0 for a in amounts.values()):
        raise NegativeCapacity(device.name)
    for name, value in values.items():
        amount = amounts[name]
        if violates_policy(amount, device.request_policies.get(name), fractional):
            return False
        total = amount + (consumed or {}).get(name, 0) + (allocating or {}).get(name, 0)
        if total > value:
            return False
    return True


def consumed_capacity(device: Device, requests: Amounts | None, fractional: bool = False) -> Amounts:
    """GetConsumedCapacityFromRequest: what the request consumes of each capacity of the device."""
    wanted = dict(requests or ())
    return tuple(sorted((name, consumed_amount(wanted.get(name), value, device.request_policies.get(name),
                                               fractional))
                        for name, value in capacity_values(device).items()))
