"""Which pending pods Karpenter considers (provisioner.go GetPendingPods, Validate)."""

from __future__ import annotations

import pytest

from kplan.autoscaler.karpenter import KarpenterCluster, solve
from kplan.model.objects import Pod
from tests.builders import expr, make_pod, term
from tests.unit.autoscaler.karpenter.test_scheduler import CATALOG, pool

WK = CATALOG.well_known_labels


@pytest.mark.parametrize("pod, reason", [
    pytest.param(make_pod("a").req(cpu="1").node_selector(**{"karpenter.sh/nodepool": "x"}).required(
        term(expr("karpenter.sh/nodepool", "DoesNotExist"))).build(),
        "ignoring pod, configured to not run on a Karpenter provisioned node "
        "(requirement=karpenter.sh/nodepool DoesNotExist)",
        id="a pod that keeps off Karpenter's nodes is ignored"),
    pytest.param(make_pod("a").req(cpu="1").node_selector(**{"kubernetes.io/hostname": "n1"}).build(),
                 "ignoring pod, using label kubernetes.io/hostname is not allowed",
                 id="a node selector on the hostname is ignored"),
    pytest.param(make_pod("a").req(cpu="1").owner("DaemonSet", "ds").build(), "owned by a DaemonSet",
                 id="a DaemonSet's pod is ignored"),
    pytest.param(make_pod("a").req(cpu="1").required(term(fields=[{"key": "metadata.name", "operator": "In",
                                                                     "values": ["n1"]}])).build(),
                 "ignoring pod, node selector term with matchFields is not supported",
                 id="matchFields is ignored"),
])
def test_pods_karpenter_ignores(pod: Pod, reason: str) -> None:
    result = solve(KarpenterCluster((), (), (pool(),), (), (), CATALOG), [pod])
    assert result.ignored["default/a"].startswith(reason)
    assert not result.pod_errors and not result.new_node_claims


def test_without_a_dynamic_node_pool_every_pod_is_told_so() -> None:
    result = solve(KarpenterCluster((), (), (), (), (), CATALOG), [make_pod("a").req(cpu="1").build()])
    assert result.pod_errors == {"default/a": "no dynamic nodepools found"}
