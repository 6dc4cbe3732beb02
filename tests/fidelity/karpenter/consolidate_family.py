"""The public family of Karpenter consolidation scenarios (tests/fidelity/karpenter/consolidate/),
one per rule of the disruption controller, written by

    python -m tests.fidelity.karpenter.consolidate_family [--oracle BIN]

which writes each case's objects, catalog and options, and with ``--oracle`` the oracle's answer
(expected.json). The test (tests/fidelity/test_karpenter_consolidate.py) compares kplan with it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.fidelity.karpenter.consolidation import FAMILY, run_oracle
from tests.fidelity.karpenter.oracle import CATALOG, EXPECTED, OPTIONS

Doc = dict[str, Any]
NOW = "2025-01-11T00:00:00Z"
BEFORE = "2025-01-10T00:00:00Z"
ZONE = "test-zone-a"
IT, CT, ZK, POOL = "node.kubernetes.io/instance-type", "karpenter.sh/capacity-type", "topology.kubernetes.io/zone", \
    "karpenter.sh/nodepool"

#: (name, cpu, memory GiB, on-demand price, spot price)
TYPES = (("c-2x", 2, 4, 0.085, 0.03), ("c-4x", 4, 8, 0.17, 0.06), ("c-8x", 8, 16, 0.34, 0.12),
         ("m-2x", 2, 8, 0.096, 0.035), ("m-4x", 4, 16, 0.192, 0.07), ("m-8x", 8, 32, 0.384, 0.14))


def catalog() -> list[Doc]:
    out = []
    for name, cpu, mem, od, spot in TYPES:
        offs = [{"Price": price, "Available": True,
                 "Requirements": [{"key": CT, "operator": "In", "values": [ct]},
                                  {"key": ZK, "operator": "In", "values": [ZONE]}]}
                for ct, price in (("on-demand", od), ("spot", spot))]
        out.append({"name": name, "offerings": offs, "architecture": "amd64", "operatingSystems": ["linux"],
                    "resources": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110"}})
    return out


def _type(name: str) -> tuple[str, int, int, float, float]:
    return next(t for t in TYPES if t[0] == name)


def node(name: str, it: str, *, pool: str = "default", ct: str = "on-demand", annotations: Mapping[str, str] | None = None,
         ready: bool = True, labels: Mapping[str, str] | None = None) -> Doc:
    _, cpu, mem, _, _ = _type(it)
    cap = {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110"}
    alloc = {"cpu": f"{cpu * 1000 - 100}m", "memory": f"{mem * 1024 - 10}Mi", "pods": "110"}
    lab = {IT: it, CT: ct, ZK: ZONE, POOL: pool, "kubernetes.io/hostname": name, "kubernetes.io/arch": "amd64",
           "kubernetes.io/os": "linux", "karpenter.sh/registered": "true", "karpenter.sh/initialized": "true",
           **(labels or {})}
    md: Doc = {"name": name, "labels": lab, "creationTimestamp": BEFORE}
    if annotations:
        md["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "spec": {"providerID": f"kwok://{name}"},
            "status": {"capacity": cap, "allocatable": alloc,
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                       "lastTransitionTime": BEFORE}]}}


def claim(n: Doc, *, last_pod_event: str | None = None, drifted: bool = False) -> Doc:
    """The NodeClaim of a node, initialized the day before, with its last pod event."""
    labels = {k: v for k, v in n["metadata"]["labels"].items()
              if k not in ("karpenter.sh/registered", "karpenter.sh/initialized", "kubernetes.io/hostname")}
    conds = [{"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": BEFORE}
             for t in ("Launched", "Registered", "Initialized")]
    status: Doc = {"providerID": n["spec"]["providerID"], "nodeName": n["metadata"]["name"],
                   "capacity": n["status"]["capacity"], "allocatable": n["status"]["allocatable"], "conditions": conds}
    if last_pod_event:
        status["lastPodEventTime"] = last_pod_event
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": n["metadata"]["name"], "labels": labels, "creationTimestamp": BEFORE},
            "spec": {"nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
                     "requirements": [{"key": k, "operator": "In", "values": [labels[k]]} for k in (IT, CT, ZK)]},
            "status": status}


def node_pool(name: str = "default", *, requirements: Sequence[Doc] = (), policy: str | None = None,
              after: str | None = None, budgets: Sequence[Doc] | None = None, weight: int | None = None) -> Doc:
    disruption: Doc = {}
    if policy:
        disruption["consolidationPolicy"] = policy
    if after:
        disruption["consolidateAfter"] = after
    disruption["budgets"] = list(budgets) if budgets is not None else [{"nodes": "100%"}]
    spec: Doc = {"template": {"spec": {"nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass",
                                                        "name": "default"},
                                       "requirements": list(requirements) or [
                                           {"key": CT, "operator": "In", "values": ["on-demand"]}]}},
                 "disruption": disruption}
    if weight is not None:
        spec["weight"] = weight
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


def pod(name: str, on: str | None, cpu: str = "500m", memory: str = "512Mi", *, labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None, owner: str = "ReplicaSet") -> Doc:
    md: Doc = {"name": name, "namespace": "default", "creationTimestamp": BEFORE,
               "ownerReferences": [{"apiVersion": "v1" if owner == "Node" else "apps/v1", "kind": owner,
                                    "name": f"{name}-owner", "uid": f"uid-{name}-owner", "controller": True}]}
    if labels:
        md["labels"] = dict(labels)
    if annotations:
        md["annotations"] = dict(annotations)
    spec: Doc = {"containers": [{"name": "c", "image": "registry.example/app:1",
                                 "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    p: Doc = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
    if on:
        spec["nodeName"] = on
        p["status"] = {"phase": "Running", "startTime": BEFORE}
    return p


def pdb(name: str, app: str, allowed: int) -> Doc:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": 1},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}}


def cases() -> dict[str, tuple[list[Doc], dict[str, Any]]]:
    """Scenario name -> (objects, options)."""
    c: dict[str, tuple[list[Doc], dict[str, Any]]] = {}
    opts = {"now": NOW}

    def add(name: str, docs: list[Doc], **extra: Any) -> None:
        c[name] = (docs, {**opts, **extra})

    add("empty-node-deleted", [node_pool(), node("a", "m-4x"), node("b", "m-4x"), pod("p", "b", "3")])
    add("empty-nodes-within-budget", [node_pool(budgets=[{"nodes": "1"}]), node("a", "m-4x"), node("b", "m-4x"),
                                      node("c", "m-4x"), pod("p", "c", "3")])
    add("empty-budget-zero-keeps", [node_pool(budgets=[{"nodes": "0"}]), node("a", "m-4x"), node("b", "m-4x"),
                                    pod("p", "b", "3")])
    add("multi-node-replace", [node_pool(), *(node(f"n{i}", "m-8x") for i in range(3)),
                               *(pod(f"p{i}", f"n{i}", "500m") for i in range(3))])
    add("multi-node-delete-onto-existing", [node_pool(), node("big", "m-8x"), node("a", "m-2x"), node("b", "m-2x"),
                                            pod("anchor", "big", "6"), pod("p", "a", "500m"), pod("q", "b", "500m")])
    add("single-node-cheaper-replacement", [node_pool(), node("big", "m-8x"), pod("p", "big", "1", "1Gi")])
    add("no-cheaper-type-keeps", [node_pool(), node("small", "c-2x"), pod("p", "small", "1500m", "1Gi")])
    add("pod-do-not-disrupt-keeps", [node_pool(), node("a", "m-8x"), node("b", "m-8x"),
                                     pod("p", "a", annotations={"karpenter.sh/do-not-disrupt": "true"}),
                                     pod("q", "b", "7")])
    add("node-do-not-disrupt-keeps", [node_pool(), node("a", "m-8x", annotations={"karpenter.sh/do-not-disrupt": "true"}),
                                      pod("p", "a")])
    add("pdb-blocks", [node_pool(), node("a", "m-8x"), node("b", "m-8x"), pod("p", "a", labels={"app": "web"}),
                       pod("q", "b", "7"), pdb("web", "web", 0)])
    add("pdb-allows", [node_pool(), node("a", "m-8x"), node("b", "m-8x"), pod("p", "a", labels={"app": "web"}),
                       pod("q", "b", "6"), pdb("web", "web", 1)])
    a = node("a", "m-8x")
    add("consolidate-after-not-elapsed", [node_pool(after="1h"), a, claim(a, last_pod_event="2025-01-10T23:30:00Z"),
                                          pod("p", "a")])
    add("consolidate-after-elapsed", [node_pool(after="1h"), a, claim(a, last_pod_event="2025-01-10T22:30:00Z"),
                                      pod("p", "a")])
    add("when-empty-keeps-busy-nodes", [node_pool(policy="WhenEmpty"), node("a", "m-8x"), node("b", "m-8x"),
                                        pod("p", "a")])
    add("consolidation-never", [node_pool(after="Never"), node("a", "m-8x"), node("b", "m-8x"), pod("p", "a")])
    b = node("b", "m-4x")
    add("requirements-drift-replaces", [
        node_pool(requirements=[{"key": CT, "operator": "In", "values": ["on-demand"]},
                                {"key": IT, "operator": "In", "values": ["c-2x", "c-4x", "c-8x"]}]),
        b, claim(b), pod("p", "b", "1")])
    add("spot-to-spot-disabled", [node_pool(requirements=[{"key": CT, "operator": "In", "values": ["spot"]}]),
                                  node("s", "m-8x", ct="spot"), pod("p", "s", "1")])
    add("pods-fit-nowhere-keep", [node_pool(requirements=[{"key": CT, "operator": "In", "values": ["on-demand"]},
                                                          {"key": IT, "operator": "In", "values": ["m-2x"]}]),
                                  node("a", "m-2x"), node("b", "m-2x"), pod("p", "a", "1500m"), pod("q", "b", "1500m")])
    add("two-node-pools", [node_pool("alpha"), node_pool("beta"), node("a1", "m-8x", pool="alpha"),
                           node("b1", "m-8x", pool="beta"), pod("p", "a1", "1"), pod("q", "b1", "2")])
    add("not-ready-node-uses-the-budget", [node_pool(budgets=[{"nodes": "1"}]), node("a", "m-4x", ready=False),
                                           node("b", "m-4x"), pod("p", "a", "3")])
    add("daemonset-pods-leave-the-node-empty", [node_pool(), node("a", "m-4x"), node("b", "m-4x"),
                                                pod("ds-a", "a", "100m", owner="DaemonSet"), pod("p", "b", "3")])
    add("balanced-approves-a-good-move", [node_pool(policy="Balanced"), *(node(f"n{i}", "m-8x") for i in range(3)),
                                          *(pod(f"p{i}", f"n{i}", "500m") for i in range(3))])
    add("balanced-weighs-disruption", [node_pool(policy="Balanced"), node("busy", "m-2x"), node("big", "m-8x"),
                                       *(pod(f"b{i}", "busy", "200m") for i in range(5)), pod("q", "big", "3")])
    # found by the differential (consolidate_differential.py): pods moved in an earlier pass go to
    # the next simulation in their input order, as the oracle's UIDs order them (seeds 9 and 49)
    # seed 1020: Balanced's total disruption counts a non-candidate node's pods (the oracle feeds the Nodes
    # to cluster state again after the NodeClaims' update, which drops their costs upstream)
    from tests.fidelity.karpenter.consolidate_differential import generate
    for seed in (9, 49, 1020):
        docs, gen_opts = generate(seed)
        c[f"differential-seed-{seed}"] = (docs, gen_opts)
    return c


def write(folder: Path, docs: list[Doc], opts: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "objects.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=1) + "\n")
    (folder / CATALOG).write_text(json.dumps(catalog(), indent=1) + "\n")
    (folder / OPTIONS).write_text(json.dumps(opts) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--oracle", help="the karpenter-oracle binary: also write expected.json")
    args = ap.parse_args()
    for name, (docs, opts) in cases().items():
        folder = FAMILY / name
        write(folder, docs, opts)
        if args.oracle:
            result = run_oracle(Path(args.oracle), folder)
            (folder / EXPECTED).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        print(name)


if __name__ == "__main__":
    main()
