"""-o jsonpath=TEMPLATE: kubectl's JSONPath templates (kplan.cli.render.jsonpath), a row per rule,
and -o name / -o jsonpath through the commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kplan.cli.render.jsonpath import JSONPathError, execute, parse
from tests.unit.cli.test_exit_codes import run

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = "tests/fixtures/planning/cluster.yaml"
PENDING = "tests/fixtures/planning/pending.yaml"

DOC: dict[str, Any] = {
    "kind": "SimulationResult",
    "summary": {"nodes": 3, "pending": 3},
    "pods": [
        {"namespace": "shop", "name": "web-0", "status": "Scheduled", "node": "n1", "attempts": 1, "share": 0.5},
        {"namespace": "shop", "name": "web-1", "status": "Unschedulable", "node": None, "attempts": 3,
         "share": 1.0},
        {"namespace": "ml", "name": "nb", "status": "Scheduled", "node": "n2", "attempts": 2, "share": 0.25,
         "labels": {"app.kubernetes.io/name": "nb", "tier": "gpu"}},
    ],
    "empty": [],
    "flag": True,
}

TEMPLATES = [
    ("text outside braces is printed as it is", "pods:", "pods:"),
    ("a field", "{.kind}", "SimulationResult"),
    ("$ and @ name the current value", "{$.kind} {@.summary.nodes}", "SimulationResult 3"),
    ("a list's values are separated by a space", "{.pods[*].name}", "web-0 web-1 nb"),
    ("an index", "{.pods[1].name}", "web-1"),
    ("a negative index counts from the end", "{.pods[-1].name}", "nb"),
    ("a slice", "{.pods[0:2].name}", "web-0 web-1"),
    ("a slice with a step", "{.pods[::2].name}", "web-0 nb"),
    ("a union of indices", "{.pods[0,2].name}", "web-0 nb"),
    ("a key in brackets", "{.pods[2]['name']}", "nb"),
    ("a dotted key escaped", "{.pods[2].labels.app\\.kubernetes\\.io/name}", "nb"),
    ("a wildcard over an object's values", "{.summary.*}", "3 3"),
    ("recursive descent", "{..name}", "web-0 web-1 nb"),
    ("a filter on a string", '{.pods[?(@.status=="Unschedulable")].name}', "web-1"),
    ("a filter with != and single quotes", "{.pods[?(@.status!='Scheduled')].name}", "web-1"),
    ("a filter on a number", "{.pods[?(@.attempts>=2)].name}", "web-1 nb"),
    ("a filter comparing a float with an integer", "{.pods[?(@.share<1)].name}", "web-0 nb"),
    ("an existence filter", "{.pods[?(@.labels)].name}", "nb"),
    ("range and end repeat the template per value",
     '{range .pods[*]}{.namespace}/{.name}{"\\t"}{.status}{"\\n"}{end}',
     "shop/web-0\tScheduled\nshop/web-1\tUnschedulable\nml/nb\tScheduled\n"),
    ("nested ranges", '{range .pods[?(@.labels)]}{range .labels.*}[{@}]{end}{end}', "[nb][gpu]"),
    ("a range over nothing prints nothing", "{range .empty[*]}x{end}.", "."),
    ("a missing key prints nothing (kubectl's default)", "<{.nothing.here}>", "<>"),
    ("null prints as null", "{.pods[1].node}", "null"),
    ("objects and lists as compact JSON, keys sorted", "{.summary} {.pods[2].labels}",
     '{"nodes":3,"pending":3} {"app.kubernetes.io/name":"nb","tier":"gpu"}'),
    ("booleans and floats as Go prints them", "{.flag} {.pods[1].share} {.pods[0].share}", "true 1 0.5"),
    ("an empty list slice is empty", "{.empty[*]}", ""),
    ("string literals take Go escapes", '{"a\\u00e9\\x41"}', "aéA"),
    ("a range without end runs to the end of the template", "{range .pods[*]}{.name};", "web-0;web-1;nb;"),
]


@pytest.mark.parametrize(("template", "want"), [c[1:] for c in TEMPLATES], ids=[c[0] for c in TEMPLATES])
def test_templates(template: str, want: str) -> None:
    assert execute(parse(template), DOC) == want


BAD_TEMPLATES = [
    ("an action not closed", "{.pods[*].name", "unclosed action"),
    ("end without range", "{end}", "{end} without a {range}"),
    ("a word that is no field", "{pods}", "unrecognized identifier 'pods' (a field is written .pods)"),
    ("an index that is no number", "{.pods[x]}", "invalid array index 'x'"),
    ("an array not closed", "{.pods[0}", "unterminated array"),
    ("a string not closed", '{"abc}', "unclosed action"),
    ("an unknown escape", '{"\\q"}', "invalid escape \\q"),
    ("a filter not closed", "{.pods[?(@.a==1}", "unterminated filter"),
    ("an unknown operator", "{.pods[?(@.a=<1)]}", "unrecognized filter operator =<"),
    ("two recursive descents", "{.....a}", "invalid multiple recursive descent"),
    ("a stray character", "{.a;b}", None),
]


@pytest.mark.parametrize(("template", "says"), [c[1:] for c in BAD_TEMPLATES], ids=[c[0] for c in BAD_TEMPLATES])
def test_templates_that_do_not_parse(template: str, says: str | None) -> None:
    if says is None:  # ';' belongs to the field name in kubectl's grammar too: '.a;b' is one key
        assert execute(parse(template), {"a;b": 1}) == "1"
        return
    with pytest.raises(JSONPathError, match=None) as e:
        parse(template)
    assert says in str(e.value)


FAILING = [
    ("an index out of bounds", "{.pods[5]}", "array index out of bounds: index 5, length 3"),
    ("an index into an empty list", "{.empty[0]}", "array index out of bounds: index 0, length 0"),
    ("an index into an object", "{.summary[0]}", "object is not an array"),
    ("a filter on an object", "{.summary[?(@.a)]}", "object is not an array and cannot be filtered"),
    ("an ordering of a number and a string", '{.pods[?(@.attempts>"a")]}',
     "incompatible types for comparison: number > string"),
    ("a step of zero", "{.pods[0:2:0]}", "step must be > 0"),
]


@pytest.mark.parametrize(("template", "says"), [c[1:] for c in FAILING], ids=[c[0] for c in FAILING])
def test_templates_that_fail_on_the_document(template: str, says: str) -> None:
    with pytest.raises(JSONPathError) as e:
        execute(parse(template), DOC)
    assert says in str(e.value)


# ------------------------------------------------------------------------------ through the commands

@pytest.fixture()
def _root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.mark.usefixtures("_root")
def test_simulate_jsonpath_reads_the_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    _, doc, _ = run(capsys, "simulate", PENDING, "-c", CLUSTER, "-o", "json", "--tie-break", "lowest-name")
    pods = json.loads(doc)["pods"]
    code, out, err = run(capsys, "simulate", PENDING, "-c", CLUSTER, "--tie-break", "lowest-name",
                         "-o=jsonpath={range .pods[*]}{.namespace}/{.name} {.status}{'\\n'}{end}")
    assert out == "".join(f"{p['namespace']}/{p['name']} {p['status']}\n" for p in pods)
    assert code in (0, 1) and err == ""


NAMES = [
    ("simulate: the pending pods", ["simulate", PENDING, "-c", CLUSTER], "pods", "pod"),
    ("explain: the pod", ["explain", "pod", "api-1", PENDING, "-c", CLUSTER], "pod", "pod"),
    ("whatif: the pods the change affects", ["whatif", PENDING, "-c", CLUSTER, "--drain", "node-a2"], "changes",
     "pod"),
    ("capacity: the nodes the replicas go to", ["capacity", "tests/fixtures/planning/replica.yaml", "-c", CLUSTER],
     "placements", "node"),
]


@pytest.mark.usefixtures("_root")
@pytest.mark.parametrize(("args", "field", "resource"), [c[1:] for c in NAMES], ids=[c[0] for c in NAMES])
def test_name_lists_the_objects_of_the_result(capsys: pytest.CaptureFixture[str], args: list[str], field: str,
                                              resource: str) -> None:
    import json

    _, doc, _ = run(capsys, *args, "-o", "json", "--tie-break", "lowest-name")
    value = json.loads(doc)[field]
    names = ([value["name"]] if field == "pod" else [n for n, c in value.items() if c] if field == "placements"
             else [p["name"] for p in value])
    assert names, "the case lists no object: it tests nothing"
    code, out, err = run(capsys, *args, "-o", "name", "--tie-break", "lowest-name")
    assert out == "".join(f"{resource}/{n}\n" for n in names)


@pytest.mark.usefixtures("_root")
@pytest.mark.parametrize(("args", "says"), [
    (["simulate", PENDING, "-c", CLUSTER, "-o", "jsonpath={.pods[*].name"],
     "error: -o jsonpath={.pods[*].name: unclosed action: {.pods[*].name\n"),
    (["simulate", PENDING, "-c", CLUSTER, "-o", "jsonpath"], "error: -o jsonpath: give a template"),
    (["simulate", PENDING, "-c", CLUSTER, "-o", "jsonpath={.pods[99]}"],
     "error: -o jsonpath={.pods[99]}: array index out of bounds: index 99, length"),
    (["sweep", PENDING, "-c", CLUSTER, "-o", "name"],
     "error: -o name lists the Kubernetes objects of a result, and a SweepResult has none"),
], ids=["a template that does not parse", "jsonpath without a template", "an index out of bounds",
        "sweep has no -o name"])
def test_jsonpath_and_name_mistakes_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], args: list[str],
                                                        says: str) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and out == "" and err.startswith(says) and err.count("\n") == 1
