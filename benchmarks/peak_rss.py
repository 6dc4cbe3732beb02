"""Peak RSS of a kplan run in a child process, as the child itself measures it.

A child's ``ru_maxrss`` (getrusage RUSAGE_CHILDREN, or wait4) is not the child's own figure: on
Linux, exec carries the high-water mark of the address space it replaces into the new program's
accounting, and that address space is the parent's (subprocess starts children with vfork or
fork). A benchmark whose parent holds a generated cluster, or a fake API server, would report
the parent's size. The child therefore reads its own high-water mark at exit: ``VmHWM`` of
/proc/self/status belongs to the address space exec created. Elsewhere it falls back to
``ru_maxrss``.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
from collections.abc import Sequence

# runs ``python -m kplan ARGS`` and writes its peak RSS in bytes to the file named first
_WRAPPER = """\
import atexit, runpy, sys
from benchmarks.peak_rss import own_peak_rss
report, sys.argv = sys.argv[1], ["kplan", *sys.argv[2:]]
atexit.register(lambda: open(report, "w").write(str(own_peak_rss())))
runpy.run_module("kplan", run_name="__main__", alter_sys=True)
"""


def own_peak_rss() -> int:
    """This process's peak resident set size in bytes."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


class MeasuredKplan:
    """The command line of a measured ``python -m kplan ARGS`` run, and its figure once it ended."""

    def __init__(self, args: Sequence[str]) -> None:
        fd, self.report = tempfile.mkstemp(prefix="kplan-rss-")
        os.close(fd)
        self.argv = [sys.executable, "-c", _WRAPPER, self.report, *args]

    def peak_rss(self) -> int:
        """Bytes; 0 if the run ended before it could write the figure."""
        try:
            with open(self.report) as fh:
                text = fh.read().strip()
            return int(text) if text else 0
        finally:
            os.unlink(self.report)
