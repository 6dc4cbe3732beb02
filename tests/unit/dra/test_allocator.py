"""The structured allocator, rule by rule (scheduler-reference-dra.md section 2)."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.model.dra import Allocation
from kplan.model.parse_dra import parse_device_class, parse_resource_claim, parse_resource_slice
from kplan.plugins.dra.structured import Allocator, AllocatorError

GPU = "gpu.example.com"


def gpu(name: str, model: str = "h100", numa: int = 0, mem: str = "80Gi", version: str = "2.0.1") -> dict[str, Any]:
    return {"name": name, "attributes": {"model": {"string": model}, "numa": {"int": numa},
                                         "driverVersion": {"version": version}},
            "capacity": {"memory": {"value": mem}}}


def slice_(node: str, *devices: dict[str, Any], driver: str = GPU, count: int = 1, gen: int = 1,
           name: str = "") -> Any:
    return parse_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                 "metadata": {"name": name or f"{node}-{driver}"},
                                 "spec": {"driver": driver, "nodeName": node,
                                          "pool": {"name": node, "generation": gen, "resourceSliceCount": count},
                                          "devices": list(devices)}})


CLASSES = {c.name: c for c in (
    parse_device_class({"kind": "DeviceClass", "metadata": {"name": "gpu"},
                        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}}),
    parse_device_class({"kind": "DeviceClass", "metadata": {"name": "broken"},
                        "spec": {"selectors": [{"cel": {"expression": "device.driver =="}}]}}),
)}


def claim(*requests: dict[str, Any], constraints: tuple[dict[str, Any], ...] = (), name: str = "c") -> Any:
    return parse_resource_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                 "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                                 "spec": {"devices": {"requests": list(requests),
                                                      "constraints": list(constraints)}}})


def exactly(name: str = "r", count: int = 1, mode: str = "ExactCount", sel: str = "", admin: bool = False,
            cls: str = "gpu") -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        body["count"] = count
    if sel:
        body["selectors"] = [{"cel": {"expression": sel}}]
    if admin:
        body["adminAccess"] = True
    return {"name": name, "exactly": body}


def picked(allocs: list[Allocation] | None) -> list[list[str]] | None:
    return None if allocs is None else [[r.device for r in a.results] for a in allocs]


TWO_NUMA = [slice_("n1", gpu("g0", numa=0), gpu("g1", numa=1), gpu("g2", numa=1))]

CASES = [
    ("one device is the first free matching device in slice order", TWO_NUMA, [], [claim(exactly())], [["g0"]]),
    ("allocated devices are skipped", TWO_NUMA, [(GPU, "n1", "g0")], [claim(exactly())], [["g1"]]),
    ("count asks for that many devices", TWO_NUMA, [], [claim(exactly(count=3))], [["g0", "g1", "g2"]]),
    ("too few free devices is no solution", TWO_NUMA, [(GPU, "n1", "g1")], [claim(exactly(count=3))], None),
    ("a request selector narrows the devices", TWO_NUMA, [],
     [claim(exactly(sel=f'device.attributes["{GPU}"].numa == 1'))], [["g1"]]),
    ("capacity compares as a quantity", [slice_("n1", gpu("g0", mem="24Gi"), gpu("g1", mem="80Gi"))], [],
     [claim(exactly(sel=f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0'))], [["g1"]]),
    ("versions compare as semver", [slice_("n1", gpu("g0", version="1.1.9"), gpu("g1", version="1.10.0"))], [],
     [claim(exactly(sel=f'device.attributes["{GPU}"].driverVersion.isGreaterThan(semver("1.2.0"))'))], [["g1"]]),
    ("matchAttribute backtracks to devices sharing the value", TWO_NUMA, [],
     [claim(exactly(count=2), constraints=({"matchAttribute": f"{GPU}/numa"},))], [["g1", "g2"]]),
    ("matchAttribute with another domain finds no short name", TWO_NUMA, [],
     [claim(exactly(count=1), constraints=({"matchAttribute": "dra.example.com/numa"},))], None),
    ("All takes every matching device", TWO_NUMA, [], [claim(exactly(mode="All"))], [["g0", "g1", "g2"]]),
    ("All fails when one matching device is allocated", TWO_NUMA, [(GPU, "n1", "g2")],
     [claim(exactly(mode="All"))], None),
    ("All with no matching device fails", TWO_NUMA, [], [claim(exactly(mode="All", sel="false"))], None),
    ("firstAvailable takes the first alternative that completes the claim", TWO_NUMA, [],
     [claim({"name": "r", "firstAvailable": [{"name": "big", "deviceClassName": "gpu", "count": 4},
                                             {"name": "small", "deviceClassName": "gpu", "count": 2}]})],
     [["g0", "g1"]]),
    ("adminAccess sees allocated devices", TWO_NUMA, [(GPU, "n1", "g0")], [claim(exactly(admin=True))], [["g0"]]),
    ("two claims of one pod never share a device", TWO_NUMA, [],
     [claim(exactly(count=2), name="a"), claim(exactly(count=2), name="b")], None),
    ("an incomplete pool still serves ExactCount", [slice_("n1", gpu("g0"), count=2)], [],
     [claim(exactly())], [["g0"]]),
    ("only the highest generation of a pool counts",
     [slice_("n1", gpu("old"), gen=1, name="a"), slice_("n1", gpu("new"), gen=2, name="b")], [],
     [claim(exactly())], [["new"]]),
    ("another node's slice is not seen", [slice_("n2", gpu("g0"))], [], [claim(exactly())], None),
]


@pytest.mark.parametrize(("slices", "allocated", "claims", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_allocation(slices: list[Any], allocated: list[Any], claims: list[Any], want: Any) -> None:
    assert picked(Allocator(slices, CLASSES, allocated).allocate("n1", {}, claims)) == want


ERRORS = [
    ("an invalid class selector aborts the attempt", [claim(exactly(cls="broken"))],
     "class broken: selector #0: CEL compile error: compilation failed: ERROR: <input>:"),
    ("a missing attribute is a runtime error, not a non-match",
     [claim(exactly(sel=f'device.attributes["{GPU}"].nope == 1'))],
     "claim default/c: selector #0: CEL runtime error: no such key: nope"),
    ("All on an incomplete pool is an error", [claim(exactly(mode="All"))],
     "claim default/c, request r: asks for all devices, but resource pool gpu.example.com/n1 is currently being "
     "updated"),
    ("more than 32 devices is an error", [claim(exactly(count=33))],
     "claim default/c: number of requested devices 33 exceeds the claim limit of 32"),
]


@pytest.mark.parametrize(("claims", "want"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors(claims: list[Any], want: str) -> None:
    with pytest.raises(AllocatorError) as e:
        Allocator([slice_("n1", gpu("g0"), count=2)], CLASSES, []).allocate("n1", {}, claims)
    assert str(e.value).startswith(want)


def test_node_name_slices_pin_the_allocation_to_the_node() -> None:
    (alloc,) = Allocator(TWO_NUMA, CLASSES, []).allocate("n1", {}, [claim(exactly())]) or []
    assert alloc.node_selector is not None and alloc.node_selector.matches("n1", {})
    assert not alloc.node_selector.matches("n2", {})


def test_a_device_in_use_is_skipped_before_its_selectors_run() -> None:
    # g0 lacks "numa": evaluating the selector on it is an error, but g0 is allocated, so the
    # search skips it before matching, as upstream does, and takes g1
    slices = [slice_("n1", {"name": "g0", "attributes": {}}, gpu("g1", numa=1))]
    sel = f'device.attributes["{GPU}"].numa == 1'
    allocator = Allocator(slices, CLASSES, [(GPU, "n1", "g0")])
    assert picked(allocator.allocate("n1", {}, [claim(exactly(sel=sel))])) == [["g1"]]
    with pytest.raises(AllocatorError, match="no such key: numa"):
        Allocator(slices, CLASSES, []).allocate("n1", {}, [claim(exactly(sel=sel))])
