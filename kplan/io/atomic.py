"""Writing a file atomically: into a temporary file of the same folder, renamed over the target once
complete, so that an interrupted or failed run never leaves half a file behind (a snapshot, a
report written with ``--output-file``). gzip-compressed when the name ends in .gz."""

from __future__ import annotations

import gzip
import io
import os
import tempfile
from collections.abc import Callable
from typing import IO

from kplan.errors import InputError, OutputError


def check_target(path: str, force: bool) -> None:
    """Fail before the work when the file could not be written anyway: a missing folder, a folder,
    something that is not a regular file (a device, a pipe or /dev/stdout would be replaced by the
    rename), or, without ``force``, a file that exists."""
    folder = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{path}: no such folder {folder}")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder; give a file name")
    if os.path.exists(path) and not os.path.isfile(path):
        raise InputError(f"{path}: not a regular file; give a file name, or no --output-file for stdout")
    if os.path.exists(path) and not force:
        raise InputError(f"{path}: the file exists; give --force to replace it")


def write_atomically(path: str, write: Callable[[IO[str]], object], *, force: bool, what: str) -> None:
    """Call ``write`` with a UTF-8 text stream and put what it wrote at ``path`` in one rename. A
    symbolic link stays one: the file it points to is replaced, in that file's folder. An OSError
    (a full disk, no permission) is an OutputError naming ``what`` could not be written."""
    check_target(path, force)
    real = os.path.realpath(path)
    folder = os.path.dirname(real)
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(real)}.", suffix=".part", dir=folder)
        with os.fdopen(fd, "wb") as raw:
            # level 6 (gzip's own default): level 9 is several times slower for a few % less
            gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) \
                if path.endswith(".gz") else None
            text = io.TextIOWrapper(gz if gz is not None else raw, encoding="utf-8")
            write(text)
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
            raise InputError(f"{path}: the file appeared while the {what} was written; give --force to replace it")
        os.replace(tmp, real)
    except BaseException as e:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(e, OSError):
            raise OutputError(f"{path}: cannot write the {what}: {e.strerror or e}") from None
        raise
