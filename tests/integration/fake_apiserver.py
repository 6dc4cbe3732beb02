"""A loopback Kubernetes API server that speaks the list protocol, for tests and the benchmark.

What it does as kube-apiserver does: ``/version``; list endpoints for the core group and named
groups, cluster-wide and per namespace; ``limit`` / ``continue`` pagination with opaque tokens and
``remainingItemCount`` (left out when a field selector is given, as the real server does);
``fieldSelector=status.phase!=X`` on pods; errors as ``kind: Status`` bodies (401, 403, 404, 410
Expired, 429 with Retry-After); bearer-token or client-certificate authentication over http or
https. Faults (status codes, slow answers, connections dropped before or in the middle of a
body) are injected per path. Every request is recorded, whatever its method, so tests can check
that only GETs were sent; anything but GET is refused with 405.

Items are serialised once when loaded, so a page costs a join: the benchmark serves 150,000 pods.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

#: kind → (group, version, resource, namespaced)
RESOURCES: dict[str, tuple[str, str, str, bool]] = {
    "Node": ("", "v1", "nodes", False),
    "Pod": ("", "v1", "pods", True),
    "Namespace": ("", "v1", "namespaces", False),
    "Service": ("", "v1", "services", True),
    "ReplicationController": ("", "v1", "replicationcontrollers", True),
    "PersistentVolume": ("", "v1", "persistentvolumes", False),
    "PersistentVolumeClaim": ("", "v1", "persistentvolumeclaims", True),
    "LimitRange": ("", "v1", "limitranges", True),
    "ResourceQuota": ("", "v1", "resourcequotas", True),
    "ReplicaSet": ("apps", "v1", "replicasets", True),
    "StatefulSet": ("apps", "v1", "statefulsets", True),
    "DaemonSet": ("apps", "v1", "daemonsets", True),
    "Deployment": ("apps", "v1", "deployments", True),
    "Job": ("batch", "v1", "jobs", True),
    "CronJob": ("batch", "v1", "cronjobs", True),
    "HorizontalPodAutoscaler": ("autoscaling", "v2", "horizontalpodautoscalers", True),
    "PodDisruptionBudget": ("policy", "v1", "poddisruptionbudgets", True),
    "PriorityClass": ("scheduling.k8s.io", "v1", "priorityclasses", False),
    "StorageClass": ("storage.k8s.io", "v1", "storageclasses", False),
    "CSINode": ("storage.k8s.io", "v1", "csinodes", False),
    "CSIDriver": ("storage.k8s.io", "v1", "csidrivers", False),
    "CSIStorageCapacity": ("storage.k8s.io", "v1", "csistoragecapacities", True),
    "VolumeAttachment": ("storage.k8s.io", "v1", "volumeattachments", False),
    "DeviceClass": ("resource.k8s.io", "v1", "deviceclasses", False),
    "ResourceSlice": ("resource.k8s.io", "v1", "resourceslices", False),
    "ResourceClaim": ("resource.k8s.io", "v1", "resourceclaims", True),
    "ResourceClaimTemplate": ("resource.k8s.io", "v1", "resourceclaimtemplates", True),
    "NodePool": ("karpenter.sh", "v1", "nodepools", False),
    "NodeClaim": ("karpenter.sh", "v1", "nodeclaims", False),
}
_BY_ROUTE = {(g, v, r): (k, ns) for k, (g, v, r, ns) in RESOURCES.items()}
_BY_GROUP = {(g, r): (k, v, ns) for k, (g, v, r, ns) in RESOURCES.items()}

EXPIRED_MESSAGE = ("The provided continue parameter is too old to display a consistent list result. You can start "
                   "a new list without the continue parameter, or use the continue token in this response to "
                   "retrieve the remainder of the results. Continuing with the provided token results in an "
                   "inconsistent list - objects that were created, modified, or deleted between the time the first "
                   "chunk was returned and now may show up in the list.")


@dataclass
class Fault:
    """Answer the next ``times`` matching GETs of ``path`` (no query) wrongly."""

    path: str
    status: int = 0
    times: int = 1
    retry_after: str | None = None
    #: "" (answer), "before" (close without a word) or "midway" (close half-way through the body)
    drop: str = ""
    delay: float = 0.0
    #: only requests that carry a continue token (to expire a list half-way through)
    on_continue: bool = False
    message: str = ""
    reason: str = ""


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    authorization: str
    client_cn: str


@dataclass
class _Items:
    namespace: list[str] = field(default_factory=list)
    phase: list[str] = field(default_factory=list)
    body: list[bytes] = field(default_factory=list)


def status_body(code: int, reason: str, message: str, kind: str = "") -> bytes:
    doc: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                           "message": message, "reason": reason, "code": code}
    if kind:
        doc["details"] = {"kind": kind}
    return json.dumps(doc).encode()


class FakeApiServer:
    """``with FakeApiServer(objects, token="t") as srv:`` … ``srv.url``, ``srv.requests``."""

    def __init__(self, objects: Iterable[dict[str, Any]] = (), *, token: str | None = None,
                 tls: tuple[str, str] | None = None, client_ca: str | None = None,
                 git_version: str = "v1.34.1", user: str = "jane") -> None:
        self.token = token
        self.git_version = git_version
        self.user = user
        self.faults: list[Fault] = []
        self.forbidden: set[str] = set()
        #: resources answered with 404, as by a server that does not serve their group/version
        self.unserved: set[str] = set()
        #: resource → the one version it is served at, when not the version of RESOURCES (a 1.32
        #: cluster serves resource.k8s.io at v1beta1 only)
        self.versions: dict[str, str] = {}
        self.requests: list[Request] = []
        self.resource_version = 1000
        self._lock = threading.Lock()
        self._items: dict[str, _Items] = {r[2]: _Items() for r in RESOURCES.values()}
        self._rows: dict[tuple[str, str, str, int], list[int]] = {}
        self.add(objects)
        self._tls: ssl.SSLContext | None = None
        if tls is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            if client_ca is not None:
                ctx.verify_mode = ssl.CERT_REQUIRED
                ctx.load_verify_locations(client_ca)
            self._tls = ctx
        self._httpd = _Server(("127.0.0.1", 0), _Handler, self)
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ data and faults
    def add(self, objects: Iterable[dict[str, Any]]) -> None:
        for obj in objects:
            group, version, resource, _ = RESOURCES[obj["kind"]]
            store = self._items[resource]
            md = obj.get("metadata") or {}
            store.namespace.append(md.get("namespace") or "")
            store.phase.append(((obj.get("status") or {}).get("phase")) or "")
            # list items come without apiVersion and kind, as the real server sends them
            store.body.append(json.dumps({k: v for k, v in obj.items() if k not in ("apiVersion", "kind")},
                                         separators=(",", ":")).encode())

    def add_serialized(self, resource: str, namespace: str, phase: str, body: bytes) -> None:
        store = self._items[resource]
        store.namespace.append(namespace)
        store.phase.append(phase)
        store.body.append(body)

    def fault(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    def forbid(self, *resources: str) -> None:
        self.forbidden.update(resources)

    def _take_fault(self, path: str, has_continue: bool) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.path == path and f.times > 0 and (has_continue or not f.on_continue):
                    f.times -= 1
                    return f
        return None

    # ---------------------------------------------------------------------- lifecycle
    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{'https' if self._tls else 'http'}://{host}:{port}"

    def start(self) -> FakeApiServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> FakeApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def methods(self) -> set[str]:
        return {r.method for r in self.requests}

    def paths(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    # ------------------------------------------------------------------------ answers
    def list_page(self, resource: str, namespace: str, query: dict[str, str]) -> tuple[int, bytes]:
        kind, _ = next((k, ns) for (g, v, r), (k, ns) in _BY_ROUTE.items() if r == resource)
        store = self._items[resource]
        selector = query.get("fieldSelector", "")
        excluded: set[str] = set()
        required: str | None = None
        for term in filter(None, selector.split(",")):
            if term.startswith("status.phase!="):
                excluded.add(term.split("!=", 1)[1])
            elif term.startswith("status.phase="):
                required = term.split("=", 1)[1]
            else:
                return 400, status_body(400, "BadRequest", f'field label not supported: {term.split("=")[0]}')
        key = (resource, namespace, selector, len(store.body))
        rows = self._rows.get(key)
        if rows is None:
            # cached per list: recomputing it for each of 300 pages of 150,000 pods would make the
            # fake server, not kplan, the bottleneck of the benchmark
            rows = [i for i in range(len(store.body))
                    if (not namespace or store.namespace[i] == namespace)
                    and store.phase[i] not in excluded and (required is None or store.phase[i] == required)]
            self._rows[key] = rows
        start = 0
        token = query.get("continue", "")
        rv = self.resource_version
        if token:
            try:
                state = json.loads(base64.urlsafe_b64decode(token.encode()))
                start, rv = int(state["start"]), int(state["rv"])
            except (ValueError, KeyError):
                return 400, status_body(400, "BadRequest", "continue key is not valid")
        limit = int(query.get("limit") or 0)
        end = min(len(rows), start + limit) if limit > 0 else len(rows)
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if end < len(rows):
            meta["continue"] = base64.urlsafe_b64encode(json.dumps({"start": end, "rv": rv}).encode()).decode()
            if not selector:
                meta["remainingItemCount"] = len(rows) - end
        group, version, _, _ = RESOURCES[kind]
        version = self.versions.get(resource, version)
        head = json.dumps({"kind": f"{kind}List", "apiVersion": f"{group}/{version}" if group else version,
                           "metadata": meta}, separators=(",", ":")).encode()
        return 200, head[:-1] + b',"items":[' + b",".join(store.body[i] for i in rows[start:end]) + b"]}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # keep-alive connections of a finished test must not hold the port
    allow_reuse_address = True

    def __init__(self, addr: tuple[str, int], handler: type[BaseHTTPRequestHandler], api: FakeApiServer) -> None:
        self.api = api
        super().__init__(addr, handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = super().get_request()
        if self.api._tls is not None:
            # the handshake runs in the handler's thread, on its first read
            sock = self.api._tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # dropped connections and refused handshakes are part of the tests


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in separate writes; with Nagle on, each answer waits for a delayed ACK
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                self.connection.do_handshake()
            except (ssl.SSLError, OSError):
                self.close_connection = True
                raise

    def _client_cn(self) -> str:
        if not isinstance(self.connection, ssl.SSLSocket):
            return ""
        cert = self.connection.getpeercert() or {}
        for rdn in cert.get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    return str(value)
        return ""

    def _record(self) -> tuple[str, dict[str, str]]:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.server.api.requests.append(Request(self.command, parts.path, query,
                                                self.headers.get("Authorization", ""), self._client_cn()))
        return parts.path, query

    def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self) -> None:
        self._record()
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self._send(405, status_body(405, "MethodNotAllowed", f"the fake API server only answers GET, not "
                                                             f"{self.command}"))

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _refuse

    def do_GET(self) -> None:
        api = self.server.api
        path, query = self._record()
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        # the API server takes the scheme in any case (in-cluster clients send "bearer")
        if api.token is not None and (scheme.lower() != "bearer" or token != api.token):
            self._send(401, status_body(401, "Unauthorized", "Unauthorized"))
            return
        fault = api._take_fault(path, bool(query.get("continue")))
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.drop == "before":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault.status:
                headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                reason = fault.reason or {410: "Expired", 429: "TooManyRequests"}.get(fault.status, "InternalError")
                message = fault.message or (EXPIRED_MESSAGE if fault.status == 410 else "fault injected by the test")
                self._send(fault.status, status_body(fault.status, reason, message), headers)
                return
        code, body = self._answer(path, query)
        if fault is not None and fault.drop == "midway":
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._send(code, body)

    def _answer(self, path: str, query: dict[str, str]) -> tuple[int, bytes]:
        api = self.server.api
        if path == "/version":
            if "/version" in api.forbidden:
                return 403, status_body(403, "Forbidden", f'forbidden: User "{api.user}" cannot get path "/version"')
            return 200, json.dumps({"major": "1", "minor": api.git_version.split(".")[1],
                                    "gitVersion": api.git_version, "platform": "linux/amd64"}).encode()
        parts = path.strip("/").split("/")
        if parts[:1] == ["api"] and len(parts) >= 3:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 4:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return 404, status_body(404, "NotFound", "the server could not find the requested resource")
        namespace = ""
        if len(rest) == 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        route = None
        if len(rest) == 1 and (group, rest[0]) in _BY_GROUP:
            kind, default_version, namespaced = _BY_GROUP[(group, rest[0])]
            if version == api.versions.get(rest[0], default_version):
                route = (kind, namespaced)
        if route is None or (namespace and not route[1]):
            return 404, status_body(404, "NotFound", "the server could not find the requested resource")
        resource = rest[0]
        if resource in api.unserved:
            return 404, status_body(404, "NotFound", "the server could not find the requested resource")
        if resource in api.forbidden:
            scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
            return 403, status_body(403, "Forbidden", f'{resource}{"." + group if group else ""} is forbidden: User '
                                    f'"{api.user}" cannot list resource "{resource}" in API group "{group}" {scope}',
                                    kind=resource)
        return api.list_page(resource, namespace, query)
