"""Run a scenario folder through kplan and through the oracle; both give expected.json's shape.

kplan runs as the conformance checker runs it (``kplan simulate pods.yaml --cluster cluster.yaml
--scheduler-config scheduler-config.yaml --tie-break lowest-name -o json``), in this process by
default (the CLI's own ``main`` with its output captured: no interpreter start per run) or as a
command. The oracle runs in the contract's serial mode with ``ORACLE_TIE_BREAK=lowest-name``,
``ORACLE_PATCH_RV=1`` and ``ORACLE_REAL_BACKOFF=1``, the settings every expected.json came from.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

from tests.fidelity.scenario import Doc

ROOT = Path(__file__).resolve().parents[2]
ORACLE_ENV = {"ORACLE_TIE_BREAK": "lowest-name", "ORACLE_PATCH_RV": "1", "ORACLE_REAL_BACKOFF": "1"}


class RunError(Exception):
    """A run that gave no result (a crash, an error exit, unreadable output, a timeout)."""


#: the build a release's results come from when it is there: 1.34's is v1.34.0, which has the
#: message texts of v1.34.1 (the conformance suite's release; v1.34.2 changed TaintToleration's)
PREFERRED_BUILD = {"1.34": "1.34.0"}


def oracle_path(release: str) -> Path:
    """``oracle/bin/kube-scheduler-oracle-<release>``, or the release's preferred build if built."""
    bins = ROOT / "oracle" / "bin"
    preferred = PREFERRED_BUILD.get(release)
    if preferred and (bins / f"kube-scheduler-oracle-{preferred}").is_file():
        return bins / f"kube-scheduler-oracle-{preferred}"
    return bins / f"kube-scheduler-oracle-{release}"


def oracle_version(binary: Path) -> str:
    """What ``binary version`` says (release and k8s.io/kubernetes module), or its file name."""
    try:
        run = subprocess.run([str(binary), "version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return binary.name
    return run.stdout.strip() if run.returncode == 0 and run.stdout.strip() else binary.name


def feature_gates(folder: Path) -> str:
    """The folder's ``feature-gates`` file (``Gate=false,...``, kube-scheduler's syntax), or ""."""
    f = folder / "feature-gates"
    return f.read_text().strip() if f.is_file() else ""


def kplan_args(folder: Path, release: str | None = None) -> list[str]:
    """kplan's command line for ``folder``; with ``release``, ``--kube-version release`` (else kplan
    models what the scenario states, or its newest release); with a ``feature-gates`` file, its
    gates as ``--feature-gates``."""
    gates = feature_gates(folder)
    return ["simulate", str(folder / "pods.yaml"), "--cluster", str(folder / "cluster.yaml"),
            "--scheduler-config", str(folder / "scheduler-config.yaml"), "--tie-break", "lowest-name",
            "-o", "json", "-q", *(["--kube-version", release] if release else []),
            *(["--feature-gates", gates] if gates else [])]


def run_kplan(folder: Path, command: str | None = None, timeout: float = 600, release: str | None = None) -> Doc:
    """kplan's result on ``folder`` as kube-scheduler ``release`` (None: kplan's choice): in-process,
    or with ``command`` (e.g. ``kplan``) as a subprocess."""
    args = kplan_args(folder, release)
    if command:
        try:
            run = subprocess.run([*shlex.split(command), *args], capture_output=True, text=True,
                                 timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise RunError(f"kplan: no answer in {timeout:.0f} s") from e
        out, err, code = run.stdout, run.stderr, run.returncode
    else:
        out, err, code = _kplan_in_process(args)
    if code not in (0, 1):
        raise RunError(f"kplan exit {code}: {err.strip()[-600:]}")
    try:
        doc = json.loads(out)
    except json.JSONDecodeError as e:
        raise RunError(f"kplan: unreadable output (exit {code}): {e}; {err.strip()[-300:]}") from e
    pods = [_as_the_oracle_reports({"namespace": p.get("namespace") or "default", "name": p["name"],
                                    "status": p.get("status"), "node": p.get("node"), "message": p.get("message")})
            for p in doc.get("pods", [])]
    preempted = sorted(v if isinstance(v, str) else f"{v.get('namespace') or 'default'}/{v['name']}"
                       for v in doc.get("preempted") or [])
    return {"pods": pods, "preempted": preempted}


def _as_the_oracle_reports(pod: Doc) -> Doc:
    """A pod kplan reports ``Gated`` (a PreEnqueue plugin held it; kplan says why) as the oracle
    reports it: Unschedulable without a message (oracle contract: kube-scheduler writes no
    PodScheduled condition for a pod it never attempted)."""
    if pod["status"] != "Gated":
        return pod
    return {**pod, "status": "Unschedulable", "message": None}


def _kplan_in_process(args: list[str]) -> tuple[str, str, int]:
    from kplan.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as e:
            code = e.code
    return out.getvalue(), err.getvalue(), code if isinstance(code, int) else (0 if code is None else 2)


def run_oracle(folder: Path, binary: Path, timeout: float = 900, extra_env: dict[str, str] | None = None) -> Doc:
    """The oracle's result on ``folder``, as expected.json has it (with the folder's
    ``feature-gates`` as ORACLE_FEATURE_GATES)."""
    cmd = [str(binary), "replay", "--serial", "--cluster", str(folder / "cluster.yaml"),
           "--cluster", str(folder / "pods.yaml"), "--config", str(folder / "scheduler-config.yaml"), "--compact"]
    gates = feature_gates(folder)
    env = {**os.environ, **ORACLE_ENV, **({"ORACLE_FEATURE_GATES": gates} if gates else {}), **(extra_env or {})}
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        raise RunError(f"oracle: no answer in {timeout:.0f} s") from e
    if run.returncode != 0:
        raise RunError(f"oracle exit {run.returncode}: {run.stderr.strip()[-600:]}")
    try:
        doc = json.loads(run.stdout)
    except json.JSONDecodeError as e:
        raise RunError(f"oracle: unreadable output: {e}; {run.stderr.strip()[-300:]}") from e
    return oracle_result(doc)


def oracle_result(doc: Doc) -> Doc:
    """expected.json's ``pods`` and ``preempted`` from the oracle's output (the contract's rule:
    Scheduled when node is set, else Unschedulable with message = fit_error; victims sorted)."""
    pods = []
    for p in doc.get("pods") or []:
        ref = p.get("pod") or ""
        ns, _, name = ref.partition("/") if "/" in ref else ("default", "", ref)
        node = p.get("node") or None
        pods.append({"namespace": ns, "name": name, "status": "Scheduled" if node else "Unschedulable",
                     "node": node, "message": None if node else p.get("fit_error")})
    preempted = sorted(v if isinstance(v, str) else f"{v.get('namespace') or 'default'}/{v['name']}"
                       for v in doc.get("preempted") or [])
    return {"pods": pods, "preempted": preempted}
