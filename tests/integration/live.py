"""Builders for the live-cluster tests: a small cluster's objects and kubeconfig files."""

from __future__ import annotations

import base64
import json
import os
from typing import Any


def node(name: str, zone: str, cpu: str = "4", memory: str = "8Gi") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
                         "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
                       "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, *, ns: str = "default", node_name: str = "", cpu: str = "500m", phase: str = "",
        app: str = "web", priority_class: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx",
                                            "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if priority_class:
        spec["priorityClassName"] = priority_class
    md: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "labels": {"app": app},
                          "creationTimestamp": "2025-01-01T00:00:00Z",
                          "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "a"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec,
            "status": {"phase": phase or ("Running" if node_name else "Pending")}}


def small_cluster() -> list[dict[str, Any]]:
    """Three nodes, running pods, pending pods that fit, one that does not, a finished pod, and one
    object of most other kinds."""
    objs: list[dict[str, Any]] = [node(f"node-{i}", "zone-a" if i < 2 else "zone-b") for i in range(3)]
    objs += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {"env": n}}}
             for n in ("default", "team-a")]
    objs += [pod(f"run-{i}", node_name=f"node-{i % 3}", cpu="1500m") for i in range(5)]
    objs += [pod("done", node_name="node-0", cpu="3", phase="Succeeded")]
    objs += [pod(f"pending-{i}", ns="team-a", cpu="700m", app="api") for i in range(4)]
    objs += [pod("huge", ns="team-a", cpu="64", app="batch", priority_class="high")]
    objs += [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "team-a"},
         "spec": {"selector": {"app": "api"}}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "namespace": "default"},
         "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
         "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "web"}}},
         "status": {"disruptionsAllowed": 1}},
        {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
         "metadata": {"name": "web", "namespace": "default"},
         "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1"},
                  "minReplicas": 2, "maxReplicas": 8},
         "status": {"currentReplicas": 5, "desiredReplicas": 5}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
         "value": 1000},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "standard"},
         "provisioner": "kubernetes.io/no-provisioner"},
        {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "csi-pv-1-node-0"},
         "spec": {"attacher": "csi.example.com", "nodeName": "node-0", "source": {"persistentVolumeName": "pv-1"}},
         "status": {"attached": True}},
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
         "metadata": {"name": "cap-zone-a", "namespace": "kube-system"}, "storageClassName": "standard",
         "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "zone-a"}}, "capacity": "100Gi"},
    ]
    objs += dra_objects()
    return objs


def dra_objects(version: str = "v1") -> list[dict[str, Any]]:
    """A GPU class, node-0's slice of two GPUs, a claim template and an allocated claim, in the
    shape of resource.k8s.io/``version`` (v1beta1 nests a device's fields under ``basic`` and
    puts a request's fields on the request)."""
    api = f"resource.k8s.io/{version}"
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "h100"}},
                "capacity": {"memory": {"value": "80Gi"}}} for i in range(2)]
    if version == "v1beta1":
        devices = [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}} for d in devices]
    request: dict[str, Any] = {"deviceClassName": "gpu.example.com"}
    request = request if version == "v1beta1" else {"exactly": request}
    return [
        {"apiVersion": api, "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": api, "kind": "ResourceSlice", "metadata": {"name": "node-0-gpu.example.com-x7k2p"},
         "spec": {"driver": "gpu.example.com", "nodeName": "node-0",
                  "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": 1}, "devices": devices}},
        {"apiVersion": api, "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu", "namespace": "team-a"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", **request}]}}}},
        {"apiVersion": api, "kind": "ResourceClaim", "metadata": {"name": "shared-gpu", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", **request}]}},
         "status": {"allocation": {"devices": {"results": [
             {"request": "gpu", "driver": "gpu.example.com", "pool": "node-0", "device": "gpu-0"}]},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["node-0"]}]}]}}}},
    ]


def _b64(path: str) -> str:
    with open(path, "rb") as fh:
        return base64.b64encode(fh.read()).decode()


def kubeconfig(folder: str, server: str, *, token: str | None = None, ca: str | None = None,
               client: tuple[str, str] | None = None, context: str = "test", name: str = "config",
               extra_contexts: tuple[str, ...] = ()) -> str:
    """A kubeconfig file (JSON is YAML) with one cluster and user and ``context`` as current-context."""
    cluster: dict[str, Any] = {"server": server}
    if ca is not None:
        cluster["certificate-authority-data"] = _b64(ca)
    user: dict[str, Any] = {}
    if token is not None:
        user["token"] = token
    if client is not None:
        user["client-certificate-data"] = _b64(client[0])
        user["client-key-data"] = _b64(client[1])
    doc = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": "c", "cluster": cluster}], "users": [{"name": "u", "user": user}],
           "contexts": [{"name": c, "context": {"cluster": "c", "user": "u"}} for c in (context, *extra_contexts)],
           "current-context": context}
    path = os.path.join(folder, name)
    with open(path, "w") as fh:
        json.dump(doc, fh)
    return path
