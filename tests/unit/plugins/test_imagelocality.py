"""ImageLocality (reference 4.3) and DefaultNormalizeScore (reference 4)."""

from __future__ import annotations

import numpy as np
import pytest

from kplan.plugins.helper import default_normalize
from kplan.plugins.imagelocality import normalized_image_name
from tests.builders import PodBuilder, make_node, make_plugin, make_pod, make_snapshot, run_score

MB = 2**20
NODES = [
    make_node("n1").image(500 * MB, "app:1").image(10 * MB, "tiny:1").image(1000 * MB, "big:1"),
    make_node("n2").image(10 * MB, "tiny:1").image(1000 * MB, "big:1"),
    make_node("n3").image(500 * MB, "app:1", "registry.example/app@sha256:abc").image(300 * MB, "nginx:latest")
    .image(10 * MB, "tiny:1").image(1000 * MB, "big:1").image(600 * MB, "localhost:5000/tool:latest"),
]


@pytest.mark.parametrize("pod, scores", [
    # sum = int(500Mi * 2/3) = 349525333; 100 * (349525333 - 23Mi) // (1000Mi - 23Mi) = 31
    pytest.param(make_pod().image("app:1"), {"n1": 31, "n2": 0, "n3": 31},
                 id="an image's size is scaled by the share of nodes that have it"),
    # int(300Mi / 3) = 104857600 → 100 * (104857600 - 23Mi) // 977Mi = 7
    pytest.param(make_pod().image("nginx"), {"n1": 0, "n2": 0, "n3": 7},
                 id="an untagged name matches the :latest tag"),
    pytest.param(make_pod().image("docker.io/library/nginx:latest"), {"n1": 0, "n2": 0, "n3": 0},
                 id="names match exactly, registries are not normalised"),
    pytest.param(make_pod().image("localhost:5000/tool"), {"n1": 0, "n2": 0, "n3": 18},
                 id="a registry port is not mistaken for a tag"),
    pytest.param(make_pod().image("registry.example/app@sha256:abc"), {"n1": 0, "n2": 0, "n3": 14},
                 id="every name of a node image is matched, digests included"),
    pytest.param(make_pod().image("tiny:1"), {"n1": 0, "n2": 0, "n3": 0},
                 id="images below the 23Mi threshold score 0"),
    pytest.param(make_pod().image("big:1"), {"n1": 100, "n2": 100, "n3": 100},
                 id="an image at the per-container maximum scores 100"),
    # one container of two present: 100 * (1000Mi - 23Mi) // (2000Mi - 23Mi) = 49
    pytest.param(make_pod().image("big:1", "missing:1"), {"n1": 49, "n2": 49, "n3": 49},
                 id="the maximum grows with the number of containers"),
    pytest.param(make_pod().image("big:1", "big:1"), {"n1": 100, "n2": 100, "n3": 100},
                 id="a repeated image counts again"),
    pytest.param(make_pod().image("missing:1").init_container(image="big:1"), {"n1": 49, "n2": 49, "n3": 49},
                 id="init containers count as containers"),
    pytest.param(make_pod().image("missing:1"), {"n1": 0, "n2": 0, "n3": 0}, id="an image on no node scores 0"),
])
def test_image_locality(pod: PodBuilder, scores: dict[str, int]) -> None:
    snap = make_snapshot(NODES)
    assert run_score(make_plugin("ImageLocality", snap), pod.build(), snap) == scores


@pytest.mark.parametrize("pod, scores_1_34, scores_1_36, scores_1_37", [
    # 1.36: big:1 (1000Mi) + app:1 on n1 and n3 (int(500Mi * 2/3)) clamped to 1000Mi → 100; 1.37:
    # 100 * (1000Mi + 349525333 - 23Mi) // (2000Mi - 23Mi) = 66 on n1, n3; 49 on n2
    pytest.param(make_pod().image("big:1").image_volume("app:1"), {"n1": 100, "n2": 100, "n3": 100},
                 {"n1": 100, "n2": 100, "n3": 100}, {"n1": 66, "n2": 49, "n3": 66},
                 id="an image volume is summed from 1.36 and raises the maximum from 1.37"),
    # the image volume alone: int(500Mi * 2/3) → 31 on n1, n3 (maximum 1000Mi), 15 from 1.37 (2000Mi)
    pytest.param(make_pod().image("missing:1").image_volume("app:1"), {"n1": 0, "n2": 0, "n3": 0},
                 {"n1": 31, "n2": 0, "n3": 31}, {"n1": 15, "n2": 0, "n3": 15},
                 id="a pod whose only image on the nodes is an image volume's"),
    pytest.param(make_pod().image("big:1").image_volume("missing:1"), {"n1": 100, "n2": 100, "n3": 100},
                 {"n1": 100, "n2": 100, "n3": 100}, {"n1": 49, "n2": 49, "n3": 49},
                 id="an image volume on no node still counts in 1.37's maximum"),
    # 2 × int(300Mi / 3) = 209715200: 100 * (209715200 - 23Mi) // 977Mi = 18; // 1977Mi = 8
    pytest.param(make_pod().image("nginx").image_volume("nginx"), {"n1": 0, "n2": 0, "n3": 7},
                 {"n1": 0, "n2": 0, "n3": 18}, {"n1": 0, "n2": 0, "n3": 8},
                 id="an image volume's untagged reference matches :latest"),
])
def test_image_locality_with_image_volumes(pod: PodBuilder, scores_1_34: dict[str, int], scores_1_36: dict[str, int],
                                           scores_1_37: dict[str, int]) -> None:
    snap = make_snapshot(NODES)
    built = pod.build()
    for release, scores in (("1.34", scores_1_34), ("1.36", scores_1_36), ("1.37", scores_1_37)):
        assert run_score(make_plugin("ImageLocality", snap, release=release), built, snap) == scores, release


def test_one_image_name_scores_with_the_size_the_first_node_by_name_reports() -> None:
    # cache.go keeps one shared state per image name, sized by the first node that reports it
    snap = make_snapshot([make_node("b").image(900 * MB, "app:latest"), make_node("a").image(100 * MB, "app:latest")])
    # int(100Mi * 2/2) → 100 * (100Mi - 23Mi) // 977Mi = 7 on both nodes
    assert run_score(make_plugin("ImageLocality", snap), make_pod().image("app").build(), snap) == {"a": 7, "b": 7}


def test_image_locality_scales_by_all_nodes_even_when_scoring_a_few() -> None:
    snap = make_snapshot(NODES)
    assert run_score(make_plugin("ImageLocality", snap), make_pod().image("app:1").build(), snap,
                     nodes=["n3"]) == {"n3": 31}


@pytest.mark.parametrize("name, normalized", [
    pytest.param("nginx", "nginx:latest", id="no tag gets latest"),
    pytest.param("nginx:1.27", "nginx:1.27", id="a tag is kept"),
    pytest.param("localhost:5000/app", "localhost:5000/app:latest", id="a port before the last slash is no tag"),
    pytest.param("localhost:5000/app:2", "localhost:5000/app:2", id="a tag after a registry port is kept"),
])
def test_normalized_image_name(name: str, normalized: str) -> None:
    assert normalized_image_name(name) == normalized


@pytest.mark.parametrize("scores, reverse, expected", [
    pytest.param([10, 20, 40], False, [25, 50, 100], id="scores are scaled so the maximum is 100"),
    pytest.param([10, 20, 40], True, [75, 50, 0], id="reversed scores are 100 minus the scaled score"),
    pytest.param([1, 3], False, [33, 100], id="scaling truncates"),
    pytest.param([0, 0], False, [0, 0], id="all-zero scores stay zero"),
    pytest.param([0, 0], True, [100, 100], id="all-zero scores reversed become 100"),
    pytest.param([], False, [], id="no nodes give no scores"),
])
def test_default_normalize_score(scores: list[int], reverse: bool, expected: list[int]) -> None:
    out = default_normalize(np.array(scores, dtype=np.int64), reverse)
    assert out.tolist() == expected
