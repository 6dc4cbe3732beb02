"""The ``kplan`` console script: ``kplan.cli.app.main``, with Ctrl-C during its imports answered as
everywhere else (``interrupted``, exit code 130) rather than with a traceback of the import."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from kplan.cli.app import main as run
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    run()
