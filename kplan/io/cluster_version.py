"""The Kubernetes release a run models: ``--kube-version`` if given, else what the cluster input states.

What the input states, most trusted first:

- a ``kplan snapshot`` file or a live cluster: the API server's version (the snapshot's
  ``kplan.dev/server-version`` annotation, from the read-only GET /version);
- a ``kubectl cluster-info dump`` or node list: the nodes' ``status.nodeInfo.kubeletVersion``, a
  hint only: the control plane is at least as new as the newest kubelet (version skew policy);
- nothing: the newest modelled release.

A stated release kplan does not model gives one warning naming it and the release used instead,
never an error; a ``--kube-version`` kplan does not model is an error (ConfigError, exit 2).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from kplan.errors import ConfigError
from kplan.framework.release import KubeVersion, Release
from kplan.framework.release_tables import DEFAULT_RELEASE, RELEASES
from kplan.io.kube import ANNOTATION_PREFIX
from kplan.model.raw import RawObject

__all__ = ["Stated", "KubeletVersions", "choose_release", "modelled_releases", "snapshot_version"]

#: how much of a snapshot file's start is read for its List head (kplan writes the head first)
_HEAD_BYTES = 64 * 1024
_SERVER_VERSION = re.compile(re.escape(ANNOTATION_PREFIX + "server-version") + r"""["']?\s*:\s*["']?([^"'\s,}]+)""")


def modelled_releases() -> list[KubeVersion]:
    """The releases kplan models, oldest first."""
    return sorted(RELEASES)


@dataclass(frozen=True)
class Stated:
    """A Kubernetes version the cluster input states, and how much it says."""

    version: KubeVersion
    #: True: the API server's own version; False: the newest kubelet's (a lower bound)
    server: bool

    def words(self) -> str:
        if self.server:
            return f"the cluster runs Kubernetes {self.version}"
        return f"the cluster's newest kubelet runs Kubernetes {self.version} (its control plane is that or newer)"


def _version_or_none(text: str) -> KubeVersion | None:
    # "v1.31.13-eks-1234": the minor release is what is modelled
    m = re.match(r"v?(\d+)\.(\d+)", text.strip())
    return KubeVersion(int(m.group(1)), int(m.group(2))) if m else None


def snapshot_version(paths: Sequence[str]) -> KubeVersion | None:
    """The API server version a ``kplan snapshot`` file records (the first file that records one;
    folders, stdin and files without the annotation record none)."""
    import os

    for path in paths:
        if path == "-" or not os.path.isfile(path):
            continue
        try:
            with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
                head = f.read(_HEAD_BYTES).decode("utf-8", errors="replace")
        except (OSError, EOFError, gzip.BadGzipFile):
            continue  # the loader reports an unreadable file in its own words
        m = _SERVER_VERSION.search(head)
        if m and (v := _version_or_none(m.group(1))) is not None:
            return v
    return None


class KubeletVersions:
    """The cluster's objects passed through unchanged, noting each Node's kubelet version on the way."""

    def __init__(self, objects: Iterable[RawObject]) -> None:
        self.objects = objects
        self.newest: KubeVersion | None = None

    def __iter__(self) -> Iterator[RawObject]:
        for obj in self.objects:
            if obj.doc.get("kind") == "Node":
                info = (obj.doc.get("status") or {}).get("nodeInfo") or {}
                text = info.get("kubeletVersion") if isinstance(info, dict) else None
                v = _version_or_none(text) if isinstance(text, str) else None
                if v is not None and (self.newest is None or self.newest < v):
                    self.newest = v
            yield obj


def stated(server_version: str | KubeVersion | None, newest_kubelet: KubeVersion | None) -> Stated | None:
    """What the input states: the server's version if known, else the newest kubelet's."""
    server = _version_or_none(server_version) if isinstance(server_version, str) else server_version
    if server is not None:
        return Stated(server, server=True)
    return Stated(newest_kubelet, server=False) if newest_kubelet is not None else None


def _nearest(s: Stated, modelled: Sequence[KubeVersion]) -> KubeVersion:
    """The modelled release closest to what is stated: for a server version, the newest modelled
    one not newer than it (else the oldest); for a kubelet's lower bound, the oldest modelled one
    not older than it (else the newest)."""
    if s.server:
        older = [v for v in modelled if v <= s.version]
        return older[-1] if older else modelled[0]
    newer = [v for v in modelled if v >= s.version]
    return newer[0] if newer else modelled[-1]


def choose_release(kube_version: str | None, feature_gates: str, input_states: Stated | None
                   ) -> tuple[Release, list[str]]:
    """The release of the run and its warnings: ``--kube-version`` (a release kplan does not
    model: ConfigError), else what the input states, else the default release (DEFAULT_RELEASE); with
    ``--feature-gates`` applied (checked against the release's gates in kube-scheduler's words)."""
    modelled = modelled_releases()
    warnings: list[str] = []
    if kube_version is not None:
        version = KubeVersion.parse(kube_version)
        if version not in modelled:
            raise ConfigError(f"--kube-version {kube_version}: kplan models kube-scheduler "
                              f"{', '.join(map(str, modelled))} only")
        patch = RELEASES[version].scheduler_version if version in RELEASES else None
        given = kube_version.strip()
        if patch is not None and given.lstrip("v").count(".") >= 2 and "v" + given.lstrip("v") != patch:
            # the patch level is not modelled apart: say once which patch release the results are
            warnings.append(f"--kube-version {given}: kplan models {version} as kube-scheduler {patch}; the "
                            f"results are {patch}'s")
    elif input_states is None:
        version = DEFAULT_RELEASE
    elif input_states.server and input_states.version in modelled:
        version = input_states.version
    else:
        version = _nearest(input_states, modelled)
        if input_states.server or input_states.version != version:
            warnings.append(f"{input_states.words()}; kplan models kube-scheduler {version}, the results are "
                            f"{version}'s")
    try:
        return Release.of(version, feature_gates), warnings
    except ConfigError as e:
        raise ConfigError(f'invalid argument "{feature_gates}" for "--feature-gates" flag: {e}') from None
