"""The releases a benchmark runs at: ``--kube-version`` (repeatable, or comma-separated), by
default every release kplan models, in turn, so that one release's rule cannot slow a workload
unseen (issue 44: 1.36's NodeDeclaredFeatures closed preemption's fast path, and the preemption
benchmark, run at 1.34 only, did not show it)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def modelled() -> tuple[str, ...]:
    """Every release kplan models, oldest first (``1.34``, ...)."""
    from kplan.framework.release_tables import RELEASES

    return tuple(str(v) for v in RELEASES)


def add_release_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--kube-version", action="append", default=[], metavar="VERSION[,VERSION...]",
                    help="the Kubernetes release(s) kplan models, repeatable or comma-separated "
                         "(default: every modelled release in turn)")


def releases(asked: Sequence[str]) -> list[str]:
    """The releases of ``--kube-version`` values ``asked``, in the order given; every modelled
    release when none."""
    out = [v.strip() for value in asked for v in value.split(",") if v.strip()]
    return out or list(modelled())


def banner(release: str) -> str:
    """The line a benchmark prints before its figures at ``release``."""
    return f"=== --kube-version {release}"
