"""Small object builders and plugin harnesses for table-driven tests.

Builders produce the Kubernetes dicts a user would write and parse them with kplan.model.parse,
so every test also goes through the one parse step the product uses::

    make_pod("web").req(cpu="500m", memory="1Gi").priority(100).labels(app="web").build()
    make_node("n1").alloc(cpu="4", memory="8Gi", pods=110).zone("a").taint("k", "v").build()

``run_filter`` / ``run_score`` run one plugin over a snapshot the way the framework would
(PreFilter first, Skip honoured) and answer per node name, so expectations read like the
scheduler's own output.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kplan.cluster.snapshot import Snapshot
from kplan.framework.cycle_state import CycleState
from kplan.framework.release import Release, default_release
from kplan.framework.status import Code, Status
from kplan.model.objects import Node, Pod
from kplan.model.parse import parse_node, parse_pod
from kplan.model.raw import RawObject
from kplan.plugins import in_tree_registry
from kplan.scenario import Scenario, build_scenario, classify
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import SimulationResult, run_simulation

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"


def _resources(kw: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword names to resource names: ``ephemeral_storage`` → ``ephemeral-storage``.

    Names with a "/" (extended resources) must be passed with ``**{"example.com/gpu": 1}``.
    """
    return {(k if "/" in k else k.replace("_", "-")): v for k, v in kw.items()}


# ----------------------------------------------------------------------------- selectors

def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    """A matchExpressions / matchFields requirement."""
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def term(*expressions: dict[str, Any], fields: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """One nodeSelectorTerm."""
    out: dict[str, Any] = {}
    if expressions:
        out["matchExpressions"] = list(expressions)
    if fields:
        out["matchFields"] = list(fields)
    return out


def name_in(*names: str) -> dict[str, Any]:
    """The matchFields requirement DaemonSet pods use: ``metadata.name In [names]``."""
    return expr("metadata.name", "In", *names)


# ----------------------------------------------------------------------------- pods

class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self.d: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": []},
        }

    # -- metadata
    @property
    def _md(self) -> dict[str, Any]:
        md: dict[str, Any] = self.d["metadata"]
        return md

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.d["spec"]
        return spec

    def namespace(self, ns: str) -> PodBuilder:
        self._md["namespace"] = ns
        return self

    def labels(self, **labels: str) -> PodBuilder:
        self._md.setdefault("labels", {}).update(labels)
        return self

    def label_map(self, labels: Mapping[str, str]) -> PodBuilder:
        self._md.setdefault("labels", {}).update(labels)
        return self

    def owner(self, kind: str, name: str, controller: bool = True) -> PodBuilder:
        self._md.setdefault("ownerReferences", []).append(
            {"apiVersion": "apps/v1", "kind": kind, "name": name, "controller": controller, "uid": f"uid-{name}"})
        return self

    # -- containers
    def _main(self) -> dict[str, Any]:
        cs: list[dict[str, Any]] = self._spec["containers"]
        if not cs:
            cs.append({"name": "c0", "image": "busybox"})
        return cs[0]

    def req(self, **requests: Any) -> PodBuilder:
        """Requests of the first container (created on first use)."""
        self._main().setdefault("resources", {}).setdefault("requests", {}).update(_resources(requests))
        return self

    def lim(self, **limits: Any) -> PodBuilder:
        """Limits of the first container."""
        self._main().setdefault("resources", {}).setdefault("limits", {}).update(_resources(limits))
        return self

    def container(self, requests: Mapping[str, Any] | None = None, limits: Mapping[str, Any] | None = None, *,
                  image: str = "busybox", ports: Sequence[Mapping[str, Any]] = ()) -> PodBuilder:
        """Append a regular container; an empty ``requests`` map is left out entirely."""
        cs: list[dict[str, Any]] = self._spec["containers"]
        cs.append(_container(f"c{len(cs)}", requests, limits, image, ports))
        return self

    def init_container(self, requests: Mapping[str, Any] | None = None, limits: Mapping[str, Any] | None = None,
                       *, sidecar: bool = False, image: str = "busybox",
                       ports: Sequence[Mapping[str, Any]] = ()) -> PodBuilder:
        """Append an init container; ``sidecar`` gives it restartPolicy Always."""
        ics = self._spec.setdefault("initContainers", [])
        c = _container(f"i{len(ics)}", requests, limits, image, ports)
        if sidecar:
            c["restartPolicy"] = "Always"
        ics.append(c)
        return self

    def image(self, *images: str) -> PodBuilder:
        """Replace the containers' images (one container per image)."""
        self._spec["containers"] = [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]
        return self

    def image_volume(self, reference: str) -> PodBuilder:
        """Append an image volume (volumes[].image, KEP-4639) of ``reference``."""
        vols = self._spec.setdefault("volumes", [])
        vols.append({"name": f"iv{len(vols)}", "image": {"reference": reference, "pullPolicy": "IfNotPresent"}})
        return self

    def host_port(self, port: int, protocol: str | None = None, host_ip: str | None = None) -> PodBuilder:
        p: dict[str, Any] = {"containerPort": port, "hostPort": port}
        if protocol:
            p["protocol"] = protocol
        if host_ip:
            p["hostIP"] = host_ip
        self._main().setdefault("ports", []).append(p)
        return self

    def overhead(self, **res: Any) -> PodBuilder:
        self._spec["overhead"] = _resources(res)
        return self

    def pod_requests(self, **res: Any) -> PodBuilder:
        """Pod-level ``spec.resources.requests``."""
        self._spec.setdefault("resources", {})["requests"] = _resources(res)
        return self

    def pod_limits(self, **res: Any) -> PodBuilder:
        self._spec.setdefault("resources", {})["limits"] = _resources(res)
        return self

    # -- scheduling
    def priority(self, value: int) -> PodBuilder:
        self._spec["priority"] = value
        return self

    def priority_class(self, name: str) -> PodBuilder:
        self._spec["priorityClassName"] = name
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self._spec["preemptionPolicy"] = policy
        return self

    def node_name(self, node: str) -> PodBuilder:
        self._spec["nodeName"] = node
        return self

    def node_selector(self, **labels: str) -> PodBuilder:
        self._spec.setdefault("nodeSelector", {}).update(labels)
        return self

    def node_selector_map(self, labels: Mapping[str, str]) -> PodBuilder:
        self._spec.setdefault("nodeSelector", {}).update(labels)
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str | None = None
                   ) -> PodBuilder:
        t: dict[str, Any] = {}
        if key:
            t["key"] = key
        if operator:
            t["operator"] = operator
        if value:
            t["value"] = value
        if effect:
            t["effect"] = effect
        self._spec.setdefault("tolerations", []).append(t)
        return self

    def _node_affinity(self) -> dict[str, Any]:
        na: dict[str, Any] = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        return na

    def required(self, *terms: dict[str, Any]) -> PodBuilder:
        """requiredDuringSchedulingIgnoredDuringExecution with these nodeSelectorTerms (ORed)."""
        self._node_affinity()["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": list(terms)}
        return self

    def preferred(self, weight: int, preference: dict[str, Any]) -> PodBuilder:
        self._node_affinity().setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": preference})
        return self

    def gate(self, name: str) -> PodBuilder:
        self._spec.setdefault("schedulingGates", []).append({"name": name})
        return self

    def spec(self, **fields: Any) -> PodBuilder:
        """Set raw spec fields (anything the named methods do not cover)."""
        self._spec.update(fields)
        return self

    # -- output
    def dict(self) -> dict[str, Any]:
        d = copy.deepcopy(self.d)
        if not d["spec"]["containers"]:
            d["spec"]["containers"] = [{"name": "c0", "image": "busybox"}]
        return d

    def build(self, source: str = "") -> Pod:
        return parse_pod(self.dict(), source, keep_raw=True)


def _container(name: str, requests: Mapping[str, Any] | None, limits: Mapping[str, Any] | None, image: str,
               ports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image}
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = dict(requests)
    if limits:
        res["limits"] = dict(limits)
    if res:
        c["resources"] = res
    if ports:
        c["ports"] = [dict(p) for p in ports]
    return c


def make_pod(name: str = "pod", namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


# ----------------------------------------------------------------------------- nodes

class NodeBuilder:
    def __init__(self, name: str) -> None:
        self.d: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {HOSTNAME: name}},
            "spec": {},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }

    def alloc(self, **res: Any) -> NodeBuilder:
        """Replace allocatable (and capacity) with exactly these resources."""
        r = {k: str(v) for k, v in _resources(res).items()}
        self.d["status"]["allocatable"] = r
        self.d["status"]["capacity"] = dict(r)
        return self

    def labels(self, **labels: str) -> NodeBuilder:
        self.d["metadata"]["labels"].update(labels)
        return self

    def label_map(self, labels: Mapping[str, str]) -> NodeBuilder:
        self.d["metadata"]["labels"].update(labels)
        return self

    def zone(self, zone: str, region: str | None = None) -> NodeBuilder:
        self.d["metadata"]["labels"][ZONE] = zone
        if region is not None:
            self.d["metadata"]["labels"][REGION] = region
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        t: dict[str, Any] = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self.d["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self) -> NodeBuilder:
        self.d["spec"]["unschedulable"] = True
        return self

    def declared_features(self, *names: str) -> NodeBuilder:
        """status.declaredFeatures, in the order given."""
        self.d["status"]["declaredFeatures"] = list(names)
        return self

    def image(self, size: int, *names: str) -> NodeBuilder:
        self.d["status"].setdefault("images", []).append({"names": list(names), "sizeBytes": size})
        return self

    def dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.d)

    def build(self, source: str = "") -> Node:
        return parse_node(self.dict(), source)


def make_node(name: str = "node") -> NodeBuilder:
    return NodeBuilder(name)


# ----------------------------------------------------------------------------- snapshots

def _built(x: Any) -> Any:
    return x.build() if isinstance(x, (PodBuilder, NodeBuilder)) else x


def make_snapshot(nodes: Iterable[NodeBuilder | Node], running: Iterable[PodBuilder | Pod] = ()) -> Snapshot:
    """A Snapshot in node-tree order with ``running`` pods (spec.nodeName set) on their nodes."""
    snap = Snapshot.build([_built(n) for n in nodes])
    for p in running:
        pod = _built(p)
        row = snap.row_of(pod.node_name)
        assert row is not None, f"pod {pod.key} names unknown node {pod.node_name!r}"
        snap.add_pod(pod, row)
    return snap


@dataclass
class _Handle:
    """framework.Handle for plugins tested on their own: a snapshot, no simulation around it."""

    snapshot: Snapshot
    release: Release = field(default_factory=default_release)

    def framework_for(self, pod: Pod) -> Any:
        raise AssertionError("plugins tested alone have no framework to run")

    def preemption_in_progress(self, pod: Pod) -> bool:
        return False


def make_plugin(name: str, snapshot: Snapshot, args: Mapping[str, Any] | None = None,
                release: Release | str | None = None) -> Any:
    """Build an in-tree plugin as a profile would: its args decoded (and defaulted) from ``args``;
    the plugin of ``release`` (None: the default release)."""
    rel = Release.of(release) if isinstance(release, str) else (release or default_release())
    spec = in_tree_registry(rel).get(name)
    assert spec is not None, f"no in-tree plugin {name}"
    decoded = spec.args.decode(args) if spec.args is not None else args
    return spec.factory(decoded, _Handle(snapshot, rel))


@dataclass(frozen=True)
class Verdict:
    """One node's filter answer, comparable to a (code, reasons) pair in test tables."""

    code: Code
    reasons: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.code == Code.SUCCESS


def _rows(snapshot: Snapshot, names: Sequence[str] | None) -> np.ndarray:
    table = snapshot.table
    if names is None:
        return np.arange(len(table), dtype=np.int64)
    rows = [snapshot.row_of(n) for n in names]
    assert all(r is not None for r in rows), f"unknown node in {names}"
    return np.array(rows, dtype=np.int64)


def run_pre_filter(plugin: Any, pod: Pod, state: CycleState | None = None) -> tuple[Any, Status]:
    state = state if state is not None else CycleState()
    if not hasattr(plugin, "pre_filter"):
        return None, Status()
    return plugin.pre_filter(state, pod)  # type: ignore[no-any-return]


def run_filter(plugin: Any, pod: Pod, snapshot: Snapshot, nodes: Sequence[str] | None = None
               ) -> dict[str, Verdict]:
    """PreFilter (a Skip disables Filter, a rejection rejects every node) then Filter, per node name."""
    state = CycleState()
    rows = _rows(snapshot, nodes)
    table = snapshot.table
    _, status = run_pre_filter(plugin, pod, state)
    if status.code == Code.SKIP:
        return {table.names[r]: Verdict(Code.SUCCESS, ()) for r in rows}
    if not status.ok:
        return {table.names[r]: Verdict(status.code, status.reasons) for r in rows}
    v = plugin.filter(state, pod, table, rows)
    return {table.names[r]: Verdict(Code(int(v.codes[k])), v.status(k, "").reasons) for k, r in enumerate(rows)}


def run_score(plugin: Any, pod: Pod, snapshot: Snapshot, nodes: Sequence[str] | None = None, *,
              normalize: bool = True) -> dict[str, int] | None:
    """PreScore then Score (and NormalizeScore if the plugin has it), per node name; None on Skip."""
    state = CycleState()
    rows = _rows(snapshot, nodes)
    table = snapshot.table
    if hasattr(plugin, "pre_filter"):
        plugin.pre_filter(state, pod)
    if hasattr(plugin, "pre_score"):
        s = plugin.pre_score(state, pod, table, rows)
        if s.code == Code.SKIP:
            return None
        assert s.ok, s
    raw = np.asarray(plugin.score(state, pod, table, rows), dtype=np.int64)
    if normalize and hasattr(plugin, "normalize"):
        raw = plugin.normalize(state, pod, raw.copy())
    return {table.names[r]: int(raw[k]) for k, r in enumerate(rows)}


# ----------------------------------------------------------------------------- whole runs

def scenario(nodes: Iterable[NodeBuilder | Mapping[str, Any]], pending: Iterable[PodBuilder | Mapping[str, Any]] = (),
             running: Iterable[PodBuilder | Mapping[str, Any]] = (),
             objects: Iterable[Mapping[str, Any]] = (), release: Release | None = None) -> Scenario:
    """The scenario the CLI would build from these objects (admission and all), for ``release``
    (None: the default)."""
    def raw(x: Any, src: str) -> RawObject:
        return RawObject(x.dict() if isinstance(x, (PodBuilder, NodeBuilder)) else dict(x), src)

    cluster = [raw(o, "cluster.yaml") for o in objects] + [raw(n, "cluster.yaml") for n in nodes]
    cluster += [raw(p, "cluster.yaml") for p in running]
    inputs = classify(cluster)
    classify([raw(p, "pods.yaml") for p in pending], inputs)
    return build_scenario(inputs, release=release)


def simulate(nodes: Iterable[NodeBuilder | Mapping[str, Any]], pending: Iterable[PodBuilder | Mapping[str, Any]],
             running: Iterable[PodBuilder | Mapping[str, Any]] = (), objects: Iterable[Mapping[str, Any]] = (),
             config: Mapping[str, Any] | None = None, *, keep_cycles: bool = False,
             release: Release | str | None = None) -> SimulationResult:
    """A whole simulation with ``--tie-break lowest-name``, as kube-scheduler ``release`` (a
    Release, or a version with default gates; None: kplan's default release)."""
    rel = Release.of(release) if isinstance(release, str) else release
    sc = scenario(nodes, pending, running, objects, rel)
    return run_simulation(sc.snapshot, SchedulerSetup.of(rel, config), sc.pending, seed=0, lowest_name=True,
                          pdb_allowed=sc.pdb_allowed, keep_cycles=keep_cycles)


def simulate_files(cluster: Sequence[str], manifests: Sequence[str], scheduler_config: str | None = None, *,
                   lowest_name: bool = True, keep_cycles: bool = False, **kw: Any) -> SimulationResult:
    """``kplan simulate`` of these files without the rendering: the commands' one loading path."""
    from kplan.cli.options import TieBreak
    from kplan.cli.workspace import load_inputs, open_planner

    seed = kw.pop("seed", 0)
    kube_version = kw.pop("kube_version", None)
    workspace = load_inputs(cluster, manifests, seed=seed, progress=False, **kw)
    planner = open_planner(workspace, scheduler_config, seed=seed,
                           tie_break=TieBreak.lowest_name if lowest_name else TieBreak.random,
                           kube_version=kube_version)
    return planner.simulate(keep_cycles=keep_cycles).result
