"""A table of malformed and hostile inputs: each row names what is wrong, the manifest (or
option) that carries it, the exit code and the words of the one ``error:`` line. kplan never
answers them with a traceback (70), a hang, or a schedule as if the input were valid.

Run through the real entry point (``kplan.cli.app.main``) in-process, against a small cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from kplan.cli.app import main

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = str(ROOT / "tests/fixtures/planning/cluster.yaml")


def pod(spec: str = "containers: [{name: c, image: app}]", name: str = "web", extra: str = "") -> str:
    """A pending pod in YAML flow style, with ``spec`` (and ``extra`` top-level fields) spliced in."""
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec: {{{spec}}}\n{extra}"


def container(fields: str) -> str:
    return f"containers: [{{name: c, image: app, {fields}}}]"


class Row(NamedTuple):
    manifest: str | bytes
    #: the words the one error line must contain (after ``error: ``)
    message: str
    code: int = 2
    #: extra command-line arguments (before the manifest path)
    args: tuple[str, ...] = ()
    command: str = "simulate"
    suffix: str = ".yaml"


ROWS: dict[str, Row] = {
    # --- documents that are not well-formed, or too large to expand
    "a JSON array nested 200,000 deep": Row("[" * 200_000 + "]" * 200_000, "not valid JSON: nested too deeply",
                                              suffix=".json"),
    "a YAML flow sequence nested 200,000 deep": Row("a: " + "[" * 200_000 + "]" * 200_000,
                                                    "nested deeper than 100 levels"),
    "a YAML block mapping nested 3,000 deep": Row("\n".join(" " * i + "a:" for i in range(3000)) + " 1\n",
                                                  "nested deeper than 100 levels"),
    "a pod nested 500 deep in JSON": Row('{"kind":"Pod","metadata":{"name":"a"},"spec":' + "[" * 500 + "]" * 500 + "}",
                                         "nested deeper than 100 levels", suffix=".json"),
    "a billion laughs of YAML aliases": Row(
        "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(9))
        + "kind: Pod\n", "excessive aliasing"),
    "a YAML alias that holds itself": Row("kind: Pod\nmetadata: &a {name: x, self: *a}\n", "recursive alias"),
    "a JSON integer of 5,000 digits": Row('{"kind":"Pod","metadata":{"name":"a"},"spec":{"priority":' + "9" * 5000 + "}}",
                                          "a number has more than 4300 digits", suffix=".json"),
    "a YAML integer of 5,000 digits": Row("kind: Pod\nmetadata: {name: a}\nspec: {priority: " + "9" * 5000 + "}\n",
                                          "a number has more than 4300 digits"),
    "a YAML syntax error": Row("kind: Pod\nmetadata: {name: a\n", "not valid YAML or JSON"),
    "JSON cut short": Row('{"kind": "Pod", "metadata": {"name": "a"}', "not valid JSON", suffix=".json"),
    "a document that is a plain string": Row("just words\n", "expected a Kubernetes object, got str"),
    "an object without a kind": Row("apiVersion: v1\nmetadata: {name: a}\n", "kind: Required value"),
    # --- quantities beyond what kube-scheduler's int64 counters hold
    "a cpu request of 1e400": Row(pod(container('resources: {requests: {cpu: "1e400"}}')),
                                  'spec.containers[0].resources.requests[cpu]: Invalid value: "1e400": must be '
                                  "less than 2^63 millicores"),
    "a memory limit of 1e30Ei": Row(pod(container('resources: {limits: {memory: "100000000000Ei"}}')),
                                    "spec.containers[0].resources.limits[memory]: Invalid value"),
    "a cpu request with an exponent of a trillion": Row(pod(container('resources: {requests: {cpu: "1e999999999999"}}')),
                                                        "must be less than 2^63 millicores"),
    "a cpu request of 5,000 digits": Row(pod(container(f'resources: {{requests: {{cpu: "{"9" * 5000}"}}}}')),
                                         "unable to parse numeric part of quantity"),
    "a quantity that is not one": Row(pod(container('resources: {requests: {cpu: "lots"}}')),
                                      "quantities must match the regular expression"),
    # --- counts kplan would spend for ever on
    "a Deployment of two billion replicas": Row(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2000000000\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: c, image: app}]}\n", "kplan simulates at most 100,000 pods of one workload"),
    "whatif adding 99,999,999,999 nodes like one": Row(pod(), "COUNT must be at most 5000",
                                                       args=("--add-node", "like=node-a1:99999999999"),
                                                       command="whatif"),
    "whatif adding a negative count of nodes": Row(pod(), "COUNT must be a whole number of at least 1",
                                                   args=("--add-node", "like=node-a1:-3"), command="whatif"),
    "whatif scaling to a trillion replicas": Row(pod(), "REPLICAS must be at most 100000",
                                                 args=("--scale", "deployment/web=1000000000000"), command="whatif"),
    "whatif until-fit like a node that does not exist": Row(pod(), "--until-fit like=ghost: no node named 'ghost'",
                                                            args=("--until-fit", "like=ghost"), command="whatif"),
}


def run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(args)
    out, err = capsys.readouterr()
    code = e.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), out, err


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_malformed_input_is_one_error_line(row: Row, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    path = tmp_path / f"input{row.suffix}"
    if isinstance(row.manifest, bytes):
        path.write_bytes(row.manifest)
    else:
        path.write_text(row.manifest)
    code, out, err = run(capsys, [row.command, *row.args, str(path), "--cluster", CLUSTER, "--tie-break",
                                  "lowest-name"])
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert (code, len(errors)) == (row.code, 1), err
    assert row.message in errors[0], err
    assert "Traceback" not in err
    assert out == ""
