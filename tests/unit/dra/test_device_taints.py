"""Device taints and tolerations (KEP-5055) and DeviceTaintRules: parsing, the toleration rule,
the allocator's check by release (on by default from 1.36; DeviceTaintRules from 1.37)."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.errors import InputError
from kplan.framework.release import Release
from kplan.model.dra import DeviceFeatures, DeviceTaint, DeviceToleration
from kplan.model.parse_dra import parse_device_taint_rule, parse_resource_claim, parse_resource_slice
from kplan.plugins.dra.structured import Allocator, apply_taint_rules, taint_prevents_allocation
from kplan.plugins.dynamicresources import device_features
from tests.unit.dra.test_allocator import CLASSES, GPU, claim, exactly, gpu, picked, slice_

TAINTS = DeviceFeatures(device_taints=True)
RULES = DeviceFeatures(device_taints=True, device_taint_rules=True)


def tainted(name: str, *taints: tuple[str, str, str]) -> dict[str, Any]:
    return {**gpu(name), "taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints]}


def tolerating(*tolerations: dict[str, str], count: int = 1, mode: str = "ExactCount") -> dict[str, Any]:
    req = exactly(count=count, mode=mode)
    req["exactly"]["tolerations"] = list(tolerations)
    return req


NO_SCHEDULE = DeviceTaint("maintenance", "planned", "NoSchedule")
TOLERATES = [
    ("Equal with the same key and value", DeviceToleration("maintenance", "Equal", "planned"), True),
    ("Equal with another value", DeviceToleration("maintenance", "Equal", "other"), False),
    ("Equal is the default operator", DeviceToleration("maintenance", "", "planned"), True),
    ("Exists ignores the value", DeviceToleration("maintenance", "Exists"), True),
    ("Exists without key tolerates every key", DeviceToleration("", "Exists"), True),
    ("an empty key with Equal compares only values", DeviceToleration("", "Equal", "planned"), True),
    ("the effect must match when given", DeviceToleration("maintenance", "Exists", effect="NoExecute"), False),
    ("the same effect matches", DeviceToleration("maintenance", "Exists", effect="NoSchedule"), True),
    ("another key is not tolerated", DeviceToleration("drain", "Exists"), False),
    ("an unknown operator tolerates nothing", DeviceToleration("maintenance", "Gt", "planned"), False),
]


@pytest.mark.parametrize(("toleration", "want"), [c[1:] for c in TOLERATES], ids=[c[0] for c in TOLERATES])
def test_toleration_matches_taint_as_resourceclaim_tolerates_taint(toleration: DeviceToleration, want: bool) -> None:
    assert toleration.tolerates(NO_SCHEDULE) is want


def test_only_no_schedule_and_no_execute_prevent_allocation() -> None:
    dev = parse_resource_slice(_raw_slice(tainted("g", ("a", "", "None"), ("b", "", "NoExecute")))).devices[0]
    assert taint_prevents_allocation(dev, ())
    assert not taint_prevents_allocation(dev, (DeviceToleration("b", "Exists"),))


def _raw_slice(*devices: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": GPU, "nodeName": "n1", "pool": {"name": "n1", "generation": 1,
                                                                 "resourceSliceCount": 1}, "devices": list(devices)}}


ONE_TAINTED = [slice_("n1", tainted("g0", ("maintenance", "planned", "NoSchedule")), gpu("g1"))]
ALL_TAINTED = [slice_("n1", tainted("g0", ("broken", "", "NoExecute")), tainted("g1", ("broken", "", "NoExecute")))]
NONE_EFFECT = [slice_("n1", tainted("g0", ("info", "x", "None")))]

CASES = [
    ("an untolerated NoSchedule device is skipped", TAINTS, ONE_TAINTED, [claim(exactly())], [["g1"]]),
    ("a tolerated taint makes the device usable", TAINTS, ONE_TAINTED,
     [claim(tolerating({"key": "maintenance", "operator": "Exists"}, count=2))], [["g0", "g1"]]),
    ("NoExecute keeps devices from requests without tolerations", TAINTS, ALL_TAINTED, [claim(exactly())], None),
    ("a None taint is ignored", TAINTS, NONE_EFFECT, [claim(exactly())], [["g0"]]),
    ("All mode fails when one listed device is tainted (no error)", TAINTS, ONE_TAINTED,
     [claim(exactly(mode="All"))], None),
    ("All mode with a toleration of everything takes every device", TAINTS, ONE_TAINTED,
     [claim(tolerating({"operator": "Exists"}, mode="All"))], [["g0", "g1"]]),
    ("with DRADeviceTaints off (1.34, 1.35) taints are ignored", DeviceFeatures(), ALL_TAINTED,
     [claim(exactly(count=2))], [["g0", "g1"]]),
]


@pytest.mark.parametrize(("features", "slices", "claims", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_allocator_respects_device_taints(features: DeviceFeatures, slices: Any, claims: Any, want: Any) -> None:
    got = Allocator(slices, CLASSES, set(), features=features).allocate("n1", {}, claims)
    assert picked(got) == want


def rule(name: str, selector: dict[str, str] | None, effect: str = "NoSchedule") -> Any:
    spec: dict[str, Any] = {"taint": {"key": "drain", "value": "now", "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return parse_device_taint_rule({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                                    "metadata": {"name": name}, "spec": spec})


RULE_CASES = [
    ("a rule naming the device taints it", rule("r", {"driver": GPU, "pool": "n1", "device": "g0"}), ["g1"]),
    ("a rule naming the pool taints all its devices", rule("r", {"pool": "n1"}), []),
    ("a rule of another driver taints nothing", rule("r", {"driver": "nic.example.com"}), ["g0", "g1"]),
    ("a rule without selector taints nothing", rule("r", None), ["g0", "g1"]),
    ("a rule's None effect does not prevent allocation", rule("r", {"pool": "n1"}, "None"), ["g0", "g1"]),
]


@pytest.mark.parametrize(("taint_rule", "free"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_device_taint_rules_add_their_taint_with_the_gate_on(taint_rule: Any, free: list[str]) -> None:
    slices = [slice_("n1", gpu("g0"), gpu("g1"))]
    usable = [d.name for s in apply_taint_rules(slices, [taint_rule]) for d in s.devices
              if not taint_prevents_allocation(d, ())]
    assert usable == free
    got = Allocator(slices, CLASSES, set(), features=RULES, taint_rules=[taint_rule]).allocate(
        "n1", {}, [claim(exactly(count=len(free) or 1))])
    assert picked(got) == ([free] if free else None)
    # with DRADeviceTaintRules off (1.36's default) the rule is not applied
    off = Allocator(slices, CLASSES, set(), features=TAINTS, taint_rules=[taint_rule]).allocate(
        "n1", {}, [claim(exactly(count=2))])
    assert picked(off) == [["g0", "g1"]]


@pytest.mark.parametrize(("release", "taints", "rules"), [
    ("1.34", False, False), ("1.35", False, False), ("1.36", True, False), ("1.37", True, True)])
def test_release_defaults(release: str, taints: bool, rules: bool) -> None:
    got = device_features(Release.of(release))
    assert (got.device_taints, got.device_taint_rules) == (taints, rules)


def test_device_taint_rules_can_be_turned_on_at_1_36() -> None:
    assert device_features(Release.of("1.36", "DRADeviceTaintRules=true")).device_taint_rules


BAD = [
    ("a taint without effect", lambda: parse_resource_slice(_raw_slice({**gpu("g"), "taints": [{"key": "k"}]})),
     r"ResourceSlice s: spec.devices\[0\].taints\[0\].effect: Required value"),
    ("a taint with an unknown effect",
     lambda: parse_resource_slice(_raw_slice({**gpu("g"), "taints": [{"key": "k", "effect": "PreferNoSchedule"}]})),
     r'spec.devices\[0\].taints\[0\].effect: Unsupported value: "PreferNoSchedule"'),
    ("a taint without key", lambda: parse_resource_slice(_raw_slice({**gpu("g"), "taints": [{"effect": "None"}]})),
     r"spec.devices\[0\].taints\[0\].key: Required value"),
    ("a toleration with an unknown operator",
     lambda: claim(tolerating({"key": "k", "operator": "Gt"})),
     r'ResourceClaim default/c: spec.devices.requests\[0\].exactly.tolerations\[0\].operator: Unsupported value'),
    ("Exists with a value", lambda: claim(tolerating({"key": "k", "operator": "Exists", "value": "v"})),
     r"tolerations\[0\].value: Invalid value: \"v\": must be empty for operator `Exists`"),
    ("a rule in an API version without DeviceTaintRule",
     lambda: parse_device_taint_rule({"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceTaintRule",
                                      "metadata": {"name": "r"}, "spec": {}}),
     r"DeviceTaintRule r: apiVersion: Unsupported value"),
]


@pytest.mark.parametrize(("parse", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_taints_and_tolerations_are_one_line_errors(parse: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse()


def test_tolerations_of_subrequests_parse() -> None:
    c = parse_resource_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                              "metadata": {"name": "c"},
                              "spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [
                                  {"name": "a", "deviceClassName": "gpu",
                                   "tolerations": [{"key": "k", "operator": "Exists"}]}]}]}}})
    assert c.spec.requests[0].first_available[0].tolerations == (DeviceToleration("k", "Exists"),)
