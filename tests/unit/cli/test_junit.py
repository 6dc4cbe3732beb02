"""-o junit: one test case per pending pod, failures exactly where the check fails, valid XML
whatever the messages hold."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kplan.cli.render import RenderOptions, render
from kplan.report.check import FailOn
from tests.unit.cli.documents import eviction, pod, simulation

DOC = simulation(pod("big", priority=1000), pod("x", "Unschedulable", message="0/1 nodes are available: <none> & more"),
                 pod("g", "Gated", message="waiting for scheduling gates: [q]", namespace="jobs"),
                 pod("db-1", "NotCreated", message="not created"),
                 preempted=(eviction("victim", "default/big"),), timing={"loadSeconds": 0.5, "scheduleSeconds": 0.25})


def _parse(fail_on: FailOn = FailOn.unschedulable, doc: dict | None = None) -> ET.Element:  # type: ignore[type-arg]
    return ET.fromstring(render(doc or DOC, "junit", RenderOptions(fail_on=fail_on)).encode())


def _outcomes(root: ET.Element) -> dict[str, str]:
    out = {}
    for case in root.iter("testcase"):
        kid = next((k for k in case if k.tag in ("failure", "skipped")), None)
        out[f"{case.get('classname')}/{case.get('name')}"] = (
            "passed" if kid is None else f"{kid.tag}:{kid.get('type')}" if kid.tag == "failure" else "skipped")
    return out


def test_one_case_per_pending_pod_named_by_namespace_and_name() -> None:
    assert list(_outcomes(_parse())) == ["default/big", "default/x", "jobs/g", "default/db-1"]


@pytest.mark.parametrize(("fail_on", "expected"), [
    (FailOn.unschedulable, {"default/big": "passed", "default/x": "failure:Unschedulable", "jobs/g": "skipped",
                            "default/db-1": "failure:NotCreated"}),
    (FailOn.preemption, {"default/big": "failure:Preemption", "default/x": "failure:Unschedulable",
                         "jobs/g": "skipped", "default/db-1": "failure:NotCreated"}),
    (FailOn.never, {"default/big": "passed", "default/x": "passed", "jobs/g": "skipped", "default/db-1": "passed"}),
], ids=["by default pods that do not run fail", "under preemption the preemptor fails too",
        "under never nothing fails"])
def test_outcomes_follow_the_policy(fail_on: FailOn, expected: dict[str, str]) -> None:
    assert _outcomes(_parse(fail_on)) == expected


def test_counts_and_time_on_both_levels() -> None:
    root = _parse()
    suite = root.find("testsuite")
    assert suite is not None
    for el in (root, suite):
        assert (el.get("tests"), el.get("failures"), el.get("errors"), el.get("skipped"), el.get("time")) == \
            ("4", "2", "0", "1", "0.750")
    assert suite.get("name") == "kplan simulate"


def test_the_failure_text_is_the_schedulers_message_escaped() -> None:
    text = render(DOC, "junit", RenderOptions())
    assert "&lt;none&gt; &amp; more" in text
    failure = _parse().find(".//testcase[@name='x']/failure")
    assert failure is not None and failure.text == failure.get("message") == "0/1 nodes are available: <none> & more"


def test_the_preemptor_lists_its_victims() -> None:
    out = _parse().find(".//testcase[@name='big']/system-out")
    assert out is not None and out.text == "scheduled on node-1\npreempted 1 pod: default/victim on node-1"


def test_characters_xml_cannot_carry_are_replaced() -> None:
    doc = simulation(pod("x", "Unschedulable", message="bad \x00\x1b byte"))
    failure = _parse(doc=doc).find(".//failure")
    assert failure is not None and failure.text == "bad \ufffd\ufffd byte"


def test_no_time_without_timing() -> None:
    assert _parse(doc=simulation(pod("a"))).get("time") is None
