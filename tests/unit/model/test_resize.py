"""In-place resize: what a running pod counts on its node at each release (kplan/model/resize.py).

Each row is a running pod (spec and status as a dict) with the cpu it counts at 1.34, 1.36 and
1.37 (1.35 counts as 1.34). The rows marked "oracle" are the cases of the regression folders
tests/fidelity/regressions/resize-counts-status-*, where the real schedulers gave these values.
"""

from __future__ import annotations

from typing import Any

import pytest

from kplan.framework.release import Release
from kplan.model.parse import parse_pod

MI = 2**20


def container(name: str, cpu: str | None = None, **extra: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "app"}
    if cpu is not None:
        c["resources"] = {"requests": {"cpu": cpu}}
    c.update(extra)
    return c


def status(name: str, actuated: str | None = None, allocated: str | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"name": name}
    if actuated is not None:
        s["resources"] = {"requests": {"cpu": actuated}}
    if allocated is not None:
        s["allocatedResources"] = {"cpu": allocated}
    return s


def pending(reason: str) -> dict[str, Any]:
    return {"conditions": [{"type": "PodResizePending", "status": "True", "reason": reason}]}


def pod(spec: dict[str, Any], st: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": {"nodeName": "n", **spec},
            "status": {"phase": "Running", **st}}


ROWS = [
    pytest.param(pod({"containers": [container("c", "1")]}, {"containerStatuses": [status("c", "3", "3")]}),
                 (3000, 3000, 3000), id="oracle: a resize down not yet actuated counts the old size"),
    pytest.param(pod({"containers": [container("c", "3")]},
                     {"containerStatuses": [status("c", "1", "1")], **pending("Infeasible")}),
                 (1000, 1000, 1000), id="oracle: an infeasible resize leaves the spec out"),
    pytest.param(pod({"containers": [container("c", "1")]},
                     {"containerStatuses": [status("c", "1500m", "2")], **pending("Deferred")}),
                 (2000, 2000, 2000), id="oracle: a deferred resize counts the largest of spec, actuated, allocated"),
    pytest.param(pod({"containers": [container("c", "1")]}, {"containerStatuses": [status("c", None, "2500m")]}),
                 (1000, 1000, 2500), id="oracle: allocatedResources without resources counts from 1.37 only"),
    pytest.param(pod({"containers": [container("c", "500m")],
                      "initContainers": [container("s", "500m", restartPolicy="Always")]},
                     {"containerStatuses": [status("c")], "initContainerStatuses": [status("s", "1500m", "1500m")]}),
                 (2000, 2000, 2000), id="oracle: a resized sidecar counts its status"),
    pytest.param(pod({"containers": [container("c", "1")], "initContainers": [container("i", "100m")]},
                     {"containerStatuses": [status("c")], "initContainerStatuses": [status("i", "3", "3")]}),
                 (1000, 1000, 3000), id="oracle: a plain init container's status counts from 1.37 only"),
    pytest.param(pod({"containers": [container("a", "1500m"), container("b", "500m")]},
                     {"containerStatuses": [status("a", "500m", "500m"), status("b", "1500m", "1500m")]}),
                 (3000, 3000, 2000), id="oracle: 1.37 takes the largest sum, not the sum of the largest"),
    pytest.param(pod({"resources": {"requests": {"cpu": "1"}}, "containers": [container("c", "500m")]},
                     {"containerStatuses": [status("c")], "resources": {"requests": {"cpu": "3"}},
                      "allocatedResources": {"cpu": "3"}}),
                 (1000, 3000, 3000), id="oracle: a pod-level resize counts from 1.36"),
    pytest.param(pod({"containers": [container("c", "2"), container("d", "1")]},
                     {"containerStatuses": [status("d", "1", "1")], **pending("Infeasible")}),
                 (3000, 3000, 1000), id="oracle: 1.37 drops an infeasible pod's containers without status"),
    pytest.param(pod({"resources": {"requests": {"cpu": "2"}}, "containers": [container("c", "500m")]},
                     {"containerStatuses": [status("c")], "resources": {"requests": {"cpu": "1"}},
                      **pending("Infeasible")}),
                 (2000, 1000, 1000), id="an infeasible pod-level resize counts the pod's status"),
    pytest.param(pod({"containers": [container("c", "1")]}, {"containerStatuses": [status("c", "1", "1")]}),
                 (1000, 1000, 1000), id="a status equal to the spec changes nothing"),
]


@pytest.mark.parametrize("doc, cpu", ROWS)
def test_a_running_pod_counts_what_each_release_counts(doc: dict[str, Any], cpu: tuple[int, int, int]) -> None:
    parsed = parse_pod(doc)
    got = tuple(Release.of(v).resized(parsed).requests.get("cpu", 0) for v in ("1.34", "1.36", "1.37"))
    assert got == cpu
    assert Release.of("1.35").resized(parsed).requests.get("cpu", 0) == cpu[0]


@pytest.mark.parametrize("doc", [
    pod({"containers": [container("c", "1")]}, {"containerStatuses": [status("c", "1", "1")]}),
    pod({"containers": [container("c", "1")]}, {"containerStatuses": [status("c", "500m", "1")]}),
    pod({"containers": [container("c", "1")]}, {"containerStatuses": [{"name": "c", "ready": True}]}),
    pod({"containers": [container("c", "1")]}, {"phase": "Running"}),
], ids=["statuses equal to the spec", "statuses below the spec", "statuses without resources", "no statuses"])
def test_a_pod_no_rule_counts_otherwise_keeps_no_resize_facts(doc: dict[str, Any]) -> None:
    assert parse_pod(doc).resize is None


def test_the_non_zero_defaults_fill_what_the_status_lacks() -> None:
    # memory is requested by nobody: 200Mi non-zero; cpu is the resized value
    parsed = Release.of("1.34").resized(parse_pod(
        pod({"containers": [container("c", "1")]}, {"containerStatuses": [status("c", "3", "3")]})))
    assert (parsed.nonzero_cpu, parsed.nonzero_mem) == (3000, 200 * MI)
    assert "memory" not in parsed.requests


def test_a_pod_without_resize_facts_is_counted_as_parsed() -> None:
    parsed = parse_pod(pod({"containers": [container("c", "1")]}, {}))
    assert Release.of("1.37").resized(parsed) is parsed
