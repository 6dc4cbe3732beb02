"""Where the conformance suite is: the one rule every test that reads it follows.

``KPLAN_CONFORMANCE`` names the folder (a relative path is taken from the repository root, so
``../shared/conformance`` means "beside this clone"); without it, ``../shared/conformance``
beside the repository root. When the variable is set the suite is required: a missing folder
fails the tests that need it instead of skipping them, so a CI run that is meant to check
kplan against the real scheduler cannot go green without doing so.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VARIABLE = "KPLAN_CONFORMANCE"


def location() -> Path:
    configured = os.environ.get(VARIABLE)
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else (ROOT / path).resolve()
    return ROOT.parent / "shared" / "conformance"


def required() -> bool:
    return bool(os.environ.get(VARIABLE))


def present() -> bool:
    return (location() / "check.py").is_file()


def require() -> Path:
    """The suite's folder; fails the calling test when it is required and missing, else skips it."""
    path = location()
    if not present():
        if required():
            pytest.fail(f"{VARIABLE}={os.environ[VARIABLE]}: no conformance suite at {path} (no check.py)")
        pytest.skip(f"no conformance suite at {path}; set {VARIABLE} to require it")
    return path
