"""Small builders of the objects Karpenter scenarios are made of (Kubernetes dicts), shared by
the public family (family.py) and the generator (generate.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ZONES = ("test-zone-a", "test-zone-b", "test-zone-c")
ZONE_KEY = "topology.kubernetes.io/zone"
HOST_KEY = "kubernetes.io/hostname"
CT_KEY = "karpenter.sh/capacity-type"
IT_KEY = "node.kubernetes.io/instance-type"
ARCH_KEY = "kubernetes.io/arch"
OS_KEY = "kubernetes.io/os"
POOL_KEY = "karpenter.sh/nodepool"
FAMILY_KEY = "karpenter.kwok.sh/instance-family"
SIZE_KEY = "karpenter.kwok.sh/instance-size"
CPU_KEY = "karpenter.kwok.sh/instance-cpu"
MEMORY_KEY = "karpenter.kwok.sh/instance-memory"

Doc = dict[str, Any]

#: (name, cpu, memory GiB, arch, on-demand price per hour, extra resources)
BASE_TYPES: tuple[tuple[str, int, int, str, float, Mapping[str, str]], ...] = (
    ("c-2x-amd64-linux", 2, 4, "amd64", 0.085, {}),
    ("c-4x-amd64-linux", 4, 8, "amd64", 0.17, {}),
    ("c-8x-amd64-linux", 8, 16, "amd64", 0.34, {}),
    ("m-2x-amd64-linux", 2, 8, "amd64", 0.096, {}),
    ("m-4x-amd64-linux", 4, 16, "amd64", 0.192, {}),
    ("m-8x-amd64-linux", 8, 32, "amd64", 0.384, {}),
    ("r-2x-amd64-linux", 2, 16, "amd64", 0.126, {}),
    ("r-4x-amd64-linux", 4, 32, "amd64", 0.252, {}),
    ("m-2x-arm64-linux", 2, 8, "arm64", 0.077, {}),
    ("m-4x-arm64-linux", 4, 16, "arm64", 0.154, {}),
    ("c-4x-arm64-linux", 4, 8, "arm64", 0.136, {}),
    ("g-4x-amd64-linux", 4, 16, "amd64", 0.526, {"nvidia.com/gpu": "1"}),
)


def offering(price: float, zone: str, capacity_type: str, available: bool = True) -> Doc:
    return {"Price": price, "Available": available,
            "Requirements": [{"key": CT_KEY, "operator": "In", "values": [capacity_type]},
                             {"key": ZONE_KEY, "operator": "In", "values": [zone]}]}


def instance_type(name: str, cpu: int, memory_gi: int, arch: str, offerings: Sequence[Doc],
                  extra: Mapping[str, str] | None = None, pods: int | None = None) -> Doc:
    resources: dict[str, str] = {"cpu": str(cpu), "memory": f"{memory_gi}Gi"}
    if pods is not None:
        resources["pods"] = str(pods)
    resources.update(extra or {})
    return {"name": name, "offerings": list(offerings), "architecture": arch, "operatingSystems": ["linux"],
            "resources": resources}


def standard_catalog(names: Iterable[str] | None = None, zones: Sequence[str] = ZONES,
                     spot_factor: float = 0.4) -> list[Doc]:
    """The base instance types, each offered on-demand and spot in every zone (spot at
    ``spot_factor`` of the on-demand price, a little cheaper in later zones so prices differ)."""
    wanted = set(names) if names is not None else None
    out = []
    for name, cpu, mem, arch, price, extra in BASE_TYPES:
        if wanted is not None and name not in wanted:
            continue
        offs = []
        for i, z in enumerate(zones):
            offs.append(offering(round(price * spot_factor * (1 - 0.05 * i), 6), z, "spot"))
            offs.append(offering(price, z, "on-demand"))
        out.append(instance_type(name, cpu, mem, arch, offs, extra))
    return out


def type_labels(it: Doc) -> dict[str, str]:
    """The labels KWOK's instance type gives a node (its single-valued requirements)."""
    name = str(it["name"])
    res = it["resources"]
    family = name.split("-", 1)[0] if "-" in name or "." in name else name[0]
    return {IT_KEY: name, ARCH_KEY: str(it["architecture"]), OS_KEY: "linux", FAMILY_KEY: family,
            SIZE_KEY: str(res["cpu"]), CPU_KEY: str(res["cpu"]), MEMORY_KEY: str(res["memory"])}


def _minus(quantity: str, milli: int, unit: str) -> str:
    """cpu "4" - 100m -> "3900m"; memory "16Gi" - 10Mi -> "16374Mi"."""
    if unit == "cpu":
        return f"{int(quantity) * 1000 - milli}m"
    assert quantity.endswith("Gi")
    return f"{int(quantity[:-2]) * 1024 - milli}Mi"


def managed_node(name: str, pool: str, it: Doc, zone: str, capacity_type: str = "on-demand",
                 taints: Sequence[Doc] = (), labels: Mapping[str, str] | None = None) -> Doc:
    """A registered, initialized Karpenter node of instance type ``it`` (its KWOK labels,
    capacity, and allocatable = capacity - KWOK's kube-reserved 100m / 10Mi)."""
    res = it["resources"]
    capacity = {"cpu": str(res["cpu"]), "memory": str(res["memory"]), "pods": str(res.get("pods", "110"))}
    capacity.update({k: v for k, v in res.items() if k not in capacity})
    allocatable = dict(capacity, cpu=_minus(capacity["cpu"], 100, "cpu"), memory=_minus(capacity["memory"], 10, "memory"))
    lab = type_labels(it) | {POOL_KEY: pool, ZONE_KEY: zone, CT_KEY: capacity_type, HOST_KEY: name,
                             "karpenter.sh/registered": "true", "karpenter.sh/initialized": "true"}
    lab.update(labels or {})
    spec: Doc = {"providerID": f"kwok://{name}"}
    if taints:
        spec["taints"] = list(taints)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab}, "spec": spec,
            "status": {"capacity": capacity, "allocatable": allocatable}}


def plain_node(name: str, cpu: str, memory: str, zone: str, labels: Mapping[str, str] | None = None,
               taints: Sequence[Doc] = ()) -> Doc:
    """A node Karpenter does not manage."""
    lab = {HOST_KEY: name, ZONE_KEY: zone, ARCH_KEY: "amd64", OS_KEY: "linux"} | dict(labels or {})
    cap = {"cpu": cpu, "memory": memory, "pods": "110"}
    spec: Doc = {"taints": list(taints)} if taints else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab}, "spec": spec,
            "status": {"capacity": cap, "allocatable": cap}}


def in_flight_claim(name: str, pool: str, it: Doc, zone: str, capacity_type: str = "on-demand") -> Doc:
    """A launched NodeClaim whose node has not registered yet."""
    node = managed_node(name, pool, it, zone, capacity_type)
    labels = {k: v for k, v in node["metadata"]["labels"].items()
              if k not in ("karpenter.sh/registered", "karpenter.sh/initialized", HOST_KEY)}
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "labels": labels},
            "spec": {"nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
                     "requirements": [{"key": IT_KEY, "operator": "In", "values": [it["name"]]},
                                      {"key": ZONE_KEY, "operator": "In", "values": [zone]},
                                      {"key": CT_KEY, "operator": "In", "values": [capacity_type]}]},
            "status": {"providerID": f"kwok://{name}", "capacity": node["status"]["capacity"],
                       "allocatable": node["status"]["allocatable"],
                       "conditions": [{"type": "Launched", "status": "True", "reason": "Launched", "message": "",
                                       "lastTransitionTime": "2025-01-10T00:00:00Z"}]}}


def node_pool(name: str, requirements: Sequence[Doc] = (), weight: int | None = None,
              taints: Sequence[Doc] = (), limits: Mapping[str, str] | None = None,
              labels: Mapping[str, str] | None = None, startup_taints: Sequence[Doc] = (),
              node_class: tuple[str, str] = ("karpenter.kwok.sh", "KWOKNodeClass")) -> Doc:
    spec: Doc = {"nodeClassRef": {"group": node_class[0], "kind": node_class[1], "name": "default"},
                 "requirements": list(requirements)}
    if taints:
        spec["taints"] = list(taints)
    if startup_taints:
        spec["startupTaints"] = list(startup_taints)
    template: Doc = {"spec": spec}
    if labels:
        template["metadata"] = {"labels": dict(labels)}
    np: Doc = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
               "spec": {"template": template}}
    if weight is not None:
        np["spec"]["weight"] = weight
    if limits:
        np["spec"]["limits"] = dict(limits)
    return np


def req(key: str, operator: str, *values: str, min_values: int | None = None) -> Doc:
    r: Doc = {"key": key, "operator": operator}
    if values:
        r["values"] = list(values)
    if min_values is not None:
        r["minValues"] = min_values
    return r


def pod(name: str, cpu: str = "100m", memory: str = "128Mi", *, namespace: str = "default",
        labels: Mapping[str, str] | None = None, node: str | None = None,
        node_selector: Mapping[str, str] | None = None, tolerations: Sequence[Doc] = (),
        affinity: Doc | None = None, spread: Sequence[Doc] = (), owner: Doc | None = None,
        host_port: int | None = None, annotations: Mapping[str, str] | None = None) -> Doc:
    container: Doc = {"name": "c", "image": "registry.example/app:1",
                      "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if host_port is not None:
        container["ports"] = [{"containerPort": host_port, "hostPort": host_port, "protocol": "TCP"}]
    spec: Doc = {"containers": [container]}
    if node is not None:
        spec["nodeName"] = node
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if tolerations:
        spec["tolerations"] = list(tolerations)
    if affinity:
        spec["affinity"] = affinity
    if spread:
        spec["topologySpreadConstraints"] = list(spread)
    md: Doc = {"name": name, "namespace": namespace}
    if labels:
        md["labels"] = dict(labels)
    if annotations:
        md["annotations"] = dict(annotations)
    if owner:
        md["ownerReferences"] = [owner]
    p: Doc = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
    if node is not None:
        p["status"] = {"phase": "Running"}
    return p


def daemon_set(name: str, cpu: str, memory: str, *, namespace: str = "kube-system",
               tolerations: Sequence[Doc] = (), node_selector: Mapping[str, str] | None = None) -> Doc:
    spec: Doc = {"containers": [{"name": "d", "image": "registry.example/agent:1",
                                 "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if tolerations:
        spec["tolerations"] = list(tolerations)
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def toleration(key: str, value: str | None = None, effect: str = "NoSchedule") -> Doc:
    t: Doc = {"key": key, "effect": effect, "operator": "Equal" if value is not None else "Exists"}
    if value is not None:
        t["value"] = value
    return t


def taint(key: str, value: str, effect: str = "NoSchedule") -> Doc:
    return {"key": key, "value": value, "effect": effect}


def zone_spread(app: str, max_skew: int = 1, when: str = "DoNotSchedule", key: str = ZONE_KEY) -> Doc:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": app}}}


def anti_affinity(app: str, key: str = HOST_KEY) -> Doc:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": key, "labelSelector": {"matchLabels": {"app": app}}}]}}


def yaml_text(docs: Sequence[Doc]) -> str:
    """Multi-document YAML (each document in JSON flow form, which YAML reads as it is)."""
    return "".join(("---\n" if i else "") + json.dumps(d, sort_keys=True) + "\n" for i, d in enumerate(docs))


def catalog_text(catalog: Sequence[Doc]) -> str:
    return json.dumps(list(catalog), indent=1) + "\n"
