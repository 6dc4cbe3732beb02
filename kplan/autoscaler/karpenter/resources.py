"""Resource lists as Karpenter adds and compares them: sigs.k8s.io/karpenter v1.15.0
pkg/utils/resources/resources.go (Merge, Subtract, Fits, MaxResources, MinResources, String),
on kplan's integers (cpu in millicores, the rest in units)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from kplan.model.objects import Pod

#: the pseudo-resource a NodePool limits nodes with (resources.Node)
NODE = "nodes"

Resources = dict[str, int]


def requests_for_pods(pods: Iterable[Pod]) -> Resources:
    """RequestsForPods: the pods' requests summed, plus ``pods`` = their count."""
    out: Resources = {}
    n = 0
    for p in pods:
        n += 1
        for k, v in p.requests.items():
            out[k] = out.get(k, 0) + v
    out["pods"] = n
    return out


def merge(*lists: Mapping[str, int]) -> Resources:
    out: Resources = {}
    for rl in lists:
        for k, v in rl.items():
            out[k] = out.get(k, 0) + v
    return out


def subtract(lhs: Mapping[str, int], rhs: Mapping[str, int]) -> Resources:
    """Subtract: only the left side's names."""
    return {k: v - rhs.get(k, 0) for k, v in lhs.items()}


def fits(candidate: Mapping[str, int], total: Mapping[str, int]) -> bool:
    """Fits: nothing of ``total`` negative, and every requested amount within it (absent = 0)."""
    if any(v < 0 for v in total.values()):
        return False
    return all(v <= total.get(k, 0) for k, v in candidate.items())


def max_resources(lists: Iterable[Mapping[str, int]]) -> Resources:
    out: Resources = {}
    for rl in lists:
        for k, v in rl.items():
            if k not in out or v > out[k]:
                out[k] = v
    return out


def min_resources(a: Mapping[str, int], b: Mapping[str, int]) -> Resources:
    """MinResources of two lists: the names in both, at the smaller amount."""
    return {k: min(v, b[k]) for k, v in a.items() if k in b}


def quantity(name: str, amount: int) -> str:
    """A quantity as Karpenter's messages print it (canonical, cpu from millicores). Approximate:
    upstream keeps the format of the quantities it summed; kplan prints binary units for whole
    multiples of 1024 bytes and plain decimals otherwise."""
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount >= 1024 and name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        for bits, suffix in ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki")):
            if amount and amount % (1 << bits) == 0:
                return f"{amount >> bits}{suffix}"
    return str(amount)


def string(rl: Mapping[str, int]) -> str:
    """resources.String: ``{}`` or the list as compact JSON with names sorted (pretty.Concise)."""
    if not rl:
        return "{}"
    return json.dumps({k: quantity(k, rl[k]) for k in sorted(rl)}, separators=(",", ":"))
