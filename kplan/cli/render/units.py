"""Quantities for people, the one way every renderer writes them (tables, explain's sentences,
Markdown, HTML): cpu in cores (``0.15/3.92``, ``15.9 cpu``) or in millicores below one core
(``150m``), memory and storage in the largest binary unit that leaves at least 1 with three
significant digits (``140Mi``, ``1.4Gi``, ``98.1Gi``), counts (pods, GPUs) as they are.

The documents (-o json, yaml) keep Kubernetes notation, exact (``"27140m"``, ``"100416Mi"``);
these are for reading.
"""

from __future__ import annotations

from fractions import Fraction

from kplan.model.quantity import format_resource

_BINARY = (("Ei", 2 ** 60), ("Pi", 2 ** 50), ("Ti", 2 ** 40), ("Gi", 2 ** 30), ("Mi", 2 ** 20), ("Ki", 2 ** 10))


def _three_digits(x: Fraction) -> str:
    """``x`` with three significant digits at most, trailing zeros dropped: 1.40 → 1.4, 121.2 → 121."""
    if x >= 100:
        return str(round(x))
    digits = 1 if x >= 10 else 2 if x >= 0.1 else 3
    text = f"{float(x):.{digits}f}".rstrip("0").rstrip(".")
    return text


def human_bytes(n: int | Fraction) -> str:
    """Bytes in the largest binary unit that leaves at least 1: 140Mi, 1.4Gi, 30Gi, 512."""
    for unit, size in _BINARY:
        if n >= size:
            return _three_digits(Fraction(n) / size) + unit
    return str(n)


def human_cpu(milli: int | Fraction) -> str:
    """Millicores below one core (150m), cores from one core up (1.8, 7.91, 16)."""
    if milli < 1000:
        return f"{round(milli)}m"
    return _three_digits(Fraction(milli) / 1000)


def human_quantity(resource: str, amount: int) -> str:
    """An amount of a resource (millicores for cpu, bytes for memory and storage, a count
    otherwise) in human units: cpu in cores, memory and storage in binary units; anything else
    (pods, GPUs, counts) as Kubernetes writes it."""
    if resource == "cpu":
        return human_cpu(amount)
    if resource in ("memory", "ephemeral-storage", "storage") or resource.startswith("hugepages-"):
        return human_bytes(amount)
    return format_resource(resource, amount)


def amount(resource: str, value: int) -> str:
    """``15.9 cpu``, ``60Gi memory``, ``2 nvidia.com/gpu``: an amount and what it is of."""
    return f"{human_quantity(resource, value)} {resource}"


def usage(resource: str, requested: int, allocatable: int) -> str:
    """``requested/allocatable`` in human units: 140Mi/1.4Gi (each with its unit), and cpu both in
    cores (0.15/3.92) or both in millicores (150m/500m), as the allocatable is, since cores carry no
    unit to tell them apart."""
    if resource == "cpu":
        if allocatable >= 1000:
            return f"{_cores(Fraction(requested, 1000))}/{_cores(Fraction(allocatable, 1000))}"
        return f"{requested}m/{allocatable}m"
    return f"{human_quantity(resource, requested)}/{human_quantity(resource, allocatable)}"


def _cores(x: Fraction) -> str:
    return "0" if x == 0 else _three_digits(x)


def plural(n: int, word: str) -> str:
    """A count and its word: ``1 node``, ``2 nodes``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def autoscaler_name(name: str, *, first: bool = True) -> str:
    """The node autoscaler as a sentence names it: "Karpenter", "The cluster-autoscaler" first in
    the sentence, "the cluster-autoscaler" inside it."""
    if name == "cluster-autoscaler":
        return "The cluster-autoscaler" if first else "the cluster-autoscaler"
    return name.capitalize()
