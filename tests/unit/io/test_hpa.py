"""``--hpa``: each HorizontalPodAutoscaler's target scaled to a bound (kplan.io.hpa), read from
every input shape (files, kubectl lists, typed-client lists, a cluster-info dump stream)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kplan.errors import InputError
from kplan.io.hpa import hpa_changes, hpa_targets, parse_bound
from kplan.io.manifests import iter_objects
from kplan.io.workspace import Workspace, load_workspace
from kplan.model.raw import RawObject

ROOT = Path(__file__).resolve().parents[3]
HPAS = ROOT / "fixtures/hpa/hpas.yaml"


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def deployment(name: str, replicas: int | None = 2, kind: str = "Deployment") -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": name}},
                            "template": {"metadata": {"labels": {"app": name}},
                                         "spec": {"containers": [{"name": "c", "image": "app",
                                                                  "resources": {"requests": {"cpu": "100m"}}}]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def autoscaler(name: str, target: str, kind: str = "Deployment", lo: int | None = None, hi: int = 5,
               current: int | None = None, api: str = "autoscaling/v2") -> dict[str, Any]:
    spec: dict[str, Any] = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": target},
                            "maxReplicas": hi}
    if lo is not None:
        spec["minReplicas"] = lo
    d: dict[str, Any] = {"apiVersion": api, "kind": "HorizontalPodAutoscaler",
                         "metadata": {"name": name, "namespace": "shop"}, "spec": spec}
    if current is not None:
        d["status"] = {"currentReplicas": current, "desiredReplicas": current}
    return d


def load(cluster: list[dict[str, Any]], manifests: list[dict[str, Any]] = ()) -> Workspace:  # type: ignore[assignment]
    return load_workspace([RawObject(d, "cluster.yaml") for d in [node("n1"), *cluster]],
                          [RawObject(d, "app.yaml") for d in manifests], namespace="shop")


def targets(ws: Workspace, bound: str, scaled: tuple[str, ...] = ()) -> tuple[list[tuple[str, str]], list[str]]:
    found, notes = hpa_targets(ws.inputs, ws.workloads, bound, scaled)
    return [(t.spec, t.by.field) for t in found], notes


@pytest.mark.parametrize(("bound", "expected"), [
    pytest.param("max", [("deployment/shop/web=5", "maxReplicas")], id="max is spec.maxReplicas"),
    pytest.param("min", [("deployment/shop/web=1", "minReplicas")], id="min defaults to 1 when unset"),
    pytest.param("current", [("deployment/shop/web=3", "status.currentReplicas")], id="current is the status"),
    pytest.param("none", [], id="none scales nothing"),
])
def test_bounds(bound: str, expected: list[tuple[str, str]]) -> None:
    ws = load([deployment("web"), autoscaler("web", "web", current=3)])
    assert targets(ws, bound) == (expected, [])


def test_current_without_a_status_keeps_the_declared_replicas_with_a_note() -> None:
    ws = load([deployment("web", replicas=None), autoscaler("web", "web")])
    found, notes = targets(ws, "current")
    assert found == [("deployment/shop/web=1", "no status: the declared replicas")]
    assert notes == ["cluster.yaml: HorizontalPodAutoscaler shop/web: has no status (status.currentReplicas); "
                     "--hpa current keeps Deployment shop/web at its declared 1 replica"]


@pytest.mark.parametrize(("objects", "note"), [
    pytest.param([autoscaler("search", "search")],
                 "cluster.yaml: HorizontalPodAutoscaler shop/search: spec.scaleTargetRef: no Deployment named search "
                 "in namespace shop in the cluster or the manifests; --hpa max scales nothing for it",
                 id="a missing target is named with its autoscaler"),
    pytest.param([deployment("web"), autoscaler("web", "web", kind="StatefulSet")],
                 "cluster.yaml: HorizontalPodAutoscaler shop/web: spec.scaleTargetRef: no StatefulSet named web "
                 "in namespace shop in the cluster or the manifests; --hpa max scales nothing for it",
                 id="the target is matched by kind too"),
    pytest.param([autoscaler("checkout", "checkout", kind="Rollout")],
                 "cluster.yaml: HorizontalPodAutoscaler shop/checkout: spec.scaleTargetRef: kplan scales Deployment, "
                 "StatefulSet, ReplicaSet, ReplicationController, not Rollout; --hpa max leaves Rollout shop/checkout "
                 "as it is", id="a custom resource target"),
    pytest.param([deployment("web"), autoscaler("a", "web"), autoscaler("b", "web")],
                 "HorizontalPodAutoscalers shop/a, shop/b all scale Deployment shop/web: the HPA controller scales "
                 "none of them (AmbiguousSelector); --hpa leaves it at its declared replicas",
                 id="two autoscalers of one target"),
    pytest.param([deployment("web")],
                 "--hpa max: the cluster and the manifests hold no HorizontalPodAutoscaler; nothing is scaled",
                 id="no autoscaler at all"),
])
def test_what_is_not_scaled_is_a_warning(objects: list[dict[str, Any]], note: str) -> None:
    assert targets(load(objects), "max") == ([], [note])


def test_scale_wins_over_the_autoscaler() -> None:
    ws = load([deployment("web"), autoscaler("web", "web")])
    assert targets(ws, "max", ("Deployment shop/web",)) == ([], [
        "cluster.yaml: HorizontalPodAutoscaler shop/web: Deployment shop/web is scaled by --scale, which wins over "
        "--hpa max"])


def test_a_manifest_autoscaler_configures_the_clusters_and_targets_a_manifest_workload() -> None:
    ws = load([deployment("web"), autoscaler("web", "web", hi=4)],
              [deployment("web", replicas=2), {**autoscaler("web", "web", hi=7), "metadata": {"name": "web"}}])
    assert targets(ws, "max") == ([("deployment/shop/web=7", "maxReplicas")], [])


def test_statefulset_and_replicaset_targets_are_scaled_as_scale_would() -> None:
    # the workloads are the manifests' (their pods pending), the autoscalers the cluster's
    ws = load([autoscaler("db", "db", kind="StatefulSet", lo=1, hi=4), autoscaler("rs", "rs", kind="ReplicaSet", hi=3)],
              [deployment("db", 2, "StatefulSet"), deployment("rs", 1, "ReplicaSet")])
    found, _ = hpa_targets(ws.inputs, ws.workloads, "max")
    changes = hpa_changes(ws.inputs, ws.workloads, found, seed=0)
    assert [(c.label, c.current, c.replicas, len(c.add)) for c in changes] == [
        ("StatefulSet shop/db", 2, 4, 2), ("ReplicaSet shop/rs", 1, 3, 2)]
    assert [p.name for p in changes[0].add] == ["db-2", "db-3"]
    assert changes[0].describe() == ("scale StatefulSet shop/db from 2 to 4 replicas (HorizontalPodAutoscaler "
                                     "shop/db: maxReplicas)")
    found, _ = hpa_targets(ws.inputs, ws.workloads, "min")
    down = hpa_changes(ws.inputs, ws.workloads, found, seed=0)
    assert [(c.replicas, [p.name for p in c.delete]) for c in down][0] == (1, ["db-1"])


def test_a_count_beyond_what_kplan_simulates_is_an_error_naming_the_autoscaler() -> None:
    ws = load([deployment("web"), autoscaler("web", "web", hi=1_000_000)])
    with pytest.raises(InputError, match=r"^cluster.yaml: HorizontalPodAutoscaler shop/web: spec.maxReplicas: "
                                         r"Invalid value: 1000000: kplan simulates at most"):
        hpa_targets(ws.inputs, ws.workloads, "max")


@pytest.mark.parametrize("value", ["max", "MIN", " current ", "none"])
def test_parse_bound(value: str) -> None:
    assert parse_bound(value) == value.strip().lower()


def test_a_bad_bound_is_a_one_line_error() -> None:
    with pytest.raises(InputError, match=r"^--hpa maximum: expected one of max, min, current, none$"):
        parse_bound("maximum")


def test_kubectl_list_file_is_read_with_each_item_named() -> None:
    ws = load_workspace(iter_objects([str(HPAS)], cluster=True), [])
    hpas = ws.inputs.hpas
    assert sorted(hpas) == [("shop", "checkout"), ("shop", "db"), ("shop", "search"), ("shop", "web")]
    assert hpas[("shop", "db")].api_version == "autoscaling/v1" and hpas[("shop", "db")].current_replicas is None
    assert hpas[("shop", "web")].current_replicas == 4
    assert hpas[("shop", "db")].source.endswith("hpas.yaml: items[1]")
    assert "HorizontalPodAutoscaler" not in ws.inputs.other, "no longer skipped"


def test_typed_client_list_and_dump_stream(tmp_path: Path) -> None:
    """A HorizontalPodAutoscalerList whose items carry no kind (a typed client's), appended to a
    concatenated stream as ``kubectl cluster-info dump`` prints one (it dumps no autoscalers)."""
    items = [{k: v for k, v in autoscaler("web", "web", hi=6, api="autoscaling/v1").items()
              if k not in ("kind", "apiVersion")}]
    stream = tmp_path / "dump.json"
    stream.write_text(json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": [node("n1")]}, indent=4) + "\n"
                      + json.dumps({"kind": "DeploymentList", "apiVersion": "apps/v1", "items": [deployment("web")]},
                                   indent=4) + "\n"
                      + json.dumps({"kind": "HorizontalPodAutoscalerList", "apiVersion": "autoscaling/v1",
                                    "items": items}, indent=4) + "\n")
    ws = load_workspace(iter_objects([str(stream)], cluster=True), [])
    found, notes = hpa_targets(ws.inputs, ws.workloads, "max")
    assert [(t.spec, t.workload) for t in found] == [("deployment/shop/web=6", "Deployment shop/web")]
    assert notes == []
