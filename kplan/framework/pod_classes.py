"""Classes of pods that look alike to the filters that read other pods and to PDBs: the same
namespace and labels, except that a pod with required anti-affinity is alone in its class. A
class's id indexes ``examples``, its first pod, so per-class counts can stand for the pods."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kplan.model.objects import Pod


class PodClasses:
    def __init__(self) -> None:
        self.class_of: dict[tuple[str, tuple[tuple[str, str], ...], str], int] = {}
        self.examples: list[Pod] = []

    def class_id(self, pod: Pod) -> int:
        key = (pod.namespace, tuple(sorted(pod.labels.items())), pod.uid if pod.anti_affinity_required else "")
        found = self.class_of.get(key)
        if found is None:
            found = self.class_of[key] = len(self.examples)
            self.examples.append(pod)
        return found
