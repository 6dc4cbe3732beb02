"""The differential runner's oracle cache: answers are found again only for the same oracle
binary and the same scenario files, and a cached answer spares the oracle run."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.fidelity.differential import Differ, OracleCache
from tests.fidelity.generate import generate


def _binary(folder: Path, body: str) -> Path:
    path = folder / "oracle"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_answers_are_keyed_by_binary_and_scenario(tmp_path: Path) -> None:
    binary = _binary(tmp_path, "exit 1")
    one = generate(7, nodes=3).write(tmp_path / "one")
    two = generate(8, nodes=3).write(tmp_path / "two")
    cache = OracleCache(tmp_path / "cache", binary)
    answer = {"pods": [{"namespace": "default", "name": "p", "status": "Scheduled", "node": "n1",
                        "message": None}], "preempted": []}
    assert cache.get(one) is None
    cache.put(one, answer)
    assert cache.get(one) == answer
    assert cache.get(two) is None
    other_binary = OracleCache(tmp_path / "cache", _binary(tmp_path / "one", "exit 2"))
    assert other_binary.get(one) is None


def test_a_cached_answer_spares_the_oracle(tmp_path: Path) -> None:
    # the "oracle" fails if it is run at all: the answer must come from the cache
    binary = _binary(tmp_path, "echo ran >&2; exit 9")
    scenario = generate(11, nodes=3)
    cache = OracleCache(tmp_path / "cache", binary)
    differ = Differ(binary, None, timeout=60, release="1.34", cache=cache)
    folder = scenario.write(tmp_path / "probe")
    planted = {"pods": [], "preempted": ["default/planted"]}
    cache.put(folder, planted)
    want, got, _, _ = differ.results(scenario)
    assert want == planted
    assert "pods" in got
