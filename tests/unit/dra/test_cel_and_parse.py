"""DRA CEL selectors and the resource.k8s.io parsers."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.cel import CelError, compile_selector, device_activation, evaluate
from kplan.errors import InputError
from kplan.model.dra import Device
from kplan.model.parse_dra import parse_resource_claim, parse_resource_slice

DEV = Device("gpu-0", {"model": ("string", "h100"), "driverVersion": ("version", "2.0.1"),
                       "dra.example.com/numa": ("int", 1), "rdma": ("bool", True)}, {"memory": "80Gi"})

CEL = [
    ("the driver is a string", 'device.driver == "gpu.example.com"', True),
    ("a short attribute lives under the driver's domain", 'device.attributes["gpu.example.com"].model == "h100"',
     True),
    ("a qualified attribute lives under its own domain", 'device.attributes["dra.example.com"].numa == 1', True),
    ("an unknown domain is an empty map", 'device.attributes["other.com"].size() == 0', True),
    ("has() tests a missing attribute", 'has(device.attributes["gpu.example.com"].foo)', False),
    ("&& absorbs an error when the other side is false",
     'device.driver == "nic" && device.attributes["gpu.example.com"].foo == 1', False),
    ("quantities compare by value", 'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi"))',
     True),
    ("semver compares by precedence",
     'device.attributes["gpu.example.com"].driverVersion.compareTo(semver("2.0.0")) == 1', True),
    ("semver parts", 'device.attributes["gpu.example.com"].driverVersion.major() == 2', True),
    ("bool attributes", 'device.attributes["gpu.example.com"].rdma', True),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in CEL], ids=[c[0] for c in CEL])
def test_selector(expr: str, want: bool) -> None:
    assert evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV)) is want


FAILS = [
    ("a missing attribute is a runtime error", 'device.attributes["gpu.example.com"].foo == 1', "no such key: foo"),
    ("a non-bool result at run time is an error", 'device.attributes["gpu.example.com"].model',
     "could not be converted to bool"),
    ("a statically non-bool result does not compile", '"x"', "must evaluate to bool or the unknown type, not string"),
    ("a syntax error names the input", "device.driver ==", "compilation failed: ERROR: <input>:"),
]


@pytest.mark.parametrize(("expr", "want"), [c[1:] for c in FAILS], ids=[c[0] for c in FAILS])
def test_selector_errors(expr: str, want: str) -> None:
    with pytest.raises(CelError, match=want):
        evaluate(compile_selector(expr), device_activation("gpu.example.com", DEV))


def test_invalid_version_attribute_fails_every_expression() -> None:
    with pytest.raises(CelError, match="attribute v: parse semantic version"):
        device_activation("d", Device("x", {"v": ("version", "1.2")}, {}))


def _slice(**device: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p", "generation": 1,
                                                                "resourceSliceCount": 1},
                     "devices": [{"name": "x", **device}]}}


def test_features_kplan_does_not_model_are_refused_naming_the_field() -> None:
    with pytest.raises(InputError, match=r"ResourceSlice s: spec.devices\[0\].bindingConditions: kplan does "
                                         "not model device binding conditions"):
        parse_resource_slice(_slice(bindingConditions=["ready"]))


def test_v1beta1_shapes_parse_like_v1() -> None:
    s = parse_resource_slice({**_slice(), "apiVersion": "resource.k8s.io/v1beta1",
                              "spec": {**_slice()["spec"], "devices": [
                                  {"name": "x", "basic": {"attributes": {"a": {"int": 3}}}}]}})
    assert s.devices[0].attributes == {"a": ("int", 3)}
    c = parse_resource_claim({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
                              "metadata": {"name": "c"},
                              "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "g",
                                                                 "count": 2}]}}})
    exact = c.spec.requests[0].exactly
    assert exact is not None and (exact.class_name, exact.count) == ("g", 2)
