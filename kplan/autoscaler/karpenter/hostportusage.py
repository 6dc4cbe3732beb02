"""Host ports as Karpenter's scheduler tracks them: sigs.k8s.io/karpenter v1.15.0
pkg/scheduling/hostportusage.go (HostPort.Matches: same protocol and port, and the same IP unless
either is unspecified; a pod never conflicts with itself)."""

from __future__ import annotations

from collections.abc import Sequence

from kplan.model.objects import HostPort, Pod

_UNSPECIFIED = ("", "0.0.0.0", "::")


def _matches(a: HostPort, b: HostPort) -> bool:
    if a.protocol != b.protocol or a.port != b.port:
        return False
    return a.ip == b.ip or a.ip in _UNSPECIFIED or b.ip in _UNSPECIFIED


class HostPortUsage:
    """The host ports reserved on one node, by the pod (namespace/name) that holds them."""

    __slots__ = ("reserved",)

    def __init__(self, reserved: dict[str, tuple[HostPort, ...]] | None = None) -> None:
        self.reserved: dict[str, tuple[HostPort, ...]] = dict(reserved or {})

    def copy(self) -> HostPortUsage:
        return HostPortUsage(self.reserved)

    def add(self, pod: Pod, ports: Sequence[HostPort]) -> None:
        self.reserved[pod.key] = tuple(ports)

    def conflicts(self, pod: Pod, ports: Sequence[HostPort]) -> str | None:
        for new in ports:
            for key, entries in self.reserved.items():
                if key == pod.key:
                    continue
                for old in entries:
                    if _matches(new, old):
                        ip = new.ip or "0.0.0.0"
                        old_ip = old.ip or "0.0.0.0"
                        return ("pod hostport conflicts with existing hostport configuration "
                                f"(existing-hostport-ip={old_ip}, existing-hostport-port={old.port}, "
                                f"existing-hostport-protocol={old.protocol}, pod-hostport-ip={ip}, "
                                f"pod-hostport-port={new.port}, pod-hostport-protocol={new.protocol})")
        return None
