"""NodeUnschedulable, NodeName and TaintToleration (reference 3.1 rows 1–3, 3.2, 4.4)."""

from __future__ import annotations

import pytest

from kplan.framework.status import Code
from tests.builders import (
    NodeBuilder,
    PodBuilder,
    Verdict,
    make_node,
    make_plugin,
    make_pod,
    make_snapshot,
    run_filter,
    run_score,
)

OK = Verdict(Code.SUCCESS, ())
UNSCHEDULABLE = Verdict(Code.UNRESOLVABLE, ("node(s) were unschedulable",))
WRONG_NAME = Verdict(Code.UNRESOLVABLE, ("node(s) didn't match the requested node name",))


def taint_verdict(rendered: str) -> Verdict:
    return Verdict(Code.UNRESOLVABLE, (f"node(s) had untolerated taint {rendered}",))


# ------------------------------------------------------------------------------ NodeUnschedulable

@pytest.mark.parametrize("node, pod, verdict", [
    pytest.param(make_node("n").unschedulable(), make_pod(), UNSCHEDULABLE,
                 id="a cordoned node rejects the pod as unresolvable"),
    pytest.param(make_node("n"), make_pod(), OK, id="a schedulable node accepts the pod"),
    pytest.param(make_node("n").unschedulable(),
                 make_pod().toleration("node.kubernetes.io/unschedulable", effect="NoSchedule", operator="Exists"),
                 OK, id="a pod tolerating the unschedulable taint fits a cordoned node"),
    pytest.param(make_node("n").unschedulable(), make_pod().toleration(operator="Exists"), OK,
                 id="a toleration of everything covers a cordoned node"),
    pytest.param(make_node("n").unschedulable(),
                 make_pod().toleration("node.kubernetes.io/unschedulable", effect="NoExecute", operator="Exists"),
                 UNSCHEDULABLE, id="a toleration for another effect does not cover a cordoned node"),
    pytest.param(make_node("n").unschedulable(),
                 make_pod().toleration("node.kubernetes.io/unschedulable", value="true", effect="NoSchedule"),
                 UNSCHEDULABLE, id="an Equal toleration with a value does not match the empty taint value"),
    pytest.param(make_node("n").taint("node.kubernetes.io/unschedulable"), make_pod(), OK,
                 id="only spec.unschedulable counts, not a taint of the same name"),
])
def test_node_unschedulable(node: NodeBuilder, pod: PodBuilder, verdict: Verdict) -> None:
    snap = make_snapshot([node])
    assert run_filter(make_plugin("NodeUnschedulable", snap), pod.build(), snap) == {"n": verdict}


# ------------------------------------------------------------------------------ NodeName

@pytest.mark.parametrize("pod, verdicts", [
    pytest.param(make_pod().spec(nodeName="n2"), {"n1": WRONG_NAME, "n2": OK, "n3": WRONG_NAME},
                 id="a pod naming a node fits only that node"),
    pytest.param(make_pod(), {"n1": OK, "n2": OK, "n3": OK}, id="a pod without a node name fits every node"),
    pytest.param(make_pod().spec(nodeName="gone"), {"n1": WRONG_NAME, "n2": WRONG_NAME, "n3": WRONG_NAME},
                 id="a pod naming a missing node fits no node"),
])
def test_node_name(pod: PodBuilder, verdicts: dict[str, Verdict]) -> None:
    snap = make_snapshot([make_node("n1"), make_node("n2"), make_node("n3")])
    assert run_filter(make_plugin("NodeName", snap), pod.build(), snap) == verdicts


# ------------------------------------------------------------------------------ TaintToleration filter

@pytest.mark.parametrize("node, pod, verdict", [
    pytest.param(make_node("n").taint("dedicated", "gpu"), make_pod(), taint_verdict("{dedicated: gpu}"),
                 id="a node with an untolerated NoSchedule taint rejects the pod"),
    pytest.param(make_node("n").taint("dedicated"), make_pod(), taint_verdict("{dedicated: }"),
                 id="an empty taint value renders as key colon space"),
    pytest.param(make_node("n").taint("evict", "x", "NoExecute"), make_pod(), taint_verdict("{evict: x}"),
                 id="an untolerated NoExecute taint rejects the pod"),
    pytest.param(make_node("n").taint("soft", "x", "PreferNoSchedule"), make_pod(), OK,
                 id="a PreferNoSchedule taint never filters"),
    pytest.param(make_node("n").taint("dedicated", "gpu"), make_pod().toleration("dedicated", "gpu", "NoSchedule"),
                 OK, id="an Equal toleration with the same key value and effect tolerates the taint"),
    pytest.param(make_node("n").taint("dedicated", "gpu"), make_pod().toleration("dedicated", "cpu", "NoSchedule"),
                 taint_verdict("{dedicated: gpu}"), id="an Equal toleration with another value does not tolerate"),
    pytest.param(make_node("n").taint("dedicated", "gpu"), make_pod().toleration("dedicated", operator="Exists"),
                 OK, id="Exists with a key and no effect tolerates every value and effect of that key"),
    pytest.param(make_node("n").taint("dedicated", "gpu"),
                 make_pod().toleration("dedicated", "gpu", "NoExecute"), taint_verdict("{dedicated: gpu}"),
                 id="a toleration for another effect does not tolerate"),
    pytest.param(make_node("n").taint("a").taint("b", "2", "NoExecute"), make_pod().toleration(operator="Exists"),
                 OK, id="Exists without a key tolerates every taint"),
    pytest.param(make_node("n").taint("a", "1").taint("b", "2"), make_pod().toleration("a", "1"),
                 taint_verdict("{b: 2}"), id="the first untolerated taint in node order is reported"),
    pytest.param(make_node("n").taint("a", "1").taint("b", "2"), make_pod(), taint_verdict("{a: 1}"),
                 id="with several untolerated taints only the first one is reported"),
    pytest.param(make_node("n").taint("node-role.kubernetes.io/control-plane"), make_pod(),
                 taint_verdict("{node-role.kubernetes.io/control-plane: }"),
                 id="the control-plane taint reads as in the reference example"),
])
def test_taint_toleration_filter(node: NodeBuilder, pod: PodBuilder, verdict: Verdict) -> None:
    # 1.34's text names the taint; 1.35 words every rejection alike (below)
    snap = make_snapshot([node])
    assert run_filter(make_plugin("TaintToleration", snap, release="1.34"), pod.build(), snap) == {"n": verdict}


@pytest.mark.parametrize(("release", "reason"), [
    ("1.34", "node(s) had untolerated taint {dedicated: gpu}"),
    ("1.35", "node(s) had untolerated taint(s)"),
], ids=["1.34 names the first untolerated taint", "1.35 names none (#134740)"])
def test_the_untolerated_taint_reason_by_release(release: str, reason: str) -> None:
    snap = make_snapshot([make_node("n").taint("dedicated", "gpu").taint("b", "2")])
    plugin = make_plugin("TaintToleration", snap, release=release)
    assert run_filter(plugin, make_pod().build(), snap) == {"n": Verdict(Code.UNRESOLVABLE, (reason,))}


# ------------------------------------------------------------------------------ TaintToleration score

SOFT_NODES = [
    make_node("n0"),
    make_node("n1").taint("spot", "true", "PreferNoSchedule"),
    make_node("n2").taint("spot", "true", "PreferNoSchedule").taint("old", "", "PreferNoSchedule"),
    make_node("n3").taint("hard", "x", "NoSchedule"),
]


@pytest.mark.parametrize("pod, raw, normalized", [
    pytest.param(make_pod(), {"n0": 0, "n1": 1, "n2": 2, "n3": 0}, {"n0": 100, "n1": 50, "n2": 0, "n3": 100},
                 id="fewer intolerable PreferNoSchedule taints score higher, normalized in reverse"),
    pytest.param(make_pod().toleration("spot", "true", "PreferNoSchedule"), {"n0": 0, "n1": 0, "n2": 1, "n3": 0},
                 {"n0": 100, "n1": 100, "n2": 0, "n3": 100}, id="a PreferNoSchedule toleration removes the penalty"),
    pytest.param(make_pod().toleration("spot", operator="Exists"), {"n0": 0, "n1": 0, "n2": 1, "n3": 0},
                 {"n0": 100, "n1": 100, "n2": 0, "n3": 100}, id="a toleration without effect counts for scoring"),
    pytest.param(make_pod().toleration("spot", "true", "NoSchedule"), {"n0": 0, "n1": 1, "n2": 2, "n3": 0},
                 {"n0": 100, "n1": 50, "n2": 0, "n3": 100},
                 id="a NoSchedule toleration does not count against PreferNoSchedule taints"),
    pytest.param(make_pod().toleration(operator="Exists"), {"n0": 0, "n1": 0, "n2": 0, "n3": 0},
                 {"n0": 100, "n1": 100, "n2": 100, "n3": 100},
                 id="with no intolerable taint anywhere every node scores 100"),
])
def test_taint_toleration_score(pod: PodBuilder, raw: dict[str, int], normalized: dict[str, int]) -> None:
    snap = make_snapshot(SOFT_NODES)
    plugin = make_plugin("TaintToleration", snap)
    assert run_score(plugin, pod.build(), snap, normalize=False) == raw
    assert run_score(plugin, pod.build(), snap) == normalized
