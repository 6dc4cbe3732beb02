"""completions/ holds what ``kplan completion SHELL`` prints (typer's scripts); a stale file fails
here. ``KPLAN_UPDATE_GOLDEN=1`` rewrites them. The scripts' callback (kplan itself, with
_KPLAN_COMPLETE set) answers with commands, options, choices and -o formats."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kplan.cli.completion import FILES, completion_script

ROOT = Path(__file__).resolve().parents[3]
UPDATE = os.environ.get("KPLAN_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("shell", sorted(FILES))
def test_the_committed_script_is_what_kplan_generates(shell: str) -> None:
    path = ROOT / "completions" / FILES[shell]
    script = completion_script(shell)
    if UPDATE:
        path.write_text(script)
    assert path.read_text() == script, (f"completions/{FILES[shell]} is out of date: run "
                                        f"'kplan completion {shell} > completions/{FILES[shell]}' or "
                                        "KPLAN_UPDATE_GOLDEN=1 python -m pytest tests/unit/cli/test_completions.py")


def test_the_zsh_script_starts_with_compdef() -> None:
    assert completion_script("zsh").startswith("#compdef kplan\n")


def _complete_bash(words: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "_KPLAN_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
    proc = subprocess.run([sys.executable, "-m", "kplan"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.parametrize(("words", "expected"), [
    ("kplan ", ["simulate", "explain", "whatif", "capacity", "sweep", "snapshot", "completion"]),
    ("kplan sim", ["simulate"]),
    ("kplan simulate --fail", ["--fail-on"]),
    ("kplan simulate --fail-on ", ["unschedulable", "preemption", "never"]),
    ("kplan whatif --fail-on ", ["unschedulable", "preemption", "newly-unschedulable", "never"]),
    ("kplan simulate -o ", ["table", "wide", "json", "yaml", "name", "junit", "github", "markdown", "html",
                            "jsonpath="]),
    ("kplan simulate -o j", ["json", "junit", "jsonpath="]),
    ("kplan whatif -o ", ["table", "json", "yaml", "name", "junit", "github", "markdown", "html", "jsonpath="]),
    ("kplan capacity -o ", ["table", "json", "yaml", "name", "html", "jsonpath="]),
    ("kplan sweep -o ", ["table", "json", "yaml", "markdown", "html", "jsonpath="]),
    ("kplan completion ", ["bash", "zsh", "fish"]),
    ("kplan capacity --autoscaler ", ["cluster-autoscaler", "karpenter"]),
    ("kplan sweep --inst", ["--instance-types"]),
], ids=["commands", "a command's prefix", "an option's prefix", "a choice", "whatif's choices", "simulate's formats",
        "formats by prefix", "whatif's formats", "capacity's formats", "sweep's formats", "shells",
        "the autoscalers", "the catalog option"])
def test_the_callback_completes(words: str, expected: list[str]) -> None:
    got = _complete_bash(words)
    assert sorted(w for w in got if not w.startswith("-") or expected[0].startswith("-")) == sorted(expected)
