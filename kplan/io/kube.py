"""Reading a live cluster: list calls only (HTTP GET), paginated, retried, parsed with ``json``.

This is the only module that imports ``kubernetes`` (and urllib3, its transport). The client is
used for what it does well and nothing else: loading a kubeconfig (``KUBECONFIG`` with several
paths, contexts, exec and auth-provider credential plugins, token refresh) or the in-cluster
service account, and building a TLS-configured connection pool from it. Objects are never turned
into the client's generated models: at 150,000 pods that costs minutes and gigabytes. Responses
are parsed with the ``json`` module and kept as plain dicts, as ``kubectl get -o json`` prints them.

Safety: the transport below has one method, ``get``; nothing in kplan can send any other verb to
a cluster. Kubeconfig files are never written back (``persist_config=False``), even when a
credential plugin refreshes a token.

The list protocol (as client-go's pager does it): ``limit`` / ``continue`` pagination; a 410
Expired continue token restarts that list from the beginning; 429 and 5xx responses and dropped
connections are retried with exponential backoff, honouring ``Retry-After``; a 403 on an optional
kind is a warning naming the missing permission, on nodes or pods a ClusterAccessError.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import os
import re
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol
from urllib.parse import urlencode

from kplan import __version__
from kplan.errors import ClusterAccessError, InputError
from kplan.io.collector import collector_paused
from kplan.model.raw import RawObject

#: Added by ``kubectl apply``: a full copy of the object, of no use to a scheduler simulation.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: Annotation keys of the snapshot document (``kind: List``) metadata.
ANNOTATION_PREFIX = "kplan.dev/"
#: The page size kubectl uses (``--chunk-size``).
DEFAULT_CHUNK_SIZE = 500
DEFAULT_TIMEOUT = 60.0
#: A list whose continue token expires this many times in a row gives up (each restart re-reads it all).
MAX_RESTARTS = 3
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: Objects are kept as compact JSON text once read: a pod takes ~3 KB that way, ~13 KB as dicts.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode
SERVICE_HOST_ENV = "KUBERNETES_SERVICE_HOST"


@dataclass(frozen=True)
class Kind:
    """One listed resource and what the simulation lacks when it cannot be read."""

    resource: str
    group: str
    version: str
    kind: str
    namespaced: bool
    lacks: str
    required: bool = False
    field_selector: str = ""
    #: older versions of the group to list when ``version`` is not served (newest first)
    fallback_versions: tuple[str, ...] = ()
    #: a custom resource of an add-on (Karpenter's): a cluster that does not serve it lacks the
    #: add-on, which is neither an error nor worth a warning
    add_on: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``resource.group`` as kubectl and RBAC error messages spell it."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def path(self, namespace: str | None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.resource}"
        return f"{base}/{self.resource}"


_VOLUMES = "volume binding, volume zones and per-node volume limits for pods with persistent volume claims"
_SPREAD = "default topology spreading, which groups pods by the services and controllers that select them"
#: resource.k8s.io is GA (v1) in 1.34; clusters of 1.32 and 1.33 serve only the betas, which kplan reads too
_DRA_BETAS = ("v1beta2", "v1beta1")

#: What ``kplan snapshot`` lists, in the order it lists and writes them.
KINDS: tuple[Kind, ...] = (
    Kind("nodes", "", "v1", "Node", False, "the nodes themselves", required=True),
    # finished pods hold no resources and the scheduler's informer ignores them
    Kind("pods", "", "v1", "Pod", True, "the running and pending pods", required=True,
         field_selector="status.phase!=Succeeded,status.phase!=Failed"),
    Kind("namespaces", "", "v1", "Namespace", False,
         "namespace labels, so namespaceSelector in pod (anti-)affinity terms sees only each namespace's "
         "kubernetes.io/metadata.name label"),
    Kind("services", "", "v1", "Service", True, _SPREAD),
    Kind("replicasets", "apps", "v1", "ReplicaSet", True, _SPREAD),
    Kind("replicationcontrollers", "", "v1", "ReplicationController", True, _SPREAD),
    Kind("statefulsets", "apps", "v1", "StatefulSet", True, _SPREAD),
    Kind("daemonsets", "apps", "v1", "DaemonSet", True, "the DaemonSets, so what-ifs cannot add their pods to new nodes"),
    Kind("deployments", "apps", "v1", "Deployment", True, "the Deployments, so what-ifs cannot scale them"),
    Kind("jobs", "batch", "v1", "Job", True, "the Jobs, so what-ifs cannot expand them into pods"),
    Kind("cronjobs", "batch", "v1", "CronJob", True, "the CronJobs, so what-ifs cannot expand them into pods"),
    Kind("horizontalpodautoscalers", "autoscaling", "v2", "HorizontalPodAutoscaler", True,
         "the HorizontalPodAutoscalers, so --hpa cannot scale their targets", fallback_versions=("v1",)),
    Kind("poddisruptionbudgets", "policy", "v1", "PodDisruptionBudget", True,
         "PodDisruptionBudgets, so preemption treats every victim as unprotected"),
    Kind("priorityclasses", "scheduling.k8s.io", "v1", "PriorityClass", False,
         "PriorityClasses, so pending pods naming a class other than the built-in ones are rejected"),
    Kind("persistentvolumes", "", "v1", "PersistentVolume", False, _VOLUMES),
    Kind("persistentvolumeclaims", "", "v1", "PersistentVolumeClaim", True, _VOLUMES),
    Kind("storageclasses", "storage.k8s.io", "v1", "StorageClass", False, _VOLUMES),
    Kind("csinodes", "storage.k8s.io", "v1", "CSINode", False, _VOLUMES),
    Kind("csidrivers", "storage.k8s.io", "v1", "CSIDriver", False, _VOLUMES),
    Kind("csistoragecapacities", "storage.k8s.io", "v1", "CSIStorageCapacity", True,
         "the storage capacity check of volume binding, so claims of drivers that track capacity fit no node"),
    Kind("volumeattachments", "storage.k8s.io", "v1", "VolumeAttachment", False,
         "the volumes attached to nodes that no pod there uses, so per-node volume limits count only pods' volumes"),
    Kind("deviceclasses", "resource.k8s.io", "v1", "DeviceClass", False,
         "DeviceClasses, so pods whose resource claims name a class fail as if the class did not exist",
         fallback_versions=_DRA_BETAS),
    Kind("resourceslices", "resource.k8s.io", "v1", "ResourceSlice", False,
         "the devices the nodes publish in ResourceSlices, so no resource claim can be allocated",
         fallback_versions=_DRA_BETAS),
    Kind("resourceclaims", "resource.k8s.io", "v1", "ResourceClaim", True,
         "ResourceClaims, so pods using claims wait for them and devices allocated to claims look free",
         fallback_versions=_DRA_BETAS),
    Kind("resourceclaimtemplates", "resource.k8s.io", "v1", "ResourceClaimTemplate", True,
         "ResourceClaimTemplates, so the claims of pending pods made from templates are never created",
         fallback_versions=_DRA_BETAS),
    Kind("limitranges", "", "v1", "LimitRange", True, "LimitRange defaults for pending pods' requests and limits"),
    Kind("resourcequotas", "", "v1", "ResourceQuota", True,
         "ResourceQuotas, so pods over a namespace's quota are scheduled as if it had none"),
    # Karpenter's custom resources (karpenter.sh/v1, Karpenter v1.0 and later), for --autoscaler karpenter
    Kind("nodepools", "karpenter.sh", "v1", "NodePool", False,
         "Karpenter's NodePools, so --autoscaler karpenter has none to launch nodes from", add_on=True),
    Kind("nodeclaims", "karpenter.sh", "v1", "NodeClaim", False,
         "Karpenter's NodeClaims, so --autoscaler karpenter counts no node in flight against the NodePools' "
         "limits", add_on=True),
)


# ------------------------------------------------------------------------------------ transport

class Reply(NamedTuple):
    status: int
    headers: Mapping[str, str]
    body: bytes


class Unreachable(Exception):
    """No connection could be opened (refused, no route, DNS, connect timeout)."""


class Dropped(Exception):
    """A connection was opened but the response did not arrive whole (reset, closed, read timeout)."""


class Transport(Protocol):
    """Read-only by construction: GET is the only request a transport can make."""

    server: str

    def get(self, path_and_query: str, timeout: float) -> Reply: ...

    def close(self) -> None: ...


class Urllib3Transport:
    """GET over the kubernetes client's urllib3 pool (TLS, client certificates, proxy from its config)."""

    def __init__(self, configuration: Any) -> None:
        from kubernetes.client.rest import RESTClientObject

        self.configuration = configuration
        self.server = str(configuration.host).rstrip("/")
        self._pool = RESTClientObject(configuration).pool_manager
        self._headers = {
            "Accept": "application/json",
            # the API server compresses large list responses when asked (APIResponseCompression)
            "Accept-Encoding": "gzip",
            "User-Agent": f"kplan/{__version__}",
        }

    def _auth_headers(self) -> dict[str, str]:
        # auth_settings() calls the refresh hook, so exec-plugin and in-cluster tokens stay fresh
        out = {}
        for setting in self.configuration.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                out[str(setting["key"])] = str(setting["value"])
        return out

    def get(self, path_and_query: str, timeout: float) -> Reply:
        import urllib3
        from urllib3 import exceptions as ux

        headers = {**self._headers, **self._auth_headers()}
        try:
            with warnings.catch_warnings():
                # insecure-skip-tls-verify: warned about once by connect(), not on every request
                warnings.simplefilter("ignore", ux.InsecureRequestWarning)
                r = self._pool.request("GET", self.server + path_and_query, headers=headers, retries=False,
                                       redirect=False, preload_content=True,
                                       timeout=urllib3.Timeout(connect=min(timeout, 30.0), read=timeout))
        except ux.SSLError as e:
            raise ClusterAccessError(f"TLS connection to {self.server} failed: {_reason(e)}") from None
        except (ux.NewConnectionError, ux.ConnectTimeoutError) as e:
            raise Unreachable(_reason(e)) from None
        except (ux.ProtocolError, ux.ReadTimeoutError, ux.DecodeError, ConnectionError) as e:
            raise Dropped(_reason(e)) from None
        except ux.HTTPError as e:
            raise ClusterAccessError(f"request to {self.server} failed: {_reason(e)}") from None
        return Reply(r.status, {k.lower(): v for k, v in r.headers.items()}, r.data)

    def close(self) -> None:
        self._pool.clear()


def _reason(e: BaseException) -> str:
    """The innermost useful words of a urllib3 exception, on one line."""
    text = str(e)
    inner = getattr(e, "reason", None)
    if isinstance(inner, BaseException) and str(inner):
        text = str(inner)
    # urllib3 prefixes "<urllib3.connection.HTTPConnection object at 0x…>: " to connection errors
    if text.startswith("<") and ">: " in text:
        text = text.split(">: ", 1)[1]
    return " ".join(text.split()) or type(e).__name__


# ------------------------------------------------------------------------------ configuration

@dataclass
class Connection:
    transport: Transport
    context: str
    warnings: list[str] = field(default_factory=list)


def connect(kubeconfig: str | None = None, context: str | None = None,
            environ: Mapping[str, str] | None = None) -> Connection:
    """Find the cluster as kubectl does: --kubeconfig, else $KUBECONFIG (several paths joined with
    the path separator), else ~/.kube/config, else the in-cluster service account."""
    env = os.environ if environ is None else environ
    from kubernetes import client as kclient
    from kubernetes import config as _kconfig

    kconfig: Any = _kconfig  # the package has no type hints
    configuration = kclient.Configuration()
    notes: list[str] = []
    paths = _kubeconfig_paths(kubeconfig, env)
    if paths:
        try:
            contexts, current = kconfig.list_kube_config_contexts(config_file=paths)
        except Exception as e:  # the loader raises ConfigException, yaml and OS errors alike
            raise ClusterAccessError(f"kubeconfig {paths}: {_one_line(e)}") from None
        names = [str(c.get("name")) for c in contexts or []]
        if context is not None and context not in names:
            raise InputError(f"--context {context}: no such context in kubeconfig {paths} "
                             f"(contexts: {', '.join(names) or 'none'})")
        chosen = context or (str(current.get("name")) if isinstance(current, Mapping) else "")
        if not chosen:
            raise ClusterAccessError(f"kubeconfig {paths}: no current-context; give --context")
        try:
            # persist_config=False: a refreshed token is never written back into the user's files
            kconfig.load_kube_config(config_file=paths, context=chosen, client_configuration=configuration,
                                     persist_config=False)
        except Exception as e:
            raise ClusterAccessError(f"kubeconfig {paths}, context {chosen}: {_one_line(e)}") from None
    elif env.get(SERVICE_HOST_ENV):
        if context is not None:
            raise InputError(f"--context {context}: there is no kubeconfig (running in a pod with its "
                             "service account); give --kubeconfig too")
        try:
            kconfig.load_incluster_config(client_configuration=configuration)
        except Exception as e:
            raise ClusterAccessError(f"in-cluster configuration: {_one_line(e)}") from None
        chosen = "in-cluster"
    else:
        raise NoClusterConfigured("no cluster to read: no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) "
                                  "and not running in a pod")
    if not configuration.verify_ssl:
        notes.append(f"context {chosen}: TLS certificate verification is turned off (insecure-skip-tls-verify)")
    try:
        transport = Urllib3Transport(configuration)
    except Exception as e:  # unreadable client certificate or key, bad proxy URL
        raise ClusterAccessError(f"context {chosen}: cannot set up the connection: {_one_line(e)}") from None
    return Connection(transport, chosen, notes)


def _kubeconfig_paths(kubeconfig: str | None, env: Mapping[str, str]) -> str | None:
    if kubeconfig:
        if not os.path.isfile(os.path.expanduser(kubeconfig)):
            raise ClusterAccessError(f"--kubeconfig {kubeconfig}: no such file")
        return kubeconfig
    value = env.get("KUBECONFIG", "")
    if value:
        # like client-go: paths that do not exist are skipped; none at all falls through
        existing = [p for p in value.split(os.pathsep) if p and os.path.isfile(os.path.expanduser(p))]
        if existing:
            return os.pathsep.join(existing)
        if not env.get(SERVICE_HOST_ENV):
            raise ClusterAccessError(f"KUBECONFIG={value}: none of these files exists")
        return None
    home = os.path.expanduser("~/.kube/config")
    return home if os.path.isfile(home) else None


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


# ------------------------------------------------------------------------------- list protocol

@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: base, 2×base, 4×base … capped; Retry-After wins when the server sends it."""

    attempts: int = 6
    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 120.0

    def backoff(self, attempt: int) -> float:
        return float(min(self.cap, self.base * (2 ** attempt)))


class ProgressSink(Protocol):
    """Where list progress goes (the CLI draws a bar; tests and in-process use pass nothing)."""

    def begin(self, kind: Kind) -> None: ...

    def update(self, kind: Kind, done: int, total: int | None) -> None: ...

    def end(self, kind: Kind, count: int) -> None: ...


@dataclass
class Capture:
    """What one snapshot read: objects with apiVersion and kind set, in KINDS order, each kept as
    compact JSON text (dicts of 150,000 pods would take gigabytes; the text is what a snapshot file
    holds anyway, and ``objects()`` decodes one at a time for an in-memory simulation)."""

    encoded: list[str]
    context: str
    server: str
    server_version: str
    captured_at: str
    namespace: str | None
    counts: dict[str, int]
    #: kinds that could not be read (forbidden or not served), as resource.group
    missing: list[str]
    warnings: list[str]

    def objects(self) -> Iterator[dict[str, Any]]:
        for text in self.encoded:
            yield json.loads(text)

    def raw_objects(self) -> Iterable[RawObject]:
        """The objects as the manifest loader gives them, decoded afresh on each pass."""
        return _RawObjects(self)

    def head(self) -> dict[str, Any]:
        """The ``kind: List`` document a snapshot file holds, without its items."""
        ann = {
            ANNOTATION_PREFIX + "server-version": self.server_version,
            ANNOTATION_PREFIX + "context": self.context,
            ANNOTATION_PREFIX + "captured-at": self.captured_at,
            ANNOTATION_PREFIX + "kplan-version": __version__,
            ANNOTATION_PREFIX + "namespace": self.namespace or "",
            ANNOTATION_PREFIX + "missing": ",".join(self.missing),
        }
        return {"apiVersion": "v1", "kind": "List", "metadata": {"annotations": ann}}


class _RawObjects:
    def __init__(self, capture: Capture) -> None:
        self._capture = capture
        self._source = f"context {capture.context}"

    def __iter__(self) -> Iterator[RawObject]:
        source = self._source
        return (RawObject(doc, source) for doc in self._capture.objects())


class Lister:
    """Runs list calls over a transport with retries; knows the Kubernetes list protocol."""

    def __init__(self, transport: Transport, *, timeout: float = DEFAULT_TIMEOUT,
                 retry: RetryPolicy = RetryPolicy(), chunk_size: int = DEFAULT_CHUNK_SIZE,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.transport = transport
        self.timeout = timeout
        self.retry = retry
        self.chunk_size = chunk_size
        self.sleep = sleep

    def _get(self, path_and_query: str, *, probe: bool = False) -> Reply:
        """One GET, retried on 429, 5xx and dropped connections. A probe (the first request) fails at
        once when no connection can be opened, so an unreachable cluster is reported without delay."""
        attempt = 0
        while True:
            last = attempt + 1 >= self.retry.attempts
            try:
                reply = self.transport.get(path_and_query, self.timeout)
            except Unreachable as e:
                if probe or last:
                    raise ClusterAccessError(f"cannot reach the cluster at {self.transport.server}: {e}") from None
                wait = self.retry.backoff(attempt)
            except Dropped as e:
                if last:
                    raise ClusterAccessError(f"GET {self.transport.server}{path_and_query}: no complete answer "
                                             f"after {self.retry.attempts} tries: {e}") from None
                wait = self.retry.backoff(attempt)
            else:
                if reply.status not in RETRY_STATUSES or last:
                    return reply
                wait = self._retry_after(reply.headers.get("retry-after"), attempt)
            self.sleep(wait)
            attempt += 1

    def _retry_after(self, value: str | None, attempt: int) -> float:
        if value:
            value = value.strip()
            seconds: float | None = None
            if value.isdigit():
                seconds = float(value)
            else:
                try:
                    when = email.utils.parsedate_to_datetime(value)
                    seconds = max(0.0, (when - datetime.now(UTC)).total_seconds())
                except (TypeError, ValueError):
                    seconds = None
            if seconds is not None:
                return min(seconds, self.retry.max_retry_after)
        return self.retry.backoff(attempt)

    def server_version(self) -> tuple[str, str | None]:
        """(gitVersion, warning or None); this is also the reachability probe."""
        reply = self._get("/version", probe=True)
        if reply.status == 401:
            raise ClusterAccessError(_unauthorized(self.transport.server, reply))
        if reply.status != 200:
            return "unknown", f"GET /version: HTTP {reply.status}: {_status_message(reply)}; server version unknown"
        try:
            doc = json.loads(reply.body)
        except ValueError:
            raise ClusterAccessError(f"{self.transport.server}/version: the answer is not JSON; is this a "
                                     "Kubernetes API server?") from None
        if not isinstance(doc, dict) or not doc.get("gitVersion"):
            raise ClusterAccessError(f"{self.transport.server}/version: no gitVersion in the answer; is this a "
                                     "Kubernetes API server?")
        return str(doc["gitVersion"]), None

    def list_kind(self, kind: Kind, namespace: str | None = None,
                  on_page: Callable[[int, int | None], None] | None = None) -> list[str] | Reply:
        """Every object of one kind as JSON text, or the non-retryable error reply (403, 404) for the
        caller to judge."""
        path = kind.path(namespace)
        items: list[str] = []
        token = ""
        restarts = 0
        while True:
            query: dict[str, str | int] = {"limit": self.chunk_size}
            if kind.field_selector:
                query["fieldSelector"] = kind.field_selector
            if token:
                query["continue"] = token
            reply = self._get(f"{path}?{urlencode(query)}")
            if reply.status == 200:
                page, token, remaining = self._page(reply, path, kind)
                items.extend(page)
                if on_page is not None:
                    if not token:
                        remaining = 0
                    on_page(len(items), len(items) + remaining if remaining is not None else None)
                if not token:
                    return items
            elif reply.status == 410 and token:
                # the continue token outlived etcd's compaction window: the only consistent answer
                # is a fresh list from the start (client-go's pager does the same without a token)
                restarts += 1
                if restarts > MAX_RESTARTS:
                    raise ClusterAccessError(f"listing {kind.qualified}: the list expired {restarts} times before "
                                             "it could be read to the end; try a larger --chunk-size")
                items, token = [], ""
                if on_page is not None:
                    on_page(0, None)
            elif reply.status == 401:
                raise ClusterAccessError(_unauthorized(self.transport.server, reply))
            elif reply.status in (403, 404):
                return reply
            else:
                raise ClusterAccessError(f"listing {kind.qualified}: HTTP {reply.status}: {_status_message(reply)}")

    def _page(self, reply: Reply, path: str, kind: Kind) -> tuple[list[str], str, int | None]:
        try:
            text = reply.body.decode("utf-8")
            head, items = split_list(text, _item_prefix(kind))
        except (ValueError, IndexError, StopIteration) as e:  # UnicodeDecodeError and JSONDecodeError included
            raise ClusterAccessError(f"GET {path}: the answer is not a Kubernetes list in JSON ({e})") from None
        meta = head.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        remaining = meta.get("remainingItemCount")
        return items, str(meta.get("continue") or ""), remaining if isinstance(remaining, int) else None


# ------------------------------------------------------------------------------ page splitting
#
# A page is split with the json module's own scanner, one value at a time, rather than decoded
# whole and encoded again: each object's spec and status are kept as the exact text the server
# sent, and only its metadata is decoded and, when something is dropped from it, re-encoded. That
# halves the cost of reading 150,000 pods, and every byte still goes through the json parser.

_WS = re.compile(r"[ \t\n\r]*")
# the C scanner json.loads itself uses, called on one value at a time
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _item_prefix(kind: Kind) -> str:
    return _encode({"apiVersion": kind.api_version, "kind": kind.kind})[:-1]


def _skip(text: str, pos: int, expected: str) -> int:
    match = _WS.match(text, pos)
    pos = match.end() if match else pos
    if text[pos:pos + 1] != expected:
        raise ValueError(f"expected {expected!r} at character {pos}")
    return pos + 1


def _value(text: str, pos: int) -> tuple[Any, int, int]:
    """The JSON value starting at ``pos`` (after blanks): (value, start, end)."""
    match = _WS.match(text, pos)
    start = match.end() if match else pos
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError(f"no JSON value at character {start}") from None
    return value, start, end


def _after(text: str, pos: int) -> tuple[str, int]:
    """The separator after a member or element: ',' or a closing bracket."""
    match = _WS.match(text, pos)
    pos = match.end() if match else pos
    return text[pos], pos + 1


def split_list(text: str, prefix: str) -> tuple[dict[str, Any], list[str]]:
    """A list response → (its members but items, decoded; each item as JSON text that starts with
    ``prefix`` (its apiVersion and kind) and lacks managedFields and kubectl's last-applied copy)."""
    head: dict[str, Any] = {}
    items: list[str] = []
    pos = _skip(text, 0, "{")
    sep, after = _after(text, pos)
    if sep == "}":
        return head, items
    while True:
        key, _, pos = _value(text, pos)
        if not isinstance(key, str):
            raise ValueError(f"expected a member name at character {pos}")
        pos = _skip(text, pos, ":")
        match = _WS.match(text, pos)
        pos = match.end() if match else pos
        if key == "items" and text[pos] == "[":
            sep, after = _after(text, pos + 1)
            pos = after if sep == "]" else pos + 1
            while sep != "]":
                item, pos = _item(text, pos, prefix)
                items.append(item)
                sep, pos = _after(text, pos)
                if sep not in ",]":
                    raise ValueError(f"expected ',' or ']' at character {pos - 1}")
        else:
            head[key], _, pos = _value(text, pos)
        sep, pos = _after(text, pos)
        if sep == "}":
            return head, items
        if sep != ",":
            raise ValueError(f"expected ',' or '}}' at character {pos - 1}")


def _item(text: str, pos: int, prefix: str) -> tuple[str, int]:
    pos = _skip(text, pos, "{")
    parts = [prefix]
    sep, after = _after(text, pos)
    if sep == "}":
        return prefix + "}", after
    while True:
        key, key_start, pos = _value(text, pos)
        if not isinstance(key, str):
            raise ValueError(f"expected a member name at character {key_start}")
        key_end = pos
        pos = _skip(text, pos, ":")
        value, start, pos = _value(text, pos)
        if key == "metadata" and isinstance(value, dict) and _strip_metadata(value):
            parts.append(f",{text[key_start:key_end]}:{_encode(value)}")
        elif key not in ("apiVersion", "kind"):  # the prefix has them
            parts.append(f",{text[key_start:key_end]}:{text[start:pos]}")
        sep, pos = _after(text, pos)
        if sep == "}":
            parts.append("}")
            return "".join(parts), pos
        if sep != ",":
            raise ValueError(f"expected ',' or '}}' at character {pos - 1}")


def _strip_metadata(md: dict[str, Any]) -> bool:
    """Drop managedFields and kubectl's last-applied copy: they are most of an object's size, and
    nothing in a scheduling simulation reads them. True when something was dropped."""
    changed = "managedFields" in md
    md.pop("managedFields", None)
    ann = md.get("annotations")
    if isinstance(ann, dict) and LAST_APPLIED in ann:
        del ann[LAST_APPLIED]
        changed = True
        if not ann:
            del md["annotations"]
    return changed


def _status_message(reply: Reply) -> str:
    """The message of a Kubernetes Status body, or the start of whatever else came back."""
    try:
        doc = json.loads(reply.body)
        if isinstance(doc, dict) and doc.get("message"):
            return " ".join(str(doc["message"]).split())
    except ValueError:
        pass
    text = " ".join(reply.body[:200].decode("utf-8", "replace").split())
    return text or "no message"


def _unauthorized(server: str, reply: Reply) -> str:
    return (f"the cluster at {server} rejected the credentials (401 Unauthorized: {_status_message(reply)}); "
            "check the kubeconfig user or log in again")


class NoClusterConfigured(ClusterAccessError):
    """No kubeconfig and no in-cluster service account: the commands that also read files add
    that ``--cluster FILE`` works offline."""


RBAC_HEAD = """\
# The least a user or service account needs for `kplan snapshot` and for
# `kplan simulate` without --cluster: the verb "list" on the kinds kplan reads,
# and GET on /version. Nothing else; kplan never writes to a cluster. Only nodes
# and pods are required: without the others kplan warns and simulates without.
#
#   kplan snapshot --print-rbac | kubectl apply -f -
#   kubectl create clusterrolebinding kplan-readonly \\
#       --clusterrole=kplan-readonly --user=YOUR_USER
#   # or, for a service account: --serviceaccount=NAMESPACE:NAME
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kplan-readonly
rules:
"""


def readonly_clusterrole() -> str:
    """The read-only ClusterRole of ``kplan snapshot --print-rbac``, made from KINDS so that it
    grants exactly what kplan lists: one rule per API group, in KINDS order."""
    groups: dict[str, list[str]] = {}
    for k in KINDS:
        groups.setdefault(k.group, []).append(k.resource)
    rules = []
    for group, resources in groups.items():
        lines = ["    resources: ["]
        for i, r in enumerate(resources):
            word = r + (", " if i < len(resources) - 1 else "]")
            if len(lines[-1]) + len(word.rstrip()) > 80:  # a flow list may go on over lines: fit 80 columns
                lines[-1] = lines[-1].rstrip()
                lines.append(" " * 16)
            lines[-1] += word
        rules.append(f'  - apiGroups: [{group or chr(34) * 2}]\n' + "\n".join(lines) + "\n    verbs: [list]\n")
    return RBAC_HEAD + "".join(rules) + "  - nonResourceURLs: [/version]\n    verbs: [get]\n"


def permission_words(kind: Kind, namespace: str | None) -> str:
    scope = f" in namespace {namespace}" if kind.namespaced and namespace else ""
    group = kind.group or '"" (core)'
    return f'list {kind.qualified}{scope} (verb "list", resource "{kind.resource}", API group {group})'


def capture(lister: Lister, context: str, *, namespace: str | None = None,
            progress: ProgressSink | None = None, kinds: Iterable[Kind] = KINDS,
            now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> Capture:
    """List every kind in turn. Forbidden or unserved optional kinds become warnings; forbidden
    nodes or pods are a ClusterAccessError, since there is nothing to simulate without them."""
    captured_at = now().strftime("%Y-%m-%dT%H:%M:%SZ")
    version, note = lister.server_version()
    warns = [note] if note else []
    items: list[str] = []
    counts: dict[str, int] = {}
    missing: list[str] = []
    for kind in kinds:
        if progress is not None:
            progress.begin(kind)

        def on_page(done: int, total: int | None, kind: Kind = kind) -> None:
            if progress is not None:
                progress.update(kind, done, total)

        with collector_paused():
            got = lister.list_kind(kind, namespace, on_page)
            # a group not served at its newest version may be served at an older one (RBAC is the
            # same for every version, so only a 404 is worth another try)
            for older in kind.fallback_versions:
                if not (isinstance(got, Reply) and got.status == 404):
                    break
                got = lister.list_kind(dataclasses.replace(kind, version=older), namespace, on_page)
        if isinstance(got, Reply):
            if progress is not None:
                progress.end(kind, 0)
            server_says = _status_message(got)
            if got.status == 403:
                if kind.required:
                    raise ClusterAccessError(f"no permission to {permission_words(kind, namespace)}: kplan needs "
                                             f"nodes and pods (the server said: {server_says}); see "
                                             "'kplan snapshot --print-rbac' prints the read-only ClusterRole "
                                             "it needs")
                warns.append(f"no permission to {permission_words(kind, namespace)}; the simulation will lack "
                             f"{kind.lacks}")
            elif kind.add_on and got.status == 404:
                continue  # the add-on's CRD is not installed: nothing is missing from this cluster
            else:
                if kind.required:
                    raise ClusterAccessError(f"the cluster does not serve {kind.qualified} "
                                             f"({kind.api_version}): HTTP {got.status}: {server_says}")
                served = f"{kind.qualified}/{kind.version}"
                if kind.fallback_versions:
                    served = (f"{kind.qualified} at {', '.join((kind.version, *kind.fallback_versions[:-1]))} "
                              f"or {kind.fallback_versions[-1]}")
                warns.append(f"the cluster does not serve {served} (HTTP {got.status}); "
                             f"the simulation will lack {kind.lacks}")
            missing.append(kind.qualified)
            continue
        counts[kind.resource] = len(got)
        items.extend(got)
        if progress is not None:
            progress.end(kind, len(got))
    if namespace:
        warns.append(f"pods and other namespaced objects were read from namespace {namespace} only: nodes will "
                     "look emptier than they are, since other namespaces' pods are missing")
    return Capture(items, context, lister.transport.server, version, captured_at, namespace, counts, missing, warns)


def snapshot(kubeconfig: str | None = None, context: str | None = None, *, namespace: str | None = None,
             timeout: float = DEFAULT_TIMEOUT, chunk_size: int = DEFAULT_CHUNK_SIZE,
             progress: ProgressSink | None = None) -> Capture:
    """Connect as kubectl would and capture the cluster; the one entry point the CLI uses."""
    conn = connect(kubeconfig, context)
    try:
        cap = capture(Lister(conn.transport, timeout=timeout, chunk_size=chunk_size), conn.context,
                      namespace=namespace, progress=progress)
    finally:
        conn.transport.close()
    cap.warnings[:0] = conn.warnings
    return cap
