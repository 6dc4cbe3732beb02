"""Writing a snapshot: one ``kind: List`` document, JSON by default, YAML for *.yaml / *.yml,
gzip-compressed when the name ends in .gz (snapshot.json.gz, snapshot.yaml.gz).

The file is written to a temporary file in the same folder and renamed over the target, so an
interrupted run never leaves half a snapshot behind. An existing file is replaced only when asked.
The items arrive as JSON text, one object each (``kplan.io.kube`` keeps them so); JSON output
writes them one per line, and ``kplan.io.manifests`` reads the file back with one json.loads.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import IO, Any

from kplan.errors import InputError, OutputError


def is_yaml(path: str) -> bool:
    name = path[:-3] if path.endswith(".gz") else path
    return name.endswith((".yaml", ".yml"))


def check_target(path: str, force: bool) -> None:
    """Fail before any cluster is read when the snapshot could not be written anyway."""
    folder = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{path}: no such folder {folder}")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder; give a file name")
    if os.path.exists(path) and not os.path.isfile(path):
        # the snapshot is renamed over its target: a device, a pipe or /dev/stdout would be replaced
        raise InputError(f"{path}: not a regular file; give a file name, or no --output-file for stdout")
    if os.path.exists(path) and not force:
        raise InputError(f"{path}: the file exists; give --force to replace it")


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
    check_target(path, force)
    # a symbolic link stays one: the file it points to is replaced, in that file's folder
    real = os.path.realpath(path)
    folder = os.path.dirname(real)
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(real)}.", suffix=".part", dir=folder)
        with os.fdopen(fd, "wb") as raw:
            gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) \
                if path.endswith(".gz") else None
            # level 6 (gzip's own default): level 9 is several times slower for a few % less
            text = io.TextIOWrapper(gz if gz is not None else raw, encoding="utf-8")
            writer(head, items, text)
            text.detach()  # flushes without closing what it wraps
            if gz is not None:
                gz.close()  # writes the gzip trailer; leaves raw open
            raw.flush()
            os.fsync(raw.fileno())
        # mkstemp makes the file private; give it the mode any new file of this user gets
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if os.path.exists(real) and not force:
            raise InputError(f"{path}: the file appeared while the snapshot was taken; give --force to replace it")
        os.replace(tmp, real)
    except BaseException as e:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(e, OSError):
            raise OutputError(f"{path}: cannot write the snapshot: {e.strerror or e}") from None
        raise
