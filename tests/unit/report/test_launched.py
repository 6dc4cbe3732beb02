"""``launched[]``, ``autoscaling`` and the pods' ``autoscaler`` reasons of a SimulationResult with
--autoscaler: built from a run, valid against the shipped schema, read back as written."""

from __future__ import annotations

import jsonschema

from kplan.cli.render import to_json
from kplan.report.codec import decode, encode
from kplan.report.document import SimulationDocument, simulation_document
from kplan.report.schema import shipped
from tests.unit.whatif.test_autoscale import Launcher, planner, pod_doc
from tests.unit.whatif.test_node_daemons import daemonset, node_doc


def document() -> SimulationDocument:
    launcher = Launcher(cpu="2", name="karpenter")
    run = planner([node_doc("n1", cpu="1"), daemonset("agent", cpu="100m")],
                  [pod_doc("b", "1500m"), pod_doc("never", "1500m")], launcher).simulate()
    return simulation_document(run.result, None, run.autoscaling)


def test_the_launched_nodes_list_their_pods_price_and_options() -> None:
    doc = encode(document())
    [new] = doc["launched"]
    assert {k: v for k, v in new.items() if k != "daemonPods"} == {
        "name": "new-1", "nodePool": "general", "instanceType": "m5.xlarge", "capacityType": "on-demand",
        "zone": "zone-b", "pricePerHour": 0.192, "pods": [{"namespace": "default", "name": "b"}],
        "otherInstanceTypes": ["m5a.xlarge"], "round": 1}
    assert [p["name"][:6] for p in new["daemonPods"]] == ["agent-"]
    assert doc["autoscaling"] == {"autoscaler": "karpenter", "rounds": 2, "stoppedAtBound": False, "nodes": 1,
                                  "pricePerHour": 0.192, "pricePerMonth": 140.16}


def test_a_pod_the_autoscaler_cannot_help_carries_its_reason_next_to_kube_schedulers() -> None:
    pods = {p["name"]: p for p in encode(document())["pods"]}
    assert pods["never"]["autoscaler"] == "no instance type satisfied resources"
    assert pods["never"]["message"].startswith("0/2 nodes are available")
    assert "autoscaler" not in pods["b"]


def test_the_document_validates_and_reads_back_as_written() -> None:
    data = encode(document())
    schema = shipped()
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(data)]
    assert errors == []
    assert to_json(encode(decode(SimulationDocument, data))) == to_json(data)


def test_the_terminal_shows_the_new_nodes_their_cost_and_the_reasons_in_80_columns() -> None:
    from kplan.cli.render import RenderOptions, render

    text = render(document(), "table", RenderOptions(width=80))
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "NEW NODE    NODEPOOL    TYPE       CAPACITY    ZONE      $/HOUR    PODS\n" \
           "new-1       general     m5.xlarge  on-demand   zone-b     0.192       1\n" in text
    assert "Karpenter launched 1 new node: +$0.1920 per hour, +$140.16 per month (730 h)." in text
    assert "WHY KARPENTER LAUNCHES NOTHING FOR THEM\ndefault/never\n    no instance type satisfied resources\n" in text


def test_the_html_report_lists_the_new_nodes_and_their_cost() -> None:
    from kplan.cli.render import RenderOptions, render

    page = render(document(), "html", RenderOptions())
    assert "<h2>Nodes the autoscaler launched</h2>" in page
    assert "Karpenter launched 1 new node: +$0.1920 per hour, +$140.16 per month (730 h)." in page
    assert "<td>new-1</td><td>general</td><td>m5.xlarge</td><td>on-demand</td><td>zone-b</td>" in page
    assert "<td><code>default/never</code></td><td>no instance type satisfied resources</td>" in page


def test_whatif_says_what_the_autoscaler_launches_before_and_after_the_change_and_the_difference() -> None:
    from kplan.cli.render import RenderOptions, render
    from kplan.report.whatif import whatif_document
    from kplan.whatif.changes import RemoveNode

    launcher = Launcher(cpu="2", name="karpenter")
    p = planner([node_doc("n1", cpu="2"), node_doc("n2", cpu="2")], [pod_doc("b", "1500m")], launcher)
    doc = whatif_document(p.whatif([RemoveNode("n1"), RemoveNode("n2")]))
    assert doc.before.launched == () and [n.name for n in doc.after.launched] == ["new-0"]
    text = render(doc, "table", RenderOptions(width=80))
    assert ("Karpenter launches 0 nodes ($0.0000 per hour) before the change and 1 node\n"
            "  ($0.1920 per hour) after: +$0.1920 per hour, +$140.16 per month (730 h).\n"
            "  new-0: general, m5.xlarge on-demand in zone-b, $0.1920 per hour, 1 pod\n") in text
    assert max(len(line) for line in text.splitlines()) <= 80
