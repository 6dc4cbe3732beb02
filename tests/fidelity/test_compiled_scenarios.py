"""Every public conformance scenario at every modelled release, through the compiled cycle and
through the per-plugin Python alone (KPLAN_KERNEL=python): kplan's whole ``-o json`` document
(placements, messages, nominations, victims, events) must be the same, with the oracle's
lowest-name tie-break and with the random one. tests/unit/scheduler/test_compiled.py does the
same on generated clusters; the expected-results tests compare the kernel's answers with the
real scheduler's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kplan.scheduler.compiled as compiled
from kplan.framework.release_tables import RELEASES
from tests.conformance.locate import location
from tests.fidelity.runners import _kplan_in_process, kplan_args

CONFORMANCE = location()
SCENARIOS = sorted(p.name for p in CONFORMANCE.iterdir() if (p / "pods.yaml").is_file()) if CONFORMANCE.is_dir() else []
VERSIONS = sorted(str(v) for v in RELEASES)

pytestmark = pytest.mark.skipif(compiled._kernel is None, reason="kplan._kernel is not built (tools/build_kernel.sh)")


def document(args: list[str], kernel: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    if kernel:
        monkeypatch.delenv("KPLAN_KERNEL", raising=False)
    else:
        monkeypatch.setenv("KPLAN_KERNEL", "python")
    out, err, code = _kplan_in_process(args)
    assert code in (0, 1), err
    doc = json.loads(out)
    doc.pop("timing", None)
    return code, doc


@pytest.mark.parametrize("release", VERSIONS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_kernel_and_the_python_path_agree_on_the_public_scenarios(scenario: str, release: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    folder = Path(CONFORMANCE / scenario)
    args = kplan_args(folder, release)
    random = [a if a != "lowest-name" else "random" for a in args] + ["--seed", "5"]
    for variant in (args, random):
        assert document(variant, True, monkeypatch) == document(variant, False, monkeypatch)
