"""kubectl habits: -f/--filename (and -f -), -o json / -o=json / --output=json, -o as a format
in every command, -n, NS/NAME; usage errors as one ``error:`` line and a pointer to the help."""

from __future__ import annotations

from pathlib import Path

import pytest

from kplan.cli.app import command_path, kubectl_args
from kplan.cli.snapshot import count_of, snapshot_format
from kplan.errors import InputError
from tests.unit.cli.test_exit_codes import run

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = "tests/fixtures/planning/cluster.yaml"
PENDING = "tests/fixtures/planning/pending.yaml"


@pytest.fixture(autouse=True)
def _project_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)


ARGS = [
    ("a short option joined by '=' is split", ["-o=json"], ["-o", "json"]),
    ("the value may hold '=' itself", ["-n=a=b"], ["-n", "a=b"]),
    ("a long option with '=' is click's already", ["--output=json"], ["--output=json"]),
    ("arguments after -- are left alone", ["--", "-o=json"], ["--", "-o=json"]),
    ("a lone short option is unchanged", ["-o", "json"], ["-o", "json"]),
]


@pytest.mark.parametrize(("given", "want"), [c[1:] for c in ARGS], ids=[c[0] for c in ARGS])
def test_kubectl_args(given: list[str], want: list[str]) -> None:
    assert kubectl_args(given) == want


@pytest.mark.parametrize("output", [["-o", "json"], ["-o=json"], ["--output=json"], ["--output", "json"]],
                         ids=["-o json", "-o=json", "--output=json", "--output json"])
def test_every_spelling_of_the_output_option_gives_json(capsys: pytest.CaptureFixture[str],
                                                         output: list[str]) -> None:
    code, out, _ = run(capsys, "simulate", PENDING, "-c", CLUSTER, *output)
    assert out.startswith("{\n") and '"kind": "SimulationResult"' in out


def test_filename_is_the_same_as_an_argument(capsys: pytest.CaptureFixture[str]) -> None:
    _, by_argument, _ = run(capsys, "simulate", PENDING, "-c", CLUSTER, "-o", "json")
    _, by_option, _ = run(capsys, "simulate", "-f", PENDING, "-c", CLUSTER, "-o", "json")
    _, by_long, _ = run(capsys, "simulate", "--filename", PENDING, "-c", CLUSTER, "-o", "json")
    strip = [line for line in by_argument.splitlines() if "Seconds" not in line]
    assert strip == [line for line in by_option.splitlines() if "Seconds" not in line]
    assert strip == [line for line in by_long.splitlines() if "Seconds" not in line]


def test_filename_dash_reads_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO((ROOT / PENDING).read_text()))
    code, out, err = run(capsys, "simulate", "-f", "-", "-c", CLUSTER, "-o", "json")
    assert '"pending": 0' not in out and '"kind": "SimulationResult"' in out, err


USAGE = [
    ("an unknown option", ["simulate", "--frobnicate"], "error: no such option: --frobnicate",
     "see 'kplan simulate --help'"),
    ("a missing value, found before the command's context", ["simulate", "-o"],
     "error: option '-o' requires an argument.", "see 'kplan simulate --help'"),
    ("a sub-command's option", ["explain", "pod", "--frobnicate"], "error: no such option: --frobnicate",
     "see 'kplan explain pod --help'"),
    ("an unknown command", ["simulte"], "error: no such command 'simulte'. Did you mean 'simulate'?",
     "see 'kplan --help'"),
]


@pytest.mark.parametrize(("args", "first", "second"), [c[1:] for c in USAGE], ids=[c[0] for c in USAGE])
def test_a_usage_error_is_one_error_line_and_a_pointer_to_the_help(capsys: pytest.CaptureFixture[str],
                                                                   args: list[str], first: str, second: str) -> None:
    code, out, err = run(capsys, *args)
    assert (code, out, err.splitlines()) == (2, "", [first, second])


def test_command_path_names_the_commands_before_the_options() -> None:
    assert command_path(["-q", "explain", "pod", "x", "-o"]) == "kplan explain pod"


COUNTS = [
    ("one node", 1, "nodes", "1 node"),
    ("two nodes", 2, "nodes", "2 nodes"),
    ("one class", 1, "storageclasses", "1 storageclass"),
    ("thousands", 1500, "pods", "1,500 pods"),
]


@pytest.mark.parametrize(("n", "resource", "want"), [c[1:] for c in COUNTS], ids=[c[0] for c in COUNTS])
def test_snapshot_counts_in_the_right_number(n: int, resource: str, want: str) -> None:
    assert count_of(n, resource) == want


FORMATS = [
    ("nothing: JSON", None, None, "json"),
    ("-o yaml to stdout", "yaml", None, "yaml"),
    ("the file name says yaml", None, "s.yaml.gz", "yaml"),
    ("the file name says json", None, "s.json", "json"),
    ("-o and the file agree", "json", "s.json.gz", "json"),
]


@pytest.mark.parametrize(("output", "output_file", "want"), [c[1:] for c in FORMATS], ids=[c[0] for c in FORMATS])
def test_snapshot_format(output: str | None, output_file: str | None, want: str) -> None:
    assert snapshot_format(output, output_file) == want


BAD_FORMATS = [
    ("-o given a file name, as before", "snap.json.gz", None, "give --output-file FILE"),
    ("-o and the file disagree", "yaml", "s.json", "the file name says json"),
    ("an unknown format", "xml", None, "choose json or yaml"),
]


@pytest.mark.parametrize(("output", "output_file", "says"), [c[1:] for c in BAD_FORMATS],
                         ids=[c[0] for c in BAD_FORMATS])
def test_snapshot_format_mistakes(output: str, output_file: str | None, says: str) -> None:
    with pytest.raises(InputError, match=says):
        snapshot_format(output, output_file)


def test_print_rbac_is_the_shipped_clusterrole(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "snapshot", "--print-rbac")
    assert (code, err) == (0, "")
    assert out == (ROOT / "fixtures/rbac/kplan-readonly-clusterrole.yaml").read_text()
    assert max(len(line) for line in out.splitlines()) <= 80


WEB = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: "3"}}}]}
"""

WORKLOAD_NAMES = [
    ("kubectl's TYPE/NAME", ["explain", "deployment/web"]),
    ("a short TYPE", ["explain", "deploy/web"]),
    ("after 'explain pod'", ["explain", "pod", "deployment/web"]),
]


@pytest.mark.parametrize("args", [c[1] for c in WORKLOAD_NAMES], ids=[c[0] for c in WORKLOAD_NAMES])
def test_explain_a_workload_explains_its_first_pod_that_does_not_run(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]) -> None:
    # issue 47 item 14: explain needed the generated pod name (web-58f65895c6-4rc7v)
    (tmp_path / "web.yaml").write_text(WEB)
    code, out, err = run(capsys, *args, str(tmp_path / "web.yaml"), "-c", CLUSTER, "--tie-break", "lowest-name")
    assert code == 1, err  # three 3-cpu replicas fit on the three 4-cpu nodes; the fourth does not
    assert out.startswith("Pod shop/web-") and "Status:    Unschedulable" in out


def test_explain_a_workload_without_pending_pods_is_one_error_line(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    (tmp_path / "web.yaml").write_text(WEB)
    code, out, err = run(capsys, "explain", "statefulset/web", str(tmp_path / "web.yaml"), "-c", CLUSTER)
    assert (code, out) == (2, "")
    assert err.startswith("error: StatefulSet web: no pending pod of this workload") and err.count("\n") == 1
