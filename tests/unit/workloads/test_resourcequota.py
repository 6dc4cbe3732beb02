"""ResourceQuota admission (kplan.workloads.resourcequota), row by row against the rules of
pkg/quota/v1/evaluator/core/pods.go and the apiserver's resourcequota CheckRequest (v1.37.2),
with the API server's own messages."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from kplan.model.objects import Pod
from kplan.model.parse import parse_pod, parse_resource_quota
from kplan.model.quantity import Quantity
from kplan.model.quota import ResourceQuota
from kplan.workloads.resourcequota import refusals


def quota(hard: dict[str, str], used: dict[str, str] | None = None, *, name: str = "compute", ns: str = "shop",
          scopes: list[str] | None = None, selector: list[dict[str, Any]] | None = None) -> ResourceQuota:
    spec: dict[str, Any] = {"hard": hard}
    if scopes:
        spec["scopes"] = scopes
    if selector:
        spec["scopeSelector"] = {"matchExpressions": selector}
    d: dict[str, Any] = {"kind": "ResourceQuota", "metadata": {"name": name, "namespace": ns}, "spec": spec}
    if used is not None:
        d["status"] = {"hard": hard, "used": used}
    return parse_resource_quota(d, "quota.yaml")


def container(name: str = "c", requests: dict[str, str] | None = None, limits: dict[str, str] | None = None,
              **extra: Any) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "image": "app", "resources": res, **extra}


def pod(name: str, *containers: dict[str, Any], ns: str = "shop", inits: list[dict[str, Any]] | None = None,
        node: str = "", **spec: Any) -> Pod:
    s: dict[str, Any] = {"containers": list(containers) or [container(requests={"cpu": "1", "memory": "1Gi"},
                                                                       limits={"cpu": "1", "memory": "1Gi"})]}
    if inits:
        s["initContainers"] = inits
    if node:
        s["nodeName"] = node
    s.update(spec)
    d = {"kind": "Pod", "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"}, "spec": s}
    return parse_pod(d, f"{name}.yaml", keep_raw=not node)


def cpu(request: str, name: str = "c") -> dict[str, Any]:
    return container(name, requests={"cpu": request})


class Row(NamedTuple):
    quotas: list[ResourceQuota]
    created: list[Pod]
    #: pod name → the API server's message, for each pod refused
    refused: dict[str, str]
    existing: list[Pod] = []
    gone: list[Pod] = []


EXCEEDED = ('pods "{}" is forbidden: exceeded quota: compute, requested: {}, used: {}, limited: {}')

ROWS: dict[str, Row] = {
    "a pod within the quota is created": Row(
        [quota({"requests.cpu": "2"}, {"requests.cpu": "1"})], [pod("a", cpu("500m"))], {}),
    "a pod over the quota is refused with what it asked, what is used and the limit": Row(
        [quota({"requests.cpu": "2"}, {"requests.cpu": "1500m"})], [pod("a", cpu("1"))],
        {"a": EXCEEDED.format("a", "requests.cpu=1", "requests.cpu=1500m", "requests.cpu=2")}),
    "each pod created charges the quota: the third replica no longer fits": Row(
        [quota({"requests.cpu": "2"}, {"requests.cpu": "500m"})], [pod("a", cpu("600m")), pod("b", cpu("600m")),
                                                                    pod("c", cpu("600m"))],
        {"c": EXCEEDED.format("c", "requests.cpu=600m", "requests.cpu=1700m", "requests.cpu=2")}),
    "a refused pod charges nothing: a smaller one after it is created": Row(
        [quota({"requests.cpu": "2"}, {"requests.cpu": "1"})], [pod("big", cpu("2")), pod("small", cpu("1"))],
        {"big": EXCEEDED.format("big", "requests.cpu=2", "requests.cpu=1", "requests.cpu=2")}),
    "only the resources over the quota are named": Row(
        [quota({"requests.cpu": "4", "requests.memory": "1Gi", "pods": "10"},
               {"requests.cpu": "0", "requests.memory": "512Mi", "pods": "2"})],
        [pod("a", container(requests={"cpu": "1", "memory": "1Gi"}))],
        {"a": EXCEEDED.format("a", "requests.memory=1Gi", "requests.memory=512Mi", "requests.memory=1Gi")}),
    "the pods count: pods and count/pods": Row(
        [quota({"pods": "3", "count/pods": "10"}, {"pods": "3", "count/pods": "3"})], [pod("a", cpu("1"))],
        {"a": EXCEEDED.format("a", "pods=1", "pods=3", "pods=3")}),
    "cpu is requests.cpu": Row(
        [quota({"cpu": "1"}, {"cpu": "800m"})], [pod("a", cpu("300m"))],
        {"a": EXCEEDED.format("a", "cpu=300m", "cpu=800m", "cpu=1")}),
    "a quantity is printed in the format it was written: 1G stays 1G": Row(
        [quota({"limits.memory": "2G"}, {"limits.memory": "1500M"})],
        [pod("a", container(requests={"cpu": "1"}, limits={"memory": "1G"}))],
        {"a": EXCEEDED.format("a", "limits.memory=1G", "limits.memory=1500M", "limits.memory=2G")}),
    "a quota on cpu makes every container state it": Row(
        [quota({"requests.cpu": "10", "limits.memory": "10Gi"}, {"requests.cpu": "0", "limits.memory": "0"})],
        [pod("a", cpu("1", "app"), container("sidecar"))],
        {"a": 'pods "a" is forbidden: failed quota: compute: must specify limits.memory for: app,sidecar; '
              "requests.cpu for: sidecar"}),
    "a limit stands for the missing request (API defaulting), so it satisfies the constraint": Row(
        [quota({"requests.cpu": "10"}, {"requests.cpu": "0"})], [pod("a", container(limits={"cpu": "1"}))], {}),
    "init containers must state cpu too": Row(
        [quota({"requests.cpu": "10"}, {"requests.cpu": "0"})], [pod("a", cpu("1"), inits=[container("setup")])],
        {"a": 'pods "a" is forbidden: failed quota: compute: must specify requests.cpu for: setup'}),
    "pod-level resources lift the per-container constraint": Row(
        [quota({"requests.cpu": "10"}, {"requests.cpu": "0"})],
        [pod("a", container("app"), resources={"requests": {"cpu": "2"}})], {}),
    "pod-level requests are what the pod is charged": Row(
        [quota({"requests.cpu": "1"}, {"requests.cpu": "0"})],
        [pod("a", cpu("100m"), resources={"requests": {"cpu": "1500m"}})],
        {"a": EXCEEDED.format("a", "requests.cpu=1500m", "requests.cpu=0", "requests.cpu=1")}),
    "an init container's larger request is the pod's": Row(
        [quota({"requests.cpu": "1"}, {"requests.cpu": "0"})], [pod("a", cpu("100m"), inits=[cpu("2", "setup")])],
        {"a": EXCEEDED.format("a", "requests.cpu=2", "requests.cpu=0", "requests.cpu=1")}),
    "a sidecar's request adds to the containers'": Row(
        [quota({"requests.cpu": "1"}, {"requests.cpu": "0"})],
        [pod("a", cpu("600m"), inits=[{**cpu("600m", "proxy"), "restartPolicy": "Always"}])],
        {"a": EXCEEDED.format("a", "requests.cpu=1200m", "requests.cpu=0", "requests.cpu=1")}),
    "the overhead is charged": Row(
        [quota({"requests.cpu": "1"}, {"requests.cpu": "0"})], [pod("a", cpu("900m"), overhead={"cpu": "250m"})],
        {"a": EXCEEDED.format("a", "requests.cpu=1150m", "requests.cpu=0", "requests.cpu=1")}),
    "hugepages are charged by name and as requests": Row(
        [quota({"requests.hugepages-2Mi": "4Mi"}, {"requests.hugepages-2Mi": "2Mi"})],
        [pod("a", container(requests={"cpu": "1", "hugepages-2Mi": "4Mi"}, limits={"hugepages-2Mi": "4Mi"}))],
        {"a": EXCEEDED.format("a", "requests.hugepages-2Mi=4Mi", "requests.hugepages-2Mi=2Mi",
                              "requests.hugepages-2Mi=4Mi")}),
    "an extended resource is quoted as requests.<name>": Row(
        [quota({"requests.nvidia.com/gpu": "2"}, {"requests.nvidia.com/gpu": "2"})],
        [pod("a", container(requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "1"}))],
        {"a": EXCEEDED.format("a", "requests.nvidia.com/gpu=1", "requests.nvidia.com/gpu=2",
                              "requests.nvidia.com/gpu=2")}),
    "a quota of another namespace does not apply": Row(
        [quota({"requests.cpu": "1"}, {"requests.cpu": "1"}, ns="other")], [pod("a", cpu("1"))], {}),
    "a quota of no pod resource does not apply": Row(
        [quota({"services": "1"}, {"services": "5"})], [pod("a", cpu("1"))], {}),
    "a BestEffort quota counts only pods without cpu or memory": Row(
        [quota({"pods": "1"}, {"pods": "1"}, scopes=["BestEffort"])],
        [pod("burstable", cpu("1")), pod("besteffort", container())],
        {"besteffort": EXCEEDED.format("besteffort", "pods=1", "pods=1", "pods=1").replace("compute", "compute")}),
    "a NotBestEffort quota counts the others": Row(
        [quota({"pods": "1"}, {"pods": "1"}, scopes=["NotBestEffort"])],
        [pod("besteffort", container()), pod("burstable", cpu("1"))],
        {"burstable": EXCEEDED.format("burstable", "pods=1", "pods=1", "pods=1")}),
    "a Terminating quota counts pods with activeDeadlineSeconds": Row(
        [quota({"pods": "1"}, {"pods": "1"}, scopes=["Terminating"])],
        [pod("service", cpu("1")), pod("job", cpu("1"), activeDeadlineSeconds=600)],
        {"job": EXCEEDED.format("job", "pods=1", "pods=1", "pods=1")}),
    "a PriorityClass scope selector matches the class named": Row(
        [quota({"pods": "0"}, {"pods": "0"}, selector=[{"scopeName": "PriorityClass", "operator": "In",
                                                       "values": ["high"]}])],
        [pod("low", cpu("1"), priorityClassName="low"), pod("high", cpu("1"), priorityClassName="high")],
        {"high": EXCEEDED.format("high", "pods=1", "pods=0", "pods=0")}),
    "a NotIn PriorityClass selector matches a pod without a class": Row(
        [quota({"pods": "0"}, {"pods": "0"}, selector=[{"scopeName": "PriorityClass", "operator": "NotIn",
                                                       "values": ["high"]}])],
        [pod("plain", cpu("1"))], {"plain": EXCEEDED.format("plain", "pods=1", "pods=0", "pods=0")}),
    "a CrossNamespacePodAffinity quota counts pods whose terms name namespaces": Row(
        [quota({"pods": "0"}, {"pods": "0"}, scopes=["CrossNamespacePodAffinity"])],
        [pod("local", cpu("1")), pod("cross", cpu("1"), affinity={"podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "zone", "labelSelector": {"matchLabels": {"a": "b"}}, "namespaces": ["other"]}]}})],
        {"cross": EXCEEDED.format("cross", "pods=1", "pods=0", "pods=0")}),
    "a quota whose status lacks a resource it limits: the API server cannot tell": Row(
        [quota({"requests.cpu": "4", "pods": "10"}, {"pods": "1"})], [pod("a", cpu("1"))],
        {"a": 'pods "a" is forbidden: status unknown for quota: compute, resources: pods,requests.cpu'}),
    "two quotas: the second refuses, so the first is not charged either": Row(
        [quota({"pods": "10"}, {"pods": "9"}, name="a-count"),
         quota({"requests.cpu": "1"}, {"requests.cpu": "500m"}, name="b-cpu")],
        [pod("big", cpu("1")), pod("small", cpu("500m"))],
        {"big": 'pods "big" is forbidden: exceeded quota: b-cpu, requested: requests.cpu=1, used: requests.cpu=500m, '
                "limited: requests.cpu=1"}),
    "a quota the manifests create is charged what the namespace's pods use": Row(
        [quota({"requests.cpu": "2"})], [pod("new", cpu("1"))],
        {"new": EXCEEDED.format("new", "requests.cpu=1", "requests.cpu=1500m", "requests.cpu=2")},
        existing=[pod("old-1", cpu("1"), node="n1"), pod("old-2", cpu("500m"), node="n1"),
                  pod("elsewhere", cpu("1"), ns="other", node="n1")]),
    "the pods a change deletes give back what they used": Row(
        [quota({"requests.cpu": "2"}, {"requests.cpu": "2"})], [pod("new", cpu("1"))], {},
        existing=[pod("old", cpu("1"), node="n1")], gone=[pod("old", cpu("1"), node="n1")]),
}


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_quota_admission(row: Row) -> None:
    got = refusals(row.quotas, row.existing, row.gone, row.created)
    names = {p.uid: p.name for p in row.created}
    assert {names[uid]: message for uid, message in got.items()} == row.refused


QUANTITIES = {
    "millicores": ("500m", "500m"),
    "whole cores": ("2000m", "2"),
    "a decimal fraction": ("1.5", "1500m"),
    "a thousand": ("2000", "2k"),
    "a decimal suffix": ("1G", "1G"),
    "a binary suffix": ("512Mi", "512Mi"),
    "a binary suffix carried up": ("1024Mi", "1Gi"),
    "a binary fraction": ("0.5Gi", "512Mi"),
    "a binary value below 1024 is decimal": ("0.5Ki", "512"),
    "an exponent": ("1e3", "1e3"),
    "zero": ("0", "0"),
}


@pytest.mark.parametrize(("text", "shown"), QUANTITIES.values(), ids=QUANTITIES.keys())
def test_quantities_print_as_apimachinery_prints_them(text: str, shown: str) -> None:
    assert Quantity.parse(text).string() == shown


def test_a_sum_keeps_the_first_format_unless_it_was_zero() -> None:
    assert Quantity.parse("9500m").add(Quantity.parse("500m")).string() == "10"
    assert Quantity.parse("1G").add(Quantity.parse("1Gi")).string() == "2073741824"
    assert Quantity(0).add(Quantity.parse("1Gi")).string() == "1Gi"


QUOTA = """apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: shop}
spec: {hard: {requests.cpu: "4", limits.memory: 8Gi}}
status:
  hard: {requests.cpu: "4", limits.memory: 8Gi}
  used: {requests.cpu: 2500m, limits.memory: 3Gi}
"""
APPS = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 500m}, limits: {memory: 1Gi}}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: pg, resources: {requests: {cpu: "2"}, limits: {memory: 1Gi}}}]
"""


def test_pods_over_a_namespace_quota_are_not_created_with_the_api_servers_message(
        tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 47 item 5: the quota was skipped with a warning and every pod was scheduled
    import json
    from pathlib import Path

    from kplan.cli.app import main

    monkeypatch.setenv("NO_COLOR", "1")
    root = Path(__file__).resolve().parents[3]
    (tmp_path / "quota.yaml").write_text(QUOTA)
    (tmp_path / "apps.yaml").write_text(APPS)
    args = [str(tmp_path / "apps.yaml"), "-c", str(root / "tests/fixtures/planning/cluster.yaml"),
            "-c", str(tmp_path / "quota.yaml"), "--tie-break", "lowest-name"]
    with pytest.raises(SystemExit) as e:
        main(["simulate", *args, "-o", "json"])
    out, err = capsys.readouterr()
    assert e.value.code == 1
    assert "ResourceQuota" not in err  # no longer skipped
    pods = {p["name"]: (p["status"], p["message"]) for p in json.loads(out)["pods"]}
    web = sorted(n for n in pods if n.startswith("web-"))
    assert [pods[n][0] for n in web].count("Scheduled") == 3  # 2500m + 3 x 500m = 4
    refused = next(n for n in web if pods[n][0] == "NotCreated")
    assert pods[refused][1] == (f'pods "{refused}" is forbidden: exceeded quota: compute, requested: '
                                "requests.cpu=500m, used: requests.cpu=4, limited: requests.cpu=4")
    assert pods["db-0"] == ("NotCreated", 'pods "db-0" is forbidden: exceeded quota: compute, requested: '
                                          "requests.cpu=2, used: requests.cpu=4, limited: requests.cpu=4")
    # OrderedReady: the controller waits for db-0, which never exists
    assert pods["db-1"] == ("NotCreated", "not created: its controller creates it once shop/db-0 is running and "
                                          "ready (podManagementPolicy OrderedReady)")
    with pytest.raises(SystemExit) as e:
        main(["explain", "pod", "shop/db-0", *args])
    out, _ = capsys.readouterr()
    assert "exceeded quota: compute" in out
    assert "never created (see its message), so kube-scheduler never saw it" in out
