"""LimitRange defaults applied to a pod at creation (plugin/pkg/admission/limitranger, v1.34).

API defaulting of a LimitRange (``SetDefaults_LimitRangeItem``, type Container): ``default``
takes ``max`` where unset, ``defaultRequest`` takes ``default``, then ``min``, where unset.
Admission (``PodMutateLimitFunc`` for every LimitRange of the pod's namespace): every container
and init container without a limit (request) for a resource gets the default one, and the pod
is annotated ``kubernetes.io/limit-ranger``. The pod's own API defaulting (a missing request
takes the limit) has already happened by then, so it is applied first here.

Not modelled: the LimitRanger's validation (min/max/maxLimitRequestRatio rejections) and
Pod-type items. Several LimitRanges in a namespace are applied in name order (upstream: the
informer's order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kplan.workloads.common import sub

ANNOTATION = "kubernetes.io/limit-ranger"


def container_defaults(limit_range: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """defaultContainerResourceRequirements after SetDefaults_LimitRangeItem: (requests, limits)."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    spec = sub(limit_range, "spec")
    for item in spec.get("limits") or []:
        if not isinstance(item, Mapping) or item.get("type") != "Container":
            continue
        default = dict(item.get("default") or {})
        default_request = dict(item.get("defaultRequest") or {})
        for k, v in dict(item.get("max") or {}).items():
            default.setdefault(k, v)
        for k, v in default.items():
            default_request.setdefault(k, v)
        for k, v in dict(item.get("min") or {}).items():
            default_request.setdefault(k, v)
        requests.update(default_request)
        limits.update(default)
    return requests, limits


def _merge(container: dict[str, Any], requests: Mapping[str, Any], limits: Mapping[str, Any], prefix: str,
           notes: list[str]) -> None:
    resources = dict(container.get("resources") or {})
    have_limits = dict(resources.get("limits") or {})
    have_requests = dict(resources.get("requests") or {})
    set_limits = sorted(k for k in limits if k not in have_limits)
    set_requests = sorted(k for k in requests if k not in have_requests)
    for k in set_limits:
        have_limits[k] = limits[k]
    for k in set_requests:
        have_requests[k] = requests[k]
    if set_limits or set_requests:
        if have_limits:
            resources["limits"] = have_limits
        if have_requests:
            resources["requests"] = have_requests
        container["resources"] = resources
    name = container.get("name") or ""
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {prefix} {name}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {prefix} {name}")


def _default_requests_from_limits(container: dict[str, Any]) -> None:
    resources = container.get("resources")
    if not isinstance(resources, Mapping) or not isinstance(resources.get("limits"), Mapping):
        return
    requests = dict(resources.get("requests") or {})
    changed = False
    for k, v in resources["limits"].items():
        if k not in requests:
            requests[k] = v
            changed = True
    if changed:
        container["resources"] = {**resources, "requests": requests}


def apply_limit_ranges(pod: dict[str, Any], limit_ranges: Sequence[Mapping[str, Any]]) -> None:
    """Mutate ``pod`` as the LimitRanger admission plugin would (the namespace's LimitRanges)."""
    if not limit_ranges:
        return
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    for field in ("containers", "initContainers"):
        spec[field] = [dict(c) for c in spec.get(field) or [] if isinstance(c, Mapping)] or spec.get(field)
        for c in spec.get(field) or []:
            _default_requests_from_limits(c)
    notes: list[str] = []
    for lr in sorted(limit_ranges, key=lambda x: str((x.get("metadata") or {}).get("name") or "")):
        requests, limits = container_defaults(lr)
        if not requests and not limits:
            continue
        for c in spec.get("containers") or []:
            _merge(c, requests, limits, "container", notes)
        for c in spec.get("initContainers") or []:
            _merge(c, requests, limits, "init container", notes)
    if notes:
        md = pod.setdefault("metadata", {})
        md["annotations"] = {**dict(md.get("annotations") or {}), ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes)}
