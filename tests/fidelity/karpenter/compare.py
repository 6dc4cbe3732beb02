"""Comparing two provisioning results in the oracle's JSON (oracle/karpenter/README.md).

Everything Karpenter decides is compared, in Karpenter's order: each new NodeClaim (its NodePool,
its pods in packing order, its instance-type options in order with their prices, its
requirements and requests, the launch), the existing nodes that get pods, each pod's error, and
the pods Karpenter ignores. Prices are compared to 1e-9.
"""

from __future__ import annotations

from typing import Any

PRICE_TOLERANCE = 1e-9


def _prices_equal(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(float(a) - float(b)) <= PRICE_TOLERANCE * max(1.0, abs(float(a)))
    return bool(a == b)


def _requirements(reqs: Any) -> list[dict[str, Any]]:
    """Requirements with an absent minValues and a null one alike, values sorted."""
    out = []
    for r in reqs or []:
        d = {"key": r["key"], "operator": r["operator"], "values": sorted(r.get("values") or [])}
        if r.get("minValues") is not None:
            d["minValues"] = r["minValues"]
        out.append(d)
    return sorted(out, key=lambda d: (d["key"], d["operator"]))


def _requests(requests: Any) -> dict[str, int]:
    """Requests as kplan's integers (millicores for cpu), whether given as quantities or integers."""
    from kplan.model.quantity import resource_value

    return {k: v if isinstance(v, int) else resource_value(k, v) for k, v in (requests or {}).items()}


def _claim_differences(i: int, want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    out = []
    where = f"newNodeClaims[{i}]"
    for key in ("nodePool", "pods"):
        if want.get(key) != got.get(key):
            out.append(f"{where}.{key}: oracle {want.get(key)!r}, kplan {got.get(key)!r}")
    if _requirements(want.get("requirements")) != _requirements(got.get("requirements")):
        out.append(f"{where}.requirements: oracle {_requirements(want.get('requirements'))}, "
                   f"kplan {_requirements(got.get('requirements'))}")
    if _requests(want.get("requests")) != _requests(got.get("requests")):
        out.append(f"{where}.requests: oracle {_requests(want.get('requests'))}, kplan {_requests(got.get('requests'))}")
    wits, gits = want.get("instanceTypes") or [], got.get("instanceTypes") or []
    if [t["name"] for t in wits] != [t["name"] for t in gits]:
        out.append(f"{where}.instanceTypes: oracle {[t['name'] for t in wits]}, kplan {[t['name'] for t in gits]}")
    else:
        for w, g in zip(wits, gits, strict=True):
            if not _prices_equal(w.get("price"), g.get("price")):
                out.append(f"{where}.instanceTypes[{w['name']}].price: oracle {w.get('price')}, kplan {g.get('price')}")
    wl, gl = want.get("launch") or {}, got.get("launch") or {}
    for key in ("capacityType", "instanceType", "zone", "ec2Chooses", "error"):
        if wl.get(key) != gl.get(key):
            out.append(f"{where}.launch.{key}: oracle {wl.get(key)!r}, kplan {gl.get(key)!r}")
    if not _prices_equal(wl.get("price"), gl.get("price")):
        out.append(f"{where}.launch.price: oracle {wl.get('price')}, kplan {gl.get('price')}")
    wo = [(o["instanceType"], o["zone"]) for o in wl.get("options") or []]
    go = [(o["instanceType"], o["zone"]) for o in gl.get("options") or []]
    if wo != go:
        out.append(f"{where}.launch.options: oracle {wo}, kplan {go}")
    return out


def compare(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """The differences between the oracle's result ``want`` and ``got``, one line each."""
    out: list[str] = []
    wc, gc = want.get("newNodeClaims") or [], got.get("newNodeClaims") or []
    if len(wc) != len(gc):
        out.append(f"newNodeClaims: oracle {len(wc)} ({[c['pods'] for c in wc]}), "
                   f"kplan {len(gc)} ({[c['pods'] for c in gc]})")
    else:
        for i, (w, g) in enumerate(zip(wc, gc, strict=True)):
            out += _claim_differences(i, w, g)
    we = [(e["node"], e["pods"]) for e in want.get("existingNodes") or []]
    ge = [(e["node"], e["pods"]) for e in got.get("existingNodes") or []]
    if we != ge:
        out.append(f"existingNodes: oracle {we}, kplan {ge}")
    for key in ("podErrors", "ignored"):
        wp = {e["pod"]: e["error"] for e in want.get(key) or []}
        gp = {e["pod"]: e["error"] for e in got.get(key) or []}
        for pod in sorted(set(wp) | set(gp)):
            if wp.get(pod) != gp.get(pod):
                out.append(f"{key}[{pod}]: oracle {wp.get(pod)!r}, kplan {gp.get(pod)!r}")
    return out
