"""-o github: workflow commands escaped as the Actions runner unescapes them (actions/toolkit
command.ts), errors for what fails the check, warnings for the rest, one notice."""

from __future__ import annotations

import pytest

from kplan.cli.render import RenderOptions, render
from kplan.cli.render.github import command, escape_data, escape_property
from kplan.report.check import FailOn
from tests.unit.cli.documents import eviction, pod, simulation

ESCAPES = [
    ("plain text is unchanged", "0/3 nodes are available", "0/3 nodes are available", "0/3 nodes are available"),
    ("a percent sign is escaped first, so escapes are not escaped twice", "100% used %0A", "100%25 used %250A",
     "100%25 used %250A"),
    ("line breaks become %0D and %0A", "a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
    ("colons and commas are escaped in properties only", "ns/pod: a, b", "ns/pod: a, b", "ns/pod%3A a%2C b"),
]


@pytest.mark.parametrize(("text", "data", "prop"), [c[1:] for c in ESCAPES], ids=[c[0] for c in ESCAPES])
def test_escaping_follows_the_runner(text: str, data: str, prop: str) -> None:
    assert escape_data(text) == data
    assert escape_property(text) == prop


def _unescape_data(s: str) -> str:
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def test_a_message_round_trips_through_the_runners_unescaping() -> None:
    text = "0/5 nodes: 50% of {a: b},\nnext line %0A"
    line = command("error", text, title="t")
    assert "\n" not in line
    assert _unescape_data(line.split("::", 2)[2]) == text


def test_a_command_with_properties() -> None:
    assert command("warning", "m", title="Pod a:b") == "::warning title=Pod a%3Ab::m"
    assert command("notice", "m") == "::notice::m"


DOC = simulation(pod("big"), pod("x", "Unschedulable", message="0/1 nodes are available: 1 Insufficient cpu."),
                 pod("g", "Gated", message="waiting for scheduling gates: [q]"),
                 preempted=(eviction("victim", "default/big"),))


def _levels(fail_on: FailOn) -> list[str]:
    out = render(DOC, "github", RenderOptions(fail_on=fail_on))
    return [line.split(" ", 1)[0] for line in out.splitlines()]


@pytest.mark.parametrize(("fail_on", "levels"), [
    (FailOn.unschedulable, ["::error", "::warning", "::notice"]),
    (FailOn.preemption, ["::error", "::error", "::notice"]),
    (FailOn.never, ["::warning", "::warning", "::notice"]),
], ids=["by default an unschedulable pod is an error and an eviction a warning",
        "under preemption the eviction is an error too", "under never everything is a warning"])
def test_errors_are_exactly_what_fails_the_check(fail_on: FailOn, levels: list[str]) -> None:
    assert _levels(fail_on) == levels


def test_the_gated_pod_is_counted_in_the_notice_not_annotated() -> None:
    out = render(DOC, "github", RenderOptions())
    assert "default/g" not in out
    assert out.splitlines()[-1] == ("::notice title=kplan simulate::3 pending pods: 1 scheduled, 1 unschedulable, "
                                    "1 gated; 1 pod preempted (1 node).")


def test_the_error_names_the_pod_in_its_title_and_carries_the_fit_error() -> None:
    first = render(DOC, "github", RenderOptions()).splitlines()[0]
    assert first == "::error title=Unschedulable pod default/x::0/1 nodes are available: 1 Insufficient cpu."
