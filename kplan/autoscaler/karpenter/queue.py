"""The order Karpenter tries pending pods in: sigs.k8s.io/karpenter v1.15.0
pkg/controllers/provisioning/scheduling/queue.go (byCPUAndMemoryDescending: cpu request
descending, then memory descending, then older first, then by UID; a pod that failed goes to the
back, and the queue stops when a pod comes round again with nothing scheduled since)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence

from kplan.model.objects import Pod


def by_cpu_and_memory_descending(requests: Callable[[Pod], Mapping[str, int]],
                                 position: Mapping[str, int]) -> Callable[[Pod], tuple[object, ...]]:
    """The sort key. A pod the input gave no metadata.uid (kplan names it ``namespace/name``) is
    placed by its position in the input instead, before pods with a uid: pods created in that
    order, as the oracle numbers them."""
    def key(p: Pod) -> tuple[object, ...]:
        r = requests(p)
        created = p.creation_time if p.creation_time is not None else float("-inf")
        synthetic = p.uid == p.key
        return (-r.get("cpu", 0), -r.get("memory", 0), created, "" if synthetic else p.uid,
                position.get(p.uid, 0) if synthetic else 0)
    return key


class Queue:
    __slots__ = ("pods", "last_len")

    def __init__(self, pods: Sequence[Pod], requests: Callable[[Pod], Mapping[str, int]]) -> None:
        position = {p.uid: i for i, p in enumerate(pods)}
        self.pods: deque[Pod] = deque(sorted(pods, key=by_cpu_and_memory_descending(requests, position)))
        self.last_len: dict[str, int] = {}

    def pop(self) -> Pod | None:
        """Pop: None when empty, or when the head failed last time with the queue no shorter."""
        if not self.pods:
            return None
        p = self.pods[0]
        if self.last_len.get(p.uid) == len(self.pods):
            return None
        self.pods.popleft()
        return p

    def push(self, pod: Pod) -> None:
        self.pods.append(pod)
        self.last_len[pod.uid] = len(self.pods)
