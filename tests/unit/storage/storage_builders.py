"""Builders for storage objects, nodes and pods (dicts, as in a cluster snapshot), and a harness
that runs one volume plugin's Filter, or a whole simulation, on them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kplan.framework.cycle_state import CycleState
from kplan.framework.status import REASONS, Code
from kplan.io.workspace import load_scenario
from kplan.model.raw import RawObject
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import Simulation, SimulationResult

Obj = dict[str, Any]
RWO, RWOP, RWX = "ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"
ZONE = "topology.kubernetes.io/zone"


def node(name: str, zone: str | None = None, *, labels: dict[str, str] | None = None,
         allocatable: dict[str, str] | None = None, taints: Sequence[Obj] = ()) -> Obj:
    lab = {"kubernetes.io/hostname": name, **({ZONE: zone} if zone else {}), **(labels or {})}
    d: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", **(allocatable or {})}}}
    if taints:
        d["spec"] = {"taints": list(taints)}
    return d


def storage_class(name: str, provisioner: str = "csi.example.com", mode: str = "WaitForFirstConsumer", *,
                  zones: Sequence[str] = (), default: bool = False) -> Obj:
    d: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
              "provisioner": provisioner, "volumeBindingMode": mode}
    if zones:
        d["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": list(zones)}]}]
    if default:
        d["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return d


def pvc(name: str, cls: str | None = "local", *, size: str = "1Gi", modes: Sequence[str] = (RWO,),
        volume: str = "", bound: bool = False, namespace: str = "default", selected_node: str | None = None,
        selector: Obj | None = None) -> Obj:
    spec: Obj = {"accessModes": list(modes) if not isinstance(modes, str) else [modes],
                 "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if volume:
        spec["volumeName"] = volume
    if selector is not None:
        spec["selector"] = selector
    md: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    ann = {}
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    if selected_node:
        ann["volume.kubernetes.io/selected-node"] = selected_node
    if ann:
        md["annotations"] = ann
    d: Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec}
    if bound:
        d["status"] = {"phase": "Bound"}
    return d


def pv(name: str, cls: str = "local", *, size: str = "10Gi", modes: Sequence[str] = (RWO,), claim: str | None = None,
       hostnames: Sequence[str] = (), zones: Sequence[str] = (), labels: dict[str, str] | None = None,
       csi: tuple[str, str] | None = None, source: Obj | None = None) -> Obj:
    spec: Obj = {"capacity": {"storage": size}, "accessModes": list(modes) if not isinstance(modes, str) else [modes],
                 "storageClassName": cls}
    terms = []
    if hostnames:
        terms.append({"key": "kubernetes.io/hostname", "operator": "In", "values": list(hostnames)})
    if zones:
        terms.append({"key": ZONE, "operator": "In", "values": list(zones)})
    if terms:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": terms}]}}
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim, "uid": f"uid-{claim}"}
    if csi:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    elif source:
        spec.update(source)
    else:
        spec["local"] = {"path": "/mnt/disk"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": spec}


def csinode(name: str, driver: str = "csi.example.com", *, count: int | None = None,
            topology_keys: Sequence[str] = (), migrated: str = "") -> Obj:
    d: Obj = {"name": driver, "nodeID": name, "topologyKeys": list(topology_keys)}
    if count is not None:
        d["allocatable"] = {"count": count}
    md: Obj = {"name": name}
    if migrated:
        md["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": md, "spec": {"drivers": [d]}}


def volume_attachment(pv_name: str, node_name: str, attacher: str = "csi.example.com") -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": f"csi-{pv_name}-{node_name}"},
            "spec": {"attacher": attacher, "nodeName": node_name, "source": {"persistentVolumeName": pv_name}},
            "status": {"attached": True}}


def csi_driver(name: str = "csi.example.com", *, attach_required: bool | None = None,
               storage_capacity: bool = False) -> Obj:
    spec: Obj = {"storageCapacity": storage_capacity}
    if attach_required is not None:
        spec["attachRequired"] = attach_required
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name}, "spec": spec}


def priority_class(name: str, value: int) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def pod(name: str, *claims: str, node_name: str = "", priority_class: str | None = None, ephemeral: Sequence[str] = (),
        volumes: Sequence[Obj] = (), cpu: str | None = None, tolerate_all: bool = False) -> Obj:
    vols = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    vols += [{"name": e, "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": [RWO], "storageClassName": "local", "resources": {"requests": {"storage": "1Gi"}}}}}}
        for e in ephemeral]
    vols += list(volumes)
    c: Obj = {"name": "app", "image": "app"}
    if cpu:
        c["resources"] = {"requests": {"cpu": cpu}}
    spec: Obj = {"containers": [c], "volumes": vols}
    if node_name:
        spec["nodeName"] = node_name
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    if tolerate_all:
        spec["tolerations"] = [{"operator": "Exists"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"pod-{name}"},
            "spec": spec}


def _raw(docs: Sequence[Obj], source: str) -> list[RawObject]:
    return [RawObject(d, f"{source}: document {i + 1}") for i, d in enumerate(docs)]


def simulation(cluster: Sequence[Obj], manifests: Sequence[Obj] = (), **kw: Any) -> Simulation:
    scenario = load_scenario(_raw(cluster, "cluster.yaml"), _raw(manifests, "app.yaml"), **kw)
    return Simulation(scenario.snapshot, SchedulerSetup.of(None, None), scenario.pending, lowest_name=True,
                      pdb_allowed=scenario.pdb_allowed, created_after=scenario.inputs.created_after)


def simulate(cluster: Sequence[Obj], manifests: Sequence[Obj] = (), **kw: Any) -> SimulationResult:
    return simulation(cluster, manifests, **kw).run()


def outcome(result: SimulationResult, name: str) -> tuple[str, str | None, str | None]:
    o = next(o for o in result.pods if o.pod.name == name)
    return o.status, o.node, o.message


def verdicts(plugin: str, cluster: Sequence[Obj], the_pod: Obj) -> dict[str, str] | str:
    """The named plugin's Filter on every node after the profile's PreFilter: node → "" (passes) or
    "<Code>: reason, reason"; or, when PreFilter rejects or the plugin Skips, that as a string."""
    sim = simulation(cluster, [the_pod])
    fw = next(iter(sim.handle.frameworks.values()))
    (p,) = sim.pending
    state = CycleState()
    _, status, _ = fw.run_pre_filter(state, p)
    if not status.ok:
        return f"PreFilter {status.plugin} {status.code.upstream}: {status.message}"
    if plugin in state.skip_filter:
        return "Skip"
    table = sim.snapshot.table
    rows = np.arange(len(table), dtype=np.int64)
    v = fw.plugins[plugin].filter(state, p, table, rows)
    out = {}
    for k, r in enumerate(rows):
        code = Code(int(v.codes[k]))
        out[table.names[int(r)]] = "" if code == Code.SUCCESS else f"{code.upstream}: {', '.join(REASONS[int(v.reasons[k])])}"
    return out
