"""Writing a snapshot: one ``kind: List`` document, JSON by default, YAML for *.yaml / *.yml,
gzip-compressed when the name ends in .gz (snapshot.json.gz, snapshot.yaml.gz).

The file is written to a temporary file in the same folder and renamed over the target, so an
interrupted run never leaves half a snapshot behind. An existing file is replaced only when asked.
JSON is written one object per line, each encoded by the C encoder (json.dump would walk the
whole document in pure Python, several times slower at 150,000 pods); ``kplan.io.manifests``
reads it back with one json.loads.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable
from typing import IO, Any

from kplan.errors import InputError, KplanError


def is_yaml(path: str) -> bool:
    name = path[:-3] if path.endswith(".gz") else path
    return name.endswith((".yaml", ".yml"))


def check_target(path: str, force: bool) -> None:
    """Fail before any cluster is read when the snapshot could not be written anyway."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{path}: no such folder {folder}")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder; give a file name")
    if os.path.exists(path) and not force:
        raise InputError(f"{path}: the file exists; give --force to replace it")


def write_json(doc: dict[str, Any], out: IO[str]) -> None:
    head = {k: v for k, v in doc.items() if k != "items"}
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    out.write(dumps(head)[:-1])
    out.write(',"items":[')
    for i, item in enumerate(doc.get("items") or []):
        out.write(",\n" if i else "\n")
        out.write(dumps(item))
    out.write("\n]}\n")


def write_yaml(doc: dict[str, Any], out: IO[str]) -> None:
    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=False)
    y.default_flow_style = False
    y.sort_base_mapping_type_on_output = False  # type: ignore[assignment]  # keep apiVersion, kind, metadata first, as kubectl does
    y.dump(doc, out)


def write_document(doc: dict[str, Any], path: str | None, *, force: bool = False,
                   stdout: IO[str] | None = None) -> None:
    """Write ``doc`` to ``path`` atomically, or as JSON to stdout when ``path`` is None."""
    if path is None or path == "-":
        write_json(doc, stdout or sys.stdout)
        return
    check_target(path, force)
    writer: Callable[[dict[str, Any], IO[str]], None] = write_yaml if is_yaml(path) else write_json
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as raw:
            gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) \
                if path.endswith(".gz") else None
            # level 6 (gzip's own default): level 9 is several times slower for a few % less
            text = io.TextIOWrapper(gz if gz is not None else raw, encoding="utf-8")
            writer(doc, text)
            text.detach()  # flushes without closing what it wraps
            if gz is not None:
                gz.close()  # writes the gzip trailer; leaves raw open
            raw.flush()
            os.fsync(raw.fileno())
        # mkstemp makes the file private; give it the mode any new file of this user gets
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if os.path.exists(path) and not force:
            raise InputError(f"{path}: the file appeared while the snapshot was taken; give --force to replace it")
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise KplanError(f"{path}: cannot write the snapshot: {e.strerror or e}") from None
        raise
