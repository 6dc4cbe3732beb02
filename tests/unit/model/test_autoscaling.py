"""HorizontalPodAutoscalers parsed once (kplan.model.autoscaling): autoscaling/v2 and v1 alike,
the API's defaults, and the API server's validation as one-line errors naming file, object and field."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.errors import InputError
from kplan.model.autoscaling import HorizontalPodAutoscaler, ScaleTarget, parse_hpa


def hpa(api: str = "autoscaling/v2", spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None,
        name: str | None = "web") -> dict[str, Any]:
    d: dict[str, Any] = {"apiVersion": api, "kind": "HorizontalPodAutoscaler",
                         "metadata": {"namespace": "shop", **({"name": name} if name else {})},
                         "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                                  "maxReplicas": 8, **(spec or {})}}
    if status is not None:
        d["status"] = status
    return d


@pytest.mark.parametrize(("doc", "parsed"), [
    pytest.param(hpa(spec={"minReplicas": 3}, status={"currentReplicas": 4, "desiredReplicas": 5}),
                 (3, 8, 4), id="v2 with its bounds and status"),
    pytest.param(hpa("autoscaling/v1", spec={"minReplicas": 2, "targetCPUUtilizationPercentage": 60},
                     status={"currentReplicas": 2, "desiredReplicas": 2}),
                 (2, 8, 2), id="v1 reads the same fields"),
    pytest.param(hpa("autoscaling/v2beta2"), (1, 8, None), id="v2beta2 of an old export"),
    pytest.param(hpa(), (1, 8, None), id="minReplicas defaults to 1 and no status says nothing of the current count"),
    pytest.param(hpa(status={"desiredReplicas": 0}), (1, 8, 0),
                 id="a v2 status without currentReplicas says 0 (omitempty)"),
    pytest.param(hpa(spec={"minReplicas": 0}), (0, 8, None), id="minReplicas 0 of a cluster with HPAScaleToZero"),
    pytest.param(hpa(spec={"minReplicas": 8}), (8, 8, None), id="minReplicas equal to maxReplicas"),
])
def test_parse(doc: dict[str, Any], parsed: tuple[int, int, int | None]) -> None:
    h = parse_hpa(doc, "hpas.yaml")
    assert (h.min_replicas, h.max_replicas, h.current_replicas) == parsed
    assert h.target == ScaleTarget("Deployment", "web", "apps/v1")
    assert (h.namespace, h.name, h.key, h.source) == ("shop", "web", "shop/web", "hpas.yaml")


def test_both_versions_give_the_same_object_but_for_the_version() -> None:
    v1 = parse_hpa(hpa("autoscaling/v1", spec={"minReplicas": 2}))
    v2 = parse_hpa(hpa(spec={"minReplicas": 2}))
    assert isinstance(v1, HorizontalPodAutoscaler)
    assert (v1.api_version, v2.api_version) == ("autoscaling/v1", "autoscaling/v2")
    assert v1.target == v2.target and (v1.min_replicas, v1.max_replicas) == (v2.min_replicas, v2.max_replicas)


@pytest.mark.parametrize(("doc", "message"), [
    pytest.param(hpa(spec={"maxReplicas": None}), "spec.maxReplicas: Required value", id="no maxReplicas"),
    pytest.param(hpa(spec={"maxReplicas": 0}), "spec.maxReplicas: Invalid value: 0: must be greater than 0",
                 id="maxReplicas 0"),
    pytest.param(hpa(spec={"minReplicas": 9}),
                 "spec.maxReplicas: Invalid value: 8: must be greater than or equal to `minReplicas` (9)",
                 id="maxReplicas below minReplicas"),
    pytest.param(hpa(spec={"minReplicas": -1}), "spec.minReplicas: Invalid value: -1", id="negative minReplicas"),
    pytest.param(hpa(spec={"maxReplicas": "many"}), "spec.maxReplicas: expected an integer, got 'many'",
                 id="maxReplicas not a number"),
    pytest.param(hpa(spec={"scaleTargetRef": {"kind": "Deployment"}}), "spec.scaleTargetRef.name: Required value",
                 id="target without a name"),
    pytest.param(hpa(spec={"scaleTargetRef": {"name": "web"}}), "spec.scaleTargetRef.kind: Required value",
                 id="target without a kind"),
    pytest.param(hpa(spec={"scaleTargetRef": {"kind": "Deployment", "name": "a/b"}}),
                 'spec.scaleTargetRef.name: Invalid value: "a/b"', id="target name with a slash"),
    pytest.param(hpa(status={"currentReplicas": -2}), "status.currentReplicas: Invalid value: -2",
                 id="negative current count"),
    pytest.param(hpa("autoscaling/v3"), 'apiVersion: Unsupported value: "autoscaling/v3"', id="unknown version"),
    pytest.param(hpa(name=None), "metadata.name: Required value", id="no name"),
])
def test_bad_input_is_one_line_naming_file_object_and_field(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_hpa(doc, "hpas.yaml: items[1]")
    text = str(e.value)
    assert "\n" not in text
    assert text.startswith("hpas.yaml: items[1]: HorizontalPodAutoscaler shop/")
    assert message in text
