"""The Kubernetes list protocol against a loopback API server: pagination, expiry, retries, errors."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from kplan.errors import ClusterAccessError, InputError
from kplan.io import kube
from tests.integration.certs import Certs
from tests.integration.conftest import TOKEN
from tests.integration.fake_apiserver import FakeApiServer, Fault
from tests.integration.live import dra_objects, kubeconfig, small_cluster

PODS = "/api/v1/pods"


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def lister(srv: FakeApiServer, tmp_path: Path, *, chunk_size: int = 500, timeout: float = 5.0,
           sleep: Sleeps | None = None, **kw: object) -> kube.Lister:
    conn = kube.connect(kubeconfig(str(tmp_path), srv.url, token=TOKEN, **kw))  # type: ignore[arg-type]
    return kube.Lister(conn.transport, chunk_size=chunk_size, timeout=timeout,
                       sleep=sleep if sleep is not None else Sleeps())


def capture(srv: FakeApiServer, tmp_path: Path, **kw: object) -> kube.Capture:
    return kube.capture(lister(srv, tmp_path, **kw), "test")  # type: ignore[arg-type]


def names(items: list[str], kind: str) -> list[str]:
    """Names of the objects of one kind, from the JSON text a capture keeps."""
    objs = [json.loads(i) for i in items]
    return [o["metadata"]["name"] for o in objs if o["kind"] == kind]


# ------------------------------------------------------------------------------- whole capture

def test_a_bearer_token_over_http_reads_every_kind_with_gets_only(server: FakeApiServer, tmp_path: Path) -> None:
    cap = capture(server, tmp_path)
    assert cap.server_version == "v1.34.1" and cap.missing == [] and cap.warnings == []
    assert names(cap.encoded, "Node") == ["node-0", "node-1", "node-2"]
    assert "done" not in names(cap.encoded, "Pod"), "finished pods are left out by the field selector"
    assert len(names(cap.encoded, "Pod")) == 10
    assert cap.counts["priorityclasses"] == 1 and cap.counts["limitranges"] == 0
    assert names(cap.encoded, "VolumeAttachment") == ["csi-pv-1-node-0"]
    assert names(cap.encoded, "CSIStorageCapacity") == ["cap-zone-a"]
    assert names(cap.encoded, "HorizontalPodAutoscaler") == ["web"]
    assert [names(cap.encoded, k) for k in ("DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim")] \
        == [["gpu.example.com"], ["node-0-gpu.example.com-x7k2p"], ["one-gpu"], ["shared-gpu"]]
    listed = {r.path for r in server.requests} - {"/version"}
    assert listed == {k.path(None) for k in kube.KINDS}
    assert all(r.authorization == f"Bearer {TOKEN}" for r in server.requests)
    assert server.methods == {"GET"}


def test_items_carry_apiVersion_and_kind_and_lose_managedFields_and_last_applied(
        server: FakeApiServer, tmp_path: Path) -> None:
    cap = capture(server, tmp_path)
    objs = list(cap.objects())
    first_pod = next(i for i in objs if i["kind"] == "Pod")
    assert list(first_pod)[:2] == ["apiVersion", "kind"] and first_pod["apiVersion"] == "v1"
    assert first_pod["metadata"]["annotations"] == {"team": "a"}
    node = next(i for i in objs if i["kind"] == "Node")
    assert "managedFields" not in node["metadata"]
    pdb = next(i for i in objs if i["kind"] == "PodDisruptionBudget")
    assert pdb["apiVersion"] == "policy/v1"


def test_the_document_records_version_context_and_capture_time(server: FakeApiServer, tmp_path: Path) -> None:
    cap = capture(server, tmp_path)
    doc = cap.head()
    ann = doc["metadata"]["annotations"]
    assert doc["kind"] == "List" and "items" not in doc
    assert ann["kplan.dev/server-version"] == "v1.34.1" and ann["kplan.dev/context"] == "test"
    assert ann["kplan.dev/captured-at"].endswith("Z") and ann["kplan.dev/missing"] == ""


def test_a_bearer_token_over_https_checks_the_server_against_the_kubeconfig_ca(
        tls_server: FakeApiServer, certs: Certs, tmp_path: Path) -> None:
    cap = capture(tls_server, tmp_path, ca=certs.ca)
    assert tls_server.url.startswith("https://") and len(names(cap.encoded, "Node")) == 3


def test_a_client_certificate_over_https_authenticates(certs: Certs, tmp_path: Path) -> None:
    with FakeApiServer(small_cluster(), tls=(certs.server_cert, certs.server_key), client_ca=certs.ca) as srv:
        path = kubeconfig(str(tmp_path), srv.url, ca=certs.ca, client=(certs.client_cert, certs.client_key))
        cap = kube.snapshot(path)
    assert len(names(cap.encoded, "Pod")) == 10
    assert {r.client_cn for r in srv.requests} == {"jane"} and srv.methods == {"GET"}


def test_a_server_certificate_from_another_ca_is_refused(tls_server: FakeApiServer, tmp_path: Path) -> None:
    from tests.integration import certs as certs_mod

    other = certs_mod.make(str(tmp_path))
    with pytest.raises(ClusterAccessError, match="TLS connection to https://127.0.0.1:[0-9]+ failed: .*certificate"):
        capture(tls_server, tmp_path, ca=other.ca)


# ---------------------------------------------------------------------------------- pagination

def test_lists_are_read_page_by_page_with_continue_tokens(server: FakeApiServer, tmp_path: Path) -> None:
    pods = lister(server, tmp_path, chunk_size=3).list_kind(kube.KINDS[1])
    assert isinstance(pods, list) and len(pods) == 10
    calls = server.paths(PODS)
    assert [c.query.get("limit") for c in calls] == ["3"] * 4
    assert [bool(c.query.get("continue")) for c in calls] == [False, True, True, True]
    assert {c.query["fieldSelector"] for c in calls} == {"status.phase!=Succeeded,status.phase!=Failed"}


def test_an_expired_continue_token_restarts_the_list_from_the_beginning(
        server: FakeApiServer, tmp_path: Path) -> None:
    server.fault(Fault(PODS, status=410, on_continue=True))
    pods = lister(server, tmp_path, chunk_size=4).list_kind(kube.KINDS[1])
    assert isinstance(pods, list)
    pod_names = names(pods, "Pod")
    assert len(pod_names) == 10 and len(set(pod_names)) == 10, "no page counted twice"
    assert [bool(c.query.get("continue")) for c in server.paths(PODS)] == [False, True, False, True, True]


def test_a_list_that_keeps_expiring_gives_up_with_a_clear_error(server: FakeApiServer, tmp_path: Path) -> None:
    server.fault(Fault(PODS, status=410, on_continue=True, times=10))
    with pytest.raises(ClusterAccessError, match="listing pods: the list expired 4 times"):
        lister(server, tmp_path, chunk_size=4).list_kind(kube.KINDS[1])


def test_remaining_item_count_gives_the_progress_a_total(server: FakeApiServer, tmp_path: Path) -> None:
    seen: list[tuple[int, int | None]] = []
    lister(server, tmp_path, chunk_size=2).list_kind(kube.KINDS[0], on_page=lambda d, t: seen.append((d, t)))
    assert seen == [(2, 3), (3, 3)]


# ------------------------------------------------------------------------------------- retries

@pytest.mark.parametrize("fault, sleeps", [
    pytest.param(Fault(PODS, status=429, retry_after="1"), [1.0], id="429 waits as long as Retry-After says"),
    pytest.param(Fault(PODS, status=429, retry_after="0"), [0.0], id="429 with Retry-After 0 retries at once"),
    pytest.param(Fault(PODS, status=429), [0.5], id="429 without Retry-After backs off"),
    pytest.param(Fault(PODS, status=503, times=3), [0.5, 1.0, 2.0], id="5xx backs off exponentially"),
    pytest.param(Fault(PODS, status=500, retry_after="2"), [2.0], id="5xx honours Retry-After too"),
    pytest.param(Fault(PODS, drop="before", times=2), [0.5, 1.0], id="a connection closed before any answer"),
    pytest.param(Fault(PODS, drop="midway"), [0.5], id="a connection closed half-way through the body"),
])
def test_transient_failures_are_retried(server: FakeApiServer, tmp_path: Path, fault: Fault,
                                        sleeps: list[float]) -> None:
    server.fault(fault)
    slept = Sleeps()
    pods = lister(server, tmp_path, sleep=slept).list_kind(kube.KINDS[1])
    assert isinstance(pods, list) and len(pods) == 10
    assert slept == sleeps


def test_a_slow_answer_times_out_and_is_retried(server: FakeApiServer, tmp_path: Path) -> None:
    server.fault(Fault(PODS, delay=1.5))
    slept = Sleeps()
    t0 = time.monotonic()
    pods = lister(server, tmp_path, timeout=0.3, sleep=slept).list_kind(kube.KINDS[1])
    assert isinstance(pods, list) and len(pods) == 10
    assert slept == [0.5] and time.monotonic() - t0 < 1.4


def test_retries_end_with_a_clear_error(server: FakeApiServer, tmp_path: Path) -> None:
    server.fault(Fault(PODS, status=503, times=100, message="etcdserver: leader changed"))
    slept = Sleeps()
    with pytest.raises(ClusterAccessError, match="listing pods: HTTP 503: etcdserver: leader changed"):
        lister(server, tmp_path, sleep=slept).list_kind(kube.KINDS[1])
    assert slept == [0.5, 1.0, 2.0, 4.0, 8.0]


def test_backoff_is_capped() -> None:
    policy = kube.RetryPolicy(attempts=10, base=0.5, cap=30.0)
    assert [policy.backoff(i) for i in range(8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


# --------------------------------------------------------------------------------- permissions

def test_a_forbidden_optional_kind_is_a_warning_naming_the_permission(server: FakeApiServer, tmp_path: Path) -> None:
    server.forbid("poddisruptionbudgets", "limitranges")
    cap = capture(server, tmp_path)
    assert cap.missing == ["poddisruptionbudgets.policy", "limitranges"]
    assert cap.warnings[0] == ('no permission to list poddisruptionbudgets.policy (verb "list", resource '
                               '"poddisruptionbudgets", API group policy); the simulation will lack '
                               "PodDisruptionBudgets, so preemption treats every victim as unprotected")
    assert 'resource "limitranges", API group "" (core)' in cap.warnings[1]
    assert cap.head()["metadata"]["annotations"]["kplan.dev/missing"] == "poddisruptionbudgets.policy,limitranges"
    assert len(names(cap.encoded, "Pod")) == 10, "the other kinds are still read"


def test_a_kind_the_server_does_not_serve_is_a_warning(server: FakeApiServer, tmp_path: Path) -> None:
    server.unserved.add("csidrivers")
    cap = capture(server, tmp_path)
    assert cap.missing == ["csidrivers.storage.k8s.io"]
    assert cap.warnings[0].startswith("the cluster does not serve csidrivers.storage.k8s.io/v1 (HTTP 404)")


def test_karpenter_nodepools_and_nodeclaims_are_listed(tmp_path: Path) -> None:
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "general"},
            "spec": {"template": {"spec": {"requirements": [], "nodeClassRef": {
                "group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}}
    claim = {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "general-abcde"},
             "spec": {"requirements": []}}
    with FakeApiServer([*small_cluster(), pool, claim], token=TOKEN) as srv:
        cap = capture(srv, tmp_path)
    assert cap.missing == [] and cap.warnings == []
    assert names(cap.encoded, "NodePool") == ["general"] and names(cap.encoded, "NodeClaim") == ["general-abcde"]
    assert srv.methods == {"GET"}


def test_a_cluster_without_karpenter_is_neither_an_error_nor_a_warning(server: FakeApiServer, tmp_path: Path) -> None:
    server.unserved.update({"nodepools", "nodeclaims"})
    cap = capture(server, tmp_path)
    assert cap.missing == [] and cap.warnings == []
    assert len(names(cap.encoded, "Pod")) == 10


def test_karpenter_kinds_that_are_forbidden_are_a_warning(server: FakeApiServer, tmp_path: Path) -> None:
    server.forbid("nodepools")
    cap = capture(server, tmp_path)
    assert cap.missing == ["nodepools.karpenter.sh"]
    assert cap.warnings == ['no permission to list nodepools.karpenter.sh (verb "list", resource "nodepools", '
                            "API group karpenter.sh); the simulation will lack Karpenter's NodePools, so "
                            "--autoscaler karpenter has none to launch nodes from"]


DRA_RESOURCES = ("deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates")


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_resource_kinds_fall_back_to_the_beta_version_the_cluster_serves(tmp_path: Path, version: str) -> None:
    from kplan.model.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
    from kplan.scenario import classify

    objs = [o for o in small_cluster() if not o["apiVersion"].startswith("resource.k8s.io/")]
    with FakeApiServer(objs + dra_objects(version), token=TOKEN) as srv:
        srv.versions.update(dict.fromkeys(DRA_RESOURCES, version))
        cap = capture(srv, tmp_path)
    assert cap.missing == [] and cap.warnings == []
    slices = [o for o in cap.objects() if o["kind"] == "ResourceSlice"]
    assert [s["apiVersion"] for s in slices] == [f"resource.k8s.io/{version}"]
    tried = [r.path for r in srv.requests if r.path.endswith("/resourceslices")]
    assert tried == ["/apis/resource.k8s.io/v1/resourceslices", "/apis/resource.k8s.io/v1beta2/resourceslices",
                     "/apis/resource.k8s.io/v1beta1/resourceslices"][:2 if version == "v1beta2" else 3]
    # the beta objects are read as the v1 ones are
    dra = classify(cap.raw_objects()).dra
    assert sorted(type(x).__name__ for x in dra) == ["DeviceClass", "ResourceClaim", "ResourceClaimTemplate",
                                                     "ResourceSlice"]
    got = {type(x): x for x in dra}
    assert [d.name for d in got[ResourceSlice].devices] == ["gpu-0", "gpu-1"]
    assert got[ResourceSlice].devices[0].attributes["model"] == ("string", "h100")
    assert got[ResourceClaimTemplate].spec.requests[0].exactly is not None
    assert got[ResourceClaim].allocation is not None and got[DeviceClass].selectors


def test_resource_kinds_served_at_no_version_are_a_warning_each(server: FakeApiServer, tmp_path: Path) -> None:
    server.unserved.update(DRA_RESOURCES)
    cap = capture(server, tmp_path)
    assert cap.missing == [f"{r}.resource.k8s.io" for r in DRA_RESOURCES]
    assert cap.warnings[1] == ("the cluster does not serve resourceslices.resource.k8s.io at v1, v1beta2 or v1beta1 "
                               "(HTTP 404); the simulation will lack the devices the nodes publish in "
                               "ResourceSlices, so no resource claim can be allocated")
    assert len(server.paths("/apis/resource.k8s.io/v1beta1/resourceclaims")) == 1
    assert len(names(cap.encoded, "Pod")) == 10


def test_forbidden_resource_kinds_are_a_warning_and_no_other_version_is_tried(
        server: FakeApiServer, tmp_path: Path) -> None:
    server.forbid("resourceclaims")
    cap = capture(server, tmp_path)
    assert cap.missing == ["resourceclaims.resource.k8s.io"]
    assert cap.warnings == ['no permission to list resourceclaims.resource.k8s.io (verb "list", resource '
                            '"resourceclaims", API group resource.k8s.io); the simulation will lack ResourceClaims, '
                            "so pods using claims wait for them and devices allocated to claims look free"]
    assert [r.path for r in server.requests if r.path.endswith("/resourceclaims")] == \
        ["/apis/resource.k8s.io/v1/resourceclaims"]


@pytest.mark.parametrize("resource, words", [
    ("nodes", 'no permission to list nodes (verb "list", resource "nodes", API group "" (core)): kplan needs nodes'),
    ("pods", 'no permission to list pods (verb "list", resource "pods", API group "" (core)): kplan needs nodes'),
])
def test_forbidden_nodes_or_pods_stop_the_capture(server: FakeApiServer, tmp_path: Path, resource: str,
                                                   words: str) -> None:
    server.forbid(resource)
    with pytest.raises(ClusterAccessError) as e:
        capture(server, tmp_path)
    assert str(e.value).startswith(words) and e.value.exit_code == 3
    assert f'cannot list resource \\"{resource}\\"' not in str(e.value)
    assert f'cannot list resource "{resource}"' in str(e.value) and "\n" not in str(e.value)


def test_a_forbidden_version_endpoint_is_only_a_warning(server: FakeApiServer, tmp_path: Path) -> None:
    server.forbid("/version")
    cap = capture(server, tmp_path)
    assert cap.server_version == "unknown" and cap.warnings[0].startswith("GET /version: HTTP 403")


def test_rejected_credentials_are_a_cluster_access_error(server: FakeApiServer, tmp_path: Path) -> None:
    conn = kube.connect(kubeconfig(str(tmp_path), server.url, token="wrong"))
    with pytest.raises(ClusterAccessError, match=r"rejected the credentials \(401 Unauthorized"):
        kube.capture(kube.Lister(conn.transport), "test")


def test_one_namespace_reads_namespaced_kinds_there_and_warns(server: FakeApiServer, tmp_path: Path) -> None:
    cap = kube.capture(lister(server, tmp_path), "test", namespace="team-a")
    assert server.paths("/api/v1/namespaces/team-a/pods") and not server.paths(PODS)
    assert server.paths("/api/v1/nodes"), "cluster-scoped kinds are still read cluster-wide"
    assert set(names(cap.encoded, "Pod")) == {"pending-0", "pending-1", "pending-2", "pending-3", "huge"}
    assert cap.warnings[-1].startswith("pods and other namespaced objects were read from namespace team-a only")


# ------------------------------------------------------------------------------- configuration

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_cluster_fails_at_once(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    with pytest.raises(ClusterAccessError, match=f"cannot reach the cluster at {url}: .*[Cc]onnection refused"):
        kube.snapshot(kubeconfig(str(tmp_path), url, token=TOKEN))
    assert time.monotonic() - t0 < 3


def test_several_kubeconfig_paths_are_merged(server: FakeApiServer, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    full = json.loads(Path(kubeconfig(str(tmp_path), server.url, token=TOKEN, context="ctx")).read_text())
    a, b = tmp_path / "clusters-and-users", tmp_path / "contexts"
    a.write_text(json.dumps({**full, "contexts": [], "current-context": ""}))
    b.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "contexts": full["contexts"],
                             "current-context": "ctx"}))
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}{':'}{a}:{b}")
    conn = kube.connect()
    assert conn.context == "ctx" and conn.transport.server == server.url


def test_context_picks_a_context_other_than_the_current_one(server: FakeApiServer, tmp_path: Path) -> None:
    path = kubeconfig(str(tmp_path), server.url, token=TOKEN, extra_contexts=("other",))
    assert kube.connect(path, "other").context == "other"
    with pytest.raises(InputError, match=r"--context nope: no such context in kubeconfig .* \(contexts: test, other\)"):
        kube.connect(path, "nope")


@pytest.mark.parametrize("environ, match", [
    pytest.param({}, "no cluster to read: no kubeconfig", id="nothing configured"),
    pytest.param({"KUBECONFIG": "/nonexistent/a:/nonexistent/b"}, "KUBECONFIG=/nonexistent/a:/nonexistent/b: none",
                 id="KUBECONFIG naming no existing file"),
])
def test_missing_configuration_is_a_cluster_access_error(environ: dict[str, str], match: str) -> None:
    with pytest.raises(ClusterAccessError, match=match):
        kube.connect(environ=environ)


def test_an_explicit_kubeconfig_must_exist() -> None:
    with pytest.raises(ClusterAccessError, match="--kubeconfig /nonexistent/config: no such file"):
        kube.connect("/nonexistent/config")


def test_in_cluster_configuration_uses_the_service_account(tls_server: FakeApiServer, certs: Certs, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from kubernetes.config import incluster_config

    token = tmp_path / "token"
    token.write_text(TOKEN)
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", certs.ca)
    host, port = tls_server.url.removeprefix("https://").split(":")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    cap = kube.snapshot()
    assert cap.context == "in-cluster" and len(names(cap.encoded, "Node")) == 3
    assert {r.authorization.lower() for r in tls_server.requests} == {f"bearer {TOKEN}"}


def test_rbac_fixture_grants_list_on_exactly_the_kinds_kplan_reads() -> None:
    from ruamel.yaml import YAML

    path = Path(__file__).parents[2] / "fixtures" / "rbac" / "kplan-readonly-clusterrole.yaml"
    role = YAML(typ="safe").load(path.read_text())
    granted = {(g, r) for rule in role["rules"] if "resources" in rule
               for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted == {(k.group, k.resource) for k in kube.KINDS}
    assert {v for rule in role["rules"] for v in rule["verbs"]} == {"list", "get"}
    assert [r for r in role["rules"] if "get" in r["verbs"]] == [{"nonResourceURLs": ["/version"], "verbs": ["get"]}]


@pytest.mark.skipif(__import__("shutil").which("openssl") is None, reason="no openssl command")
def test_certificates_made_with_the_openssl_command_work_too(tmp_path: Path) -> None:
    from tests.integration import certs as certs_mod

    made = certs_mod._with_openssl(str(tmp_path), "jane")
    with FakeApiServer(small_cluster(), tls=(made.server_cert, made.server_key), client_ca=made.ca) as srv:
        cap = kube.snapshot(kubeconfig(str(tmp_path), srv.url, ca=made.ca, client=(made.client_cert, made.client_key)))
    assert len(names(cap.encoded, "Node")) == 3 and {r.client_cn for r in srv.requests} == {"jane"}
