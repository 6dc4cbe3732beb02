"""Running the Karpenter oracle (oracle/karpenter/README.md) on a scenario folder.

A scenario folder holds Kubernetes object files (``*.yaml``/``*.yml``, and ``*.json`` other than
the two below), the instance-type catalog ``catalog.json``, optionally ``options.json``
(``{"preferencePolicy": "Ignore", "minValuesPolicy": "BestEffort"}``) and the oracle's result
``expected.json``. Object files are passed in name order.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
#: names the oracle binary; when set, tests that need it fail instead of skipping
VARIABLE = "KPLAN_KARPENTER_ORACLE"
DEFAULT = ROOT / "oracle" / "bin" / "karpenter-oracle"
CATALOG = "catalog.json"
EXPECTED = "expected.json"
OPTIONS = "options.json"
NOT_OBJECTS = {CATALOG, EXPECTED, OPTIONS, "kplan.json", "differences.txt"}


class OracleError(Exception):
    """The oracle exited with an error (the message is its stderr)."""


def configured() -> str | None:
    return os.environ.get(VARIABLE) or None


def oracle_path() -> Path:
    """The binary KPLAN_KARPENTER_ORACLE names (relative paths from the repository root), else
    oracle/bin/karpenter-oracle."""
    value = configured()
    path = Path(value) if value else DEFAULT
    return path if path.is_absolute() else ROOT / path


def object_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()
                  if p.suffix in (".yaml", ".yml", ".json") and p.name not in NOT_OBJECTS)


def options(folder: Path) -> dict[str, Any]:
    path = folder / OPTIONS
    return json.loads(path.read_text()) if path.is_file() else {}


def command(binary: Path, folder: Path) -> list[str]:
    cmd = [str(binary), "provision", "--instance-types", str(folder / CATALOG), "--compact"]
    for f in object_files(folder):
        cmd += ["--cluster", str(f)]
    opts = options(folder)
    if "preferencePolicy" in opts:
        cmd += ["--preference-policy", opts["preferencePolicy"]]
    if "minValuesPolicy" in opts:
        cmd += ["--min-values-policy", opts["minValuesPolicy"]]
    return cmd


def run_oracle(binary: Path, folder: Path, timeout: float = 300) -> dict[str, Any]:
    """The oracle's JSON for the scenario in ``folder``."""
    env = {k: v for k, v in os.environ.items() if k != "ORACLE_VERBOSE"}
    proc = subprocess.run(command(binary, folder), capture_output=True, text=True, timeout=timeout, env=env,
                          check=False)
    if proc.returncode != 0:
        raise OracleError(proc.stderr.strip() or f"exit status {proc.returncode}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result
