"""parse.py keeps the resources of one pod template (its fingerprint) for its other replicas.

The cache must never change what a pod parses to: a warm cache gives what a cold one gives,
specs that differ in anything the requests depend on never share an entry, and bad input is
still reported."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.errors import InputError
from kplan.model import parse
from kplan.model.parse import parse_pod
from tests.builders import PodBuilder, make_pod

SHAPES: dict[str, PodBuilder] = {
    "plain": make_pod().req(cpu="500m", memory="1Gi"),
    "plain 100m": make_pod().req(cpu="100m"),
    "limits only": make_pod().lim(cpu="1", memory="2Gi"),
    "two containers": make_pod().container({"cpu": "100m"}).container({"cpu": "200m", "memory": "1Mi"}),
    "init container": make_pod().container({"cpu": "100m"}).init_container({"cpu": "500m"}),
    "sidecar": make_pod().container({"cpu": "100m"}).init_container({"cpu": "500m"}, sidecar=True),
    "pod-level": make_pod().req(cpu="100m").pod_requests(cpu="2"),
    "overhead": make_pod().req(cpu="100m").overhead(cpu="250m"),
    "best effort": make_pod().container(),
    "extended": make_pod().req(cpu="100m", **{"example.com/gpu": 1}),
}


def figures(d: dict[str, Any]) -> tuple[Any, ...]:
    p = parse_pod(d, "pods.yaml")
    return (dict(p.requests), dict(p.limits), p.nonzero_cpu, p.nonzero_mem, p.score_cpu, p.score_mem)


def cold(d: dict[str, Any]) -> tuple[Any, ...]:
    parse._POD_RESOURCES.clear()
    return figures(d)


def test_a_warm_cache_gives_what_a_cold_one_gives() -> None:
    expected = {name: cold(b.dict()) for name, b in SHAPES.items()}
    parse._POD_RESOURCES.clear()
    for order in (list(SHAPES), list(reversed(SHAPES))):
        for name in order:
            assert figures(SHAPES[name].dict()) == expected[name], name


def test_specs_that_differ_only_in_a_sidecar_flag_do_not_share() -> None:
    parse._POD_RESOURCES.clear()
    assert figures(SHAPES["init container"].dict())[0] == {"cpu": 500}
    assert figures(SHAPES["sidecar"].dict())[0] == {"cpu": 600}


def test_replicas_get_their_own_dicts() -> None:
    a, b = parse_pod(SHAPES["plain"].dict()), parse_pod(make_pod("other").req(cpu="500m", memory="1Gi").dict())
    assert a.requests == b.requests and a.requests is not b.requests and a.limits is not b.limits


@pytest.mark.parametrize("spec_change", [
    pytest.param({"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}, id="a bad quantity"),
    pytest.param({"containers": [{"name": "c", "resources": ["cpu"]}]}, id="resources not a map"),
    pytest.param({"containers": {"name": "c"}}, id="containers not a list"),
    pytest.param({"containers": ["c"]}, id="a container not a map"),
])
def test_bad_input_is_reported_after_good_replicas(spec_change: dict[str, Any]) -> None:
    parse._POD_RESOURCES.clear()
    good = SHAPES["plain"].dict()
    parse_pod(good)
    bad = SHAPES["plain"].dict()
    bad["spec"].update(spec_change)
    for _ in range(2):
        with pytest.raises(InputError):
            parse_pod(bad, "pods.yaml")
