"""Small builders for workload manifests and nodes (dicts, as a user would write them)."""

from __future__ import annotations

import copy
from typing import Any

from kplan.model.objects import Node, Taint

Obj = dict[str, Any]


def container(name: str = "app", cpu: str | None = None, memory: str | None = None, **extra: Any) -> Obj:
    c: Obj = {"name": name, "image": "registry.example/app:1"}
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    if req:
        c["resources"] = {"requests": req}
    c.update(extra)
    return c


class Workload:
    """``Workload("Deployment", "web").replicas(3).labels(app="web").build()``"""

    API = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1",
           "ReplicationController": "v1", "Job": "batch/v1", "CronJob": "batch/v1"}

    def __init__(self, kind: str, name: str, namespace: str | None = None) -> None:
        self.kind = kind
        md: Obj = {"name": name}
        if namespace:
            md["namespace"] = namespace
        self.obj: Obj = {"apiVersion": self.API.get(kind, "v1"), "kind": kind, "metadata": md, "spec": {}}
        self._labels: dict[str, str] = {"app": name}
        self._pod: Obj = {"containers": [container()]}
        self._extra_spec: Obj = {}

    def labels(self, **labels: str) -> Workload:
        self._labels = dict(labels)
        return self

    def replicas(self, n: int) -> Workload:
        self._extra_spec["replicas"] = n
        return self

    def spec(self, **fields: Any) -> Workload:
        self._extra_spec.update(fields)
        return self

    def pod(self, **fields: Any) -> Workload:
        self._pod.update(fields)
        return self

    def meta(self, **fields: Any) -> Workload:
        self.obj["metadata"].update(fields)
        return self

    def template(self) -> Obj:
        return {"metadata": {"labels": dict(self._labels)}, "spec": copy.deepcopy(self._pod)}

    def build(self) -> Obj:
        obj = copy.deepcopy(self.obj)
        spec = obj["spec"]
        if self.kind == "CronJob":
            spec["schedule"] = "*/5 * * * *"
            spec["jobTemplate"] = {"spec": {"template": self.template(), **self._extra_spec}}
            return obj
        if self.kind == "ReplicationController":
            spec["selector"] = dict(self._labels)
        elif self.kind != "Job":
            spec["selector"] = {"matchLabels": dict(self._labels)}
        spec["template"] = self.template()
        if self.kind == "Job":
            spec["template"]["spec"].setdefault("restartPolicy", "Never")
        spec.update(copy.deepcopy(self._extra_spec))
        return obj


def node(name: str, *, labels: dict[str, str] | None = None, taints: list[tuple[str, str, str]] = ()) -> Node:
    return Node(name=name, labels={"kubernetes.io/hostname": name, **(labels or {})},
                taints=tuple(Taint(k, v, e) for k, v, e in taints),
                allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110})


def cluster_node(name: str, zone: str = "a", cpu: str = "4") -> Obj:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def running_pod(name: str, node_name: str, owner: tuple[str, str] | None = None, *, cpu: str = "1",
                labels: dict[str, str] | None = None, namespace: str = "default") -> Obj:
    md: Obj = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if owner:
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md,
            "spec": {"nodeName": node_name, "containers": [container(cpu=cpu)]}}


def load(cluster: list[Obj], manifests: list[Obj], **kw: Any) -> Any:
    from kplan.io.workspace import load_scenario
    from kplan.model.raw import RawObject

    return load_scenario([RawObject(d, f"cluster.yaml: document {i + 1}") for i, d in enumerate(cluster)],
                         [RawObject(d, f"app.yaml: document {i + 1}") for i, d in enumerate(manifests)], **kw)


def run(cluster: list[Obj], manifests: list[Obj], **kw: Any) -> Any:
    from kplan.scheduler.setup import SchedulerSetup
    from kplan.scheduler.simulate import run_simulation

    scenario = load(cluster, manifests, **kw)
    result = run_simulation(scenario.snapshot, SchedulerSetup.of(None, None), scenario.pending,
                            lowest_name=True, pdb_allowed=scenario.pdb_allowed,
                            created_after=scenario.inputs.created_after, replaced=scenario.inputs.replaced)
    return result
