"""Pod request computation (reference 2.1–2.4), done once in kplan/model/parse.py.

Columns of each row: the exact request (A/B: Filter and NodeInfo.Requested), the node-side
non-zero cpu/memory (C: NonZeroRequested), and the incoming pod's NodeResourcesFit score
request (D: non-zero defaults, pod-level resources ignored). E (BalancedAllocation) is A.
"""

from __future__ import annotations

import pytest

from kplan.model.objects import Pod
from tests.builders import PodBuilder, make_pod

MI = 2**20
GI = 2**30
DEF_CPU, DEF_MEM = 100, 200 * MI


def requests(pod: Pod) -> dict[str, int]:
    return dict(pod.requests)


@pytest.mark.parametrize("builder, exact", [
    pytest.param(make_pod().req(cpu="500m", memory="1Gi"), {"cpu": 500, "memory": GI},
                 id="one container's requests are the pod's requests"),
    pytest.param(make_pod().container({"cpu": "100m"}).container({"cpu": "200m", "memory": "1Mi"}),
                 {"cpu": 300, "memory": MI}, id="regular containers are summed per resource"),
    pytest.param(make_pod().container({"cpu": "100m"}).init_container({"cpu": "500m"}), {"cpu": 500},
                 id="a bigger plain init container sets the peak"),
    pytest.param(make_pod().container({"cpu": "800m"}).init_container({"cpu": "500m"}), {"cpu": 800},
                 id="a smaller plain init container does not count"),
    pytest.param(make_pod().container({"cpu": "100m"}).init_container({"cpu": "200m"}, sidecar=True)
                 .init_container({"cpu": "500m"}), {"cpu": 700},
                 id="a sidecar runs beside every later init container"),
    pytest.param(make_pod().container({"cpu": "100m"}).init_container({"cpu": "500m"})
                 .init_container({"cpu": "200m"}, sidecar=True), {"cpu": 500},
                 id="an init container before a sidecar does not see it"),
    pytest.param(make_pod().container({"cpu": "100m"}).init_container({"cpu": "200m"}, sidecar=True),
                 {"cpu": 300}, id="a sidecar adds to the steady-state sum"),
    pytest.param(make_pod().container({"cpu": "100m"}).init_container({"cpu": "300m"}, sidecar=True)
                 .init_container({"cpu": "50m"}), {"cpu": 400},
                 id="the steady state wins when it is bigger than any init peak"),
    pytest.param(make_pod().container({"cpu": "100m"}).init_container({"cpu": "1"}).overhead(cpu="250m"),
                 {"cpu": 1250}, id="overhead is added after the init-container maximum"),
    pytest.param(make_pod().req(cpu="100m").overhead(memory="64Mi"), {"cpu": 100, "memory": 64 * MI},
                 id="overhead adds resources the containers do not request"),
    pytest.param(make_pod().req(cpu="100m", memory="1Gi").pod_requests(cpu="2"), {"cpu": 2000, "memory": GI},
                 id="pod-level cpu replaces the containers' cpu and keeps their memory"),
    pytest.param(make_pod().req(cpu="100m").pod_requests(cpu="2").overhead(cpu="100m"), {"cpu": 2100},
                 id="overhead is added on top of pod-level requests"),
    pytest.param(make_pod().req(ephemeral_storage="1Gi").pod_requests(ephemeral_storage="5Gi"),
                 {"ephemeral-storage": GI}, id="pod-level ephemeral-storage is not a pod-level resource"),
    pytest.param(make_pod().lim(cpu="1", memory="2Gi"), {"cpu": 1000, "memory": 2 * GI},
                 id="a container with limits only requests its limits"),
    pytest.param(make_pod().req(memory="1Gi").lim(cpu="2", memory="4Gi"), {"cpu": 2000, "memory": GI},
                 id="a missing request defaults to its limit and a present one stays"),
    pytest.param(make_pod().init_container(limits={"cpu": "3"}), {"cpu": 3000},
                 id="init containers default requests to limits too"),
    pytest.param(make_pod().req(cpu="2").pod_limits(cpu="4"), {"cpu": 2000},
                 id="pod-level limits default pod-level requests to the containers' total"),
    pytest.param(make_pod().container().pod_limits(cpu="4"), {"cpu": 4000},
                 id="pod-level limits without container requests default pod requests to the limits"),
    pytest.param(make_pod().req(cpu="0.1m"), {"cpu": 1}, id="cpu rounds up to a whole millicore per pod"),
    pytest.param(make_pod().req(**{"example.com/gpu": "2", "hugepages-2Mi": "4Mi"}),
                 {"example.com/gpu": 2, "hugepages-2Mi": 4 * MI}, id="extended resources and hugepages are kept"),
    pytest.param(make_pod().req(**{"foo": "1", "requests.example.com/x": "1"}), {},
                 id="names that are not scheduler resources are dropped"),
    pytest.param(make_pod().container(), {}, id="a container without requests requests nothing"),
])
def test_exact_requests(builder: PodBuilder, exact: dict[str, int]) -> None:
    assert requests(builder.build()) == exact


@pytest.mark.parametrize("builder, node_side, score_side", [
    pytest.param(make_pod().container(), (DEF_CPU, DEF_MEM), (DEF_CPU, DEF_MEM),
                 id="a container without requests counts as 100m and 200Mi"),
    pytest.param(make_pod().container().container().init_container(), (200, 400 * MI), (200, 400 * MI),
                 id="two containers and an init container without requests count 200m and 400Mi"),
    pytest.param(make_pod().req(cpu="0", memory="0"), (0, 0), (0, 0),
                 id="an explicit zero request stays zero"),
    pytest.param(make_pod().req(cpu="300m"), (300, DEF_MEM), (300, DEF_MEM),
                 id="only the missing resource gets the default"),
    pytest.param(make_pod().container().overhead(cpu="50m", memory="10Mi"), (150, DEF_MEM + 10 * MI),
                 (150, DEF_MEM + 10 * MI), id="overhead is added after the defaults"),
    pytest.param(make_pod().container({"cpu": "1"}).init_container({"cpu": "2"}), (2000, DEF_MEM * 1),
                 (2000, DEF_MEM), id="defaults go through the init-container maximum"),
    pytest.param(make_pod().req(cpu="100m").pod_requests(cpu="2"), (2000, DEF_MEM), (100, DEF_MEM),
                 id="pod-level cpu counts on the node side and is ignored when scoring the incoming pod"),
    pytest.param(make_pod().container().container().pod_requests(memory="1Gi"), (200, GI), (200, 400 * MI),
                 id="with pod-level requests only the resource missing from the pod total is defaulted"),
    pytest.param(make_pod().req(memory="1Gi").pod_requests(cpu="1"), (1000, GI), (DEF_CPU, GI),
                 id="pod-level cpu with container memory needs no default on the node side"),
])
def test_non_zero_requests(builder: PodBuilder, node_side: tuple[int, int], score_side: tuple[int, int]) -> None:
    pod = builder.build()
    assert (pod.nonzero_cpu, pod.nonzero_mem) == node_side
    assert (pod.score_cpu, pod.score_mem) == score_side


def test_filtering_uses_real_requests_not_the_defaults() -> None:
    pod = make_pod().container().build()
    assert pod.requests == {} and (pod.nonzero_cpu, pod.score_cpu) == (DEF_CPU, DEF_CPU)


@pytest.mark.parametrize("builder, ports", [
    pytest.param(make_pod().host_port(80), [("0.0.0.0", "TCP", 80)],
                 id="an empty hostIP and protocol mean 0.0.0.0 and TCP"),
    pytest.param(make_pod().host_port(53, "UDP", "10.0.0.1"), [("10.0.0.1", "UDP", 53)],
                 id="hostIP and protocol are kept"),
    pytest.param(make_pod().container(ports=[{"containerPort": 8080}]), [],
                 id="a container port without hostPort uses no host port"),
    pytest.param(make_pod().init_container(ports=[{"containerPort": 9, "hostPort": 9}], sidecar=True),
                 [("0.0.0.0", "TCP", 9)], id="a sidecar's host port counts"),
    pytest.param(make_pod().init_container(ports=[{"containerPort": 9, "hostPort": 9}]), [],
                 id="a plain init container's host port does not count"),
])
def test_host_ports(builder: PodBuilder, ports: list[tuple[str, str, int]]) -> None:
    assert [(p.ip, p.protocol, p.port) for p in builder.build().host_ports] == ports


def test_images_are_listed_init_containers_first() -> None:
    pod = make_pod().image("app:1", "app:1").init_container(image="setup").build()
    assert pod.images == ("setup", "app:1", "app:1")
