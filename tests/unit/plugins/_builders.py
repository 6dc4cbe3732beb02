"""Small builders for the InterPodAffinity and PodTopologySpread tests.

Objects are written as the Kubernetes dicts a user would give and parsed once, so the tests go
through the same parsing (namespaces, matchLabelKeys, owner references) as real input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from kplan.cluster.snapshot import Snapshot
from kplan.framework.cycle_state import CycleState
from kplan.framework.release import Release
from kplan.framework.status import REASONS, Code, Status
from kplan.model.objects import Node, Pod
from kplan.model.parse import parse_namespace, parse_node, parse_pod, parse_selecting_object

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def term(key: str = HOSTNAME, match: Mapping[str, str] | None = None, *,
         expressions: Sequence[Mapping[str, Any]] = (), namespaces: Sequence[str] | None = None,
         ns_selector: Mapping[str, Any] | None = None, nil_selector: bool = False) -> dict[str, Any]:
    """A podAffinityTerm; ``match`` are matchLabels, ``nil_selector`` leaves labelSelector out."""
    t: dict[str, Any] = {"topologyKey": key}
    if not nil_selector:
        t["labelSelector"] = {"matchLabels": dict(match or {}), "matchExpressions": list(expressions)}
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if ns_selector is not None:
        t["namespaceSelector"] = dict(ns_selector)
    return t


class PodBuilder:
    def __init__(self, name: str, namespace: str) -> None:
        self.d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                                  "metadata": {"name": name, "namespace": namespace, "labels": {}},
                                  "spec": {"containers": [{"name": "c", "image": "img"}]}}

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.d["spec"]
        return spec

    def labels(self, **kv: str) -> PodBuilder:
        self.d["metadata"]["labels"].update(kv)
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self.d["metadata"]["labels"][key] = value
        return self

    def on(self, node: str) -> PodBuilder:
        self._spec["nodeName"] = node
        return self

    def terminating(self) -> PodBuilder:
        self.d["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return self

    def _terms(self, kind: str, mode: str) -> list[Any]:
        aff = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        terms: list[Any] = aff.setdefault(f"{mode}DuringSchedulingIgnoredDuringExecution", [])
        return terms

    def affinity(self, *terms: dict[str, Any]) -> PodBuilder:
        self._terms("podAffinity", "required").extend(terms)
        return self

    def anti_affinity(self, *terms: dict[str, Any]) -> PodBuilder:
        self._terms("podAntiAffinity", "required").extend(terms)
        return self

    def prefer(self, weight: int, t: dict[str, Any]) -> PodBuilder:
        self._terms("podAffinity", "preferred").append({"weight": weight, "podAffinityTerm": t})
        return self

    def avoid(self, weight: int, t: dict[str, Any]) -> PodBuilder:
        self._terms("podAntiAffinity", "preferred").append({"weight": weight, "podAffinityTerm": t})
        return self

    def spread(self, key: str, max_skew: int = 1, match: Mapping[str, str] | None = None, *,
               when: str = "DoNotSchedule", nil_selector: bool = False, **extra: Any) -> PodBuilder:
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
        if not nil_selector:
            c["labelSelector"] = {"matchLabels": dict(match or {})}
        c.update(extra)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def node_selector(self, **kv: str) -> PodBuilder:
        self._spec.setdefault("nodeSelector", {}).update(kv)
        return self

    def tolerate(self, key: str, effect: str = "NoSchedule") -> PodBuilder:
        self._spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists", "effect": effect})
        return self

    def owned_by(self, kind: str, name: str, api_version: str = "apps/v1") -> PodBuilder:
        self.d["metadata"]["ownerReferences"] = [
            {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{name}", "controller": True}]
        return self

    def build(self) -> Pod:
        return parse_pod(self.d, "test")


def make_pod(name: str = "pod", namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str, zone: str | None = None, labels: Mapping[str, str] | None = None,
              taints: Sequence[tuple[str, str]] = (), hostname: bool = True) -> Node:
    """A node with its hostname label (unless ``hostname`` is False), a zone and NoSchedule-like
    taints given as (key, effect)."""
    all_labels = {HOSTNAME: name} if hostname else {}
    if zone is not None:
        all_labels[ZONE] = zone
    all_labels.update(labels or {})
    d: dict[str, Any] = {"metadata": {"name": name, "labels": all_labels},
                         "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}
    if taints:
        d["spec"] = {"taints": [{"key": k, "effect": e} for k, e in taints]}
    return parse_node(d, "test")


def namespace(name: str, **labels: str) -> Any:
    return parse_namespace({"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}}})


def selecting(kind: str, name: str, selector: Mapping[str, Any], namespace: str = "default") -> Any:
    """A Service (``selector`` = its label map) or a ReplicaSet/StatefulSet (a LabelSelector)."""
    return parse_selecting_object({"kind": kind, "metadata": {"name": name, "namespace": namespace},
                                   "spec": {"selector": dict(selector)}})


def make_snapshot(nodes: Iterable[Node], running: Iterable[PodBuilder | Pod] = (), *,
                  namespaces: Iterable[Any] = (), selecting_objects: Iterable[Any] = ()) -> Snapshot:
    snap = Snapshot.build(list(nodes), namespaces={ns.name: ns for ns in namespaces},
                          selecting=list(selecting_objects))
    for p in running:
        pod = p.build() if isinstance(p, PodBuilder) else p
        row = snap.row_of(pod.node_name)
        assert row is not None, f"pod {pod.key} runs on unknown node {pod.node_name!r}"
        snap.add_pod(pod, row)
    return snap


def make_plugin(cls: Any, module: Any, snapshot: Snapshot, args: Mapping[str, Any] | None = None,
                release: str | None = None) -> Any:
    """The plugin on ``snapshot`` in ``release`` (None: the default release)."""
    decoded = module.decode_args(args)
    assert module.validate_args(decoded) == []
    return cls(decoded, SimpleNamespace(snapshot=snapshot, release=Release.of(release)))


def verdict_text(code: int, reason_id: int) -> str:
    """"" for a passing node, else "<Code>: <reasons>"."""
    if code == 0:
        return ""
    return f"{Code(code).upstream}: {', '.join(REASONS[reason_id])}"


def run_filter(plugin: Any, pod: Pod, snapshot: Snapshot) -> tuple[Status, dict[str, str]]:
    """PreFilter, then Filter on every node unless PreFilter skipped: (status, node → verdict)."""
    state = CycleState()
    _, status = plugin.pre_filter(state, pod)
    if status.code == Code.SKIP:
        return status, {}
    table = snapshot.table
    v = plugin.filter(state, pod, table, np.arange(len(table)))
    return status, {table.names[i]: verdict_text(int(v.codes[i]), int(v.reasons[i])) for i in range(len(table))}


def filter_table(plugin: Any, state: CycleState, pod: Pod, table: Any) -> list[str]:
    """Filter on every row of a table (a fork, say) with a prepared state: the verdict texts."""
    v = plugin.filter(state, pod, table, np.arange(len(table)))
    return [verdict_text(int(c), int(r)) for c, r in zip(v.codes, v.reasons, strict=True)]


def run_score(plugin: Any, pod: Pod, snapshot: Snapshot, nodes: Sequence[str] | None = None
              ) -> tuple[dict[str, int], dict[str, int]] | None:
    """PreScore, Score and NormalizeScore over the nodes (all by default): None when PreScore
    skipped, else (node → raw score, node → normalised score)."""
    table = snapshot.table
    names = list(nodes) if nodes is not None else sorted(table.names)
    rows = np.array([table.row_of[n] for n in names], dtype=np.int64)
    state = CycleState()
    if plugin.pre_score(state, pod, table, rows).code == Code.SKIP:
        return None
    raw = plugin.score(state, pod, table, rows)
    norm = plugin.normalize(state, pod, raw.copy())
    return dict(zip(names, map(int, raw), strict=True)), dict(zip(names, map(int, norm), strict=True))
