"""What the commands share before loading: where the cluster's objects come from, and warnings.

Loading itself is kplan.io.workspace, the same for every command."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kplan.io.manifests import iter_objects
from kplan.model.raw import RawObject


def print_warnings(warnings: Sequence[str], quiet: bool = False) -> None:
    """Each warning as one line on stderr; none with --quiet."""
    from kplan.cli.terminal import print_warnings as show

    show(warnings, quiet)


def cluster_objects(cluster: Sequence[str], kubeconfig: str | None = None, context: str | None = None,
                    progress: bool = True) -> tuple[Iterable[RawObject], list[str], str | None]:
    """The cluster's objects, warnings and API server version (if stated): from the --cluster files, or else read from the live
    cluster (--kubeconfig/--context, $KUBECONFIG, ~/.kube/config or in-cluster) into memory.
    Live objects are decoded one at a time as they are iterated, so only their compact JSON text
    and the parsed model are ever held, never 150,000 pods as dicts."""
    from kplan.errors import InputError

    if cluster:
        if kubeconfig is not None or context is not None:
            raise InputError("--cluster reads a snapshot file; --kubeconfig/--context read a live cluster: "
                             "give one or the other")
        from kplan.io.cluster_version import snapshot_version

        v = snapshot_version(cluster)
        return iter_objects(cluster, cluster=True), [], None if v is None else str(v)
    from kplan.cli.progress import list_progress
    from kplan.io.kube import NoClusterConfigured, snapshot

    try:
        with list_progress(progress) as sink:
            cap = snapshot(kubeconfig, context, progress=sink)
    except NoClusterConfigured as e:
        raise NoClusterConfigured(f"{e}; give --cluster FILE to work offline") from None
    return cap.raw_objects(), cap.warnings, cap.server_version
