"""Generated and mutated manifests: whatever the bytes, kplan either runs (exit 0 or 1) or exits
with 2 and one ``error:`` line per invalid object, never with 70, a traceback, or after 10 s.

Strategies: random JSON-like documents; valid pods and Deployments with one field replaced by a
value of the wrong type, a huge or negative quantity, a deep nesting, or bad UTF-8 bytes; the shipped
DRA and storage file sets with one value of a cluster or a manifest object replaced.
Example counts stay modest (CI has two cores); each example is one in-process CLI run.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# cel-python raises the recursion limit when it builds its parser: let that happen at import, not
# inside a hypothesis example (hypothesis warns about a limit changed under it)
import kplan.cel as _cel  # noqa: F401,E402
from kplan.cli.app import main

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = str(ROOT / "tests/fixtures/planning/cluster.yaml")

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "app", "ports": [{"containerPort": 80}],
                             "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "1"}}}],
             "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
             "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                 {"weight": 10, "preference": {"matchExpressions": [{"key": "disk", "operator": "In",
                                                                     "values": ["ssd"]}]}}]}},
             "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                            "whenUnsatisfiable": "ScheduleAnyway",
                                            "labelSelector": {"matchLabels": {"app": "web"}}}]}}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}}, "spec": copy.deepcopy(POD["spec"])}}}

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    st.sampled_from(["1e400", "-1", "-0.5", "1.2.3", "9" * 30 + "Ei", "1e-999", "0x10", "NaN", "∞",
                                     "Exists", "In", "Gt", "", " ", "a/b/c", "UPPER"]))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                    max_leaves=20)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``doc``."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += paths(v, (*prefix, i))
    return out


def replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return doc


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid pod or Deployment with one value replaced, as JSON or YAML text, maybe with bad bytes."""
    base = draw(st.sampled_from([POD, DEPLOYMENT]))
    path = draw(st.sampled_from(paths(base)))
    value = draw(st.one_of(JSON, st.builds(nested, st.integers(min_value=50, max_value=3000))))
    doc = replaced(base, path, value)
    try:
        text = json.dumps(doc, allow_nan=True)
    except (ValueError, RecursionError):
        text = json.dumps(base)
    if draw(st.booleans()):
        text = "---\n" + text + "\n"  # the YAML path (a JSON document in a YAML stream)
    data = text.encode()
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        cut = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:cut] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\x00", b"\xed\xa0\x80"])) + data[cut:]
    return data


def run_kplan(tmp_path: Path, data: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "input.yaml"
    path.write_bytes(data)
    started = time.perf_counter()
    with pytest.raises(SystemExit) as e:
        main(["simulate", str(path), "--cluster", CLUSTER, "--tie-break", "lowest-name"])
    elapsed = time.perf_counter() - started
    out, err = capsys.readouterr()
    code = e.value.code if isinstance(e.value.code, int) else 0
    assert "Traceback" not in err, err
    assert code in (0, 1, 2), err
    if code == 2:
        lines = err.splitlines()
        assert lines and all(line.startswith(("error: ", "warning: ")) for line in lines), err
        assert out == ""
    assert elapsed < 10, f"{elapsed:.1f} s"


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                           HealthCheck.too_slow])


@SETTINGS
@given(data=mutated())
def test_a_mutated_manifest_runs_or_is_one_error_line_per_object(
        data: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    run_kplan(tmp_path, data, capsys)


@SETTINGS
@given(doc=JSON, kind=st.sampled_from(["Pod", "Deployment", "Node", "List", "PodDisruptionBudget", "LimitRange",
                                       "PriorityClass", "Job", "StatefulSet", None]))
def test_a_random_document_runs_or_is_one_error_line_per_object(
        doc: Any, kind: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    if isinstance(doc, dict) and kind is not None:
        doc = {**doc, "kind": kind, "apiVersion": {"Deployment": "apps/v1", "StatefulSet": "apps/v1",
                                                   "Job": "batch/v1", "PodDisruptionBudget": "policy/v1",
                                                   "PriorityClass": "scheduling.k8s.io/v1"}.get(kind, "v1")}
    try:
        data = json.dumps(doc, allow_nan=True).encode()
    except ValueError:
        data = b"{}"
    run_kplan(tmp_path, data, capsys)


def _documents(path: str) -> list[Any]:
    from ruamel.yaml import YAML

    with open(ROOT / path) as f:
        return [d for d in YAML(typ="safe").load_all(f) if d]


#: shipped cluster and manifest sets whose objects get mutated: DRA (classes, slices, a claim
#: template) and storage (classes, CSI drivers and nodes, PVs, claims, StatefulSets)
FILE_SETS = [("fixtures/dra/cluster.yaml", "fixtures/dra/serve.yaml"),
             ("tests/fixtures/storage/attach-limit-cluster.yaml", "tests/fixtures/storage/attach-limit-pods.yaml")]


@st.composite
def mutated_file_set(draw: st.DrawFn) -> tuple[list[Any], list[Any]]:
    """The cluster and manifest documents of a shipped set, one value in one of them replaced (cluster
    files are parsed, not validated, so theirs must fail as cleanly as a manifest's)."""
    cluster_file, manifest_file = draw(st.sampled_from(FILE_SETS))
    sides = [_documents(cluster_file), _documents(manifest_file)]
    side = draw(st.integers(min_value=0, max_value=1))
    docs = sides[side]
    i = draw(st.integers(min_value=0, max_value=len(docs) - 1))
    path = draw(st.sampled_from(paths(docs[i])))
    docs[i] = replaced(docs[i], path, draw(JSON))
    return sides[0], sides[1]


@SETTINGS
@given(sides=mutated_file_set())
def test_a_mutated_cluster_or_manifest_object_runs_or_is_one_error_line(
        sides: tuple[list[Any], list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    try:
        cluster = "\n".join(json.dumps(d, allow_nan=True) for d in sides[0])
        manifests = "\n".join(json.dumps(d, allow_nan=True) for d in sides[1])
    except (ValueError, RecursionError):
        return
    (tmp_path / "cluster.json").write_text(cluster)
    (tmp_path / "manifests.json").write_text(manifests)
    started = time.perf_counter()
    with pytest.raises(SystemExit) as e:
        main(["simulate", str(tmp_path / "manifests.json"), "--cluster", str(tmp_path / "cluster.json"),
              "--tie-break", "lowest-name"])
    out, err = capsys.readouterr()
    code = e.value.code if isinstance(e.value.code, int) else 0
    assert "Traceback" not in err, err
    assert code in (0, 1, 2), err
    if code == 2:
        assert all(line.startswith(("error: ", "warning: ")) for line in err.splitlines()), err
    assert time.perf_counter() - started < 10
