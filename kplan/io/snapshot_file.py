"""Writing a snapshot: one ``kind: List`` document, JSON by default, YAML for *.yaml / *.yml,
gzip-compressed when the name ends in .gz (snapshot.json.gz, snapshot.yaml.gz).

The file is written atomically (kplan.io.atomic: a temporary file in the same folder, renamed over
the target), so an interrupted run never leaves half a snapshot behind. An existing file is
replaced only when asked.

The items arrive as JSON text, one object each (``kplan.io.kube`` keeps them so); JSON output
writes them one per line, and ``kplan.io.manifests`` reads the file back with one json.loads.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

from kplan.io.atomic import check_target, write_atomically

__all__ = ["check_target", "is_yaml", "write_json", "write_snapshot", "write_yaml"]


def is_yaml(path: str) -> bool:
    name = path[:-3] if path.endswith(".gz") else path
    return name.endswith((".yaml", ".yml"))


def write_json(head: dict[str, Any], items: Sequence[str], out: IO[str]) -> None:
    """The document with each item, already JSON text, on a line of its own."""
    out.write(json.dumps(head, ensure_ascii=False, separators=(",", ":"))[:-1])
    out.write(',"items":[')
    # a thousand objects per write: one write call per object costs more than the writing
    for start in range(0, len(items), 1000):
        out.write(",\n" if start else "\n")
        out.write(",\n".join(items[start:start + 1000]))
    out.write("\n]}\n")


def write_yaml(head: dict[str, Any], items: Sequence[str], out: IO[str]) -> None:
    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=False)
    y.default_flow_style = False
    y.sort_base_mapping_type_on_output = False  # type: ignore[assignment]  # apiVersion, kind, metadata first
    y.dump({**head, "items": [json.loads(i) for i in items]}, out)


def write_snapshot(head: dict[str, Any], items: Sequence[str], path: str | None, *, force: bool = False,
                   stdout: IO[str] | None = None, fmt: str | None = None) -> None:
    """Write the List ``head`` with ``items`` (each one object as JSON text) to ``path`` atomically,
    or to stdout when ``path`` is None or '-': as ``fmt`` (json or yaml), by default JSON, or
    what the file name says."""
    yaml = fmt == "yaml" if fmt is not None else path is not None and is_yaml(path)
    writer: Callable[[dict[str, Any], Sequence[str], IO[str]], None] = write_yaml if yaml else write_json
    if path is None or path == "-":
        writer(head, items, stdout or sys.stdout)
        return
    write_atomically(path, lambda out: writer(head, items, out), force=force, what="snapshot")
