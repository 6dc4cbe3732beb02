"""The result of applying one workload: what the controllers create, in creation order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


@dataclass
class Expansion:
    kind: str
    namespace: str
    name: str
    uid: str
    #: pods, in the order the controllers create them
    pods: list[Obj] = field(default_factory=list)
    #: PersistentVolumeClaims the controllers create (StatefulSet volumeClaimTemplates)
    claims: list[Obj] = field(default_factory=list)
    #: controller objects created on the way: a Deployment's ReplicaSet, a CronJob's Job
    created: list[Obj] = field(default_factory=list)
    #: pods[i + 1] is created only once pods[i] is Running and Ready (StatefulSet OrderedReady)
    ordered: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"
