"""``-o junit``: a JUnit XML report, for CI systems that show test results (GitLab, Jenkins,
Azure Pipelines, GitHub Actions through a test-report action).

One test case per pending pod: ``classname`` is its namespace, ``name`` the pod's name.

- Scheduled: a passing case; ``system-out`` says where, and which pods it preempted to get there.
- Unschedulable, NotCreated, Preempted (a pending pod placed and then preempted by a later one):
  a ``failure`` whose ``type`` is the status and whose text is kube-scheduler's message (the
  FitError for an unschedulable pod), unless ``--fail-on never``, where the case passes and the
  message goes to ``system-out``.
- Gated: ``skipped``, with the gates it waits for.
- A scheduled pod that preempted running pods fails with ``type="Preemption"`` under
  ``--fail-on preemption``; otherwise it passes and lists its victims in ``system-out``.

So the report fails exactly when the command exits with 1 (kplan.report.check decides both).
``time`` is the run's load and scheduling time when the document carries one.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from kplan import __version__
from kplan.cli.render import RenderOptions
from kplan.cli.render.units import plural
from kplan.report.check import FailOn, problems, simulation_of
from kplan.report.document import Eviction, PendingPod, SimulationDocument
from kplan.report.whatif import WhatIfDocument
from kplan.scheduler.pod_status import NOT_RUNNING

#: characters XML 1.0 cannot carry, even escaped
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(s: str) -> str:
    return _NOT_XML.sub("\ufffd", s)


def _victims_by_preemptor(sim: SimulationDocument) -> dict[str, list[Eviction]]:
    out: dict[str, list[Eviction]] = {}
    for e in sim.preempted:
        out.setdefault(e.preemptor, []).append(e)
    return out


def _victims(victims: list[Eviction]) -> str:
    return ", ".join(f"{e.namespace}/{e.name} on {e.node}" for e in victims)


def _case(p: PendingPod, victims: list[Eviction], fail_on: FailOn, fails: bool = True) -> tuple[ET.Element, str]:
    """The test case of one pending pod, and its outcome: passed, failure or skipped. ``fails``:
    whether the pod, not running, fails the check (--fail-on newly-unschedulable spares the pods
    that did not run before the change either)."""
    case = ET.Element("testcase", {"classname": _text(p.namespace), "name": _text(p.name)})
    status, message = p.status, _text(p.message or p.status)
    out: list[str] = []
    outcome = "passed"
    if status in NOT_RUNNING:
        if fail_on is FailOn.never or not fails:
            out.append(f"{status}: {message}")
        else:
            ET.SubElement(case, "failure", {"type": status, "message": message}).text = message
            outcome = "failure"
    elif status == "Gated":
        ET.SubElement(case, "skipped", {"message": message})
        outcome = "skipped"
    elif p.node:
        out.append(f"scheduled on {p.node}")
    if victims:
        text = f"preempted {plural(len(victims), 'pod')}: {_victims(victims)}"
        if fail_on is FailOn.preemption and outcome == "passed":
            ET.SubElement(case, "failure", {"type": "Preemption", "message": _text(text)}).text = _text(text)
            outcome = "failure"
        else:
            out.append(text)
    if out:
        ET.SubElement(case, "system-out").text = _text("\n".join(out))
    return case, outcome


def _time(doc: SimulationDocument | WhatIfDocument) -> dict[str, str]:
    timing = doc.timing
    if not timing:
        return {}
    return {"time": f"{sum(float(v) for v in timing.values()):.3f}"}


def simulation_junit(doc: SimulationDocument, opts: RenderOptions) -> str:
    return junit_report(doc, opts, "kplan simulate")


def whatif_junit(doc: WhatIfDocument, opts: RenderOptions) -> str:
    """The pending pods of the run after the change (``after``), as for simulate."""
    return junit_report(doc, opts, "kplan whatif")


def junit_report(doc: SimulationDocument | WhatIfDocument, opts: RenderOptions, suite_name: str) -> str:
    """The report of a SimulationResult, or of a WhatIfResult's ``after`` run."""
    sim = simulation_of(doc)
    by_preemptor = _victims_by_preemptor(sim)
    cases, counts = [], {"passed": 0, "failure": 0, "skipped": 0}
    failing = {pr.key for pr in problems(doc, opts.fail_on) if pr.fails}
    for p in sim.pods:
        case, outcome = _case(p, by_preemptor.get(p.key, []), opts.fail_on, p.key in failing)
        cases.append(case)
        counts[outcome] += 1
    totals = {"tests": str(len(cases)), "failures": str(counts["failure"]), "errors": "0",
              "skipped": str(counts["skipped"]), **_time(doc)}
    root = ET.Element("testsuites", {"name": "kplan", **totals})
    suite = ET.SubElement(root, "testsuite", {"name": suite_name, **totals})
    props = ET.SubElement(suite, "properties")
    release = [("kubernetes.version", doc.release.version), ("feature-gates", doc.release.gates)] \
        if doc.release is not None else []
    for name, value in (("kplan.version", __version__), *release,
                        ("fail-on", opts.fail_on.value), ("nodes", str(sim.summary.nodes))):
        ET.SubElement(props, "property", {"name": name, "value": value})
    suite.extend(cases)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
