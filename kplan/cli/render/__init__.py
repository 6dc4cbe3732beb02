"""Output renderers: one pure function per (document kind, ``-o`` format).

A renderer turns a versioned result document (``kind: SimulationResult``, ``WhatIfResult``, …,
``apiVersion: kplan.dev/v1alpha1``; the typed classes of kplan.report) and the RenderOptions into
the text written to stdout. It
reads nothing else: no environment, no terminal, no clock, so its output is fixed by its input
and can be compared to golden files. The command decides colour and the --fail-on policy and
passes them in.

The registry is written out by hand below; a command that produces a new kind of document
registers its renderers here, and ``-o`` validation, help and shell completion follow. Besides
the registry, every kind takes ``-o jsonpath=TEMPLATE`` (kubectl's JSONPath over its JSON form:
kplan.cli.render.jsonpath).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeAlias

from kplan.errors import InputError
from kplan.report.check import FailOn

if TYPE_CHECKING:
    from kplan.report.capacity import CapacityDocument
    from kplan.report.document import SimulationDocument
    from kplan.report.explain import ExplanationDocument
    from kplan.report.sweep import SweepDocument
    from kplan.report.whatif import WhatIfDocument

#: every kind of result document (kplan.report's typed classes)
Document: TypeAlias = "SimulationDocument | WhatIfDocument | CapacityDocument | SweepDocument | ExplanationDocument"


@dataclass(frozen=True)
class RunInfo:
    """What a report says of the run it comes from, which its document does not carry: the command
    fills it in (kplan.cli.output.run_info), the clock included, so that renderers read no clock."""

    #: the inputs, as (what, value) pairs: ("Cluster", "fixtures/cluster.yaml"), ("Manifests", …)
    inputs: tuple[tuple[str, str], ...] = ()
    #: the seed of the scheduler's random choices (None for a command that has none)
    seed: int | None = None
    #: how equal top scores are broken: "random" (seeded) or "lowest-name"
    tie_break: str | None = None
    #: the release the run modelled, as ReleaseInfo.words says it: "Kubernetes 1.34 (default feature gates)"
    release: str = ""
    #: when the run was made, as a sentence, e.g. "2026-12-05 20:45 UTC"
    made: str = ""


@dataclass(frozen=True)
class RenderOptions:
    #: ANSI colours (the table formats only); the command sets it for a terminal without NO_COLOR
    color: bool = False
    #: the check policy: the CI formats mark what fails it as errors, the rest as warnings
    fail_on: FailOn = FailOn.unschedulable
    #: list everything where a table would otherwise show the first rows only
    full: bool = False
    #: the columns to fit tables and text into (the command sets it for a terminal); None: never wrap
    width: int | None = None
    #: stdout is a terminal: bars drawn with block glyphs (█████░░░░░), which pipes do not get
    terminal: bool = False
    #: the run's inputs, seed, release and date, for the reports that name them (-o html)
    run: RunInfo | None = None


Renderer = Callable[[Any, RenderOptions], str]


def to_json(doc: Any) -> str:
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def to_yaml(doc: Any) -> str:
    import io

    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=True)
    y.default_flow_style = False
    y.sort_base_mapping_type_on_output = False  # type: ignore[assignment]  # keep the document's key order
    buf = io.StringIO()
    y.dump(doc, buf)
    return buf.getvalue()


def _json(doc: Document, opts: RenderOptions) -> str:
    from kplan.report.codec import encode

    return to_json(encode(doc))


def _yaml(doc: Document, opts: RenderOptions) -> str:
    from kplan.report.codec import encode

    return to_yaml(encode(doc))


@dataclass(frozen=True)
class _Lazy:
    """The renderer ``name`` of ``kplan.cli.render.<module>``, imported on its first call."""

    module: str
    name: str

    def resolve(self) -> Renderer:
        found: Renderer = getattr(import_module(f"kplan.cli.render.{self.module}"), self.name)
        return found

    def __call__(self, doc: Any, opts: RenderOptions) -> str:
        return self.resolve()(doc, opts)


@cache
def registry() -> dict[tuple[str, str], Renderer]:
    """(document kind, format) → renderer. Each renderer's module is imported when it first
    renders: a command's start-up (and each shell completion, which runs kplan) pays only for
    what it prints."""
    return {
        ("SimulationResult", "table"): _Lazy("table", "simulation_table"),
        ("SimulationResult", "wide"): _Lazy("table", "simulation_wide"),
        ("SimulationResult", "json"): _json,
        ("SimulationResult", "yaml"): _yaml,
        ("SimulationResult", "name"): _Lazy("names", "simulation_names"),
        ("SimulationResult", "junit"): _Lazy("junit", "simulation_junit"),
        ("SimulationResult", "github"): _Lazy("github", "simulation_github"),
        ("SimulationResult", "markdown"): _Lazy("markdown", "simulation_markdown"),
        ("SimulationResult", "html"): _Lazy("html", "simulation_html"),
        ("WhatIfResult", "table"): _Lazy("whatif", "whatif_table"),
        ("WhatIfResult", "json"): _json,
        ("WhatIfResult", "yaml"): _yaml,
        ("WhatIfResult", "name"): _Lazy("names", "whatif_names"),
        ("WhatIfResult", "junit"): _Lazy("junit", "whatif_junit"),
        ("WhatIfResult", "github"): _Lazy("github", "whatif_github"),
        ("WhatIfResult", "markdown"): _Lazy("markdown", "whatif_markdown"),
        ("WhatIfResult", "html"): _Lazy("html", "whatif_html"),
        ("PodExplanation", "table"): _Lazy("explain", "explanation_table"),
        ("PodExplanation", "json"): _json,
        ("PodExplanation", "yaml"): _yaml,
        ("PodExplanation", "name"): _Lazy("names", "explanation_names"),
        ("PodExplanation", "html"): _Lazy("html", "explain_html"),
        ("CapacityResult", "table"): _Lazy("capacity", "capacity_table"),
        ("CapacityResult", "json"): _json,
        ("CapacityResult", "yaml"): _yaml,
        ("CapacityResult", "name"): _Lazy("names", "capacity_names"),
        ("CapacityResult", "html"): _Lazy("html", "capacity_html"),
        ("SweepResult", "table"): _Lazy("sweep", "sweep_table"),
        ("SweepResult", "json"): _json,
        ("SweepResult", "yaml"): _yaml,
        ("SweepResult", "markdown"): _Lazy("sweep", "sweep_markdown"),
        ("SweepResult", "html"): _Lazy("html", "sweep_html"),
    }


#: ``-o jsonpath=TEMPLATE``, for every kind of document
JSONPATH = "jsonpath="


def formats(kind: str) -> list[str]:
    """The ``-o`` formats of a document kind, in registry order, then ``jsonpath=``."""
    return [fmt for k, fmt in registry() if k == kind] + [JSONPATH]


def jsonpath_template(fmt: str) -> Any:
    """The parsed template of ``jsonpath=TEMPLATE`` (kplan.cli.render.jsonpath.Template)."""
    from kplan.cli.render.jsonpath import JSONPathError, parse

    text = fmt[len(JSONPATH):]
    if not text:
        raise InputError("-o jsonpath: give a template, as kubectl takes it: -o jsonpath='{.pods[*].name}'")
    try:
        return parse(text)
    except JSONPathError as e:
        raise InputError(f"-o jsonpath={text}: {e}") from None


def check_format(kind: str, fmt: str) -> None:
    """Fail on an unknown format, or a JSONPath template that does not parse, before any loading
    (reading a cluster can take minutes)."""
    if fmt.startswith(JSONPATH) or fmt == "jsonpath":
        jsonpath_template(fmt if fmt != "jsonpath" else JSONPATH)
    elif fmt == "name" and (kind, fmt) not in registry():
        raise InputError(f"-o name lists the Kubernetes objects of a result, and a {kind} has none: "
                         f"-o jsonpath=TEMPLATE picks what it needs from the document")
    elif (kind, fmt) not in registry():
        choices = ", ".join(f if f != JSONPATH else JSONPATH + "TEMPLATE" for f in formats(kind))
        raise InputError(f"--output: unknown format {fmt!r}; choose one of {choices}")


def render(doc: Document, fmt: str, opts: RenderOptions | None = None) -> str:
    kind = doc.kind
    check_format(kind, fmt)
    if fmt.startswith(JSONPATH):
        from kplan.cli.render.jsonpath import JSONPathError, execute
        from kplan.report.codec import encode

        try:
            return execute(jsonpath_template(fmt), encode(doc))
        except JSONPathError as e:
            raise InputError(f"-o {fmt}: {e}") from None
    return registry()[(kind, fmt)](doc, opts or RenderOptions())


def format_completer(kind: str) -> Callable[[str], list[str]]:
    """Shell completion of ``-o`` for the commands that print ``kind`` documents."""
    def complete(incomplete: str) -> list[str]:
        return [f for f in formats(kind) if f.startswith(incomplete)]
    return complete
