"""The conformance suite is found one way, and is required whenever KPLAN_CONFORMANCE is set."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance import locate


def test_a_set_variable_that_names_a_missing_folder_fails_instead_of_skipping(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(locate.VARIABLE, str(tmp_path / "missing"))
    with pytest.raises(pytest.fail.Exception, match="no conformance suite"):
        locate.require()


def test_without_the_variable_a_missing_suite_skips(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(locate.VARIABLE, raising=False)
    monkeypatch.setattr(locate, "ROOT", tmp_path / "clone")
    with pytest.raises(pytest.skip.Exception):
        locate.require()


def test_a_relative_variable_is_taken_from_the_repository_root(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    (tmp_path / "shared" / "conformance").mkdir(parents=True)
    (tmp_path / "shared" / "conformance" / "check.py").write_text("")
    monkeypatch.setattr(locate, "ROOT", tmp_path / "clone")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(locate.VARIABLE, "../shared/conformance")
    assert locate.require() == tmp_path / "shared" / "conformance"


def test_without_the_variable_the_suite_beside_the_repository_root_is_used(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path: Path) -> None:
    monkeypatch.delenv(locate.VARIABLE, raising=False)
    monkeypatch.setattr(locate, "ROOT", tmp_path / "clone")
    assert locate.location() == tmp_path / "shared" / "conformance"
