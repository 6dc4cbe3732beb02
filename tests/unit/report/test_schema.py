"""The result documents' JSON Schema: the shipped file is the one the typed classes generate,
every document kplan writes (each golden JSON and YAML output, from every command that writes
one) validates against it with a real validator, and reading a document into its class and
writing it again gives the same text."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

from kplan.cli.render import to_json, to_yaml
from kplan.report.codec import decode, encode
from kplan.report.schema import DOCUMENTS, generate, shipped

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
#: wall-clock timings the golden files hold as <seconds>
_SECONDS = re.compile(r"<seconds>")


def _written(path: Path) -> tuple[str, str]:
    """(format, text) of a golden stdout that holds a document."""
    text = _SECONDS.sub("1.25", path.read_text())
    return "json" if text.startswith("{") else "yaml" if text.startswith("apiVersion:") else "", text


OUTPUTS = sorted(p for p in GOLDEN.rglob("stdout") if _written(p)[0])


def _load(fmt: str, text: str) -> Any:
    return json.loads(text) if fmt == "json" else YAML(typ="safe", pure=True).load(text)


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = shipped()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_shipped_schema_is_the_generated_one() -> None:
    assert shipped() == generate(), "regenerate it: python -m kplan.report.schema"


def test_every_kind_of_document_has_golden_output() -> None:
    kinds = {_load(*_written(p))["kind"] for p in OUTPUTS}
    # SweepResult: tests/integration/test_sweep.py validates the documents kplan sweep writes
    assert kinds == set(DOCUMENTS) - {"SweepResult"}


@pytest.mark.parametrize("path", OUTPUTS, ids=[str(p.relative_to(GOLDEN).parent) for p in OUTPUTS])
def test_every_golden_document_validates(validator: jsonschema.protocols.Validator, path: Path) -> None:
    doc = _load(*_written(path))
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []


@pytest.mark.parametrize("path", OUTPUTS, ids=[str(p.relative_to(GOLDEN).parent) for p in OUTPUTS])
def test_a_document_read_into_its_class_writes_the_same_text(path: Path) -> None:
    fmt, text = _written(path)
    data = _load(fmt, text)
    typed = decode(DOCUMENTS[data["kind"]], data)
    assert (to_json if fmt == "json" else to_yaml)(encode(typed)) == text


def _first_node(doc: dict[str, Any]) -> dict[str, Any]:
    node: dict[str, Any] = doc["nodes"][0]
    return node


BROKEN = [
    ("a member it does not declare", lambda d: d["summary"].update(unknown=1), "Additional properties"),
    ("a missing member", lambda d: d["summary"].pop("pending"), "'pending' is a required property"),
    ("a count written as text", lambda d: d["summary"].update(nodes="6"), "is not of type 'integer'"),
    ("a quantity that is not one", lambda d: _first_node(d)["allocatable"].update(cpu="four"), "does not match"),
    ("a status no pod has", lambda d: d["pods"][0].update(status="Running"), "is not one of"),
    ("another kind", lambda d: d.update(kind="Simulation"), "is not valid under any of the given schemas"),
]


@pytest.mark.parametrize(("change", "says"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN])
def test_the_schema_rejects_a_broken_document(validator: jsonschema.protocols.Validator, change: Any,
                                              says: str) -> None:
    doc = copy.deepcopy(_load(*_written(GOLDEN / "simulate-json" / "stdout")))
    validator.validate(doc)
    change(doc)
    with pytest.raises(jsonschema.ValidationError) as e:
        validator.validate(doc)
    assert says in str(e.value) or any(says in str(c.message) for c in e.value.context)


def test_every_golden_document_names_the_release_it_modelled() -> None:
    """issue 36: the release and its gates changed from the defaults are in every document."""
    for path in OUTPUTS:
        doc = _load(*_written(path))
        assert doc["release"] == {"version": "1.34", "featureGates": {}}, path
        if doc["kind"] == "WhatIfResult":
            assert "release" not in doc["before"] and "release" not in doc["after"]


def test_the_release_is_written_with_the_gates_changed_from_its_defaults() -> None:
    from kplan.framework.features import Features
    from kplan.framework.release import Release
    from kplan.report.document import ReleaseInfo

    base = Release.of("1.34")
    changed = Release.with_features(base.version, Features.of(base.gates, {"StorageCapacityScoring": True,
                                                            "DRAAdminAccess": False}))
    info = ReleaseInfo.of(changed)
    assert encode(info) == {"version": "1.34", "featureGates": {"DRAAdminAccess": False, "StorageCapacityScoring": True}}
    assert info.words == "Kubernetes 1.34 (DRAAdminAccess=false,StorageCapacityScoring=true)"
    assert ReleaseInfo.of(base).words == "Kubernetes 1.34 (default feature gates)"
