"""HorizontalPodAutoscalers (autoscaling/v2, and autoscaling/v1 as clusters still serve it), typed
once: what ``--hpa max|min|current`` needs of them, the target and its bounds.

The fields read are the same in both versions (``spec.scaleTargetRef``, ``spec.minReplicas``,
``spec.maxReplicas``, ``status.currentReplicas``); v2beta1 and v2beta2, still found in old
exports, spell them alike and are read too. Validation follows the API server's
(pkg/apis/autoscaling/validation: ValidateHorizontalPodAutoscalerSpec): ``maxReplicas`` is
required and at least 1, ``minReplicas`` at most ``maxReplicas``, the target has a kind and a
name. ``minReplicas`` defaults to 1 (SetDefaults_HorizontalPodAutoscaler). A ``minReplicas`` of
0 is accepted: clusters with the HPAScaleToZero gate hold such objects.

``status.currentReplicas`` is ``omitempty`` in v2: a status that has ``desiredReplicas`` (always
written) and no ``currentReplicas`` says 0; a missing status says nothing (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kplan.model.parse import Where, _int, _map, _str, meta_name

KIND = "HorizontalPodAutoscaler"
#: the autoscaling versions read (v1 and v2 are served by every modelled release)
API_VERSIONS = ("autoscaling/v2", "autoscaling/v1", "autoscaling/v2beta2", "autoscaling/v2beta1")


@dataclass(frozen=True, slots=True)
class ScaleTarget:
    """``spec.scaleTargetRef``: the workload the autoscaler scales, in the autoscaler's namespace."""

    kind: str
    name: str
    api_version: str = ""


@dataclass(frozen=True, slots=True)
class HorizontalPodAutoscaler:
    namespace: str
    name: str
    target: ScaleTarget
    min_replicas: int
    max_replicas: int
    #: status.currentReplicas; None when the object has no status
    current_replicas: int | None
    api_version: str = "autoscaling/v2"
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def parse_hpa(d: Mapping[str, Any], source: str = "") -> HorizontalPodAutoscaler:
    """A HorizontalPodAutoscaler of any of API_VERSIONS; a bad field is a one-line InputError
    naming the file, the object and the field."""
    ns, name = meta_name(d)
    ns = ns or "default"
    where = Where(source, KIND, f"{ns}/{name or '?'}")
    api = str(d.get("apiVersion") or "autoscaling/v2")
    if api not in API_VERSIONS:
        raise where.fail("apiVersion", f'Unsupported value: "{api}": supported values: '
                         + ", ".join(f'"{v}"' for v in API_VERSIONS))
    if not name:
        raise where.fail("metadata.name", "Required value")
    spec = _map(d.get("spec"), where, "spec")
    ref = _map(spec.get("scaleTargetRef"), where, "spec.scaleTargetRef")
    kind = _str(ref.get("kind"), where, "spec.scaleTargetRef.kind")
    target_name = _str(ref.get("name"), where, "spec.scaleTargetRef.name")
    if not kind:
        raise where.fail("spec.scaleTargetRef.kind", "Required value")
    if not target_name:
        raise where.fail("spec.scaleTargetRef.name", "Required value")
    if "/" in target_name or target_name in (".", ".."):
        raise where.fail("spec.scaleTargetRef.name", f'Invalid value: "{target_name}": may not contain "/" '
                         'and may not be "." or ".."')
    if spec.get("maxReplicas") is None:
        raise where.fail("spec.maxReplicas", "Required value")
    most = _int(spec.get("maxReplicas"), where, "spec.maxReplicas")
    least = _int(spec.get("minReplicas"), where, "spec.minReplicas", default=1)
    if least < 0:
        raise where.fail("spec.minReplicas", f"Invalid value: {least}: must be greater than or equal to 1")
    if most < 1:
        raise where.fail("spec.maxReplicas", f"Invalid value: {most}: must be greater than 0")
    if most < least:
        raise where.fail("spec.maxReplicas", f"Invalid value: {most}: must be greater than or equal to "
                         f"`minReplicas` ({least})")
    status = _map(d.get("status"), where, "status")
    current: int | None = None
    if status.get("currentReplicas") is not None:
        current = _int(status.get("currentReplicas"), where, "status.currentReplicas")
        if current < 0:
            raise where.fail("status.currentReplicas", f"Invalid value: {current}: must be greater than or "
                             "equal to 0")
    elif "desiredReplicas" in status:
        current = 0  # v2 leaves a zero currentReplicas out
    return HorizontalPodAutoscaler(ns, name, ScaleTarget(kind, target_name, _str(ref.get("apiVersion"), where,
                                                                                  "spec.scaleTargetRef.apiVersion")),
                                   least, most, current, api, source)
