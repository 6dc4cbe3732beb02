"""parse.py keeps what one pod template's spec parses to (its fingerprint) for its other replicas.

The cache must never change what a pod parses to: a warm cache gives what a cold one gives,
specs that differ in anything the parsed fields depend on never share an entry (the requests,
and the pod's labels or name where matchLabelKeys or an ephemeral volume read them), and bad
input is still reported, with the same first error."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import pytest

from kplan.errors import InputError
from kplan.model import parse
from kplan.model.parse import parse_pod
from tests.builders import PodBuilder, expr, make_pod, term

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
    parse._SPEC_FIELDS.clear()
    return figures(d)


def test_a_warm_cache_gives_what_a_cold_one_gives() -> None:
    expected = {name: cold(b.dict()) for name, b in SHAPES.items()}
    parse._SPEC_FIELDS.clear()
    for order in (list(SHAPES), list(reversed(SHAPES))):
        for name in order:
            assert figures(SHAPES[name].dict()) == expected[name], name


def test_specs_that_differ_only_in_a_sidecar_flag_do_not_share() -> None:
    parse._SPEC_FIELDS.clear()
    assert figures(SHAPES["init container"].dict())[0] == {"cpu": 500}
    assert figures(SHAPES["sidecar"].dict())[0] == {"cpu": 600}


AFFINE = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
     "matchLabelKeys": ["rev"]}]}}
SPREAD = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["rev"]}]

#: specs with every field the cache holds, and the pod fields they give
SPEC_SHAPES: dict[str, PodBuilder] = {
    **SHAPES,
    "tolerations and selector": make_pod().req(cpu="1").toleration("k", "v", "NoSchedule").node_selector(zone="a"),
    "node affinity": make_pod().required(term(expr("zone", "In", "a", "b"))).preferred(5, term(expr("disk", "Exists"))),
    "anti-affinity with matchLabelKeys": make_pod().labels(app="web", rev="1").spec(affinity=AFFINE),
    "spread with matchLabelKeys": make_pod().labels(app="web", rev="1").spec(topologySpreadConstraints=SPREAD),
    "host port": make_pod().req(cpu="1").host_port(8080),
    "priority and policy": make_pod().priority(7).priority_class("high").preemption_policy("Never"),
    "gates": make_pod().gate("wait"),
    "scheduler name": make_pod().spec(schedulerName="other"),
    "volumes": make_pod().spec(volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]),
    "ephemeral volume": make_pod().spec(volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]),
    "claims": make_pod().spec(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]),
}


def parsed(d: dict[str, Any]) -> dict[str, Any]:
    pod = parse_pod(d, "pods.yaml")
    out = {f.name: getattr(pod, f.name) for f in dataclasses.fields(pod)}
    return {k: dict(v) if isinstance(v, Mapping) else v for k, v in out.items()}


def test_every_field_comes_out_of_a_warm_cache_as_out_of_a_cold_one() -> None:
    expected = {}
    for name, b in SPEC_SHAPES.items():
        parse._SPEC_FIELDS.clear()
        expected[name] = parsed(b.dict())
    parse._SPEC_FIELDS.clear()
    for order in (list(SPEC_SHAPES), list(reversed(SPEC_SHAPES))):
        for name in order:
            assert parsed(SPEC_SHAPES[name].dict()) == expected[name], name


@pytest.mark.parametrize("field", ["affinity", "topologySpreadConstraints"])
def test_replicas_whose_match_label_keys_read_other_labels_do_not_share(field: str) -> None:
    value = AFFINE if field == "affinity" else SPREAD
    one = parse_pod(make_pod("a").labels(app="web", rev="1").spec(**{field: value}).dict())
    two = parse_pod(make_pod("b").labels(app="web", rev="2").spec(**{field: value}).dict())
    terms = (lambda p: p.anti_affinity_required[0].selector) if field == "affinity" else (
        lambda p: p.spread_constraints[0].selector)
    assert terms(one) != terms(two)
    assert "1" in repr(terms(one)) and "2" in repr(terms(two))


def test_an_ephemeral_volume_claim_is_named_after_each_replica() -> None:
    spec = {"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]}
    claims = [parse_pod(make_pod(n).spec(**spec).dict()).volumes[0].claim_name for n in ("web-1", "web-2")]
    assert claims == ["web-1-scratch", "web-2-scratch"]


def test_replicas_keep_their_own_name_node_and_status() -> None:
    a = make_pod("web-1").req(cpu="1").node_name("n1").dict()
    b = make_pod("web-2").req(cpu="1").node_name("n2").dict()
    b["status"] = {"phase": "Running", "nominatedNodeName": "n3"}
    pa, pb = parse_pod(a), parse_pod(b)
    assert (pa.name, pa.node_name, pa.phase, pa.nominated_node) == ("web-1", "n1", "", "")
    assert (pb.name, pb.node_name, pb.phase, pb.nominated_node) == ("web-2", "n2", "Running", "n3")


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize(("metadata", "spec", "message"), [
    pytest.param({"annotations": {"a": ["x"]}}, {"schedulerName": ["x"]}, "metadata.annotations.a",
                 id="an annotation before the scheduler name"),
    pytest.param({"annotations": {"a": ["x"]}}, {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]},
                 "spec.containers[0].resources.requests[cpu]", id="the requests before an annotation"),
    pytest.param({"ownerReferences": "rs"}, {"tolerations": "all"}, "metadata.ownerReferences",
                 id="the owners before the tolerations"),
])
def test_the_first_error_is_the_one_the_field_order_gives(warm: bool, metadata: dict[str, Any], spec: dict[str, Any],
                                                           message: str) -> None:
    parse._SPEC_FIELDS.clear()
    if warm:
        parse_pod(make_pod("good").dict())
    bad = make_pod("bad").dict()
    bad["metadata"].update(metadata)
    bad["spec"].update(spec)
    with pytest.raises(InputError, match=re.escape(message)):
        parse_pod(bad, "pods.yaml")


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
    parse._SPEC_FIELDS.clear()
    good = SHAPES["plain"].dict()
    parse_pod(good)
    bad = SHAPES["plain"].dict()
    bad["spec"].update(spec_change)
    for _ in range(2):
        with pytest.raises(InputError):
            parse_pod(bad, "pods.yaml")
