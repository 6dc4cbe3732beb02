"""Pod signatures for opportunistic batching (KEP-5598; k8s.io/kube-scheduler framework/signers.go, v1.35).

A plugin that can say which parts of a pod decide its verdicts and scores has ``sign_pod``
(upstream's SignPlugin): it returns the fragments, keyed as upstream keys them, or None when it
cannot sign the pod (upstream: a non-success status), which leaves the pod without a signature.
Two pods with the same signature are filtered and scored alike on the same nodes in the same
state. The fragment values here are kplan's model of the same parts of the pod, compared for
equality only (upstream compares their JSON).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol, runtime_checkable

from kplan.model.objects import Pod

Fragment = tuple[str, Hashable]

DYNAMIC_RESOURCES = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES = "v1.Pod.Spec.CanonicalImageNames()"
LABELS = "v1.Pod.Labels"
NODE_NAME = "v1.Pod.Spec.NodeName"
NODE_AFFINITY = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS = "v1.Pod.Spec.HostPorts()"
RESOURCES = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME = "v1.Pod.Spec.SchedulerName"
TOLERATIONS = "v1.Pod.Spec.Tolerations"
VOLUMES = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES = "v1.Pod.Spec.RequiredFeatures()"


@runtime_checkable
class SignPlugin(Protocol):
    """SignPod: the fragments of the pod's signature this plugin depends on, or None when the
    plugin cannot sign the pod."""

    def sign_pod(self, pod: Pod) -> tuple[Fragment, ...] | None: ...


def _frozen(value: Any) -> Hashable:
    """A hashable, order-preserving copy of a JSON-like value."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value  # type: ignore[no-any-return]


def mapping(m: Any) -> Hashable:
    return tuple(sorted(dict(m).items()))


def tolerations(pod: Pod) -> Hashable:
    """TolerationsSigner: the tolerations, sorted (by key and value upstream; fully here, which
    compares the same lists as equal)."""
    return tuple(sorted(repr(t) for t in pod.tolerations))


def host_ports(pod: Pod) -> Hashable:
    """HostPortsSigner: the distinct host ports, sorted."""
    return tuple(sorted({p.port for p in pod.host_ports if p.port}))


def node_affinity(pod: Pod) -> Hashable:
    """NodeAffinitySigner: the required and preferred node affinity terms."""
    return repr(pod.required_node_affinity), repr(pod.preferred_node_affinity)


def volumes(pod: Pod) -> Hashable:
    """VolumesSigner: every volume's source except configMap and secret ones (their names are
    not part of it), sorted. From the input object where kplan kept it, else from the model."""
    spec = (pod.raw or {}).get("spec") if pod.raw is not None else None
    if isinstance(spec, dict):
        out = []
        for vol in spec.get("volumes") or ():
            if not isinstance(vol, dict):
                continue
            source = {k: v for k, v in vol.items() if k != "name"}
            if "configMap" in source or "secret" in source:
                continue
            out.append(repr(_frozen(source)))
        return tuple(sorted(out))
    return tuple(sorted(repr((v.claim_name if not v.ephemeral else "", v.disk, v.read_only, v.ephemeral,
                              v.monitors)) for v in pod.volumes if v.claim_name or v.disk))


def requests(pod: Pod) -> Hashable:
    """computePodResourceRequest: the pod's aggregated requests (overhead included)."""
    return mapping(pod.requests)
