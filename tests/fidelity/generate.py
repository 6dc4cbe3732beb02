"""Seeded scenarios in the conformance suite's shape, with every feature its families use.

``generate(seed)`` is a pure function of the seed (and of the optional size and feature
overrides): the same seed gives the same files byte for byte. A scenario turns on a random
subset of FEATURES (at least one) and has 3 to 500 nodes (most are small: the small ones find
differences, and shrink, fastest). The objects copy the conformance scenarios' forms, so both
kplan and the oracle read them, and they keep the API server's rules: DNS names, extended
resources with equal requests and limits, tolerationSeconds only with NoExecute, minDomains only
with DoNotSchedule, matchLabelKeys apart from the selector's keys, weights in 1..100, running
pods that fit their nodes, claims allocated from devices their node's slices have (each device
once), bound PV/PVC pairs that name each other, PDB status that counts the pods it selects.

    python -m tests.fidelity.generate --seed 7 --count 3 --out /tmp/scenarios
"""

from __future__ import annotations

import argparse
import hashlib
import random
from pathlib import Path

from tests.fidelity.scenario import Doc, Scenario

FEATURES = ("resources", "placement", "affinity", "spread", "priority", "preemption", "images", "owners",
            "dra", "storage", "config")
APPS = ("web", "api", "db", "cache", "batch", "ml")
TEAMS = ("blue", "red")
IMAGES = {"registry.example/web:1.0": 419430400, "registry.example/api:2.3": 262144000,
          "registry.example/db:14": 1572864000, "registry.example/cache:7": 62914560,
          "registry.example/ml:0.9": 3145728000, "registry.example/tiny:1": 5242880}
APP_IMAGE = {"web": "registry.example/web:1.0", "api": "registry.example/api:2.3", "db": "registry.example/db:14",
             "cache": "registry.example/cache:7", "batch": "registry.example/tiny:1", "ml": "registry.example/ml:0.9"}
CPU = (50, 100, 150, 250, 300, 500, 750, 1000, 1500, 2000, 3000, 4500)           # milli-cpu
MEM = (64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 6144)          # MiB
PRIORITY_CLASSES = {"low": 100, "mid": 1000, "high": 100000, "high-nopreempt": 100000}
GPU_MODELS = {"h100": "80Gi", "a100": "40Gi", "l4": "24Gi"}
DRIVER = "ebs.csi.example.com"
ZONE_KEY = "topology.kubernetes.io/zone"
HOST_KEY = "kubernetes.io/hostname"

#: ResourceClaimTemplate name → its spec.spec (as the dra scenarios have them)
TEMPLATES: dict[str, Doc] = {
    "gpu-one": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    "gpu-pair-numa": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}],
                                  "constraints": [{"matchAttribute": "gpu.example.com/numa"}]}},
    "gpu-n": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 3}}]}},
    "h100-one": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu-h100",
                                                                     "allocationMode": "ExactCount", "count": 1}}]}},
    "big-mem-2": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu-40gi", "count": 2}}]}},
    "l4-all": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu-l4", "allocationMode": "All"}}]}},
    "gpu-low-index": {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com", "count": 1,
        "selectors": [{"cel": {"expression": "device.attributes[\"gpu.example.com\"].index < 1"}}]}}]}},
    "gpu-same-model": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}],
                                   "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/model"}]}},
    "gpu-prio": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "h100", "deviceClassName": "gpu-h100", "count": 2},
        {"name": "a100", "deviceClassName": "gpu-a100", "allocationMode": "ExactCount", "count": 2},
        {"name": "any", "deviceClassName": "gpu.example.com"}]}]}},
    "gpu-nic": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}},
                                         {"name": "nic", "exactly": {"deviceClassName": "nic-rdma"}}],
                            "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "dra.example.com/numa"}]}},
    "nic-one": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "nic.example.com"}}]}},
    "gpu-newdrv": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu-driver-1.2"}}]}},
    "gpu-admin-all": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                                          "allocationMode": "All", "adminAccess": True}}]}},
}
DEVICE_CLASSES = {
    "gpu.example.com": ["device.driver == \"gpu.example.com\""],
    "gpu-h100": ["device.driver == \"gpu.example.com\"", "device.attributes[\"gpu.example.com\"].model == \"h100\""],
    "gpu-a100": ["device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].model == \"a100\""],
    "gpu-l4": ["device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].model == \"l4\""],
    "gpu-40gi": ["device.driver == \"gpu.example.com\" && "
                 "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"],
    "gpu-driver-1.2": ["device.driver == \"gpu.example.com\"",
                       "device.attributes[\"gpu.example.com\"].driverVersion.isGreaterThan(semver(\"1.2.0\"))"],
    "nic.example.com": ["device.driver == \"nic.example.com\""],
    "nic-rdma": ["device.driver == \"nic.example.com\" && device.attributes[\"nic.example.com\"].rdma == true"],
}
CONFIGS: list[Doc] = [
    {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}],
        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}}}]},
    {"plugins": {"score": {"disabled": [{"name": "PodTopologySpread"}, {"name": "TaintToleration"}]}}},
    {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]},
    {"plugins": {"score": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 5},
                                       {"name": "ImageLocality", "weight": 3}]}}},
    {"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 10, "ignorePreferredTermsOfExistingPods": True}}]},
    {"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE_KEY, "whenUnsatisfiable": "ScheduleAnyway"}]}}]},
]


def cpu_text(m: int) -> str:
    return str(m // 1000) if m % 1000 == 0 else f"{m}m"


def mem_text(mi: int) -> str:
    return f"{mi // 1024}Gi" if mi % 1024 == 0 else f"{mi}Mi"


def suffix(*parts: str) -> str:
    """Five characters of the API server's name alphabet, stable for the parts."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:8], "big")
    out = ""
    for _ in range(5):
        h, r = divmod(h, len(alphabet))
        out += alphabet[r]
    return out


class _Node:
    def __init__(self, name: str, zone: str, cpu: int, mem: int, pods: int, gpus: int) -> None:
        self.name, self.zone = name, zone
        self.cpu, self.mem, self.pods, self.gpus = cpu, mem, pods, gpus
        self.labels: dict[str, str] = {}
        self.taints: list[Doc] = []
        self.unschedulable = False
        self.devices: list[tuple[str, str, int]] = []   # (device, model, numa) of gpu.example.com
        self.nics: list[str] = []
        self.free_devices: list[str] = []
        self.attach_limit: int | None = None
        self.has_csi_node = False

    def fits(self, cpu: int, mem: int, gpus: int = 0) -> bool:
        return self.cpu >= cpu and self.mem >= mem and self.pods >= 1 and self.gpus >= gpus

    def take(self, cpu: int, mem: int, gpus: int = 0) -> None:
        self.cpu -= cpu
        self.mem -= mem
        self.pods -= 1
        self.gpus -= gpus


class Generator:
    """One scenario; ``build()`` returns it. Everything random comes from ``self.rng``."""

    def __init__(self, seed: int, nodes: int | None = None, features: tuple[str, ...] | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        rng = self.rng
        if features is None:
            chosen = [f for f in FEATURES if rng.random() < (0.25 if f in ("dra", "storage", "config") else 0.45)]
            features = tuple(chosen or [rng.choice(FEATURES)])
        self.features = frozenset(features)
        if nodes is None:
            r = rng.random()
            nodes = (rng.randint(3, 10) if r < 0.55 else rng.randint(11, 40) if r < 0.85
                     else rng.randint(41, 150) if r < 0.96 else rng.randint(151, 500))
        self.n = max(1, nodes)
        self.cluster: list[Doc] = []
        self.pending: list[Doc] = []
        self.nodes: list[_Node] = []
        self.zones = [f"zone-{c}" for c in "abcde"[: (3 if self.n < 60 else rng.choice((3, 4, 5)))]]
        self.pvc_seq = 0
        self.pv_seq = 0
        self.running_claims: list[tuple[str, str]] = []   # (claim, node) of bound claims running pods use
        self.rwop_in_use: list[str] = []
        self.shared_claims: list[tuple[str, str]] = []    # (claim, node) of allocated shared DRA claims
        self.running: list[Doc] = []

    def on(self, feature: str) -> bool:
        return feature in self.features

    # -- the whole scenario ------------------------------------------------------------------

    def build(self) -> Scenario:
        rng = self.rng
        self.cluster += self.namespaces()
        if self.on("priority") or self.on("preemption") or self.on("dra") or self.on("storage") or rng.random() < 0.3:
            self.cluster += self.priority_classes()
        nodes = [self.node(i) for i in range(self.n)]
        self.cluster += nodes
        if self.on("dra"):
            self.cluster += self.dra_objects()
        if self.on("storage"):
            self.cluster += self.storage_objects()
        self.cluster += self.running_pods()
        if self.on("priority") or self.on("preemption"):
            self.cluster += self.pdbs()
        if self.on("owners") or rng.random() < 0.15:
            self.cluster += self.owners()
        count = self.pending_count()
        self.pending = [self.pending_pod(1000000 + i) for i in range(count)]
        features = ",".join(sorted(self.features))
        return Scenario(f"gen-{self.seed}", self.cluster, self.pending, self.config(),
                        notes={"seed": self.seed, "nodes": self.n, "features": features})

    def pending_count(self) -> int:
        rng = self.rng
        if self.n <= 10:
            return rng.randint(4, 30)
        if self.n <= 40:
            return rng.randint(10, 60)
        return rng.randint(self.n // 4, min(400, self.n * 2))

    def config(self) -> Doc:
        rng = self.rng
        profile: Doc = {"schedulerName": "default-scheduler"}
        doc: Doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        if self.n >= 100 and rng.random() < 0.5:
            doc["parallelism"] = 1          # the adaptive percentage, deterministic with one worker
        else:
            doc["percentageOfNodesToScore"] = 100
        if self.on("config"):
            profile.update(rng.choice(CONFIGS))
        doc["profiles"] = [profile]
        return doc

    def namespaces(self) -> list[Doc]:
        out = []
        for name, env in (("default", "nonprod"), ("prod", "prod"), ("dev", "nonprod")):
            labels = {"kubernetes.io/metadata.name": name, "env": env}
            if name == "default" and self.on("dra"):
                labels["resource.kubernetes.io/admin-access"] = "true"
            out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
        return out

    def priority_classes(self) -> list[Doc]:
        out: list[Doc] = []
        for name, value in PRIORITY_CLASSES.items():
            pc: Doc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
            if name.endswith("nopreempt"):
                pc["preemptionPolicy"] = "Never"
            out.append(pc)
        if self.rng.random() < 0.1:
            out.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "default-tier"},
                        "value": 500, "globalDefault": True})
        return out

    # -- nodes -------------------------------------------------------------------------------

    def node(self, i: int) -> Doc:
        rng = self.rng
        name = f"node-{i:05d}"
        zone = self.zones[i % len(self.zones)] if rng.random() < 0.8 else rng.choice(self.zones)
        cpu = rng.choice((2, 4, 8, 16))
        mem = rng.choice((4, 8, 16, 32))
        pods = rng.choice((8, 20, 110) if (self.on("preemption") or self.on("resources")) else (20, 110, 110))
        gpus = rng.choice((0, 0, 1, 2, 4)) if self.on("resources") or self.on("placement") else 0
        nd = _Node(name, zone, cpu * 1000, mem * 1024, pods, gpus)
        self.nodes.append(nd)
        labels = {HOST_KEY: name, "kubernetes.io/os": "linux", ZONE_KEY: zone,
                  "topology.kubernetes.io/region": "region-1",
                  "node.kubernetes.io/instance-type": rng.choice(("m.large", "m.xlarge", "c.xlarge"))}
        if self.on("placement") or self.on("affinity") or rng.random() < 0.2:
            if rng.random() < 0.7:
                labels["disktype"] = rng.choice(("ssd", "hdd"))
        if gpus:
            labels["gpu-count"] = str(gpus)
        capacity = {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": str(pods), "ephemeral-storage": "100Gi"}
        if gpus:
            capacity["example.com/gpu"] = str(gpus)
        spec: Doc = {}
        if self.on("placement") or self.on("priority") or rng.random() < 0.15:
            r = rng.random()
            if r < 0.12:
                nd.taints.append({"key": "dedicated", "value": rng.choice(("ml", "db")), "effect": "NoSchedule"})
            elif r < 0.22:
                nd.taints.append({"key": "dedicated", "value": "ml", "effect": "PreferNoSchedule"})
            elif r < 0.32:
                nd.taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
            elif r < 0.36:
                nd.taints.append({"key": "maintenance", "effect": "NoExecute"})
            if rng.random() < 0.08:
                nd.unschedulable = True
                spec["unschedulable"] = True
        if self.on("dra") and (rng.random() < 0.5 or i == 0):
            labels["gpu.example.com/present"] = "true"
            if rng.random() < 0.5:
                nd.taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
            model = rng.choice(tuple(GPU_MODELS))
            count = rng.choice((1, 2, 4, 4, 8))
            nd.devices = [(f"gpu-{k}", model if rng.random() < 0.8 else rng.choice(tuple(GPU_MODELS)), k * 2 // count)
                          for k in range(count)]
            nd.free_devices = [d for d, _, _ in nd.devices]
            if rng.random() < 0.4:
                nd.nics = [f"nic-{k}" for k in range(rng.choice((1, 2)))]
        if nd.taints:
            spec["taints"] = nd.taints
        nd.labels = labels
        status: Doc = {"capacity": capacity, "allocatable": dict(capacity),
                       "conditions": [{"type": "Ready", "status": "True"}]}
        if self.on("images") or rng.random() < 0.1:
            names = rng.sample(sorted(IMAGES), rng.randint(0, 4))
            status["images"] = [{"names": [im], "sizeBytes": IMAGES[im]} for im in names]
        doc: Doc = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "status": status}
        if spec:
            doc["spec"] = spec
        return doc

    # -- running pods ------------------------------------------------------------------------

    def running_pods(self) -> list[Doc]:
        rng = self.rng
        out: list[Doc] = []
        full = self.on("preemption")
        seq = 0
        for nd in self.nodes:
            if nd.unschedulable and rng.random() < 0.5:
                continue
            want = rng.randint(0, 6 if full else 3)
            for _ in range(want):
                cpu = rng.choice(CPU[:10] if not full else CPU[4:])
                mem = rng.choice(MEM[:9] if not full else MEM[3:])
                if not nd.fits(cpu, mem):
                    continue
                app = rng.choice(APPS)
                ns = "default" if not self.on("affinity") or rng.random() < 0.7 else rng.choice(("prod", "dev"))
                name = f"{app}-{seq:07d}"
                seq += 1
                pod = self.pod_doc(name, ns, app, [self.container("c0", app, cpu, mem)])
                spec = pod["spec"]
                spec["nodeName"] = nd.name
                gpus = 1 if nd.gpus and rng.random() < 0.3 else 0
                if gpus:
                    res = spec["containers"][0].setdefault("resources", {})
                    res.setdefault("requests", {})["example.com/gpu"] = "1"
                    res.setdefault("limits", {})["example.com/gpu"] = "1"
                if "PriorityClass" in self.kinds() and rng.random() < 0.8:
                    spec["priorityClassName"] = rng.choice(("low", "low", "mid", "high"))
                tolerations = self.tolerations_for(nd)
                if tolerations:
                    spec["tolerations"] = tolerations
                if self.on("placement") and rng.random() < 0.3:
                    spec["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": rng.choice((8080, 9090)),
                                                       "protocol": "TCP"}]
                nd.take(cpu, mem, gpus)
                extra: list[Doc] = []
                if nd.free_devices and rng.random() < 0.5:
                    extra += self.running_claim(pod, nd)
                if self.on("storage") and rng.random() < 0.5:
                    extra += self.running_volume(pod, nd)
                pod["status"] = {"phase": "Running", **pod.get("status", {})}
                self.running.append(pod)
                out.append(pod)
                out += extra
        return out

    def kinds(self) -> set[str]:
        return {d["kind"] for d in self.cluster}

    def tolerations_for(self, nd: _Node) -> list[Doc]:
        out = []
        for t in nd.taints:
            if t["effect"] == "PreferNoSchedule":
                continue
            tol: Doc = {"key": t["key"], "operator": "Exists", "effect": t["effect"]}
            out.append(tol)
        return out

    def running_claim(self, pod: Doc, nd: _Node) -> list[Doc]:
        """A running pod's allocated claim from a template (linked through its status) or, now
        and then, a shared claim that pending pods name too."""
        rng = self.rng
        name, ns = pod["metadata"]["name"], pod["metadata"]["namespace"]
        if ns != "default":
            return []
        uid = f"uid-{name}"
        pod["metadata"]["uid"] = uid
        device = nd.free_devices.pop(0)
        spec = pod["spec"]
        result = [{"request": "gpu", "driver": "gpu.example.com", "pool": nd.name, "device": device}]
        allocation = {"devices": {"results": result}, "nodeSelector": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [nd.name]}]}]}}
        claim_spec = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
        reserved = [{"resource": "pods", "name": name, "uid": uid}]
        if rng.random() < 0.25:
            cname = f"shared-gpu-{len(self.shared_claims)}"
            self.shared_claims.append((cname, nd.name))
            spec["resourceClaims"] = [{"name": "shared", "resourceClaimName": cname}]
            meta: Doc = {"name": cname, "namespace": ns, "finalizers": ["resource.kubernetes.io/delete-protection"]}
        else:
            cname = f"{name}-gpu-{suffix(name, 'gpu')}"
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu-one"}]
            pod["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": cname}]}
            meta = {"name": cname, "namespace": ns, "finalizers": ["resource.kubernetes.io/delete-protection"],
                    "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid,
                                         "controller": True, "blockOwnerDeletion": True}]}
        return [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta, "spec": claim_spec,
                 "status": {"allocation": allocation, "reservedFor": reserved}}]

    # -- DRA ---------------------------------------------------------------------------------

    def dra_objects(self) -> list[Doc]:
        out: list[Doc] = []
        for name, exprs in DEVICE_CLASSES.items():
            out.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                        "spec": {"selectors": [{"cel": {"expression": e}} for e in exprs]}})
        for nd in self.nodes:
            if nd.devices:
                devices = []
                for dev, model, numa in nd.devices:
                    index = int(dev.split("-")[1])
                    version = "2.0.1" if model == "h100" else self.rng.choice(("1.1.0", "1.3.0"))
                    devices.append({"name": dev, "attributes": {
                        "model": {"string": model}, "index": {"int": index}, "driverVersion": {"version": version},
                        "numa": {"int": numa}, "dra.example.com/numa": {"int": numa}},
                        "capacity": {"memory": {"value": GPU_MODELS[model]}}})
                out.append(self.slice(nd.name, "gpu.example.com", devices))
            if nd.nics:
                devices = [{"name": nic, "attributes": {"rdma": {"bool": k == 0}, "dra.example.com/numa": {"int": k}}}
                           for k, nic in enumerate(nd.nics)]
                out.append(self.slice(nd.name, "nic.example.com", devices))
        for name, spec in TEMPLATES.items():
            out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                        "metadata": {"name": name, "namespace": "default"}, "spec": {"spec": spec}})
        return out

    @staticmethod
    def slice(node: str, driver: str, devices: list[Doc]) -> Doc:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{driver}"},
                "spec": {"driver": driver, "nodeName": node,
                         "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}

    # -- storage -----------------------------------------------------------------------------

    def storage_objects(self) -> list[Doc]:
        rng = self.rng
        capacity_aware = rng.random() < 0.3
        out: list[Doc] = [{"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": DRIVER},
                           "spec": {"attachRequired": rng.random() < 0.85, "podInfoOnMount": False,
                                    "storageCapacity": capacity_aware, "volumeLifecycleModes": ["Persistent", "Ephemeral"]}}]
        classes = [("ebs-wffc", DRIVER, "WaitForFirstConsumer"), ("ebs-immediate", DRIVER, "Immediate"),
                   ("local-storage", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"),
                   ("manual", "kubernetes.io/no-provisioner", "Immediate")]
        for name, provisioner, mode in classes:
            sc: Doc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                       "provisioner": provisioner, "volumeBindingMode": mode, "reclaimPolicy": "Delete"}
            if provisioner == DRIVER:
                sc["parameters"] = {"type": "gp3"}
            out.append(sc)
        allowed = sorted(rng.sample(self.zones, 2))
        out.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "ebs-wffc-zoned"},
                    "provisioner": DRIVER, "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete",
                    "parameters": {"type": "gp3"},
                    "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE_KEY, "values": allowed}]}]})
        if capacity_aware:
            for zone in self.zones:
                cap: Doc = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                            "metadata": {"name": f"csisc-ebs-wffc-{zone}", "namespace": "kube-system"},
                            "storageClassName": "ebs-wffc", "nodeTopology": {"matchLabels": {ZONE_KEY: zone}},
                            "capacity": rng.choice(("1Ti", "200Gi", "60Gi", "10Gi"))}
                if rng.random() < 0.3:
                    cap["maximumVolumeSize"] = "50Gi"
                out.append(cap)
        for nd in self.nodes:
            if rng.random() < 0.1:
                continue
            nd.has_csi_node = True
            drv: Doc = {"name": DRIVER, "nodeID": f"i-{nd.name}", "topologyKeys": [ZONE_KEY]}
            if rng.random() < 0.8:
                nd.attach_limit = rng.choice((1, 2, 2, 3, 4))
                drv["allocatable"] = {"count": nd.attach_limit}
            out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": nd.name},
                        "spec": {"drivers": [drv]}})
            if rng.random() < 0.12:
                # an attachment no pod uses (its pod is gone; the volume is still attached)
                pv = self.pv_name()
                out.append(self.pv(pv, "ebs-wffc", "10Gi", "ReadWriteOnce", zone=nd.zone,
                                   claim=("default", f"gone-{pv}"), phase="Released"))
                out.append(self.attachment(pv, nd.name))
        # static volumes free for the pending pods' claims, and local disks
        for _ in range(rng.randint(0, max(2, len(self.nodes) // 3))):
            zone = rng.choice(self.zones)
            out.append(self.pv(self.pv_name(), "ebs-wffc", rng.choice(("10Gi", "50Gi", "100Gi")), "ReadWriteOnce",
                               zone=zone, claim=None))
        for nd in rng.sample(self.nodes, min(len(self.nodes), rng.randint(0, 4))):
            out.append(self.pv(self.pv_name(), "local-storage", rng.choice(("100Gi", "200Gi")), "ReadWriteOnce",
                               host=nd.name, claim=None))
        return out

    def pv_name(self) -> str:
        self.pv_seq += 1
        return f"pv-{self.pv_seq:03d}"

    def claim_name(self, kind: str) -> str:
        self.pvc_seq += 1
        return f"{kind}-{self.pvc_seq:03d}"

    @staticmethod
    def pv(name: str, sc: str, size: str, mode: str, *, zone: str | None = None, host: str | None = None,
           claim: tuple[str, str] | None, phase: str | None = None) -> Doc:
        spec: Doc = {"capacity": {"storage": size}, "accessModes": [mode], "persistentVolumeReclaimPolicy": "Retain",
                     "storageClassName": sc}
        if host:
            spec["local"] = {"path": f"/mnt/disks/{name}"}
            key, value = HOST_KEY, host
        else:
            spec["csi"] = {"driver": DRIVER, "volumeHandle": f"vol-{name}", "fsType": "ext4"}
            key, value = ZONE_KEY, zone or "zone-a"
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}}
        if claim:
            spec["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": claim[0],
                                "name": claim[1], "uid": f"pvc-uid-{claim[1]}"}
        return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec,
                "status": {"phase": phase or ("Bound" if claim else "Available")}}

    @staticmethod
    def pvc(name: str, sc: str, size: str, mode: str, volume: str | None = None, ns: str = "default") -> Doc:
        meta: Doc = {"name": name, "namespace": ns, "uid": f"pvc-uid-{name}"}
        spec: Doc = {"accessModes": [mode], "resources": {"requests": {"storage": size}}, "storageClassName": sc}
        status: Doc = {"phase": "Pending"}
        if volume:
            meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
            spec["volumeName"] = volume
            status = {"phase": "Bound", "accessModes": [mode], "capacity": {"storage": size}}
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec, "status": status}

    @staticmethod
    def attachment(pv: str, node: str) -> Doc:
        return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": f"csi-{pv}-{node}"},
                "spec": {"attacher": DRIVER, "nodeName": node, "source": {"persistentVolumeName": pv}},
                "status": {"attached": True}}

    def running_volume(self, pod: Doc, nd: _Node) -> list[Doc]:
        """A bound claim of a running pod, its volume (CSI in the node's zone, or a local disk of
        the node) and, for a CSI one, mostly its attachment."""
        rng = self.rng
        ns = pod["metadata"]["namespace"]
        local = rng.random() < 0.2
        mode = "ReadWriteOncePod" if rng.random() < 0.2 else "ReadWriteOnce"
        claim, pv = self.claim_name("claim"), self.pv_name()
        size = rng.choice(("10Gi", "20Gi"))
        out: list[Doc] = []
        if local:
            out.append(self.pv(pv, "local-storage", size, "ReadWriteOnce", host=nd.name, claim=(ns, claim)))
            out.append(self.pvc(claim, "local-storage", size, "ReadWriteOnce", pv, ns))
        else:
            sc = rng.choice(("ebs-wffc", "ebs-immediate"))
            out.append(self.pv(pv, sc, size, mode, zone=nd.zone, claim=(ns, claim)))
            out.append(self.pvc(claim, sc, size, mode, pv, ns))
            if nd.has_csi_node and rng.random() < 0.85:
                out.append(self.attachment(pv, nd.name))
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        if ns == "default":
            if mode == "ReadWriteOncePod":
                self.rwop_in_use.append(claim)
            else:
                self.running_claims.append((claim, nd.name))
        return out

    def pending_volumes(self) -> tuple[list[Doc], list[Doc]]:
        """(volumes of a pending pod in namespace default, claims and volumes to add to the cluster)."""
        rng = self.rng
        vols: list[Doc] = []
        objs: list[Doc] = []
        for i in range(rng.choice((1, 1, 1, 2, 3))):
            kind = rng.choice(("new", "new", "static", "local", "imm", "rwop", "shared", "ephemeral", "zoned"))
            name = f"v{i}"
            if kind == "ephemeral":
                vols.append({"name": f"scratch{i}", "ephemeral": {"volumeClaimTemplate": {
                    "metadata": {"labels": {"type": "scratch"}},
                    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": rng.choice(("ebs-wffc", "ebs-wffc-zoned")),
                             "resources": {"requests": {"storage": rng.choice(("5Gi", "10Gi", "25Gi"))}}}}}})
                continue
            if kind == "shared" and (self.running_claims or self.rwop_in_use):
                pool = [c for c, _ in self.running_claims] + self.rwop_in_use
                claim = rng.choice(pool)
            elif kind == "static":
                claim = self.claim_name("static")
                objs.append(self.pvc(claim, "ebs-wffc", rng.choice(("10Gi", "20Gi", "50Gi")), "ReadWriteOnce"))
            elif kind == "local":
                claim = self.claim_name("local")
                objs.append(self.pvc(claim, "local-storage", "100Gi", "ReadWriteOnce"))
            elif kind == "imm":
                claim = self.claim_name("imm")
                if rng.random() < 0.5:
                    pv = self.pv_name()
                    objs.append(self.pv(pv, "manual", "2Gi", "ReadWriteOnce", zone=rng.choice(self.zones),
                                        claim=("default", claim)))
                    objs.append(self.pvc(claim, "manual", "2Gi", "ReadWriteOnce", pv))
                else:
                    objs.append(self.pvc(claim, "manual", "2Gi", "ReadWriteOnce"))
            elif kind == "rwop":
                claim = self.claim_name("rwop")
                objs.append(self.pvc(claim, "ebs-wffc", "10Gi", "ReadWriteOncePod"))
            elif kind == "zoned":
                claim = self.claim_name("new")
                objs.append(self.pvc(claim, "ebs-wffc-zoned", rng.choice(("10Gi", "80Gi")), "ReadWriteOnce"))
            else:
                claim = self.claim_name("new")
                objs.append(self.pvc(claim, "ebs-wffc", rng.choice(("10Gi", "20Gi", "80Gi")), "ReadWriteOnce"))
            if any(v.get("persistentVolumeClaim", {}).get("claimName") == claim for v in vols):
                continue
            vols.append({"name": name, "persistentVolumeClaim": {"claimName": claim}})
        return vols, objs

    # -- pods --------------------------------------------------------------------------------

    def container(self, name: str, app: str, cpu: int | None, mem: int | None, limits: bool = False) -> Doc:
        c: Doc = {"name": name, "image": self.image(app)}
        if cpu is not None and mem is not None:
            req = {"cpu": cpu_text(cpu), "memory": mem_text(mem)}
            c["resources"] = {"requests": req}
            if limits:
                c["resources"]["limits"] = {"cpu": cpu_text(cpu * 2), "memory": mem_text(mem * 2)}
        return c

    def image(self, app: str) -> str:
        if self.on("images") and self.rng.random() < 0.5:
            return self.rng.choice(sorted(IMAGES))
        return APP_IMAGE[app]

    def pod_doc(self, name: str, ns: str, app: str, containers: list[Doc]) -> Doc:
        team = self.rng.choice(TEAMS)
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": {"app": app, "team": team}},
                "spec": {"containers": containers}}

    def pending_pod(self, seq: int) -> Doc:
        rng = self.rng
        app = rng.choice(APPS)
        ns = "default"
        if self.on("affinity") and rng.random() < 0.3:
            ns = rng.choice(("prod", "dev"))
        big = self.on("preemption") and rng.random() < 0.4
        containers = []
        for k in range(rng.choice((1, 1, 1, 2))):
            if rng.random() < 0.12:
                containers.append(self.container(f"c{k}", app, None, None))      # best effort
            else:
                cpu = rng.choice(CPU[6:] if big else CPU[:9])
                mem = rng.choice(MEM[5:] if big else MEM[:9])
                containers.append(self.container(f"c{k}", app, cpu, mem, limits=rng.random() < 0.35))
        pod = self.pod_doc(f"{app}-{seq}", ns, app, containers)
        spec = pod["spec"]
        if self.on("resources"):
            self.resources(spec)
        if "PriorityClass" in self.kinds() and rng.random() < 0.75:
            names = ["low", "mid", "high", "high-nopreempt"]
            weights = [2, 3, 3, 1] if not self.on("preemption") else [1, 2, 5, 1]
            spec["priorityClassName"] = rng.choices(names, weights)[0]
        if self.on("placement"):
            self.placement(spec)
        elif rng.random() < 0.1:
            spec["tolerations"] = [{"operator": "Exists"}]
        if self.on("affinity") and rng.random() < 0.6:
            spec["affinity"] = {**spec.get("affinity", {}), **self.pod_affinity(app)}
        if self.on("spread") and rng.random() < 0.6:
            spec["topologySpreadConstraints"] = self.spread(app)
        if self.on("dra") and ns == "default" and rng.random() < 0.6:
            self.claims(spec)
        if self.on("storage") and ns == "default" and rng.random() < 0.7:
            vols, objs = self.pending_volumes()
            if vols:
                spec["volumes"] = vols
            self.cluster += objs
        return pod

    def resources(self, spec: Doc) -> None:
        rng = self.rng
        c0 = spec["containers"][0]
        if rng.random() < 0.25:
            inits = [{"name": "init", "image": "registry.example/tiny:1", "resources": {"requests": {
                "cpu": rng.choice(("500m", "2", "4")), "memory": rng.choice(("128Mi", "4Gi"))}}}]
            if rng.random() < 0.5:
                inits.append({"name": "sidecar", "image": "registry.example/tiny:1", "restartPolicy": "Always",
                              "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}})
            spec["initContainers"] = inits
        if rng.random() < 0.15:
            spec["overhead"] = {"cpu": "250m", "memory": "120Mi"}
        if rng.random() < 0.15:
            res = c0.setdefault("resources", {})
            res.setdefault("requests", {})["ephemeral-storage"] = rng.choice(("1Gi", "20Gi", "60Gi"))
        if rng.random() < 0.2:
            n = str(rng.choice((1, 1, 2, 4)))
            res = c0.setdefault("resources", {})
            res.setdefault("requests", {})["example.com/gpu"] = n
            res.setdefault("limits", {})["example.com/gpu"] = n
        if rng.random() < 0.08:
            # limits only: the API server copies them into the requests
            c0["resources"] = {"limits": {"cpu": rng.choice(("500m", "1")), "memory": "512Mi"}}

    def placement(self, spec: Doc) -> None:
        rng = self.rng
        if rng.random() < 0.25:
            spec["nodeSelector"] = {"disktype": rng.choice(("ssd", "hdd"))}
        if rng.random() < 0.3:
            ops = [("disktype", "In", ["ssd"]), ("disktype", "NotIn", ["hdd"]), ("disktype", "Exists", None),
                   ("disktype", "DoesNotExist", None), ("gpu-count", "Gt", ["1"]), ("gpu-count", "Lt", ["4"]),
                   (ZONE_KEY, "In", sorted(rng.sample(self.zones, 2))),
                   ("node.kubernetes.io/instance-type", "NotIn", ["c.xlarge"])]
            terms = []
            for _ in range(rng.choice((1, 1, 2))):
                k, op, vals = rng.choice(ops)
                expr: Doc = {"key": k, "operator": op}
                if vals is not None:
                    expr["values"] = vals
                terms.append({"matchExpressions": [expr]})
            spec.setdefault("affinity", {})["nodeAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        if rng.random() < 0.25:
            prefs = []
            for _ in range(rng.choice((1, 2))):
                k, v = rng.choice((("disktype", "ssd"), (ZONE_KEY, rng.choice(self.zones)),
                                   ("node.kubernetes.io/instance-type", "m.large")))
                prefs.append({"weight": rng.randint(1, 100),
                              "preference": {"matchExpressions": [{"key": k, "operator": "In", "values": [v]}]}})
            na = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
            na["preferredDuringSchedulingIgnoredDuringExecution"] = prefs
        if rng.random() < 0.3:
            spec["tolerations"] = [rng.choice((
                {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
                {"key": "dedicated", "operator": "Exists"},
                {"key": "spot", "operator": "Equal", "value": "true", "effect": "PreferNoSchedule"},
                {"key": "maintenance", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
                {"operator": "Exists"}))]
        if rng.random() < 0.2:
            spec["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": rng.choice((8080, 9090)),
                                               "protocol": "TCP"}]

    def pod_affinity(self, app: str) -> Doc:
        rng = self.rng
        out: Doc = {}
        for kind in ("podAffinity", "podAntiAffinity"):
            if rng.random() < 0.5:
                continue
            target = app if kind == "podAntiAffinity" and rng.random() < 0.6 else rng.choice(APPS)
            term: Doc = {"labelSelector": {"matchLabels": {"app": target}},
                         "topologyKey": rng.choice((HOST_KEY, ZONE_KEY))}
            r = rng.random()
            if r < 0.15:
                term["namespaces"] = sorted(rng.sample(("default", "prod", "dev"), 2))
            elif r < 0.25:
                term["namespaceSelector"] = {}
            elif r < 0.32:
                term["namespaceSelector"] = {"matchLabels": {"env": "prod"}}
            if rng.random() < 0.5:
                out[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            else:
                out[kind] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": term}]}
        return out or {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOST_KEY}}]}}

    def spread(self, app: str) -> list[Doc]:
        rng = self.rng
        out = []
        keys = rng.sample((HOST_KEY, ZONE_KEY), rng.choice((1, 1, 2)))
        for k in keys:
            c: Doc = {"maxSkew": rng.choice((1, 1, 2)), "topologyKey": k,
                      "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                      "labelSelector": {"matchLabels": {"app": app}}}
            if c["whenUnsatisfiable"] == "DoNotSchedule" and rng.random() < 0.15:
                c["minDomains"] = rng.choice((2, 3, 4))
            if rng.random() < 0.2:
                c["matchLabelKeys"] = ["team"]
            if rng.random() < 0.1:
                c["nodeAffinityPolicy"] = "Ignore"
            if rng.random() < 0.15:
                c["nodeTaintsPolicy"] = "Honor"
            out.append(c)
        return out

    def claims(self, spec: Doc) -> None:
        rng = self.rng
        if self.shared_claims and rng.random() < 0.15:
            cname, _ = rng.choice(self.shared_claims)
            spec["resourceClaims"] = [{"name": "shared", "resourceClaimName": cname}]
        else:
            names = sorted(TEMPLATES)
            first = rng.choice(names)
            spec["resourceClaims"] = [{"name": "gpu" if first != "nic-one" else "nic", "resourceClaimTemplateName": first}]
            if first.startswith("gpu") and rng.random() < 0.15:
                spec["resourceClaims"].append({"name": "nic", "resourceClaimTemplateName": "nic-one"})
        if rng.random() < 0.6:
            spec.setdefault("tolerations", []).append(
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
        if rng.random() < 0.3:
            spec.setdefault("nodeSelector", {})["gpu.example.com/present"] = "true"

    # -- budgets and owners ------------------------------------------------------------------

    def pdbs(self) -> list[Doc]:
        rng = self.rng
        out = []
        for app in rng.sample(APPS, rng.randint(0, 3)):
            healthy = sum(1 for p in self.running if p["metadata"]["labels"]["app"] == app
                          and p["metadata"]["namespace"] == "default")
            spec: Doc = {"selector": {"matchLabels": {"app": app}}}
            if rng.random() < 0.7:
                want = rng.choice((1, 2))
                spec["minAvailable"] = want
                desired = want
            else:
                spec["maxUnavailable"] = 1
                desired = max(0, healthy - 1)
            allowed = max(0, healthy - desired)
            out.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": f"{app}-pdb", "namespace": "default"}, "spec": spec,
                        "status": {"disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": desired,
                                   "expectedPods": healthy}})
        return out

    def owners(self) -> list[Doc]:
        rng = self.rng
        out = []
        for app in rng.sample(APPS, rng.randint(1, 3)):
            out.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": f"{app}-rs", "namespace": "default"},
                        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": app}}, "template": {
                            "metadata": {"labels": {"app": app}},
                            "spec": {"containers": [{"name": "c0", "image": "registry.example/tiny:1"}]}}}})
        for app in rng.sample(APPS, rng.randint(0, 2)):
            out.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"{app}-svc", "namespace": "default"},
                        "spec": {"selector": {"app": app, "team": rng.choice(TEAMS)}, "ports": [{"port": 80}]}})
        return out


def generate(seed: int, nodes: int | None = None, features: tuple[str, ...] | None = None) -> Scenario:
    """The scenario of ``seed``: the same seed (and overrides) always gives the same documents."""
    return Generator(seed, nodes, features).build()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fidelity.generate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1, help="first seed")
    ap.add_argument("--count", type=int, default=1, help="how many scenarios (seeds seed, seed+1, ...)")
    ap.add_argument("--nodes", type=int, default=None, help="number of nodes (default: drawn from the seed, 3 to 500)")
    ap.add_argument("--features", default=None, help=f"comma-separated subset of {','.join(FEATURES)} (default: drawn)")
    ap.add_argument("--out", type=Path, required=True, help="folder to write gen-<seed>/ folders into")
    a = ap.parse_args(argv)
    features = tuple(a.features.split(",")) if a.features else None
    for s in range(a.seed, a.seed + a.count):
        sc = generate(s, a.nodes, features)
        sc.write(a.out / sc.name)
        print(f"{a.out / sc.name}: {sc.notes['nodes']} nodes, {len(sc.pods)} pending pods, {sc.notes['features']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

