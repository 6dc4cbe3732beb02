"""Output renderers: ``-o`` name → a pure function of the result."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kplan.errors import InputError
from kplan.scheduler.simulate import SimulationResult


def to_json(doc: Any) -> str:
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def to_yaml(doc: Any) -> str:
    import io

    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=True)
    y.default_flow_style = False
    y.sort_base_mapping_type_on_output = False  # type: ignore[attr-defined]
    buf = io.StringIO()
    y.dump(doc, buf)
    return buf.getvalue()


def _table(result: SimulationResult, timing: dict[str, float] | None) -> str:
    from kplan.cli.render.table import simulation_table
    return simulation_table(result, wide=False)


def _wide(result: SimulationResult, timing: dict[str, float] | None) -> str:
    from kplan.cli.render.table import simulation_table
    return simulation_table(result, wide=True)


def _json(result: SimulationResult, timing: dict[str, float] | None) -> str:
    from kplan.report.document import simulation_document
    return to_json(simulation_document(result, timing))


def _yaml(result: SimulationResult, timing: dict[str, float] | None) -> str:
    from kplan.report.document import simulation_document
    return to_yaml(simulation_document(result, timing))


SIMULATION_RENDERERS: dict[str, Callable[[SimulationResult, dict[str, float] | None], str]] = {
    "table": _table,
    "wide": _wide,
    "json": _json,
    "yaml": _yaml,
}


def render_simulation(result: SimulationResult, output: str, timing: dict[str, float] | None = None) -> str:
    fn = SIMULATION_RENDERERS.get(output)
    if fn is None:
        raise InputError(f"--output: unknown format {output!r}; choose one of {', '.join(SIMULATION_RENDERERS)}")
    return fn(result, timing)
