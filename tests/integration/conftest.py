"""Fixtures for the live-cluster tests: a clean environment (no proxies, no real kubeconfig) and a
loopback API server that must only ever have seen GET requests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration import certs as certs_mod
from tests.integration.fake_apiserver import FakeApiServer
from tests.integration.live import small_cluster

TOKEN = "s3cr3t-token"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for var in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "HTTP_PROXY", "HTTPS_PROXY",
                "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    # a home without ~/.kube/config, so nothing of the machine's own is ever read
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))


@pytest.fixture
def server() -> Iterator[FakeApiServer]:
    with FakeApiServer(small_cluster(), token=TOKEN) as srv:
        yield srv
    assert srv.methods <= {"GET"}, f"kplan sent {srv.methods - {'GET'}} requests"


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> certs_mod.Certs:
    if not certs_mod.available():
        pytest.skip("neither the cryptography package nor the openssl command is installed")
    return certs_mod.make(str(tmp_path_factory.mktemp("certs")))


@pytest.fixture
def tls_server(certs: certs_mod.Certs) -> Iterator[FakeApiServer]:
    with FakeApiServer(small_cluster(), token=TOKEN, tls=(certs.server_cert, certs.server_key)) as srv:
        yield srv
    assert srv.methods <= {"GET"}
